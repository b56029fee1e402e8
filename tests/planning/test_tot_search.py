"""Tree of Thoughts: rating by vote, and depth-first search with pruning and backtracking."""

from __future__ import annotations

from typing import Any

from autonoma.errors import ModelRefused
from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.planning.tot import ToTDecomposer
from autonoma.runtime.budget import BudgetSpent
from tests.planning.answers import planned

GOAL = "Write facts about Mars and Venus to planets.md"


def plan(name: str) -> dict[str, Any]:
    return {"tasks": [planned("t1", f"{name}: write planets.md", outputs=["planets.md"])]}


class Script:
    """Proposals in order, votes in order, values by the plan name found in the prompt.
    Records every request as ("propose" | "vote" | "value", its prompt)."""

    def __init__(
        self,
        proposals: list[str],
        votes: list[Any] | None = None,
        scores: dict[str, int] | None = None,
    ) -> None:
        self.proposals = list(proposals)
        self.votes = list(votes or [])
        self.scores = scores or {}
        self.calls: list[tuple[str, str]] = []
        self.temperatures: list[float | None] = []

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        text = str(messages[0].content)
        if text.startswith("You judge plans") and "Candidate plans" in text:
            self.calls.append(("vote", text))
            self.temperatures.append(request.temperature)
            vote = self.votes.pop(0)
            return (
                {"reason": f"plan {vote} is best", "best": vote} if isinstance(vote, int) else vote
            )
        if text.startswith("You judge plans"):
            self.calls.append(("value", text))
            name = next(n for n in self.scores if f"{n}:" in text)
            return {"reason": f"{name} looks {self.scores[name]}", "score": self.scores[name]}
        self.calls.append(("propose", str(messages[-1].content)))
        return plan(self.proposals.pop(0))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]

    def proposing(self) -> list[str]:
        return [text for kind, text in self.calls if kind == "propose"]


async def test_vote_picks_the_plan_most_votes_name_not_the_first() -> None:
    script = Script(["alpha", "beta", "gamma"], votes=[2, 3, 2])
    planner = ToTDecomposer(ScriptedModel(script), k=3, rate="vote")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task == "beta: write planets.md"
    assert script.kinds() == ["propose"] * 3 + ["vote"] * 3  # no value prompt
    assert [c.votes for c in planner.candidates] == [0, 2, 1]
    assert [c.score for c in planner.candidates] == [0, 2, 1]
    assert planner.candidates[1].reason == "plan 2 is best / plan 2 is best"
    ballot = script.calls[3][1]
    assert ballot.index("Plan 1:") < ballot.index("alpha:") < ballot.index("Plan 2:")
    assert ballot.index("beta:") < ballot.index("Plan 3:") < ballot.index("gamma:")
    assert all(t is not None and t > 0 for t in script.temperatures)  # the votes can differ
    assert planner.discarded_votes == []


async def test_a_tied_vote_goes_to_the_first_proposed() -> None:
    script = Script(["alpha", "beta", "gamma"], votes=[3, 1])
    planner = ToTDecomposer(ScriptedModel(script), k=3, rate="vote", votes=2)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("alpha")
    assert [c.votes for c in planner.candidates] == [1, 0, 1]


async def test_an_out_of_range_or_unusable_vote_is_discarded() -> None:
    refused = ModelRefused("refusal", "I will not vote")
    script = Script(["alpha", "beta", "gamma"], votes=[4, 0, refused, 2])
    planner = ToTDecomposer(ScriptedModel(script), k=3, rate="vote", votes=4)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("beta")  # counting 0 as the first would pick alpha
    assert [c.votes for c in planner.candidates] == [0, 1, 0]
    assert len(planner.discarded_votes) == 3
    assert planner.discarded_votes[0].startswith("plan 4 is not one of 1..3")
    assert planner.discarded_votes[1].startswith("plan 0 is not one of 1..3")
    assert "I will not vote" in planner.discarded_votes[2]


