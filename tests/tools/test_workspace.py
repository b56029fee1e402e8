"""The workspace jail: every path resolves inside the workspace or is refused with a reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autonoma.errors import AutonomaError
from autonoma.tools.workspace import Workspace, WorkspaceError


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace, holding a file the agent must never reach."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("SECRET", encoding="utf-8")
    return directory


@pytest.fixture
def ws(tmp_path: Path, outside: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


def refusal(ws: Workspace, path: str) -> str:
    with pytest.raises(WorkspaceError) as info:
        ws.resolve(path)
    return str(info.value)


def test_workspace_error_is_an_autonoma_error() -> None:
    assert issubclass(WorkspaceError, AutonomaError)


def test_root_is_created_and_resolved(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "ws"
    ws = Workspace(root)
    assert root.is_dir()
    assert ws.root == root.resolve()


def test_root_given_through_a_symlink_still_allows_paths_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(real, link)
    ws = Workspace(link)
    assert ws.root == real.resolve()
    assert ws.resolve("a.txt") == real.resolve() / "a.txt"


@pytest.mark.parametrize("path", ["../x", "a/../../x", "..", "a/b/../../../x", "./../x"])
def test_parent_escapes_are_refused(ws: Workspace, path: str) -> None:
    message = refusal(ws, path)
    assert repr(path) in message
    assert "outside the workspace" in message


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "//etc/passwd"])
def test_absolute_paths_are_refused(ws: Workspace, path: str) -> None:
    message = refusal(ws, path)
    assert repr(path) in message
    assert "absolute" in message


def test_absolute_path_inside_the_workspace_is_still_refused(ws: Workspace) -> None:
    message = refusal(ws, str(ws.root / "a.txt"))
    assert "absolute" in message


@pytest.mark.parametrize("path", ["", " ", "\t\n"])
def test_empty_path_is_refused(ws: Workspace, path: str) -> None:
    message = refusal(ws, path)
    assert "empty" in message
    assert "relative to the workspace" in message


@pytest.mark.parametrize("path", ["a\0b", "\0", "ok.txt\0../../etc/passwd"])
def test_nul_byte_is_refused(ws: Workspace, path: str) -> None:
    assert "NUL" in refusal(ws, path)


def test_symlink_to_filesystem_root_cannot_be_followed(ws: Workspace) -> None:
    os.symlink("/", ws.root / "root")
    message = refusal(ws, "root/etc/passwd")
    assert "'root/etc/passwd'" in message
    assert "outside the workspace" in message
    assert "outside the workspace" in refusal(ws, "root")
    assert "outside the workspace" in refusal(ws, "root/")


def test_symlink_to_a_file_outside_is_refused(ws: Workspace, outside: Path) -> None:
    os.symlink(outside / "secret.txt", ws.root / "notes.txt")
    message = refusal(ws, "notes.txt")
    assert "'notes.txt'" in message
    assert "outside the workspace" in message


def test_symlink_to_a_directory_outside_is_refused(ws: Workspace, outside: Path) -> None:
    os.symlink(outside, ws.root / "data")
    assert "outside the workspace" in refusal(ws, "data/secret.txt")
    assert "outside the workspace" in refusal(ws, "data/new-file.txt")


def test_dangling_symlink_to_a_path_outside_is_refused(ws: Workspace, outside: Path) -> None:
    # Writing through it would create a file outside, so it must be refused before it exists.
    os.symlink(outside / "not-yet.txt", ws.root / "trap.txt")
    assert "outside the workspace" in refusal(ws, "trap.txt")


def test_relative_symlink_climbing_out_is_refused(ws: Workspace) -> None:
    os.symlink("../outside/secret.txt", ws.root / "sneaky.txt")
    assert "outside the workspace" in refusal(ws, "sneaky.txt")


def test_symlink_inside_the_workspace_is_allowed(ws: Workspace) -> None:
    (ws.root / "real").mkdir()
    (ws.root / "real" / "a.txt").write_text("x", encoding="utf-8")
    os.symlink(ws.root / "real", ws.root / "alias")
    assert ws.resolve("alias/a.txt") == ws.root / "real" / "a.txt"


def test_dot_dot_that_stays_inside_is_allowed(ws: Workspace) -> None:
    assert ws.resolve("a/b/../c.txt") == ws.root / "a" / "c.txt"
    assert ws.resolve("a/..") == ws.root
    assert ws.resolve(".") == ws.root


def test_nested_new_paths_are_allowed_and_not_created(ws: Workspace) -> None:
    resolved = ws.resolve("x/y/z/new.txt")
    assert resolved == ws.root / "x" / "y" / "z" / "new.txt"
    assert not (ws.root / "x").exists()


def test_home_tilde_is_not_expanded(ws: Workspace) -> None:
    assert ws.resolve("~/notes.txt") == ws.root / "~" / "notes.txt"


def test_relative_is_posix_and_root_is_dot(ws: Workspace) -> None:
    assert ws.relative(ws.root / "a" / "b.txt") == "a/b.txt"
    assert ws.relative(ws.root) == "."


def test_files_lists_regular_files_sorted_and_relative(ws: Workspace, outside: Path) -> None:
    root = ws.root
    (root / "z" / "d").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "empty").mkdir()
    for name in ["c.txt", "a/b.txt", "z/d/e.txt", "B.txt"]:
        (root / name).write_text(name, encoding="utf-8")
    os.symlink(root / "c.txt", root / "link-inside.txt")
    os.symlink(outside / "secret.txt", root / "link-outside.txt")
    os.symlink(outside, root / "outside-dir")
    os.symlink("/", root / "rootfs")

    assert ws.files() == ["B.txt", "a/b.txt", "c.txt", "z/d/e.txt"]


def test_files_of_an_empty_workspace_is_empty(ws: Workspace) -> None:
    assert ws.files() == []


def test_workspace_under_a_regular_file_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory", encoding="utf-8")
    with pytest.raises(WorkspaceError) as info:
        Workspace(blocker / "ws")
    message = str(info.value)
    assert "cannot create the workspace" in message
    assert str(blocker / "ws") in message


def test_workspace_that_is_a_regular_file_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="cannot create the workspace"):
        Workspace(blocker)
