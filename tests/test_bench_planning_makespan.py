"""The makespan benchmark's harness works: its fake server answers and rate-limits, and a
handful of tasks go through the executor and the planned strategy (no timing is asserted)."""

from __future__ import annotations

import httpx2

from autonoma.runtime.executor import Job
from bench.planning_makespan import (
    FakeServer,
    critical_path,
    independent,
    layered,
    rate_bound,
    run_executor,
    run_planned,
)


def test_the_server_answers_429_with_retry_after_beyond_its_limit() -> None:
    body = {"model": "fake", "messages": [{"role": "user", "content": "[job a] hi"}]}
    with FakeServer(limit=3, period_s=60) as server:
        codes = []
        for _ in range(5):
            response = httpx2.post(f"{server.base_url}/chat/completions", json=body, timeout=10)
            codes.append(response.status_code)
            if response.status_code == 429:
                assert 1 <= int(response.headers["retry-after"]) <= 60
            else:
                assert response.json()["usage"]["total_tokens"] > 0
        stats = server.stats()
    assert codes == [200, 200, 200, 429, 429]
    assert stats["admitted"] == 3
    assert stats["rejected_429"] == 2


async def test_tasks_go_through_the_executor_and_the_planned_strategy() -> None:
    with FakeServer() as server:
        flat = await run_executor(server.base_url, independent(6), concurrency=100, per_minute=600)
        graph = layered(2, 3)
        planned = await run_planned(server.base_url, graph, concurrency=10, per_minute=600)
        stats = server.stats()
    assert (flat.done, flat.failed) == (6, 0)
    assert (planned.done, planned.failed, planned.steps) == (6, 0, 6), planned.errors
    assert stats["requests"] == 12
    assert stats["rejected_429"] == 0
    assert set(stats["latency_by_job"]) == {j.id for j in independent(6) + graph}


def test_bounds() -> None:
    assert rate_bound(1000, 3500, 60, 1.0) == 1.0
    assert rate_bound(1000, 350, 6, 1.0) == 13.0
    jobs = [Job("a"), Job("b"), Job("c", ("a", "b")), Job("d", ("c",))]
    assert critical_path(jobs, {"a": 1.0, "b": 2.0, "c": 0.5, "d": 1.0}) == 3.5
    deps = {j.id: j.deps for j in layered(3, 2)}
    assert deps["L02-01"] == ("L01-01", "L01-00")
