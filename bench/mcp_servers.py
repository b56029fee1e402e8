"""MCP servers in everyday use: what starting them costs a run, and whether the embedded
model asks a server or guesses.

Start-up: one, two and four copies of the real time server from PyPI (`mcp-server-time`,
started with `python -m mcp_server_time` as its README shows) are started, listed and closed
together with `McpTools`, as a run does before its first step; the median of `--repeats`.

Tool choice: "Write the current time in CITY (HH:MM, 24-hour) to FILE" with the time server
and no built-in groups, through the CLI's path (identity, checks, steps), one run per seed.
A run *asked* if it called a `time__` tool; it is *right* if it completed and the file holds
the city's time as the server gives it (within the run's minutes).

    python bench/mcp_servers.py [--repeats 5] [--runs 6] [--max-steps 8] [--skip-model]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import open_model
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from autonoma.tools.mcp import McpTools
from autonoma.tools.settings import McpServer, ToolSettings
from bench.common import write_result

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
CITIES = [("Tokyo", "Asia/Tokyo"), ("Paris", "Europe/Paris"), ("New York", "America/New_York")]


async def start_up(servers: int, repeats: int, root: Path) -> dict[str, Any]:
    settings = [McpServer.model_validate({"name": f"time{n}", **TIME}) for n in range(servers)]
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        async with McpTools(settings, root) as tools:
            assert len(tools) == 2 * servers
        seconds.append(time.perf_counter() - started)
    return {
        "servers": servers,
        "median_s": round(statistics.median(seconds), 3),
        "runs_s": [round(s, 3) for s in seconds],
    }


def wrote_the_time(path: Path, zone: str, began: float) -> bool:
    if not path.is_file():
        return False
    text = path.read_text(errors="replace")
    start = datetime.fromtimestamp(began, ZoneInfo(zone)) - timedelta(minutes=1)
    minutes = int((time.time() - began) // 60) + 2
    return any((start + timedelta(minutes=m)).strftime("%H:%M") in text for m in range(minutes))


async def tool_choice(runs: int, max_steps: int, root: Path) -> dict[str, Any]:
    spec = RunSettings().model
    model = open_model(spec)
    store = RunStore(root / "runs.db")
    tools = ToolSettings.model_validate({"groups": [], "mcpServers": {"time": TIME}})
    rows = []
    try:
        for seed in range(runs):
            city, zone = CITIES[seed % len(CITIES)]
            name = city.lower().replace(" ", "_") + ".txt"
            goal = f"Write the current time in {city} (HH:MM, 24-hour) to {name}"
            settings = RunSettings(
                model=spec,
                continuous=True,
                seed=seed,
                tools=tools,
                limits=BudgetLimits(max_steps=max_steps),
            )
            workspace = root / f"ws{seed}"
            began = time.time()
            run, _ = await create_run(store, model, goal, settings, workspace=workspace)
            outcome = await run_agent(store, model, run)
            steps = store.steps(run.id)
            asked = [s for s in steps if s.command.startswith("time__")]
            written = workspace / name
            checks = [
                check["code"]
                for e in store.events(run.id)
                if e.kind == "checks_written"
                for check in e.data.get("checks", [])
            ]
            row = {
                "seed": seed,
                "goal": goal,
                "status": outcome.status,
                "asked": bool(asked),
                "first_ask_step": asked[0].n if asked else None,
                "zones_asked": [s.arguments.get("timezone") for s in asked],
                "right": outcome.status == "completed"
                and wrote_the_time(workspace / name, zone, began),
                "wrong_claim": outcome.status == "completed"
                and not wrote_the_time(workspace / name, zone, began),
                "steps": outcome.spent.steps,
                "seconds": round(time.time() - began, 1),
                "commands": [s.command for s in steps],
                "file": written.read_text(errors="replace")[:200] if written.is_file() else None,
                "checks": checks,
                "reason": outcome.reason,
            }
            print({k: row[k] for k in ("seed", "status", "asked", "right", "steps", "seconds")})
            rows.append(row)
    finally:
        await model.aclose()
    return {
        "model": spec,
        "runs": len(rows),
        "asked": sum(r["asked"] for r in rows),
        "asked_with_an_iana_zone": sum(
            bool(r["zones_asked"]) and all("/" in str(z) for z in r["zones_asked"]) for r in rows
        ),
        "right": sum(r["right"] for r in rows),
        "wrong_claims": sum(r["wrong_claim"] for r in rows),
        "per_run": rows,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--skip-model", action="store_true", help="start-up figures only")
    parser.add_argument("--label", help="names the result file: mcp_servers_LABEL.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="autonoma-mcp-") as tmp:
        root = Path(tmp)
        starts = [await start_up(n, args.repeats, root) for n in (1, 2, 4)]
        for row in starts:
            print(row)
        choice = None if args.skip_model else await tool_choice(args.runs, args.max_steps, root)
    write_result(
        f"mcp_servers_{args.label}" if args.label else "mcp_servers",
        {"start_up": starts, "tool_choice": choice, "max_steps": args.max_steps},
    )


if __name__ == "__main__":
    asyncio.run(main())
