"""Makespan of task graphs on the local executor, against a slow, rate-limited fake server.

The server is a real HTTP server on 127.0.0.1 in its own process (uvicorn + Starlette). It
answers /v1/chat/completions in OpenAI's format, with usage, after a latency drawn uniformly
from L - J .. L + J, and it admits at most R requests in any sliding window of P seconds:
beyond that it answers 429 with Retry-After (whole seconds, rounded up, as HTTP says) and
counts it. Every task is one real model request through the real stack: `LocalExecutor`
runs a `Schedule` of `Job`s with a work function calling `OpenAICompatModel.request` (opened
from an `openai:` spec by `open_model`) whose `RateLimiter` is set to the same R per P.
The executor's concurrency is 1,000, so the limiter or the graph, never the concurrency, is
the bound.

independent   N tasks with no dependencies. The rate-limit bound is
                  B_rate = (ceil(N / R) - 1) * P + L
              the limiter lets R requests go at once, the next R one window later, and so on;
              the last batch then takes L. Three settings: the issue's R = 3,500 over P = 60 s,
              where N = 1,000 fits one window (B_rate = L: this measures how fast 1,000 slow
              requests are sent and answered, not the limiter), and the same 3,500 a minute
              counted over P = 6 s (350 per 6 s), where the limiter binds: B_rate = 2 * 6 + L.
              Then the same again with the client's limiter counting a window 1 s longer than
              the server's (--margin), against the same B_rate: the limiter counts a request
              when it lets it go, the server when it arrives, and a request let go early in a
              window may arrive after one let go late in the next.
layered       depth D, width W; each task waits for every task of the layer before (a
              barrier, the strictest form). Bound B_depth = D * L. Also reported: the
              realised critical path, the longest chain of the latencies the server actually
              drew (with barriers, the sum of each layer's slowest), which is what jitter
              allows. Run twice: tasks as bare executor jobs, and the same graph through the
              full planned strategy (`PlannedRun`: a child run and an agent loop per task,
              each step stored, the agent answered with task_complete).
sequential    the same tasks one at a time (concurrency 1), as a plain AutoGPT/BabyAGI loop
              runs them: a sample of S tasks, extrapolated to N and to D * W.
overhead      server at zero latency: time and client CPU per step through the stack, less
              the same for a bare HTTP client (httpx2: post the JSON, decode the answer). One
              at a time, and all at once (concurrency 1,000). Then the planned strategy on
              a Ray started here (--no-ray skips it): a chain of tasks and independent tasks
              at --ray-concurrency, beside the same on the local executor.

    python bench/planning_makespan.py [--latency 1.0] [--jitter 0.05] [--limit 3500]
        [--short-period 6] [--margin 1] [--tasks 1000] [--depth 10] [--width 50]
        [--sample 30] [--overhead-steps 500] [--no-ray] [--ray-steps 60] [--ray-tasks 200]
        [--ray-concurrency 16] [--quick] [--load-note TEXT]

`--quick` shrinks everything (a smoke run in seconds, results not written unless --out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autonoma.agent.identity import AgentIdentity  # noqa: E402
from autonoma.agent.loop import LoopConfig, RunLoop  # noqa: E402
from autonoma.agent.planned import PlanConfig, PlannedRun  # noqa: E402
from autonoma.agent.remote import placement  # noqa: E402
from autonoma.agent.session import create_run  # noqa: E402
from autonoma.agent.settings import PlanningSettings, RunSettings  # noqa: E402
from autonoma.agent.wiring import default_tools  # noqa: E402
from autonoma.llm import LLMSettings, Model  # noqa: E402
from autonoma.llm.factory import open_model  # noqa: E402
from autonoma.llm.ratelimit import RateLimiter  # noqa: E402
from autonoma.planning.decompose import Decomposer  # noqa: E402
from autonoma.planning.graph import Task, TaskGraph  # noqa: E402
from autonoma.runtime.budget import BudgetLimits, BudgetSpent  # noqa: E402
from autonoma.runtime.executor import Job, LocalExecutor, Schedule  # noqa: E402
from autonoma.runtime.store import RunStore  # noqa: E402
from bench.common import write_result  # noqa: E402

JOB_TAG = re.compile(r"\[job ([\w-]+)\]")
ACTION = json.dumps(
    {
        "thoughts": {
            "text": "the task is done",
            "reasoning": "nothing is left to do",
            "plan": "finish",
            "criticism": "none",
            "speak": "done",
        },
        "command": {"name": "task_complete", "args": {"reason": "answered"}},
    }
)
# -- the fake server (runs in its own process) ------------------------------------------------


@dataclass
class ServerState:
    latency_s: float
    jitter_s: float
    limit: int | None
    period_s: float
    rng: random.Random
    window: deque[float] = field(default_factory=deque)
    requests: int = 0
    admitted: int = 0
    rejected_429: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    latency_by_job: dict[str, float] = field(default_factory=dict)

    def admit(self, now: float) -> float | None:
        """None if the request is admitted, else the seconds until a slot frees."""
        if self.limit is None:
            return None
        while self.window and now - self.window[0] >= self.period_s:
            self.window.popleft()
        if len(self.window) >= self.limit:
            return self.period_s - (now - self.window[0])
        self.window.append(now)
        return None

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "admitted": self.admitted,
            "rejected_429": self.rejected_429,
            "peak_in_flight": self.peak_in_flight,
            "latency_by_job": self.latency_by_job,
        }


def make_app(state: ServerState) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def chat(request: Request) -> Response:
        body = await request.json()
        state.requests += 1
        wait = state.admit(time.monotonic())
        if wait is not None:
            state.rejected_429 += 1
            error = {
                "message": f"Rate limit reached: {state.limit} requests per {state.period_s:g}s",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
            headers = {
                "retry-after": str(max(1, math.ceil(wait))),
                "retry-after-ms": str(max(1, math.ceil(wait * 1000))),
            }
            return JSONResponse({"error": error}, status_code=429, headers=headers)
        state.admitted += 1
        texts = [str(m.get("content") or "") for m in body.get("messages", [])]
        found = JOB_TAG.search("\n".join(texts))
        delay = 0.0
        if state.latency_s > 0:
            delay = max(0.0, state.rng.uniform(-state.jitter_s, state.jitter_s) + state.latency_s)
        state.in_flight += 1
        state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
        try:
            if delay:
                await asyncio.sleep(delay)
        finally:
            state.in_flight -= 1
        if found:
            job = found.group(1)
            state.latency_by_job[job] = state.latency_by_job.get(job, 0.0) + delay
        content = ACTION if "response_format" in body else "ok"
        prompt_tokens = max(1, sum(len(t) for t in texts) // 4)
        completion_tokens = max(1, len(content) // 4)
        return JSONResponse(
            {
                "id": f"chatcmpl-{state.admitted}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def stats(request: Request) -> Response:
        return JSONResponse(state.stats())

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/stats", stats, methods=["GET"]),
        ]
    )


def serve(latency_s: float, jitter_s: float, limit: int | None, period_s: float, seed: int) -> None:
    """Serve until killed; the first line printed is the base URL."""
    import uvicorn

    state = ServerState(latency_s, jitter_s, limit, period_s, random.Random(seed))
    # proto=IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY on accepted connections
    # only for sockets that say they are TCP, and without it Nagle's algorithm and delayed ACKs
    # hold every answer back about 40 ms
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        make_app(state),
        log_level="error",
        access_log=False,
        lifespan="off",
        backlog=4096,
        timeout_keep_alive=30,
    )
    server = uvicorn.Server(config)
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    asyncio.run(server.serve(sockets=[sock]))


class FakeServer:
    """The fake server in a child process, for a `with` block."""

    def __init__(
        self,
        latency_s: float = 0.0,
        jitter_s: float = 0.0,
        limit: int | None = None,
        period_s: float = 60.0,
        seed: int = 0,
    ) -> None:
        self.args = [
            "--latency",
            str(latency_s),
            "--jitter",
            str(jitter_s),
            "--period",
            str(period_s),
            "--seed",
            str(seed),
            "--limit",
            str(limit or 0),  # 0: no limit
        ]
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeServer:
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", *self.args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self._process.kill()
            raise RuntimeError("the fake server did not start")
        root = self.base_url.removesuffix("/v1")
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx2.get(f"{root}/stats", timeout=2).raise_for_status()
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        return self

    def stats(self) -> dict[str, Any]:
        root = self.base_url.removesuffix("/v1")
        data: dict[str, Any] = httpx2.get(f"{root}/stats", timeout=30).json()
        return data

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)


# -- graphs ---------------------------------------------------------------------------------


def independent(n: int, prefix: str = "t") -> list[Job]:
    return [Job(f"{prefix}{i:04d}") for i in range(n)]


def layered(depth: int, width: int, fan_in: int | None = None) -> list[Job]:
    """`depth` layers of `width` jobs; each waits for `fan_in` jobs of the layer before
    (all of them by default: a barrier between layers)."""
    fan_in = width if fan_in is None else min(fan_in, width)
    jobs: list[Job] = []
    for d in range(depth):
        for w in range(width):
            deps = (
                ()
                if d == 0
                else tuple(f"L{d - 1:02d}-{(w + k) % width:02d}" for k in range(fan_in))
            )
            jobs.append(Job(f"L{d:02d}-{w:02d}", deps))
    return jobs


def as_graph(jobs: Sequence[Job]) -> TaskGraph:
    return TaskGraph(
        tasks=[
            Task(id=j.id, task=f"[job {j.id}] Answer one question.", dep=list(j.deps)) for j in jobs
        ]
    )


def critical_path(jobs: Sequence[Job], latency: dict[str, float]) -> float:
    """The longest chain of realised latencies (jobs are listed after their dependencies)."""
    finish: dict[str, float] = {}
    for job in jobs:
        finish[job.id] = latency.get(job.id, 0.0) + max((finish[d] for d in job.deps), default=0.0)
    return max(finish.values(), default=0.0)


# -- the measured paths ---------------------------------------------------------------------


@dataclass
class Timing:
    seconds: float
    cpu_seconds: float
    steps: int
    done: int
    failed: int
    errors: list[str] = field(default_factory=list)

    def per_step_us(self) -> dict[str, float]:
        return {
            "wall_us": round(1e6 * self.seconds / self.steps, 1),
            "cpu_us": round(1e6 * self.cpu_seconds / self.steps, 1),
        }


def model_for(base_url: str, limiter: RateLimiter | None, per_minute: int | None) -> Model:
    settings = LLMSettings(requests_per_minute=per_minute)
    return open_model(f"openai:fake@{base_url}", settings, limiter=limiter)


async def run_executor(
    base_url: str,
    jobs: Sequence[Job],
    *,
    concurrency: int,
    limiter: RateLimiter | None = None,
    per_minute: int | None = None,
    warmup: int = 0,
) -> Timing:
    """Each job is one model request, through LocalExecutor and OpenAICompatModel."""
    model = model_for(base_url, limiter, per_minute)

    async def ask(tag: str) -> str:
        messages = [{"role": "user", "content": f"[job {tag}] Answer in one word."}]
        response = await model.request(messages, max_tokens=16)
        return response.text

    async def work(job: Job, inputs: Any, attempt: int) -> str:
        return await ask(job.id)

    for i in range(warmup):
        await ask(f"warmup-{i}")
    schedule = Schedule.of(jobs)
    cpu, started = time.process_time(), time.perf_counter()
    await LocalExecutor(concurrency).run(schedule, work)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await model.aclose()
    failed = [
        f"{j}: {schedule.errors.get(j, '')}" for j, s in schedule.status.items() if s != "done"
    ]
    return Timing(elapsed, cpu, len(jobs), len(jobs) - len(failed), len(failed), failed[:5])


async def run_noop(jobs: Sequence[Job], concurrency: int) -> Timing:
    """The executor alone: work that returns at once."""

    async def work(job: Job, inputs: Any, attempt: int) -> None:
        return None

    schedule = Schedule.of(jobs)
    cpu, started = time.process_time(), time.perf_counter()
    await LocalExecutor(concurrency).run(schedule, work)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return Timing(elapsed, cpu, len(jobs), schedule.count("done"), schedule.count("failed"))


async def run_bare(base_url: str, n: int, concurrency: int, warmup: int = 10) -> Timing:
    """The floor: a bare HTTP client posting the same JSON and decoding the answer."""
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    gate = asyncio.Semaphore(concurrency)
    async with httpx2.AsyncClient(base_url=base_url, limits=limits, timeout=120) as http:

        async def one(tag: str) -> None:
            body = {
                "model": "fake",
                "messages": [{"role": "user", "content": f"[job {tag}] Answer in one word."}],
                "max_tokens": 16,
            }
            async with gate:
                response = await http.post("/chat/completions", json=body)
                response.raise_for_status()
                response.json()

        for i in range(warmup):
            await one(f"warmup-{i}")
        cpu, started = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(f"b{i}") for i in range(n)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return Timing(elapsed, cpu, n, n, 0)


class FixedPlanner(Decomposer):
    """The planner with its answer given. The graph is handed over whole because the planner's
    answer schema caps a plan at 30 tasks and 20 dependencies a task (`PlanAnswer`); what the
    planned run does with a plan, from storing it to the last task, is unchanged."""

    def __init__(self, model: Model, graph: TaskGraph) -> None:
        super().__init__(model, max_tasks=len(graph.tasks))
        self.graph = graph

    async def plan(
        self,
        goal: str,
        spent: BudgetSpent,
        *,
        who: str = "an autonomous agent",
        goals: Sequence[str] = (),
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> TaskGraph:
        problems = self.graph.problems(tools=tools or None, given=files)
        self.history.append(problems)
        assert not problems, problems
        return self.graph.model_copy(deep=True)


async def run_planned(
    base_url: str,
    jobs: Sequence[Job],
    *,
    concurrency: int,
    per_minute: int | None = None,
    warmup: int = 0,
    executor: str = "local",
) -> Timing:
    """The whole planned strategy: one child run and agent loop per task, every step stored
    (SQLite, synchronous=FULL, in a temporary directory), memory off, continuous mode. With
    executor "ray", each task's loop runs as a Ray task on a Ray started here, reporting every
    write back to the driver's store (CPU time is then the driver's only)."""
    model = model_for(base_url, None, per_minute)
    with tempfile.TemporaryDirectory(prefix="autonoma-bench-") as tmp:
        store = RunStore(Path(tmp) / "runs.db")
        registry = default_tools(memory=False)
        settings = RunSettings(
            checks=False,
            model=f"openai:fake@{base_url}",
            continuous=True,
            memory=False,
            strategy="plan",
            planning=PlanningSettings(
                concurrency=concurrency,
                task_steps=3,
                task_retries=0,
                executor=executor,  # type: ignore[arg-type]
            ),
            limits=BudgetLimits(max_steps=None),
        )
        try:
            async with placement(settings, store, model) as place:
                return await _run_planned_in(
                    store, model, registry, settings, place, Path(tmp), jobs, concurrency, warmup
                )
        finally:
            store.close()
            await model.aclose()


async def _run_planned_in(
    store: RunStore,
    model: Model,
    registry: Any,
    settings: RunSettings,
    place: Any,
    tmp: Path,
    jobs: Sequence[Job],
    concurrency: int,
    warmup: int,
) -> Timing:
    identity = AgentIdentity(
        name="BenchGPT", role="an agent that answers questions", goals=["answer them all"]
    )

    def make_agent(limits: BudgetLimits) -> RunLoop:
        return RunLoop(
            model, registry, store, config=LoopConfig(checks=False, limits=limits, continuous=True)
        )

    async def once(graph: TaskGraph) -> tuple[float, float, Any]:
        run, _ = await create_run(
            store,
            model,
            "Answer every question",
            settings,
            workspace=tmp / "ws",
            identity=identity,
        )
        planned = PlannedRun(
            store,
            FixedPlanner(model, graph),
            make_agent,
            limits=settings.limits,
            config=PlanConfig(
                concurrency=concurrency, task_steps=3, retries=0, max_tasks=len(graph.tasks)
            ),
            tools=place.tools or [tool.name for tool in registry],
            executor=place.executor,
            run_task=place.run_task,
        )
        cpu, started = time.process_time(), time.perf_counter()
        outcome = await planned.run(run.id)
        return time.perf_counter() - started, time.process_time() - cpu, outcome

    if warmup:
        await once(as_graph(independent(warmup, prefix="warmup")))
    elapsed, cpu, outcome = await once(as_graph(jobs))
    tasks = await asyncio.to_thread(store.tasks, outcome.run_id)
    done = sum(1 for t in tasks if t["status"] == "done")
    errors = [] if outcome.status == "completed" else [f"{outcome.status}: {outcome.reason[:300]}"]
    return Timing(elapsed, cpu, outcome.spent.steps, done, len(jobs) - done, errors)


# -- the benchmark --------------------------------------------------------------------------


def rate_bound(n: int, limit: int, period_s: float, latency_s: float) -> float:
    return max(math.ceil(n / limit) - 1, 0) * period_s + latency_s


def verdict(makespan: float, bound: float, target: float = 0.10) -> dict[str, Any]:
    return {
        "makespan_s": round(makespan, 3),
        "bound_s": round(bound, 3),
        "ratio": round(makespan / bound, 3),
        "over_bound_pct": round(100 * (makespan / bound - 1), 1),
        "meets_10pct_target": makespan <= bound * (1 + target),
    }


def server_summary(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if k != "latency_by_job"}


def independent_case(
    args: argparse.Namespace, limit: int, period_s: float, label: str, margin_s: float = 0.0
) -> dict[str, Any]:
    """`margin_s`: the client's limiter counts a window that much longer than the server's."""
    jobs = independent(args.tasks)
    with FakeServer(args.latency, args.jitter, limit, period_s, seed=1) as server:
        per_minute = round(limit * 60 / period_s)
        limiter = None
        if period_s != 60 or margin_s:  # LLMSettings can only say "per minute"
            limiter = RateLimiter(limit, period_s=period_s + margin_s)
        timing = asyncio.run(
            run_executor(
                server.base_url,
                jobs,
                concurrency=args.concurrency,
                limiter=limiter,
                per_minute=per_minute,
            )
        )
        stats = server.stats()
    bound = rate_bound(args.tasks, limit, period_s, args.latency)
    row = {
        "case": label,
        "tasks": args.tasks,
        "limit": limit,
        "period_s": period_s,
        "requests_per_minute": per_minute,
        "bound_formula": "(ceil(N / R) - 1) * P + L",
        **verdict(timing.seconds, bound),
        "client_window_s": period_s + margin_s,
        "client_cpu_s": round(timing.cpu_seconds, 3),
        "done": timing.done,
        "failed": timing.failed,
        "errors": timing.errors,
        "server": server_summary(stats),
    }
    if margin_s:
        own = rate_bound(args.tasks, limit, period_s + margin_s, args.latency)
        row["client_window_bound_s"] = round(own, 3)
        row["over_client_window_bound_pct"] = round(100 * (timing.seconds / own - 1), 1)
    if math.ceil(args.tasks / limit) == 1:
        # the limit does not bind: what the machine allows without autonoma, the same requests
        # from a bare HTTP client all at once (its own server, so the window above is not shared)
        with FakeServer(args.latency, args.jitter, None, seed=1) as server:
            bare = asyncio.run(run_bare(server.base_url, args.tasks, args.concurrency, warmup=0))
        row["bare_http_makespan_s"] = round(bare.seconds, 3)
        row["bare_http_cpu_s"] = round(bare.cpu_seconds, 3)
    print(json.dumps(row), flush=True)
    return row


def layered_case(args: argparse.Namespace, planned: bool) -> dict[str, Any]:
    jobs = layered(args.depth, args.width, args.fan_in)
    with FakeServer(args.latency, args.jitter, args.limit, 60.0, seed=2) as server:
        if planned:
            timing = asyncio.run(
                run_planned(
                    server.base_url, jobs, concurrency=args.concurrency, per_minute=args.limit
                )
            )
        else:
            timing = asyncio.run(
                run_executor(
                    server.base_url, jobs, concurrency=args.concurrency, per_minute=args.limit
                )
            )
        stats = server.stats()
    path = critical_path(jobs, stats["latency_by_job"])
    row = {
        "case": "planned strategy (PlannedRun)" if planned else "executor jobs",
        "depth": args.depth,
        "width": args.width,
        "fan_in": args.fan_in or args.width,
        "tasks": len(jobs),
        "bound_formula": "D * L",
        **verdict(timing.seconds, args.depth * args.latency),
        "critical_path_s": round(path, 3),
        "over_critical_path_pct": round(100 * (timing.seconds / path - 1), 1),
        "client_cpu_s": round(timing.cpu_seconds, 3),
        "steps": timing.steps,
        "done": timing.done,
        "failed": timing.failed,
        "errors": timing.errors,
        "server": server_summary(stats),
    }
    print(json.dumps(row), flush=True)
    return row


def sequential_case(args: argparse.Namespace) -> dict[str, Any]:
    jobs = independent(args.sample, prefix="s")
    with FakeServer(args.latency, args.jitter, args.limit, 60.0, seed=3) as server:
        timing = asyncio.run(
            run_executor(server.base_url, jobs, concurrency=1, per_minute=args.limit)
        )
        stats = server.stats()
    per_task = timing.seconds / len(jobs)
    row = {
        "sample_tasks": len(jobs),
        "concurrency": 1,
        "seconds": round(timing.seconds, 3),
        "per_task_s": round(per_task, 4),
        "server_mean_latency_s": round(
            sum(stats["latency_by_job"].values()) / max(1, len(stats["latency_by_job"])), 4
        ),
        "failed": timing.failed,
        "extrapolated_s": {
            "independent": round(per_task * args.tasks, 1),
            "layered": round(per_task * args.depth * args.width, 1),
        },
        "note": f"measured on {len(jobs)} tasks and multiplied out: one request per task, "
        "one at a time, so a plain loop's time grows linearly with the tasks",
    }
    print(json.dumps(row), flush=True)
    return row


def overhead(path: Timing, floor: Timing) -> dict[str, Any]:
    """A path's time and CPU per step, and what it costs over `floor` (bare HTTP)."""
    mine, base = path.per_step_us(), floor.per_step_us()
    return {
        "steps": path.steps,
        "failed": path.failed,
        "errors": path.errors,
        **mine,
        "overhead_wall_us": round(mine["wall_us"] - base["wall_us"], 1),
        "overhead_cpu_us": round(mine["cpu_us"] - base["cpu_us"], 1),
    }


