"""Security suite, link races: while the file tools run, another process turns the names they
use into links to the outside and back, as fast as it can. Nothing outside is read, written,
created or deleted, whatever the timing. (Before the tools walked by descriptors, the check of
a path and its use were two lookups: this test failed on that code within a few hundred
operations.)"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autonoma.tools import ToolContext, Workspace
from autonoma.tools.files import append_file, delete_file, read_file, search_files, write_file

SECRET = "outside-secret-7c1f"
OPERATIONS = 3000


def _swapper(root: str, outside: str, stop: multiprocessing.synchronize.Event) -> None:
    """Swap names between real files and folders and links to the outside, atomically."""
    os.chdir(root)
    secret = os.path.join(outside, "secret.txt")
    n = 0
    while not stop.is_set():
        n += 1
        try:
            # race.txt: a file, then (renamed over it) a link to the outside secret
            os.symlink(secret, f"link{n}")
            os.replace(f"link{n}", "race.txt")
            with open(f"file{n}", "w") as f:
                f.write("inside\n")
            os.replace(f"file{n}", "race.txt")
            # sub/: a folder, then a link to the outside folder, then the folder again
            if os.path.isdir("sub") and not os.path.islink("sub"):
                os.rename("sub", "sub-real")
                os.symlink(outside, "sub")
                os.unlink("sub")
                os.rename("sub-real", "sub")
        except OSError:
            continue


@pytest.fixture
def race(tmp_path: Path) -> Iterator[tuple[Workspace, Path]]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "f.txt").write_text(SECRET + "\n")
    ws = Workspace(tmp_path / "ws")
    (ws.root / "sub").mkdir()
    (ws.root / "race.txt").write_text("inside\n")
    stop = multiprocessing.get_context("fork").Event()
    swapper = multiprocessing.get_context("fork").Process(
        target=_swapper, args=(str(ws.root), str(outside), stop), daemon=True
    )
    swapper.start()
    try:
        yield ws, outside
    finally:
        stop.set()
        swapper.join(10)
        if swapper.is_alive():
            swapper.kill()


def _state(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


async def test_swapping_names_for_links_reaches_nothing_outside(
    race: tuple[Workspace, Path],
) -> None:
    ws, outside = race
    before = _state(outside)
    context = ToolContext(ws)
    calls = [
        (read_file, {"path": "race.txt"}),
        (write_file, {"path": "race.txt", "text": "written\n"}),
        (append_file, {"path": "race.txt", "text": "appended\n"}),
        (read_file, {"path": "sub/f.txt"}),
        (write_file, {"path": "sub/f.txt", "text": "written\n"}),
        (append_file, {"path": "sub/f.txt", "text": "appended\n"}),
        (delete_file, {"path": "sub/f.txt"}),
        (delete_file, {"path": "race.txt"}),
        (search_files, {"text": "secret"}),
    ]
    done = refused = 0
    for i in range(OPERATIONS):
        tool, arguments = calls[i % len(calls)]
        result = await tool.run(context, arguments)
        assert SECRET not in result.output, (tool.name, result.output)
        done += result.ok
        refused += not result.ok
    assert _state(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "secret.txt"]
    # the race was real: some calls met a link and were refused, some went through
    assert done > 0 and refused > 0, (done, refused)
