"""Hindsight (Chain of Hindsight): when a task is tried again, the earlier attempts are shown
with their feedback, worst first, so the model sees the direction of improvement.

An attempt is an abandoned trial of a run (its `trial_ended` event) or an earlier run at the
same task. Its feedback: the person's rating (`autonoma rate`) and what they said when they
turned a command down in approval mode, else the checks' verdict (agent/progress.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
    return [
        str(e.data["feedback"])
        for e in events
        if e.kind == "approval_answered"
        and e.data.get("feedback")
        and e.step is not None
        and first <= e.step <= last
    ]


def _rating(events: Iterable[EventRecord]) -> int | None:
    rated = [e for e in events if e.kind == "rated"]
    return int(rated[-1].data["score"]) if rated else None


def trial_attempts(events: Sequence[EventRecord]) -> list[Attempt]:
    """The run's abandoned trials, in order."""
    attempts, first = [], 1
    for event in events:
        if event.kind == "trial_started":
            first = int(event.data["first_step"])
        elif event.kind == "trial_ended":
            data = event.data
            attempts.append(
                Attempt(
                    f"trial {data['trial']}",
                    f"abandoned at step {event.step} ({data.get('why', '')})",
                    float(data.get("score", 0.0)),
                    list(data.get("checks", [])),
                    _comments(events, first, event.step or 0),
                    lesson=str(data.get("lesson", "")),
                )
            )
    return attempts


def run_attempt(label: str, run: RunRecord, events: Sequence[EventRecord]) -> Attempt:
    """An earlier run at a task, judged by how it ended."""
    finished = [e for e in events if e.kind == "run_finished"]
    data = finished[-1].data if finished else {}
    lessons = [str(e.data["lesson"]) for e in events if e.kind == "self_reflection"]
    return Attempt(
        label,
        f"{run.status}: {run.reason}" if run.reason else run.status,
        float(data.get("score", 0.0)),
        list(data.get("checks", [])),
        _comments(events, 1, float("inf")),
        _rating(events),
        lessons[-1] if lessons else "",
    )