def overhead_case(args: argparse.Namespace) -> dict[str, Any]:
    k = args.overhead_steps
    seq_layers = max(1, k // args.width)
    with FakeServer(0.0, 0.0, None) as server:
        url = server.base_url
        bare_seq = asyncio.run(run_bare(url, k, 1))
        exec_seq = asyncio.run(
            run_executor(url, independent(k), concurrency=1, per_minute=args.limit, warmup=10)
        )
        planned_seq = asyncio.run(
            run_planned(
                url,
                layered(seq_layers, min(args.width, k)),
                concurrency=1,
                per_minute=args.limit,
                warmup=3,
            )
        )
        bare_all = asyncio.run(run_bare(url, args.tasks, args.concurrency))
        exec_all = asyncio.run(
            run_executor(
                url,
                independent(args.tasks),
                concurrency=args.concurrency,
                per_minute=args.limit,
                warmup=10,
            )
        )
        planned_all = asyncio.run(
            run_planned(
                url,
                layered(args.depth, args.width, args.fan_in),
                concurrency=args.concurrency,
                per_minute=args.limit,
                warmup=3,
            )
        )
    noop: dict[str, dict[str, Any]] = {}
    for concurrency in (1, args.concurrency):
        for name, jobs in (
            ("independent", independent(args.tasks)),
            ("layered", layered(args.depth, args.width, args.fan_in)),
        ):
            timing = asyncio.run(run_noop(jobs, concurrency))
            noop.setdefault(name, {"jobs": len(jobs)})[f"concurrency_{concurrency}"] = (
                timing.per_step_us()
            )

    result = {
        "one_at_a_time": {
            "bare_http": {"requests": k, **bare_seq.per_step_us()},
            "executor_and_model": overhead(exec_seq, bare_seq),
            "planned_strategy": overhead(planned_seq, bare_seq),
        },
        "all_at_once": {
            "concurrency": args.concurrency,
            "bare_http": {"requests": args.tasks, **bare_all.per_step_us()},
            "executor_and_model": overhead(exec_all, bare_all),
            "planned_strategy": overhead(planned_all, bare_all),
        },
        "executor_alone": noop,
    }
    print(json.dumps(result), flush=True)
    return result


def overhead_ray_case(args: argparse.Namespace) -> dict[str, Any]:
    """The planned strategy with the Ray executor on a Ray started here, server at zero
    latency: a chain of tasks (one at a time), then independent tasks all at once. Each task
    is one step (task_complete), so per step here means per task: dispatch to a Ray worker,
    the worker's loop, and every write reported back to the driver's store."""
    with FakeServer(0.0, 0.0, None) as server:
        url = server.base_url
        bare_seq = asyncio.run(run_bare(url, args.ray_steps, 1))
        ray_seq = asyncio.run(
            run_planned(
                url,
                layered(args.ray_steps, 1),
                concurrency=1,
                per_minute=args.limit,
                warmup=4,
                executor="ray",
            )
        )
        local_seq = asyncio.run(
            run_planned(
                url, layered(args.ray_steps, 1), concurrency=1, per_minute=args.limit, warmup=4
            )
        )
        bare_all = asyncio.run(run_bare(url, args.ray_tasks, args.ray_concurrency))
        ray_all = asyncio.run(
            run_planned(
                url,
                independent(args.ray_tasks),
                concurrency=args.ray_concurrency,
                per_minute=args.limit,
                warmup=4,
                executor="ray",
            )
        )
        local_all = asyncio.run(
            run_planned(
                url,
                independent(args.ray_tasks),
                concurrency=args.ray_concurrency,
                per_minute=args.limit,
                warmup=4,
            )
        )

    def over(path: Timing, floor: Timing) -> dict[str, Any]:
        """As `overhead`, but only the driver's CPU is measured: no CPU overhead."""
        row = overhead(path, floor)
        del row["overhead_cpu_us"]
        row["driver_cpu_us"] = row.pop("cpu_us")
        return row

    result = {
        "one_at_a_time": {
            "bare_http": {"requests": args.ray_steps, **bare_seq.per_step_us()},
            "planned_strategy_ray": over(ray_seq, bare_seq),
            "planned_strategy_local": over(local_seq, bare_seq),
        },
        "all_at_once": {
            "concurrency": args.ray_concurrency,
            "bare_http": {"requests": args.ray_tasks, **bare_all.per_step_us()},
            "planned_strategy_ray": over(ray_all, bare_all),
            "planned_strategy_local": over(local_all, bare_all),
        },
    }
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=1.0, help="L, seconds")
    parser.add_argument("--jitter", type=float, default=0.05, help="J: latency is L +- J")
    parser.add_argument("--limit", type=int, default=3500, help="R, requests a minute")
    parser.add_argument("--short-period", type=float, default=6.0, help="P of the binding case")
    parser.add_argument(
        "--margin", type=float, default=1.0, help="extra seconds on the client's window (3rd case)"
    )
    parser.add_argument("--tasks", type=int, default=1000, help="N independent tasks")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--width", type=int, default=50)
    parser.add_argument("--fan-in", type=int, default=None, help="default: the whole layer")
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=30, help="S tasks run one at a time")
    parser.add_argument("--overhead-steps", type=int, default=500)
    parser.add_argument(
        "--ray", action=argparse.BooleanOptionalAction, default=True, help="Ray overhead too"
    )
    parser.add_argument("--ray-steps", type=int, default=60, help="chained tasks on Ray")
    parser.add_argument("--ray-tasks", type=int, default=200, help="independent tasks on Ray")
    parser.add_argument("--ray-concurrency", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="tiny sizes; writes nothing")
    parser.add_argument("--out", default=None, help="result name (default planning_makespan)")
    parser.add_argument(
        "--load-note", default="", help="what else the machine was doing (goes in the JSON)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--period", type=float, default=60.0, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency, args.jitter, args.limit or None, args.period, args.seed)
        return
    if args.quick:
        args.latency, args.tasks, args.depth, args.width = 0.2, 40, 3, 5
        args.sample, args.overhead_steps = 3, 20
        args.ray_steps, args.ray_tasks, args.ray_concurrency = 5, 10, 4
    started = time.perf_counter()
    load_start = os.getloadavg()
    short_limit = max(1, round(args.limit * args.short_period / 60))
    results: dict[str, Any] = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "parameters": {
            "latency_s": args.latency,
            "jitter_s": args.jitter,
            "jitter": "uniform, L - J .. L + J",
            "requests_per_minute": args.limit,
            "tasks": args.tasks,
            "depth": args.depth,
            "width": args.width,
            "fan_in": args.fan_in or args.width,
            "concurrency": args.concurrency,
            "sequential_sample": args.sample,
            "overhead_steps": args.overhead_steps,
            "server": "uvicorn + Starlette (h11), one process on 127.0.0.1; 429 + Retry-After "
            "beyond R admitted requests in a sliding window of P seconds",
            "client": "LocalExecutor -> OpenAICompatModel.request (openai SDK, httpx2) with "
            "autonoma's RateLimiter at the server's R per P",
        },
    }
    results["independent"] = [
        independent_case(args, args.limit, 60.0, f"{args.limit} a minute over a 60 s window"),
        independent_case(
            args,
            short_limit,
            args.short_period,
            f"{short_limit} per {args.short_period:g} s window (the same rate, limit binding)",
        ),
        independent_case(
            args,
            short_limit,
            args.short_period,
            f"{short_limit} per {args.short_period:g} s window, the client's limiter counting "
            f"{args.short_period + args.margin:g} s",
            margin_s=args.margin,
        ),
    ]
    results["layered"] = [layered_case(args, planned=False), layered_case(args, planned=True)]
    sequential = sequential_case(args)
    results["sequential"] = sequential
    seq = sequential["extrapolated_s"]
    results["speedup_over_one_at_a_time"] = {
        **{
            f"independent, {row['case']}": round(seq["independent"] / row["makespan_s"], 1)
            for row in results["independent"]
        },
        **{
            f"layered, {row['case']}": round(seq["layered"] / row["makespan_s"], 1)
            for row in results["layered"]
        },
    }
    results["overhead_per_step"] = {"local": overhead_case(args)}
    if args.ray:
        results["overhead_per_step"]["ray"] = overhead_ray_case(args)
    load_end = os.getloadavg()
    results["load"] = {
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in load_end],
    }
    results["load_note"] = args.load_note or (
        f"load average {load_start[0]:.2f} at the start and {load_end[0]:.2f} at the end "
        f"on {os.cpu_count()} CPUs"
    )
    results["bench_seconds"] = round(time.perf_counter() - started, 1)
    print(f"total {results['bench_seconds']} s", flush=True)
    if not args.quick or args.out:
        write_result(args.out or "planning_makespan", results)


if __name__ == "__main__":
    main()
