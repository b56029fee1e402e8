"""Task creation and prioritisation (BabyAGI): when a task finishes, the model reads its result
and proposes the tasks still missing for the goal, and gives every pending task a new value and
effort, in one structured answer.

A proposal joins the graph only if the graph still has no problems with it
(`TaskGraph.problems`); one that does not is dropped with the reason, not raised. A proposal
whose id is taken is renamed (`t3` becomes `t3-2`, then `t3-3`, ...); the answer's other
proposals that name it mean the renamed one. With a `Deduplicator`, a proposal that is the same
work as a task in the plan (done, running or pending; or proposed earlier in the same answer) is
merged into that task: it is not added, and proposals that depend on it depend on that task.
"""

from __future__ import annotations

import graphlib
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.planning.decompose import PlannedTask
from autonoma.planning.dedup import Deduplicator
from autonoma.planning.graph import Task, TaskGraph
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render

log = logging.getLogger("autonoma.planning")

_MAX_ID = 40
_UNFINISHED = ("failed", "skipped", "cancelled")  # tasks a new task cannot wait for


class Priority(BaseModel):
    """A pending task's new value and effort, as the model writes it."""

    id: str = Field(min_length=1, max_length=40)
    value: int = Field(ge=1, le=10)
    effort: int = Field(ge=1, le=10)


class CreationAnswer(BaseModel):
    tasks: list[PlannedTask] = Field(default_factory=list, max_length=20)
    priorities: list[Priority] = Field(default_factory=list, max_length=60)


@dataclass(frozen=True)
class PriorityChange:
    id: str
    value_before: float
    effort_before: float
    value: float
    effort: float


@dataclass(frozen=True)
class DroppedProposal:
    id: str  # as the model proposed it
    task: str
    reason: str


@dataclass(frozen=True)
class MergedProposal:
    id: str  # as the model proposed it
    task: str
    into: str  # the task it is the same work as
    similarity: float


@dataclass
class Creation:
    """What one round of task creation changed in the graph."""

    added: list[Task] = field(default_factory=list)  # the tasks now in the graph, in order
    reprioritised: list[PriorityChange] = field(default_factory=list)
    dropped: list[DroppedProposal] = field(default_factory=list)
    merged: list[MergedProposal] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (proposed id, id added as)
    answered: bool = True  # False: the model's answer was unusable, so nothing changed

    @property
    def added_ids(self) -> list[str]:
        return [t.id for t in self.added]

    @property
    def reprioritised_ids(self) -> list[str]:
        return [c.id for c in self.reprioritised]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.reprioritised)


