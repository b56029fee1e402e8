"""The step loop: context, request, validate, check policy, run the tool, record, repeat.

Every step is in the run store before the next begins: its intent before its tool runs, its
result after. Nothing the model or a tool does ends the run except task_complete, the budget,
the person, or a model that cannot be reached (which leaves the run resumable).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from autonoma.agent.acceptance import Acceptance, progress_of
from autonoma.agent.action import Action, action_schema, parse_action
from autonoma.agent.approval import ApprovalRequest, Approver, Decision, RefuseWithoutTerminal
from autonoma.agent.checks import (
    Check,
    CheckRunner,
    CheckWriter,
    Judge,
    Verdict,
    checks_block,
    content_print,
    stored_checks,
    task_check,
)
from autonoma.agent.code_actions import (
    HELPERS,
    NOT_IN_PROGRAMS,
    PROGRAM,
    functions,
    named_tools,
    parse_program,
    program_schema,
    report,
)
from autonoma.agent.completion import misnamed, unmet_deliverables
from autonoma.agent.found import found_at_start
from autonoma.agent.hindsight import Attempt, trial_attempts, worst_to_best
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.monitor import (
    REFUSED_REPEAT,
    Monitor,
    MonitorSettings,
    third_in_a_row,
    worn_out,
)
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.progress import Progress, check_progress
from autonoma.agent.self_reflection import SelfReflection, SelfReflector
from autonoma.agent.services import RunServices, ToolServices
from autonoma.agent.trials import Choice, TrialWorkspace, choose_course
from autonoma.errors import ModelError, ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.llm.base import SIDE_LANE
from autonoma.memory.agent_memory import AgentMemory
from autonoma.memory.context import (
    Assembled,
    CalibratedCounter,
    ContextLimits,
    Recollection,
    RollingSummary,
    assemble,
    fence,
    repeat_note,
    repeats,
)
from autonoma.memory.importance import HeuristicRater, ImportanceRater
from autonoma.memory.summary import Summariser
from autonoma.runtime.budget import (
    BudgetLimits,
    BudgetSpent,
    SharedBudget,
    describe_left,
)
from autonoma.runtime.events import (
    ApprovalAnswered,
    ApprovalAsked,
    CheckLeftOut,
    ChecksEdited,
    ChecksFailed,
    ChecksRun,
    ChecksWriting,
    ChecksWritten,
    Event,
    MemorySaved,
    MonitorDetected,
    OutsideEntered,
    Reflected,
    Reflecting,
    ReplanAsked,
    RunFinished,
    RunStarted,
    SelfReflected,
    SelfReflectionFailed,
    StepIntent,
    StepInterrupted,
    StepInvalid,
    StepResult,
    SummaryUpdated,
    Thinking,
    ToolsHint,
    ToolsOffered,
    TrialEnded,
    TrialStarted,
    WorkspaceChanged,
)
from autonoma.runtime.sink import EventListener, emit
from autonoma.runtime.store import (
    RunNotFound,
    RunRecord,
    RunStatus,
    RunStore,
    StepRecord,
)
from autonoma.templating import render
from autonoma.tools import Risk, Tool, ToolContext, ToolRegistry, ToolResult, Workspace
from autonoma.tools.bridge import run_program
from autonoma.tools.changes import Change, ChangeJournal, journal_of
from autonoma.tools.provenance import OwnFiles
from autonoma.tools.retrieval import ToolRetriever, imagine_tool, step_query
from autonoma.tools.sandbox import Sandbox, SandboxError

_RISK_ORDER = [Risk.READ, Risk.WRITE, Risk.NETWORK, Risk.EXECUTE]

INTERRUPTED = (
    "interrupted: the run stopped while {command} was running, so it may or may not have taken "
    "effect. Check (for example with list_files or read_file) before doing it again."
)


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
    # last `lessons` lessons in view of the next steps. Off by default until the issue 7
    # benchmark says it helps the embedded models.
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


@dataclass
class _Remembered:
    """How far the run's steps are in the rolling summary and in long-term memory."""

    summary: RollingSummary | None = None
    saved_upto: int = 0
    hint: str | None = None  # the command the model imagined for the task, once asked
    lessons: list[str] = field(default_factory=list)  # self-reflections' lessons, in order
    trial: int = 1
    first_step: int = 1  # the current trial's
    start_score: float = 0.0  # the checks' score when the current trial began
    caught: int = 0  # problems reflected on in the current trial (periodic checks aside)
    attempts: list[Attempt] = field(default_factory=list)  # abandoned trials
    checks_asked: bool = False  # the run's checks were written (or tried) at its start
    found: str = ""  # the files as the run found them, shown at the top of every prompt
    outside_from: int | None = None  # the first step with outside content in its context


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut: {len(text) - limit} of {len(text)} characters not shown]"


