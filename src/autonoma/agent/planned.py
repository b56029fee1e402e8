"""The planned strategy: the goal becomes a task graph, and every task whose inputs are ready
runs at once, each in its own run (its own agent loop and short-term context) under the
planned run, sharing its workspace, long-term memory and budget.

Each task's state change is stored before anything else happens, so a killed run resumes with
finished tasks kept: a task that was running continues its own run where it stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autonoma.agent.check_types import Check
from autonoma.agent.checks import CheckRunner, stored_checks
from autonoma.agent.hindsight import run_attempt, worst_to_best
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import RunLoop
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.trials import TrialWorkspace
from autonoma.errors import AutonomaError, ModelError
from autonoma.planning.creation import TaskCreator
from autonoma.planning.decompose import PlanInvalid, Planner
from autonoma.planning.graph import Task, TaskGraph, is_file, render_tree
from autonoma.planning.replan import Replanner
from autonoma.runtime.budget import BudgetLimits, BudgetSpent, SharedBudget
from autonoma.runtime.events import (
    Event,
    Planned,
    Planning,
    ReplanAsked,
    ReplanFailed,
    Replanned,
    Replanning,
    RunFinished,
    RunStarted,
    TaskChanged,
    TasksCreated,
    TaskStarted,
)
from autonoma.runtime.executor import (
    Executor,
    Job,
    JobChange,
    JobFinal,
    JobInterrupted,
    LocalExecutor,
    Schedule,
)
from autonoma.runtime.sink import EventListener, emit
from autonoma.runtime.store import EventRecord, RunRecord, RunStatus, RunStore
from autonoma.templating import render
from autonoma.tools import Workspace
from autonoma.tools.sandbox import Sandbox


class TaskFailed(AutonomaError):
    """A task's run ended without completing the task."""


class PlanOff(TaskFailed, JobFinal):
    """A task's run reflected and found the plan wrong: the rest of the graph is revised with
    the lesson in view instead of the task being tried again as it stands."""


UNDONE = "its finished work was undone by a later task: "

RunTask = Callable[[str, BudgetLimits, SharedBudget], Awaitable[RunOutcome]]
"""Runs (or resumes) a task's stored run to its end under the given limits, drawing on the
planned run's budget: here by default; agent/remote.py runs it on a Ray worker."""


@dataclass
class PlanConfig:
    concurrency: int = 4  # tasks running at once
    task_steps: int = 15  # step limit of one attempt at one task
    retries: int = 1  # further attempts at a task after a failure
    max_tasks: int = 8
    repairs: int = 2  # times an invalid plan is sent back to the planner
    replans: int = 2  # times the rest of the graph may be revised after a task fails for good


