"""What a run is started with (`RunSettings`), stored with it so that `resume` continues the
same way. Imported by the session that starts runs and by the workers that run their tasks."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from autonoma.agent.loop import LoopConfig
from autonoma.llm.registry import default_actions
from autonoma.runtime.budget import BudgetLimits
from autonoma.tools.sandbox import SandboxUnavailable, make_sandbox
from autonoma.tools.settings import ToolSettings

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
"""The embedded model that achieved the demo goal on a 2-core laptop (docs/benchmarks.md)."""


class RunSettings(BaseModel):
    """What a run was started with; stored with it so `resume` continues the same way."""

    model: str = DEFAULT_MODEL
    limits: BudgetLimits = Field(default_factory=BudgetLimits)
    continuous: bool = False
    seed: int | None = None  # sampling seed, for runs that can be replayed exactly
    memory: bool = True  # long-term memory, reflection and the model's rolling summary
    memory_agent: str | None = None  # whose memory: default the run's own (its id)
    importance: Literal["model", "heuristic"] = "model"
    embedder: Literal["auto", "minilm", "lexical"] = "auto"
    strategy: Literal["loop", "plan"] = "loop"  # one agent loop, or a planned task graph
    concurrency: int = Field(4, ge=1)  # planned: tasks running at once
    task_steps: int = Field(15, ge=1)  # planned: step limit of one attempt at a task
    task_retries: int = Field(1, ge=0)  # planned: further attempts at a failed task
    subagents: bool = False  # the start_agent, message_agent, ... commands
    create_tasks: bool = False  # planned: after each result the model may add and re-order
    replans: int = Field(2, ge=0)  # planned: revisions of the rest after a task fails for good
    executor: Literal["local", "ray"] = "local"  # planned: where tasks run (docs/planning.md)
    ray_address: str | None = None  # executor ray: a cluster to join; default: start Ray here
    tools: ToolSettings = Field(default_factory=ToolSettings)
    # planned: how the goal becomes a graph: one structured answer (decompose), the best of
    # several rated ones (tot: Tree of Thoughts), or a PDDL problem solved by a planner (pddl)
    planner: Literal["decompose", "tot", "pddl"] = "decompose"
    pddl_domain: str = "blocksworld"  # a shipped domain's name or a .pddl file
    tot_k: int = Field(3, ge=1, le=8)  # tot: plans proposed at each level
    tot_depth: int = Field(1, ge=1, le=2)  # tot: 2 also refines the best plan
    tot_rate: Literal["value", "vote"] = "value"  # tot: score each plan, or vote among them
    tot_search: Literal["bfs", "dfs"] = "bfs"  # tot: level by level, or best branch first
    # on a loop, stall or budget burn the monitor detects, reflect and keep the lesson
    self_reflect: bool = False
    trials: int = Field(2, ge=1, le=5)  # with self_reflect: attempts at the task in one run
    # acceptance checks written from the goals before the work; task_complete needs them passed
    checks: bool = True
    # the run ends completed once every check passes after a step, claimed or not
    finish_on_checks: bool = True
    # json: one command a step; code: a short Python program a step, calling the tools;
    # None: the model's own (llm.registry.default_actions), JSON where code cannot run
    actions: Literal["json", "code"] | None = None
    # set by autonoma on a sub-agent's or a planned task's run whose task came from a run with
    # outside content in its context: the mark travels with the task
    outside_at_start: bool = False

    @classmethod
    def stored(cls, data: dict[str, Any]) -> RunSettings:
        """The settings a run was stored with. A run stored before `actions` existed acted
        by JSON: it resumes so, whatever its model's own form is now."""
        return cls.model_validate({"actions": "json", **data})

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
