"""Tree of Thoughts for decomposition: propose k candidate plans, rate them, and search.

Rating (`rate`): "value" asks a value prompt to score each plan from 1 to 10 on its own;
"vote" shows the model all the plans of a level at once and asks which is best, `votes`
times, and a plan's score is the number of votes it got.

Search (`search`): "bfs" keeps the best `beam` plans of each level and (with depth > 1) asks
for k refinements of each, level by level. "dfs" refines the best plan of a level first and
goes deeper before trying its siblings; a plan rated below `prune_below` (with votes: one no
vote named) is not refined, and the search backtracks to the next-best sibling. It stops at
the first plan at full depth rated `good_enough` or more (with votes: its level's winner), or
after `max_expansions` rounds of proposals. Either way the plan rated best wins: the first
proposed of equals, but with votes the deeper of equals (a refinement that ties its parent).

`ToTDecomposer` is a `Decomposer` (same `plan(...)`), so a planned run can use it as is.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
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


class PlanVote(BaseModel):
    """The vote prompt's answer: the number (from 1) of the best plan shown."""

    reason: str = Field(default="", max_length=800)
    best: int  # unbounded here: an out-of-range vote is discarded, not re-asked


@dataclass
class Candidate:
    """One proposed plan, its rating, and where it came from (`parent`: the index in
    `ToTDecomposer.candidates` of the plan it refines; None at the first level)."""

    plan: PlanAnswer
    level: int
    parent: int | None = None
    score: float = 0.0  # the value prompt's score, or the number of votes
    reason: str = ""
    votes: int = 0  # with rate="vote": the votes of its level that named it
    attempts: list[list[str]] = field(default_factory=list)  # its problems, each attempt

    def graph(self) -> TaskGraph:
        return self.plan.graph()


Children = Callable[[int | None, int], Awaitable[list[Candidate]]]
Rated = Callable[[list[Candidate]], Awaitable[list[int]]]


