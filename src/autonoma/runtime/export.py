"""Trajectories for fine-tuning: each trial of a run (and of the runs serving it) as one
record, its steps as chat messages in the OpenAI fine-tuning format, with the feedback the
trial got and how it ended.

Steps before the first `trial_started` event are trial 1; a trial closed by `trial_ended` was
abandoned. An event belongs to the trial that was current when it was stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from autonoma.runtime.store import EventRecord, RunRecord, RunStore, StepRecord

FORMATS = ("jsonl",)


@dataclass
class _Trial:
    number: int
    first_step: int | None = None  # None: no `trial_started` recorded, so it owns no steps
    lessons: list[str] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    ended: EventRecord | None = None


def trajectories(store: RunStore, run_id: str) -> Iterator[dict[str, Any]]:
    """One record per trial of the run and of every run serving it, oldest run first."""
    runs = sorted(_with_children(store, store.get_run(run_id)), key=lambda r: r.created_at)
    for run in runs:
        events = store.events(run.id)
        trials = _trials(store.steps(run.id), events)
        last = max(trials)
        for number in sorted(trials):
            yield _record(run, trials[number], events, is_last=number == last)


def _with_children(store: RunStore, run: RunRecord) -> Iterator[RunRecord]:
    yield run
    for child in store.children(run.id):
        yield from _with_children(store, child)


def _trials(steps: Sequence[StepRecord], events: Sequence[EventRecord]) -> dict[int, _Trial]:
    trials = {1: _Trial(1, first_step=1)}
    current = trials[1]
    for event in events:
        if event.kind == "trial_started":
            number = int(event.data["trial"])
            current = trials.setdefault(number, _Trial(number))
            current.first_step = int(event.data["first_step"])
            current.lessons = [str(lesson) for lesson in event.data.get("lessons", [])]
        elif event.kind == "trial_ended":
            number = int(event.data["trial"])
            trials.setdefault(number, _Trial(number)).ended = event
        else:
            current.events.append(event)
    starts = sorted((t.first_step, t.number) for t in trials.values() if t.first_step)
    for step in steps:
        owner = max((s for s in starts if s[0] <= step.n), default=starts[0])
        trials[owner[1]].steps.append(step)
    return trials


def _record(
    run: RunRecord, trial: _Trial, events: Sequence[EventRecord], *, is_last: bool
) -> dict[str, Any]:
    rating = _rating(events)
    feedback = _feedback(trial)
    if trial.ended is not None:
        feedback.append(
            {
                "kind": "checks",
                "step": trial.ended.step,
                "checks": list(trial.ended.data.get("checks", [])),
                "score": trial.ended.data.get("score"),
            }
        )
    return {
        "run_id": run.id,
        "parent_id": run.parent_id,
        "task_id": run.task_id,
        "trial": trial.number,
        "goal": run.goal,
        "identity": run.identity,
        "model": run.model,
        "messages": _messages(run, trial),
        "steps": [_step(s) for s in trial.steps],
        "feedback": feedback,
        "outcome": _outcome(run, trial, events, is_last) | {"rating": rating},
    }


def _messages(run: RunRecord, trial: _Trial) -> list[dict[str, str]]:
    identity = run.identity
    system = (
        f"You are {identity.get('name', 'an agent')}, {identity.get('role', '')}\n"
        'Answer with JSON: "thoughts" (text, plan) and '
        '"command" (name and args of one command).'
    )
    task = [f"The task: {run.goal}"]
    task += [f"{i}. {goal}" for i, goal in enumerate(identity.get("goals", []), 1)]
    if trial.lessons:
        task.append("Lessons from earlier trials:")
        task += [f"- {lesson}" for lesson in trial.lessons]
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n".join(task)},
    ]
    for step in trial.steps:
        if step.status == "invalid":  # the model gave no usable action: nothing to learn from
            continue
        action = {
            "thoughts": step.thoughts,
            "command": {"name": step.command, "args": step.arguments},
        }
        messages.append({"role": "assistant", "content": json.dumps(action, ensure_ascii=False)})
        observation = step.observation if step.observation is not None else "(no result recorded)"
        messages.append({"role": "user", "content": observation})
    return messages


def _step(step: StepRecord) -> dict[str, Any]:
    return {
        "n": step.n,
        "status": step.status,
        "thoughts": step.thoughts,
        "command": step.command,
        "arguments": step.arguments,
        "observation": step.observation,
        "ok": step.ok,
        "untrusted": step.untrusted,
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
    }


def _feedback(trial: _Trial) -> list[dict[str, Any]]:
    feedback: list[dict[str, Any]] = []
    for event in trial.events:
        data = event.data
        if event.kind == "approval_answered":
            feedback.append(
                {
                    "kind": "approval",
                    "step": event.step,
                    "decision": data.get("decision"),
                    "comment": data.get("feedback", ""),
                }
            )
        elif event.kind == "monitor":
            feedback.append(
                {
                    "kind": "monitor",
                    "step": event.step,
                    "detection": data.get("detection"),
                    "evidence": data.get("evidence", ""),
                }
            )
        elif event.kind == "rated":
            feedback.append(
                {"kind": "rating", "score": data["score"], "comment": data.get("comment", "")}
            )
        elif event.kind == "self_reflection":
            feedback.append(
                {
                    "kind": "self_reflection",
                    "step": event.step,
                    "detection": data.get("detection"),
                    "lesson": data.get("lesson", ""),
                    "verdict": data.get("verdict", ""),
                }
            )
    return feedback


def _outcome(
    run: RunRecord, trial: _Trial, events: Sequence[EventRecord], is_last: bool
) -> dict[str, Any]:
    if trial.ended is not None:
        data = trial.ended.data
        verdicts = [e.data.get("verdict", "") for e in trial.events if e.kind == "self_reflection"]
        return {
            "status": "abandoned",
            "reason": str(data.get("why", "")),
            # the loop stores the reflection's verdict on its own event; a spec'd one wins
            "verdict": str(data.get("verdict") or (verdicts[-1] if verdicts else "")),
            "lesson": str(data.get("lesson", "")),
            "score": data.get("score"),
        }
    if not is_last:  # a trial followed by another without an end recorded
        return {"status": "abandoned", "reason": "", "verdict": "", "lesson": "", "score": None}
    finished = [e.data for e in events if e.kind == "run_finished"]
    return {
        "status": run.status,
        "reason": run.reason,
        "checks": list(finished[-1].get("checks", [])) if finished else [],
        "score": finished[-1].get("score") if finished else None,
    }


def _rating(events: Sequence[EventRecord]) -> dict[str, Any] | None:
    """The person's latest rating of the run (`autonoma rate`)."""
    rated = [e.data for e in events if e.kind == "rated"]
    if not rated:
        return None
    return {"score": int(rated[-1]["score"]), "comment": str(rated[-1].get("comment", ""))}
