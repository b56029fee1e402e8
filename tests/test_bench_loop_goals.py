"""The self-reflection benchmark's goals and loop traces: every checker can fail and pass, and
the scripted loops are caught where the Monitor's settings say."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.loop_goals import GOALS, LoopGoal
from bench.loop_reflection import scripted_part


@pytest.mark.parametrize("goal", GOALS, ids=[g.name for g in GOALS])
def test_each_checker_fails_at_the_start_and_passes_on_the_reference(
    goal: LoopGoal, tmp_path: Path
) -> None:
    goal.setup(tmp_path)
    assert not goal.check(tmp_path)
    goal.solve(tmp_path)
    assert goal.check(tmp_path)


def test_a_near_miss_fails(tmp_path: Path) -> None:
    by_name = {g.name: g for g in GOALS}
    (tmp_path / "count.txt").write_text("8\n")
    assert not by_name["count_lines"].check(tmp_path)
    (tmp_path / "count.txt").write_text("7.\n")
    assert by_name["count_lines"].check(tmp_path)
    (tmp_path / "colors.txt").write_text("red\nred\nblue\n")
    assert not by_name["three_colours"].check(tmp_path)


def test_the_goals_are_many_and_named_once() -> None:
    assert len(GOALS) >= 10
    assert len({g.name for g in GOALS}) == len(GOALS)


async def test_scripted_loops_are_caught_where_the_monitor_says() -> None:
    result = await scripted_part()
    caught = {row["trace"].split(":")[0]: (row["detection"], row["wasted_steps"])
              for row in result["traces"]}  # fmt: skip
    assert caught == {
        "repeat": ("repeat", 3),
        "cycle of 2": ("cycle", 4),
        "cycle of 3": ("cycle", 6),
        "stall": ("stalled", 6),
        "no action": ("no_action", 5),
        "progress, then a repeat": ("repeat", 3),
    }
    assert result["undetected"] == 0 and result["max_wasted_steps"] == 6
