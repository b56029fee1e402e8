"""The judge benchmark shows the judge the reference and wrong results of a goal, counts a
wrong result only where the goal's own checker rejects it, and scores agreement."""

from __future__ import annotations

from pathlib import Path

from autonoma.llm import ScriptedModel
from bench.everyday_goals import BY_NAME, GOALS
from bench.judge import EXAMPLE, judge_goal, near_miss, results, summarise


def test_near_misses_are_close_and_wrong() -> None:
    assert near_miss("red\ngreen\nblue\n") == "blue\ngreen\nred\n"
    assert near_miss("46\n") == "47\n"
    assert near_miss("SHOPPING LIST\n") == "shopping list\n"
    # every goal has a reference and a wrong result to judge
    for goal in GOALS:
        made = results(goal)
        assert "reference" in made and len(made) >= 2, goal.name
        assert all(files != goal.answer for kind, files in made.items() if kind != "reference")


async def test_a_judge_that_passes_everything_agrees_only_on_the_reference(
    tmp_path: Path,
) -> None:
    yes = {"why": "the file holds what the task asks", "passed": True}
    rows = await judge_goal(ScriptedModel([yes] * 3), BY_NAME["three_lines"], tmp_path)
    assert [(r["result"], r["right"], r["agrees"]) for r in rows] == [
        ("reference", True, True), ("example", False, False), ("near_miss", False, False),
    ]  # fmt: skip
    summary = summarise(rows)
    assert summary["right_results_passed"] == "1 of 1"
    assert summary["wrong_results_failed"] == "0 of 2"
    assert summary["wrong_results_passed_by_kind"] == {"example": 1, "near_miss": 1}
    assert EXAMPLE.split() == ["1", "4", "9"]


async def test_the_judge_knows_the_files_the_run_found_as_a_runs_judge_does(
    tmp_path: Path,
) -> None:
    # rename_file's right result failed "draft.txt does not exist": the file the task removes
    goal = BY_NAME["rename_file"]
    text = goal.answer["final.txt"]
    typed = {"files": [{"name": "final.txt", "text": text}]}
    rows = await judge_goal(ScriptedModel([typed] * 3), goal, tmp_path, typed=True)
    assert rows[0]["result"] == "reference" and rows[0]["passed"], rows[0]["why"]
    assert all(not r["passed"] for r in rows[1:])
