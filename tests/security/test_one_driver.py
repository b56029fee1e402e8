"""One run, one driver: the lease in the real store, with real processes (one killed with
SIGKILL mid-run) and the real CLI."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import ScriptedModel
from autonoma.runtime.lease import driving, holder_alive, this_process
from autonoma.runtime.store import Lease, LeaseHolder, RunBusy, RunStore

ROOT = Path(__file__).resolve().parents[2]


def new_run(store: RunStore, run_id: str = "r1") -> str:
    store.create_run(
        goal="g", identity={}, settings={}, workspace="/tmp", model="scripted", run_id=run_id
    )
    return run_id


def held_by(store: RunStore, run_id: str, pid: int, host: str, age: float = 0.0) -> Lease:
    now = time.time() - age
    holder = LeaseHolder("other", pid, host, now, now)
    return store.take_lease(run_id, holder, lambda _: False)


async def test_a_second_driver_is_told_who_drives_and_the_lease_is_released(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path / "runs.db")
    run_id = new_run(store)
    async with driving(store, run_id) as lease:
        assert lease.pid == os.getpid()
        with pytest.raises(RunBusy, match=f"run r1 is being driven by process {os.getpid()}"):
            async with driving(store, run_id):
                pass
        assert store.lease_of(run_id) == lease
    assert store.lease_of(run_id) is None
    async with driving(store, run_id):  # free again
        pass


async def test_the_heartbeat_renews_and_a_lost_lease_is_not_renewed(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    run_id = new_run(store)
    async with driving(store, run_id, every=0.02) as lease:
        await asyncio.sleep(0.2)
        renewed = store.lease_of(run_id)
        assert renewed is not None and renewed.heartbeat > lease.heartbeat
    stranger = Lease(*this_process().__dict__.values(), run_id=run_id)
    assert not store.renew_lease(stranger, time.time())


def test_a_holder_that_is_gone_is_taken_over(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    run_id = new_run(store)
    here = this_process().host
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert not holder_alive(held_by(store, run_id, ended.pid, here))  # its process ended

    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(zombie.pid, signal.SIGKILL)  # killed, not yet waited for: a zombie keeps its pid
    for _ in range(1000):  # a liveness bound, not a timing: until the kernel has reaped it
        if Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        assert not holder_alive(held_by(store, run_id, zombie.pid, here))
    finally:
        zombie.wait()

    assert holder_alive(held_by(store, run_id, os.getpid(), here))  # alive and beating
    assert not holder_alive(held_by(store, run_id, os.getpid(), here, age=500))  # silent
    assert holder_alive(held_by(store, run_id, 1, "elsewhere"))  # another host: by heartbeat
    assert not holder_alive(held_by(store, run_id, 1, "elsewhere", age=500))


SLOW_WORKER = """
import asyncio, sys
from pathlib import Path
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.agent.session import create_run, run_agent
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from autonoma.tools import Risk, tool

home = Path(sys.argv[1])

@tool(risk=Risk.READ, timeout_s=300)
async def wait_long() -> str:
    \"\"\"Wait a long time.\"\"\"
    print("WAITING", flush=True)
    await asyncio.sleep(300)
    return "waited"

async def main():
    store = RunStore(home / "runs.db")
    tools = default_tools()
    tools.add(wait_long)
    answer = {"thoughts": {"text": "", "plan": ""}, "command": {"name": "wait_long", "args": {}}}
    model = ScriptedModel([answer])
    identity = AgentIdentity(name="SlowGPT", role="slow", goals=["wait"])
    settings = RunSettings(model="scripted", checks=False, continuous=True, memory=False)
    run, _ = await create_run(store, model, "wait", settings, workspace=home / "ws",
                              identity=identity, tools=tools)
    print("RUN", run.id, flush=True)
    await run_agent(store, model, run, tools=tools)

asyncio.run(main())
"""


async def test_a_resume_while_another_process_drives_is_refused_until_it_is_killed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    worker = subprocess.Popen(
        [sys.executable, "-c", SLOW_WORKER, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert worker.stdout is not None
    try:
        run_id = worker.stdout.readline().split()[1]
        assert worker.stdout.readline().strip() == "WAITING", worker.communicate()[1]
        env = {**os.environ, "AUTONOMA_HOME": str(home), "COLUMNS": "200"}
        second = subprocess.run(
            [sys.executable, "-m", "autonoma", "resume", run_id],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        assert second.returncode == 1
        said = second.stderr
        assert f"run {run_id} is being driven by process {worker.pid}" in said, said
        assert "Traceback" not in said and "IntegrityError" not in said

        store = RunStore(home / "runs.db")
        model = ScriptedModel([{"thoughts": {"text": "", "plan": ""},
                                "command": {"name": "task_complete", "args": {"reason": "x"}}}])  # fmt: skip
        with pytest.raises(RunBusy):  # the library's way in holds the same line
            await run_agent(store, model, store.get_run(run_id))
        assert model.remaining == 1  # refused before anything was asked
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    outcome = await run_agent(store, model, store.get_run(run_id))  # the lease is taken over
    assert outcome.status == "completed"
    steps = store.steps(run_id)
    assert [s.status for s in steps] == ["interrupted", "done"]
    assert store.lease_of(run_id) is None


def test_settings_are_untouched_by_a_refused_resume(tmp_path: Path) -> None:
    """The CLI says who drives the run before it stores new limits."""
    home = tmp_path / "home"
    store = RunStore(home / "runs.db")
    # as JSON, the shape the store keeps (a tuple of the LLM settings comes back a list)
    settings = RunSettings(model="scripted", checks=False, memory=False).model_dump(mode="json")
    identity = AgentIdentity(name="A", role="r", goals=["g"]).model_dump()
    store.create_run(
        goal="g", identity=identity, settings=settings, workspace=str(tmp_path), model="scripted",
        run_id="r2",
    )  # fmt: skip
    held_by(store, "r2", os.getpid(), this_process().host)
    env = {**os.environ, "AUTONOMA_HOME": str(home), "COLUMNS": "200"}
    refused = subprocess.run(
        [sys.executable, "-m", "autonoma", "resume", "r2", "--max-steps", "99"],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 1 and "is being driven by process" in refused.stderr
    assert store.get_run("r2").settings == settings


async def test_create_run_then_drive_in_one_process_holds_the_lease(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel([{"thoughts": {"text": "", "plan": ""},
                            "command": {"name": "task_complete", "args": {"reason": "x"}}}])  # fmt: skip
    settings = RunSettings(model="scripted", checks=False, continuous=True, memory=False)
    identity = AgentIdentity(name="A", role="r", goals=["g"])
    run, _ = await create_run(
        store, model, "g", settings, workspace=tmp_path / "ws", identity=identity
    )
    seen: list[Lease | None] = []
    outcome = await run_agent(
        store, model, run, listeners=[lambda event: seen.append(store.lease_of(run.id))]
    )
    assert outcome.status == "completed"
    assert seen and all(lease is not None and lease.pid == os.getpid() for lease in seen)
    assert store.lease_of(run.id) is None
