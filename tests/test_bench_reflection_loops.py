"""The self-reflection benchmark's goals and its scripted loops, without a real model."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest

from autonoma.agent.completion import named_files
from autonoma.llm import ScriptedModel
from bench.reflection_goals import GOALS, ReflectionGoal
from bench.reflection_loops import TRACES, act, run_goal, run_trace, scripted, summarise


def test_there_are_enough_goals_with_distinct_names() -> None:
    assert len(GOALS) >= 12
    assert len({goal.name for goal in GOALS}) == len(GOALS)


@pytest.mark.parametrize("goal", GOALS, ids=lambda goal: goal.name)
def test_each_checker_fails_on_the_start_and_passes_after_the_solution(
    goal: ReflectionGoal, tmp_path: Path
) -> None:
    goal.setup(tmp_path)
    assert not goal.check(tmp_path)
    goal.solve(tmp_path)
    assert goal.check(tmp_path)
    for name in named_files([goal.goal]):  # else task_complete would be refused
        assert (tmp_path / name).is_file(), name


def test_checkers_are_exact_but_forgive_blank_space(tmp_path: Path) -> None:
    by_name = {goal.name: goal for goal in GOALS}
    count, sort = by_name["count_lines"], by_name["sort_lines"]
    count.setup(tmp_path)
    (tmp_path / "count.txt").write_text("  6.0\n\n")
    assert count.check(tmp_path)
    (tmp_path / "count.txt").write_text("7\n")
    assert not count.check(tmp_path)
    sort.setup(tmp_path)
    (tmp_path / "sorted.txt").write_text("Anton  \nBeatrice\nKarl\nMira\nZoe")
    assert sort.check(tmp_path)
    (tmp_path / "sorted.txt").write_text("Anton\nBeatrice\nMira\nKarl\nZoe\n")
    assert not sort.check(tmp_path)


async def test_wasted_steps_of_the_scripted_loops(tmp_path: Path) -> None:
    traces = {trace.name: trace for trace in TRACES}
    repeat = await run_trace(traces["repeat"], tmp_path)
    assert (repeat["detection"], repeat["detection_step"], repeat["wasted_steps"]) == (
        "repeat",
        3,
        3,
    )
    later = await run_trace(traces["progress_then_cycle"], tmp_path)
    assert (later["detection"], later["detection_step"], later["wasted_steps"]) == ("cycle", 6, 4)
    stall = await run_trace(traces["stall"], tmp_path)
    assert (stall["detection"], stall["wasted_steps"]) == ("stalled", 6)


async def test_every_scripted_loop_is_detected_as_its_kind(tmp_path: Path) -> None:
    result = await scripted(tmp_path)
    found = {row["trace"]: (row["detection"], row["wasted_steps"]) for row in result["traces"]}
    assert found == {
        "repeat": ("repeat", 3),
        "cycle_2": ("cycle", 4),
        "cycle_3": ("cycle", 6),
        "stall": ("stalled", 6),
        "no_action": ("no_action", 5),
        "progress_then_cycle": ("cycle", 4),
        "same_write": ("repeat", 3),
    }
    assert result["undetected"] == 0 and result["max_wasted_steps"] == 6
    assert all(row["status"] == "completed" for row in result["traces"])


async def test_a_real_model_run_is_recorded_with_a_scripted_model(tmp_path: Path) -> None:
    goal = next(goal for goal in GOALS if goal.name == "similar_name")
    model = ScriptedModel(
        [
            *[act("read_file", path="notes")] * 3,
            {
                "went_wrong": "There is no file called notes.",
                "instead": "Read notes.md.",
                "verdict": "continue",
            },
            act("read_file", path="notes.md"),
            act("write_file", path="title.txt", text="SHOPPING LIST\n"),
            act("task_complete", reason="title.txt is written"),
        ]
    )
    args = Namespace(max_steps=10, seed=0)
    row = await run_goal(model, "scripted", goal, "on", args, tmp_path)
    assert row["success"] and row["status"] == "completed", row["reason"]
    assert row["steps"] == 6
    assert row["detections"][0] == {"kind": "repeat", "step": 3, "steps": [1, 2, 3]}
    assert [r["course"] for r in row["reflections"]] == ["continue"]
    assert row["trials_started"] == 0
    summary = summarise([row, {**row, "success": False, "detections": [], "reflections": []}])
    assert summary["success_rate"] == 0.5 and summary["runs_with_a_detection"] == 1
    assert summary["reflections"] == 1
