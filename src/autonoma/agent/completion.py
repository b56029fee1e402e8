"""Checking a claim of completion against what can be checked: the files the task names.

A model judging its own work is unreliable, small ones especially; a file the person asked for
either exists with something in it or it does not. So task_complete is accepted only when every
file named in the task and the goals is in the workspace and not empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from autonoma.tools import Workspace, WorkspaceError

# A relative file name with an extension: haiku.txt, notes/today.md, src/app.py (not "e.g.").
_FILE_NAME = re.compile(
    r"(?<![\w/.@:-])((?:[\w-]+/)*[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])(?!\.\w)"
)


def named_files(texts: Iterable[str]) -> list[str]:
    """File names mentioned in the texts, in order of first mention."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in _FILE_NAME.finditer(text):
            seen.setdefault(match.group(1), None)
    return list(seen)


def unmet_deliverables(workspace: Workspace, texts: Iterable[str]) -> list[str]:
    """What is wrong with the files the texts name: missing or empty ones."""
    problems = []
    for name in named_files(texts):
        try:
            path = workspace.resolve(name)
        except WorkspaceError:
            continue  # not a workspace path; nothing to check
        if not path.is_file():
            problems.append(f"{name} does not exist")
        elif not path.read_text(encoding="utf-8", errors="replace").strip():
            problems.append(f"{name} is empty")
    return problems
