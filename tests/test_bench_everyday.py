"""The everyday benchmark's goals: each checker fails on the start and passes on the reference
solution, and is strict about what a wrong answer looks like."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autonoma.agent.checks import CheckRunner, stated_checks
from autonoma.agent.open_ended import open_ended
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings
from bench.everyday_goals import BY_NAME, GOALS, Goal


def test_there_are_at_least_thirty_goals_with_distinct_names() -> None:
    assert len(GOALS) >= 30
    assert len(BY_NAME) == len(GOALS)


@pytest.mark.parametrize("goal", GOALS, ids=lambda goal: goal.name)
def test_each_checker_fails_on_the_start_and_passes_after_the_solution(
    goal: Goal, tmp_path: Path
) -> None:
    goal.setup(tmp_path)
    assert not goal.check(tmp_path)
    goal.solve(tmp_path)
    assert goal.check(tmp_path)


def test_a_case_sensitive_sort_fails(tmp_path: Path) -> None:
    goal = BY_NAME["sort_ignore_case"]
    goal.setup(tmp_path)
    (tmp_path / "sorted.txt").write_text("Alice\nDave\nFrank\nbob\ncarol\neve\n")
    assert not goal.check(tmp_path)


def test_numbers_returned_as_strings_fail(tmp_path: Path) -> None:
    goal = BY_NAME["parse_numbers_function"]
    (tmp_path / "nums.py").write_text(
        "import re\n\ndef parse_numbers(text):\n    return re.findall(r'\\d+', text)\n"
    )
    assert not goal.check(tmp_path)


def test_a_function_that_hangs_or_crashes_fails(tmp_path: Path) -> None:
    goal = BY_NAME["fizzbuzz_function"]
    (tmp_path / "fizz.py").write_text("def fizzbuzz(n):\n    raise ValueError(n)\n")
    assert not goal.check(tmp_path)
    (tmp_path / "fizz.py").write_text("while True:\n    pass\n")
    assert not goal.check(tmp_path)


def test_the_first_of_three_chained_instructions_alone_fails(tmp_path: Path) -> None:
    goal = BY_NAME["chained_instructions"]
    goal.setup(tmp_path)
    (tmp_path / "answer.txt").write_text("apple\n")
    assert not goal.check(tmp_path)


def test_no_goal_of_the_suite_is_taken_for_one_worded_as_the_writer_likes() -> None:
    # each has one right result, so the judge works it out again rather than saying yes or no
    assert [g.name for g in GOALS if open_ended(g.goal)] == []


needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)


@needs_bwrap
@pytest.mark.parametrize("goal", GOALS, ids=lambda goal: goal.name)
async def test_what_a_goals_words_hold_its_files_to_passes_on_the_solution(
    goal: Goal, tmp_path: Path
) -> None:
    # the checks our programs make from a task's words (formats, line counts, the lines it
    # lists or says to write, case): one that failed on right work would keep a run from ever
    # completing, so each must pass on the suite's reference solution
    start, work = tmp_path / "start", tmp_path / "work"
    goal.setup(start)
    goal.setup(work)
    there = {p.relative_to(start).as_posix() for p in start.rglob("*") if p.is_file()}
    checks = stated_checks(goal.goal, there)
    goal.solve(work)
    runner = CheckRunner(BubblewrapSandbox(SandboxSettings()), Workspace(work), start)
    for check in checks:
        result = await runner.run(check)
        assert result.passed, (check.what, result.output)
