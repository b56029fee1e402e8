"""The loop the per-goal model benchmarks share (bench/check_writer.py, bench/judge.py):
`--label`, `--model`, `--goals` of bench/everyday_goals.py, one embedded model for all goals in
a temporary AUTONOMA_HOME, the results file rewritten after each goal."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from autonoma.llm import open_model
from bench.common import write_result
from bench.everyday_goals import GOALS, goals_named

Row = dict[str, Any]


async def each_goal(
    description: str,
    name: str,
    run: Callable[..., Awaitable[list[Row]]],  # (model, goal, folder, **flags)
    summarise: Callable[[list[Row]], Row],
    say: Callable[[Row], str],
    flags: dict[str, str] | None = None,
) -> None:
    """Run `run` on each chosen goal; write bench/results/NAME_LABEL.json as rows come.
    `flags` (name: help) become --name options, given to `run` by keyword."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--label", required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--goals", default=",".join(g.name for g in GOALS))
    for flag, said in (flags or {}).items():
        parser.add_argument(f"--{flag.replace('_', '-')}", action="store_true", help=said)
    args = parser.parse_args()
    chosen = {flag: getattr(args, flag) for flag in flags or {}}
    try:
        goals = goals_named(args.goals)
    except ValueError as error:
        parser.error(str(error))
    rows: list[Row] = []
    result: Row = {"label": args.label, "model": f"local:{args.model}", **chosen}
    with tempfile.TemporaryDirectory(prefix=f"autonoma-{name}-") as tmp:
        os.environ["AUTONOMA_HOME"] = tmp
        model = open_model(f"local:{args.model}")
        try:
            for goal in goals:
                done = await run(model, goal, Path(tmp) / goal.name, **chosen)
                rows += done
                for row in done:
                    print(goal.name, say(row), file=sys.stderr, flush=True)
                result |= {"summary": summarise(rows), "runs": rows}
                write_result(f"{name}_{args.label}", result)
        finally:
            await model.aclose()
