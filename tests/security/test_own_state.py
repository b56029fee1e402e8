"""Security suite, autonoma's own state: with its home (run store, logs) and its model cache
inside the workspace (`--workspace ~`), no file tool and no sandboxed program can read,
change or delete them, and the run's record survives an agent told to erase it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autonoma.runtime.store import RunStore
from autonoma.tools import FILE_TOOLS, ToolContext, Workspace, WorkspaceError
from autonoma.tools.code import execute_shell
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings

TOOLS = {t.name: t for t in FILE_TOOLS}


@pytest.fixture
def home_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    root = tmp_path / "person"
    home = root / ".local" / "share" / "autonoma"
    cache = root / ".cache" / "autonoma"
    monkeypatch.setenv("AUTONOMA_HOME", str(home))
    monkeypatch.setenv("AUTONOMA_CACHE_DIR", str(cache))
    home.mkdir(parents=True)
    (cache / "models").mkdir(parents=True)
    (cache / "models" / "m.gguf").write_bytes(b"GGUF weights")
    store = RunStore(home / "runs.db")
    store.create_run(goal="keep me", identity={}, settings={}, workspace=str(root), model="m")
    (root / "notes.txt").write_text("the person's notes\n")
    return Workspace(root), home


@pytest.mark.parametrize(
    "path",
    [
        ".local/share/autonoma/runs.db",
        ".local/share/autonoma/new.txt",
        "./.local/share/x/../autonoma/runs.db",
        ".cache/autonoma/models/m.gguf",
    ],
)
@pytest.mark.parametrize("name", ["read_file", "write_file", "append_file", "delete_file"])
async def test_no_file_tool_reaches_the_store_or_the_models(
    home_inside: tuple[Workspace, Path], name: str, path: str
) -> None:
    ws, home = home_inside
    arguments = {"path": path} | ({"text": "x"} if name in ("write_file", "append_file") else {})
    result = await TOOLS[name].run(ToolContext(ws), arguments)
    assert not result.ok
    assert "autonoma's own state" in result.output
    assert len(RunStore(home / "runs.db").list_runs()) == 1
    assert not (home / "new.txt").exists()
    assert (ws.root / ".cache/autonoma/models/m.gguf").read_bytes() == b"GGUF weights"


async def test_listing_and_search_do_not_show_the_store(
    home_inside: tuple[Workspace, Path],
) -> None:
    ws, _ = home_inside
    context = ToolContext(ws)
    listed = await TOOLS["list_files"].run(context, {})
    assert listed.output == "notes.txt"
    found = await TOOLS["search_files"].run(context, {"pattern": "*"})
    assert found.output == "notes.txt"
    inside = await TOOLS["list_files"].run(context, {"directory": ".local/share/autonoma"})
    assert not inside.ok and "autonoma's own state" in inside.output
    assert ws.files() == ["notes.txt"]


def test_the_home_itself_is_not_a_workspace(home_inside: tuple[Workspace, Path]) -> None:
    _, home = home_inside
    with pytest.raises(WorkspaceError, match="autonoma's own state"):
        Workspace(home)


@pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed")
async def test_sandboxed_code_cannot_see_or_erase_the_store(
    home_inside: tuple[Workspace, Path],
) -> None:
    ws, home = home_inside
    settings = SandboxSettings.model_validate({"wall_s": 20, "processes": 16})
    context = ToolContext(ws, sandbox=BubblewrapSandbox(settings))
    owner = os.stat(home / "runs.db").st_uid
    result = await execute_shell.run(
        context,
        {
            "command": "ls -a .local/share/autonoma .cache/autonoma; "
            "ln .local/share/autonoma/runs.db stolen.db; "
            "rm -rf .local/share/autonoma .cache/autonoma .local; "
            "cat .local/share/autonoma/runs.db; echo done",
        },
    )
    assert "done" in result.output
    assert "runs.db" not in result.output.split("ln:")[0]  # the listing showed nothing
    assert "m.gguf" not in result.output
    assert not (ws.root / "stolen.db").exists()
    assert len(RunStore(home / "runs.db").list_runs()) == 1
    assert os.stat(home / "runs.db").st_uid == owner  # not handed over to the sandbox's user
    assert (ws.root / ".cache/autonoma/models/m.gguf").read_bytes() == b"GGUF weights"
    assert (ws.root / "notes.txt").exists()
