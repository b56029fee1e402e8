"""The workspace lent to the sandbox's uid while commands run in it (autonoma running as
root; tools/sandbox.py says why), and given back, entry by entry, to whose it was. Walked with
directory fds, never following a link, so nothing placed in the workspace can point an owner
change outside it."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from autonoma.tools.workspace import own_state

Owners = dict[tuple[int, int], tuple[int, int]]  # (device, inode) -> (uid, gid)


class _Loans:
    """Workspaces lent to the sandbox uid while commands run in them, and whose each entry
    was. The last command to end in a workspace gives every entry back to its owner, and
    what the sandbox made to the workspace's owner: a workspace left to uid 65533 broke git
    ("detected dubious ownership") and the person's own tools. Process-wide, because
    commands of parallel tasks share a workspace and one must not take it back from under
    another."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Path, int] = {}
        self._owners: dict[Path, Owners] = {}

    def lend(self, root: Path, uid: int) -> None:
        with self._lock:
            self._running[root] = self._running.get(root, 0) + 1
            owners = self._owners.setdefault(root, {})
            _hand_over(root, uid, uid, owners)

    def give_back(self, root: Path, uid: int) -> None:
        with self._lock:
            self._running[root] -= 1
            if self._running[root]:
                return
            del self._running[root]
            owners = self._owners.pop(root)
            with contextlib.suppress(FileNotFoundError):  # the workspace itself removed
                _hand_back(root, uid, owners)


LOANS = _Loans()


def _hand_over(root: Path, uid: int, gid: int, owners: Owners) -> None:
    """Make the workspace the sandbox uid's, so it can write there, noting each entry's
    owner in `owners`. Walked with directory fds and never following a symlink, so nothing
    placed in the workspace can point the change outside it; a hard-linked file (its other
    names may be outside) is left alone."""
    st = os.lstat(root)
    if (st.st_uid, st.st_gid) != (uid, gid):
        owners.setdefault((st.st_dev, st.st_ino), (st.st_uid, st.st_gid))
        os.chown(root, uid, gid, follow_symlinks=False)
    for name, dir_fd, st in _entries(root):
        if (st.st_uid, st.st_gid) == (uid, gid):
            continue
        if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
            continue
        owners.setdefault((st.st_dev, st.st_ino), (st.st_uid, st.st_gid))
        with contextlib.suppress(FileNotFoundError):
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)


def _hand_back(root: Path, uid: int, owners: Owners) -> None:
    """Every entry the sandbox uid holds back to whose it was; what the sandbox made, to
    the workspace's owner. As in `_hand_over`, no link is followed."""
    st = os.lstat(root)
    home = owners.get((st.st_dev, st.st_ino), (st.st_uid, st.st_gid))
    if st.st_uid == uid:
        os.chown(root, *home, follow_symlinks=False)
    for name, dir_fd, st in _entries(root):
        if st.st_uid == uid:
            owner = owners.get((st.st_dev, st.st_ino), home)
            with contextlib.suppress(FileNotFoundError):
                os.chown(name, *owner, dir_fd=dir_fd, follow_symlinks=False)


def _entries(root: Path) -> Iterator[tuple[str, int, os.stat_result]]:
    """Each entry under `root` with its directory's fd and its own stat (links not
    followed), skipping autonoma's own state, which stays autonoma's."""
    guarded = _identities(own_state())
    for _top, dirs, files, dir_fd in os.fwalk(root):
        dirs[:] = [d for d in dirs if _identity(d, dir_fd) not in guarded]
        for name in (*dirs, *files):
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed while we walked
            yield name, dir_fd, st


def _identity(name: str, dir_fd: int) -> tuple[int, int] | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _identities(places: list[Path]) -> set[tuple[int, int]]:
    found = set()
    for place in places:
        with contextlib.suppress(OSError):
            st = os.stat(place)
            found.add((st.st_dev, st.st_ino))
    return found
