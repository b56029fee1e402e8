"""How far can the judge be trusted? When no usable code check is written, a run's completion
rests on the embedded model judging "done exactly as asked: <task>" from the files. For each
goal of bench/everyday_goals.py the judge sees the goal's reference solution (it should pass)
and wrong results (it should fail): every file the solution writes holding `1 4 9` one a line
(what a run copied from the prompt's example into colors.txt, and the judge passed), and a
near miss (lines reversed, a number one off, a line's case swapped). A wrong result counts only
where the goal's own checker rejects it.

    python bench/judge.py --label NAME [--goals a,b,...] [--model qwen2.5-coder-1.5b] [--typed]

A task whose named inputs the judge can read is worked out again by a program run in the
sandbox (bubblewrap where it is installed); `--typed` has the model type the files' text
instead, as before 2026-12-02.

Writes bench/results/judge_NAME.json: per goal and result, the verdict and the judge's reason.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.check_types import task_check
from autonoma.agent.judge import Judge
from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Workspace
from autonoma.tools.sandbox import make_sandbox
from autonoma.tools.settings import SandboxSettings
from bench.everyday_goals import Goal
from bench.goal_runs import each_goal
from bench.reflection_goals import write

EXAMPLE = "1\n4\n9\n"


def near_miss(text: str) -> str:
    """A result close to right and wrong: lines reversed, a number one off, case swapped."""
    lines = text.strip("\n").split("\n")
    if len(lines) > 1:
        return "\n".join(reversed(lines)) + "\n"
    try:
        return f"{float(lines[0]) + 1:g}\n"
    except ValueError:
        return lines[0].swapcase() + "\n"


def results(goal: Goal) -> dict[str, dict[str, str | None]]:
    """The reference and the wrong results of a goal, as files written over its start."""
    made = {name: text for name, text in goal.answer.items() if text is not None}
    found: dict[str, dict[str, str | None]] = {"reference": dict(goal.answer)}
    if made:
        found["example"] = {**goal.answer, **dict.fromkeys(made, EXAMPLE)}
        texts = {n: t for n, t in made.items() if not n.endswith(".py")}
        if texts:
            found["near_miss"] = {**goal.answer, **{n: near_miss(t) for n, t in texts.items()}}
    return found


async def judge_goal(
    model: Model, goal: Goal, root: Path, typed: bool = False
) -> list[dict[str, Any]]:
    rows = []
    sandbox = None if typed else make_sandbox(SandboxSettings())
    for kind, files in results(goal).items():
        start, done = root / kind / "start", root / kind / "ws"
        start.mkdir(parents=True)
        goal.setup(start)
        shutil.copytree(start, done)
        write(done, files)
        right = goal.check(done)
        if kind != "reference" and right:
            continue  # not wrong after all: nothing to judge
        began = time.monotonic()
        # the files the run found, as a run's judge is told: a file the task removes is gone
        found = frozenset(Workspace(start).files())
        judge = Judge(model, found=found, start=start, sandbox=sandbox)
        result = await judge.judge(
            task_check(goal.goal), goal.goal, [goal.goal], Workspace(done), BudgetSpent()
        )
        rows.append({
            "goal": goal.name, "result": kind, "right": right, "passed": result.passed,
            "agrees": result.passed == right, "why": result.output[:300],
            "worked_out": judge.worked_files(),
            "seconds": round(time.monotonic() - began, 1),
        })  # fmt: skip
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    right = [r for r in rows if r["right"]]
    wrong = [r for r in rows if not r["right"]]
    return {
        "judgements": len(rows),
        "right_results_passed": f"{sum(r['passed'] for r in right)} of {len(right)}",
        "wrong_results_failed": f"{sum(not r['passed'] for r in wrong)} of {len(wrong)}",
        "wrong_results_passed_by_kind": {
            kind: sum(r["passed"] for r in wrong if r["result"] == kind)
            for kind in ("example", "near_miss")
        },
        "agreement": round(sum(r["agrees"] for r in rows) / max(len(rows), 1), 3),
        "seconds_per_judgement": round(sum(r["seconds"] for r in rows) / max(len(rows), 1), 1),
    }


def say(row: dict[str, Any]) -> str:
    verdict = "passed" if row["passed"] else "failed"
    return f"{row['result']} {verdict} {'(right)' if row['agrees'] else '(WRONG)'}"


async def main() -> None:
    await each_goal(
        __doc__.split("\n\n")[0], "judge", judge_goal, summarise, say,
        flags={"typed": "the model types the worked-out files' text (no program)"},
    )  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
