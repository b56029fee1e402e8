"""What a run is started with (`RunSettings`), stored with it so that `resume` continues the
same way. Imported by the session that starts runs and by the workers that run their tasks."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from autonoma.agent.loop import LoopConfig
from autonoma.llm.registry import default_actions
from autonoma.llm.settings import LLMSettings
from autonoma.runtime.budget import BudgetLimits
from autonoma.tools.sandbox import SandboxUnavailable, make_sandbox
from autonoma.tools.settings import ToolSettings

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
"""The embedded model that achieved the demo goal on a 2-core laptop (docs/benchmarks.md)."""


SETTINGS_VERSION = 3
"""The shape `RunSettings` are stored in. 1: before `version` (and, earliest, `actions`);
2: memory and planning settings at the top level, not nested."""


class MemorySettings(BaseModel):
    """A run's long-term memory: the memory stream, its reflections, the rolling summary."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Long-term memory, reflection and the model's rolling summary."""
    agent: str | None = None
    """Whose long-term memory: an earlier run's id; default the run's own."""
    importance: Literal["model", "heuristic"] = "model"
    """How memories are rated: by the model (the paper's), or by a heuristic."""
    embedder: Literal["auto", "minilm", "lexical"] = "auto"
    """Memory embeddings: MiniLM if installed (auto), MiniLM, or lexical."""


class PlanningSettings(BaseModel):
    """A planned run's (strategy plan): how the goal becomes a task graph and how its tasks
    run (docs/planning.md)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    planner: Literal["decompose", "tot", "pddl"] = "decompose"
    """How the goal becomes a graph: one structured answer (decompose), the best of several
    rated ones (tot: Tree of Thoughts), or a PDDL problem solved by a planner."""
    concurrency: int = Field(4, ge=1)
    """Tasks running at once."""
    task_steps: int = Field(15, ge=1)
    """The step limit of one attempt at one task."""
    task_retries: int = Field(1, ge=0)
    """Further attempts at a failed task."""
    create_tasks: bool = False
    """After each result the model may add and re-order tasks."""
    replans: int = Field(2, ge=0)
    """Revisions of the rest of the plan after a task fails for good."""
    executor: Literal["local", "ray"] = "local"
    """Where tasks run, here (asyncio) or on Ray (docs/planning.md)."""
    ray_address: str | None = None
    """Executor ray: the cluster to join (HOST:PORT or auto); default: start Ray here."""
    pddl_domain: str = "blocksworld"
    """Planner pddl: a shipped domain's name or a .pddl file."""
    tot_k: int = Field(3, ge=1, le=8)
    """Planner tot: plans proposed at each level."""
    tot_depth: int = Field(1, ge=1, le=2)
    """Planner tot: 2 also refines the best plan."""
    tot_rate: Literal["value", "vote"] = "value"
    """Planner tot: score each plan, or vote among them."""
    tot_search: Literal["bfs", "dfs"] = "bfs"
    """Planner tot: level by level, or the best branch first."""


class RunSettings(BaseModel):
    """What a run was started with; stored with it so `resume` continues the same way. Each
    field's docstring is its documentation (in the exported schema and `--settings` files)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    version: int = SETTINGS_VERSION
    """The shape these settings were stored in; older ones are migrated on load."""
    model: str = DEFAULT_MODEL
    """The model spec (docs/llm.md): local:NAME, openai:MODEL[@URL], or a GGUF path."""
    limits: BudgetLimits = Field(default_factory=BudgetLimits)
    """Steps, tokens, dollars and seconds the run may spend."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    """The model server's timeouts, retries and prices (docs/llm.md): `[llm]` in a settings
    file, e.g. `idle_timeout_s = 120` for a slow server."""
    continuous: bool = False
    """Run risky commands without asking (after outside content, a person is still asked)."""
    seed: int | None = None
    """Sampling seed, for runs that can be replayed exactly."""
    memory: MemorySettings = Field(default_factory=MemorySettings)
    """Long-term memory (docs/memory.md); `memory = false` turns it off."""
    strategy: Literal["loop", "plan"] = "loop"
    """One agent loop (AutoGPT's), or a planned task graph whose ready tasks run at once."""
    planning: PlanningSettings = Field(default_factory=PlanningSettings)
    """How a planned run (strategy plan) makes and carries out its task graph."""
    subagents: bool = False
    """Let the agent start and message sub-agents (start_agent, message_agent, ...)."""
    tools: ToolSettings = Field(default_factory=ToolSettings)
    """Tool groups, sandbox limits, the web's egress rules, MCP servers (docs/tools.md)."""
    self_reflect: bool = False
    """On a loop, stall or budget burn the monitor detects, reflect and keep the lesson."""
    trials: int = Field(2, ge=1, le=5)
    """With self_reflect: attempts at the task in one run; a reflection that finds no way
    forward (and no check passing) starts the next from a clean state."""
    checks: bool = True
    """Acceptance checks written from the goals before the work; task_complete needs them."""
    finish_on_checks: bool = True
    """The run ends completed once every check passes after a step, claimed or not."""
    actions: Literal["json", "code"] | None = None
    """json: one command a step; code: a short Python program a step, calling the tools;
    unset: the model's own (llm.registry.default_actions), JSON where code cannot run."""
    outside_at_start: bool = False
    """Set by autonoma on a sub-agent's or a planned task's run whose task came from a run
    with outside content in its context: the mark travels with the task."""

    @classmethod
    def stored(cls, data: dict[str, Any]) -> RunSettings:
        """The settings a run was stored with, migrated from the shape they were stored in."""
        return cls.model_validate(migrate(data))

    @field_validator("version")
    @classmethod
    def _not_newer(cls, value: int) -> int:
        """A shape this autonoma cannot read is refused at once, before any model loads."""
        if value > SETTINGS_VERSION:
            raise ValueError(NEWER.format(version=value, ours=SETTINGS_VERSION))
        return value

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_on_or_off(cls, value: Any) -> Any:
        """`memory = false` (and `RunSettings(memory=False)`) is short for `enabled`."""
        return {"enabled": value} if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _actions_of_the_model(self) -> RunSettings:
        """Settles `actions` when it was not chosen, so a stored run resumes the same way."""
        if self.actions is None:
            chosen = default_actions(self.model)
            if chosen == "code" and not _code_can_run(self):
                chosen = "json"
            self.actions = chosen
            self.__pydantic_fields_set__.discard("actions")  # settled here, not chosen
        return self

    def agent_config(self, limits: BudgetLimits) -> LoopConfig:
        """The agent loop's configuration for one run (or task) of these settings."""
        return LoopConfig(
            limits=limits,
            continuous=self.continuous,
            seed=self.seed,
            approve_after_untrusted=self.tools.approve_after_untrusted,
            outside_at_start=self.outside_at_start,
            trust_workspace=self.tools.trust_workspace,
            tool_hint=self.tools.retrieval.hint,
            self_reflect=self.self_reflect,
            trials=self.trials,
            checks=self.checks,
            finish_on_checks=self.finish_on_checks,
            actions=self.actions or "json",  # settled by the validator
        )


def _code_can_run(settings: RunSettings) -> bool:
    try:
        make_sandbox(settings.tools.sandbox)
    except SandboxUnavailable:
        return False
    return True


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Stored settings of any earlier shape in today's. Version 1 (no `version`): a run
    stored before `actions` existed acted by JSON, and resumes so whatever its model's own
    form is now. Version 2: memory's and planning's settings at the top level."""
    data = dict(data)
    if data.get("version", 1) == 1:
        data.setdefault("actions", "json")
        data["version"] = 2
    if data["version"] == 2:
        was = data.pop("memory", None)  # a bool then (or, written by hand, a table)
        memory = dict(was) if isinstance(was, dict) else {} if was is None else {"enabled": was}
        memory |= {new: data.pop(old) for old, new in MEMORY_WAS.items() if old in data}
        planning = dict(data.pop("planning", None) or {})
        planning |= {name: data.pop(name) for name in PLANNING_WAS if name in data}
        data |= {"memory": memory, "planning": planning, "version": 3}
    if data["version"] != SETTINGS_VERSION:
        raise ValueError(NEWER.format(version=data["version"], ours=SETTINGS_VERSION))
    return data


NEWER = (
    "these settings were stored by a newer autonoma (version {version}; this one reads up "
    "to {ours})"
)


# version 2's top-level names of what is now in `memory` and `planning`
MEMORY_WAS = {"memory_agent": "agent", "importance": "importance", "embedder": "embedder"}
PLANNING_WAS = tuple(PlanningSettings.model_fields)
