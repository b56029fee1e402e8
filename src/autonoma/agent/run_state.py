"""One run's state while a `RunLoop` drives it, apart from the loop's configuration and
services (pydantic-ai's split of `GraphAgentState` from `GraphAgentDeps`): what the run is,
what it has done and spent, and what it has learned. Built once when the loop takes the run
up, from the store and the run's events (so a resumed run goes on where it was), and passed
as the one argument of the loop's helpers."""

from __future__ import annotations

from dataclasses import dataclass, field

from autonoma.agent.acceptance import Acceptance
from autonoma.agent.hindsight import Attempt, trial_attempts
from autonoma.agent.identity import AgentIdentity
from autonoma.llm import Model
from autonoma.memory.context import Recollection, RollingSummary
from autonoma.runtime.budget import BudgetSpent, SharedBudget
from autonoma.runtime.events import (
    ChecksFailed,
    ChecksWritten,
    MemorySaved,
    OutsideEntered,
    RunStarted,
    SelfReflected,
    SelfReflectionFailed,
    SummaryUpdated,
    ToolsHint,
    TrialStarted,
)
from autonoma.runtime.store import EventRecord, RunRecord, StepRecord
from autonoma.tools import Tool, ToolContext, Workspace


@dataclass(frozen=True)
class ChecksNow:
    """What the acceptance checks say of the workspace: said whole in the result of the step
    that brought it about, and at later steps, while it stands and that step is in view, by
    reference (the request comes after the newest step, where no prompt cache holds it: said
    whole there, a failing check's output was some 70 tokens a step computed again)."""

    text: str = ""  # said whole
    passing: bool = False  # every check that can run passes
    detail: str = ""  # the part a step's result holds word for word when it said it
    brief: str = ""  # said in its place once a step in view holds `detail`, "{n}": that step

    def by_reference(self, n: int) -> str:
        # not str.format: `brief` holds the checks' own words, which may hold braces
        return self.brief.replace("{n}", str(n))


@dataclass
class RunState:
    run: RunRecord
    identity: AgentIdentity
    workspace: Workspace
    spent: BudgetSpent  # the run's own spending
    budget: SharedBudget  # what limits it: its spending with its sub-agents'
    model: Model  # the steps' lane of the loop's model (one cached prompt prefix a run)
    context: ToolContext  # what its tools are handed
    steps: list[StepRecord] = field(default_factory=list)  # the current trial's
    offered: list[Tool] = field(default_factory=list)  # the commands the next step offers

    # Read back from the run's events when it is taken up (`read_back`), kept up as it runs.
    summary: RollingSummary | None = None
    saved_upto: int = 0  # the last step in long-term memory
    hint: str | None = None  # the command the model imagined for the task, once asked
    lessons: list[str] = field(default_factory=list)  # self-reflections' lessons, in order
    trial: int = 1
    first_step: int = 1  # the current trial's
    start_score: float = 0.0  # the checks' score when the current trial began
    caught: int = 0  # problems reflected on in the current trial (periodic checks aside)
    attempts: list[Attempt] = field(default_factory=list)  # abandoned trials (hindsight)
    checks_asked: bool = False  # the run's checks were written (or tried) at its start
    found: str = ""  # the files as the run found them (agent/found.py), fixed for the run
    outside_from: int | None = None  # the first step with outside content in its context

    # While it runs.
    recalled: tuple[int, Recollection] | None = None  # memory's `stores` when recalled; what
    in_view: list[str] | None = None  # files the last prompt showed whole as they are now
    by_found: bool = False  # marked from its start for the files it found
    # the files it found at its (re)start that it had not written: the person's, trusted or
    # not, which it does not change after outside content unless the goal names them
    persons: frozenset[str] = frozenset()
    acceptance: Acceptance | None = None  # the run's checks, once written
    refusal: str = ""  # why the checks last turned a claim of completion down
    checks: ChecksNow = field(default_factory=lambda: ChecksNow())  # before this step
    checks_told: str = ""  # the checks' status a step's result last said
    left_out: int = 0  # code checks left out as unable to pass, already reported
    # the workspace's contents (content_print) the judge has said no to, and those each step
    # has left: with judged checks only, work come back to an earlier state is judged
    judged_no: set[str] = field(default_factory=set)
    left_by_steps: set[str] = field(default_factory=set)
    start_files: frozenset[str] | None = None  # what the run found, once read
    approved_ahead: int = 0  # commands the person approved beyond this one

    @property
    def next_n(self) -> int:
        return self.steps[-1].n + 1 if self.steps else self.first_step

    def recent_lessons(self, keep: int) -> list[str]:
        return self.lessons[-keep:] if keep > 0 else []


def read_back(state: RunState, events: list[EventRecord]) -> None:
    """The latest rolling summary and memory save, the tool hint, the lessons, the current
    trial and the outside-content mark, from the run's events (for resume)."""
    for record in events:
        match record.event:
            case SummaryUpdated(upto=upto, text=text):
                state.summary = RollingSummary(upto, text)
            case MemorySaved(upto=upto):
                state.saved_upto = upto
            case ToolsHint(hint=hint):
                state.hint = hint
            case SelfReflected(lesson=lesson, detection=detection):
                state.lessons.append(lesson)
                state.caught += detection != "periodic"
            case SelfReflectionFailed(detection=detection):
                state.caught += detection != "periodic"
            case ChecksWritten(start_score=score):
                state.checks_asked = True
                if score is not None:
                    state.start_score = score
            case ChecksFailed():
                state.checks_asked = True
            case RunStarted(score=score, found=found) if score is not None:
                state.start_score = score
                state.found = found or ""
            case OutsideEntered() if state.outside_from is None:
                state.outside_from = record.step or 0
            case TrialStarted(trial=trial, first_step=first_step, start_score=score):
                state.trial, state.first_step = trial, first_step
                state.start_score = score or 0.0
                state.summary, state.caught = None, 0
    state.attempts = trial_attempts(events)
