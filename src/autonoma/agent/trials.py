"""What a self-reflection leads to, and trials (Reflexion): an attempt that got nowhere ends,
and the task starts again from a clean state with the lessons kept.

The model's verdict is weighed against the checks (agent/progress.py) first: checked progress
is never thrown away by a new trial, and a trial that keeps being caught looping with nothing
checked gained ends even when the model would go on.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from autonoma.agent.progress import Progress
from autonoma.runtime.store import RunRecord, RunStore
from autonoma.tools.workspace import Workspace, own_state

Course = Literal["continue", "replan", "new_trial"]

SNAPSHOT_LIMIT = 100_000_000  # bytes: a bigger workspace is not copied; trials keep it as is


@dataclass(frozen=True)
class Choice:
    course: Course
    why: str


def choose_course(
    verdict: Course,
    progress: Progress,
    *,
    start_score: float,
    detections: int,
    trials_left: int,
    can_replan: bool,
    escalate_after: int = 2,
) -> Choice:
    """What to do after a reflection. `detections`: problems caught in this trial so far,
    this one included; `start_score`: the checks' score when the trial began."""
    if progress.complete:
        return Choice("continue", "the checks pass: every file the goals name is in place")
    gained = progress.score > start_score
    if verdict == "new_trial":
        if gained:
            return Choice("continue", "the checks show progress in this trial; it is kept")
        if trials_left <= 0:
            return Choice("continue", "no trials are left")
        return Choice("new_trial", "the reflection says start again and no check passed since")
    if verdict == "replan":
        if can_replan:
            return Choice("replan", "the reflection says the plan is off")
        return Choice("continue", "a single-task run: the next steps make a new plan")
    if detections >= escalate_after and not gained and trials_left > 0:
        return Choice(
            "new_trial", f"{detections} problems caught in this trial and no check passed since"
        )
    return Choice("continue", "the reflection says go on with the lesson")


def _size(root: Path) -> int:
    return sum(e.stat.st_size for e in Workspace(root).walk() if e.stat is not None)


def _own_state_in(folder: str, names: list[str]) -> list[str]:
    """The names in `folder` that are autonoma's own state (a workspace may contain its home):
    never copied into a snapshot, never moved aside with a trial."""
    guarded = set()
    for place in own_state():
        with contextlib.suppress(OSError):
            guarded.add(Path(place).resolve())
    return [n for n in names if (Path(folder) / n).resolve() in guarded]


class TrialWorkspace:
    """The workspace as it was when the run began (copied beside the run store), so a new trial
    starts from it; each abandoned trial's workspace is moved aside, never deleted."""

    def __init__(self, root: Path, keep: Path) -> None:
        self.root = root
        self.keep = keep  # <store dir>/trials/<run id>
        self.start = keep / "start"

    @classmethod
    def of(cls, store: RunStore, run: RunRecord) -> TrialWorkspace:
        """The run's, kept beside its store."""
        return cls(Path(run.workspace), store.path.parent / "trials" / run.id)

    def snapshot(self) -> bool:
        """Copy the workspace once, at the run's start. False if it is too big to copy."""
        if self.start.exists():
            return True
        if _size(self.root) > SNAPSHOT_LIMIT:
            return False
        self.keep.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.root, self.start, symlinks=True, ignore=_own_state_in)
        return True

    def restore(self, trial: int) -> Path | None:
        """Move the workspace aside as trial `trial`'s and put the start back; the archive's
        path, or None (the workspace left as it is) when there is no snapshot."""
        if not self.start.exists():
            return None
        archive = self.keep / f"trial-{trial}"
        again = 1
        while archive.exists():  # a run resumed after a crash may end a trial twice
            archive, again = self.keep / f"trial-{trial}.{again}", again + 1
        archive.mkdir(parents=True)
        kept = _own_state_in(str(self.root), [e.name for e in self.root.iterdir()])
        for entry in [e for e in self.root.iterdir() if e.name not in kept]:
            shutil.move(str(entry), archive / entry.name)
        shutil.copytree(self.start, self.root, symlinks=True, dirs_exist_ok=True)
        return archive
