"""What a run changed in its workspace, step by step, and the way back (`autonoma undo`).

After each step the workspace is walked (sizes and modification times; a file is hashed only
when they differ from what was last seen) and every file created, changed or removed since the
step before is recorded against the step, whoever changed it: a file tool, a program, a shell
command. The content a change replaced is kept by its hash, so undoing the steps after step N
puts back what the workspace held after step N. aider's commit per edit with `/undo` is the
model. Files bigger than `KEEP_BYTES` (or past `KEEP_TOTAL` in all) are recorded by hash and
size alone, and undo says it cannot bring them back. A file changed again after the run (by
the person, or another run) is left alone unless forced: undo never destroys what it did not
make.

Everything lives beside the run store, in `changes/<run id>/`: `journal.jsonl` (one line a
change), `seen.json` (the workspace as last seen) and `blobs/` (kept contents by SHA-256).
Reads and writes of the workspace go through its jail (tools/workspace.py), so a recorded path
cannot lead outside it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from autonoma.tools.workspace import Workspace, WorkspaceError

KEEP_BYTES = 10_000_000  # a bigger file is recorded by hash and size, not kept
KEEP_TOTAL = 500_000_000  # bytes kept for one run, at most
_SHA = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Seen:
    size: int
    mtime_ns: int
    sha: str


@dataclass(frozen=True)
class Change:
    step: int
    path: str
    kind: Literal["created", "changed", "removed"]
    before: str | None  # the SHA-256 of what it replaced (None: the file was not there)
    after: str | None  # of what it left (None: removed)
    kept: bool  # whether `before` can be put back

    def describe(self) -> str:
        return f"{self.path} ({self.kind})"


class ChangeJournal:
    def __init__(self, workspace: Workspace | Path, folder: Path) -> None:
        self._workspace = workspace  # a path is opened only when the files are needed:
        self.folder = folder  # `show` reads the journal of a run whose workspace is gone
        self.blobs = folder / "blobs"
        self._seen: dict[str, Seen] | None = None
        self._kept: int | None = None  # bytes in blobs/, counted once a process

    @functools.cached_property
    def workspace(self) -> Workspace:
        place = self._workspace
        return place if isinstance(place, Workspace) else Workspace(place)

    # recording

    def begin(self) -> None:
        """Take the workspace as it is now as the starting point (a run's start, or its
        resumption: what changed while it was stopped is not its doing). What is there is
        kept, so that the first change to it can be undone."""
        self._seen = self._look(self._load_seen())
        self._save_seen()

    def record(self, step: int) -> list[Change]:
        """The changes since the last look, recorded against `step`."""
        before = self._seen if self._seen is not None else self._load_seen()
        now = self._look(before)
        changes = []
        for path in sorted(set(before) | set(now)):
            old, new = before.get(path), now.get(path)
            if old is not None and new is not None and old.sha == new.sha:
                continue
            kind: Literal["created", "changed", "removed"] = (
                "created" if old is None else "removed" if new is None else "changed"
            )
            was = old.sha if old else None
            kept = was is None or (self.blobs / was).is_file()
            changes.append(Change(step, path, kind, was, new.sha if new else None, kept))
        if changes:
            self.folder.mkdir(parents=True, exist_ok=True)
            with (self.folder / "journal.jsonl").open("a") as journal:
                for change in changes:
                    journal.write(json.dumps(asdict(change)) + "\n")
                journal.flush()
                os.fsync(journal.fileno())
        self._seen = now
        self._save_seen()
        return changes

    def changes(self) -> list[Change]:
        path = self.folder / "journal.jsonl"
        if not path.is_file():
            return []
        found = []
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError, TypeError):
                found.append(Change(**json.loads(line)))
        return found

    def own_shas(self) -> dict[str, str]:
        """What the run's steps left in each file they changed and still there: the run's
        own work, for a resumed run's provenance (tools/provenance.py)."""
        last: dict[str, str | None] = {}
        for change in self.changes():
            last[change.path] = change.after
        seen = self._seen if self._seen is not None else self._load_seen()
        return {
            path: sha
            for path, sha in last.items()
            if sha is not None and path in seen and seen[path].sha == sha
        }

    # undoing

    def undo(self, to_step: int, force: bool = False) -> list[str]:
        """Put the workspace back as it was after step `to_step` (0: before the run's first
        step). What was done, file by file."""
        done = []
        later = [c for c in self.changes() if c.step > to_step]
        now = self._look(self._seen or self._load_seen())
        handled: set[str] = set()
        undone: set[str] = set()
        for change in reversed(later):
            if change.path in handled:
                continue  # its earliest later change decides what comes back
            handled.add(change.path)
            first = next(c for c in later if c.path == change.path)
            last = change
            current = now.get(change.path)
            if (current.sha if current else None) != last.after and not force:
                done.append(
                    f"left {change.path}: it changed after the run's step {last.step} "
                    "(--force puts it back anyway)"
                )
                continue
            try:
                said = self._put_back(change.path, first)
            except (OSError, WorkspaceError) as error:  # a folder in the way, a tampered path
                said = f"left {change.path}: {error}"
            done.append(said)
            if not said.startswith("left "):
                undone.add(change.path)
        self._forget(later, undone)
        self._seen = None
        self.begin()  # what undo did is not a step's change
        return done

    def _forget(self, later: list[Change], undone: set[str]) -> None:
        """Move the undone changes from the journal to `undone.jsonl`, so that the journal
        holds what the workspace now reflects and a later undo starts from there."""
        gone = [c for c in later if c.path in undone]
        if not gone:
            return
        with (self.folder / "undone.jsonl").open("a") as kept:
            kept.writelines(json.dumps(asdict(c)) + "\n" for c in gone)
        remaining = [c for c in self.changes() if c not in gone]
        part = self.folder / f"journal.{os.getpid()}.part"
        part.write_text("".join(json.dumps(asdict(c)) + "\n" for c in remaining))
        os.replace(part, self.folder / "journal.jsonl")

    def _put_back(self, path: str, first: Change) -> str:
        if first.before is None:
            with contextlib.suppress(FileNotFoundError):
                self.workspace.delete(path)
            return f"removed {path} (made at step {first.step})"
        if not _SHA.fullmatch(first.before):  # a journal edited by hand: no path from it
            return f"left {path}: its record is not a content hash"
        blob = self.blobs / first.before
        if not blob.is_file():
            return (
                f"cannot restore {path}: it was too big to keep (over {KEEP_BYTES // 1_000_000} "
                "MB, or past what one run keeps), so it was recorded by hash and size only"
            )
        self.workspace.write(path, blob.read_bytes())
        return f"restored {path} as it was before step {first.step}"

    # looking

    def _look(self, before: dict[str, Seen]) -> dict[str, Seen]:
        seen: dict[str, Seen] = {}
        if self._kept is None:
            self._kept = self._kept_bytes()
        for entry in self.workspace.walk():
            if entry.cut or entry.stat is None:
                continue
            size, mtime = entry.stat.st_size, entry.stat.st_mtime_ns
            old = before.get(entry.path)
            if old is not None and (old.size, old.mtime_ns) == (size, mtime):
                seen[entry.path] = old
                continue
            sha = self._hash_and_keep(entry.path, size)
            if sha is not None:
                seen[entry.path] = Seen(size, mtime, sha)
        return seen

    def _hash_and_keep(self, path: str, size: int) -> str | None:
        assert self._kept is not None
        keep = size <= KEEP_BYTES and self._kept + size <= KEEP_TOTAL
        try:
            digest, data = hashlib.sha256(), bytearray()
            for chunk in self.workspace.chunks(path):
                digest.update(chunk)
                if keep:
                    data += chunk
        except (OSError, WorkspaceError):
            return None  # gone, or no longer a regular file, since the walk saw it
        sha = digest.hexdigest()
        blob = self.blobs / sha
        if keep and not blob.exists():
            self.blobs.mkdir(parents=True, exist_ok=True)
            part = blob.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(bytes(data))
            os.replace(part, blob)
            self._kept += size
        return sha

    def _kept_bytes(self) -> int:
        if not self.blobs.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.blobs.iterdir() if p.is_file())

    def _load_seen(self) -> dict[str, Seen]:
        path = self.folder / "seen.json"
        try:
            return {k: Seen(**v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError, TypeError):
            return {}

    def _save_seen(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        part = self.folder / f"seen.{os.getpid()}.part"
        part.write_text(json.dumps({k: asdict(v) for k, v in (self._seen or {}).items()}))
        os.replace(part, self.folder / "seen.json")


def journal_of(store_dir: Path, run_id: str, workspace: Path) -> ChangeJournal:
    """The journal of a run whose store lives in `store_dir`."""
    return ChangeJournal(workspace, store_dir / "changes" / run_id)
