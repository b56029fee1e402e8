"""The step loop: context, request, validate, check policy, run the tool, record, repeat.

Every step is in the run store before the next begins: its intent before its tool runs, its
result after. Nothing the model or a tool does ends the run except task_complete, the budget,
the person, or a model that cannot be reached (which leaves the run resumable).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from autonoma.agent.acceptance import progress_of
from autonoma.agent.action import action_schema, parse_action
from autonoma.agent.code_actions import parse_program, program_schema
from autonoma.agent.found import found_at_start
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop_checks import (
    accept_with,
    checks_status,
    claim,
    done_by_checks,
    final_checks,
    report_left_out,
    told_checks,
)
from autonoma.agent.loop_context import (
    assemble_prompt,
    prepare,
    save_the_rest,
    schema,
    system_prompt,
    temperature,
    withheld,
)
from autonoma.agent.loop_gate import act
from autonoma.agent.loop_services import LoopConfig, LoopServices
from autonoma.agent.loop_trials import new_trial, watch
from autonoma.agent.monitor import Monitor, third_in_a_row
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.progress import Progress
from autonoma.agent.run_state import ChecksNow, RunState, read_back
from autonoma.agent.services import Helper, RunServices
from autonoma.errors import ModelError, ModelRefused, OutputInvalid
from autonoma.runtime.budget import BudgetLimits, BudgetSpent, SharedBudget
from autonoma.runtime.events import (
    Event,
    ReplanAsked,
    RunFinished,
    RunStarted,
    StepIntent,
    StepInterrupted,
    StepInvalid,
    StepResult,
    Thinking,
    ToolsHint,
    ToolsOffered,
    WorkspaceChanged,
)
from autonoma.runtime.store import RunNotFound, RunRecord, RunStatus, RunStore, StepRecord
from autonoma.tools import Risk, ToolContext, ToolRegistry, ToolResult, Workspace
from autonoma.tools.changes import Change, ChangeJournal, journal_of
from autonoma.tools.provenance import OwnFiles
from autonoma.tools.retrieval import imagine_tool, step_query

__all__ = ["LoopConfig", "RunLoop", "truncate"]

INTERRUPTED = (
    "interrupted: the run stopped while {command} was running, so it may or may not have taken "
    "effect. Check (for example with list_files or read_file) before doing it again."
)


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut: {len(text) - limit} of {len(text)} characters not shown]"


class RunLoop(LoopServices):
    """Drives stored runs to their end, step by step: the reasoning-and-acting loop. Its
    configuration and services are fixed at construction (`LoopServices`); `await
    run(run_id)` drives one run, whose state (`RunState`) lives only as long as that call,
    so one loop can drive several runs."""

    # -- the run --------------------------------------------------------------------------

    async def run(self, run_id: str, *, within: SharedBudget | None = None) -> RunOutcome:
        """Run (or resume) a stored run until it completes, spends its budget, or is stopped.
        A run doing one task of a larger run also draws on that run's budget, `within`."""
        state = await self._take_up(run_id, within)
        run, workspace, spent, budget = state.run, state.workspace, state.spent, state.budget
        await self._close_interrupted(run_id, await asyncio.to_thread(self.store.steps, run_id))
        every = await asyncio.to_thread(self.store.steps, run_id)
        if state.outside_from is None:  # runs stored before `outside_entered` was recorded
            state.outside_from = next((s.n for s in every if s.untrusted), None)
        state.steps = [s for s in every if s.n >= state.first_step]  # the current trial's
        monitor = None
        if self.config.monitor is not None:  # a resumed run does not re-report old evidence
            monitor = Monitor(self.config.monitor, after=every[-1].n if every else 0)
        started: dict[str, Any] = {}
        if not every:
            state.start_score = (await self.progress(state, [])).score
            started["score"] = state.start_score
            if self.trials_restore(run) or self.config.checks:
                taken = await asyncio.to_thread(self.trial_workspace(run).snapshot)
                started["snapshot"] = taken
            started["found"] = await asyncio.to_thread(found_at_start, workspace)
        state.found = started.get("found", state.found)
        await asyncio.to_thread(self.store.set_status, run_id, "running", "", spent)
        await self.emit(run_id, RunStarted(resumed=bool(every), identity=run.identity, **started))
        journal = journal_of(self.store.path.parent, run.id, workspace.root)
        await asyncio.to_thread(journal.begin)
        await self._mark_start(state, journal)
        clock_base, clock_start = spent.seconds, time.monotonic()
        status: RunStatus = "running"
        reason = ""
        refused = 0  # claims of completion the checks turned down since this start
        # the time limit bounds a step in progress too: a hung model call or a slow tool
        # is cut at the limit, and the run ends budget_exhausted, not minutes later
        limit = asyncio.timeout_at(self.deadline(budget.limits, clock_base))
        try:
            async with limit:
                state.hint = await self._tool_hint(state)
                await accept_with(self, state, fresh=not every)
                while status == "running":
                    spent.seconds = clock_base + time.monotonic() - clock_start
                    why = budget.exhausted() or (within and within.begin_step())
                    if why:
                        status, reason = "budget_exhausted", why
                        break
                    try:
                        state.checks = await checks_status(state) if state.steps else ChecksNow()
                        await report_left_out(self, state)
                        step, result = await self._step(state)
                    finally:
                        if within is not None:
                            within.end_step()
                    state.steps.append(step)
                    changed = await asyncio.to_thread(journal.record, step.n)
                    self._adopt(step, changed, state.context.own)
                    if changed:
                        described = [c.describe() for c in changed[:50]]
                        await self.emit(run_id, WorkspaceChanged(changes=described), step.n)
                    choice = None
                    if monitor is not None:
                        choice = await watch(self, state, monitor)
                    refused += step.command == "task_complete" and not step.ok
                    if result is not None and result.final:
                        status, reason = "completed", step.arguments.get("reason", "")
                    elif await done_by_checks(self, state, step, changed=bool(changed)):
                        status = "completed"
                        reason = (
                            f"every acceptance check passes after step {step.n}: the work is done"
                        )
                    elif step.command == "task_complete" and refused >= self.config.max_claims:
                        status = "incomplete"
                        why = state.refusal or step.observation
                        reason = f"task_complete was refused {refused} times; the last check: {why}"
                    elif choice is not None and choice.course == "new_trial":
                        await new_trial(self, state, choice.why)
                        monitor = Monitor(self.config.monitor, after=step.n)
                    elif choice is not None and choice.course == "replan":
                        lesson = state.lessons[-1]
                        status, reason = "failed", f"the plan is off: {lesson}"
                        await self.emit(run_id, ReplanAsked(lesson=lesson), step.n)
            await save_the_rest(self, state, status)
        except TimeoutError:
            if not limit.expired():
                raise
            spent.seconds = clock_base + time.monotonic() - clock_start
            status = "budget_exhausted"
            reason = (budget.exhausted() or "time limit reached") + " (a step was cut)"
            await self._close_interrupted(run_id, await asyncio.to_thread(self.store.steps, run_id))
            await save_the_rest(self, state, status)
        except asyncio.CancelledError:
            status, reason = "stopped", "stopped by the person; resume with autonoma resume"
            raise
        except ModelError as error:
            status, reason = "failed", f"{error} (the run can be resumed)"
        finally:
            spent.seconds = clock_base + time.monotonic() - clock_start
            reason = await self._finish(state, status, reason)
        budget.tick()
        return RunOutcome(
            run_id, status, reason, str(workspace.root), workspace.visible_files(), budget.spent
        )

    async def _take_up(self, run_id: str, within: SharedBudget | None) -> RunState:
        """The run's state as the store and its events hold it."""
        run = await asyncio.to_thread(self.store.get_run, run_id)
        workspace = Workspace(Path(run.workspace))
        spent = run.spent.model_copy()  # this run's own spending, as stored
        # its total, with what the runs serving it (sub-agents) spent, is what limits it
        budget = SharedBudget(
            self.config.limits, await asyncio.to_thread(self.store.total_spent, run)
        )
        spent.feed(budget.spent)
        if within is not None:
            budget.spent.feed(within.spent)
        ask = getattr(self.approver, "ask", None)
        context = ToolContext(
            workspace=workspace,
            model=self.model,
            sandbox=self.services.sandbox,
            egress=self.services.egress,
            search=self.services.search,
            spent=spent,
            ask_person=ask if not self.config.continuous else None,
        )
        state = RunState(
            run=run,
            identity=AgentIdentity.model_validate(run.identity),
            workspace=workspace,
            spent=spent,
            budget=budget,
            model=self.model.in_lane(f"run:{run.id}"),
            context=context,
            offered=list(self.tools),
        )
        context.run = RunServices(run, budget, host=_Host(self, state), memory=self.memory)
        read_back(state, await asyncio.to_thread(self.store.events, run_id))
        return state

    async def _mark_start(self, state: RunState, journal: ChangeJournal) -> None:
        """Which files are the run's own, and whether the run carries outside content from
        its start: its task came from a run that did, or it found files it did not write."""
        run, workspace = state.run, state.workspace
        shas = await asyncio.to_thread(self._own_shas, run, journal)
        state.context.own = own = await asyncio.to_thread(OwnFiles, workspace, shas)
        there = await asyncio.to_thread(workspace.files)
        state.persons = frozenset(await asyncio.to_thread(own.foreign, there))
        if self.config.trust_workspace:
            await asyncio.to_thread(own.adopt, there)
        # stored with a task's or a sub-agent's run: honoured however the run is driven
        if self.config.outside_at_start or run.settings.get("outside_at_start"):
            await self.mark_outside(state, 0, "its task came from a run with outside content")
        elif (
            state.found
            and not self.config.trust_workspace
            and bool(await asyncio.to_thread(own.foreign, there))
        ):
            state.by_found = state.outside_from in (None, 0)
            await self.mark_outside(
                state, 0, "it began with files in the workspace that it did not write"
            )
        if self.memory is not None:
            self.memory.outside_from = state.outside_from

    async def _finish(self, state: RunState, status: RunStatus, reason: str) -> str:
        """Record how the run ended, with what its checks say of the workspace now; the
        reason as recorded."""
        run_id, spent = state.run.id, state.spent
        stopped = status == "stopped"  # out at once: the checks run again on resume
        final = None if stopped else await final_checks(state)
        if final is not None and not final.passed and status == "budget_exhausted":
            reason += f"; {len(final.failed)} of {len(final.results)} checks still fail"
        await asyncio.to_thread(self.store.set_status, run_id, status, reason, spent)
        ended: dict[str, Any] = {}
        progress: Progress | None = None  # none for a stop: its checks are not run
        if final is not None:
            progress = progress_of(final)
            ended["acceptance"] = final.to_json()
        elif not (stopped and state.acceptance):
            progress = await self.progress(state, state.steps)
        if progress is not None:
            ended |= {"checks": progress.facts, "score": progress.score}
        await self.emit(run_id, RunFinished(status=status, reason=reason, **ended))
        return reason

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

    # -- what the model sees (for benchmarks and tests: a run's first state, no store) -----

    def state_for(
        self, run: RunRecord, identity: AgentIdentity, workspace: Workspace, spent: BudgetSpent
    ) -> RunState:
        context = ToolContext(workspace=workspace, model=self.model, spent=spent)
        return RunState(
            run=run,
            identity=identity,
            workspace=workspace,
            spent=spent,
            budget=SharedBudget(self.config.limits, spent),
            model=self.model,
            context=context,
            offered=list(self.tools),
        )

    def system_prompt(self, run: RunRecord, identity: AgentIdentity) -> str:
        """The run's fixed instructions (agent/loop_context.py)."""
        state = self.state_for(run, identity, Workspace(Path(run.workspace)), BudgetSpent())
        return system_prompt(self, state)

    def messages(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        workspace: Workspace,
        steps: list[StepRecord],
        spent: BudgetSpent,
    ) -> list[dict[str, Any]]:
        """What the model sees at the next step, without long-term memory or a summary."""
        state = self.state_for(run, identity, workspace, spent)
        return assemble_prompt(self, state, steps).messages

    def answer_schema(self) -> dict[str, Any]:
        """The schema of a step's answer with every tool offered."""
        if self.config.actions == "code":
            return program_schema()
        return action_schema(list(self.tools))

    # -- a step ---------------------------------------------------------------------------

    async def _step(self, state: RunState) -> tuple[StepRecord, ToolResult | None]:
        run, steps, spent = state.run, state.steps, state.spent
        n = state.next_n
        await self._offer(state, n)
        assembled = await prepare(self, state)
        await self.emit(run.id, Thinking(), n)
        started = time.time()
        try:
            response = await state.model.request(
                assembled.messages,
                output=schema(self, state, withheld(self, state, steps)),
                max_tokens=self.config.max_answer_tokens,
                temperature=temperature(self, steps),
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
            result, denied = await act(self, state, n, action)
        if result.final:
            claimed = await claim(self, state, result, n)
            if code and not claimed.ok:  # the program's output stays in view with the refusal
                claimed = ToolResult(False, f"{result.output}\n{claimed.output}")
            result = claimed
        observation = truncate(result.output, self.config.max_observation_chars)
        checks = ""
        if state.acceptance is not None:  # said with the step, where the prompt cache keeps it
            state.checks = await checks_status(state)
            checks = told_checks(state, observation)
        status = "denied" if denied else "done"
        step = step.model_copy(
            update={
                "status": status,
                "observation": observation,
                "ok": result.ok,
                "untrusted": result.untrusted,
                "checks": checks,
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
            checks=checks,
        )
        if result.untrusted:
            await self.mark_outside(state, n, f"{step.command} brought outside content")
        await self.emit(
            run.id,
            StepResult(ok=result.ok, observation=observation, status=step.status, checks=checks),
            n,
        )
        return step, result

    async def _offer(self, state: RunState, n: int) -> None:
        """With a retriever: the commands to offer at the next step, found by the task, the
        latest thoughts and the last command used (recorded when the choice changes)."""
        if self.retriever is None:
            state.offered = list(self.tools)
            return
        last = state.steps[-1] if state.steps else None
        offered = await self.retriever.select(
            step_query(state.run.goal, last.thoughts if last else None, hint=state.hint or ""),
            include=[last.command] if last and last.command else [],
        )
        names = [t.name for t in offered]
        if names != [t.name for t in state.offered]:
            state.offered = offered
            await self.emit(state.run.id, ToolsOffered(tools=names), n)

    async def _tool_hint(self, state: RunState) -> str:
        """The command the model imagines for the task, asked once a run (kept in an event,
        so a resumed run does not ask again); "" without retrieval or if the model fails."""
        if self.retriever is None or not self.config.tool_hint:
            return ""
        if state.hint is not None:
            return state.hint
        run_id = state.run.id
        try:
            response = await imagine_tool(self.side_model, state.run.goal)
        except ModelError as error:
            await self.emit(run_id, ToolsHint(hint="", error=str(error)))
            return ""
        state.spent.charge(
            response.usage.prompt_tokens, response.usage.completion_tokens, response.cost_usd
        )
        await self.emit(run_id, ToolsHint(hint=response.text))
        return response.text

    # -- the runs beside it ---------------------------------------------------------------

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


class _Host:
    """What a sub-agent tool reaches of the loop driving its run (services.SubAgentHost):
    the loop's store, tools and helpers, and this run's outside-content mark."""

    def __init__(self, loop: RunLoop, state: RunState) -> None:
        self._loop, self._state = loop, state
        self.store: RunStore = loop.store
        self.tools: ToolRegistry = loop.tools

    @property
    def carries_outside(self) -> bool:
        """Whether outside content is in the context of this run."""
        return self._state.outside_from is not None

    async def emit(self, run_id: str, event: Event, step: int | None = None) -> None:
        await self._loop.emit(run_id, event, step)

    def helper(self, tools: ToolRegistry, limits: BudgetLimits) -> Helper:
        return self._loop.helper(tools, limits)
