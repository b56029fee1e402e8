"""A planned run killed with SIGKILL mid-graph resumes with finished tasks kept and the task
that was cut off continuing its own run (its interrupted step reported, not run again)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autonoma.agent.session import run_agent
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from tests.agent.planned_crash_parts import answer, slow_write

WORKER = """
import asyncio, os, sys
from pathlib import Path
sys.path.insert(0, os.getcwd())  # the repository, for the tests package
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.identity import AgentIdentity
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from tests.agent.planned_crash_parts import PLAN, answer, slow_write

home = Path(sys.argv[1])

async def main():
    store = RunStore(home / "runs.db")
    tools = default_tools(); tools.add(slow_write)
    model = ScriptedModel(answer)
    identity = AgentIdentity(name="FruitGPT", role="fruit", goals=["fruit.md"])
    settings = RunSettings(checks=False, continuous=True, memory=False, strategy="plan", model="scripted")
    run, _ = await create_run(store, model, "fruit notes in fruit.md", settings,
                              workspace=home / "ws", identity=identity, tools=tools)
    print("RUN", run.id, flush=True)
    await run_agent(store, model, run, tools=tools)

asyncio.run(main())
"""


def test_a_kill_mid_graph_resumes_with_finished_tasks_kept(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    process = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().split()[1]
    if process.stdout.readline().strip() != "TOOL STARTED":
        process.kill()
        pytest.fail(f"the worker did not reach its slow tool: {process.communicate()[1]}")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)

    store = RunStore(tmp_path / "runs.db")
    statuses = {t["id"]: t["status"] for t in store.tasks(run_id)}
    assert statuses == {"t1": "done", "t2": "running", "t3": "pending"}
    t1_steps = {c.task_id: len(store.steps(c.id)) for c in store.children(run_id)}["t1"]

    from autonoma.agent.wiring import default_tools

    tools = default_tools()
    tools.add(slow_write)
    model = ScriptedModel(answer)
    outcome = asyncio.run(run_agent(store, model, store.get_run(run_id), tools=tools))
    assert outcome.status == "completed", outcome.reason
    children = store.children(run_id)
    assert sorted(c.task_id or "" for c in children) == ["t1", "t2", "t3"]  # no task twice
    by_task = {c.task_id: c for c in children}
    assert len(store.steps(by_task["t1"].id)) == t1_steps  # t1 was not run again
    t2_steps = store.steps(by_task["t2"].id)
    assert [s.status for s in t2_steps] == ["interrupted", "done"]
    assert "may or may not" in (t2_steps[0].observation or "")
    assert (tmp_path / "ws" / "fruit.md").read_text() == "crisp and soft\n"
    assert all(t["status"] == "done" for t in store.tasks(run_id))
