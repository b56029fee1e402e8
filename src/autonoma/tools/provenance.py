"""Which workspace files hold what this run wrote.

A file the run did not write (one it found at its start, one another process or a parallel
task made or changed, one the person edited while the run was stopped) is outside content:
its text, and its name in a listing, may carry instructions meant to steer the agent, like a
web page's. The file tools ask `OwnFiles` whether what they show is the run's own and mark
their result `untrusted` when it is not.

A file is the run's own while its content is what the run's own write left: the write's
size, modification time and SHA-256 are kept, and a file whose size or time differ is hashed
again and compared. Writes by the file tools are recorded as they happen; files a step's
sandboxed code changed (which writes the workspace directly) are adopted from the change
journal after the step, so a change another process makes while such a step runs counts as
the step's. Kept per run, in memory, and rebuilt from the change journal when a run resumes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from autonoma.tools.workspace import Workspace, WorkspaceError

HASHED_BYTES = 50_000_000  # a bigger file whose time changed is taken as not the run's


@dataclass(frozen=True)
class _Written:
    size: int
    mtime_ns: int
    sha: str


class OwnFiles:
    def __init__(
        self, workspace: Workspace, shas: Mapping[str, Collection[str]] | None = None
    ) -> None:
        """`shas`: for each path, the contents (SHA-256) that count as the run's own: what
        change journals say its own steps, or the runs it works beside, left there."""
        self.workspace = workspace
        self._own: dict[str, _Written] = {}
        for path, own in (shas or {}).items():
            sha = self._hash(path)
            if sha is not None and sha in own:
                self._keep(path, sha)

    def wrote(self, path: str, data: bytes | None = None) -> None:
        """The run wrote `path`: `data` is its whole content now, if the caller has it."""
        sha = hashlib.sha256(data).hexdigest() if data is not None else self._hash(path)
        if sha is not None:
            self._keep(path, sha)

    def adopt(self, paths: Iterable[str]) -> None:
        """The files `paths` hold now count as the run's own (what its code wrote in a step,
        or what the person says is theirs)."""
        for path in paths:
            self.wrote(path)

    def appended(self, path: str, was_own: bool) -> None:
        """The run appended to `path`: still its own if it was before (or was not there)."""
        if was_own:
            self.wrote(path)
        else:
            self._own.pop(path, None)

    def removed(self, path: str) -> None:
        self._own.pop(path, None)

    def holds(self, path: str, data: bytes | None = None) -> bool:
        """Whether `path` holds what the run wrote (`data`: its whole content, if read)."""
        written = self._own.get(path)
        if written is None:
            return False
        if data is not None:
            return hashlib.sha256(data).hexdigest() == written.sha
        stat = self.workspace.stat(path)
        if stat is None:
            return False
        if (stat.st_size, stat.st_mtime_ns) == (written.size, written.mtime_ns):
            return True
        return self._hash(path) == written.sha

    def absent_or_own(self, path: str) -> bool:
        return self.workspace.stat(path) is None or self.holds(path)

    def foreign(self, paths: Iterable[str]) -> list[str]:
        """Those of `paths` that hold what the run did not write."""
        return [p for p in paths if not self.holds(p)]

    def named(self, paths: Iterable[str]) -> list[str]:
        """Those of `paths` the run did not make: names a listing would show from outside."""
        return [p for p in paths if p not in self._own]

    def _keep(self, path: str, sha: str) -> None:
        stat = self.workspace.stat(path)
        if stat is not None:
            self._own[path] = _Written(stat.st_size, stat.st_mtime_ns, sha)

    def _hash(self, path: str) -> str | None:
        digest, size = hashlib.sha256(), 0
        try:
            for chunk in self.workspace.chunks(path):
                size += len(chunk)
                if size > HASHED_BYTES:
                    return None
                digest.update(chunk)
        except (OSError, WorkspaceError):
            return None
        return digest.hexdigest()
