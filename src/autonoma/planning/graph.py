"""The task graph: tasks with dependencies, named inputs and outputs, value and effort.

A task's inputs are artifacts other tasks produce: a file in the workspace (a name with an
extension, `report.md`) or a value (any other name, bound to the producing task's result).
A task also depends on the producers of its inputs, whether or not it lists them in `dep`.
"""

from __future__ import annotations

import graphlib
import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

TaskStatus = Literal["pending", "running", "done", "failed", "skipped", "cancelled"]

_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_FILE = re.compile(r"^(?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}$")


def is_file(artifact: str) -> bool:
    return bool(_FILE.match(artifact))


class Task(BaseModel):
    id: str = Field(min_length=1, max_length=40)
    task: str = Field(min_length=1, max_length=1000)  # what to do, for the agent that does it
    dep: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)  # commands it needs, if it names any
    value: float = Field(5, ge=0, le=10)
    effort: float = Field(5, gt=0, le=10)
    status: TaskStatus = "pending"
    result: str = ""
    attempts: int = 0
    run: str = ""  # the run doing the current attempt (kept when done, for the record)

    @property
    def priority(self) -> float:
        """Ready tasks run highest value per effort first."""
        return self.value / self.effort


class TaskGraph(BaseModel):
    tasks: list[Task] = Field(default_factory=list)

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    def producers(self) -> dict[str, str]:
        """Artifact name to the task that produces it (the first, if several claim it)."""
        made: dict[str, str] = {}
        for task in self.tasks:
            for output in task.outputs:
                made.setdefault(output, task.id)
        return made

    def deps(self, task: Task) -> list[str]:
        """What a task waits for: its declared dependencies and its inputs' producers."""
        made = self.producers()
        found = dict.fromkeys(task.dep)
        for name in task.inputs:
            producer = made.get(name, name if name in self.ids() else None)
            if producer is not None and producer != task.id:
                found.setdefault(producer)
        return list(found)

    def problems(self, tools: Iterable[str] | None = None, given: Iterable[str] = ()) -> list[str]:
        """Everything that stops the graph from running, each said exactly. `tools` are the
        commands that exist (None: not checked); `given` are artifacts present before any task
        runs (files already in the workspace)."""
        if not self.tasks:
            return ["the plan has no tasks"]
        problems: list[str] = []
        seen: set[str] = set()
        for task in self.tasks:
            if not _ID.match(task.id):
                problems.append(f"task id {task.id!r} must be letters, digits, - or _")
            if task.id in seen:
                problems.append(f"task id {task.id!r} is used more than once")
            seen.add(task.id)
        made: dict[str, str] = {}
        for task in self.tasks:
            for output in task.outputs:
                if output in made and made[output] != task.id:
                    problems.append(
                        f"output {output!r} is produced by both {made[output]} and {task.id}"
                    )
                made.setdefault(output, task.id)
        available = set(given)
        known = set(tools) if tools is not None else None
        for task in self.tasks:
            for dep in task.dep:
                if dep not in seen:
                    problems.append(f"task {task.id} depends on {dep!r}, which is not a task")
                elif dep == task.id:
                    problems.append(f"task {task.id} depends on itself")
            for name in task.inputs:
                if name not in made and name not in seen and name not in available:
                    problems.append(f"task {task.id} needs input {name!r}, which no task produces")
            if known is not None:
                for tool in task.tools:
                    if tool not in known:
                        problems.append(
                            f"task {task.id} needs the command {tool!r}, which does not exist "
                            f"(commands: {', '.join(sorted(known))})"
                        )
        if not problems:
            problems.extend(self._cycles())
        return problems

    def _cycles(self) -> list[str]:
        sorter = graphlib.TopologicalSorter({t.id: self.deps(t) for t in self.tasks})
        try:
            sorter.prepare()
        except graphlib.CycleError as error:
            cycle = error.args[1]
            return [f"the tasks form a cycle: {' -> '.join(reversed(cycle))}"]
        return []

    def order(self) -> list[Task]:
        """The tasks in an order where every task comes after what it waits for."""
        sorter = graphlib.TopologicalSorter({t.id: self.deps(t) for t in self.tasks})
        rank = {task_id: n for n, task_id in enumerate(sorter.static_order())}
        return sorted(self.tasks, key=lambda t: rank[t.id])


STATUS_MARK = {
    "pending": "·",
    "running": "▶",
    "done": "✓",
    "failed": "✗",
    "skipped": "–",
    "cancelled": "■",
}


def render_tree(graph: TaskGraph) -> str:
    """The graph as a text tree: each task under the first task it waits for; a task that
    waits for several says which others in a note."""
    children: dict[str | None, list[Task]] = {}
    for task in graph.order():
        deps = graph.deps(task)
        children.setdefault(deps[0] if deps else None, []).append(task)
    lines: list[str] = []

    def walk(parent: str | None, indent: str) -> None:
        kids = children.get(parent, [])
        for n, task in enumerate(kids):
            last = n == len(kids) - 1
            branch = "" if parent is None else ("└─ " if last else "├─ ")
            deps = graph.deps(task)
            also = f" (also after {', '.join(deps[1:])})" if len(deps) > 1 else ""
            mark = STATUS_MARK[task.status]
            lines.append(f"{indent}{branch}{mark} {task.id} [{task.status}] {task.task}{also}")
            walk(task.id, indent + ("" if parent is None else ("   " if last else "│  ")))

    walk(None, "")
    return "\n".join(lines)


_DOT_COLOUR = {
    "pending": "white",
    "running": "lightblue",
    "done": "palegreen",
    "failed": "salmon",
    "skipped": "lightgrey",
    "cancelled": "khaki",
}


def render_dot(graph: TaskGraph, title: str = "plan") -> str:
    """Graphviz DOT: one box a task, filled by status; edges labelled with the artifacts
    that flow along them."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")

    def quote(text: str) -> str:
        return f'"{escape(text)}"'

    made = graph.producers()
    lines = [f"digraph {quote(title)} {{", "  rankdir=LR;", "  node [shape=box, style=filled];"]
    for task in graph.tasks:
        label = f'"{escape(task.id)} [{task.status}]\\n{escape(task.task[:60])}"'
        colour = _DOT_COLOUR[task.status]
        lines.append(f"  {quote(task.id)} [label={label}, fillcolor={colour}];")
    for task in graph.tasks:
        for dep in graph.deps(task):
            flowing = [name for name in task.inputs if made.get(name) == dep]
            label = f" [label={quote(', '.join(flowing))}]" if flowing else ""
            lines.append(f"  {quote(dep)} -> {quote(task.id)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"
