"""Checking a claim of completion against what can be checked: the files the task names.

A model judging its own work is unreliable, small ones especially; a file the person asked for
either exists with something in it or it does not. So task_complete is accepted only when every
file named in the task and the goals is in the workspace and not empty.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from autonoma.tools import Workspace, WorkspaceError

# A relative file name with an extension: haiku.txt, notes/today.md, src/app.py (not "e.g.").
DELIVERABLE_BYTES = 1_000_000  # of a named file read to count its lines

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


def input_files(said: Sequence[str], there: Iterable[str]) -> list[str]:
    """The workspace's files the texts name: by their whole name (`notes.md`), then by their
    name without its suffix as a word of the texts ("the file called notes")."""
    there = sorted(there)
    named = [name for name in named_files(said) if name in there]
    words = set(re.findall(r"[\w-]+", " ".join(said).lower()))
    by_stem = [name for name in there if PurePosixPath(name).stem.lower() in words]
    return list(dict.fromkeys([*named, *by_stem]))


@dataclass(frozen=True)
class Deliverable:
    name: str
    lines: int | None  # None: the file does not exist

    @property
    def done(self) -> bool:
        return bool(self.lines)

    def describe(self) -> str:
        if self.lines is None:
            return f"{self.name} does not exist yet"
        if not self.lines:
            return f"{self.name} is empty"
        return f"{self.name} holds {self.lines} line{'s' if self.lines != 1 else ''}"


def deliverables(workspace: Workspace, texts: Iterable[str]) -> list[Deliverable]:
    """The files the texts name, each with how many non-blank lines it holds so far."""
    found = []
    for name in named_files(texts):
        try:
            text = workspace.read(name, DELIVERABLE_BYTES).text()
        except (FileNotFoundError, IsADirectoryError):
            found.append(Deliverable(name, None))
            continue
        except (OSError, WorkspaceError):
            continue  # not a workspace file (outside, a link, a folder); nothing to check
        found.append(Deliverable(name, sum(1 for line in text.splitlines() if line.strip())))
    return found


def unmet_deliverables(
    workspace: Workspace, texts: Iterable[str], found_at_start: Container[str] = ()
) -> list[str]:
    """What is wrong with the files the texts name: missing or empty ones. A file the run
    found at its start and that is gone now is not missing: the goal may be to rename, move
    or delete it (the old rule refused "rename draft.txt to final.txt" for want of draft.txt)."""
    return [
        d.describe()
        for d in deliverables(workspace, texts)
        if not d.done and not (d.lines is None and d.name in found_at_start)
    ]


def misnamed(
    files: Sequence[str], texts: Iterable[str], found_at_start: Container[str] = ()
) -> list[str]:
    """Files the work made under a name close to one the texts give but not it, each said
    with the name it is near: the 1.5B model appended 'finished' to logtxt, not log.txt, for
    eight steps, and its checks kept failing on log.txt without saying why."""
    named = named_files(texts)
    if not named:
        return []
    # a name without the suffix the goals give: the 1.5B model wrote 'title' ten steps
    # running for "write it to title.txt", each time told title.txt was missing
    unsuffixed = {
        str(PurePosixPath(n).with_suffix("")): n for n in named if PurePosixPath(n).suffix
    }
    said = []
    for name in files:
        if name in named or name in found_at_start:
            continue
        alike = [n for n in named if abs(len(n) - len(name)) <= 2]  # cheap in a big tree
        near = difflib.get_close_matches(name, alike, n=1, cutoff=0.8) if alike else []
        near = near or ([unsuffixed[name]] if name in unsuffixed else [])
        if near:
            said.append(f"{name} is not {near[0]}, the name the goals give")
    return said
