"""Every change a run makes to its workspace is recorded per step, whoever made it, and
`autonoma undo` puts the workspace back; it never destroys what the run did not make and no
record leads it outside the workspace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autonoma.cli import app
from autonoma.runtime.events import Undone
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from autonoma.tools import changes as changes_module
from autonoma.tools.changes import ChangeJournal, journal_of
from autonoma.tools.workspace import Workspace
from tests.cli_helpers import cli, scripted
from tests.fake_openai import FakeOpenAI


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "names.txt").write_text("bob\nalice\n")
    (root / "keep.txt").write_text("untouched\n")
    return Workspace(root)


def journal(ws: Workspace, tmp_path: Path) -> ChangeJournal:
    return ChangeJournal(ws, tmp_path / "changes" / "run1")


def test_undo_goes_back_step_by_step(ws: Workspace, tmp_path: Path) -> None:
    root = ws.root
    record = journal(ws, tmp_path)
    record.begin()
    (root / "a.txt").write_text("made at 1\n")
    (root / "names.txt").write_text("alice\nbob\n")
    assert [c.describe() for c in record.record(1)] == ["a.txt (created)", "names.txt (changed)"]
    (root / "names.txt").unlink()
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "c.txt").write_text("made at 2\n")
    (root / "a.txt").write_text("changed at 2\n")
    assert {c.kind for c in record.record(2)} == {"created", "removed", "changed"}
    assert record.record(3) == []  # nothing new: nothing recorded

    done = record.undo(1)
    assert (root / "names.txt").read_text() == "alice\nbob\n"  # as after step 1
    assert (root / "a.txt").read_text() == "made at 1\n"
    assert not (root / "deep" / "er" / "c.txt").exists()
    assert any(line.startswith("removed deep/er/c.txt") for line in done)

    record.undo(0)
    assert (root / "names.txt").read_text() == "bob\nalice\n"
    assert not (root / "a.txt").exists()
    assert (root / "keep.txt").read_text() == "untouched\n"


def test_a_file_changed_after_the_run_is_left_unless_forced(ws: Workspace, tmp_path: Path) -> None:
    record = journal(ws, tmp_path)
    record.begin()
    (ws.root / "names.txt").write_text("sorted by the run\n")
    record.record(1)
    (ws.root / "names.txt").write_text("the person's own edit\n")  # after the run
    (done,) = record.undo(0)
    assert done.startswith("left names.txt: it changed after the run's step 1")
    assert (ws.root / "names.txt").read_text() == "the person's own edit\n"
    journal(ws, tmp_path).undo(0, force=True)  # a new process: from the files alone
    assert (ws.root / "names.txt").read_text() == "bob\nalice\n"


def test_a_file_too_big_to_keep_is_named_not_lost_silently(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes_module, "KEEP_BYTES", 4)
    (ws.root / "big.bin").write_bytes(b"0123456789")
    record = journal(ws, tmp_path)
    record.begin()
    (ws.root / "big.bin").write_bytes(b"changed!!!")
    (change,) = record.record(1)
    assert not change.kept
    (done,) = record.undo(0)
    assert done.startswith("cannot restore big.bin: it was too big to keep")


def test_a_tampered_journal_leads_nowhere_outside(ws: Workspace, tmp_path: Path) -> None:
    """Paths go through the workspace's jail; content only from the run's own kept blobs."""
    outside = tmp_path / "outside.txt"
    outside.write_text("host file\n")
    (tmp_path / "secret").write_text("host secret\n")
    record = journal(ws, tmp_path)
    record.begin()
    record.folder.mkdir(parents=True, exist_ok=True)
    lines = [
        {"step": 1, "path": "../outside.txt", "kind": "created", "before": None, "after": None, "kept": True},
        {"step": 1, "path": "stolen.txt", "kind": "changed", "before": "../../../secret", "after": None, "kept": True},
        {"step": 1, "path": "/etc/hostname", "kind": "created", "before": None, "after": None, "kept": True},
    ]  # fmt: skip
    (record.folder / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = record.undo(0, force=True)
    assert outside.read_text() == "host file\n"
    assert not (ws.root / "stolen.txt").exists()
    assert all(line.startswith("left ") for line in done), done


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_show_lists_each_steps_changes_and_undo_puts_them_back(tmp_path: Path, home: Path) -> None:
    """Through the CLI: a file tool, a shell command in the sandbox and a delete, each
    recorded against its step; undo to step 1 keeps step 1's file and nothing after."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the person's notes\n")
    answers = [
        act("write_file", path="poem.txt", text="autumn\n"),
        shell("echo made by a shell > shell.txt"),
        act("delete_file", path="notes.txt"),
        act("task_complete", reason="done"),
    ]
    with FakeOpenAI() as server:
        server.responder = scripted(answers)
        run = cli(home, "run", "Write a poem to poem.txt", "--model",
                  f"openai:fake@{server.base_url}", "--continuous", "--no-checks",
                  "--workspace", str(workspace), "--json", "--no-memory",
                  "--trust-workspace")  # notes.txt is the person's: they may have it changed  # fmt: skip
    assert run.returncode == 0, run.stderr
    run_id = json.loads(run.stdout)["run_id"]
    shown = cli(home, "show", run_id)
    assert "step 1: poem.txt (created)" in shown.stdout
    assert "step 2: shell.txt (created)" in shown.stdout
    assert "step 3: notes.txt (removed)" in shown.stdout
    as_json = json.loads(cli(home, "show", run_id, "--json").stdout)
    assert [(c["step"], c["path"]) for c in as_json["changes"]] == [
        (1, "poem.txt"), (2, "shell.txt"), (3, "notes.txt")
    ]  # fmt: skip
    undone = cli(home, "undo", run_id, "--to-step", "1")
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "notes.txt").read_text() == "the person's notes\n"
    assert not (workspace / "shell.txt").exists()
    assert (workspace / "poem.txt").read_text() == "autumn\n"
    cli(home, "undo", run_id)
    assert sorted(p.name for p in workspace.iterdir()) == ["notes.txt"]


def test_undo_stores_what_it_did_as_a_typed_event(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("AUTONOMA_HOME", str(home))
    store = RunStore(home / "runs.db")
    run_id = store.create_run(
        goal="Write a.txt", identity={}, settings={}, workspace=str(ws.root), model="m"
    ).id
    record = journal_of(home, run_id, ws.root)
    record.begin()
    (ws.root / "a.txt").write_text("made at 1\n")
    record.record(1)
    result = CliRunner().invoke(app, ["undo", run_id])
    assert result.exit_code == 0, result.output
    assert not (ws.root / "a.txt").exists()
    (event,) = [e.event for e in store.events(run_id)]  # read typed
    store.close()
    assert isinstance(event, Undone) and event.to_step == 0
    assert event.done and event.done == result.stdout.splitlines()  # what it said it did


def shell(command: str) -> dict[str, object]:
    answer = act("execute_shell")
    answer["command"]["args"] = {"command": command}
    return answer


def test_the_journal_is_read_without_opening_a_workspace_that_is_gone(tmp_path: Path) -> None:
    """`show` lists a run's changes after its workspace was removed, and does not make it
    again."""
    root = tmp_path / "gone"
    root.mkdir()
    record = ChangeJournal(root, tmp_path / "changes" / "run1")
    record.begin()
    (root / "a.txt").write_text("x")
    record.record(1)
    shutil.rmtree(root)
    again = ChangeJournal(root, tmp_path / "changes" / "run1")
    assert [c.describe() for c in again.changes()] == ["a.txt (created)"]
    assert not root.exists()
