"""Hindsight (Chain of Hindsight): when a task is tried again, the earlier attempts are shown
with their feedback, worst first, so the model sees the direction of improvement.

An attempt is an abandoned trial of a run (its `trial_ended` event) or an earlier run at the
same task. Its feedback: the person's rating (`autonoma rate`) and what they said when they
turned a command down in approval mode, else the checks' verdict (agent/progress.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from autonoma.runtime.events import (
    ApprovalAnswered,
    Rated,
    RunFinished,
    SelfReflected,
    TrialEnded,
    TrialStarted,
)
from autonoma.runtime.store import EventRecord, RunRecord


@dataclass(frozen=True)
class Attempt:
    label: str  # "trial 1", "attempt 2"
    outcome: str
    score: float = 0.0  # the share of checks that passed when it ended
    checks: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # the person's, in approval mode
    rating: int | None = None  # the person's, 1 to 5
    lesson: str = ""

    @property
    def rank(self) -> float:
        """How good it was: the person's rating where there is one, else the checks."""
        return (self.rating - 1) / 4 if self.rating is not None else self.score

    def describe(self) -> str:
        parts = [f"{self.label}: {self.outcome}"]
        if self.rating is not None:
            parts.append(f"the person rated it {self.rating} of 5")
        if self.checks:
            parts.append(f"checks ({self.score:.0%} passed): " + "; ".join(self.checks))
        parts += [f'the person said: "{c}"' for c in self.comments]
        if self.lesson:
            parts.append(f"lesson: {self.lesson}")
        return ". ".join(parts)


def worst_to_best(attempts: Iterable[Attempt]) -> list[Attempt]:
    return sorted(attempts, key=lambda a: a.rank)  # stable: equal ones stay in order


def _comments(events: Iterable[EventRecord], first: int, last: float) -> list[str]:
    """What the person said when they turned commands down between two steps."""
    said = []
    for record in events:
        match record.event:
            case ApprovalAnswered(feedback=feedback, by="person") if feedback:
                if record.step is not None and first <= record.step <= last:
                    said.append(feedback)
    return said


def _rating(events: Iterable[EventRecord]) -> int | None:
    rated = [e.event.score for e in events if isinstance(e.event, Rated)]
    return rated[-1] if rated else None


def trial_attempts(events: Sequence[EventRecord]) -> list[Attempt]:
    """The run's abandoned trials, in order."""
    attempts, first = [], 1
    for record in events:
        match record.event:
            case TrialStarted(first_step=first_step):
                first = first_step
            case TrialEnded(trial=trial, why=why, score=score, checks=checks, lesson=lesson):
                attempts.append(
                    Attempt(
                        f"trial {trial}",
                        f"abandoned at step {record.step} ({why})",
                        score,
                        list(checks),
                        _comments(events, first, record.step or 0),
                        lesson=lesson,
                    )
                )
    return attempts


def run_attempt(label: str, run: RunRecord, events: Sequence[EventRecord]) -> Attempt:
    """An earlier run at a task, judged by how it ended."""
    finished = [e.event for e in events if isinstance(e.event, RunFinished)]
    last = finished[-1] if finished else None
    lessons = [e.event.lesson for e in events if isinstance(e.event, SelfReflected)]
    return Attempt(
        label,
        f"{run.status}: {run.reason}" if run.reason else run.status,
        (last.score or 0.0) if last else 0.0,
        list(last.checks or []) if last else [],
        _comments(events, 1, float("inf")),
        _rating(events),
        lessons[-1] if lessons else "",
    )
