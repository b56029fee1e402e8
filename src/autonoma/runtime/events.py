"""What a run reports as it goes: one pydantic model per kind of event, joined in `Event`, a
union told apart by `kind`. Stored as JSON in the run store (`EventRecord.kind` and `.data`)
and read back typed (`EventRecord.event`); the live view, resume and `show` read the same
objects, and `event_schema()` is the JSON Schema the server and the viewer use.

Reading is lenient where writing is not: an event stored by an older autonoma with fields
since dropped still reads (unknown fields are ignored), and one whose kind is no longer
known, or whose fields no longer fit, reads as `Unrecognised` with its data kept.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

Json: TypeAlias = dict[str, Any]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error where it is made

    def data(self) -> Json:
        """What the store keeps beside the kind."""
        return self.model_dump(mode="json", exclude={"kind"}, exclude_unset=True)


# -- a run's life -------------------------------------------------------------------------


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    resumed: bool
    identity: Json
    score: float | None = None  # progress at the start, by the checks or the named files
    snapshot: bool | None = None  # whether the workspace was copied as it began
    found: str | None = None  # the files the run found, as the prompt shows them


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    status: str
    reason: str
    acceptance: Json | None = None  # the acceptance checks' last verdict
    checks: list[str] | None = None  # progress facts
    score: float | None = None


class Notice(_Event):
    """What a person must know about the run's tools before it starts."""

    kind: Literal["code_refused", "code_unsafe", "mcp_skipped", "price_unknown"]
    message: str


class OutsideEntered(_Event):
    kind: Literal["outside_entered"] = "outside_entered"
    why: str


class WorkspaceChanged(_Event):
    kind: Literal["workspace_changed"] = "workspace_changed"
    changes: list[str]


class Undone(_Event):
    kind: Literal["undone"] = "undone"
    to_step: int
    done: list[str]


class Rated(_Event):
    kind: Literal["rated"] = "rated"
    score: int
    comment: str = ""


# -- steps --------------------------------------------------------------------------------


class Thinking(_Event):
    kind: Literal["thinking"] = "thinking"


class StepIntent(_Event):
    kind: Literal["step_intent"] = "step_intent"
    thoughts: Json
    command: str
    arguments: Json
    tokens: int
    usd: float
    prompt_tokens: int = 0
    cached_tokens: int = 0
    prompt_seconds: float = 0.0
    generation_seconds: float = 0.0


class StepResult(_Event):
    kind: Literal["step_result"] = "step_result"
    ok: bool
    observation: str
    status: str
    checks: str = ""  # what the acceptance checks say after it, when that is news


class StepInvalid(_Event):
    kind: Literal["step_invalid"] = "step_invalid"
    error: str


class StepInterrupted(_Event):
    kind: Literal["step_interrupted"] = "step_interrupted"
    command: str


class ToolsOffered(_Event):
    kind: Literal["tools_offered"] = "tools_offered"
    tools: list[str]


class ToolsHint(_Event):
    kind: Literal["tools_hint"] = "tools_hint"
    hint: str
    error: str = ""


class ApprovalAsked(_Event):
    kind: Literal["approval_asked"] = "approval_asked"
    command: str
    risk: str
    reason: str = ""


class ApprovalAnswered(_Event):
    kind: Literal["approval_answered"] = "approval_answered"
    decision: str
    times: int = 1
    feedback: str = ""
    by: str = "person"  # or "policy": refused because no one could be asked


# -- acceptance checks --------------------------------------------------------------------


class ChecksWriting(_Event):
    kind: Literal["checks_writing"] = "checks_writing"


class ChecksWritten(_Event):
    kind: Literal["checks_written"] = "checks_written"
    checks: list[Json]
    discarded: list[str] = Field(default_factory=list)
    tokens: int = 0
    start_score: float | None = None
    fallback: bool = False  # no usable check: the task itself is judged
    guards: list[Json] = Field(default_factory=list)
    """Checks held by rule from the task's words (files asked for made, files found kept):
    not progress, but a claim is refused while one fails (agent/task_guards.py)."""


class ChecksFailed(_Event):
    kind: Literal["checks_failed"] = "checks_failed"
    error: str
    discarded: list[str] = Field(default_factory=list)


class ChecksEdited(_Event):
    kind: Literal["checks_edited"] = "checks_edited"
    checks: list[Json]


class CheckLeftOut(_Event):
    """A code check found unable to pass whatever the work does, left out of the run's."""

    kind: Literal["check_left_out"] = "check_left_out"
    what: str
    why: str


class ChecksRun(_Event):
    kind: Literal["checks_run"] = "checks_run"
    passed: bool
    results: list[Json]


# -- memory and reflection ----------------------------------------------------------------


class MemorySaved(_Event):
    kind: Literal["memory_saved"] = "memory_saved"
    upto: int
    records: int


