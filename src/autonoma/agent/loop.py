"""The step loop: context, request, validate, check policy, run the tool, record, repeat.

Every step is in the run store before the next begins: its intent before its tool runs, its
result after. Nothing the model or a tool does ends the run except task_complete, the budget,
the person, or a model that cannot be reached (which leaves the run resumable).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autonoma.agent.action import Action, action_schema, parse_action
from autonoma.agent.approval import ApprovalRequest, Approver, Decision, RefuseWithoutTerminal
from autonoma.agent.completion import deliverables, unmet_deliverables
from autonoma.agent.identity import AgentIdentity
from autonoma.errors import ModelError, ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.memory.context import ContextLimits, build_context
from autonoma.runtime.budget import BudgetLimits, BudgetSpent, describe_left, exhausted
from autonoma.runtime.store import EventRecord, RunRecord, RunStatus, RunStore, StepRecord
from autonoma.templating import render
from autonoma.tools import Risk, ToolContext, ToolRegistry, ToolResult, Workspace

EventListener = Callable[[EventRecord], None]

INTERRUPTED = (
    "interrupted: the run stopped while {command} was running, so it may or may not have taken "
    "effect. Check (for example with list_files or read_file) before doing it again."
)


@dataclass
class AgentConfig:
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    continuous: bool = False  # no approval for risky commands
    max_observation_chars: int = 4000  # longer tool output is cut, with a note
    max_answer_tokens: int = 700
    temperature: float = 0.2
    seed: int | None = None  # set: step n samples with seed + n, so a run can be replayed
    context: ContextLimits = field(default_factory=ContextLimits)


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    status: RunStatus
    reason: str
    workspace: str
    files: list[str]
    spent: BudgetSpent

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "workspace": self.workspace,
            "files": self.files,
            "totals": self.spent.model_dump() | {"tokens": self.spent.tokens},
        }


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut: {len(text) - limit} of {len(text)} characters not shown]"


class Agent:
    """Runs one stored run to its end. Construct, then `await run(run_id)`."""

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry,
        store: RunStore,
        *,
        config: AgentConfig | None = None,
        approver: Approver | None = None,
        listeners: list[EventListener] | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.store = store
        self.config = config or AgentConfig()
        self.approver: Approver = approver or RefuseWithoutTerminal()
        self.listeners = listeners or []
        self._schema = action_schema(tools)
        self._approved_ahead = 0

    # -- events ---------------------------------------------------------------------------

    async def _emit(self, run_id: str, kind: str, step: int | None = None, **data: Any) -> None:
        event = await asyncio.to_thread(self.store.add_event, run_id, kind, data, step)
        for listener in self.listeners:
            listener(event)

    # -- the run --------------------------------------------------------------------------

    async def run(self, run_id: str) -> RunOutcome:
        """Run (or resume) a stored run until it completes, spends its budget, or is stopped."""
        run = await asyncio.to_thread(self.store.get_run, run_id)
        identity = AgentIdentity.model_validate(run.identity)
        workspace = Workspace(Path(run.workspace))
        context = ToolContext(workspace=workspace)
        steps = await asyncio.to_thread(self.store.steps, run_id)
        spent = run.spent.model_copy()
        await self._close_interrupted(run_id, steps)
        steps = await asyncio.to_thread(self.store.steps, run_id)
        await asyncio.to_thread(self.store.set_status, run_id, "running", "", spent)
        await self._emit(run_id, "run_started", resumed=bool(steps), identity=run.identity)
        clock_base, clock_start = spent.seconds, time.monotonic()
        status: RunStatus = "running"
        reason = ""
        try:
            while status == "running":
                spent.seconds = clock_base + time.monotonic() - clock_start
                if why := exhausted(self.config.limits, spent):
                    status, reason = "budget_exhausted", why
                    break
                step, result = await self._step(run, identity, workspace, context, steps, spent)
                steps.append(step)
                if result is not None and result.final:
                    status, reason = "completed", step.arguments.get("reason", "")
        except asyncio.CancelledError:
            status, reason = "stopped", "stopped by the person; resume with autonoma resume"
            raise
        except ModelError as error:
            status, reason = "failed", f"{error} (the run can be resumed)"
        finally:
            spent.seconds = clock_base + time.monotonic() - clock_start
            await asyncio.to_thread(self.store.set_status, run_id, status, reason, spent)
            await self._emit(run_id, "run_finished", status=status, reason=reason)
        return RunOutcome(run_id, status, reason, str(workspace.root), workspace.files(), spent)

    async def _close_interrupted(self, run_id: str, steps: list[StepRecord]) -> None:
        for step in steps:
            if step.status == "running":
                note = INTERRUPTED.format(command=step.command)
                await asyncio.to_thread(
                    self.store.finish_step,
                    run_id,
                    step.n,
                    status="interrupted",
                    observation=note,
                    ok=False,
                )
                await self._emit(run_id, "step_interrupted", step.n, command=step.command)

    def system_prompt(
        self, run: RunRecord, identity: AgentIdentity, workspace: Workspace, spent: BudgetSpent
    ) -> str:
        files = workspace.files()
        listing = ", ".join(files[:20]) + (
            f" and {len(files) - 20} more" if len(files) > 20 else ""
        )
        return render(
            "autonoma.agent",
            "system.j2",
            identity=identity,
            task=run.goal,
            tools=list(self.tools),
            approval=not self.config.continuous,
            files=listing,
            budget_left=describe_left(self.config.limits, spent),
        )

    def messages(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
    ) -> list[dict[str, Any]]:
        """What the model sees at the next step: the system prompt, the steps so far inside
        the context budget, and the request for one command with the goals restated."""
        prompt = self.system_prompt(run, identity, workspace, spent)
        closing = render(
            "autonoma.agent",
            "next_step.j2",
            first=not steps,
            goals=identity.goals,
            files=workspace.files(),
            deliverables=deliverables(workspace, [run.goal, *identity.goals]),
        )
        return build_context(prompt, steps, closing, self.config.context)

    async def _step(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        context: ToolContext,
        steps: list[StepRecord],
        spent: BudgetSpent,
    ) -> tuple[StepRecord, ToolResult | None]:
        n = len(steps) + 1
        messages = self.messages(run, identity, workspace, steps, spent)
        await self._emit(run.id, "thinking", n)
        started = time.time()
        try:
            response = await self.model.request(
                messages,
                output=self._schema,
                max_tokens=self.config.max_answer_tokens,
                temperature=self.config.temperature,
                seed=None if self.config.seed is None else self.config.seed + n,
            )
        except (OutputInvalid, ModelRefused) as error:
            spent.steps += 1
            spent.prompt_tokens += error.prompt_tokens
            spent.completion_tokens += error.completion_tokens
            spent.usd += error.cost_usd
            step = StepRecord(
                run_id=run.id,
                n=n,
                status="invalid",
                thoughts={},
                command="",
                arguments={},
                observation=str(error),
                ok=False,
                prompt_tokens=error.prompt_tokens,
                completion_tokens=error.completion_tokens,
                cost_usd=error.cost_usd,
                started_at=started,
                finished_at=time.time(),
            )
            await asyncio.to_thread(self.store.begin_step, step, spent)
            await self._emit(run.id, "step_invalid", n, error=str(error))
            return step, None
        spent.steps += 1
        spent.prompt_tokens += response.usage.prompt_tokens
        spent.completion_tokens += response.usage.completion_tokens
        spent.usd += response.cost_usd
        action = parse_action(response.data)
        step = StepRecord(
            run_id=run.id,
            n=n,
            status="running",
            thoughts=action.thoughts.model_dump(),
            command=action.command,
            arguments=action.arguments,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            cost_usd=response.cost_usd,
            started_at=started,
        )
        await asyncio.to_thread(self.store.begin_step, step, spent)
        await self._emit(
            run.id,
            "step_intent",
            n,
            thoughts=step.thoughts,
            command=action.command,
            arguments=action.arguments,
            tokens=spent.tokens,
            usd=spent.usd,
        )
        result, denied = await self._act(run.id, n, action, context)
        if result.final:
            result = self._check_completion(run, identity, workspace, result)
        observation = truncate(result.output, self.config.max_observation_chars)
        status = "denied" if denied else "done"
        step = step.model_copy(
            update={"status": status, "observation": observation, "ok": result.ok}
        )
        await asyncio.to_thread(
            self.store.finish_step,
            run.id,
            n,
            status=step.status,
            observation=observation,
            ok=result.ok,
            spent=spent,
        )
        await self._emit(
            run.id, "step_result", n, ok=result.ok, observation=observation, status=step.status
        )
        return step, result

    def _check_completion(
        self, run: RunRecord, identity: AgentIdentity, workspace: Workspace, claim: ToolResult
    ) -> ToolResult:
        """Accept task_complete only if the files the task and goals name exist, not empty."""
        problems = unmet_deliverables(workspace, [run.goal, *identity.goals])
        if not problems:
            return claim
        return ToolResult(
            False,
            f"task_complete was refused: {'; '.join(problems)}. "
            "Finish the work the goals ask for first.",
        )

    async def _act(
        self, run_id: str, n: int, action: Action, context: ToolContext
    ) -> tuple[ToolResult, bool]:
        """The tool's result, and whether the person denied it (then it did not run)."""
        tool = self.tools.get(action.command)
        if tool is None:  # only possible with an unconstrained backend that slipped
            return ToolResult(False, f"error: there is no command {action.command!r}"), False
        if tool.risk is not Risk.READ and not self.config.continuous:
            decision = await self._approve(run_id, n, action, tool.risk)
            if decision.kind == "no":
                return ToolResult(False, f"the person refused to run {action.command}"), True
            if decision.kind == "feedback":
                said = f"the person did not run {action.command} and said: {decision.feedback}"
                return ToolResult(False, said), True
        return await tool.run(context, action.arguments), False

    async def _approve(self, run_id: str, n: int, action: Action, risk: Risk) -> Decision:
        if self._approved_ahead > 0:
            self._approved_ahead -= 1
            return Decision(kind="yes")
        request = ApprovalRequest(n, action.command, action.arguments, risk, action.thoughts.speak)
        await self._emit(run_id, "approval_asked", n, command=action.command, risk=str(risk))
        decision = await self.approver(request)
        self._approved_ahead = max(0, decision.times - 1) if decision.kind == "yes" else 0
        await self._emit(
            run_id,
            "approval_answered",
            n,
            decision=decision.kind,
            times=decision.times,
            feedback=decision.feedback,
        )
        return decision