@dataclass
class ToTDecomposer(Decomposer):
    k: int = 3  # candidates proposed at the first level, and refinements per expanded plan
    beam: int = 1  # bfs: plans kept after each level
    depth: int = 1  # levels: 1 proposes and rates; 2 also refines once
    rate: Literal["value", "vote"] = "value"  # value: score each plan; vote: pick among a level
    search: Literal["bfs", "dfs"] = "bfs"
    votes: int = 3  # vote: answers asked for each level
    vote_temperature: float = 0.7  # so the votes can differ
    prune_below: float = 5.0  # dfs with values: a plan scored lower is not refined
    good_enough: float = 8.0  # dfs with values: a full-depth plan this good ends the search
    max_expansions: int = 4  # dfs: rounds of proposals (the first level's included)
    candidates: list[Candidate] = field(default_factory=list)  # every rated plan, last search
    discarded_votes: list[str] = field(default_factory=list)  # why each unusable vote, last search

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
        """The candidate plan rated best, or PlanInvalid when no candidate became a valid
        plan. Every answer's cost is charged to `spent`."""
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

        async def children(parent: int | None, level: int) -> list[Candidate]:
            """k plans for the goal (parent None) or k refinements of a candidate."""
            new: list[Candidate] = []
            for _ in range(max(1, self.k)):
                if parent is None:
                    earlier = [_summary(c.plan) for c in new]
                    extra = render("autonoma.planning", "tot_propose.j2", earlier=earlier)
                    prompt = f"{base}\n\n{extra}" if earlier else base
                else:
                    prompt = f"{base}\n\n{self._refine_prompt(self.candidates[parent], new)}"
                found = await propose(prompt, level, parent)
                if found is not None:
                    new.append(found)
            return new

        async def rated(new: list[Candidate]) -> list[int]:
            """Rate a level's (or a branch's) new candidates and record them."""
            if self.rate == "vote":
                await self._vote(new, spent, goal=goal, who=who, goals=goals)
            else:
                await asyncio.gather(
                    *(self._rate(c, spent, goal=goal, who=who, goals=goals) for c in new)
                )
            start = len(self.candidates)
            self.candidates.extend(new)
            return list(range(start, len(self.candidates)))

        self.candidates = []
        self.discarded_votes = []
        if self.search == "dfs":
            await self._dfs(children, rated)
        else:
            await self._bfs(children, rated)
        if not self.candidates:
            raise PlanInvalid(last or ["no candidate plan was proposed"], self.k)
        best = max(self.candidates, key=self._rank)  # the first of equals
        self.history.extend(best.attempts)
        return best.graph()

    async def _bfs(self, children: Children, rated: Rated) -> None:
        kept: list[int | None] = [None]
        for level in range(max(1, self.depth)):
            new: list[Candidate] = []
            for parent in kept:
                new.extend(await children(parent, level))
            await rated(new)
            ranked = sorted(
                range(len(self.candidates)),
                key=lambda i: self._rank(self.candidates[i]),
                reverse=True,
            )
            kept = [i for i in ranked[: max(1, self.beam)] if self.candidates[i].level == level]
            if not kept:  # nothing new made the beam: refining further repeats the same plans
                break

    async def _dfs(self, children: Children, rated: Rated) -> None:
        expansions = 0

        async def expand(parent: int | None, level: int) -> bool:
            """Propose and rate the children of `parent`, then go down the best first;
            True when the search is over."""
            nonlocal expansions
            if expansions >= max(1, self.max_expansions):
                return True
            expansions += 1
            group = await rated(await children(parent, level))
            for index in sorted(group, key=lambda i: -self.candidates[i].score):
                candidate = self.candidates[index]
                if self._pruned(candidate):
                    return False  # its later siblings are rated no higher: backtrack
                if level + 1 >= max(1, self.depth):
                    # the best of its group: good enough ends the search, else backtrack
                    # (a vote's winner counts as good enough)
                    return self.rate == "vote" or candidate.score >= self.good_enough
                if await expand(index, level + 1):
                    return True
            return False

        await expand(None, 0)

    def _rank(self, candidate: Candidate) -> tuple[float, int]:
        """Higher is better. With votes, a refinement that ties its parent wins: it was
        chosen among plans meant to improve on it (votes of different levels are counts of
        the same number of ballots)."""
        return candidate.score, candidate.level if self.rate == "vote" else 0

    def _pruned(self, candidate: Candidate) -> bool:
        if self.rate == "vote":
            return candidate.votes == 0
        return candidate.score < self.prune_below

    def _refine_prompt(self, parent: Candidate, tried: list[Candidate]) -> str:
        rating = (
            f"chosen by {parent.votes} of {max(1, self.votes)} votes among its level's plans"
            if self.rate == "vote"
            else f"rated {parent.score} out of 10"
        )
        return render(
            "autonoma.planning",
            "tot_refine.j2",
            plan=parent.plan.model_dump_json(),
            rating=rating,
            reason=parent.reason,
            tried=[_summary(c.plan) for c in tried],
        )

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
        answer = await ask(self.model, prompt, spent, output=PlanValue, max_tokens=300,
                           temperature=0.0)  # fmt: skip
        if not isinstance(answer, ModelResponse):
            candidate.score, candidate.reason = 0.0, f"not rated: {str(answer)[:200]}"
            return
        value: PlanValue = answer.data
        candidate.score, candidate.reason = float(value.score), value.reason

    async def _vote(
        self,
        group: list[Candidate],
        spent: BudgetSpent,
        *,
        goal: str,
        who: str,
        goals: Sequence[str],
    ) -> None:
        """Show the plans together and ask `votes` times which is best; each plan's score is
        the votes that named it. An unusable or out-of-range vote is discarded."""
        if len(group) == 1:  # asking would only spend: every vote names it
            only = group[0]
            only.votes = max(1, self.votes)
            only.score, only.reason = float(only.votes), "the only plan of its level"
            return
        prompt = render(
            "autonoma.planning",
            "tot_vote.j2",
            who=who,
            goal=goal,
            goals=list(goals),
            plans=[[t.model_dump() for t in c.plan.tasks] for c in group],
        )
        ballots = await asyncio.gather(
            *(self._ballot(prompt, spent) for _ in range(max(1, self.votes)))
        )
        reasons: list[list[str]] = [[] for _ in group]
        for ballot in ballots:
            if isinstance(ballot, str):
                self.discarded_votes.append(ballot)
            elif not 1 <= ballot.best <= len(group):
                self.discarded_votes.append(
                    f"plan {ballot.best} is not one of 1..{len(group)}: {ballot.reason[:200]}"
                )
            else:
                group[ballot.best - 1].votes += 1
                reasons[ballot.best - 1].append(ballot.reason)
        for candidate, why in zip(group, reasons, strict=True):
            candidate.score, candidate.reason = float(candidate.votes), " / ".join(why)[:800]

    async def _ballot(self, prompt: str, spent: BudgetSpent) -> PlanVote | str:
        """One vote, or why it is unusable."""
        answer = await ask(self.model, prompt, spent, output=PlanVote, max_tokens=300,
                           temperature=self.vote_temperature)  # fmt: skip
        if not isinstance(answer, ModelResponse):
            return f"not a vote: {str(answer)[:200]}"
        vote: PlanVote = answer.data
        return vote


def _summary(plan: PlanAnswer) -> str:
    return json.dumps([t.task for t in plan.tasks])
