"""Replanning the tasks not done yet, after a failure or a reflection."""

from __future__ import annotations

import pytest

from autonoma.llm import ScriptedModel
from autonoma.planning.decompose import PlanInvalid
from autonoma.planning.graph import TaskGraph
from autonoma.planning.replan import Replanner
from autonoma.runtime.budget import BudgetSpent
from tests.planning.answers import graph, planned, task

GOAL = "Publish a one-page report on the population of Tokyo in report.md"


def plan() -> TaskGraph:
    return graph(
        task(
            "t1",
            "Find the population of Tokyo with a web search",
            status="done",
            outputs=["population"],
            result="about 14 million (Tokyo Metropolis, 2024)",
        ),
        task(
            "t2",
            "Download the census table to census.csv",
            status="failed",
            outputs=["census.csv"],
            result="failed: the census site answered 403 Forbidden",
        ),
        task(
            "t3",
            "Chart census.csv into chart.png",
            ["t2"],
            status="skipped",
            inputs=["census.csv"],
            outputs=["chart.png"],
            result="skipped: t2 failed",
        ),
        task(
            "t4",
            "Write report.md from the population and the chart",
            ["t1", "t3"],
            inputs=["population", "chart.png"],
            outputs=["report.md"],
        ),
    )


REVISED = {
    "tasks": [
        planned(
            "t5",
            "Find population figures for 2000-2024 in Wikipedia and write them to census.csv",
            outputs=["census.csv"],
        ),
        planned(
            "t3",
            "Chart census.csv into chart.png",
            ["t5"],
            inputs=["census.csv"],
            outputs=["chart.png"],
        ),
        planned(
            "t4",
            "Write report.md from the population and the chart",
            ["t1", "t3"],
            inputs=["population", "chart.png"],
            outputs=["report.md"],
        ),
    ]
}


async def test_a_failed_task_is_replaced_and_finished_work_is_kept() -> None:
    g = plan()
    before = g.model_dump()
    model = ScriptedModel([REVISED])
    spent = BudgetSpent()
    replan = await Replanner(model).replan(GOAL, g, spent, failed=g.get("t2"))

    new = replan.graph
    assert new.ids() == ["t1", "t5", "t3", "t4"]
    assert new.tasks[0] is g.get("t1")  # the done task itself, result and all
    assert new.get("t1").result == "about 14 million (Tokyo Metropolis, 2024)"
    assert new.get("t1").status == "done"
    assert [new.get(i).status for i in ("t5", "t3", "t4")] == ["pending"] * 3
    assert new.get("t3").dep == ["t5"] and new.get("t3").result == ""
    assert new.problems() == []
    assert replan.kept == ["t1"]
    assert replan.added == ["t5"]
    assert replan.changed == ["t3"]
    assert replan.unchanged == ["t4"] and new.get("t4") is g.get("t4")  # pending: same object
    assert replan.removed == ["t2"]
    assert replan.repairs == 0
    assert replan.summary() == (
        "kept 1 finished task(s); added t5; changed t3; unchanged t4; removed t2"
    )
    assert g.model_dump() == before  # the old graph is not changed
    assert spent.prompt_tokens > 0

    (request,) = model.requests
    prompt = request.messages[0].content
    assert f"Goal: {GOAL}" in prompt
    assert (
        "- t1: Find the population of Tokyo with a web search\n"
        "  Produced: population. Result: about 14 million (Tokyo Metropolis, 2024)"
    ) in prompt
    assert "Task t2 failed: Download the census table to census.csv" in prompt
    assert "Error: failed: the census site answered 403 Forbidden" in prompt
    assert "- t3 [skipped] (after t2): Chart census.csv into chart.png" in prompt
    assert "- t4 [pending] (after t1, t3)" in prompt
    assert "review" not in prompt


