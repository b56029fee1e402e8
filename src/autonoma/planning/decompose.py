"""Decompose: the model turns a goal into a task graph in one structured answer (HuggingGPT's
task, id, dep, args), which is validated and sent back with its exact problems until it holds
or the repairs run out."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError, ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.planning.graph import Task, TaskGraph
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render


class PlanInvalid(AutonomaError):
    """The planner's answers never became a graph that can run."""

    def __init__(self, problems: Sequence[str], attempts: int) -> None:
        listed = "; ".join(problems)
        super().__init__(
            f"the planner gave no valid plan in {attempts} attempt(s); last problems: {listed}. "
            "Try a larger model, a simpler goal, or --strategy loop."
        )
        self.problems = list(problems)
        self.attempts = attempts


Answer = TypeVar("Answer", bound=BaseModel)


async def ask_with_repairs(
    model: Model,
    prompt: str,
    output: type[Answer],
    problems_of: Callable[[Answer], list[str] | Awaitable[list[str]]],
    spent: BudgetSpent,
    *,
    repairs: int,
    max_tokens: int,
    repair_template: str,
    unusable: str,
    history: list[list[str]],
) -> tuple[Answer, int]:
    """Ask for a structured answer until `problems_of` finds none in it, sending the exact
    problems back up to `repairs` times (the check may be a coroutine, such as a classical
    planner in another process); the answer and how many were sent back first, or
    PlanInvalid with the last problems. Every answer's cost is charged to `spent`, and each
    attempt's problems are appended to `history`."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    problems: list[str] = []
    for attempt in range(repairs + 1):
        try:
            response = await model.request(
                messages, output=output, max_tokens=max_tokens, temperature=0.0
            )
        except (OutputInvalid, ModelRefused) as error:
            spent.charge(error.prompt_tokens, error.completion_tokens, error.cost_usd)
            problems = [f"{unusable}: {str(error)[:300]}"]
            history.append(problems)
            continue
        usage = response.usage
        spent.charge(usage.prompt_tokens, usage.completion_tokens, response.cost_usd)
        answer: Answer = response.data
        found = problems_of(answer)
        problems = await found if inspect.isawaitable(found) else found
        history.append(problems)
        if not problems:
            return answer, attempt
        repair = render("autonoma.planning", repair_template, problems=problems)
        messages = [
            *messages[:1],
            {"role": "assistant", "content": response.text},
            {"role": "user", "content": repair},
        ]
    raise PlanInvalid(problems, repairs + 1)


class PlannedTask(BaseModel):
    """One task as the model writes it (bounded, so a small model cannot ramble)."""

    id: str = Field(min_length=1, max_length=40)
    task: str = Field(min_length=1, max_length=600)
    dep: list[str] = Field(default_factory=list, max_length=20)
    inputs: list[str] = Field(default_factory=list, max_length=20)
    outputs: list[str] = Field(default_factory=list, max_length=20)
    tools: list[str] = Field(default_factory=list, max_length=20)
    value: int = Field(5, ge=1, le=10)
    effort: int = Field(5, ge=1, le=10)


class PlanAnswer(BaseModel):
    tasks: list[PlannedTask] = Field(min_length=1, max_length=30)

    def graph(self) -> TaskGraph:
        return TaskGraph(tasks=[Task(**t.model_dump()) for t in self.tasks])


@dataclass
class Decomposer:
    model: Model
    max_tasks: int = 8
    repairs: int = 2  # times a plan with problems is sent back
    max_tokens: int = 1500
    history: list[list[str]] = field(default_factory=list)  # each attempt's problems

    async def plan(
        self,
        goal: str,
        spent: BudgetSpent,
        *,
        who: str = "an autonomous agent",
        goals: Sequence[str] = (),
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> TaskGraph:
        """A graph with no problems, or PlanInvalid with the last ones. Every answer's cost is
        charged to `spent`."""
        prompt = self.prompt(goal, who=who, goals=goals, tools=tools, files=files)
        answer = await self.ask(prompt, spent, self.checker(tools, files), self.history)
        return answer.graph()

    def prompt(
        self,
        goal: str,
        *,
        who: str,
        goals: Sequence[str],
        tools: Sequence[str],
        files: Sequence[str],
    ) -> str:
        return render(
            "autonoma.planning",
            "decompose.j2",
            who=who,
            goal=goal,
            goals=list(goals),
            tools=list(tools),
            files=list(files),
            max_tasks=self.max_tasks,
        )

    def checker(
        self, tools: Sequence[str], files: Sequence[str]
    ) -> Callable[[PlanAnswer], list[str]]:
        """What is wrong with a proposed plan: the graph's problems and its size."""

        def problems_of(answer: PlanAnswer) -> list[str]:
            graph = answer.graph()
            problems = graph.problems(tools=tools or None, given=files)
            if len(graph.tasks) > self.max_tasks:
                problems.append(f"the plan has {len(graph.tasks)} tasks; at most {self.max_tasks}")
            return problems

        return problems_of

    async def ask(
        self,
        prompt: str,
        spent: BudgetSpent,
        problems_of: Callable[[PlanAnswer], list[str]],
        history: list[list[str]],
    ) -> PlanAnswer:
        """A plan with no problems after up to `repairs` send-backs, or PlanInvalid."""
        answer, _ = await ask_with_repairs(
            self.model,
            prompt,
            PlanAnswer,
            problems_of,
            spent,
            repairs=self.repairs,
            max_tokens=self.max_tokens,
            repair_template="repair.j2",
            unusable="the answer was not a plan",
            history=history,
        )
        return answer


class Planner(Protocol):
    """What a planned run needs of a planner: a valid graph for a goal (PlanInvalid when none
    could be had), and each attempt's problems. Decomposer, ToTDecomposer and PddlPlanner."""

    history: list[list[str]]

    async def plan(
        self,
        goal: str,
        spent: BudgetSpent,
        *,
        who: str = ...,
        goals: Sequence[str] = (),
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> TaskGraph: ...
