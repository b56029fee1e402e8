"""Security suite, what a workspace can hold to stall or swell the agent: huge and sparse
files, named pipes, sockets, device nodes, folders nested past reason, a tree changing under
a walk, and input files (settings, domains) that are pipes or endless. Each is answered at
once with its reason; nothing blocks, nothing is read past its limit, nothing ends in a
traceback."""

from __future__ import annotations

import os
import resource
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autonoma.agent.checks import content_print, fingerprint
from autonoma.cli import app
from autonoma.runtime.inputs import InputFileError, read_input
from autonoma.tools import FILE_TOOLS, ToolContext, Workspace
from autonoma.tools.files import MAX_READ_BYTES
from autonoma.tools.workspace import MAX_DEPTH

TOOLS = {t.name: t for t in FILE_TOOLS}
GIB = 1 << 30


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def test_a_sparse_file_of_gigabytes_is_read_to_its_limit_only(ws: Workspace) -> None:
    with open(ws.root / "big.log", "wb") as f:
        f.truncate(2 * GIB)
        f.seek(GIB)
        f.write(b"needle\n")
    (ws.root / "small.txt").write_text("needle here\n")
    context = ToolContext(ws)
    peak = _peak_mb()
    read = await TOOLS["read_file"].run(context, {"path": "big.log"})
    assert read.ok
    assert read.output.startswith(f"big.log (first {MAX_READ_BYTES} of {2 * GIB} bytes)")
    found = await TOOLS["search_files"].run(context, {"text": "needle"})
    assert found.ok
    assert found.output.startswith("small.txt:1: needle here")
    assert "not searched: big.log (2147483648 bytes" in found.output
    appended = await TOOLS["append_file"].run(context, {"path": "big.log", "text": "x"})
    # "x" on a line of its own: a newline after the zeros, then "x\n"
    assert appended.output.endswith(f"it now holds {2 * GIB + 3} bytes")
    assert _peak_mb() - peak < 200  # the 2 GB were never in memory


@pytest.fixture
def specials(ws: Workspace) -> Iterator[Workspace]:
    os.mkfifo(ws.root / "pipe")
    os.mkfifo(ws.root / "pipe.txt")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws.root / "sock"))
    (ws.root / "plain.txt").write_text("plain\n")
    try:
        yield ws
    finally:
        server.close()


@pytest.mark.parametrize("path", ["pipe", "pipe.txt", "sock"])
@pytest.mark.parametrize("name", ["read_file", "write_file", "append_file", "delete_file"])
async def test_pipes_and_sockets_are_refused_before_anything_blocks(
    specials: Workspace, name: str, path: str
) -> None:
    arguments = {"path": path} | ({"text": "x"} if name in ("write_file", "append_file") else {})
    result = await TOOLS[name].run(ToolContext(specials), arguments)
    assert not result.ok
    assert "timed out" not in result.output
    assert ("named pipe" if "pipe" in path else "socket") in result.output
    assert (specials.root / path).exists()  # not replaced, not removed


async def test_listings_pass_special_files_over(specials: Workspace) -> None:
    assert specials.files() == ["plain.txt"]
    found = await TOOLS["search_files"].run(ToolContext(specials), {"text": "plain"})
    assert found.output == "plain.txt:1: plain"
    assert fingerprint(specials) and content_print(specials)


async def test_a_device_is_refused_without_being_opened(ws: Workspace) -> None:
    try:
        os.mknod(ws.root / "zero", 0o666 | 0o020000, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("making a device node needs root")
    result = await TOOLS["read_file"].run(ToolContext(ws), {"path": "zero"})
    assert not result.ok and "a device" in result.output


def test_folders_nested_past_the_depth_limit_are_not_walked(ws: Workspace) -> None:
    deep = ws.root
    for _ in range(MAX_DEPTH + 20):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    (ws.root / "top.txt").write_text("x")
    assert ws.files() == ["top.txt"]


def test_a_walk_stops_at_its_limit_and_says_so(ws: Workspace) -> None:
    for i in range(30):
        (ws.root / f"f{i:02d}.txt").write_text("x")
    listing = ws.listing(most=10)
    assert listing.cut and len(listing.files) == 10


async def test_a_tree_changing_under_walks_never_breaks_them(ws: Workspace) -> None:
    """A thread makes and removes folders and files and turns files into folders while every
    walk of the workspace runs again and again."""
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            base = ws.root / f"d{n % 7}"
            try:
                (base / "x" / "y").mkdir(parents=True, exist_ok=True)
                (base / "x" / "y" / "f.txt").write_text("x")
                (base / "x" / "y" / "f.txt").unlink()
                for folder in (base / "x" / "y", base / "x", base):
                    folder.rmdir()
                (ws.root / "flip").write_text("x")
                (ws.root / "flip").unlink()
                (ws.root / "flip").mkdir()
                (ws.root / "flip").rmdir()
            except OSError:
                continue

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    context = ToolContext(ws)
    try:
        for _ in range(300):
            ws.files()
            fingerprint(ws)
            content_print(ws)
            for name in ("list_files", "search_files"):
                result = await TOOLS[name].run(context, {})
                assert "Error" not in result.output, result.output
    finally:
        stop.set()
        worker.join(5)


@pytest.mark.parametrize("kind", ["fifo", "zero", "directory", "huge", "binary"])
def test_input_files_are_bounded_regular_text(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "settings.json"
    expected = {
        "fifo": "not a regular file",
        "zero": "not a regular file",
        "directory": "is a directory",
        "huge": "at most",
        "binary": "not UTF-8",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(GIB)
    else:
        path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputFileError, match=expected):
        read_input(path, "the tool settings")


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_settings_file_that_is_a_pipe_or_endless_is_one_clear_line(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "tools.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    result = CliRunner().invoke(
        app, ["run", "a goal", "--model", "scripted", "--tool-settings", str(path)]
    )
    assert result.exit_code == 2
    assert "not a regular file" in result.output
    assert "Traceback" not in result.output