async def test_a_reflection_drives_a_replan_and_an_explicit_error_is_shown() -> None:
    g = plan()
    model = ScriptedModel([REVISED])
    reflection = "The census site blocks robots; the chart is not worth a whole task."
    replan = await Replanner(model).replan(
        GOAL, g, BudgetSpent(), failed=g.get("t2"), error="HTTP 403", reflection=reflection
    )
    prompt = model.requests[0].messages[0].content
    assert f"A review of the progress says the plan is off:\n{reflection}" in prompt
    assert "Error: HTTP 403" in prompt and "403 Forbidden" not in prompt
    assert replan.graph.problems() == []

    only_reflection = ScriptedModel(
        [
            {
                "tasks": [
                    planned(
                        "t9",
                        "Write report.md from the population",
                        ["t1"],
                        inputs=["population"],
                        outputs=["report.md"],
                    )
                ]
            }
        ]
    )
    replan = await Replanner(only_reflection).replan(
        GOAL, plan(), BudgetSpent(), reflection=reflection
    )
    prompt = only_reflection.requests[0].messages[0].content
    assert "Task t2 failed" not in prompt and "Error:" not in prompt
    assert "- t2 [failed]: Download the census table to census.csv" in prompt
    assert replan.added == ["t9"] and replan.removed == ["t2", "t3", "t4"]


async def test_problems_are_sent_back_quoted_and_a_repair_is_accepted() -> None:
    broken = {
        "tasks": [
            planned("t1", "Find the population again", outputs=["pop2"]),
            planned("t3", "Chart census.csv into chart.png", ["t2"], inputs=["census.csv"]),
        ]
    }
    model = ScriptedModel([broken, REVISED])
    replanner = Replanner(model)
    replan = await replanner.replan(GOAL, plan(), BudgetSpent(), failed=plan().get("t2"))
    assert replan.repairs == 1
    assert replan.graph.ids() == ["t1", "t5", "t3", "t4"]
    repair = model.requests[1].messages[-1].content
    assert "- task t3 depends on 't2', which is not a task" in repair
    assert "- task t3 needs input 'census.csv', which no task produces" in repair
    assert "task id 't1' belongs to a finished task" in repair
    assert "is used more than once" not in repair  # said once, the clearer way
    assert "Do not include the finished tasks." in repair
    assert model.requests[1].messages[1].role == "assistant"
    assert len(replanner.history) == 2 and replanner.history[1] == []


async def test_a_revision_that_never_holds_raises_plan_invalid_with_the_last_problems() -> None:
    clash = {"tasks": [planned("n1", "Write report.md", outputs=["population"])]}
    model = ScriptedModel([clash, clash, clash])
    spent = BudgetSpent()
    with pytest.raises(PlanInvalid) as raised:
        await Replanner(model, repairs=2).replan(GOAL, plan(), spent, reflection="off track")
    assert raised.value.attempts == 3
    assert raised.value.problems == ["output 'population' is produced by both t1 and n1"]
    assert len(model.requests) == 3 and spent.prompt_tokens > 0


async def test_too_many_tasks_and_an_unusable_answer_are_problems_too() -> None:
    many = {"tasks": [planned(f"n{i}", f"Step {i}") for i in range(4)]}
    model = ScriptedModel(["not json", "nor this", "nope", many, REVISED])
    replanner = Replanner(model, max_tasks=3, repairs=2)
    spent = BudgetSpent()
    replan = await replanner.replan(GOAL, plan(), spent, reflection="off track")
    assert replanner.history[0][0].startswith("the answer was not a list of tasks")
    assert replanner.history[1] == ["the revision has 4 tasks; at most 3"]
    assert replan.repairs == 2 and replan.added == ["t5"]
    assert spent.prompt_tokens > 0


async def test_no_remaining_tasks_when_the_finished_ones_suffice() -> None:
    replan = await Replanner(ScriptedModel([{"tasks": []}])).replan(
        GOAL, plan(), BudgetSpent(), reflection="t1 already answers the goal"
    )
    assert replan.graph.ids() == ["t1"]
    assert replan.removed == ["t2", "t3", "t4"]


async def test_a_replan_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="needs a failed task or a reflection"):
        await Replanner(ScriptedModel([])).replan(GOAL, plan(), BudgetSpent(), reflection=" ")
