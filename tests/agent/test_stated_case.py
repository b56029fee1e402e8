"""The letter case a task states for a new file, held by a check made without the model, and
values typed against it sent back every time: which cases are read, which file a check is
for, the writer's forms, and a run in the real sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from autonoma.agent.check_forms import Form
from autonoma.agent.checks import made_checks
from autonoma.agent.stated_case import against_case, case_checks, recases_input, stated_case
from autonoma.llm import ScriptedModel
from autonoma.testing import act
from tests.agent.helpers import continuous_run

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
TASK = (
    "The file called notes holds a shopping list. Write its first line, in capital letters, "
    "to title.txt"
)
FORM: TypeAdapter[Form] = TypeAdapter(Form)


@pytest.mark.parametrize(
    ("text", "case"),
    [
        (TASK, "upper"),
        ("Write the names in lowercase to low.txt", "lower"),
        ("Write HELLO in all caps to h.txt", "upper"),
        ("Rewrite notes.txt in upper case", "upper"),
        ("Write the words in small letters to w.txt", "lower"),
        ("Write a line to a.txt", None),
        ("Write it in capital letters, then in lowercase, to both.txt", None),
    ],
)
def test_the_case_a_text_states(text: str, case: str | None) -> None:
    assert stated_case(text) == case


def test_a_case_check_is_for_the_one_new_file_its_sentence_names() -> None:
    assert [c.what for c in case_checks(TASK, {"notes.md"})] == [
        "title.txt is written in capital letters, as the task says"
    ]
    assert case_checks("Rewrite notes.txt in upper case", {"notes.txt"}) == []  # not new
    assert case_checks("Write a line to notes2.txt", set()) == []


def test_a_literal_against_the_stated_case_is_sent_back_every_time() -> None:
    said = [TASK]
    assert against_case("'Shopping list'", said) and against_case("Shopping list", said)
    assert not against_case("'SHOPPING LIST'", said)
    assert not against_case("open('notes.md').read().splitlines()[0]", said)  # computed
    assert not against_case("'Shopping list'", ["Write its first line to title.txt"])
    form = FORM.validate_python({"goal": 1, "what": "title.txt holds the first line",
                                 "kind": "file", "file": "title.txt", "holds": "text",
                                 "expected": "'Shopping list'"})  # fmt: skip
    told: set[str] = set()
    typed: list[object] = []
    for _ in range(3):  # the writer typed it three rounds running (code_1128b)
        checks, problems = made_checks(
            [form], goals=1, said=said, inputs=["notes.md"], told=told, typed=typed
        )
        assert checks == [] and "not in the letter case the task asks for" in problems[0]
    assert typed == []  # nor kept at the end for want of a computed value


SORT_TASK = (
    "Sort the lines of names.txt alphabetically, ignoring upper and lower case, into sorted.txt"
)
NAMES = {"names.txt": "carol\nAlice\neve\nbob\nFrank\nDave\n"}


@pytest.mark.parametrize(
    "expected",
    [
        "['Alice', 'Bob', 'Carol', 'Dave', 'Eve', 'Frank']",  # what the writer typed (code_1129_rest)
        "('alice', 'bob')",
        "'Alice\\nBob'",
        "Bob",
    ],
)
def test_a_literal_that_changes_its_inputs_case_is_sent_back(expected: str) -> None:
    assert "typed by hand where the input holds" in recases_input(expected, [SORT_TASK], NAMES)


@pytest.mark.parametrize(
    ("expected", "said"),
    [
        ("['Alice', 'bob', 'carol', 'Dave', 'eve', 'Frank']", [SORT_TASK]),  # the lines as they are
        ("sorted(open('names.txt').read().splitlines(), key=str.lower)", [SORT_TASK]),  # computed
        ("['ALICE', 'BOB']", ["Write the names of names.txt in capital letters to up.txt"]),
        ("['Zed']", [SORT_TASK]),  # no input line of any case: typed_by_hand's to read
        ("['6']", [SORT_TASK]),
        ("['Alice', 'Bob']", ["In names.txt, write bob as Bob, into fixed.txt"]),  # the task's own
    ],
)
def test_a_literal_keeping_its_inputs_case_or_a_stated_one_is_not(
    expected: str, said: list[str]
) -> None:
    assert recases_input(expected, said, NAMES) == ""


def test_a_recased_literal_is_sent_back_every_round_and_never_kept() -> None:
    form = FORM.validate_python({"goal": 1, "what": "sorted.txt holds the names sorted",
                                 "kind": "file", "file": "sorted.txt", "holds": "lines",
                                 "expected": "['Alice', 'Bob', 'Carol', 'Dave', 'Eve', 'Frank']"})  # fmt: skip
    told: set[str] = set()
    typed: list[object] = []
    for _ in range(3):  # typed twice, the value was kept before (code_1129_rest)
        checks, problems = made_checks(
            [form], goals=1, said=[SORT_TASK], inputs=["names.txt"], told=told, typed=typed,
            held=NAMES,
        )  # fmt: skip
        assert checks == [] and "'Bob' typed by hand where the input holds 'bob'" in problems[0]
    assert typed == []


@needs_bwrap
async def test_a_run_is_held_to_the_case_its_task_states(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("Shopping list\nmilk\neggs\n")
    typed = {"goal": 1, "what": "title.txt holds the first line", "kind": "file",
             "file": "title.txt", "holds": "text", "expected": "'Shopping list'"}  # fmt: skip
    store, run_id, events = await continuous_run(
        workspace,
        TASK,
        [
            *[{"checks": [typed]}] * 3,  # sent back each round: the task judged instead
            act("write_file", path="title.txt", text="Shopping List\n"),
            act("task_complete", reason="title.txt holds the first line"),
            # the task worked out by the judge's program, from notes.md ("the file called notes")
            {"code": "open('title.txt', 'w').write(open('notes.md').readline().upper())"},
            {"files": [{"name": "title.txt", "text": "SHOPPING LIST"}]},  # typed: the same
            act("write_file", path="title.txt", text="SHOPPING LIST\n"),
        ],
    )
    (written,) = [e.data for e in events if e.kind == "checks_written"]
    assert "title.txt is written in capital letters, as the task says" in [
        c["what"] for c in written["checks"]
    ]
    steps = store.steps(run_id)
    assert not steps[1].ok
    assert "title.txt holds 'Shopping List', not all in capital letters" in (
        steps[1].observation or ""
    )
    assert len(steps) == 3 and steps[2].ok


@needs_bwrap
async def test_a_computed_value_that_changes_its_inputs_case_is_sent_back(
    tmp_path: Path,
) -> None:
    """mend2_1129: the writer's check for sort_ignore_case computed `sorted(line.lower() ...)`,
    was kept, and held the run's right work out until its steps ran out."""
    from autonoma.agent.checks import CheckRunner, CheckWriter
    from autonoma.runtime.budget import BudgetSpent
    from autonoma.tools import Workspace
    from autonoma.tools.sandbox import BubblewrapSandbox
    from autonoma.tools.settings import SandboxSettings

    root = tmp_path / "ws"
    root.mkdir()
    (root / "names.txt").write_text(NAMES["names.txt"])
    shutil.copytree(root, tmp_path / "start")
    workspace = Workspace(root)
    runner = CheckRunner(BubblewrapSandbox(SandboxSettings()), workspace, tmp_path / "start")

    def form(expected: str) -> dict[str, object]:
        return {"goal": 1, "what": "sorted.txt holds the names sorted ignoring case",
                "kind": "file", "file": "sorted.txt", "holds": "lines", "expected": expected}  # fmt: skip

    lowered = form("sorted(line.strip().lower() for line in open('names.txt'))")
    kept = form("sorted(open('names.txt').read().splitlines(), key=str.lower)")
    model = ScriptedModel([{"checks": [lowered]}, {"checks": [lowered]}, {"checks": [kept]}])
    written = await CheckWriter(model, runner).write(
        SORT_TASK, ["Write sorted.txt"], workspace, BudgetSpent()
    )
    assert [c.what for c in written.checks] == [kept["what"]]
    assert len(written.discarded) == 2
    assert "computes 'alice' where the input holds 'Alice'" in written.discarded[0]
    assert "sorted(lines, key=str.lower)" in model.requests[1].messages[0].content
    # the same task with its case stated keeps a lowered value
    said = "Write the names of names.txt in lowercase, sorted, to sorted.txt"
    model = ScriptedModel([{"checks": [lowered]}])
    written = await CheckWriter(model, runner).write(
        said, ["Write sorted.txt"], workspace, BudgetSpent()
    )
    assert len(written.checks) >= 1 and not written.discarded
