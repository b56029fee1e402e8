"""task_complete is accepted only when the files the task names exist and are not empty."""

from __future__ import annotations

from pathlib import Path

from autonoma.agent.completion import deliverables, misnamed, named_files, unmet_deliverables
from autonoma.tools import Workspace


def test_file_names_are_found_in_prose() -> None:
    texts = [
        "Write a haiku about autumn to haiku.txt",
        "Save notes/today.md and src/app.py, e.g. like v2.5, www.example.com, a@b.com",
        "See http://x.org/page.html; then README.md. Also data.csv, and haiku.txt again",
    ]
    assert named_files(texts) == [
        "haiku.txt",
        "notes/today.md",
        "src/app.py",
        "README.md",
        "data.csv",
    ]


def test_missing_and_empty_deliverables_are_reported(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / "done.txt").write_text("a line\n")
    problems = unmet_deliverables(
        workspace, ["Write done.txt, empty.md and missing.csv", "not ../outside.txt"]
    )
    assert problems == ["empty.md is empty", "missing.csv does not exist yet"]
    assert unmet_deliverables(workspace, ["Write done.txt"]) == []
    assert unmet_deliverables(workspace, ["No files named at all"]) == []


def test_deliverables_report_lines_written_so_far(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    (tmp_path / "poem.txt").write_text("one\n\ntwo\n")
    (tmp_path / "blank.md").write_text("\n  \n")
    found = deliverables(workspace, ["Write poem.txt, blank.md and todo.csv"])
    assert [(d.name, d.lines, d.done) for d in found] == [
        ("poem.txt", 2, True),
        ("blank.md", 0, False),
        ("todo.csv", None, False),
    ]
    assert [d.describe() for d in found] == [
        "poem.txt holds 2 lines",
        "blank.md is empty",
        "todo.csv does not exist yet",
    ]


def test_a_file_found_at_the_start_and_gone_is_not_missing(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    (tmp_path / "final.txt").write_text("the text\n")
    goal = ["Rename draft.txt to final.txt"]
    assert unmet_deliverables(workspace, goal) == ["draft.txt does not exist yet"]
    assert unmet_deliverables(workspace, goal, found_at_start={"draft.txt"}) == []
    (tmp_path / "final.txt").unlink()  # the new name is still needed
    assert unmet_deliverables(workspace, goal, found_at_start={"draft.txt"}) == [
        "final.txt does not exist yet"
    ]


def test_a_name_near_one_the_goals_give_is_said_with_it() -> None:
    task = [
        "Read the file called notes and write its first line, in capital letters, to title.txt."
    ]
    near = misnamed(["notes.md", "title"], task, found_at_start={"notes.md"})
    assert near == ["title is not title.txt, the name the goals give"]
    assert misnamed(["notes.md", "title.txt"], task, found_at_start={"notes.md"}) == []
    assert misnamed(["logtxt"], ["Write 'started' to log.txt"]) == [
        "logtxt is not log.txt, the name the goals give"
    ]
    assert misnamed(["out/title"], ["Write it to out/title.txt"]) == [
        "out/title is not out/title.txt, the name the goals give"
    ]
    # other names are the work's own business: a helper file, a name found at the start
    assert (
        misnamed(["scratch.py", "draft"], ["Write it to title.txt"], found_at_start={"draft"}) == []
    )
