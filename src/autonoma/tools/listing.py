"""Which of a workspace's files a person and the model are shown: not the insides of
version-control and environment folders (a git repository's objects and hooks, a virtual
environment, node_modules), nor what the workspace's top-level `.gitignore` ignores (read
with `pathspec`, git's own rules). The files stay there and the tools still reach them by
name; only listings leave them out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pathspec

from autonoma.errors import AutonomaError

if TYPE_CHECKING:
    from autonoma.tools.workspace import Workspace

HIDDEN_FOLDERS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox"}
)  # fmt: skip
GITIGNORE_BYTES = 100_000


def ignored_by(workspace: Workspace) -> pathspec.GitIgnoreSpec | None:
    """The workspace's top-level .gitignore as a matcher, or None without one."""
    try:
        text = workspace.read(".gitignore", GITIGNORE_BYTES).text()
    except (OSError, ValueError, AutonomaError):  # none, or not one to read
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except (ValueError, TypeError):  # a pattern git would not take: list everything
        return None


def hidden_by(workspace: Workspace) -> Callable[[str], bool]:
    """Whether a file (a relative path) is inside HIDDEN_FOLDERS or ignored by git; the
    .gitignore read once."""
    spec = ignored_by(workspace)
    return lambda name: (
        bool(HIDDEN_FOLDERS.intersection(name.split("/")[:-1]))
        or (spec is not None and spec.match_file(name))
    )


def visible(workspace: Workspace, files: Sequence[str]) -> list[str]:
    """`files` (relative paths) without those inside HIDDEN_FOLDERS or ignored by git."""
    hidden = hidden_by(workspace)
    return [name for name in files if not hidden(name)]
