"""Replanning: when a task fails or a reflection says the plan is off, the model rewrites the
tasks not done yet. Done tasks stay as they are (the same objects, results and all); the model
sees them and their results as context and may build on them. The revised graph, done tasks
plus the new remaining ones, is validated and sent back with its exact problems until it holds
or the repairs run out, as in decompose."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from autonoma.llm import Model
from autonoma.planning.decompose import PlannedTask, ask_with_repairs
from autonoma.planning.graph import Task, TaskGraph
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render

_COMPARED = ("task", "dep", "inputs", "outputs", "tools", "value", "effort")


class ReplanAnswer(BaseModel):
    """The tasks that remain, as the model rewrites them (none: the finished ones suffice)."""

    tasks: list[PlannedTask] = Field(default_factory=list, max_length=30)


@dataclass
class Replan:
    """The revised graph and what changed. A task that was not done and comes back under its
    id with the same work (task, dep, inputs, outputs, tools, value, effort) is `unchanged`:
    the same object if it was pending, else a fresh pending task (a failed one is tried again).
    Any other remaining task is a new, pending Task."""

    graph: TaskGraph
    kept: list[str] = field(default_factory=list)  # done tasks, untouched
    added: list[str] = field(default_factory=list)  # ids that were not in the graph
    changed: list[str] = field(default_factory=list)  # same id, different work
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # not-done tasks the revision left out
    repairs: int = 0  # answers sent back before this one held

    def summary(self) -> str:
        parts = [f"kept {len(self.kept)} finished task(s)"]
        for name, ids in (
            ("added", self.added),
            ("changed", self.changed),
            ("unchanged", self.unchanged),
            ("removed", self.removed),
        ):
            if ids:
                parts.append(f"{name} {', '.join(ids)}")
        if self.repairs:
            parts.append(f"after {self.repairs} repair(s)")
        return "; ".join(parts)


@dataclass
class Replanner:
    model: Model
    max_tasks: int = 8  # remaining tasks at most
    repairs: int = 2  # times a revision with problems is sent back
    max_tokens: int = 1500
    result_chars: int = 600  # of each done task's result shown to the model
    error_chars: int = 2000  # of the failed task's error
    history: list[list[str]] = field(default_factory=list)  # each attempt's problems

    async def replan(
        self,
        goal: str,
        graph: TaskGraph,
        spent: BudgetSpent,
        *,
        failed: Task | None = None,
        error: str = "",
        reflection: str = "",
        who: str = "an autonomous agent",
        goals: Sequence[str] = (),
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> Replan:
        """A new graph: the done tasks of `graph` (the same objects) and the revised remaining
        tasks, with no problems; or PlanInvalid with the last problems. Why: `failed` (a task
        of the graph; its error is `error`, else its result) and/or `reflection` (a review
        saying the plan is off). Every task not done is open to revision, running ones too, so
        replan when none is running. Every answer's cost is charged to `spent`; `graph` is not
        changed."""
        if failed is None and not reflection.strip():
            raise ValueError("replan needs a failed task or a reflection saying why")
        done = [t for t in graph.tasks if t.status == "done"]
        remaining = [t for t in graph.tasks if t.status != "done"]
        prompt = render(
            "autonoma.planning",
            "replan.j2",
            who=who,
            goal=goal,
            goals=list(goals),
            tools=list(tools),
            files=list(files),
            done=[(t, _clip(t.result, self.result_chars)) for t in done],
            failed=failed,
            error=_clip(error or (failed.result if failed else ""), self.error_chars),
            reflection=reflection.strip(),
            remaining=remaining,
            max_tasks=self.max_tasks,
        )
        answer, repairs = await ask_with_repairs(
            self.model,
            prompt,
            ReplanAnswer,
            lambda answer: self._problems(answer.tasks, done, tools, files),
            spent,
            repairs=self.repairs,
            max_tokens=self.max_tokens,
            repair_template="replan_repair.j2",
            unusable="the answer was not a list of tasks",
            history=self.history,
        )
        return _revised(graph, done, remaining, answer.tasks, repairs)

    def _problems(
        self,
        revised: list[PlannedTask],
        done: list[Task],
        tools: Sequence[str],
        files: Sequence[str],
    ) -> list[str]:
        finished = {t.id for t in done}
        problems = [
            f"task id {t.id!r} belongs to a finished task, which is kept as it is: give the "
            "new task another id, or depend on the finished one"
            for t in revised
            if t.id in finished
        ]
        if len(revised) > self.max_tasks:
            problems.append(f"the revision has {len(revised)} tasks; at most {self.max_tasks}")
        trial = TaskGraph(tasks=[*done, *(Task(**t.model_dump()) for t in revised)])
        problems.extend(
            p
            for p in trial.problems(tools=list(tools) or None, given=files)
            if not any(f"{t!r} is used more than once" in p for t in finished)
        )
        return problems


def _revised(
    graph: TaskGraph,
    done: list[Task],
    remaining: list[Task],
    revised: list[PlannedTask],
    attempt: int,
) -> Replan:
    before = {t.id: t for t in remaining}
    change = Replan(graph=TaskGraph(tasks=list(done)), kept=[t.id for t in done], repairs=attempt)
    for plan in revised:
        old = before.get(plan.id)
        fresh = Task(**plan.model_dump())
        if old is None:
            change.added.append(plan.id)
        elif all(getattr(old, name) == getattr(fresh, name) for name in _COMPARED):
            change.unchanged.append(plan.id)
            if old.status == "pending":
                fresh = old
        else:
            change.changed.append(plan.id)
        change.graph.tasks.append(fresh)
    ids = {t.id for t in revised}
    change.removed = [t.id for t in remaining if t.id not in ids]
    return change


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"
