import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from autonoma.runtime.executor import Job, JobChange, LocalExecutor, Schedule
from tests.runtime.helpers import fan


class Recorder:
    """Work that records what ran, with which inputs, and how many ran at once."""

    def __init__(self, fail: dict[str, int] | None = None, delay: float = 0.01) -> None:
        self.fail = fail or {}  # job id -> attempts that fail
        self.delay = delay
        self.started: list[str] = []
        self.inputs: dict[str, Mapping[str, Any]] = {}
        self.now = 0
        self.most = 0

    async def __call__(self, job: Job, inputs: Mapping[str, Any], attempt: int) -> str:
        self.started.append(job.id)
        self.inputs[job.id] = inputs
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.delay)
            if attempt <= self.fail.get(job.id, 0):
                raise RuntimeError(f"{job.id} broke on attempt {attempt}")
            return f"{job.id}-result"
        finally:
            self.now -= 1


async def test_fan_out_runs_together_and_fan_in_gets_every_result() -> None:
    work = Recorder()
    schedule = Schedule.of(fan())
    await LocalExecutor(concurrency=8).run(schedule, work)
    assert schedule.complete
    assert work.started[0] == "a" and work.started[-1] == "e"
    assert work.most == 3  # b, c and d at once
    assert work.inputs["e"] == {"b": "b-result", "c": "c-result", "d": "d-result"}


async def test_concurrency_limit_and_priority_order() -> None:
    jobs = [Job(f"j{i}", priority=i) for i in range(6)]
    work = Recorder()
    schedule = Schedule.of(jobs)
    await LocalExecutor(concurrency=2).run(schedule, work)
    assert work.most == 2
    assert work.started == ["j5", "j4", "j3", "j2", "j1", "j0"]


async def test_failure_skips_dependents_only_and_retries_count() -> None:
    jobs = [*fan(), Job("f"), Job("g", ("f",), retries=1)]
    work = Recorder(fail={"b": 9, "g": 1})
    changes: list[JobChange] = []

    async def record(change: JobChange) -> None:
        changes.append(change)

    schedule = Schedule.of(jobs)
    await LocalExecutor().run(schedule, work, record)
    assert schedule.status == {
        "a": "done",
        "b": "failed",
        "c": "done",
        "d": "done",
        "e": "skipped",
        "f": "done",
        "g": "done",
    }
    assert schedule.errors["b"] == "RuntimeError: b broke on attempt 1"
    assert schedule.errors["e"] == "skipped: b failed"
    assert schedule.attempts["g"] == 2 and "g" not in schedule.errors
    assert [(c.status, c.attempt) for c in changes if c.job == "g"] == [
        ("running", 1),
        ("pending", 1),
        ("running", 2),
        ("done", 2),
    ]


async def test_finished_jobs_are_kept_and_not_run_again() -> None:
    work = Recorder()
    schedule = Schedule.of(fan(), done={"a": "kept", "b": "kept-b"})
    await LocalExecutor().run(schedule, work)
    assert sorted(work.started) == ["c", "d", "e"]
    assert work.inputs["c"] == {"a": "kept"}
    assert work.inputs["e"]["b"] == "kept-b"


async def test_listener_can_add_jobs_and_halt() -> None:
    work = Recorder()
    schedule = Schedule.of([Job("a")])

    async def grow(change: JobChange) -> None:
        if change.status == "done" and change.job == "a":
            schedule.add(Job("b", ("a",)))
            schedule.add(Job("c", ("b",)))
        if change.status == "done" and change.job == "b":
            schedule.halt("budget spent")

    await LocalExecutor().run(schedule, work, grow)
    assert work.started == ["a", "b"]
    assert schedule.status["c"] == "pending"
    assert schedule.halted == "budget spent"


async def test_cancel_marks_running_jobs_cancelled() -> None:
    work = Recorder(delay=10)
    schedule = Schedule.of(fan())
    runner = asyncio.create_task(LocalExecutor().run(schedule, work))
    await asyncio.sleep(0.05)
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert schedule.status["a"] == "cancelled"
    assert schedule.status["b"] == "pending"


def test_schedule_refuses_unknown_dependencies_and_dropping_what_is_needed() -> None:
    with pytest.raises(ValueError, match="unknown job"):
        Schedule.of([Job("a", ("zz",))])
    schedule = Schedule.of(fan())
    with pytest.raises(ValueError, match="b, c, d depend on it"):
        schedule.drop("a")
    schedule.drop("e")
    assert "e" not in schedule.jobs
