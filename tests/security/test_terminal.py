"""Escape sequences in what tools return (a web page, a program's output) never reach the
terminal raw: the live view and `show` print them as visible text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from autonoma.agent.approval import ApprovalRequest
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.cli_view import ConsoleApprover, LiveView, run_report
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import EventRecord, RunStore
from autonoma.testing import act
from autonoma.tools import Risk, ToolResult, tool
from tests.agent.helpers import IDENTITY

HOSTILE = "done\x1b[2J\x1b[H\x1b]0;owned\x07\rfake: all good\x1b[8mhidden\u202egnp.exe"


@tool()
def noisy() -> ToolResult:
    """Print something hostile."""
    return ToolResult(True, HOSTILE, untrusted=True)


async def test_escapes_from_a_tool_are_shown_not_obeyed(tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=False, width=200, color_system=None)
    model = ScriptedModel([act("noisy"), act("task_complete", reason="printed \x1b[31mred\x1b[0m")])
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(checks=False, model="scripted", continuous=True, memory=False)
    run, _ = await create_run(
        store, model, "Print", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    tools = default_tools()
    tools.add(noisy)
    await run_agent(store, model, run, tools=tools, listeners=[LiveView(console)])
    run_report(console, store.get_run(run.id), store.steps(run.id))
    shown = screen.getvalue()
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in shown
    assert "\\x1b[2J" in shown and "\\u202e" in shown  # visible instead


@tool()
def git_log() -> ToolResult:
    """Show a log."""
    lines = [
        f"commit {n:040x}\nAuthor: T <t@example.org>\n\n    change {n}\x1b[31m" for n in range(5)
    ]
    return ToolResult(True, "\n".join(lines), untrusted=True)


async def test_a_multi_line_result_is_shown_as_lines_each_made_safe(tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=False, width=200, color_system=None)
    model = ScriptedModel([act("git_log"), act("task_complete", reason="logged")])
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(checks=False, model="scripted", continuous=True, memory=False)
    run, _ = await create_run(
        store, model, "Log", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    tools = default_tools()
    tools.add(git_log)
    await run_agent(store, model, run, tools=tools, listeners=[LiveView(console)])
    shown = screen.getvalue()
    assert "\\x0a" not in shown and "\x1b" not in shown
    assert (
        f"  → commit {0:040x}\n    Author: T <t@example.org>\n        change 0\\x1b[31m\n" in shown
    )
    assert "… 7 more lines" in shown  # 15 lines, 8 shown


def test_a_failure_is_shown_whole_and_tabs_as_spaces() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=False, width=2000, color_system=None)
    refusal = "git_reset was not run: " + "x" * 300 + "; these can still run: git_status"
    view = LiveView(console)
    for n, (ok, said) in enumerate([(False, refusal), (True, "a\tb")], 1):
        data = {"ok": ok, "observation": said, "status": "done"}
        view(EventRecord(id=n, run_id="r", step=n, at=0, kind="step_result", data=data))
    shown = screen.getvalue()
    assert "these can still run: git_status" in shown  # not cut at 160 characters
    assert "a   b" in shown and "\\x09" not in shown


async def test_the_approval_prompt_shows_its_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=False, width=200, color_system=None)
    monkeypatch.setattr("builtins.input", lambda prompt="": "n")
    request = ApprovalRequest(1, "write_file", {"path": "a.txt"}, Risk.WRITE, "")
    decision = await ConsoleApprover(console)(request)
    assert decision.kind == "no"
    assert "[y]es / [n]o / y N (approve N in a row)" in screen.getvalue()