@dataclass
class TaskCreator:
    """`max_new`: tasks added in one round at most; `max_total`: tasks the graph may hold.
    `failures` counts rounds whose answer was unusable."""

    model: Model
    deduplicator: Deduplicator | None = None
    max_new: int = 3
    max_total: int = 20
    max_tokens: int = 1500
    result_chars: int = 2000  # of the finished task's result shown to the model
    failures: int = 0

    async def create(
        self,
        goal: str,
        graph: TaskGraph,
        finished: Task,
        spent: BudgetSpent,
        *,
        who: str = "an autonomous agent",
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> Creation:
        """Ask for new tasks and new priorities after `finished`, and apply them to `graph` in
        place: accepted tasks are appended (pending), pending tasks get their new value and
        effort. Nothing is changed before the model has answered and every proposal has been
        checked, and then all at once (no await in between), so tasks that change status while
        the model thinks are seen as they are when the changes are made. Every model call's cost
        is charged to `spent`; an unusable answer changes nothing and is counted in `failures`.
        `tools` are the commands that exist (empty: not checked); `files` are in the workspace.
        """
        room = max(0, min(self.max_new, self.max_total - len(graph.tasks)))
        prompt = render(
            "autonoma.planning",
            "creation.j2",
            who=who,
            goal=goal,
            finished=finished,
            result=_clip(finished.result, self.result_chars),
            done=[t for t in graph.tasks if t.status == "done" and t.id != finished.id],
            underway=[t for t in graph.tasks if t.status == "running"],
            pending=[t for t in graph.tasks if t.status == "pending"],
            tools=list(tools),
            files=list(files),
            max_new=room,
        )
        answer = await ask(
            self.model,
            prompt,
            spent,
            output=CreationAnswer,
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        if not isinstance(answer, ModelResponse):
            self.failures += 1
            log.warning("task creation after %s gave no usable answer: %s", finished.id, answer)
            return Creation(answered=False)
        data: CreationAnswer = answer.data
        creation = Creation()
        proposals = await self._screen(data.tasks, graph, goal, spent, creation)
        self._admit(proposals, graph, room, tools, files, creation)
        self._reprioritise(data.priorities, graph, creation)
        for dropped in creation.dropped:
            log.info("proposed task %s dropped: %s", dropped.id, dropped.reason)
        return creation

    async def _screen(
        self,
        proposed: list[PlannedTask],
        graph: TaskGraph,
        goal: str,
        spent: BudgetSpent,
        creation: Creation,
    ) -> list[tuple[PlannedTask, Task]]:
        """Rename clashing ids, merge duplicates, and point every reference to a proposal at
        the id it now has (or the task it merged into). The proposals left, with their tasks."""
        used = set(graph.ids())
        final: dict[str, str] = {}  # proposed id -> id it is known by now
        named: list[tuple[PlannedTask, str]] = []
        for plan in proposed:
            new_id = plan.id if plan.id not in used else _fresh_id(plan.id, used)
            used.add(new_id)
            final.setdefault(plan.id, new_id)
            named.append((plan, new_id))
        kept: list[tuple[PlannedTask, Task]] = []
        live = [t for t in graph.tasks if t.status not in _UNFINISHED]
        for plan, new_id in named:
            if self.deduplicator is not None:
                against = live + [task for _, task in kept]
                duplicate = await self.deduplicator.duplicate_of(
                    plan.task, against, spent, goal=goal
                )
                if duplicate is not None:
                    creation.merged.append(
                        MergedProposal(plan.id, plan.task, duplicate.id, duplicate.similarity)
                    )
                    if final.get(plan.id) == new_id:
                        final[plan.id] = duplicate.id
                    continue
            kept.append((plan, Task(**plan.model_dump() | {"id": new_id})))
        produced = {out for plan, _ in kept for out in plan.outputs}
        for _, task in kept:
            task.dep = _unique(final.get(d, d) for d in task.dep)
            task.inputs = _unique(
                name if name in produced else final.get(name, name) for name in task.inputs
            )
        return kept

    def _admit(
        self,
        proposals: list[tuple[PlannedTask, Task]],
        graph: TaskGraph,
        room: int,
        tools: Sequence[str],
        files: Sequence[str],
        creation: Creation,
    ) -> None:
        """Add the proposals the graph takes without problems, as many as there is room for:
        in passes, so a proposal may come before the one it depends on."""
        known = list(tools) or None
        base = set(graph.problems(tools=known, given=files))
        ended = {t.id for t in graph.tasks if t.status in _UNFINISHED}
        accepted: list[Task] = []
        waiting = list(proposals)

        def problems(task: Task, others: list[Task]) -> list[str]:
            trial = TaskGraph(tasks=[*graph.tasks, *accepted, *others, task])
            found = [p for p in trial.problems(tools=known, given=files) if p not in base]
            for dep in trial.deps(task):
                if dep in ended:
                    status = graph.get(dep).status
                    found.append(f"task {task.id} waits for {dep}, which is {status}")
            return found

        progress = True
        while progress and waiting and len(accepted) < room:
            progress = False
            for item in list(waiting):
                if len(accepted) >= room:
                    break
                if not problems(item[1], []):
                    accepted.append(item[1])
                    waiting.remove(item)
                    progress = True
        left = {task.id for _, task in waiting}
        whole = TaskGraph(tasks=[*graph.tasks, *accepted, *(t for _, t in waiting)])
        loop = _cycle(whole)
        for plan, task in waiting:
            blocking = [d for d in whole.deps(task) if d in left and d != task.id]
            together = [t for _, t in waiting if t is not task]
            found = [p for p in problems(task, together) if _names(p, task.id)]
            if loop is not None and _names(loop, task.id) and loop not in found:
                found.append(loop)
            if found:
                reason = "; ".join(found)
            elif blocking:
                reason = f"it waits for {', '.join(blocking)}, which was not added"
            elif len(accepted) >= room:
                reason = self._no_room(graph, room)
            else:
                reason = "; ".join(problems(task, [])) or "it could not be added"
            creation.dropped.append(DroppedProposal(plan.id, plan.task, reason))
        merged_into_left = [m for m in creation.merged if m.into in left]
        for merged in merged_into_left:
            creation.merged.remove(merged)
            creation.dropped.append(
                DroppedProposal(
                    merged.id, merged.task, f"same work as {merged.into}, which was not added"
                )
            )
        creation.renamed = [
            (plan.id, task.id)
            for plan, task in proposals
            if plan.id != task.id and any(task is a for a in accepted)
        ]
        graph.tasks.extend(accepted)
        creation.added = accepted

    def _no_room(self, graph: TaskGraph, room: int) -> str:
        if self.max_total - len(graph.tasks) <= room:
            return f"the plan may hold at most {self.max_total} tasks"
        return f"at most {self.max_new} new tasks are added a round"

    def _reprioritise(
        self, priorities: list[Priority], graph: TaskGraph, creation: Creation
    ) -> None:
        added = set(creation.added_ids)
        for priority in priorities:
            if priority.id not in graph.ids() or priority.id in added:
                log.info("new priority for %s ignored: not a pending task", priority.id)
                continue
            task = graph.get(priority.id)
            if task.status != "pending":
                log.info("new priority for %s ignored: it is %s", task.id, task.status)
                continue
            if (task.value, task.effort) == (priority.value, priority.effort):
                continue
            creation.reprioritised.append(
                PriorityChange(task.id, task.value, task.effort, priority.value, priority.effort)
            )
            task.value, task.effort = priority.value, priority.effort


def _fresh_id(base: str, used: set[str]) -> str:
    """`base-2`, `base-3`, ...: the first not in `used` (cut to fit the id length)."""
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: _MAX_ID - len(suffix)] + suffix
        if candidate not in used:
            return candidate
        n += 1


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _cycle(graph: TaskGraph) -> str | None:
    """The cycle among the tasks, said as `TaskGraph.problems` says it, even when the graph
    has other problems (which hide cycles there)."""
    sorter = graphlib.TopologicalSorter({t.id: graph.deps(t) for t in graph.tasks})
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        return f"the tasks form a cycle: {' -> '.join(reversed(error.args[1]))}"
    return None


def _names(problem: str, task_id: str) -> bool:
    """Whether a problem statement names the task (as a whole id, not part of another)."""
    return re.search(rf"(?<![\w-]){re.escape(task_id)}(?![\w-])", problem) is not None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"
