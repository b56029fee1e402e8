"""Guards held by rule from a task's words: which the words give, what their programs say in the
real sandbox, and runs whose wrong end (an input deleted, the asked-for file never written)
passed every check the model wrote and is refused now."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autonoma.agent.checks import CheckRunner
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.task_guards import read_only_input, task_guards
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import EventRecord, RunStore
from autonoma.testing import act
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
HOTTEST = (
    "temps.csv gives a temperature for each city. Write the name of the hottest city alone "
    "to hottest.txt."
)


def held(task: str, found: set[str]) -> dict[str, str]:
    """Each guard's kind (made or kept) and the files its program lists."""
    out = {}
    for guard in task_guards(task, found):
        kind = "made" if "asks for are there" in guard.what else "kept"
        listed = guard.code.splitlines()[1].split("[f for f in ")[1].split(" if ")[0]
        out[kind] = listed
    return out


def test_a_task_that_removes_nothing_keeps_every_file_it_found() -> None:
    assert held(HOTTEST, {"temps.csv", "notes/a.md"}) == {
        "made": "['hottest.txt']",
        "kept": "['notes/a.md', 'temps.csv']",
    }
    # a file it names and found is an input, not a file to make
    assert held("In greeting.txt, replace the word World with Autonoma.", {"greeting.txt"}) == {
        "kept": "['greeting.txt']"
    }


def test_files_a_task_removes_or_moves_are_not_kept_and_new_names_are_asked_for() -> None:
    rename = "Rename draft.txt to final.txt: final.txt must hold the same text, and draft.txt must be gone."
    assert held(rename, {"draft.txt", "other.md"}) == {
        "made": "['final.txt']",
        "kept": "['other.md']",
    }
    moved = "Move reports/q3.txt into the archive folder and write its title to title.txt."
    assert held(moved, {"reports/q3.txt", "keep.txt"}) == {
        "made": "['title.txt']",
        "kept": "['keep.txt']",
    }
    # a file named only where files go is not asked for, even if it is not there
    assert held("Delete old.txt and stale.txt.", {"old.txt", "keep.md"}) == {"kept": "['keep.md']"}


def test_files_going_by_a_rule_no_program_can_read_leave_no_kept_guard() -> None:
    assert held("Delete the temporary files.", {"a.tmp", "b.txt"}) == {}
    assert held("Clean up the folder and write what you removed to log.txt", {"x.tmp"}) == {}


def test_names_that_are_no_files_to_make_are_not_asked_for() -> None:
    task = "Look at example.com, use json.loads(text) and os.path to write the result to out.json"
    assert held(task, set()) == {"made": "['out.json']"}


@pytest.fixture
def runner(tmp_path: Path) -> CheckRunner:
    root, start = tmp_path / "ws", tmp_path / "start"
    root.mkdir()
    start.mkdir()
    return CheckRunner(BubblewrapSandbox(SandboxSettings()), Workspace(root), start)


@needs_bwrap
async def test_the_guards_programs_say_what_is_missing_in_the_sandbox(runner: CheckRunner) -> None:
    root = runner.workspace.root
    (root / "temps.csv").write_text("city,temp\nLima,24\nOslo,3\n")
    made, kept = task_guards(HOTTEST, {"temps.csv"})
    assert (await runner.run(kept)).passed
    missing = await runner.run(made)
    assert not missing.passed and "hottest.txt not made yet: the task asks for it" in missing.output
    (root / "hottest.txt").write_text("Lima\n")
    (root / "temps.csv").unlink()
    assert (await runner.run(made)).passed
    gone = await runner.run(kept)
    assert not gone.passed
    assert "temps.csv was there when the run began and is gone" in gone.output
    (root / "hottest.txt").unlink()
    (root / "hottest.txt").mkdir()  # a folder by the name is not the file asked for
    assert not (await runner.run(made)).passed


async def run_hottest(
    tmp_path: Path, script: list[object], steps: int = 6, task: str = HOTTEST
) -> tuple[str, list[str], list[EventRecord], ScriptedModel]:
    store = RunStore(tmp_path / "runs.db")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "temps.csv").write_text("city,temp\nLima,24\nOslo,3\n")
    model = ScriptedModel(script)
    settings = RunSettings(
        model="scripted",
        limits=BudgetLimits(max_steps=steps),
        continuous=True,
        memory=False,
        tools={"groups": []},
    )
    identity = AgentIdentity(name="HeatGPT", role="an AI that reads tables", goals=[task])
    run, _ = await create_run(store, model, task, settings, workspace=workspace, identity=identity)
    events: list[EventRecord] = []
    outcome = await run_agent(store, model, run, listeners=[events.append])
    observations = [s.observation or "" for s in store.steps(run.id)]
    return outcome.status, observations, events, model


# the one check the 1.5B writer kept for the hottest city (the everyday suite, 2026-11-28): it
# fails at the start, so the writer's guard kept it, and deleting the input passes it
WRONG_CHECK = {
    "goal": 1,
    "what": "temps.csv is its old contents, no changes have been made",
    "kind": "code",
    "code": "import os\nassert not os.path.exists('temps.csv'), 'temps.csv is still there'",
}


# a task that changes a file (hottest.txt, updated): its inputs are not held read-only, so
# the guard that the files found are still there is what stands against deleting temps.csv
UPDATE_HOTTEST = (
    "temps.csv gives a temperature for each city. Update hottest.txt so that it holds the name "
    "of the hottest city alone."
)


