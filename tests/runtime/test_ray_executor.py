"""The Ray executor on a real Ray started on this machine: the same scheduling as the local
executor, attempts as Ray tasks, messages from workers handled on the driver, cancelling."""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from autonoma.runtime.executor import Job, JobChange, LocalExecutor, Schedule
from tests.runtime.helpers import fan

ray_executor = pytest.importorskip("autonoma.runtime.executor.ray")
RayExecutor = ray_executor.RayExecutor
RayUnavailable = ray_executor.RayUnavailable
ChannelError = ray_executor.ChannelError


def graph() -> list[Job]:
    """The local tests' fan-out and fan-in, plus g (one retry) needing f, and h needing g."""
    return [*fan(), Job("f"), Job("g", ("f",), retries=1), Job("h", ("g",))]


def attempt(job: Job, inputs: Mapping[str, Any], n: int, *, fail: dict[str, int]) -> str:
    """Picklable work: fails the first `fail[job]` attempts, else names what it was given."""
    if n <= fail.get(job.id, 0):
        raise RuntimeError(f"{job.id} broke on attempt {n}")
    return f"{job.id}({', '.join(f'{k}={v}' for k, v in sorted(inputs.items()))})"


async def run_graph(executor: Any, work: Any) -> tuple[Schedule, list[JobChange]]:
    changes: list[JobChange] = []

    async def record(change: JobChange) -> None:
        changes.append(change)

    schedule = Schedule.of(graph())
    await executor.run(schedule, work, record)
    return schedule, changes


async def test_the_same_graph_gives_the_same_results_locally_and_on_ray(ray_cluster: str) -> None:
    fail = {"b": 9, "g": 1}
    here = functools.partial(attempt, fail=fail)

    async def local_work(job: Job, inputs: Mapping[str, Any], n: int) -> str:
        return here(job, inputs, n)

    local, _ = await run_graph(LocalExecutor(), local_work)
    executor = RayExecutor()
    try:
        on_ray, ray_changes = await run_graph(executor, executor.remote(here))
    finally:
        executor.close()

    assert (
        on_ray.status
        == local.status
        == {
            "a": "done",
            "b": "failed",
            "c": "done",
            "d": "done",
            "e": "skipped",
            "f": "done",
            "g": "done",
            "h": "done",
        }
    )
    assert on_ray.results == local.results
    assert on_ray.results["h"] == "h(g=g(f=f()))"
    assert on_ray.errors == local.errors
    assert on_ray.errors["b"] == "RuntimeError: b broke on attempt 1"
    assert on_ray.errors["e"] == "skipped: b failed"
    assert on_ray.attempts == local.attempts
    assert [(c.status, c.attempt) for c in ray_changes if c.job == "g"] == [
        ("running", 1),
        ("pending", 1),
        ("running", 2),
        ("done", 2),
    ]
    # fan-out: b, c and d were all started before any of them finished
    fan = [(c.job, c.status) for c in ray_changes if c.job in "bcd"]
    assert {j for j, s in fan[:3] if s == "running"} == {"b", "c", "d"}


async def talk(channel: Any, count: int) -> dict[str, Any]:
    """On a worker: reports `count` messages, each waiting for the driver's reply."""
    replies = [await asyncio.to_thread(channel.send, ("note", i)) for i in range(count)]
    return {"pid": os.getpid(), "replies": replies}


async def test_a_call_runs_on_a_worker_and_its_messages_are_handled_here_in_order(
    ray_cluster: str,
) -> None:
    executor = RayExecutor()
    handled: list[int] = []

    async def handle(message: tuple[str, int]) -> int:
        await asyncio.sleep(0.001 * (5 - message[1] % 5))  # slower first: order still kept
        handled.append(message[1])
        return message[1] * 10

    try:
        result = await executor.call(talk, 12, on_message=handle)
        assert result["pid"] != os.getpid()
        assert handled == list(range(12))
        assert result["replies"] == [i * 10 for i in range(12)]

        async def refuse(message: tuple[str, int]) -> int:
            raise ValueError("the store is read-only")

        with pytest.raises(ChannelError, match="could not handle note: ValueError: the store"):
            await executor.call(talk, 1, on_message=refuse)
    finally:
        executor.close()


async def sleep_until_cancelled(channel: Any, marker: str) -> str:
    path = Path(marker)
    path.write_text("started\n")
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError:
        await asyncio.to_thread(channel.send, ("stopping", "cleanup still reaches the driver"))
        path.write_text(path.read_text() + "cancelled\n")
        raise
    return "slept"


async def test_cancelling_the_run_cancels_the_ray_tasks(ray_cluster: str, tmp_path: Path) -> None:
    executor = RayExecutor()
    heard: list[Any] = []

    async def hear(message: Any) -> None:
        heard.append(message)

    async def work(job: Job, inputs: Mapping[str, Any], n: int) -> Any:
        marker = str(tmp_path / f"{job.id}.txt")
        return await executor.call(sleep_until_cancelled, marker, on_message=hear)

    schedule = Schedule.of([Job("a"), Job("b"), Job("c", ("a",))])
    running = asyncio.create_task(executor.run(schedule, work))
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"{j}.txt").exists() for j in "ab"):
            assert time.monotonic() < deadline, "the Ray tasks never started"
            await asyncio.sleep(0.05)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    finally:
        executor.close()
    assert schedule.status == {"a": "cancelled", "b": "cancelled", "c": "pending"}
    for job in "ab":
        assert (tmp_path / f"{job}.txt").read_text() == "started\ncancelled\n"
    assert heard == [("stopping", "cleanup still reaches the driver")] * 2


async def test_an_unreachable_cluster_is_a_clear_error_before_any_job_starts() -> None:
    started: list[str] = []

    async def work(job: Job, inputs: Mapping[str, Any], n: int) -> str:
        started.append(job.id)
        return "ran"

    schedule = Schedule.of([Job("a")])
    with pytest.raises(RayUnavailable, match=r"cannot reach a Ray cluster at 127\.0\.0\.1:1: "):
        await RayExecutor("127.0.0.1:1").run(schedule, work)
    assert started == [] and schedule.status == {"a": "pending"}
    with pytest.raises(RayUnavailable, match="is not HOST:PORT"):
        RayExecutor("head-node").connect()
    with pytest.raises(RayUnavailable) as unreachable:
        RayExecutor("127.0.0.1:1").connect()
    assert "ray start --head" in str(unreachable.value) and "\n" not in str(unreachable.value)
