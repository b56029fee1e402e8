"""Planned runs with the Ray executor on a real Ray started on this machine, the model played
by the fake OpenAI server over real HTTP: the same graph gives the same results as locally,
with every task's steps in the driver's store."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from autonoma.agent import remote
from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import PlanningSettings, RunSettings
from autonoma.errors import ConfigError
from autonoma.llm import RateLimiter, open_model
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import EventRecord, RunStore
from autonoma.testing import act
from tests.agent.helpers import settings_with
from tests.cli_helpers import HAIKU, cli, one_line_error
from tests.fake_openai import FakeOpenAI
from tests.memory_answers import fake_server_memory_answer

pytest.importorskip("ray")
from autonoma.runtime.executor.ray import RayExecutor

IDENTITY = AgentIdentity(name="HaikuGPT", role="an AI that writes haiku", goals=["autumn.md"])

PLAN = {
    "tasks": [
        {"id": "t1", "task": "Write a haiku about maples", "outputs": ["maple.txt"]},
        {"id": "t2", "task": "Write a haiku about rain", "outputs": ["rain.txt"]},
        {"id": "t3", "task": "Write notes on plums", "outputs": ["plums.txt"]},
        {
            "id": "t4",
            "task": "Put both haiku in autumn.md",
            "inputs": ["maple.txt", "rain.txt"],
            "outputs": ["autumn.md"],
        },
        {
            "id": "t5",
            "task": "Summarise the plum notes",
            "inputs": ["plums.txt"],
            "outputs": ["plums.md"],
        },
    ]
}

STEPS = {
    "t1": [act("write_file", path="maple.txt", text=HAIKU), act("task_complete", reason="maple")],
    "t2": [act("write_file", path="rain.txt", text=HAIKU), act("task_complete", reason="rain")],
    # never finishes: fails at its step limit, then its retry too; a command whose result does
    # not depend on what the tasks running beside it have written so far
    "t3": [act("calculator", expression="1 + 1")],
    "t4": [
        act("read_file", path="maple.txt"),
        act("write_file", path="autumn.md", text=HAIKU + "\n\n" + HAIKU),
        act("task_complete", reason="both in autumn.md"),
    ],
    "t5": [act("write_file", path="plums.md", text="never\n")],
}


_run_on_worker = remote.run_on_worker


async def run_on_worker_noting_pid(*args: Any) -> dict[str, Any]:
    """remote.run_on_worker, noting which process ran which task beside the workspace."""
    snapshot = args[1]
    with (Path(snapshot.run["workspace"]).parent / "pids.txt").open("a") as pids:
        pids.write(f"{snapshot.run['task_id']} {os.getpid()}\n")
    result: dict[str, Any] = await _run_on_worker(*args)
    return result


class Planner:
    """The fake server's responder: the plan, then each task's own script, in order."""

    def __init__(self, plan: dict[str, Any], steps: dict[str, list[dict[str, Any]]]) -> None:
        self.plan = plan
        self.steps = steps
        self.taken: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if (memory := fake_server_memory_answer(body)) is not None:
            return memory  # importance ratings and reflections, on the driver
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        if "tasks" in schema.get("properties", {}):
            return {"content": json.dumps(self.plan)}
        found = re.search(r"now doing task (\w+)", body["messages"][0]["content"])
        assert found, body["messages"][0]["content"]
        script = self.steps[found.group(1)]
        with self._lock:
            n = self.taken[found.group(1)]
            self.taken[found.group(1)] += 1
        answer = script[min(n, len(script) - 1)]
        return answer if "stall" in answer else {"content": json.dumps(answer)}


async def planned_run(
    root: Path,
    server: FakeOpenAI,
    executor: str,
    store: RunStore | None = None,
    approver: Any = None,
    **settings: Any,
) -> tuple[RunStore, RunOutcome, list[EventRecord]]:
    store = store or RunStore(root / "runs.db")
    options = RunSettings(
        checks=False,
        model=f"openai:fake@{server.base_url}",
        continuous=True,
        memory=False,
        strategy="plan",
        planning=PlanningSettings(task_steps=3, replans=0, executor=executor),
        limits=BudgetLimits(max_steps=60),
    )
    options = settings_with(options, **settings)
    model = open_model(options.model)
    events: list[EventRecord] = []
    try:
        run, _ = await create_run(
            store, model, "Write autumn haiku to autumn.md", options,
            workspace=root / "ws", identity=IDENTITY,
        )  # fmt: skip
        outcome = await run_agent(store, model, run, approver=approver, listeners=[events.append])
    finally:
        await model.aclose()
    return store, outcome, events


def what_happened(store: RunStore, outcome: RunOutcome) -> dict[str, Any]:
    """Everything a run produced that must not depend on where its tasks ran."""
    children = store.children(outcome.run_id)
    workspace = Path(outcome.workspace)
    return {
        "status": outcome.status,
        "reason": outcome.reason,
        "tasks": {
            t["id"]: (t["status"], t["result"], t["attempts"]) for t in store.tasks(outcome.run_id)
        },
        "files": {name: (workspace / name).read_text() for name in outcome.files},
        "task runs": Counter(c.task_id for c in children),
        "steps": sorted(
            (c.task_id, [(s.command, s.status, s.ok) for s in store.steps(c.id)]) for c in children
        ),
        "task run statuses": sorted((c.task_id, c.status, c.reason) for c in children),
        "totals": (outcome.spent.steps, outcome.spent.tokens),
    }


async def test_the_same_graph_on_ray_gives_the_same_results(
    ray_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "run_on_worker", run_on_worker_noting_pid)
    results = {}
    for executor in ("local", "ray"):
        with FakeOpenAI() as server:
            server.responder = Planner(PLAN, STEPS)
            store, outcome, events = await planned_run(tmp_path / executor, server, executor)
        results[executor] = what_happened(store, outcome)

        # every task's steps are in the driver's store under the task's run, and their
        # events reached the driver's listeners (the live view) as they happened
        children = {c.id: c for c in store.children(outcome.run_id)}
        shown = Counter(e.run_id for e in events if e.kind == "step_result")
        assert shown == Counter({cid: len(store.steps(cid)) for cid in children})
        assert all(store.steps(cid) for cid in children)

    local, on_ray = results["local"], results["ray"]
    assert on_ray == local
    assert not (tmp_path / "local" / "pids.txt").exists()
    ran = [line.split() for line in (tmp_path / "ray" / "pids.txt").read_text().splitlines()]
    assert sorted(task for task, _ in ran) == ["t1", "t2", "t3", "t3", "t4"]
    assert str(os.getpid()) not in {pid for _, pid in ran}  # each on a Ray worker
    assert on_ray["status"] == "failed" and "1 task(s) failed: t3" in on_ray["reason"]
    assert {k: v[0] for k, v in on_ray["tasks"].items()} == {
        "t1": "done",
        "t2": "done",
        "t3": "failed",
        "t4": "done",
        "t5": "skipped",
    }
    assert on_ray["files"]["autumn.md"] == HAIKU + "\n\n" + HAIKU
    assert on_ray["task runs"] == {"t1": 1, "t2": 1, "t3": 2, "t4": 1}
    assert on_ray["totals"][0] == 2 + 2 + 3 + 3 + 3


async def test_a_spent_budget_halts_ray_tasks_and_resume_keeps_finished_ones(
    ray_cluster: str, tmp_path: Path
) -> None:
    chain = {
        "tasks": [
            {"id": "t1", "task": "Write a haiku about maples", "outputs": ["maple.txt"]},
            {
                "id": "t2",
                "task": "Put the haiku in autumn.md",
                "inputs": ["maple.txt"],
                "outputs": ["autumn.md"],
            },
        ]
    }
    steps = {
        "t1": STEPS["t1"],
        "t2": [act("write_file", path="autumn.md", text=HAIKU), act("task_complete", reason="ok")],
    }
    with FakeOpenAI() as server:
        server.responder = planner = Planner(chain, steps)
        store, outcome, _ = await planned_run(
            tmp_path, server, "ray", limits=BudgetLimits(max_steps=3)
        )
        assert outcome.status == "budget_exhausted"
        assert "step limit reached (3 of 3 steps)" in outcome.reason
        tasks = {t["id"]: t["status"] for t in store.tasks(outcome.run_id)}
        assert tasks == {"t1": "done", "t2": "pending"}  # cut off, not failed
        t2_run = next(c for c in store.children(outcome.run_id) if c.task_id == "t2")
        assert t2_run.status == "budget_exhausted" and len(store.steps(t2_run.id)) == 1

        run = store.get_run(outcome.run_id)
        settings = run.settings | {"limits": BudgetLimits(max_steps=10).model_dump()}
        store.set_settings(run.id, settings)
        model = open_model(run.model)
        try:
            resumed = await run_agent(store, model, store.get_run(run.id))
        finally:
            await model.aclose()
    assert resumed.status == "completed", resumed.reason
    assert planner.taken == {"t1": 2, "t2": 2}  # t1 not run again; t2 went on where it was
    assert resumed.spent.steps == 4
    assert [c.task_id for c in store.children(run.id)] == ["t1", "t2"]  # the same t2 run


async def test_a_risky_command_on_a_worker_is_approved_on_the_driver(
    ray_cluster: str, tmp_path: Path
) -> None:
    one = {"tasks": [PLAN["tasks"][0]]}
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision(kind="yes")

    with FakeOpenAI() as server:
        server.responder = Planner(one, {"t1": STEPS["t1"]})
        store = RunStore(tmp_path / "runs.db")
        settings = RunSettings(
            checks=False,
            model=f"openai:fake@{server.base_url}",
            memory=False,
            strategy="plan",
            planning=PlanningSettings(replans=0, executor="ray"),
        )
        model = open_model(settings.model)
        try:
            run, _ = await create_run(
                store, model, "Write a maple haiku", settings,
                workspace=tmp_path / "ws", identity=IDENTITY,
            )  # fmt: skip
            outcome = await run_agent(store, model, run, approver=approve)
        finally:
            await model.aclose()
    assert outcome.status == "completed", outcome.reason
    assert [(a.command, a.arguments["path"]) for a in asked] == [("write_file", "maple.txt")]
    assert (tmp_path / "ws" / "maple.txt").read_text() == HAIKU


async def test_ray_needs_a_planned_run_and_a_model_a_worker_can_rebuild(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    model = open_model("openai:fake@http://127.0.0.1:9/v1")
    for options, problem in (
        ({"planning": {"executor": "ray"}}, "add --strategy plan"),
        (
            {"model": "scripted", "strategy": "plan", "planning": {"executor": "ray"}},
            "rebuilds the model",
        ),
        (
            {"strategy": "plan", "planning": {"executor": "ray", "ray_address": "x:1"}},
            "cannot reach a Ray cluster at x:1",
        ),
    ):
        settings = RunSettings.model_validate({"model": model.name, "memory": False} | options)
        run, _ = await create_run(store, model, "x", settings, identity=IDENTITY,
                                  workspace=tmp_path / "ws")  # fmt: skip
        with pytest.raises(ConfigError, match=problem):
            await run_agent(store, model, run)
        assert store.steps(run.id) == [] and store.tasks(run.id) == []


def test_the_cli_runs_a_plan_on_a_cluster_it_joins(
    ray_cluster: str, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    server = fake_openai
    home = tmp_path / "home"
    three = {"tasks": [*PLAN["tasks"][:2], PLAN["tasks"][3]]}
    server.responder = Planner(three, STEPS)
    spec = f"openai:fake@{server.base_url}"
    result = cli(
        home, "run", "Write autumn haiku to autumn.md", "--model", spec, "--continuous",
        "--name", "HaikuGPT", "--strategy", "plan", "--executor", "ray",
        "--ray-address", ray_cluster, "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "completed", outcome
    assert sorted(outcome["files"]) == ["autumn.md", "maple.txt", "rain.txt"]
    # each task ends on its checks (the files it names exist) once its write is done
    assert outcome["totals"]["steps"] == 4
    assert "task t4 done: every acceptance check passes after step 2" in result.stderr
    assert "t2 · step 1" in result.stderr
    shown = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)
    assert sorted((c["task_id"], len(c["steps"])) for c in shown["children"]) == [
        ("t1", 1),
        ("t2", 1),
        ("t4", 2),
    ]

    unreachable = one_line_error(
        cli(home, "run", "x", "--model", spec, "--strategy", "plan", "--executor", "ray",
            "--ray-address", "127.0.0.1:1")
    )  # fmt: skip
    assert "cannot reach a Ray cluster at 127.0.0.1:1" in unreachable
    assert "ray start --head" in unreachable
    assert len(json.loads(cli(home, "runs", "--json").stdout)) == 1  # no run was created
    loop = cli(home, "run", "x", "--model", spec, "--executor", "ray")
    assert "add --strategy plan" in one_line_error(loop)


async def acquire_within(channel: Any, limiter: RateLimiter, seconds: float) -> str:
    """On a worker: whether the limiter admits one request within `seconds`."""
    try:
        await asyncio.wait_for(limiter.acquire(), seconds)
    except TimeoutError:
        return "still waiting"
    return "admitted"


async def test_workers_and_the_driver_share_one_rate_limit(ray_cluster: str) -> None:
    executor = RayExecutor()
    one = remote.SharedLimiter.start(RateLimiter(requests=1, period_s=60))
    two = remote.SharedLimiter.start(RateLimiter(requests=2, period_s=60))
    assert one is not None and two is not None
    try:
        async with one.hold(), two.hold():  # a call in flight here holds one slot of each
            assert await executor.call(acquire_within, one, 1.0) == "still waiting"
            assert await executor.call(acquire_within, two, 30.0) == "admitted"
    finally:
        one.stop()
        two.stop()
        executor.close()


async def test_stopping_a_run_on_ray_stops_its_tasks_and_resume_continues_them(
    ray_cluster: str, tmp_path: Path
) -> None:
    one = {"tasks": [PLAN["tasks"][0]]}
    steps = {
        "t1": [
            act("write_file", path="maple.txt", text=HAIKU),
            {"stall": 120},  # the model never answers the second step
            act("task_complete", reason="maple"),
        ]
    }
    with FakeOpenAI() as server:
        server.responder = planner = Planner(one, steps)
        store = RunStore(tmp_path / "runs.db")
        running = asyncio.create_task(planned_run(tmp_path, server, "ray", store=store))
        deadline = asyncio.get_running_loop().time() + 60
        while planner.taken["t1"] < 2:  # step 1 is stored, the model is asked for step 2
            assert asyncio.get_running_loop().time() < deadline, "the task never got going"
            await asyncio.sleep(0.05)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        (planned,) = store.list_runs()
        (task_run,) = store.children(planned.id)
        assert planned.status == "stopped"
        assert task_run.status == "stopped"  # the worker's own last word reached the driver
        assert [s.command for s in store.steps(task_run.id)] == ["write_file"]

        model = open_model(planned.model)
        try:
            resumed = await run_agent(store, model, store.get_run(planned.id))
        finally:
            await model.aclose()
    assert resumed.status == "completed", resumed.reason
    assert store.children(planned.id) == [store.get_run(task_run.id)]  # the same task run
    assert [s.command for s in store.steps(task_run.id)] == ["write_file", "task_complete"]


class AskingApprover:
    """Approves every command and answers the agent's questions, noting both (the driver's
    person)."""

    def __init__(self) -> None:
        self.approved: list[str] = []
        self.questions: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.approved.append(request.command)
        return Decision(kind="yes")

    async def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return "six times seven"


async def test_a_worker_has_the_runs_tools_asks_the_driver_and_reflects(
    ray_cluster: str, tmp_path: Path
) -> None:
    from autonoma.agent.wiring import open_sandbox

    if open_sandbox(RunSettings(checks=False))[0] is None:
        pytest.skip("no sandbox here (bubblewrap): the code commands are not offered")
    plan = {
        "tasks": [
            {"id": "t1", "task": "Work out the answer", "outputs": ["answer.txt"]},
            {"id": "t2", "task": "Find the lost notes", "outputs": ["notes.txt"]},
        ]
    }
    reflection = {
        "went_wrong": "I read lost.txt three times; it is not there.",
        "instead": "Write notes.txt from what is known.",
        "verdict": "continue",
    }
    steps = {
        "t1": [
            act("ask_person", question="Which product do you want?"),
            act("calculator", expression="6*7"),
            act("execute_python", code="open('answer.txt', 'w').write(str(6 * 7))"),
            act("task_complete", reason="answer.txt holds 42"),
        ],
        "t2": [
            *[act("read_file", path="lost.txt")] * 3,
            act("write_file", path="notes.txt", text="what is known"),
            act("task_complete", reason="notes.txt written"),
        ],
    }
    person = AskingApprover()
    with FakeOpenAI() as server:
        planner = Planner(plan, steps)

        def respond(body: dict[str, Any]) -> dict[str, Any]:
            schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
            if "went_wrong" in schema.get("properties", {}):
                return {"content": json.dumps(reflection)}
            return planner(body)

        server.responder = respond
        store, outcome, _ = await planned_run(
            tmp_path, server, "ray", approver=person,
            continuous=False, task_steps=8, self_reflect=True, concurrency=1,
        )  # fmt: skip
    assert outcome.status == "completed", outcome.reason
    assert person.questions == ["Which product do you want?"]
    assert "execute_python" in person.approved
    assert (tmp_path / "ws" / "answer.txt").read_text() == "42"
    by_task = {c.task_id: c.id for c in store.children(outcome.run_id)}
    observations = [s.observation for s in store.steps(by_task["t1"])]
    assert observations[0] == "the person answered: six times seven"
    assert (observations[1] or "").endswith("42")
    reflected = [e for e in store.events(by_task["t2"]) if e.kind == "self_reflection"]
    assert [e.step for e in reflected] == [3]
    assert planner.taken["t2"] == 5


async def test_a_worker_keeps_and_recalls_long_term_memory_through_the_driver(
    ray_cluster: str, tmp_path: Path
) -> None:
    from autonoma.agent.session import memory_path
    from autonoma.memory.embeddings import LexicalEmbedder
    from autonoma.memory.stream import MemoryStream

    one = {"tasks": [PLAN["tasks"][0]]}
    steps = {
        "t1": [
            act("remember", text="Maple leaves turn red before the oaks do."),
            act("recall", query="maple leaves red"),
            act("write_file", path="maple.txt", text=HAIKU),
            act("task_complete", reason="maple"),
        ]
    }
    with FakeOpenAI() as server:
        server.responder = Planner(one, steps)
        store, outcome, _ = await planned_run(
            tmp_path, server, "ray", memory=True, importance="heuristic", embedder="lexical",
            task_steps=6,
        )  # fmt: skip
    assert outcome.status == "completed", outcome.reason
    (child,) = store.children(outcome.run_id)
    observations = [s.observation or "" for s in store.steps(child.id)]
    assert observations[0].startswith("remembered (memory ")
    assert "Maple leaves turn red before the oaks do." in observations[1]  # found on the driver
    embedder = LexicalEmbedder()
    stream = MemoryStream(memory_path(store, embedder), embedder)
    try:
        kept = stream.latest(outcome.run_id, 20)
    finally:
        stream.close()
    kinds = sorted(r.kind for r in kept)
    assert kinds.count("thought") == 1 and kinds.count("action") == 4  # every step, at the end
