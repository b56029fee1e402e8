"""The demo goal with each embedded model: success, steps, tokens and seconds per run.

Each run goes the whole way a person's does (identity from the goal, then the step loop, in
continuous mode) through the library, with a fresh workspace. Success: the run completes and
haiku.txt holds exactly three non-empty lines of text.

    python bench/agent_demo.py [--models smollm2-135m,qwen2.5-coder-1.5b] [--runs 5]
                               [--max-steps 10] [--first-seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import open_model
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from bench.common import write_result

GOAL = "Write a haiku about autumn to haiku.txt"


def haiku_lines(workspace: Path) -> list[str]:
    path = workspace / "haiku.txt"
    if not path.is_file():
        return []
    return [line for line in path.read_text(errors="replace").splitlines() if line.strip()]


async def run_model(
    name: str, runs: int, max_steps: int, first_seed: int, root: Path
) -> dict[str, Any]:
    spec = f"local:{name}"
    model = open_model(spec)
    store = RunStore(root / name / "runs.db")
    rows = []
    try:
        for index in range(runs):
            workspace = root / name / f"ws{index}"
            started = time.monotonic()
            seed = first_seed + index
            settings = RunSettings(
                model=spec, limits=BudgetLimits(max_steps=max_steps), continuous=True, seed=seed
            )
            run, _ = await create_run(store, model, GOAL, settings, workspace=workspace)
            outcome = await run_agent(store, model, run)
            lines = haiku_lines(workspace)
            row = {
                "seed": seed,
                "status": outcome.status,
                "success": outcome.status == "completed" and len(lines) == 3,
                "steps": outcome.spent.steps,
                "prompt_tokens": outcome.spent.prompt_tokens,
                "completion_tokens": outcome.spent.completion_tokens,
                "seconds": round(time.monotonic() - started, 1),
                "goals": run.identity["goals"],
                "commands": [s.command for s in store.steps(run.id)],
                "haiku": lines,
            }
            print(name, index, {k: row[k] for k in ("status", "success", "steps", "seconds")})
            rows.append(row)
    finally:
        await model.aclose()
    wins = [r for r in rows if r["success"]]
    return {
        "runs": len(rows),
        "successes": len(wins),
        "success_rate": len(wins) / len(rows),
        "mean_steps": round(sum(r["steps"] for r in rows) / len(rows), 1),
        "mean_tokens": round(
            sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) / len(rows)
        ),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / len(rows), 1),
        "mean_seconds_successful": (
            round(sum(r["seconds"] for r in wins) / len(wins), 1) if wins else None
        ),
        "per_run": rows,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-1.5b")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="run i samples with seed+i")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="autonoma-demo-") as tmp:
        results = {
            name: await run_model(name, args.runs, args.max_steps, args.first_seed, Path(tmp))
            for name in args.models.split(",")
        }
    write_result(
        "agent_demo",
        {
            "goal": GOAL,
            "max_steps": args.max_steps,
            "first_seed": args.first_seed,
            "models": results,
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
