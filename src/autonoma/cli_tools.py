"""`autonoma tools`: the commands a run with these settings would offer the model, each with
its risk and where the risk came from, MCP servers' tools included (the servers are started,
listed and closed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import open_sandbox, run_tools
from autonoma.cli_settings import about, read_settings_file, tool_settings_from
from autonoma.errors import AutonomaError
from autonoma.tools import Tool
from autonoma.tools.retrieval import needs_retrieval


def listed_tools(settings: RunSettings, workspace: Path) -> tuple[list[Tool], list[str]]:
    """The tools a run with `settings` offers (built-in, then each MCP server's), and what
    was left out with the reason."""
    registry = run_tools(settings, memory=settings.memory.enabled, sandbox=open_sandbox(settings))
    if not settings.tools.mcp:
        return list(registry), []
    from autonoma.tools.mcp import McpTools  # needs the mcp extra

    async def served() -> tuple[list[Tool], list[str]]:
        connection = McpTools(settings.tools.mcp, workspace)
        async with connection as tools:
            return tools, connection.skipped

    tools, skipped = asyncio.run(served())
    disabled = [
        f"MCP server {server.name!r}: tool {name!r} left out: disabled in your settings"
        for server in settings.tools.mcp
        for name, chosen in server.tools.items()
        if not chosen.enabled
    ]
    return [*registry, *tools], [*skipped, *disabled]


def tool_row(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "risk": str(tool.risk),
        "risk_from": tool.risk_from,
        "undoable": tool.undoable,
        "line": f"{tool.signature()}: {tool.description}",
        "parameters": tool.spec().parameters,
    }


def tools_command(
    settings_file: Path | None = typer.Option(
        None, "--settings", help="a TOML or JSON file of run settings (docs/library.md)"
    ),
    tool_settings: Path | None = typer.Option(
        None, "--tool-settings", help="a JSON or TOML file of tool settings (docs/tools.md)"
    ),
    groups: str | None = typer.Option(None, "--tools", help=about("tools.groups")),
    continuous: bool = typer.Option(
        False, "--continuous", help="as a continuous run (no ask_person)"
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="what `{workspace}` means to MCP servers (default: here)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """List the commands a run would offer the model: built-in and MCP tools, each with its
    risk and where that risk came from, and the line the model reads."""
    base = read_settings_file(settings_file, "the run settings") if settings_file else {}
    tools = tool_settings_from(
        tool_settings,
        groups,
        [],
        False,
        False,
        base=base.get("tools"),
        base_path=settings_file,
    )
    data = {k: v for k, v in base.items() if k != "tools"} | {"tools": tools.model_dump()}
    if continuous:
        data["continuous"] = True
    settings = RunSettings.model_validate(data)
    try:
        offered, skipped = listed_tools(settings, (workspace or Path.cwd()).resolve())
    except AutonomaError as error:
        raise typer.BadParameter(str(error)) from None
    narrowed = needs_retrieval(len(offered), settings.tools.retrieval)
    retrieval = settings.tools.retrieval
    if as_json:
        print(
            json.dumps(
                {
                    "tools": [tool_row(t) for t in offered],
                    "left_out": skipped,
                    "retrieval": {"narrows": narrowed, "k": retrieval.k},
                },
                indent=2,
            )
        )
        return
    console = Console()
    table = Table("command", "risk", "risk from", "the model reads", show_lines=False)
    for tool in offered:
        table.add_row(
            tool.name,
            str(tool.risk) + (" (undoable)" if tool.undoable else ""),
            tool.risk_from,
            Text(f"{tool.signature()}: {tool.description}"),
        )
    console.print(table)
    for what in skipped:
        console.print(Text(f"left out: {what}", style="yellow"))
    if narrowed:
        console.print(
            f"{len(offered)} commands are more than {retrieval.threshold}: each task is offered "
            f"the {retrieval.k} most relevant to it, and find_tools for the rest."
        )
