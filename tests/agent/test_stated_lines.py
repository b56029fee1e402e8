"""How many lines a task says a new file holds, held by a check made without the model: which
counts are read, which file each applies to, the program in the real sandbox, and a run whose
four-line haiku the judge passed refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autonoma.agent.checks import CheckRunner
from autonoma.agent.stated_lines import (
    line_checks,
    listed_lines,
    stated_line_count,
    written_lines,
)
from autonoma.testing import act
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings
from tests.agent.helpers import continuous_run

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
HAIKU_TASK = "Write a haiku about autumn to haiku.txt"
FOUR = (
    "Autumn leaves fall,\nSilent whispers of wind,\nPeace in the stillness.\nAutumn leaves fall\n"
)
THREE = "Autumn leaves fall,\n\nSilent whispers of wind,\nPeace in the stillness.\n"


def runner_in(root: Path) -> CheckRunner:
    """A check runner on an empty workspace under `root`, its start empty too."""
    (root / "ws").mkdir()
    (root / "start").mkdir()
    return CheckRunner(BubblewrapSandbox(SandboxSettings()), Workspace(root / "ws"), root / "start")


@pytest.mark.parametrize(
    ("sentence", "count"),
    [
        (HAIKU_TASK, 3),
        ("Write a limerick about a cat to cat.txt", 5),
        ("Write a sonnet to love.txt", 14),
        ("Write exactly 3 lines to colors.txt: red, green and blue, one per line.", 3),
        ("Write two short lines of text to notes.txt", 2),
        ("Write a 5-line poem to poem5.txt", 5),
        # not a count of the new file's lines, or none stated
        ("Write the numbers 1 to 5, one per line, to numbers.txt", None),
        ("Copy the first 3 lines of poem.txt to top.txt", None),
        ("Write three haiku to haikus.txt", None),
        ("Count the lines of poem.txt into count.txt", None),
        ("Write a haiku of 4 lines to odd.txt", None),  # two counts: none is sure
    ],
)
def test_line_counts_are_read_from_verse_forms_and_words(sentence: str, count: int | None) -> None:
    assert stated_line_count(sentence) == count


def test_a_count_applies_to_the_one_new_file_its_sentence_names() -> None:
    assert [c.what for c in line_checks(HAIKU_TASK, set())] == [
        "haiku.txt holds 3 lines, as the task says"
    ]
    # a file the run found: the sentence states what it holds, not what to write
    assert line_checks("poem.txt has 4 lines. Add a fifth line.", {"poem.txt"}) == []
    # two new files in one sentence: which holds the lines is not for a rule to guess
    assert line_checks("Write a haiku to a1.txt and b1.txt", set()) == []
    # a program's source is not its lines
    assert line_checks("Write a 3-line function to tool.py", set()) == []


@needs_bwrap
async def test_the_program_counts_the_lines_that_are_not_blank(tmp_path: Path) -> None:
    runner = runner_in(tmp_path)
    (check,) = line_checks(HAIKU_TASK, set())
    (tmp_path / "ws" / "haiku.txt").write_text(FOUR)
    result = await runner.run(check)
    assert not result.passed
    assert "haiku.txt holds 4 lines that are not blank; the task asks for 3" in result.output
    (tmp_path / "ws" / "haiku.txt").write_text(THREE)
    assert (await runner.run(check)).passed


@needs_bwrap
async def test_a_four_line_haiku_the_judge_passes_is_refused(tmp_path: Path) -> None:
    # bench/agent_demo.py with code actions, seed 0 (2026-11-28): the writer kept only "the
    # haiku is about autumn", and the judge passed four lines
    about = {"goal": 1, "what": "the haiku in haiku.txt is about autumn", "kind": "judged"}
    store, run_id, events = await continuous_run(
        tmp_path / "ws",
        HAIKU_TASK,
        [
            {"checks": [about]},
            {"passed": False, "why": "haiku.txt does not exist"},  # not met before the work
            act("write_file", path="haiku.txt", text=FOUR),
            act("task_complete", reason="the haiku is written"),
            {"passed": True, "why": "it is about autumn"},  # the judge
            act("write_file", path="haiku.txt", text=THREE),
            {"passed": True, "why": "it is about autumn"},
        ],
    )
    (written,) = [e.data for e in events if e.kind == "checks_written"]
    assert [c["what"] for c in written["checks"]] == [
        "the haiku in haiku.txt is about autumn",
        "haiku.txt holds 3 lines, as the task says",
    ]
    steps = store.steps(run_id)
    assert not steps[1].ok
    assert "haiku.txt holds 4 lines that are not blank; the task asks for 3" in (
        steps[1].observation or ""
    )
    assert len(steps) == 3 and steps[2].ok


COLORS = "Write exactly 3 lines to colors.txt: red, green and blue, one per line."


@pytest.mark.parametrize(
    ("sentence", "listed"),
    [
        (COLORS, ["red", "green", "blue"]),
        ("Write three lines to todo.txt: buy milk, call mom, and pay rent.",
         ["buy milk", "call mom", "pay rent"]),
        ('Write "red", "green" and "blue" to c.txt, one per line.', ["red", "green", "blue"]),
        ("Write 'eggs', 'milk' to shop.txt, each on its own line.", ["eggs", "milk"]),
        # what the lines are about, not the lines: no list
        ("Write 2 lines to out.txt: the first and last names.", None),
        ("Write exactly 3 lines to c.txt: your three favourite colours.", None),
        ("Write to out.txt: names and ages, one per line.", None),  # no count, unquoted
        ("Write 2 lines to out.txt: red, green and blue.", None),  # as many as it counts, or none
        ('Write "a" and "b" to out.txt.', None),  # quoted, but no line said
        ("It's in there: write 'a' and 'b' to out.txt, one per line.", None),  # an apostrophe
        ("Write 2 lines to out.txt: Alice's age and Bob's age.", None),  # what to find
    ],
)  # fmt: skip
def test_the_lines_a_task_lists_are_read_in_order(sentence: str, listed: list[str] | None) -> None:
    target = next(n for n in ("colors.txt", "todo.txt", "c.txt", "shop.txt", "out.txt")
                  if n in sentence)  # fmt: skip
    assert listed_lines(sentence, target, stated_line_count(sentence)) == listed


@needs_bwrap
async def test_three_lines_that_are_not_the_listed_ones_fail(tmp_path: Path) -> None:
    # the judge benchmark: the 1.5B judge passed 1, 4 and 9 as red, green and blue, and the
    # count check passes any three lines
    runner = runner_in(tmp_path)
    (check,) = line_checks(COLORS, set())
    assert check.what == "colors.txt holds the lines the task lists, one a line: red, green, blue"
    for wrong in ("1\n4\n9\n", "blue\ngreen\nred\n", "red\ngreen\n"):
        (tmp_path / "ws" / "colors.txt").write_text(wrong)
        result = await runner.run(check)
        assert not result.passed and "the task lists ['red', 'green', 'blue']" in result.output
    (tmp_path / "ws" / "colors.txt").write_text("red\n\ngreen  \nblue")
    assert (await runner.run(check)).passed


def test_unquoted_items_of_a_task_that_reads_a_file_name_what_to_compute() -> None:
    task = "Read nums.txt. Write 3 lines to stats.txt: sum, mean and max."
    assert [c.what for c in line_checks(task, {"nums.txt"})] == [
        "stats.txt holds 3 lines, as the task says"
    ]
    # quoted, they are the lines whatever the task reads
    quoted = "Read nums.txt and write 'low' and 'high' to out.txt, one per line."
    assert [c.what for c in line_checks(quoted, {"nums.txt"})] == [
        "out.txt holds the lines the task lists, one a line: low, high"
    ]
    # a file the run found but the task does not name is not read: three_lines' palette.txt
    colors = "Write exactly 3 lines to colors.txt: red, green and blue, one per line."
    assert "red, green, blue" in line_checks(colors, {"palette.txt"})[0].what


APPEND = "Write the line 'started' to log.txt, then append the line 'finished' to log.txt."


@pytest.mark.parametrize(
    ("task", "lines"),
    [
        (APPEND, ["started", "finished"]),
        ("Write 'hello world' to hello.txt.", ["hello world"]),
        ('Create a file called note.md containing the line "buy milk".', ["buy milk"]),
        ("First write the line 'a' to steps.txt. Then add the line 'b' at the end of steps.txt.",
         ["a", "b"]),
        ("Write \"don't panic\" to towel.txt", ["don't panic"]),
        # words that change what the file holds, or say more than the lines
        ("Write the word 'hello' to hello.txt in capital letters.", None),
        ("Write the line 'hi' to hi.txt twice.", None),
        ("Write the line 'b' to out.txt, then add the line 'a' before it.", None),
        ("Write 'b' to out.txt with 'a' as its first line.", None),
        ("Write the line 'x' to out.txt 3 times.", None),
        ("Write 'a' + 'b' to out.txt.", None),
        ("Write 'a', 'b' and 'c' to out.txt.", None),  # one line or three: not said
        ("Write the line 'it's done' to out.txt.", None),  # an apostrophe: no sure quote
        ("Write 'hello' to a1.txt and to b1.txt.", None),  # two files
        ("Write '{\"a\": 1}' to config.json.", None),  # JSON may be laid out any way
        ("Write a haiku about autumn to haiku.txt", None),  # nothing quoted
    ],
)  # fmt: skip
def test_the_lines_a_task_says_to_write_are_read_in_order(
    task: str, lines: list[str] | None
) -> None:
    written = written_lines(task, set())
    assert (written[1] if written else None) == lines


def test_a_file_the_run_found_is_appended_to_not_written_whole() -> None:
    assert written_lines("Append the line 'finished' to log.txt.", {"log.txt"}) is None
    assert line_checks("Append the line 'finished' to log.txt.", {"log.txt"}) == []
    assert [c.what for c in line_checks(APPEND, set())] == [
        "log.txt holds the lines the task lists, one a line: started, finished"
    ]


@needs_bwrap
async def test_a_write_then_append_the_judge_passed_is_refused(tmp_path: Path) -> None:
    # rest8_1202 (436b9db): every check the writer offered was sent back, and the yes-or-no
    # judge passed log.txt holding 'started' alone
    workspace = tmp_path / "ws"
    store, run_id, events = await continuous_run(
        workspace,
        APPEND,
        [
            {"checks": []},
            {"checks": []},
            {"checks": []},
            act("write_file", path="log.txt", text="started\n"),
            act("task_complete", reason="log.txt holds started; appending changes nothing"),
            {"passed": True, "why": "log.txt already contains 'started'"},  # the judge
            act("append_file", path="log.txt", text="finished\n"),
            act("task_complete", reason="both lines are written"),
            {"passed": True, "why": "log.txt holds both lines"},
        ],
        max_steps=5,
    )
    (written,) = [e.data for e in events if e.kind == "checks_written"]
    assert "log.txt holds the lines the task lists, one a line: started, finished" in [
        c["what"] for c in written["checks"]
    ]
    steps = store.steps(run_id)
    assert not steps[1].ok
    assert "log.txt holds the lines ['started']" in (steps[1].observation or "")
    assert (workspace / "log.txt").read_text() == "started\nfinished\n"
