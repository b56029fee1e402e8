"""Files whose whole text the prompt already shows as they are now. Reading one again can
tell the model nothing new, yet the 1.5B model did it step after step: in the everyday suite
with JSON actions (suite_1128), 120 of 299 steps repeated an earlier one exactly, most of
them a re-read of an input it had been shown whole (read, write, read, read). Told in words
that a step repeats, it read again; so the next step's schema offers `read_file` only for the
other files, and not at all when every file is in view.

A file is in view when its text, at least SHORTEST characters, is in the prompt's steps line
for line (leading and trailing spaces set aside). The files found at the start, shown in the
fixed instructions, may still be read once, to have them among the latest steps. Shorter
texts ("6") could be in the prompt by chance, so they stay readable, as does everything in a
workspace of more than MOST_FILES files, whose names would make the schema long."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import replace

from autonoma.tools import Tool, Workspace, WorkspaceError

MOST_FILES = 60
READ_BYTES = 8000
SHORTEST = 12
READ = "read_file"


def in_view(workspace: Workspace, texts: Iterable[str]) -> list[str] | None:
    """The workspace files whose current text `texts` (the prompt's messages) show whole;
    None when the workspace is too big to say (every file stays readable)."""
    names = workspace.visible_files()
    if len(names) > MOST_FILES:
        return None
    shown = "\n" + _lines("\n".join(texts)) + "\n"
    found = []
    for name in names:
        try:
            read = workspace.read(name, READ_BYTES)
        except (OSError, WorkspaceError):
            continue
        if read.cut or b"\0" in read.data:
            continue
        text = _lines(read.text())
        if len(text) >= SHORTEST and "\n" + text + "\n" in shown:
            found.append(name)
    return found


def readable(workspace: Workspace, shown: Sequence[str] | None) -> list[str] | None:
    """The files `read_file` may name at the next step: those not in view; None for any."""
    if not shown:
        return None
    return [name for name in workspace.visible_files() if name not in shown]


def with_readable(tools: Sequence[Tool], allowed: Sequence[str] | None) -> list[Tool]:
    """The tools with `read_file`'s path held to `allowed` (for the answer's schema only), and
    `read_file` left out when no file is allowed and other commands are offered."""
    if allowed is None or not any(t.name == READ for t in tools):
        return list(tools)
    if not allowed:
        others = [t for t in tools if t.name != READ]
        return others if others else list(tools)
    return [_narrowed(t, allowed) if t.name == READ else t for t in tools]


def _narrowed(tool: Tool, allowed: Sequence[str]) -> Tool:
    parameters = copy.deepcopy(tool.spec().parameters)
    path = parameters.get("properties", {}).get("path")
    if not isinstance(path, dict):
        return tool
    path["enum"] = list(allowed)
    return replace(tool, parameters=parameters)


def _lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines())
