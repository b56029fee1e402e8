"""Helpers for planning tests: tasks and graphs in a line, and a scripted model that answers
each kind of planning request (creation, duplicate check, replan) from its own queue."""

from __future__ import annotations

from typing import Any

from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.planning.graph import Task, TaskGraph, TaskStatus


def task(
    id: str, text: str, dep: list[str] | None = None, status: TaskStatus = "pending", **more: Any
) -> Task:
    return Task(id=id, task=text, dep=dep or [], status=status, **more)


def planned(id: str, text: str, dep: list[str] | None = None, **more: Any) -> dict[str, Any]:
    """One task as the model writes it."""
    return {"id": id, "task": text, "dep": dep or [], "value": 5, "effort": 5} | more


def graph(*tasks: Task) -> TaskGraph:
    return TaskGraph(tasks=list(tasks))


class Answers:
    """Answers by the request's schema: `same` checks from `verdicts` (text of the proposed
    task -> bool), everything else from `plans` in order. Records the prompts of each kind."""

    def __init__(
        self, plans: list[Any] | None = None, verdicts: dict[str, bool] | None = None
    ) -> None:
        self.plans = list(plans or [])
        self.verdicts = verdicts or {}
        self.checked: list[str] = []  # prompts of duplicate checks
        self.planning: list[str] = []  # prompts of the other requests (last message)

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        schema = request.plan.schema or {}
        prompt = messages[-1].content
        if "same" in schema.get("properties", {}):
            self.checked.append(prompt)
            for proposed, same in self.verdicts.items():
                if f"Task B, proposed: {proposed}\n" in prompt:
                    return {"same": same}
            raise AssertionError(f"no verdict scripted for: {prompt}")
        self.planning.append(prompt)
        return self.plans.pop(0)

    def model(self) -> ScriptedModel:
        return ScriptedModel(self)
