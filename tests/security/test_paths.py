"""Every workspace command refuses `../`, absolute paths and symlinks leading out, and the
file outside is neither read, written nor deleted. (tests/tools/test_workspace.py has the
jail's own cases; this runs each command through Tool.run as the agent does.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autonoma.tools import FILE_TOOLS, ToolContext, Workspace

SECRET = "host secret"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[ToolContext, Path]:
    outside = tmp_path / "outside" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text(SECRET)
    ws = Workspace(tmp_path / "ws")
    (ws.root / "link").symlink_to(outside)
    (ws.root / "dir").symlink_to(outside.parent)
    return ToolContext(ws), outside


def arguments(tool: str, path: str) -> dict[str, Any]:
    args: dict[str, Any] = {"path": path}
    if tool in ("write_file", "append_file"):
        args["text"] = "overwritten"
    return args


@pytest.mark.parametrize(
    "name", [t.name for t in FILE_TOOLS if t.name not in ("list_files", "search_files")]
)
@pytest.mark.parametrize("path", ["../outside/secret.txt", "{abs}", "link", "dir/secret.txt"])
async def test_no_command_reaches_outside(
    setup: tuple[ToolContext, Path], name: str, path: str
) -> None:
    context, outside = setup
    tool = next(t for t in FILE_TOOLS if t.name == name)
    result = await tool.run(context, arguments(name, path.format(abs=outside)))
    assert not result.ok, result.output
    assert "WorkspaceError" in result.output or "outside the workspace" in result.output
    assert SECRET not in result.output
    assert outside.read_text() == SECRET


@pytest.mark.parametrize("pattern", ["../outside/*", "**/secret.txt", "dir/*", "link", "/**"])
async def test_search_and_listing_do_not_show_outside(
    setup: tuple[ToolContext, Path], pattern: str
) -> None:
    context, outside = setup
    tools = {t.name: t for t in FILE_TOOLS}
    found = await tools["search_files"].run(context, {"pattern": pattern, "text": "host"})
    assert SECRET not in found.output
    for directory in ("..", "dir", str(outside.parent)):
        listed = await tools["list_files"].run(context, {"directory": directory})
        assert "secret.txt" not in listed.output
