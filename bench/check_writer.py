"""How good are the acceptance checks the embedded model writes? For each goal of
bench/everyday_goals.py: the checks are written on the workspace as the goal starts (as a run
does, with the sandbox and the judge guarding them), then run on the goal's reference
solution. A kept code check must fail at the start (the writer's guard sees to that) and pass
on the reference: one that fails there is wrong, and a run held to it can never finish or,
fitted to it, finishes wrong (count_words' check counted characters, fix_typo's expected
"read" for "recieve"). Judged checks are counted, not run (their judge is the model again).

    python bench/check_writer.py --label NAME [--goals a,b,...] [--model qwen2.5-coder-1.5b]

Writes bench/results/check_writer_NAME.json: per goal the checks with their code, what was
sent back, and whether each code check passed on the reference.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.checks import CheckRunner, CheckWriter
from autonoma.agent.judge import Judge
from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Workspace
from autonoma.tools.sandbox import Sandbox, make_sandbox
from autonoma.tools.settings import SandboxSettings
from bench.everyday_goals import Goal
from bench.goal_runs import each_goal


async def write_and_try(model: Model, sandbox: Sandbox, goal: Goal, root: Path) -> dict[str, Any]:
    start, done = root / "start", root / "ws"
    start.mkdir(parents=True)
    goal.setup(start)
    shutil.copytree(start, done)
    workspace = Workspace(done)
    spent = BudgetSpent()
    began = time.monotonic()
    runner = CheckRunner(sandbox, workspace, start)
    written = await CheckWriter(model, runner, judge=Judge(model)).write(
        goal.goal, [goal.goal], workspace, spent
    )
    seconds = round(time.monotonic() - began, 1)
    goal.solve(done)  # the reference solution, where the checks now run
    tried = []
    for check in written.checks:
        row: dict[str, Any] = {"what": check.what, "kind": check.kind, "code": check.code}
        if check.kind == "code":
            result = await CheckRunner(sandbox, Workspace(done), start).run(check)
            row |= {"passes_on_reference": result.passed, "output": result.output[:300]}
        tried.append(row)
    coded = [t for t in tried if t["kind"] == "code"]
    return {
        "goal": goal.name,
        "seconds": seconds,
        "tokens": written.usage.total_tokens + spent.tokens,
        "checks": tried,
        "discarded": written.discarded,
        "none_kept": not written.checks,
        "code_checks": len(coded),
        "code_checks_right": sum(t["passes_on_reference"] for t in coded),
        "judged_checks": len(tried) - len(coded),
        "all_right": bool(coded) and all(t["passes_on_reference"] for t in coded),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    code = sum(r["code_checks"] for r in rows)
    return {
        "goals": len(rows),
        "goals_with_a_code_check": sum(r["code_checks"] > 0 for r in rows),
        "goals_whose_code_checks_all_pass_the_reference": sum(r["all_right"] for r in rows),
        "goals_with_a_wrong_code_check": sum(
            r["code_checks_right"] < r["code_checks"] for r in rows
        ),
        "goals_with_no_check_kept": sum(r["none_kept"] for r in rows),
        "goals_judged_only": sum(r["code_checks"] == 0 and not r["none_kept"] for r in rows),
        "code_checks": code,
        "code_checks_right": sum(r["code_checks_right"] for r in rows),
        "seconds_per_goal": round(sum(r["seconds"] for r in rows) / max(len(rows), 1), 1),
    }


async def main() -> None:
    sandbox = make_sandbox(SandboxSettings())

    async def run(model: Model, goal: Goal, root: Path) -> list[dict[str, Any]]:
        return [await write_and_try(model, sandbox, goal, root)]

    def say(row: dict[str, Any]) -> str:
        return (
            f"{row['code_checks_right']} of {row['code_checks']} code checks right "
            f"{row['judged_checks']} judged, {row['seconds']} s"
        )

    await each_goal(__doc__.split("\n\n")[0], "check_writer", run, summarise, say)


if __name__ == "__main__":
    asyncio.run(main())