class RunLoop:
    """Drives one stored run to its end, step by step: the reasoning-and-acting loop. Its
    configuration and services are fixed at construction; `await run(run_id)` per run."""

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
        # the steps of a run keep to one lane (one cached prompt prefix), the calls beside
        # them (checks, reflection) to another, so neither evicts the other's prefix
        self.steps_model = model
        self.side_model = model.in_lane(SIDE_LANE)
        self.sandbox = sandbox  # where acceptance checks run; None: judged checks only
        self.tools = tools
        self.store = store
        self.config = config or LoopConfig()
        self.approver: Approver = approver or RefuseWithoutTerminal()
        self.listeners = listeners or []
        self.memory = memory
        self.summariser = summariser
        # what tools use besides the workspace: the sandbox, the egress guard, ... (by key)
        self.services = services or ToolServices()
        self.limits = self.config.context or ContextLimits.for_window(
            model.context_window, self.config.max_answer_tokens
        )
        self.count = CalibratedCounter()
        # With many tools, each step offers the core and those relevant to it (retriever).
        self.retriever = retriever
        self._offered: list[Tool] = list(tools)
        self._schemas: dict[tuple[str, ...], dict[str, Any]] = {}
        self._hint = ""
        self._lessons: list[str] = []  # the latest self-reflections' lessons, newest last
        self._attempts: list[Attempt] = []  # the run's abandoned trials (hindsight)
        self._approved_ahead = 0
        self._budget: SharedBudget | None = None  # the run's, while it runs
        self._outside_from: int | None = None  # the first step that brought outside content
        self._acceptance: Acceptance | None = None  # the run's checks, once written
        self._refusal = ""  # why the checks last turned a claim of completion down
        self._checks_now = ""  # what the code checks say of the workspace before this step
        self._start_files: frozenset[str] | None = None  # what the run found, once read
        self._checks_pass = False  # and whether all of them that can run pass
        self._left_out = 0  # code checks left out as unable to pass, already reported
        self._judged_on = ""  # the workspace's contents when the judge last said no
        self._found = ""  # the files as the run found them (agent/found.py), fixed for the run
        self._by_found = False  # the run is marked from its start for the files it found

    # -- events ---------------------------------------------------------------------------

    async def emit(self, run_id: str, event: Event, step: int | None = None) -> None:
        """Store an event and hand it to the listeners."""
        await emit(self.store, self.listeners, run_id, event, step)

    # -- the run --------------------------------------------------------------------------

    async def run(self, run_id: str, *, within: SharedBudget | None = None) -> RunOutcome:
        """Run (or resume) a stored run until it completes, spends its budget, or is stopped.
        A run doing one task of a larger run also draws on that run's budget, `within`."""
        run = await asyncio.to_thread(self.store.get_run, run_id)
        identity = AgentIdentity.model_validate(run.identity)
        workspace = Workspace(Path(run.workspace))
        self.steps_model = self.model.in_lane(f"run:{run.id}")
        steps = await asyncio.to_thread(self.store.steps, run_id)
        spent = run.spent.model_copy()  # this run's own spending, as stored
        # its total, with what the runs serving it (sub-agents) spent, is what limits it
        budget = SharedBudget(
            self.config.limits, await asyncio.to_thread(self.store.total_spent, run)
        )
        spent.feed(budget.spent)
        if within is not None:
            budget.spent.feed(within.spent)
        self._budget = budget
        ask = getattr(self.approver, "ask", None)
        context = ToolContext(
            workspace=workspace,
            model=self.model,
            sandbox=self.services.sandbox,
            egress=self.services.egress,
            search=self.services.search,
            spent=spent,
            ask_person=ask if not self.config.continuous else None,
            run=RunServices(run, budget, host=self, memory=self.memory),
        )
        remembered = await asyncio.to_thread(self._remembered, run_id)
        await self._close_interrupted(run_id, steps)
        # runs stored before `outside_entered` was recorded: their first untrusted step
        first_untrusted = next((s.n for s in steps if s.untrusted), None)
        self._outside_from = (
            first_untrusted if remembered.outside_from is None else remembered.outside_from
        )
        every = await asyncio.to_thread(self.store.steps, run_id)
        steps = [s for s in every if s.n >= remembered.first_step]  # the current trial's
        monitor = None
        if self.config.monitor is not None:  # a resumed run does not re-report old evidence
            monitor = Monitor(self.config.monitor, after=every[-1].n if every else 0)
        self._lessons = remembered.lessons[-self.config.lessons :]
        self._start_files = None
        self._attempts = remembered.attempts
        started: dict[str, Any] = {}
        if not every:
            remembered.start_score = (await self._progress(run, identity, workspace, [])).score
            started["score"] = remembered.start_score
            if self._trials_restore(run) or self.config.checks:
                taken = await asyncio.to_thread(self._trial_workspace(run).snapshot)
                started["snapshot"] = taken
            started["found"] = await asyncio.to_thread(found_at_start, workspace)
        self._found = started.get("found", remembered.found)
        await asyncio.to_thread(self.store.set_status, run_id, "running", "", spent)
        await self.emit(run_id, RunStarted(resumed=bool(every), identity=run.identity, **started))
        journal = journal_of(self.store.path.parent, run.id, workspace.root)
        await asyncio.to_thread(journal.begin)
        shas = await asyncio.to_thread(self._own_shas, run, journal)
        context.own = own = await asyncio.to_thread(OwnFiles, workspace, shas)
        there = await asyncio.to_thread(workspace.files)
        if self.config.trust_workspace:
            await asyncio.to_thread(own.adopt, there)
        # stored with a task's or a sub-agent's run: honoured however the run is driven
        if self.config.outside_at_start or run.settings.get("outside_at_start"):
            await self._mark_outside(run_id, 0, "its task came from a run with outside content")
        elif (
            self._found
            and not self.config.trust_workspace
            and bool(await asyncio.to_thread(own.foreign, there))
        ):
            self._by_found = self._outside_from in (None, 0)
            await self._mark_outside(
                run_id, 0, "it began with files in the workspace that it did not write"
            )
        if self.memory is not None:
            self.memory.outside_from = self._outside_from
        clock_base, clock_start = spent.seconds, time.monotonic()
        status: RunStatus = "running"
        reason = ""
        refused = 0  # claims of completion the checks turned down since this start
        # the time limit bounds a step in progress too: a hung model call or a slow tool
        # is cut at the limit, and the run ends budget_exhausted, not minutes later
        limit = asyncio.timeout_at(self._deadline(budget.limits, clock_base))
        try:
            async with limit:
                self._hint = await self._tool_hint(run, spent, remembered.hint)
                await self._accept_with(
                    run, identity, workspace, spent, remembered, fresh=not every
                )
                while status == "running":
                    spent.seconds = clock_base + time.monotonic() - clock_start
                    why = budget.exhausted() or (within and within.begin_step())
                    if why:
                        status, reason = "budget_exhausted", why
                        break
                    try:
                        self._checks_now, self._checks_pass = await self._checks_status(steps)
                        await self._report_left_out(run_id)
                        step, result = await self._step(
                            run, identity, workspace, context, steps, spent, remembered
                        )
                    finally:
                        if within is not None:
                            within.end_step()
                    steps.append(step)
                    changed = await asyncio.to_thread(journal.record, step.n)
                    self._adopt(step, changed, context.own)
                    if changed:
                        described = [c.describe() for c in changed[:50]]
                        await self.emit(run_id, WorkspaceChanged(changes=described), step.n)
                    choice = None
                    if monitor is not None:
                        choice = await self._watch(
                            monitor, run, identity, steps, workspace, budget, spent, remembered
                        )
                    refused += step.command == "task_complete" and not step.ok
                    if result is not None and result.final:
                        status, reason = "completed", step.arguments.get("reason", "")
                    elif await self._done_by_checks(run, step, workspace, spent):
                        status = "completed"
                        reason = (
                            f"every acceptance check passes after step {step.n}: the work is done"
                        )
                    elif step.command == "task_complete" and refused >= self.config.max_claims:
                        status = "incomplete"
                        why = self._refusal or step.observation
                        reason = f"task_complete was refused {refused} times; the last check: {why}"
                    elif choice is not None and choice.course == "new_trial":
                        await self._new_trial(
                            run, identity, workspace, steps, spent, remembered, choice.why
                        )
                        monitor = Monitor(self.config.monitor, after=step.n)
                    elif choice is not None and choice.course == "replan":
                        status, reason = "failed", f"the plan is off: {self._lessons[-1]}"
                        await self.emit(run_id, ReplanAsked(lesson=self._lessons[-1]), step.n)
            await self._save_the_rest(run_id, steps, spent, remembered, status)
        except TimeoutError:
            if not limit.expired():
                raise
            spent.seconds = clock_base + time.monotonic() - clock_start
            status = "budget_exhausted"
            reason = (budget.exhausted() or "time limit reached") + " (a step was cut)"
            await self._close_interrupted(run_id, await asyncio.to_thread(self.store.steps, run_id))
            await self._save_the_rest(run_id, steps, spent, remembered, status)
        except asyncio.CancelledError:
            status, reason = "stopped", "stopped by the person; resume with autonoma resume"
            raise
        except ModelError as error:
            status, reason = "failed", f"{error} (the run can be resumed)"
        finally:
            spent.seconds = clock_base + time.monotonic() - clock_start
            # stopped by the person: out at once, the checks run again on resume
            stopped = status == "stopped"
            final = None if stopped else await self._final_checks(status)
            if final is not None and not final.passed and status == "budget_exhausted":
                reason += f"; {len(final.failed)} of {len(final.results)} checks still fail"
            await asyncio.to_thread(self.store.set_status, run_id, status, reason, spent)
            ended: dict[str, Any] = {}
            progress: Progress | None = None  # none for a stop: its checks are not run
            if final is not None:
                progress = progress_of(final)
                ended["acceptance"] = final.to_json()
            elif not (stopped and self._acceptance):
                progress = await self._progress(run, identity, workspace, steps)
            if progress is not None:
                ended |= {"checks": progress.facts, "score": progress.score}
            await self.emit(run_id, RunFinished(status=status, reason=reason, **ended))
        budget.tick()
        return RunOutcome(
            run_id, status, reason, str(workspace.root), workspace.visible_files(), budget.spent
        )

    async def _accept_with(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        spent: BudgetSpent,
        at: _Remembered,
        *,
        fresh: bool,
    ) -> None:
        """The run's acceptance checks: those stored, or, at its start, written now from the
        goals (before any work), shown, and for a person in approval mode open to edits."""
        self._acceptance = None
        if not self.config.checks:
            return
        events = await asyncio.to_thread(self.store.events, run.id)
        checks = stored_checks(events)
        start = self._trial_workspace(run).start
        runner = CheckRunner(self.sandbox, workspace, start) if self.sandbox else None
        if checks is None and fresh and not at.checks_asked:
            await self.emit(run.id, ChecksWriting())
            judge = Judge(self.side_model)
            written = await CheckWriter(self.side_model, runner, judge=judge).write(
                run.goal, identity.goals, workspace, spent
            )
            spent.charge(
                written.usage.prompt_tokens, written.usage.completion_tokens, written.cost_usd
            )
            at.checks_asked = True
            fallback = not written.checks
            if fallback:
                await self.emit(
                    run.id, ChecksFailed(error=written.error, discarded=written.discarded)
                )
            checks = written.checks or [task_check(run.goal)]
            acceptance = Acceptance(
                checks, runner, Judge(self.side_model), run.goal, identity.goals, workspace
            )
            at.start_score = (await acceptance.progress()).score  # 0: each check fails now
            await self.emit(
                run.id,
                ChecksWritten(
                    checks=[c.model_dump() for c in checks],
                    discarded=written.discarded,
                    tokens=written.usage.total_tokens,
                    start_score=at.start_score,
                    **{"fallback": True} if fallback else {},
                ),
            )
            checks = await self._review_checks(run.id, checks)
        if not checks:
            return
        judge = Judge(self.side_model, self._found_at_start(run), start)
        self._acceptance = Acceptance(checks, runner, judge, run.goal, identity.goals, workspace)
        self._left_out = 0
        # the workspace as the checks found it: the judge is asked about it no more (at a
        # run's start the writer's guard has found no judged check met on it)
        self._judged_on = await asyncio.to_thread(content_print, workspace)

    async def _review_checks(self, run_id: str, checks: list[Check]) -> list[Check]:
        """In approval mode the person sees the checks and may edit them (stored if changed)."""
        review = getattr(self.approver, "review_checks", None)
        if review is None or self.config.continuous:
            return checks
        edited: list[Check] | None = await review(checks)
        if edited is None or edited == checks:
            return checks
        await self.emit(run_id, ChecksEdited(checks=[c.model_dump() for c in edited]))
        return edited

    async def _report_left_out(self, run_id: str, n: int | None = None) -> None:
        """Say so, once each, when a code check was found unable to pass and left out."""
        if self._acceptance is None:
            return
        for result in self._acceptance.broken[self._left_out :]:
            await self.emit(run_id, CheckLeftOut(what=result.check.what, why=result.broken), n)
        self._left_out = len(self._acceptance.broken)

    async def _checks_status(self, steps: list[StepRecord]) -> tuple[str, bool]:
        """After some work, what the code checks say of the workspace now, for the request:
        tests the model can work to (Reflexion's), not only a verdict at task_complete; and
        whether every one that can run passes."""
        if self._acceptance is None or not steps:
            return "", False
        verdict = await self._acceptance.verdict()
        left_out = "".join(
            f"The check '{r.check.what}' was left out: it can never pass ({r.broken}). "
            for r in self._acceptance.broken
        )
        if not verdict.results:
            return left_out, False
        if verdict.passed:
            passing = "; ".join(r.check.what for r in verdict.results)
            judged = any(c.kind == "judged" for c in self._acceptance.checks)
            later = " (the judged ones are judged at task_complete)" if judged else ""
            return f"{left_out}The acceptance checks pass now{later}: {passing}.", True
        failing = "; ".join(r.describe(n) for n, r in verdict.failed)
        counts = f"{len(verdict.failed)} of {len(verdict.results)}"
        return f"{left_out}Acceptance checks now: {counts} fail: {failing}", False

    async def _done_by_checks(
        self, run: RunRecord, step: StepRecord, workspace: Workspace, spent: BudgetSpent
    ) -> bool:
        """Every code check passes after this step and the judged ones, judged now, agree:
        the work is done whether or not the model says so (the 1.5B model, its work done
        and checked, went on to undo it). The judge is asked again only about a workspace
        whose contents changed since it last said no."""
        if not (self.config.finish_on_checks and self._acceptance):
            return False
        if step.command == "task_complete" or step.status != "done":
            return False
        verdict = await self._acceptance.verdict()
        code = [r for r in verdict.results if r.check.kind == "code"]
        if not code or not all(r.passed for r in code):
            return False  # judged checks alone wait for a claim: the 1.5B judge says yes too easily
        if any(c.kind == "judged" for c in self._acceptance.checks):
            judged_on = await asyncio.to_thread(content_print, workspace)
            if judged_on == self._judged_on:
                return False
            self._judged_on = judged_on
            verdict = await self._acceptance.verdict(judge=spent)
        await self.emit(run.id, ChecksRun(**verdict.to_json()), step.n)
        return verdict.passed

    async def _final_checks(self, status: RunStatus) -> Verdict | None:
        """The checks on the workspace as the run ends (judged ones as last judged)."""
        if self._acceptance is None:
            return None
        try:
            return await self._acceptance.verdict()
        except Exception:  # a run's end is recorded whatever the checks do
            return None

    @staticmethod
    def _deadline(limits: BudgetLimits, clock_base: float) -> float | None:
        """When the run's time limit falls, on the event loop's clock (None: no limit)."""
        if limits.max_seconds is None:
            return None
        left = max(0.0, limits.max_seconds - clock_base)
        return float(asyncio.get_running_loop().time() + left)

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
                await self.emit(run_id, StepInterrupted(command=step.command), step.n)

    def _remembered(self, run_id: str) -> _Remembered:
        """The latest rolling summary and memory save, the tool hint and the lessons, from the
        run's events (for resume)."""
        remembered = _Remembered()
        events = self.store.events(run_id)
        for record in events:
            match record.event:
                case SummaryUpdated(upto=upto, text=text):
                    remembered.summary = RollingSummary(upto, text)
                case MemorySaved(upto=upto):
                    remembered.saved_upto = upto
                case ToolsHint(hint=hint):
                    remembered.hint = hint
                case SelfReflected(lesson=lesson, detection=detection):
                    remembered.lessons.append(lesson)
                    remembered.caught += detection != "periodic"
                case SelfReflectionFailed(detection=detection):
                    remembered.caught += detection != "periodic"
                case ChecksWritten(start_score=score):
                    remembered.checks_asked = True
                    if score is not None:
                        remembered.start_score = score
                case ChecksFailed():
                    remembered.checks_asked = True
                case RunStarted(score=score, found=found) if score is not None:
                    remembered.start_score = score
                    remembered.found = found or ""
                case OutsideEntered() if remembered.outside_from is None:
                    remembered.outside_from = record.step or 0
                case TrialStarted(trial=trial, first_step=first_step, start_score=score):
                    remembered.trial, remembered.first_step = trial, first_step
                    remembered.start_score = score or 0.0
                    remembered.summary, remembered.caught = None, 0
        remembered.attempts = trial_attempts(events)
        return remembered

    async def _save_the_rest(
        self, run_id: str, steps: list[StepRecord], spent: BudgetSpent, at: _Remembered, status: str
    ) -> None:
        """At the end of a run, the steps not yet in long-term memory go there. With the
        budget spent they are rated by the heuristic, which costs no model call."""
        if self.memory is None or status not in ("completed", "budget_exhausted"):
            return
        rest = [s for s in steps if s.n > at.saved_upto]
        if not rest:
            return
        rater = HeuristicRater() if status == "budget_exhausted" else None
        await self._save(run_id, rest, spent, at, rater=rater)

    async def _save(
        self,
        run_id: str,
        steps: list[StepRecord],
        spent: BudgetSpent,
        at: _Remembered,
        rater: ImportanceRater | None = None,
    ) -> None:
        assert self.memory is not None
        records = await self.memory.save_steps(steps, spent, rater=rater)
        at.saved_upto = steps[-1].n
        await self.emit(run_id, MemorySaved(upto=at.saved_upto, records=records))
        if rater is None and self.memory.reflection_due():
            await self.emit(run_id, Reflecting())
            outcome = await self.memory.reflect(spent)
            await self.emit(
                run_id,
                Reflected(
                    questions=outcome.questions,
                    reflections=[
                        {"id": r.id, "text": r.text, "evidence": r.evidence}
                        for r in outcome.reflections
                    ],
                    problems=outcome.problems,
                ),
            )

    async def _prepare(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
        at: _Remembered,
    ) -> Assembled:
        """The next prompt. Steps that aged out of the verbatim window are folded into the
        rolling summary and saved to long-term memory, `summary_batch` at a time."""
        recalled = await self._recollection(run, steps)
        if recalled is not None and recalled.outside:
            n = steps[-1].n + 1 if steps else at.first_step
            await self._mark_outside(run.id, n, "it recalled memories made from outside content")
        assembled = self.assemble(run, identity, workspace, steps, spent, at.summary, recalled)
        if len(assembled.aged) < self.config.summary_batch:
            return assembled
        aged = assembled.aged
        if self.summariser is not None:
            at.summary = await self.summariser.update(
                at.summary,
                aged,
                who=f"{identity.name}, {identity.role}",
                goals=identity.goals,
                spent=spent,
            )
            await self.emit(run.id, SummaryUpdated(upto=at.summary.upto, text=at.summary.text))
        unsaved = [s for s in aged if s.n > at.saved_upto]
        if self.memory is not None and unsaved:
            await self._save(run.id, unsaved, spent, at)
        return self.assemble(run, identity, workspace, steps, spent, at.summary, recalled)

    async def _recollection(self, run: RunRecord, steps: list[StepRecord]) -> Recollection | None:
        """What long-term memory holds for the current task: the goal and the latest plan."""
        if self.memory is None:
            return None
        task = run.goal
        if steps and steps[-1].thoughts.get("plan"):
            task += "\n" + str(steps[-1].thoughts["plan"])
        return await self.memory.recollection(task)

    def system_prompt(self, run: RunRecord, identity: AgentIdentity) -> str:
        """The run's fixed instructions. Nothing in it changes from step to step, so a prompt
        cache keeps it (what changes is in `closing`); and what every run shares (the commands,
        the answer's form) comes before what is this run's (who, the task, the goals, the
        files found), so a run's first step starts from the cache an earlier run left."""
        code = self.config.actions == "code"
        return render(
            "autonoma.agent",
            "system_code.j2" if code else "system.j2",
            identity=identity,
            task=run.goal,
            tools=self._offered,
            functions=[line for _, line in functions(self._in_programs()).values()] if code else [],
            approval=not self.config.continuous,
            code=code,
            outside=self._outside_from is not None,
            found=fence(self._found, f"{run.id}:found") if self._found else "",
        )

    def messages(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
    ) -> list[dict[str, Any]]:
        """What the model sees at the next step, without long-term memory or a summary."""
        return self.assemble(run, identity, workspace, steps, spent).messages

    def assemble(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
        summary: RollingSummary | None = None,
        recalled: Recollection | None = None,
    ) -> Assembled:
        """What the model sees at the next step: the fixed system prompt and checks, the steps
        so far inside the context budget, then what changes each step (what memory recalls,
        the workspace, the budget left, a repeat) and the request with the goals restated."""
        acceptance = self._acceptance
        head = checks_block(acceptance.checks) if acceptance else ""
        return assemble(
            self.system_prompt(run, identity),
            steps,
            self.closing(run, identity, workspace, steps, spent),
            self.limits,
            self.count,
            head=head,
            summary=summary,
            recalled=recalled,
        )

    def closing(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
    ) -> str:
        files = workspace.visible_files()
        found = self._found_at_start(run)
        listing = ", ".join(files[:20]) + (
            f" and {len(files) - 20} more" if len(files) > 20 else ""
        )
        missing = (
            []
            if self._acceptance
            else unmet_deliverables(workspace, [run.goal, *identity.goals], found)
        )
        last = steps[-1] if steps else None
        earlier = repeats(steps).get(last.n) if last else None
        return render(
            "autonoma.agent",
            "next_step.j2",
            first=not steps,
            goals=identity.goals,
            files=listing,
            missing=missing,
            misnamed=misnamed(files, [run.goal, *identity.goals], found),
            checks=self._acceptance is not None,
            code=self.config.actions == "code",
            budget_left=describe_left(
                self.config.limits, self._budget.spent if self._budget else spent
            ),
            repeated=repeat_note(last.n, earlier) if last and earlier else "",
            withheld=self._withheld(steps),
            checks_now=self._checks_now,
            checks_pass=self._checks_pass,
            lessons=self._lessons,
            hindsight=[a.describe() for a in worst_to_best(self._attempts)],
        )

    def _temperature(self, steps: Sequence[StepRecord]) -> float:
        """Hotter after a step that repeated an earlier one or was refused as a repeat, so
        the next answer is a new one rather than the likeliest again."""
        last = steps[-1] if steps else None
        repeated = last is not None and (
            last.n in repeats(steps) or (last.observation or "").startswith(REFUSED_REPEAT)
        )
        base = self.config.temperature
        return max(base, self.config.repeat_temperature) if repeated else base

    async def _step(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        context: ToolContext,
        steps: list[StepRecord],
        spent: BudgetSpent,
        remembered: _Remembered,
    ) -> tuple[StepRecord, ToolResult | None]:
        n = steps[-1].n + 1 if steps else remembered.first_step
        await self._offer(run, steps, n)
        assembled = await self._prepare(run, identity, workspace, steps, spent, remembered)
        messages = assembled.messages
        await self.emit(run.id, Thinking(), n)
        started = time.time()
        try:
            response = await self.steps_model.request(
                messages,
                output=self._schema(self._withheld(steps)),
                max_tokens=self.config.max_answer_tokens,
                temperature=self._temperature(steps),
                seed=None if self.config.seed is None else self.config.seed + n,
            )
        except (OutputInvalid, ModelRefused) as error:
            spent.count_step()
            spent.charge(error.prompt_tokens, error.completion_tokens, error.cost_usd)
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
            await self.emit(run.id, StepInvalid(error=str(error)), n)
            return step, None
        spent.count_step()
        spent.charge(
            response.usage.prompt_tokens, response.usage.completion_tokens, response.cost_usd
        )
        if response.attempts == 1:  # a re-ask's usage adds up several prompts
            self.count.observe(assembled.tokens, response.usage.prompt_tokens)
        code = self.config.actions == "code"
        action = parse_program(response.data) if code else parse_action(response.data)
        usage = response.usage
        step = StepRecord(
            run_id=run.id,
            n=n,
            status="running",
            thoughts=action.thoughts.model_dump(),
            command=action.command,
            arguments=action.arguments,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=response.cost_usd,
            started_at=started,
            cached_tokens=usage.cached_tokens,
            prompt_seconds=usage.prompt_seconds,
            generation_seconds=usage.generation_seconds,
        )
        await asyncio.to_thread(self.store.begin_step, step, spent)
        await self.emit(
            run.id,
            StepIntent(
                thoughts=step.thoughts,
                command=action.command,
                arguments=action.arguments,
                tokens=spent.tokens,
                usd=spent.usd,
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                prompt_seconds=round(usage.prompt_seconds, 2),
                generation_seconds=round(usage.generation_seconds, 2),
            ),
            n,
        )
        repeated = third_in_a_row(steps, action)
        if repeated:
            result, denied = ToolResult(False, repeated), False
        else:
            result, denied = await self._act(run.id, n, action, context)
        if result.final:
            claimed = await self._claim(run, identity, workspace, result, n, spent)
            if code and not claimed.ok:  # the program's output stays in view with the refusal
                claimed = ToolResult(False, f"{result.output}\n{claimed.output}")
            result = claimed
        observation = truncate(result.output, self.config.max_observation_chars)
        status = "denied" if denied else "done"
        step = step.model_copy(
            update={
                "status": status,
                "observation": observation,
                "ok": result.ok,
                "untrusted": result.untrusted,
            }
        )
        await asyncio.to_thread(
            self.store.finish_step,
            run.id,
            n,
            status=step.status,
            observation=observation,
            ok=result.ok,
            spent=spent,
            untrusted=result.untrusted,
        )
        if result.untrusted:
            await self._mark_outside(run.id, n, f"{step.command} brought outside content")
        await self.emit(
            run.id, StepResult(ok=result.ok, observation=observation, status=step.status), n
        )
        return step, result

    async def _offer(self, run: RunRecord, steps: list[StepRecord], n: int) -> None:
        """With a retriever: the commands to offer at the next step, found by the task, the
        latest thoughts and the last command used (recorded when the choice changes)."""
        if self.retriever is None:
            self._offered = list(self.tools)
            return
        last = steps[-1] if steps else None
        offered = await self.retriever.select(
            step_query(run.goal, last.thoughts if last else None, hint=self._hint),
            include=[last.command] if last and last.command else [],
        )
        names = [t.name for t in offered]
        if names != [t.name for t in self._offered]:
            self._offered = offered
            await self.emit(run.id, ToolsOffered(tools=names), n)

    async def _watch(
        self,
        monitor: Monitor,
        run: RunRecord,
        identity: AgentIdentity,
        steps: list[StepRecord],
        workspace: Workspace,
        budget: SharedBudget,
        spent: BudgetSpent,
        at: _Remembered,
    ) -> Choice | None:
        """Check the newest step for loops and stalls; each detection is stored as an event
        with its evidence (the steps involved). With self-reflection on, the first one is
        reflected on, its lesson kept in view, and what to do next chosen from the checks and
        the reflection's verdict."""
        n = steps[-1].n
        files = {n: await asyncio.to_thread(workspace.files)}
        progress = await self._progress(run, identity, workspace, steps)
        found = monitor.check(
            steps,
            limits=self.config.limits,
            spent=budget.spent,
            files=files,
            progress=progress.score if progress.checks else None,  # burn is judged by checks
        )
        for detection in found:
            await self.emit(
                run.id,
                MonitorDetected(
                    detection=detection.kind, steps=detection.steps, evidence=detection.evidence
                ),
                n,
            )
        if not found or not self.config.self_reflect:
            return None
        detection = found[0]
        at.caught += detection.kind != "periodic"
        who = f"{identity.name}, {identity.role}"
        reflection = await SelfReflector(self.side_model).reflect(
            who, run.goal, steps, detection, spent, checks=progress.facts
        )
        if reflection is None:
            await self.emit(run.id, SelfReflectionFailed(detection=detection.kind), n)
            return None
        choice = self._choose(run, reflection, progress, at)
        lesson = reflection.lesson
        if reflection.verdict == "replan" and choice.course == "continue":
            lesson += " Make a new plan."
        self._lessons = [*self._lessons, lesson][-self.config.lessons :]
        await self.emit(
            run.id,
            SelfReflected(
                detection=detection.kind,
                lesson=lesson,
                verdict=reflection.verdict,
                course=choice.course,
                why=choice.why,
                checks=progress.facts,
            ),
            n,
        )
        if self.memory is not None:
            await self.memory.remember(f"Self-reflection at step {n}: {lesson}", spent)
        return choice

    def _choose(
        self, run: RunRecord, reflection: SelfReflection, progress: Progress, at: _Remembered
    ) -> Choice:
        # a task of a planned run can hand its plan back; a run on its own replans in its steps
        return choose_course(
            reflection.verdict,
            progress,
            start_score=at.start_score,
            detections=at.caught,
            trials_left=self.config.trials - at.trial,
            can_replan=bool(run.task_id),
            escalate_after=self.config.escalate_after,
        )

    async def _new_trial(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
        at: _Remembered,
        why: str,
    ) -> None:
        """End the trial and start the task again with a clean context (and, for a run that
        owns its workspace, the workspace as the run began), the lessons kept in view and the
        abandoned trial shown as hindsight."""
        n = steps[-1].n
        progress = await self._progress(run, identity, workspace, steps)
        await self.emit(
            run.id,
            TrialEnded(
                trial=at.trial,
                why=why,
                lesson=self._lessons[-1] if self._lessons else "",
                checks=progress.facts,
                score=progress.score,
            ),
            n,
        )
        unsaved = [s for s in steps if s.n > at.saved_upto]
        if self.memory is not None and unsaved:  # what the trial saw is not forgotten
            await self._save(run.id, unsaved, spent, at, rater=HeuristicRater())
        archive = None
        if self._trials_restore(run):
            archive = await asyncio.to_thread(self._trial_workspace(run).restore, at.trial)
        at.attempts = trial_attempts(await asyncio.to_thread(self.store.events, run.id))
        self._attempts = at.attempts
        at.trial, at.first_step, at.summary, at.caught = at.trial + 1, n + 1, None, 0
        at.start_score = (await self._progress(run, identity, workspace, [])).score
        steps.clear()
        await self.emit(
            run.id,
            TrialStarted(
                trial=at.trial,
                first_step=at.first_step,
                lessons=self._lessons,
                workspace="restored" if archive is not None else "kept",
                archive=str(archive) if archive is not None else None,
                start_score=at.start_score,
            ),
        )

    def _trials_restore(self, run: RunRecord) -> bool:
        """Whether a new trial puts the workspace back: only a run that owns its workspace
        (not a task of a planned run or a sub-agent, which share theirs)."""
        return self.config.self_reflect and self.config.trials > 1 and not run.parent_id

    def _found_at_start(self, run: RunRecord) -> frozenset[str]:
        """The files the workspace held when the run began (from its start snapshot; none
        known without one)."""
        if self._start_files is None:
            start = self._trial_workspace(run).start
            self._start_files = frozenset(Workspace(start).files() if start.is_dir() else [])
        return self._start_files

    def _trial_workspace(self, run: RunRecord) -> TrialWorkspace:
        keep = self.store.path.parent / "trials" / run.id
        return TrialWorkspace(Path(run.workspace), keep)

    async def _progress(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
    ) -> Progress:
        if self._acceptance is not None:  # the checks, in place of the files' line counts
            return await self._acceptance.progress()
        texts = [run.goal, *identity.goals]
        return await asyncio.to_thread(check_progress, workspace, texts, steps)

    async def _tool_hint(self, run: RunRecord, spent: BudgetSpent, stored: str | None) -> str:
        """The command the model imagines for the task, asked once a run (kept in an event,
        so a resumed run does not ask again); "" without retrieval or if the model fails."""
        if self.retriever is None or not self.config.tool_hint:
            return ""
        if stored is not None:
            return stored
        try:
            response = await imagine_tool(self.side_model, run.goal)
        except ModelError as error:
            await self.emit(run.id, ToolsHint(hint="", error=str(error)))
            return ""
        spent.charge(
            response.usage.prompt_tokens, response.usage.completion_tokens, response.cost_usd
        )
        await self.emit(run.id, ToolsHint(hint=response.text))
        return response.text

    def _schema(self, withheld: str = "") -> dict[str, Any]:
        if self.config.actions == "code":
            return program_schema()
        tools = [tool for tool in self._offered if tool.name != withheld]
        key = tuple(tool.name for tool in tools)
        if key not in self._schemas:
            self._schemas[key] = action_schema(tools)
        return self._schemas[key]

    def _withheld(self, steps: list[StepRecord]) -> str:
        """The command left out of the next step's schema because the model has worn it out
        (monitor.worn_out). Only JSON actions can be constrained so; a program asking for it
        is refused instead. Never the only command offered."""
        if self.config.actions == "code":
            return ""
        name = worn_out(steps)
        offered = [tool.name for tool in self._offered]
        return name if name in offered and len(offered) > 1 else ""

    async def _claim(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        claim: ToolResult,
        n: int,
        spent: BudgetSpent,
    ) -> ToolResult:
        """Accept task_complete only if every acceptance check passes (the judged ones judged
        now); without checks, only if the files the task and goals name exist, not empty."""
        if self._acceptance is not None:
            acceptance = self._acceptance
            verdict = await acceptance.verdict(judge=spent)
            await self._report_left_out(run.id, n)
            await self.emit(run.id, ChecksRun(**verdict.to_json()), n)
            if verdict.passed:
                return ToolResult(
                    True, f"{claim.output} (all {len(verdict.results)} checks pass)", final=True
                )
            self._refusal = acceptance.refusal(verdict)
            return ToolResult(False, self._refusal)
        problems = await asyncio.to_thread(
            unmet_deliverables, workspace, [run.goal, *identity.goals], self._found_at_start(run)
        )
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
        if self.config.actions == "code" and action.command == PROGRAM:
            return await self._run_program(run_id, n, action, context)
        tool = self.tools.get(action.command)
        if tool is None:  # only possible with an unconstrained backend that slipped
            return ToolResult(False, f"error: there is no command {action.command!r}"), False
        reason = self._untrusted_reason()
        if tool.risk is not Risk.READ and self._needs_person(reason, [tool]):
            decision = await self._approve(run_id, n, action, tool.risk, reason)
            if decision.kind == "no":
                return ToolResult(False, f"the person refused to run {action.command}"), True
            if decision.kind == "feedback":
                return ToolResult(False, refused(action.command, decision)), True
        return await tool.run(context, action.arguments), False

    async def _run_program(
        self, run_id: str, n: int, action: Action, context: ToolContext
    ) -> tuple[ToolResult, bool]:
        """A code step: the program, approved as a whole if it names a risky tool and needs
        a person, run in the sandbox with the offered tools as functions."""
        if self.sandbox is None:
            return ToolResult(False, "error: code actions need the sandbox (bubblewrap)"), False
        code = str(action.arguments.get("code", ""))
        offered = self._in_programs()
        names = functions(offered)
        risks = {t.name: t.risk for t in offered}
        risky = {name for name in named_tools(code, names) if risks[name] is not Risk.READ}
        outside_before = self._outside_from
        if risky:
            reason = self._untrusted_reason()
            if self._needs_person(reason, [t for t in offered if t.name in risky]):
                worst = max((risks[name] for name in risky), key=_RISK_ORDER.index)
                decision = await self._approve(run_id, n, action, worst, reason)
                if decision.kind == "no":
                    return ToolResult(False, "the person refused to run the program"), True
                if decision.kind == "feedback":
                    return ToolResult(False, refused("the program", decision)), True
        # the program can read every file: any the run did not write makes its output outside
        foreign = context.own.foreign(context.workspace.files()) if context.own else []
        flags = {"claimed": False, "untrusted": bool(foreign)}

        async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
            tool = self.tools.get(name)
            if tool is None:
                return ToolResult(False, f"error: there is no command {name!r}")
            if tool.risk is not Risk.READ:
                if name not in risky:
                    return ToolResult(False, f"refused: call {name} by its name in the program")
                entered = self._outside_from != outside_before
                if entered and self._needs_person(self._untrusted_reason(), [tool]):
                    return ToolResult(
                        False,
                        f"refused: outside content entered during this program, so {name} "
                        "needs the person's approval: call it in a program of its own",
                    )
            result = await tool.run(context, arguments)
            if result.untrusted:
                flags["untrusted"] = True
                await self._mark_outside(run_id, n, f"{name} brought outside content")
            flags["claimed"] = flags["claimed"] or result.final
            return result

        try:
            program = await run_program(
                self.sandbox, context.workspace.root, code, offered, call, helpers=HELPERS
            )
        except SandboxError as error:
            return ToolResult(False, f"error: the program could not start: {error}"), False
        output = report(program, self.config.max_observation_chars)
        ok = program.sandbox.ok
        if flags["claimed"] and not ok:
            output += "\n(task_complete was called, but the program then failed: not checked)"
        final = flags["claimed"] and ok
        return ToolResult(ok, output, final=final, untrusted=flags["untrusted"]), False

    def _in_programs(self) -> list[Tool]:
        return [t for t in self._offered if t.name not in NOT_IN_PROGRAMS]

    def _needs_person(self, untrusted: str, tools: list[Tool]) -> bool:
        """Whether a person must approve using `tools` (none of them read-only): always
        without --continuous; in a continuous run, after outside content, unless every
        effect of theirs stays in the workspace, where `autonoma undo` can put it back."""
        if not self.config.continuous:
            return True
        return bool(untrusted) and not all(self._undoable(t) for t in tools)

    def _undoable(self, tool: Tool) -> bool:
        if not tool.undoable:
            return False
        return tool.risk is Risk.WRITE or (self.sandbox is not None and self.sandbox.isolated)

    def _untrusted_reason(self) -> str:
        if self._outside_from is None or not self.config.approve_after_untrusted:
            return ""
        if self._outside_from == 0 and self._by_found:
            return (
                "outside content was in the context from the run's start: files in the "
                "workspace it did not write (--trust-workspace says they are the person's)"
            )
        if self._outside_from == 0:
            return "outside content was in the context from the run's start"
        return f"outside content entered the context at step {self._outside_from}"

    def helper(self, tools: ToolRegistry, limits: BudgetLimits) -> RunLoop:
        """A loop like this one, with `tools` and `limits` and no long-term memory, for a
        sub-agent's run."""
        return RunLoop(
            self.model,
            tools,
            self.store,
            config=replace(self.config, limits=limits),
            approver=self.approver,
            listeners=self.listeners,
            memory=None,
            summariser=self.summariser,
            services=self.services,
            sandbox=self.sandbox,
        )

    @property
    def carries_outside(self) -> bool:
        """Whether outside content is in the context of the run this agent drives."""
        return self._outside_from is not None

    async def _mark_outside(self, run_id: str, n: int, why: str) -> None:
        """Outside content is in the run's context from step `n` on (0: its start): what
        cannot be undone needs a person from here, and what the run remembers is marked."""
        if self._outside_from is None:
            self._outside_from = n
            await self.emit(run_id, OutsideEntered(why=why), n or None)
        if self.memory is not None:
            self.memory.outside_from = self._outside_from

    def _own_shas(self, run: RunRecord, journal: ChangeJournal) -> dict[str, set[str]]:
        """What the run wrote (from its change journal), and for a task's or a sub-agent's
        run also what the runs it works beside wrote (its parent's and its siblings'), unless
        they had outside content in their context: a planned task reads the files earlier
        tasks made as its inputs. Each file may hold what any of them left there (a retried
        task's file is the second attempt's)."""
        runs = [journal]
        if run.parent_id:
            home = self.store.path.parent
            beside = self.store.children(run.parent_id)  # a worker's store may hold no parent
            with contextlib.suppress(RunNotFound):
                beside.append(self.store.get_run(run.parent_id))
            runs += [
                journal_of(home, other.id, Path(run.workspace))
                for other in beside
                if other.id != run.id and not self.store.carries_outside(other.id)
            ]
        shas: dict[str, set[str]] = {}
        for each in runs:
            for path, sha in each.own_shas().items():
                shas.setdefault(path, set()).add(sha)
        return shas

    def _adopt(self, step: StepRecord, changed: list[Change], own: OwnFiles | None) -> None:
        """Files a step's code changed in the workspace directly (not through a file tool)
        are the run's own work."""
        tool = self.tools.get(step.command)
        if own is None or tool is None or not tool.undoable or tool.risk is not Risk.EXECUTE:
            return
        own.adopt([c.path for c in changed if c.after is not None])
        for change in changed:
            if change.after is None:
                own.removed(change.path)

    async def _approve(
        self, run_id: str, n: int, action: Action, risk: Risk, reason: str = ""
    ) -> Decision:
        if self._approved_ahead > 0:
            self._approved_ahead -= 1
            return Decision(kind="yes")
        request = ApprovalRequest(
            n,
            action.command,
            action.arguments,
            risk,
            action.thoughts.speak or action.thoughts.text,
            reason,
            callable=tuple(
                t.name
                for t in self._offered
                if t.risk is Risk.READ or (self.config.continuous and self._undoable(t))
            ),
        )
        await self.emit(
            run_id, ApprovalAsked(command=action.command, risk=str(risk), reason=reason), n
        )
        decision = await self.approver(request)
        self._approved_ahead = max(0, decision.times - 1) if decision.kind == "yes" else 0
        await self.emit(
            run_id,
            ApprovalAnswered(
                decision=decision.kind,
                times=decision.times,
                feedback=decision.feedback,
                by=decision.by,
            ),
            n,
        )
        return decision


def refused(what: str, decision: Decision) -> str:
    """The observation of a command not run: the policy's words as they are, a person's
    feedback as theirs."""
    if decision.by == "policy":
        return decision.feedback
    return f"the person did not run {what} and said: {decision.feedback}"