class PlannedRun:
    """Runs one stored run with the planned strategy. `make_agent` builds the agent loop for a
    task's run (the same loop a single-task run uses)."""

    def __init__(
        self,
        store: RunStore,
        planner: Planner,
        make_agent: Callable[[BudgetLimits], RunLoop],
        *,
        limits: BudgetLimits,
        config: PlanConfig | None = None,
        executor: Executor | None = None,
        tools: list[str] | None = None,
        listeners: list[EventListener] | None = None,
        creator: TaskCreator | None = None,
        replanner: Replanner | None = None,
        run_task: RunTask | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.store = store
        self.planner = planner
        self.creator = creator  # BabyAGI: new tasks and new priorities after each result
        self.replanner = replanner
        self.make_agent = make_agent
        self.limits = limits
        self.config = config or PlanConfig()
        self.executor = executor or LocalExecutor(self.config.concurrency)
        self.tool_names = tools or []
        self.listeners = listeners or []
        self.run_task = run_task or self._run_task_here
        self.sandbox = sandbox  # runs the tasks' code checks again at the end

    async def _run_task_here(
        self, run_id: str, limits: BudgetLimits, within: SharedBudget
    ) -> RunOutcome:
        return await self.make_agent(limits).run(run_id, within=within)

    async def emit(self, run_id: str, event: Event) -> None:
        await emit(self.store, self.listeners, run_id, event)

    async def run(self, run_id: str) -> RunOutcome:
        run = await asyncio.to_thread(self.store.get_run, run_id)
        identity = AgentIdentity.model_validate(run.identity)
        workspace = Workspace(Path(run.workspace))
        own = run.spent.model_copy()
        budget = SharedBudget(self.limits, await asyncio.to_thread(self.store.total_spent, run))
        own.feed(budget.spent)
        await asyncio.to_thread(self.store.set_status, run_id, "running", "", own)
        await self.emit(run_id, RunStarted(resumed=bool(run.spent.steps), identity=run.identity))
        status: RunStatus = "running"
        reason = ""
        clock_base, clock_start = own.seconds, time.monotonic()
        try:
            graph = await self._graph(run, identity, workspace, own)
            status, reason = await self._carry_out(run, identity, graph, budget, own, workspace)
        except asyncio.CancelledError:
            status, reason = "stopped", "stopped by the person; resume with autonoma resume"
            raise
        except PlanInvalid as error:
            status, reason = "failed", str(error)
        except ModelError as error:
            status, reason = "failed", f"{error} (the run can be resumed)"
        finally:
            own.seconds = clock_base + time.monotonic() - clock_start
            await asyncio.to_thread(self.store.set_status, run_id, status, reason, own)
            await self.emit(run_id, RunFinished(status=status, reason=reason))
        final = await asyncio.to_thread(self.store.get_run, run_id)
        total = await asyncio.to_thread(self.store.total_spent, final)
        return RunOutcome(
            run_id, status, reason, str(workspace.root), workspace.visible_files(), total
        )

    async def _carry_out(
        self,
        run: RunRecord,
        identity: AgentIdentity,
        graph: TaskGraph,
        budget: SharedBudget,
        own: BudgetSpent,
        workspace: Workspace,
    ) -> tuple[RunStatus, str]:
        """Runs the graph's tasks; if later work undid a finished task's checks, those tasks
        once more, told what undid them; incomplete if it is undone again."""

        async def run_graph() -> tuple[RunStatus, str, dict[str, list[str]]]:
            schedule = self._schedule(graph)
            work = _TaskWork(self, run, identity, graph, budget, schedule, own, workspace)
            await self.executor.run(schedule, work, work.changed)
            status, reason = self._verdict(graph, schedule)
            undone = await self._undone(run.id, graph, workspace) if status == "completed" else {}
            return status, reason, undone

        status, reason, undone = await run_graph()
        if undone:
            await self._reopen(run.id, graph, undone)
            status, reason, undone = await run_graph()
        if undone:
            said = "; ".join(why for whys in undone.values() for why in whys)
            return "incomplete", f"{reason}, but later work undid earlier work: {said}"
        return status, reason

    async def _graph(
        self, run: RunRecord, identity: AgentIdentity, workspace: Workspace, own: BudgetSpent
    ) -> TaskGraph:
        """The stored graph, or a new plan (stored before any task runs)."""
        stored = await asyncio.to_thread(self.store.tasks, run.id)
        if stored:
            return TaskGraph(tasks=[Task.model_validate(t) for t in stored])
        await self.emit(run.id, Planning())
        try:
            graph = await self.planner.plan(
                run.goal,
                own,
                who=f"{identity.name}, {identity.role}",
                goals=identity.goals,
                tools=self.tool_names,
                files=workspace.visible_files(),
            )
        finally:
            await asyncio.to_thread(self.store.save_spent, run.id, own)
        await asyncio.to_thread(self.store.put_tasks, run.id, [t.model_dump() for t in graph.tasks])
        await self.emit(
            run.id,
            Planned(
                tasks=[t.model_dump() for t in graph.tasks],
                tree=render_tree(graph),
                repairs=len(self.planner.history) - 1,
            ),
        )
        return graph

    def _schedule(self, graph: TaskGraph) -> Schedule:
        jobs = [
            Job(t.id, tuple(graph.deps(t)), t.priority, self.config.retries) for t in graph.tasks
        ]
        schedule = Schedule.of(
            jobs, done={t.id: t.result for t in graph.tasks if t.status == "done"}
        )
        for task in graph.tasks:
            # a task cut off while running continues its own run: the same attempt; a task
            # that failed (a resumed failed run) gets one more attempt
            schedule.attempts[task.id] = task.attempts - (task.status == "running")
        return schedule

    async def _undone(
        self, run_id: str, graph: TaskGraph, workspace: Workspace
    ) -> dict[str, list[str]]:
        """The code checks that passed when their task finished and fail on the workspace as
        all the tasks left it: tasks share the workspace, and a later or parallel task can
        overwrite what an earlier one made (a 1.5B model's retry of one task appended to the
        other task's file, and both had passed their own checks)."""
        if self.sandbox is None:
            return {}
        children = await asyncio.to_thread(self.store.children, run_id)
        undone: dict[str, list[str]] = {}
        for task in graph.tasks:
            finished = [c for c in children if c.task_id == task.id and c.status == "completed"]
            if task.status != "done" or not finished:
                continue
            child = finished[-1]
            events = await asyncio.to_thread(self.store.events, child.id)
            passed = _passed_checks(events)
            start = TrialWorkspace.of(self.store, child).start
            runner = CheckRunner(self.sandbox, workspace, start)
            for result in await runner.run_all(passed):
                if not result.passed:
                    undone.setdefault(task.id, []).append(
                        f"task {task.id}'s check '{result.check.what}' passed when it "
                        f"finished and fails now: {result.output}"
                    )
        return undone

    async def _reopen(self, run_id: str, graph: TaskGraph, undone: dict[str, list[str]]) -> None:
        """The undone tasks pending again, their result saying what undid them (their next
        run is told)."""
        for task_id, whys in undone.items():
            task = graph.get(task_id)
            task.status, task.run = "pending", ""
            task.result = f"{UNDONE}{'; '.join(whys)}"
            await asyncio.to_thread(self.store.put_tasks, run_id, [task.model_dump()])
            await self.emit(
                run_id,
                TaskChanged(
                    task=task.id, status="pending", attempt=task.attempts, result=task.result[:500]
                ),
            )

    def _verdict(self, graph: TaskGraph, schedule: Schedule) -> tuple[RunStatus, str]:
        if schedule.complete:
            return "completed", f"all {len(graph.tasks)} tasks done"
        if schedule.halted is not None:
            return "budget_exhausted", schedule.halted
        failed = [
            f"{t}: {schedule.errors.get(t, '')}"
            for t, s in schedule.status.items()
            if s == "failed"
        ]
        return "failed", f"{len(failed)} task(s) failed: " + "; ".join(failed)


def _passed_checks(events: list[EventRecord]) -> list[Check]:
    """The run's code checks that passed in its final verdict."""
    checks = stored_checks(events) or []
    finished = [e.event for e in events if isinstance(e.event, RunFinished)]
    if not finished or not finished[-1].acceptance:
        return []
    passed = {
        r["what"] for r in finished[-1].acceptance.get("results", [])
        if r.get("kind") == "code" and r.get("passed")
    }  # fmt: skip
    return [c for c in checks if c.kind == "code" and c.what in passed]


class _TaskWork:
    """What the executor runs for one task, and what it stores when a task changes."""

    def __init__(
        self,
        runner: PlannedRun,
        run: RunRecord,
        identity: AgentIdentity,
        graph: TaskGraph,
        budget: SharedBudget,
        schedule: Schedule,
        own: BudgetSpent,
        workspace: Workspace,
    ) -> None:
        self.runner = runner
        self.own = own  # what planning costs is the planned run's own spending
        self.workspace = workspace
        self.replans = runner.config.replans
        self.store = runner.store
        self.run = run
        self.identity = identity
        self.graph = graph
        self.budget = budget
        self.schedule = schedule
        self.lessons: dict[str, str] = {}  # task id: why its run said the plan is off

    async def __call__(self, job: Job, inputs: Mapping[str, Any], attempt: int) -> str:
        task = self.graph.get(job.id)
        child = await asyncio.to_thread(self._child_run, task, inputs)
        if child.status == "completed":  # finished just before a kill, not yet recorded
            return child.reason or "done"
        await self.runner.emit(
            self.run.id, TaskStarted(task=task.id, run=child.id, attempt=attempt)
        )
        limits = BudgetLimits(max_steps=self.runner.config.task_steps)
        outcome = await self.runner.run_task(child.id, limits, self.budget)
        if outcome.status == "completed":
            return outcome.reason or "done"
        if outcome.status == "budget_exhausted" and (why := self.budget.exhausted()):
            self.schedule.halt(why)
            raise JobInterrupted(f"the run's budget ran out: {why}")
        events = await asyncio.to_thread(self.store.events, child.id)
        asked = [e.event.lesson for e in events if isinstance(e.event, ReplanAsked)]
        if asked and self.runner.replanner is not None and self.replans:
            self.lessons[task.id] = asked[-1]
            raise PlanOff(outcome.reason)
        raise TaskFailed(f"{outcome.status}: {outcome.reason}")

    def _has(self, task_id: str) -> bool:
        return task_id in {t.id for t in self.graph.tasks}

    def _child_run(self, task: Task, inputs: Mapping[str, Any]) -> RunRecord:
        """The run doing the current attempt at the task: the one it was cut off in (to
        resume), or a new one, recorded with the task before it starts."""
        if task.run:
            return self.store.get_run(task.run)
        earlier = [c for c in self.store.children(self.run.id) if c.task_id == task.id]
        attempts = worst_to_best(
            run_attempt(f"attempt {i}", c, self.store.events(c.id))
            for i, c in enumerate(earlier, 1)
            if c.status != "completed"
        )
        told = [task.result] if task.result.startswith(UNDONE) else []
        files = [name for name in task.inputs if is_file(name)]
        goal = render(
            "autonoma.agent",
            "task_goal.j2",
            task=task,
            inputs={k: v for k, v in inputs.items() if v},
            files=files,
            attempts=told + [a.describe() for a in attempts],
        )
        role = f"{self.identity.role}; now doing task {task.id} of a plan for: {self.run.goal}"
        wanted = f"{task.task} Produce: {', '.join(task.outputs)}." if task.outputs else task.task
        identity = AgentIdentity(name=self.identity.name, role=role[:300], goals=[wanted])
        given_by = [self.run.id, *(self.graph.get(d).run for d in inputs if self._has(d))]
        outside = any(self.store.carries_outside(r) for r in given_by if r)
        child = self.store.create_run(
            goal=goal,
            identity=identity.model_dump(),
            settings=self.run.settings | ({"outside_at_start": True} if outside else {}),
            workspace=self.run.workspace,
            model=self.run.model,
            parent_id=self.run.id,
            task_id=task.id,
        )
        task.run = child.id
        self.store.put_tasks(self.run.id, [task.model_dump()])
        return child

    async def changed(self, change: JobChange) -> None:
        if change.job not in {t.id for t in self.graph.tasks}:
            return
        task = self.graph.get(change.job)
        task.status = change.status
        task.attempts = self.schedule.attempts.get(task.id, change.attempt)
        if change.status == "done":
            task.result = str(change.result)
        elif change.error:
            task.result = change.error
        if change.status in ("failed", "pending") and not change.interrupted:
            task.run = ""  # a further attempt starts afresh
        await asyncio.to_thread(self.store.put_tasks, self.run.id, [task.model_dump()])
        await self.runner.emit(
            self.run.id,
            TaskChanged(
                task=task.id, status=task.status, attempt=change.attempt, result=task.result[:500]
            ),
        )
        if change.status in ("done", "failed") and (why := self.budget.exhausted()):
            self.schedule.halt(why)
            return
        if change.status == "done" and self.runner.creator is not None:
            await self._create(task)
        elif change.status == "failed" and self.runner.replanner is not None and self.replans:
            self.replans -= 1
            await self._replan(task, change.error, self.lessons.pop(task.id, ""))

    def _job(self, task: Task) -> Job:
        deps = tuple(self.graph.deps(task))
        return Job(task.id, deps, task.priority, self.runner.config.retries)

    @property
    def _who(self) -> str:
        return f"{self.identity.name}, {self.identity.role}"

    async def _create(self, finished: Task) -> None:
        """BabyAGI's step after a result: new tasks that serve the goal, and new priorities."""
        assert self.runner.creator is not None
        creation = await self.runner.creator.create(
            self.run.goal,
            self.graph,
            finished,
            self.own,
            who=self._who,
            tools=self.runner.tool_names,
            files=self.workspace.visible_files(),
        )
        for task in creation.added:
            self.schedule.add(self._job(task))
        for task_id in creation.reprioritised_ids:
            if self.schedule.status.get(task_id) == "pending":
                self.schedule.replace(self._job(self.graph.get(task_id)))
        changed = [*creation.added, *(self.graph.get(i) for i in creation.reprioritised_ids)]
        await asyncio.to_thread(
            self.store.put_tasks, self.run.id, [t.model_dump() for t in changed]
        )
        await asyncio.to_thread(self.store.save_spent, self.run.id, self.own)
        await self.runner.emit(
            self.run.id,
            TasksCreated(
                after=finished.id,
                added=[t.model_dump() for t in creation.added],
                reprioritised=creation.reprioritised_ids,
                merged=[{"task": m.task, "into": m.into} for m in creation.merged],
                dropped=[{"task": d.task, "reason": d.reason} for d in creation.dropped],
                answered=creation.answered,
            ),
        )

    async def _replan(self, failed: Task, error: str, lesson: str = "") -> None:
        """Revise what is left with the failure (and the task's reflection, if it said the
        plan is off) in view; finished tasks and results are kept, and tasks still running go
        on."""
        assert self.runner.replanner is not None
        await self.runner.emit(
            self.run.id, Replanning(task=failed.id, error=error[:500], lesson=lesson[:500])
        )
        try:
            revision = await self.runner.replanner.replan(
                self.run.goal,
                self.graph,
                self.own,
                failed=failed,
                error=error,
                reflection=lesson,
                who=self._who,
                goals=self.identity.goals,
                tools=self.runner.tool_names,
                files=self.workspace.visible_files(),
            )
        except PlanInvalid as invalid:
            await self.runner.emit(self.run.id, ReplanFailed(problems=invalid.problems))
            return
        finally:
            await asyncio.to_thread(self.store.save_spent, self.run.id, self.own)
        running = {t.id: t for t in self.graph.tasks if self.schedule.status.get(t.id) == "running"}
        revised = [running.pop(t.id, t) for t in revision.graph.tasks]  # running ones go on
        ids = {t.id for t in revised} | set(running)
        removed = [t.id for t in self.graph.tasks if t.id not in ids]
        self.graph.tasks[:] = [*revised, *running.values()]
        self.schedule.revise(
            self._job(t) for t in self.graph.tasks if self.schedule.status.get(t.id) != "done"
        )
        await asyncio.to_thread(self.store.remove_tasks, self.run.id, removed)
        await asyncio.to_thread(
            self.store.put_tasks, self.run.id, [t.model_dump() for t in self.graph.tasks]
        )
        await self.runner.emit(
            self.run.id,
            Replanned(
                after=failed.id,
                summary=revision.summary(),
                tree=render_tree(self.graph),
                tasks=[t.model_dump() for t in self.graph.tasks],
            ),
        )
