"""The per-run workspace: the only directory the file tools can touch."""

from __future__ import annotations

import difflib
from pathlib import Path, PurePosixPath

from autonoma.errors import AutonomaError


class WorkspaceError(AutonomaError):
    """A path was refused because it would lead outside the workspace."""


class Workspace:
    """A directory jail. Every path is resolved (following symlinks) and must stay inside."""

    def __init__(self, root: Path) -> None:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise WorkspaceError(f"cannot create the workspace {root}: {err.strerror}") from err
        self.root = root.resolve()

    def resolve(self, path: str) -> Path:
        """The real path of `path` inside the workspace, or WorkspaceError saying why not."""
        if not path or not path.strip():
            raise WorkspaceError("the path is empty; give a path relative to the workspace")
        if "\0" in path:
            raise WorkspaceError("the path contains a NUL byte")
        if PurePosixPath(path).is_absolute() or Path(path).is_absolute():
            raise WorkspaceError(
                f"{path!r} is an absolute path; only paths relative to the workspace are allowed"
            )
        resolved = (self.root / path).resolve()
        if not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{path!r} leads outside the workspace (to {resolved}); it is refused"
            )
        return resolved

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def files(self) -> list[str]:
        """Every regular file in the workspace, relative, sorted (symlinks are not followed)."""
        return sorted(
            self.relative(p) for p in self.root.rglob("*") if p.is_file() and not p.is_symlink()
        )

    def not_a_file(self, path: str) -> FileNotFoundError:
        """The error for a path that is not a file here, naming the files it may have meant.
        Small models ask for "notes" when the file is notes.md and, told only that it is
        missing, ask again and again."""
        if self.resolve(path).is_dir():
            return FileNotFoundError(f"{path} is a directory; list_files shows its files")
        files = self.files()
        wanted = PurePosixPath(path.strip())
        close = difflib.get_close_matches(wanted.as_posix(), files, n=3, cutoff=0.75)
        stem = wanted.with_suffix("")
        same = [
            f
            for f in files
            if PurePosixPath(f).with_suffix("") == stem or PurePosixPath(f).name == wanted.name
        ]
        meant = list(dict.fromkeys([*close, *same]))[:3]
        if meant:
            names = " or ".join(meant)
            return FileNotFoundError(
                f"{path} is not a file in the workspace; did you mean {names}?"
            )
        return FileNotFoundError(
            f"{path} is not a file in the workspace (list_files shows what is)"
        )
