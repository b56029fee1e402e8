"""A run whose settings list MCP servers: their tools join the run's commands, calls go
through the same approval policy, and a server that cannot start stops the run clearly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from autonoma.tools.settings import McpServer, ToolSettings
from tests.agent.helpers import IDENTITY

pytest.importorskip("mcp")
SERVER = Path(__file__).parents[1] / "tools" / "mcp_server.py"


async def start(tmp_path: Path, servers: list[McpServer], answers: list[object]) -> tuple:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel(answers)
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        tools=ToolSettings(groups=[], mcp=servers),
    )
    run, _ = await create_run(
        store, model, "Add numbers", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    return store, model, run


async def test_mcp_tools_run_in_a_run_under_the_same_policy(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision(kind="no")

    server = McpServer(name="calc", command=[sys.executable, str(SERVER)], risk="read")
    store, model, run = await start(
        tmp_path,
        [server],
        [
            act("calc__add", a=2, b=40),
            act("write_file", path="sum.txt", text="42"),
            act("task_complete", reason="added"),
        ],
    )
    outcome = await run_agent(store, model, run, approver=person)
    assert outcome.status == "completed"
    offered = [
        c["properties"]["name"]["const"]
        for c in model.requests[0].schema["properties"]["command"]["anyOf"]
    ]
    assert "calc__add" in offered
    assert "MCP server calc says" in model.requests[0].messages[0].content
    add, write, _ = store.steps(run.id)
    assert add.ok and add.observation == "42" and add.untrusted
    # its answer is outside content, but writing it to the workspace can be undone: the
    # continuous run saves it unasked (it once ended "completed" with nothing written)
    assert asked == [] and write.ok
    assert (Path(run.workspace) / "sum.txt").read_text() == "42"


async def test_a_server_that_cannot_start_stops_the_run_naming_it(tmp_path: Path) -> None:
    from autonoma.tools.mcp import McpError

    ghost = McpServer(name="ghost", command=["/nonexistent/mcp-server"], start_timeout_s=5)
    store, model, run = await start(tmp_path, [ghost], [act("task_complete", reason="x")])
    with pytest.raises(McpError, match="MCP server 'ghost' is unavailable"):
        await run_agent(store, model, run)
    assert store.steps(run.id) == []
    stored = store.get_run(run.id)  # not left `running`: failed, saying why, resumable
    assert stored.status == "failed" and "'ghost' is unavailable" in stored.reason
    assert store.events(run.id)[-1].kind == "run_finished"


async def test_an_optional_server_that_fails_is_left_out_with_a_notice(tmp_path: Path) -> None:
    ghost = McpServer(name="ghost", command=["/nonexistent/mcp-server"], optional=True)
    store, model, run = await start(tmp_path, [ghost], [act("task_complete", reason="x")])
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed"
    (notice,) = [e for e in store.events(run.id) if e.kind == "mcp_skipped"]
    assert "ghost" in notice.data["message"]