async def test_dfs_refines_the_best_first_backtracks_and_stops_when_good_enough() -> None:
    script = Script(
        ["alpha", "beta", "gamma", "b1", "b2", "b3", "a1", "a2", "a3"],
        scores={"alpha": 6, "beta": 7, "gamma": 5, "b1": 5, "b2": 6, "b3": 4}
        | {"a1": 9, "a2": 2, "a3": 8},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=3, depth=2, search="dfs")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("a1")
    assert [(c.level, c.parent) for c in planner.candidates] == [(0, None)] * 3 + [(1, 1)] * 3 + [
        (1, 0)
    ] * 3
    refines = script.proposing()[3:]
    assert all("beta: write planets.md" in p for p in refines[:3])  # the best branch first
    assert "rated 7.0 out of 10" in refines[0] and "beta looks 7" in refines[0]
    assert all("alpha: write planets.md" in p for p in refines[3:])  # then its sibling
    assert not script.proposals  # a1 scored 9 >= 8: gamma was never refined
    assert script.kinds()[-3:] == ["value"] * 3


async def test_dfs_prunes_a_branch_scored_below_the_threshold() -> None:
    script = Script(
        ["alpha", "beta", "a1", "a2"],
        scores={"alpha": 7, "beta": 4, "a1": 6, "a2": 5},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=2, depth=2, search="dfs")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("alpha")  # no refinement beat it
    assert [(c.level, c.parent) for c in planner.candidates] == [
        (0, None),
        (0, None),
        (1, 0),
        (1, 0),
    ]
    assert script.kinds().count("propose") == 4  # beta (4 < 5) was not refined


async def test_dfs_stops_when_the_expansions_are_spent() -> None:
    script = Script(
        ["alpha", "beta", "a1", "a2"],
        scores={"alpha": 7, "beta": 6, "a1": 7, "a2": 5},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=2, depth=2, search="dfs", max_expansions=2)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("alpha")  # the first of the best: a1 only ties it
    assert script.kinds().count("propose") == 4  # beta would be next, but the budget is spent


async def test_dfs_with_votes_follows_the_winner_and_stops_at_the_next_winner() -> None:
    script = Script(["alpha", "beta", "b1", "b2"], votes=[2, 2, 1, 1, 2, 2])
    planner = ToTDecomposer(ScriptedModel(script), k=2, depth=2, rate="vote", search="dfs")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("b2")  # ties its parent's 2 votes, one level deeper
    assert script.kinds() == ["propose"] * 2 + ["vote"] * 3 + ["propose"] * 2 + ["vote"] * 3
    assert "chosen by 2 of 3 votes" in script.proposing()[2]
    assert [(c.level, c.parent, c.votes) for c in planner.candidates] == [
        (0, None, 1),
        (0, None, 2),
        (1, 1, 1),
        (1, 1, 2),
    ]


async def test_bfs_with_votes_refines_the_winner() -> None:
    script = Script(["alpha", "beta", "a1", "a2"], votes=[1, 1, 2, 2, 1, 2])
    planner = ToTDecomposer(ScriptedModel(script), k=2, depth=2, rate="vote")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("a2")
    assert [(c.level, c.parent, c.votes) for c in planner.candidates] == [
        (0, None, 2),
        (0, None, 1),
        (1, 0, 1),
        (1, 0, 2),
    ]


async def test_bfs_stays_the_default_and_refines_every_kept_plan() -> None:
    script = Script(
        ["alpha", "beta", "a1", "a2", "b1", "b2"],
        scores={"alpha": 8, "beta": 6, "a1": 5, "a2": 7, "b1": 9, "b2": 3},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=2, beam=2, depth=2)
    assert (planner.rate, planner.search) == ("value", "bfs")
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("b1")
    # level by level: both kept plans are refined before any refinement is rated
    assert script.kinds() == ["propose"] * 2 + ["value"] * 2 + ["propose"] * 4 + ["value"] * 4
    assert [(c.level, c.parent) for c in planner.candidates] == [(0, None)] * 2 + [(1, 0)] * 2 + [
        (1, 1)
    ] * 2
