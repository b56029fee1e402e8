"""Tree of Thoughts decomposition: propose k plans, rate each, keep the best."""

from __future__ import annotations

from typing import Any

import pytest

from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.planning.decompose import Decomposer, PlanInvalid
from autonoma.planning.tot import ToTDecomposer
from autonoma.runtime.budget import BudgetSpent
from tests.planning.answers import planned

GOAL = "Write facts about Mars and Venus to planets.md"


def plan(name: str, *extra: dict[str, Any]) -> dict[str, Any]:
    return {"tasks": [planned("t1", f"{name}: write planets.md", outputs=["planets.md"]), *extra]}


class Script:
    """Proposals in order; each value request scored by the plan name found in its prompt."""

    def __init__(self, proposals: list[Any], scores: dict[str, int]) -> None:
        self.proposals = list(proposals)
        self.scores = scores
        self.proposing: list[str] = []
        self.valuing: list[str] = []

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        text = str(messages[-1].content)
        if text.startswith("You judge plans"):
            self.valuing.append(text)
            name = next(n for n in self.scores if f"{n}:" in text)
            return {"reason": f"{name} looks {self.scores[name]}", "score": self.scores[name]}
        self.proposing.append(text)
        return self.proposals.pop(0)


async def test_picks_the_plan_the_value_prompt_rates_best_not_the_first() -> None:
    script = Script(
        [plan("alpha"), plan("beta"), plan("gamma")], {"alpha": 4, "beta": 9, "gamma": 6}
    )
    planner = ToTDecomposer(ScriptedModel(script), k=3)
    spent = BudgetSpent()
    graph = await planner.plan(GOAL, spent)
    assert graph.tasks[0].task == "beta: write planets.md"
    assert graph.problems() == []
    assert [c.score for c in planner.candidates] == [4, 9, 6]
    assert planner.candidates[1].reason == "beta looks 9"
    assert len(script.valuing) == 3 and len(script.proposing) == 3
    assert "alpha: write planets.md" in script.proposing[1]  # asked for a different plan
    assert "beta: write planets.md" in script.proposing[2]
    assert planner.history == [[]]  # the winner's attempts: valid at once
    assert isinstance(planner, Decomposer)  # a planned run takes it as its planner


async def test_the_first_wins_a_tie_and_when_best() -> None:
    script = Script([plan("alpha"), plan("beta")], {"alpha": 8, "beta": 8})
    graph = await ToTDecomposer(ScriptedModel(script), k=2).plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("alpha")


async def test_an_invalid_candidate_is_repaired_or_dropped() -> None:
    broken = plan("broken", planned("t2", "summarise", dep=["t9"]))
    script = Script(
        [broken, broken, plan("alpha"), broken, plan("gamma")],
        {"alpha": 3, "gamma": 7},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=3, repairs=1)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("gamma")
    assert len(planner.candidates) == 2  # the first candidate never held
    assert len(planner.history) == 2 and "t9" in planner.history[0][0]
    assert all("broken" not in v for v in script.valuing)


async def test_no_valid_candidate_is_plan_invalid() -> None:
    broken = plan("broken", planned("t2", "summarise", dep=["t9"]))
    script = Script([broken, broken], {})
    with pytest.raises(PlanInvalid, match="t9"):
        await ToTDecomposer(ScriptedModel(script), k=2, repairs=0).plan(GOAL, BudgetSpent())


async def test_depth_two_refines_the_best_and_keeps_a_better_refinement() -> None:
    script = Script(
        [plan("alpha"), plan("beta"), plan("refined"), plan("worse")],
        {"alpha": 5, "beta": 7, "refined": 9, "worse": 2},
    )
    planner = ToTDecomposer(ScriptedModel(script), k=2, beam=1, depth=2)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("refined")
    refine = script.proposing[2]
    assert "rated 7.0 out of 10" in refine and "beta looks 7" in refine
    assert "refined: write planets.md" in script.proposing[3]  # asked for another improvement
    assert [(c.level, c.parent) for c in planner.candidates] == [
        (0, None),
        (0, None),
        (1, 1),
        (1, 1),
    ]


async def test_depth_two_keeps_the_parent_when_no_refinement_beats_it() -> None:
    script = Script(
        [plan("alpha"), plan("beta"), plan("worse"), plan("worst")],
        {"alpha": 5, "beta": 7, "worse": 6, "worst": 2},
    )
    graph = await ToTDecomposer(ScriptedModel(script), k=2, depth=2).plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("beta")


async def test_an_unusable_rating_scores_zero() -> None:
    def answer(messages: list[Message], request: CompletionRequest) -> Any:
        text = str(messages[-1].content)
        if text.startswith("You judge plans"):
            return {"score": 7} if "beta:" in text else "no idea"
        return plan("alpha") if "Plans already proposed" not in text else plan("beta")

    planner = ToTDecomposer(ScriptedModel(answer), k=2)
    graph = await planner.plan(GOAL, BudgetSpent())
    assert graph.tasks[0].task.startswith("beta")
    assert planner.candidates[0].score == 0
