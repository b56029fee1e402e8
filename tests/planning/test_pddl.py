"""LLM+P: the model writes a PDDL problem, pyperplan solves it, the plan becomes a chain."""

from __future__ import annotations

import pytest

from autonoma.errors import AutonomaError
from autonoma.llm import ScriptedModel
from autonoma.planning.decompose import PlanInvalid
from autonoma.planning.pddl import (
    PddlDomain,
    PddlPlanFailed,
    PddlPlanner,
    solve,
    solve_within,
)
from autonoma.runtime.budget import BudgetSpent
from tests.planning.helpers import GOAL, PROBLEM

MALFORMED = """(define (problem tower) (:domain blocksworld)
  (:objects a b c)
  (:init (on c a) (ontable a) (ontable b) (clear c) (clear b) (handempty)
  (:goal (and (on a b) (on b c))))"""

UNSOLVABLE = """(define (problem tower) (:domain blocksworld)
  (:objects a b c)
  (:init (on c a) (ontable a) (ontable b) (clear c) (clear b))
  (:goal (and (on a b) (on b c))))"""


def blocksworld() -> PddlDomain:
    return PddlDomain.load("blocksworld")


def test_the_shipped_domain_parses() -> None:
    domain = blocksworld()
    assert domain.name == "blocksworld"
    with pytest.raises(AutonomaError, match="no shipped PDDL domain"):
        PddlDomain.load("nowhere")
    with pytest.raises(AutonomaError, match="does not parse"):
        PddlDomain.parse("(define (domain x)")
    with pytest.raises(AutonomaError, match=r"^the PDDL domain is empty: it needs a \(define"):
        PddlDomain.parse(" \n")  # pyperplan's parser raised a bare StopIteration
    with pytest.raises(AutonomaError, match="not a PDDL domain pyperplan can read"):
        PddlDomain.parse(";; only a comment\n")


def test_solve_finds_a_valid_plan() -> None:
    solution = solve(blocksworld().text, PROBLEM)
    assert solution.problems == []
    assert solution.actions == [
        "(unstack c a)",
        "(put-down c)",
        "(pick-up b)",
        "(stack b c)",
        "(pick-up a)",
        "(stack a b)",
    ]


@pytest.mark.parametrize(
    ("problem", "said"),
    [
        (MALFORMED, "missing closing parenthesis"),
        ("here it is: (on a b)", "does not parse"),
        (PROBLEM.replace("(on c a)", "(above c a)"), "predicate 'above'"),
        (PROBLEM.replace("(ontable b)", "(ontable b a)"), "gives 'ontable' 2 argument"),
        (PROBLEM.replace("(:objects a b c)", "(:objects a b)"), "object c"),
        (UNSOLVABLE, "found no plan"),
        (PROBLEM.replace("(on a b) (on b c)", "(on c a)"), "already holds"),
    ],
)
def test_solve_says_what_is_wrong(problem: str, said: str) -> None:
    solution = solve(blocksworld().text, problem)
    assert solution.actions == []
    assert said in " ".join(solution.problems)


async def test_blocksworld_goal_becomes_a_chain_of_actions() -> None:
    model = ScriptedModel([{"problem": PROBLEM}])
    planner = PddlPlanner(model, blocksworld())
    spent = BudgetSpent()
    graph = await planner.plan(GOAL, spent, tools=["write_file"])
    assert graph.problems(tools=["write_file"]) == []
    assert graph.ids() == ["a1", "a2", "a3", "a4", "a5", "a6"]
    assert [t.dep for t in graph.tasks] == [[], ["a1"], ["a2"], ["a3"], ["a4"], ["a5"]]
    assert "(unstack c a)" in graph.tasks[0].task
    assert "Step 6 of 6" in graph.tasks[5].task
    assert [t.id for t in graph.order()] == graph.ids()
    assert planner.problem == PROBLEM
    assert planner.history == [[]]
    prompt = model.requests[0].messages[0].content
    assert GOAL in str(prompt) and "(:action unstack" in str(prompt)


async def test_a_malformed_problem_goes_back_with_the_parser_error() -> None:
    model = ScriptedModel([{"problem": MALFORMED}, {"problem": PROBLEM}])
    planner = PddlPlanner(model, blocksworld())
    graph = await planner.plan(GOAL, BudgetSpent())
    assert len(graph.tasks) == 6 and graph.problems() == []
    assert len(model.requests) == 2
    repair = model.requests[1].messages
    assert repair[1].content == '{"problem": ' + _json(MALFORMED) + "}"
    assert "missing closing parenthesis" in str(repair[2].content)
    assert len(planner.history) == 2 and planner.history[1] == []


async def test_an_unsolvable_problem_goes_back_then_fails_for_good() -> None:
    model = ScriptedModel([{"problem": UNSOLVABLE}, {"problem": MALFORMED}])
    planner = PddlPlanner(model, blocksworld(), repairs=1)
    with pytest.raises(PddlPlanFailed, match="no solvable PDDL problem") as failed:
        await planner.plan(GOAL, BudgetSpent())
    assert isinstance(failed.value, PlanInvalid)  # a planned run handles it as any bad plan
    assert failed.value.attempts == 2
    assert "missing closing parenthesis" in failed.value.problems[0]
    assert "found no plan" in str(model.requests[1].messages[2].content)


def _json(text: str) -> str:
    import json

    return json.dumps(text)


async def test_the_search_runs_in_a_child_process_with_a_time_limit() -> None:
    solved = await solve_within(blocksworld().text, PROBLEM, 60)
    assert solved == solve(blocksworld().text, PROBLEM)
    stopped = await solve_within(blocksworld().text, PROBLEM, 0.001)
    assert stopped.actions == [] and "no plan within 0.001 s" in stopped.problems[0]
