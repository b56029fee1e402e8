"""Helpers shared by tests (moved out of test modules: a test module is never imported
by another)."""

from __future__ import annotations

import time
from typing import Any

from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.executor import Job
from autonoma.runtime.store import RunStore, StepRecord, StepStatus
from tests.agent.helpers import HAIKU

IDENTITY = {"name": "HaikuGPT", "role": "an AI that writes haiku", "goals": ["Write a haiku"]}
THOUGHTS = {"text": "t", "reasoning": "r", "plan": "p", "criticism": "c", "speak": "s"}


def fan() -> list[Job]:
    """a fans out to b, c, d; e fans in from all three."""
    return [
        Job("a"),
        Job("b", ("a",)),
        Job("c", ("a",)),
        Job("d", ("a",)),
        Job("e", ("b", "c", "d")),
    ]


def two_trial_run(store: RunStore) -> str:
    """Trial 1: steps 1-3 (one invalid, one turned down with feedback), caught looping and
    abandoned; trial 2: steps 4-5, completed, then rated."""
    run_id = new_run(store)
    add_step(store, run_id, 1, "read_file", "no such file", path="notes.txt")
    add_step(store, run_id, 2, "", "the answer was not JSON", status="invalid")
    store.add_event(run_id, "approval_asked", {"command": "write_file"}, 3)
    store.add_event(
        run_id,
        "approval_answered",
        {"decision": "feedback", "times": 1, "feedback": "rhyme less"},
        3,
    )
    add_step(store, run_id, 3, "write_file", "the person said: rhyme less", status="denied")
    store.add_event(
        run_id, "monitor", {"detection": "stalled", "steps": [1, 3], "evidence": "no files"}, 3
    )
    store.add_event(
        run_id,
        "self_reflection",
        {"detection": "stalled", "lesson": "write the file first", "verdict": "new_trial"},
        3,
    )
    trial_end = {"trial": 1, "why": "start again", "lesson": "write the file first"}
    store.add_event(
        run_id, "trial_ended", trial_end | {"checks": ["no haiku.txt"], "score": 0.0}, 3
    )
    started = {"trial": 2, "first_step": 4, "lessons": ["write the file first"]}
    store.add_event(run_id, "trial_started", started)
    add_step(store, run_id, 4, "write_file", "wrote haiku.txt", path="haiku.txt", text=HAIKU)
    add_step(store, run_id, 5, "task_complete", "done", reason="haiku.txt is written")
    store.set_status(run_id, "completed", "haiku.txt is written")
    finished = {"status": "completed", "checks": ["haiku.txt exists"], "score": 1.0}
    store.add_event(run_id, "run_finished", finished)
    store.add_event(run_id, "rated", {"score": 4, "comment": "good, a bit long"})
    return run_id


def new_run(store: RunStore, goal: str = "Write a haiku", **parent: Any) -> str:
    run = store.create_run(
        goal=goal, identity=IDENTITY, settings={}, workspace="/ws", model="scripted", **parent
    )
    return run.id


def add_step(
    store: RunStore,
    run_id: str,
    n: int,
    command: str,
    observation: str,
    *,
    status: StepStatus = "done",
    **args: Any,
) -> None:
    record = StepRecord(
        run_id=run_id,
        n=n,
        status="invalid" if status == "invalid" else "running",
        thoughts={} if status == "invalid" else THOUGHTS,
        command=command,
        arguments=args,
        observation=observation if status == "invalid" else None,
        prompt_tokens=100 + n,
        completion_tokens=10 + n,
        started_at=time.time(),
    )
    store.begin_step(record, BudgetSpent())
    if status != "invalid":
        store.finish_step(run_id, n, status=status, observation=observation, ok=status == "done")
