"""What a `RunLoop` is made of besides the run it drives: its configuration (`LoopConfig`) and
its services (the model, the tools, the store, the person, memory, the sandbox), fixed at
construction and shared by every run the loop drives. A run's own state is `RunState`
(agent/run_state.py); the loop's helpers (agent/loop_*.py) take both."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from autonoma.agent.approval import Approver, RefuseWithoutTerminal
from autonoma.agent.monitor import MonitorSettings
from autonoma.agent.progress import Progress, check_progress
from autonoma.agent.run_state import RunState
from autonoma.agent.services import ToolServices
from autonoma.agent.trials import TrialWorkspace
from autonoma.llm import Model
from autonoma.llm.base import SIDE_LANE
from autonoma.memory.agent_memory import AgentMemory
from autonoma.memory.context import CalibratedCounter, ContextLimits
from autonoma.memory.summary import Summariser
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.events import Event, OutsideEntered
from autonoma.runtime.sink import EventListener, emit
from autonoma.runtime.store import RunRecord, RunStore, StepRecord
from autonoma.tools import ToolRegistry, Workspace
from autonoma.tools.retrieval import ToolRetriever
from autonoma.tools.sandbox import Sandbox


@dataclass
class LoopConfig:
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    continuous: bool = False  # no approval for risky commands
    max_observation_chars: int = 4000  # longer tool output is cut, with a note
    max_answer_tokens: int = 700
    temperature: float = 0.2
    # after a step that repeated an earlier one: at 0.2 and a prompt that grew by one
    # repeated step, the 1.5B model wrote the same program again (25 of 107 steps of the
    # everyday benchmark repeated an earlier one exactly)
    repeat_temperature: float = 0.8
    seed: int | None = None  # set: step n samples with seed + n, so a run can be replayed
    context: ContextLimits | None = None  # default: from the model's context window
    summary_batch: int = 4  # aged-out steps folded into the rolling summary a model call
    # Once outside content (a web page, an API's answer) is in the context, risky commands
    # need a person's approval even when continuous: the content may be an injection.
    approve_after_untrusted: bool = True
    # the run's task came from outside content (a sub-agent's or a planned task's, given by
    # a run that had outside content in its context): marked so from its start
    outside_at_start: bool = False
    trust_workspace: bool = False  # the files there when the run (re)starts are the person's
    # With a retriever: ask the model once what command it would wish for, and find tools by
    # that too (measured: 90.5% -> 95.5% right tool offered among 500; bench/tool_retrieval)
    tool_hint: bool = False
    # Loops, stalls, plans without action, budget burn: detected after each step and stored
    # as "monitor" events (docs/reflection.md). None: no monitoring.
    monitor: MonitorSettings | None = field(default_factory=MonitorSettings)
    # On a detection (periodic ones too), reflect with the model (Reflexion) and keep the
    # last `lessons` lessons in view of the next steps. Off by default: the reflection
    # benchmark (docs/benchmarks.md) has not shown that it helps the embedded models.
    self_reflect: bool = False
    lessons: int = 3
    # Reflexion's trials: a reflection (weighed against the checks) may end an attempt that
    # got nowhere and start the task again with the lessons kept, up to `trials` in all. A
    # run that owns its workspace starts each trial from the workspace as the run began
    # (abandoned ones are moved aside); tasks and sub-agents share theirs, which is kept.
    trials: int = 2
    escalate_after: int = 2  # problems caught in a trial with no check passing: a new trial
    # Acceptance checks written from the goals before the first step; task_complete is
    # accepted only when they pass (agent/checks.py). Without a sandbox only judged ones.
    checks: bool = True
    # Claims of completion refused by the checks before the run ends as incomplete.
    max_claims: int = 3
    # The run ends completed as soon as every acceptance check passes after a step (the
    # judged ones judged then): the 1.5B model, its work done and checked, would otherwise
    # doubt a haiku's lines, delete it and run out of budget rewriting it.
    finish_on_checks: bool = True
    # json: each step one command as JSON; code: each step a short Python program calling
    # the tools as functions, run in the sandbox (agent/code_actions.py)
    actions: Literal["json", "code"] = "json"


class LoopServices:
    """The configuration and services of a loop, and what its helpers share."""

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry,
        store: RunStore,
        *,
        config: LoopConfig | None = None,
        approver: Approver | None = None,
        listeners: list[EventListener] | None = None,
        memory: AgentMemory | None = None,
        summariser: Summariser | None = None,
        services: ToolServices | None = None,
        retriever: ToolRetriever | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.model = model
        # the steps of a run keep to a lane of their own (one cached prompt prefix, see
        # RunState.model), the calls beside them (checks, reflection) to another, so
        # neither evicts the other's prefix
        self.side_model = model.in_lane(SIDE_LANE)
        self.sandbox = sandbox  # where acceptance checks run; None: judged checks only
        self.tools = tools
        self.store = store
        self.config = config or LoopConfig()
        self.approver: Approver = approver or RefuseWithoutTerminal()
        self.listeners = listeners or []
        self.memory = memory
        self.summariser = summariser
        # what tools use besides the workspace: the sandbox, the egress guard, the search
        self.services = services or ToolServices()
        self.limits = self.config.context or ContextLimits.for_window(
            model.context_window, self.config.max_answer_tokens
        )
        self.count = CalibratedCounter()
        # With many tools, each step offers the core and those relevant to it (retriever).
        self.retriever = retriever
        self.schemas: dict[tuple[str, ...], dict[str, Any]] = {}  # by the offered names

    async def emit(self, run_id: str, event: Event, step: int | None = None) -> None:
        """Store an event and hand it to the listeners."""
        await emit(self.store, self.listeners, run_id, event, step)

    async def mark_outside(self, state: RunState, n: int, why: str) -> None:
        """Outside content is in the run's context from step `n` on (0: its start): what
        cannot be undone needs a person from here, and what the run remembers is marked."""
        if state.outside_from is None:
            state.outside_from = n
            await self.emit(state.run.id, OutsideEntered(why=why), n or None)
        if self.memory is not None:
            self.memory.outside_from = state.outside_from

    def trial_workspace(self, run: RunRecord) -> TrialWorkspace:
        return TrialWorkspace.of(self.store, run)

    def trials_restore(self, run: RunRecord) -> bool:
        """Whether a new trial puts the workspace back: only a run that owns its workspace
        (not a task of a planned run or a sub-agent, which share theirs)."""
        return self.config.self_reflect and self.config.trials > 1 and not run.parent_id

    def found_at_start(self, state: RunState) -> frozenset[str]:
        """The files the workspace held when the run began (from its start snapshot; none
        known without one)."""
        if state.start_files is None:
            start = self.trial_workspace(state.run).start
            state.start_files = frozenset(Workspace(start).files() if start.is_dir() else [])
        return state.start_files

    async def progress(self, state: RunState, steps: list[StepRecord]) -> Progress:
        if state.acceptance is not None:  # the checks, in place of the files' line counts
            return await state.acceptance.progress()
        texts = [state.run.goal, *state.identity.goals]
        return await asyncio.to_thread(check_progress, state.workspace, texts, steps)

    @staticmethod
    def deadline(limits: BudgetLimits, clock_base: float) -> float | None:
        """When the run's time limit falls, on the event loop's clock (None: no limit)."""
        if limits.max_seconds is None:
            return None
        left = max(0.0, limits.max_seconds - clock_base)
        return float(asyncio.get_running_loop().time() + left)
