"""Tree of Thoughts for decomposition: propose k candidate plans, rate each with a value
prompt, keep the best `beam`, and (with depth > 1) ask for k refinements of each kept plan,
rated the same way; breadth-first, level by level. The plan rated best wins (the first
proposed, on a tie).

`ToTDecomposer` is a `Decomposer` (same `plan(...)`), so a planned run can use it as is.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from autonoma.errors import ModelRefused, OutputInvalid
from autonoma.planning.decompose import (
    Decomposer,
    PlanAnswer,
    PlanInvalid,
)
from autonoma.planning.graph import TaskGraph
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render


class PlanValue(BaseModel):
    """The value prompt's answer for one candidate plan."""

    reason: str = Field(default="", max_length=800)
    score: int = Field(ge=1, le=10)


@dataclass
class Candidate:
    """One proposed plan, its rating, and where it came from (`parent`: the index in
    `ToTDecomposer.candidates` of the plan it refines; None at the first level)."""

    plan: PlanAnswer
    level: int
    parent: int | None = None
    score: float = 0.0
    reason: str = ""
    attempts: list[list[str]] = field(default_factory=list)  # its problems, each attempt

    def graph(self) -> TaskGraph:
        return self.plan.graph()


@dataclass
class ToTDecomposer(Decomposer):
    k: int = 3  # candidates proposed at the first level, and refinements per kept plan after
    beam: int = 1  # plans kept after each level
    depth: int = 1  # levels: 1 proposes and rates; 2 also refines the kept plans once
    candidates: list[Candidate] = field(default_factory=list)  # every rated plan, last search

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
        """The candidate plan the value prompt rates best, or PlanInvalid when no candidate
        became a valid plan. Every answer's cost is charged to `spent`."""
        base = self.prompt(goal, who=who, goals=goals, tools=tools, files=files)
        problems_of = self.checker(tools, files)
        last: list[str] = []

        async def propose(prompt: str, level: int, parent: int | None) -> Candidate | None:
            nonlocal last
            attempts: list[list[str]] = []
            try:
                answer = await self.ask(prompt, spent, problems_of, attempts)
            except PlanInvalid as invalid:
                last = invalid.problems
                return None
            return Candidate(answer, level, parent, attempts=attempts)

        self.candidates = []
        kept: list[int] = []
        for level in range(max(1, self.depth)):
            new: list[Candidate] = []
            if level == 0:
                for _ in range(max(1, self.k)):
                    earlier = [_summary(c.plan) for c in new]
                    extra = render("autonoma.planning", "tot_propose.j2", earlier=earlier)
                    found = await propose(f"{base}\n\n{extra}" if earlier else base, 0, None)
                    if found is not None:
                        new.append(found)
            else:
                for index in kept:
                    parent = self.candidates[index]
                    tried: list[str] = []
                    for _ in range(max(1, self.k)):
                        extra = render(
                            "autonoma.planning",
                            "tot_refine.j2",
                            plan=parent.plan.model_dump_json(),
                            score=parent.score,
                            reason=parent.reason,
                            tried=tried,
                        )
                        found = await propose(f"{base}\n\n{extra}", level, index)
                        if found is not None:
                            tried.append(_summary(found.plan))
                            new.append(found)
            await asyncio.gather(
                *(self._rate(c, spent, goal=goal, who=who, goals=goals) for c in new)
            )
            self.candidates.extend(new)
            if not self.candidates:
                raise PlanInvalid(last or ["no candidate plan was proposed"], self.k)
            ranked = sorted(range(len(self.candidates)), key=lambda i: -self.candidates[i].score)
            kept = [i for i in ranked[: max(1, self.beam)] if self.candidates[i].level == level]
            if not kept:  # nothing new made the beam: refining further repeats the same plans
                break
        best = max(self.candidates, key=lambda c: c.score)  # the first of equals
        self.history.extend(best.attempts)
        return best.graph()

    async def _rate(
        self,
        candidate: Candidate,
        spent: BudgetSpent,
        *,
        goal: str,
        who: str,
        goals: Sequence[str],
    ) -> None:
        """Ask the value prompt for a score from 1 to 10; an unusable answer scores 0."""
        prompt = render(
            "autonoma.planning",
            "tot_value.j2",
            who=who,
            goal=goal,
            goals=list(goals),
            tasks=[t.model_dump() for t in candidate.plan.tasks],
        )
        try:
            response = await self.model.request(
                [{"role": "user", "content": prompt}],
                output=PlanValue,
                max_tokens=300,
                temperature=0.0,
            )
        except (OutputInvalid, ModelRefused) as error:
            spent.charge(error.prompt_tokens, error.completion_tokens, error.cost_usd)
            candidate.score, candidate.reason = 0.0, f"not rated: {str(error)[:200]}"
            return
        usage = response.usage
        spent.charge(usage.prompt_tokens, usage.completion_tokens, response.cost_usd)
        value: PlanValue = response.data
        candidate.score, candidate.reason = float(value.score), value.reason


def _summary(plan: PlanAnswer) -> str:
    return json.dumps([t.task for t in plan.tasks])
