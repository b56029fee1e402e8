"""Acceptance checks: written before the work, run in the real sandbox against the workspace
(read-only, the start readable through before()), sent back when they cannot fail."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autonoma.agent.check_types import Check
from autonoma.agent.checks import (
    BY_LINE_NOTE,
    TOLERATED_NOTE,
    CheckRunner,
    CheckWriter,
    checks_from_text,
    checks_to_text,
)
from autonoma.agent.judge import Judge
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetSpent as SPENT
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)

SORTED = Check(
    goal=1,
    what="sorted.txt holds names.txt's lines sorted ignoring case",
    code="expected = sorted(open('names.txt').read().split(), key=str.lower)\n"
    "got = open('sorted.txt').read().split()\n"
    "assert got == expected, f'sorted.txt holds {got}, expected {expected}'",
)


def code(what: str, source: str, goal: int = 1) -> dict[str, object]:
    return {"goal": goal, "what": what, "kind": "code", "code": source}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "names.txt").write_text("bob\nAlice\ncarol\n")
    return Workspace(root)


@pytest.fixture
def runner(workspace: Workspace, tmp_path: Path) -> CheckRunner:
    start = tmp_path / "start"
    shutil.copytree(workspace.root, start)
    return CheckRunner(BubblewrapSandbox(SandboxSettings()), workspace, start)


def test_the_edit_format_round_trips_and_names_what_is_wrong() -> None:
    judged = Check(goal=2, what="the poem is about rain", kind="judged")
    text = checks_to_text([SORTED, judged])
    assert checks_from_text(text) == [SORTED, judged]
    assert checks_from_text("# only comments\n") == []
    with pytest.raises(ValueError, match="line 2: not a check header"):
        checks_from_text("# x\n## chek code: typo\n")
    with pytest.raises(ValueError, match="has no code"):
        checks_from_text("## check code goal 1: empty\n\n")


@needs_bwrap
async def test_a_check_fails_before_the_work_and_passes_after(
    runner: CheckRunner, workspace: Workspace
) -> None:
    before = await runner.run(SORTED)
    assert not before.passed and "FileNotFoundError" in before.output
    (workspace.root / "sorted.txt").write_text("Alice\ncarol\nbob\n")
    wrong = await runner.run(SORTED)
    assert not wrong.passed
    assert "AssertionError: sorted.txt holds ['Alice', 'carol', 'bob']" in wrong.output
    (workspace.root / "sorted.txt").write_text("Alice\nbob\ncarol\n")
    assert (await runner.run(SORTED)).passed


@needs_bwrap
async def test_a_check_cannot_change_the_workspace_and_sees_the_start(
    runner: CheckRunner, workspace: Workspace
) -> None:
    (workspace.root / "names.txt").write_text("changed\n")
    writes = Check(what="tries to write", code="open('names.txt', 'w').write('gone')")
    result = await runner.run(writes)
    assert not result.passed and "Read-only file system" in result.output
    assert (workspace.root / "names.txt").read_text() == "changed\n"
    start = Check(
        what="reads the start", code="assert before('names.txt') == 'bob\\nAlice\\ncarol\\n'"
    )
    assert (await runner.run(start)).passed
    (workspace.root / "mod.py").write_text("def f():\n    return 3\n")
    imports = Check(
        what="imports a module of the workspace", code="from mod import f\nassert f() == 3"
    )
    assert (await runner.run(imports)).passed


@needs_bwrap
async def test_a_files_final_newline_is_not_its_content(
    runner: CheckRunner, workspace: Workspace
) -> None:
    # the 1.5B writer's check of "red, green and blue, one per line" (a planned run in CI)
    exact = Check(
        what="colors.txt holds red, green and blue, one per line",
        code="got = open('colors.txt').read().split('\\n')\n"
        "assert got == ['red', 'green', 'blue'], got",
    )
    (workspace.root / "colors.txt").write_text("red\ngreen\nblue\n\n")
    passed = await runner.run(exact)
    assert passed.passed and passed.output == TOLERATED_NOTE
    # nor a blank line before the first (reverse_lines, part_1202: the lines reversed after one)
    (workspace.root / "colors.txt").write_text("\nred\ngreen\nblue\n")
    passed = await runner.run(exact)
    assert passed.passed and passed.output == TOLERATED_NOTE
    (workspace.root / "colors.txt").write_text("red\n\ngreen\nblue\n")  # one inside: no
    assert not (await runner.run(exact)).passed
    without = Check(
        what="colors.txt holds the three colours",
        code=(
            "from pathlib import Path\n"
            "assert Path('colors.txt').read_text() == 'red\\ngreen\\nblue\\n'"
        ),
    )
    (workspace.root / "colors.txt").write_text("red\ngreen\nblue")
    assert (await runner.run(without)).passed
    # what the file says is still checked, and the first failure is the one reported
    (workspace.root / "colors.txt").write_text("red\nblue\ngreen\n")
    wrong = await runner.run(exact)
    assert not wrong.passed and "['red', 'blue', 'green', '']" in wrong.output
    # the start is read as it was
    start = Check(what="the start", code="assert before('names.txt').endswith('\\n\\n')")
    assert not (await runner.run(start)).passed


@needs_bwrap
async def test_a_check_going_through_a_start_text_goes_through_its_lines(
    runner: CheckRunner, workspace: Workspace
) -> None:
    # the 1.5B writer's check of "the lines of names.txt sorted, ignoring case" (sorted letters)
    lines = Check(
        what="sorted.txt holds the lines of names.txt sorted, ignoring case",
        code="expected = sorted(before('names.txt'), key=str.lower)\n"
        "got = open('sorted.txt').read().splitlines()\n"
        "assert got == expected, f'{got} != {expected}'",
    )
    (workspace.root / "sorted.txt").write_text("Alice\nbob\ncarol\n")
    right = await runner.run(lines)
    assert right.passed and right.output == BY_LINE_NOTE
    (workspace.root / "sorted.txt").write_text("bob\nAlice\ncarol\n")
    wrong = await runner.run(lines)
    assert not wrong.passed  # and said of the lines, not of letters
    assert "['bob', 'Alice', 'carol'] != ['Alice', 'bob', 'carol']" in wrong.output
    # a check that means the characters passes on its first run, as written
    letters = Check(
        what="names.txt has five lowercase vowels",
        code="assert sum(c in 'aeiou' for c in before('names.txt')) == 5",
    )
    counted = await runner.run(letters)
    assert counted.passed and counted.output == ""
    csv_rows = Check(
        what="three names",
        code="import csv\nassert len(list(csv.reader(before('names.txt')))) == 3",
    )
    assert (await runner.run(csv_rows)).passed


@needs_bwrap
async def test_a_check_about_line_endings_is_run_as_written(
    runner: CheckRunner, workspace: Workspace
) -> None:
    (workspace.root / "data.txt").write_text("a,b")
    ends = Check(
        what="data.txt ends with a newline",
        code="text = open('data.txt').read()\nassert text[-1:] == '\\n', repr(text)",
    )
    result = await runner.run(ends)
    assert not result.passed and "'a,b'" in result.output
    (workspace.root / "data.txt").write_text("a,b\n")
    kept = Check(
        what="data.txt keeps its text",
        code="assert not open('data.txt').read().endswith('\\n')",
    )
    assert not (await runner.run(kept)).passed


@needs_bwrap
async def test_a_check_that_cannot_fail_or_is_broken_is_sent_back(
    runner: CheckRunner, workspace: Workspace
) -> None:
    model = ScriptedModel(
        [
            {
                "checks": [
                    code(
                        "names.txt exists",
                        "import os\nassert os.path.exists('names.txt') or os.path.exists('sorted.txt')",
                    ),
                    code(
                        "uses a name it never set",
                        "assert result == len(open('sorted.txt').read())",
                    ),
                    code("not Python", "assert (("),
                    code(  # sorted.txt is made by the work: it was not there before it
                        "sorted.txt is as it was",
                        "assert open('sorted.txt').read() == before('sorted.txt')",
                    ),
                    code(
                        "sorted.txt is as it was, read the other way",
                        "name = 'sorted.txt'\nassert before(name) == open(name).read()",
                    ),
                ]
            },
            {"checks": [SORTED.model_dump()]},
        ]
    )
    written = await CheckWriter(model, runner).write(
        "Sort names.txt ignoring case into sorted.txt", ["Write sorted.txt"], workspace, SPENT()
    )
    assert written.checks == [SORTED]
    assert len(written.discarded) == 5
    assert "passes on the workspace as it is now" in written.discarded[0]
    assert "is broken" in written.discarded[1] and "NameError" in written.discarded[1]
    assert "is not valid Python" in written.discarded[2]
    assert (
        "reads before('sorted.txt'), but sorted.txt is not in the workspace before the work"
        in (written.discarded[3])
    )
    assert "is broken" in written.discarded[4]  # a name the code computes: found by running it
    assert (
        "NotThereBefore: before('sorted.txt'): sorted.txt was not in the workspace"
        in (written.discarded[4])
    )
    reask = model.requests[1].messages[0].content
    assert "Your last checks had problems" in reask and "cannot tell done" in reask
    first = model.requests[0].messages[0].content
    assert "names.txt:\n    bob\n    Alice" in first  # the writer sees the files it checks
    assert written.usage.total_tokens > 0


@needs_bwrap
async def test_a_check_importing_a_module_no_goal_makes_is_sent_back(
    runner: CheckRunner, workspace: Workspace
) -> None:
    # the 1.5B writer checked an API's figures with `import requests`: not where checks run
    fetching = code(
        "summary.txt holds the API's figures",
        "import requests\nassert open('summary.txt').read() == requests.get('http://x').text",
    )
    made_by_the_work = code(  # a module the goal asks for is missing until the work is done
        "sorter.sort_names sorts ignoring case",
        "import sorter\nassert sorter.sort_names(['b', 'A']) == ['A', 'b']",
    )
    model = ScriptedModel(
        [{"checks": [fetching, made_by_the_work]}, {"checks": [made_by_the_work]}]
    )

    written = await CheckWriter(model, runner).write(
        "Write sorter.py with sort_names, and the API figures to summary.txt",
        [],
        workspace,
        SPENT(),
    )
    assert [c.what for c in written.checks] == ["sorter.sort_names sorts ignoring case"], (
        written.discarded
    )
    [sent_back] = written.discarded
    assert "imports requests, which is not installed where checks run" in sent_back


@needs_bwrap
async def test_a_check_that_passes_on_a_wrong_file_is_sent_back(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """Each check runs on a copy of the workspace whose files to make hold junk, then the
    words the check looks for quoted and run together ('red''green''blue', what the 1.5B
    model appended one colour at a time in CI): a check passing either cannot tell a wrong
    file from the right one. Inputs are there in the copy, so checks that read them work."""
    exists = code("colors.txt is there", "import os\nassert os.path.exists('colors.txt')")
    anything = code("colors.txt has text", "assert open('colors.txt').read().strip()")
    anywhere = code(
        "colors.txt names the colours",
        "t = open('colors.txt').read()\nassert all(w in t for w in ['red', 'green', 'blue'])",
    )
    good = [
        code("colors.txt holds the colours, one a line", "assert open('colors.txt').read().splitlines() == ['red', 'green', 'blue']"),
        code("colors.txt holds the colours", "got = open('colors.txt').read().split()\nassert got == ['red', 'green', 'blue'], f'{got} in colors.txt'"),
        code("first.txt holds the first name", "assert open('first.txt').read().strip() == open('names.txt').read().split()[0]"),
    ]  # fmt: skip
    model = ScriptedModel([{"checks": [exists, anything, anywhere, *good]}, {"checks": good}])
    written = await CheckWriter(model, runner).write(
        "Write red, green and blue, one per line, to colors.txt, and the first name of "
        "names.txt to first.txt",
        ["Write colors.txt", "Write first.txt"],
        workspace,
        SPENT(),
    )
    assert [c.what for c in written.checks] == [g["what"] for g in good]
    assert len(written.discarded) == 3
    assert "passes when colors.txt holds anything" in written.discarded[0]
    assert "passes when colors.txt holds anything" in written.discarded[1]
    assert "quoted and run together ('red''green''blue')" in written.discarded[2]


@needs_bwrap
async def test_a_check_of_the_inputs_alone_or_without_an_assert_is_sent_back(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """It fails before the work and would fail after it too: it reads none of the files the
    work must make. A module the goal names counts as read when the check imports it. A check
    without an assert checks only that a file can be read."""
    count = "expected = len(open('names.txt').read().splitlines())\n"
    inputs_only = code(  # count.txt only in the message: not what it reads
        "names.txt is counted",
        count + "assert open('names.txt').read() == expected, f'count.txt has {expected}'",
    )
    compared = code(  # the planned e2e's title check: count.txt is a value, not a file read
        "count.txt holds the count", count + "assert str(expected) == 'count.txt'"
    )
    good = [
        code("count.txt holds the count", count + "assert open('count.txt').read().strip() == str(expected)"),
        code("count_lines in counter.py counts", "from counter import count_lines\nassert count_lines('names.txt') == 3"),
    ]  # fmt: skip
    no_assert = code("count.txt is read", "n = int(open('count.txt').read())")
    model = ScriptedModel([{"checks": [inputs_only, no_assert, compared, *good]}, {"checks": good}])
    written = await CheckWriter(model, runner).write(
        "Write the number of lines of names.txt to count.txt, and a function count_lines in "
        "counter.py",
        ["Write the count to count.txt", "Write counter.py"],
        workspace,
        SPENT(),
    )
    assert [c.what for c in written.checks] == [
        "count.txt holds the count",
        "count_lines in counter.py counts",
    ]
    assert len(written.discarded) == 3
    assert "asserts nothing" in written.discarded[1]
    for discarded in (written.discarded[0], written.discarded[2]):
        assert "reads none of the files the work must make (count.txt, counter.py)" in discarded


async def test_a_check_about_a_file_no_one_named_is_another_tasks_and_is_sent_back(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """The 1.5B writer, asked to count ERROR lines, gave back its prompt's example "the haiku
    in haiku.txt is about autumn"; judged, it failed for want of haiku.txt and the run could
    never finish. A path the goal writes differently (a folder before it) is the same file."""
    haiku = {
        "goal": 1,
        "what": "the haiku in haiku.txt is about autumn",
        "kind": "judged",
        "code": "",
    }
    stray = code("out.txt holds 3", "assert open('other/stats.txt').read().strip() == '3'")
    good = code("out.txt holds the count", "assert open('results/out.txt').read().strip() == '3'")
    model = ScriptedModel([{"checks": [haiku, stray, good]}, {"checks": [good]}])
    written = await CheckWriter(model, runner, judge=Judge(model)).write(
        "Count the names of names.txt into out.txt",
        ["Write the count to out.txt"],
        workspace,
        SPENT(),
    )
    assert [c.what for c in written.checks] == ["out.txt holds the count"]
    assert (
        "is about haiku.txt, which neither the task nor the workspace names" in written.discarded[0]
    )
    assert "is about other/stats.txt" in written.discarded[1]
    assert len(model.requests) == 2  # two rounds, no judge: the file rule sent it back first


async def test_without_a_sandbox_only_judged_checks_are_kept(workspace: Workspace) -> None:
    judged = {"goal": 1, "what": "the list reads well", "kind": "judged", "code": ""}
    model = ScriptedModel([{"checks": [code("x", "assert False"), judged]}, {"checks": [judged]}])
    written = await CheckWriter(model, None).write(
        "Tidy the list", ["Tidy names.txt"], workspace, SPENT()
    )
    assert [c.kind for c in written.checks] == ["judged"]
    assert "code cannot run here" in written.discarded[0]
    assert 'Write 1 to 4 "judged" checks' in model.requests[0].messages[0].content


async def test_a_model_that_never_writes_usable_checks_is_reported(workspace: Workspace) -> None:
    model = ScriptedModel(["not json at all"] * 3)  # the model layer's own two re-asks
    written = await CheckWriter(model, None).write("x", ["y"], workspace, SPENT())
    assert written.checks == [] and written.error
    assert model.remaining == 0  # and no further round of its own


async def test_a_judged_check_already_met_before_the_work_is_sent_back(
    workspace: Workspace,
) -> None:
    vacuous = {"goal": 1, "what": "the workspace is not empty", "kind": "judged", "code": ""}
    real = {"goal": 1, "what": "tidy.txt lists the names tidily", "kind": "judged", "code": ""}
    model = ScriptedModel(
        [
            {"checks": [vacuous]},
            {"passed": True, "why": "names.txt is there"},  # judged on the start: met already
            {"checks": [real]},
        ]
    )
    spent = SPENT()
    written = await CheckWriter(model, None, judge=Judge(model)).write(
        "Tidy the list into tidy.txt", ["Write tidy.txt"], workspace, spent
    )
    assert [c.what for c in written.checks] == ["tidy.txt lists the names tidily"]
    assert "is met already, before any work" in written.discarded[0]
    assert len(model.requests) == 3  # tidy.txt is not there: failed without asking the judge
    assert spent.prompt_tokens > 0  # the judge's calls are charged as they are made


async def test_a_judged_check_of_a_file_not_there_fails_without_asking(
    workspace: Workspace,
) -> None:
    model = ScriptedModel([{"passed": True, "why": "a fine haiku about autumn"}])
    judge = Judge(model)
    about = Check(what="the haiku in haiku.txt is about autumn", kind="judged")
    result = await judge.judge(about, "Write a haiku to haiku.txt", [], workspace, SPENT())
    assert (result.passed, result.output) == (False, "haiku.txt does not exist")
    assert not model.requests
    (workspace.root / "haiku.txt").write_text("red leaves fall\n")
    assert (await judge.judge(about, "Write a haiku", [], workspace, SPENT())).passed
    # the judge sees the files the criterion names, with their sizes: the 1.5B judge, shown
    # none, called a three-line file "a one-line title"
    assert "haiku.txt (1 line, 16 characters):\nred leaves fall" in (
        model.requests[0].messages[0].content
    )


async def test_the_judge_sees_a_changed_file_as_it_was_and_the_files_files_name(
    workspace: Workspace, tmp_path: Path
) -> None:
    """Two wrong results the 1.5B judge passed, shown only the named files as they were at the
    end: config.json rewritten with a setting lost, and the first file's pointer copied as
    the access code, the file it points to never seen."""
    start = tmp_path / "start"
    start.mkdir()
    (start / "config.json").write_text('{"name": "shop", "retries": 3, "debug": true}')
    (workspace.root / "config.json").write_text('{"name": "shop", "debug": false}')
    (start / "start.txt").write_text("The code is in clue.txt.\n")
    for name, text in [("start.txt", "The code is in clue.txt.\n"), ("clue.txt", "8142\n")]:
        (workspace.root / name).write_text(text)
    (workspace.root / "code.txt").write_text("The code is in clue.txt.\n")
    (tmp_path / "secret.txt").write_text("outside")
    model = ScriptedModel([{"why": "w", "passed": False}] * 3)
    judge = Judge(model, start=start)
    check = Check(what="debug is false, the rest kept", kind="judged")
    await judge.judge(check, "In config.json set debug to false", [], workspace, SPENT())
    shown = model.requests[0].messages[0].content
    assert '"debug": false}' in shown
    # the clock, for a result about the current time (it passed "01:30" for Tokyo at 07:58)
    assert re.search(r"The time now is \w+day \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)", shown)
    assert 'config.json as it was before the work:\n{"name": "shop", "retries": 3' in shown
    check = Check(what="code.txt holds the code alone", kind="judged")
    await judge.judge(check, "start.txt says where the code is", [], workspace, SPENT())
    shown = model.requests[1].messages[0].content
    assert "clue.txt, which a file above names (1 line, 5 characters):\n8142" in shown
    assert "start.txt as it was" not in shown  # unchanged: shown once
    # a name leading out of the start copy shows nothing of what it leads to
    check = Check(what="../secret.txt is kept", kind="judged")
    (workspace.root / "secret.txt").write_text("inside")
    await judge.judge(check, "Keep ../secret.txt", [], workspace, SPENT())
    assert "outside" not in model.requests[2].messages[0].content


@needs_bwrap
async def test_a_failure_is_named_by_its_error_when_the_message_spans_lines(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """An f-string of a file's text puts line breaks in the message: the error is still an
    AssertionError (a check that fails for a reason), its message whole and on one line."""
    (workspace.root / "sorted.txt").write_text("bob\nAlice\n")
    check = Check(
        what="sorted.txt is sorted",
        code="got = open('sorted.txt').read()\nassert got == 'Alice\\nbob\\n', f'got {got}, no'",
    )
    result = await runner.run(check)
    assert not result.passed
    assert result.output == (
        "AssertionError: got bob Alice , no (line 2 of the check) "
        "(the same lines in another order; got has 'bob' where expected has 'Alice')"
    )
    long = Check(what="long", code="assert False, 'x' * 1000")
    said = (await runner.run(long)).output
    assert said.startswith("AssertionError: xxx") and said.endswith("… (line 1 of the check)")
    (workspace.root / "pal.py").write_text("def is_palindrome(t):\n    t = t\n        return t\n")
    imports = Check(what="pal", code="from pal import is_palindrome\nassert is_palindrome('ab')")
    said = (await runner.run(imports)).output  # the work's file is broken, not the check
    assert said.startswith("IndentationError: unexpected indent")
    assert said.endswith("(in pal.py, line 3, reached from line 1 of the check)")
    model = ScriptedModel([{"checks": [check.model_dump()]}])
    (workspace.root / "sorted.txt").unlink()
    (workspace.root / "sorted.txt").write_text("bob\n")
    written = await CheckWriter(model, runner).write(
        "Sort", ["Write sorted.txt"], workspace, SPENT()
    )
    assert written.checks == [check] and not written.discarded


@needs_bwrap
async def test_checks_are_asked_a_third_time_when_two_rounds_fail(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """count_lines on the 1.5B model: its first check passed before the work, its second read a
    name it never set; a third round is asked, and no fourth."""
    passes = code("names.txt has lines", "assert len(open('names.txt').read().splitlines()) > 0")
    undefined = code(
        "sorted.txt is sorted",
        "expected = sorted(names, key=str.lower)\nassert open('sorted.txt').read().split() == expected",
    )
    model = ScriptedModel(
        [{"checks": [passes]}, {"checks": [undefined]}, {"checks": [SORTED.model_dump()]}]
    )
    written = await CheckWriter(model, runner).write(
        "Sort names.txt ignoring case into sorted.txt", ["Write sorted.txt"], workspace, SPENT()
    )
    assert written.checks == [SORTED] and len(model.requests) == 3
    # re-asked hotter: at the first temperature the writer wrote the same broken check again
    assert [r.temperature for r in model.requests] == [0.2, 0.7, 0.7]
    assert "NameError" in model.requests[2].messages[0].content  # the second round's problem

    never = ScriptedModel([{"checks": [undefined]}] * 4)
    written = await CheckWriter(never, runner).write(
        "Sort names.txt ignoring case into sorted.txt", ["Write sorted.txt"], workspace, SPENT()
    )
    assert written.checks == [] and never.remaining == 1 and "NameError" in written.error


@needs_bwrap
async def test_a_code_check_sent_back_cannot_come_back_judged(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """count_lines on the 1.5B model: its code check was sent back, it wrote the same criterion
    as judged, and its judge then passed a wrong count."""
    what = "sorted.txt holds the names sorted ignoring case"
    passes = code(what, "import os\nassert os.path.exists('names.txt') or 'sorted.txt'")
    judged = {"goal": 1, "what": what.upper(), "kind": "judged", "code": ""}
    model = ScriptedModel(
        [{"checks": [passes]}, {"checks": [judged]}, {"checks": [SORTED.model_dump()]}]
    )
    written = await CheckWriter(model, runner, judge=Judge(model)).write(
        "Sort names.txt ignoring case into sorted.txt", ["Write sorted.txt"], workspace, SPENT()
    )
    assert written.checks == [SORTED]
    assert "a program can decide it" in written.discarded[1]
    assert "a program can decide it" in model.requests[2].messages[0].content
    # a form that could not even be made into a program counts as written as code: the time
    # in Tokyo, sent back as a function form, came back judged and the judge passed a guess
    # (a function form cannot be written for it now: the same with an expression not Python)
    what = "tokyo.txt holds the time in Tokyo now"
    unmade = {"goal": 1, "what": what, "kind": "file", "file": "tokyo.txt", "holds": "text",
              "expected": "datetime.now(ZoneInfo('Asia/Tokyo').strftime('%H:%M')"}  # fmt: skip
    timed = code(what, "import os\nassert os.path.exists('tokyo.txt'), 'no tokyo.txt'")
    model = ScriptedModel(
        [{"checks": [unmade]}, {"checks": [{"goal": 1, "what": what, "kind": "judged"}]},
         {"checks": [timed]}]
    )  # fmt: skip
    written = await CheckWriter(model, runner, judge=Judge(model)).write(
        "Write the time in Tokyo to tokyo.txt", ["Write tokyo.txt"], workspace, SPENT()
    )
    assert "which is not one Python expression" in written.discarded[0]
    assert "a program can decide it" in written.discarded[1]


@needs_bwrap
async def test_a_check_comparing_values_that_are_never_equal_is_found_broken(
    runner: CheckRunner, workspace: Workspace
) -> None:
    (workspace.root / "count.txt").write_text("3\n")
    text_and_list = Check(
        what="names.txt reversed",
        code="expected = open('names.txt').read().splitlines()[::-1]\n"
        "got = open('names.txt').read()\nassert got == expected, got",
    )
    text_and_number = Check(what="three", code="assert open('count.txt').read().strip() == 3")
    same_kinds = Check(what="two", code="assert open('count.txt').read().strip() == '2'")
    in_a_function = Check(
        what="in a function",
        code="def check():\n    got = open('count.txt').read()\n    assert got == [3]\ncheck()",
    )
    a_set = Check(what="a set", code="assert set(open('count.txt').read()) == ['3']")
    results = [await runner.run(c) for c in (text_and_list, text_and_number)]
    assert [r.broken for r in results] == [
        "line 3 compares a text with a list",
        "line 1 compares a text with a number",
    ]
    assert all(not r.passed and "AssertionError" in r.output for r in results)
    assert (await runner.run(same_kinds)).broken == ""
    assert (await runner.run(in_a_function)).broken == "line 3 compares a text with a list"
    assert (await runner.run(a_set)).broken == ""  # kinds it does not judge: it stays, failing


@needs_bwrap
async def test_a_check_that_writes_is_sent_back(runner: CheckRunner, workspace: Workspace) -> None:
    """The workspace is read-only to a check: one that writes fails whatever the work does
    (the 1.5B writer's check of the time in Tokyo wrote the time it computed into tokyo.txt)."""
    writes = code(
        "tokyo.txt holds the time",
        "import os\nassert os.path.exists('tokyo.txt')\nopen('tokyo.txt', 'w').write('12:00')",
    )
    removes = code(
        "first.txt is read", "import os\nassert open('first.txt').read()\nos.remove('first.txt')"
    )
    reads = code(
        "first.txt holds the first name, spaces aside",
        "got = open('first.txt').read().replace(' ', '')\nassert got.strip() == 'bob', got",
    )
    model = ScriptedModel([{"checks": [writes, removes, reads]}, {"checks": [reads]}])
    written = await CheckWriter(model, runner).write(
        "Write the first name to first.txt and the time in Tokyo to tokyo.txt",
        ["Write first.txt", "Write tokyo.txt"],
        workspace,
        SPENT(),
    )
    assert [c.what for c in written.checks] == [reads["what"]]
    assert "writes 'tokyo.txt', but a check only reads" in written.discarded[0]
    assert "writes through os.remove('first.txt')" in written.discarded[1]


@needs_bwrap
async def test_a_failed_check_names_how_the_lines_differ(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """folder_index (mend2_1129): shown "holds the lines ['notes/apples.md', ...], expected
    ['apples.md', ...]" for eight steps, the 1.5B model never stripped the folder."""
    (workspace.root / "index.txt").write_text("notes/apples.md\nnotes/figs.md\n")
    lines = Check(
        what="index.txt holds the names",
        code="got = open('index.txt').read().splitlines()\nexpected = ['apples.md', 'figs.md']\n"
        "assert got == expected, f'index.txt holds the lines {got}, expected {expected}'",
    )
    result = await runner.run(lines)
    assert not result.passed and result.broken == ""
    assert result.output.startswith("AssertionError: index.txt holds the lines")
    assert "(got has 'notes/apples.md' where expected has 'apples.md': a folder" in result.output
    assert "os.path.basename(path) gives the name alone" in result.output
    # a difference with no name adds nothing; values that are not lines neither
    (workspace.root / "index.txt").write_text("3\n")
    number = Check(what="three", code="assert int(open('index.txt').read()) == 4")
    assert (await runner.run(number)).output == "AssertionError (line 1 of the check)"


@pytest.mark.parametrize(
    ("got", "expected", "said"),
    [
        (["b", "a"], ["a", "b"], "the same lines in another order; got has 'b' where"),
        (["Bob", "al"], ["bob", "al"], "the same lines but for the letters' case; got has 'Bob'"),
        ([" a", "b"], ["a", "b"], "the same lines but for spaces at their ends"),
        (["a", "", "b", ""], ["a", "b"], "got has 2 blank lines more, the rest the same"),
        (["tape 3", "glue 1"], ["tape", "glue"], "each line holds more than the line expected"),
        (["tape", "glue"], ["tape 3", "glue 1"], "each line holds less than the line expected"),
        (
            ["n,a", "Ana,is,31"],
            ["n,a", "Ana,31"],
            "'Ana,is,31' where expected has 'Ana,31'; 1 of 2",
        ),
        (
            ["a", "b", "c"],
            ["a", "d"],
            "3 lines where 2 are expected; missing 'd'; not expected 'b'",
        ),
        (["apples.md"], ["notes/apples.md"], "expected has the folder before each name"),
    ],
)
def test_differences_between_lines_are_named(
    got: list[str], expected: list[str], said: str
) -> None:
    from autonoma.agent.check_harness import _gap

    assert said in _gap(got, expected, "got", "expected")


async def test_a_function_form_can_be_written_only_where_the_task_asks_for_python(
    runner: CheckRunner, workspace: Workspace
) -> None:
    """order_value (code_head_1129): the writer chose a function form for "Write the total
    value ... to value.txt" three rounds running; the run fell back to the task judged, and
    the judge's own arithmetic refused the right total. Under the grammar it cannot now."""
    import json

    plain = ScriptedModel([{"checks": [SORTED.model_dump()]}])
    await CheckWriter(plain, runner).write(
        "Sort names.txt ignoring case into sorted.txt", ["Write sorted.txt"], workspace, SPENT()
    )
    python = ScriptedModel([{"checks": [SORTED.model_dump()]}])
    await CheckWriter(python, runner).write(
        "Write a function in sort.py that sorts names.txt ignoring case into sorted.txt",
        ["Write sort.py"], workspace, SPENT(),
    )  # fmt: skip
    assert "FunctionForm" not in json.dumps(plain.requests[0].schema)
    assert "FunctionForm" in json.dumps(python.requests[0].schema)