class Reflecting(_Event):
    kind: Literal["reflecting"] = "reflecting"


class Reflected(_Event):
    kind: Literal["reflected"] = "reflected"
    questions: list[str]
    reflections: list[Json]
    problems: list[str] = Field(default_factory=list)


class SummaryUpdated(_Event):
    kind: Literal["summary_updated"] = "summary_updated"
    upto: int
    text: str


class MonitorDetected(_Event):
    kind: Literal["monitor"] = "monitor"
    detection: str
    steps: list[int]
    evidence: str


class SelfReflected(_Event):
    kind: Literal["self_reflection"] = "self_reflection"
    detection: str
    lesson: str
    verdict: str
    course: str
    why: str
    checks: list[str] = Field(default_factory=list)


class SelfReflectionFailed(_Event):
    kind: Literal["self_reflection_failed"] = "self_reflection_failed"
    detection: str


class TrialEnded(_Event):
    kind: Literal["trial_ended"] = "trial_ended"
    trial: int
    why: str
    lesson: str
    checks: list[str]
    score: float


class TrialStarted(_Event):
    kind: Literal["trial_started"] = "trial_started"
    trial: int
    first_step: int
    lessons: list[str]
    workspace: Literal["restored", "kept"]
    archive: str | None = None
    start_score: float | None = None


class ReplanAsked(_Event):
    kind: Literal["replan_asked"] = "replan_asked"
    lesson: str


# -- planned runs and sub-agents ----------------------------------------------------------


class Planning(_Event):
    kind: Literal["planning"] = "planning"


class Planned(_Event):
    kind: Literal["planned"] = "planned"
    tasks: list[Json]
    tree: str
    repairs: int = 0


class TaskStarted(_Event):
    kind: Literal["task_started"] = "task_started"
    task: str
    run: str
    attempt: int


class TaskChanged(_Event):
    kind: Literal["task_changed"] = "task_changed"
    task: str
    status: str
    attempt: int
    result: str


class TasksCreated(_Event):
    kind: Literal["tasks_created"] = "tasks_created"
    after: str
    added: list[Json]
    reprioritised: list[str]
    merged: list[Json]
    dropped: list[Json]
    answered: bool = True


class Replanning(_Event):
    kind: Literal["replanning"] = "replanning"
    task: str
    error: str
    lesson: str = ""


class ReplanFailed(_Event):
    kind: Literal["replan_failed"] = "replan_failed"
    problems: list[str]


class Replanned(_Event):
    kind: Literal["replanned"] = "replanned"
    after: str
    summary: str
    tree: str
    tasks: list[Json]


class AgentStarted(_Event):
    kind: Literal["agent_started"] = "agent_started"
    key: str
    run: str
    name: str


Event = Annotated[
    RunStarted
    | RunFinished
    | Notice
    | OutsideEntered
    | WorkspaceChanged
    | Undone
    | Rated
    | Thinking
    | StepIntent
    | StepResult
    | StepInvalid
    | StepInterrupted
    | ToolsOffered
    | ToolsHint
    | ApprovalAsked
    | ApprovalAnswered
    | ChecksWriting
    | ChecksWritten
    | ChecksFailed
    | ChecksEdited
    | ChecksRun
    | CheckLeftOut
    | MemorySaved
    | Reflecting
    | Reflected
    | SummaryUpdated
    | MonitorDetected
    | SelfReflected
    | SelfReflectionFailed
    | TrialEnded
    | TrialStarted
    | ReplanAsked
    | Planning
    | Planned
    | TaskStarted
    | TaskChanged
    | TasksCreated
    | Replanning
    | ReplanFailed
    | Replanned
    | AgentStarted,
    Field(discriminator="kind"),
]
"""Every kind of event a run reports."""


class Unrecognised(BaseModel):
    """A stored event this autonoma cannot read as any kind it knows (from another version):
    kept as it was stored."""

    kind: str
    data: Json


_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)
_BY_KIND: dict[str, type[_Event]] = {
    kind: model
    for model in _Event.__subclasses__()
    for kind in get_args(model.model_fields["kind"].annotation)
}


def parse_event(kind: str, data: Json) -> Event | Unrecognised:
    """A stored event, typed; fields an older autonoma stored and this one dropped are
    left out."""
    try:
        return _EVENTS.validate_python({**data, "kind": kind})
    except ValidationError:
        pass
    model = _BY_KIND.get(kind)
    if model is not None:
        known = {name: value for name, value in data.items() if name in model.model_fields}
        try:
            return _EVENTS.validate_python({**known, "kind": kind})
        except ValidationError:
            pass
    return Unrecognised(kind=kind, data=data)


def event_schema() -> Json:
    """The JSON Schema of `Event`, for the server's API and the town's viewer."""
    return _EVENTS.json_schema()