@needs_bwrap
async def test_deleting_the_input_to_pass_a_wrong_check_does_not_complete(tmp_path: Path) -> None:
    status, observations, events, model = await run_hottest(
        tmp_path,
        [
            {"checks": [WRONG_CHECK]},
            act("read_file", path="temps.csv"),
            act("delete_file", path="temps.csv"),  # refused: the task only reads it
            act("write_file", path="hottest.txt", text="Lima\n"),
            act("task_complete", reason="hottest.txt holds Lima"),
        ],
        steps=4,
    )
    assert status != "completed" and model.remaining == 0
    assert observations[1].startswith("refused: temps.csv is an input of the task, which asks")
    assert (tmp_path / "ws" / "temps.csv").exists()
    assert "temps.csv is still there" in observations[3]  # the wrong check, never passed
    status, observations, events, model = await run_hottest(
        tmp_path / "update",
        [
            {"checks": [WRONG_CHECK]},
            act("read_file", path="temps.csv"),
            act("delete_file", path="temps.csv"),
            act("task_complete", reason="done"),
            act("write_file", path="hottest.txt", text="Lima\n"),
            act("task_complete", reason="hottest.txt holds Lima"),
        ],
        steps=5,
        task=UPDATE_HOTTEST,
    )
    assert status != "completed" and model.remaining == 0
    refused = observations[2]
    assert "task_complete was refused" in refused
    assert "hottest.txt not made yet" in refused and "temps.csv was there" in refused
    # the guards were shown with the checks, and the last claim is refused for temps.csv alone
    (written,) = [e.data for e in events if e.kind == "checks_written"]
    assert [g["what"].split(":")[0] for g in written["guards"]] == [
        "the files the task asks for are there",
        "the files the run found are still there",
    ]
    assert "temps.csv was there" in observations[4] and "hottest.txt" not in observations[4]


@needs_bwrap
async def test_a_guard_that_holds_takes_no_part_in_the_verdict(tmp_path: Path) -> None:
    right = {
        "goal": 1,
        "what": "hottest.txt holds the city with the highest temperature in temps.csv",
        "kind": "code",
        "code": (
            "import csv\nrows = list(csv.DictReader(open('temps.csv')))\n"
            "best = max(rows, key=lambda r: float(r['temp']))['city']\n"
            "assert open('hottest.txt').read().strip() == best"
        ),
    }
    status, _, events, model = await run_hottest(
        tmp_path,
        [{"checks": [right]}, act("write_file", path="hottest.txt", text="Lima\n")],
    )
    assert status == "completed" and model.remaining == 0
    (last,) = [e.data for e in events if e.kind == "checks_run"][-1:]
    assert [r["what"] for r in last["results"]] == [right["what"]]


def test_inputs_held_read_only_are_those_of_tasks_that_change_no_file() -> None:
    """iso_dates emptied dates.txt and order_value rewrote orders.csv (code_1129_rest). A task
    whose words change no file only reads the files found; one that fixes, sets, adds, sorts,
    renames or works in place may change them; a file the results go to may be written."""
    found = {"dates.txt", "orders.csv", "notes/a.md", "names.txt", "sorted.txt"}
    only_reads = [
        "dates.txt holds dates as month/day/year. Write them as year-month-day to iso.txt.",
        "orders.csv has a quantity and a price column. Write the total value to value.txt.",
        "Write the lines of names.txt in reverse order, one per line, to reversed.txt.",
        "Write the names of the files in the notes folder, sorted, one per line, to index.txt.",
        "Add up the amount column of orders.csv and write the total alone to total.txt.",
    ]
    for task, name in zip(only_reads, ["dates.txt", "orders.csv", "names.txt"], strict=False):
        assert read_only_input(task, name, found), (task, name)
    assert read_only_input(only_reads[4], "orders.csv", found)  # "add up" adds to no file
    assert not read_only_input(only_reads[0], "iso.txt", found)  # not found: a new file
    # files the task does not name are the person's-files policy's, after outside content
    assert not read_only_input(only_reads[3], "notes/a.md", found)
    assert not read_only_input(only_reads[0], "names.txt", found)
    changes = [
        "In greeting.txt, replace the word World with Autonoma and change nothing else.",
        "readme.txt misspells one word as recieve. Correct it in readme.txt, nothing else.",
        "In config.json, set debug to false and keep every other setting as it is.",
        "Make every line of names.txt uppercase, in place.",
        "scores.csv has no header. Add the line name,score as its first line.",
        "Rename draft.txt to final.txt.",
        "Sort names.txt.",
        "Delete the empty files.",
    ]
    for task in changes:
        assert not read_only_input(task, "names.txt", found), task
    # where the results go, the file may be written though the words change nothing
    to_sorted = "Write the lines of names.txt, one per line, to sorted.txt."
    assert read_only_input(to_sorted, "names.txt", found)
    assert not read_only_input(to_sorted, "sorted.txt", found)


@needs_bwrap
async def test_a_write_to_an_input_the_task_only_reads_is_refused(tmp_path: Path) -> None:
    """By a JSON command (a program's open(): test_code_actions.py); the file is left as it
    was, and the file the results go to is written."""
    _, observations, _, _ = await run_hottest(
        tmp_path,
        [
            {"checks": [WRONG_CHECK]},
            act("write_file", path="temps.csv", text="city,temp\\n"),
            act("append_file", path="./temps.csv", text="Cairo,35"),
            act("write_file", path="hottest.txt", text="Lima\n"),
        ],
        steps=3,
    )
    assert observations[0].startswith("refused: temps.csv is an input of the task")
    assert observations[1].startswith("refused: temps.csv is an input of the task")
    assert observations[2].startswith("wrote 1 line")
    assert (tmp_path / "ws" / "temps.csv").read_text() == "city,temp\nLima,24\nOslo,3\n"
