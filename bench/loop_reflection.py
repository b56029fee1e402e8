"""Self-reflection on goals that invite loops: success, steps and tokens with reflection off and
on, and how many steps a loop wastes before the Monitor notices it.

Real-model part: each goal of bench/loop_goals.py (its workspace set up fresh) is run to its
end by the embedded model in continuous mode, memory off, a fixed identity (no identity call),
once with `self_reflect` off and once on (two trials). Success is the goal's checker, run on
the workspace. Scripted part (`--scripted-only` runs it alone; seconds): scripted traces that
loop in known ways, through the real agent loop with the default Monitor, and the step at which
each loop is first detected. Wasted steps = detection step - loop start + 1: the steps spent
in the loop up to and including the one after which it was caught.

    python bench/loop_reflection.py [--model qwen2.5-coder-1.5b] [--max-steps 10]
        [--goals a,b] [--conditions off,on] [--seed 0] [--scripted-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import RunSettings, create_run, run_agent
from autonoma.llm import Model, ScriptedModel, open_model
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from bench.common import write_result
from bench.loop_goals import BY_NAME, GOALS, LoopGoal

ROLE = "an agent that does small file tasks carefully"


# -- the real model ---------------------------------------------------------------------------


async def run_goal(
    model: Model, spec: str, goal: LoopGoal, reflect: bool, args: argparse.Namespace, root: Path
) -> dict[str, Any]:
    workspace = root / f"{goal.name}-{'on' if reflect else 'off'}"
    workspace.mkdir(parents=True)
    goal.setup(workspace)
    store = RunStore(root / f"{goal.name}-{'on' if reflect else 'off'}.db")
    settings = RunSettings(
        model=spec,
        limits=BudgetLimits(max_steps=args.max_steps),
        continuous=True,
        memory=False,
        seed=args.seed,
        self_reflect=reflect,
        trials=2,
    )
    identity = AgentIdentity(name="FileGPT", role=ROLE, goals=[goal.goal])
    started = time.monotonic()
    run, _ = await create_run(store, model, goal.goal, settings, workspace=workspace,
                              identity=identity)  # fmt: skip
    outcome = await run_agent(store, model, run)
    events = store.events(run.id)
    steps = store.steps(run.id)
    store.close()
    return {
        "goal": goal.name,
        "reflection": reflect,
        "success": goal.check(workspace),
        "status": outcome.status,
        "steps": outcome.spent.steps,
        "tokens": outcome.spent.tokens,
        "seconds": round(time.monotonic() - started, 1),
        "commands": [s.command for s in steps],
        "detections": [
            {"kind": e.data["detection"], "step": e.step}
            for e in events
            if e.kind == "monitor" and e.data["detection"] != "periodic"
        ],
        "reflections": [
            {k: e.data.get(k) for k in ("detection", "verdict", "course", "lesson")}
            | {"step": e.step}
            for e in events
            if e.kind == "self_reflection"
        ],
        "new_trials": sum(1 for e in events if e.kind == "trial_started"),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {}
    n = len(rows)
    return {
        "runs": n,
        "successes": sum(r["success"] for r in rows),
        "success_rate": round(sum(r["success"] for r in rows) / n, 3),
        "mean_steps": round(sum(r["steps"] for r in rows) / n, 2),
        "mean_tokens": round(sum(r["tokens"] for r in rows) / n),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / n, 1),
        "runs_with_a_detection": sum(bool(r["detections"]) for r in rows),
        "reflections": sum(len(r["reflections"]) for r in rows),
        "new_trials": sum(r["new_trials"] for r in rows),
    }


async def real_part(args: argparse.Namespace, results: dict[str, Any]) -> None:
    goals = [BY_NAME[name] for name in args.goals.split(",")] if args.goals else GOALS
    conditions = [c == "on" for c in args.conditions.split(",")]
    spec = f"local:{args.model}"
    model = open_model(spec)
    rows: list[dict[str, Any]] = results.setdefault("runs", [])
    try:
        with tempfile.TemporaryDirectory(prefix="autonoma-loops-") as tmp:
            for goal in goals:
                for reflect in conditions:
                    row = await run_goal(model, spec, goal, reflect, args, Path(tmp))
                    rows.append(row)
                    print(
                        f"{goal.name:15} reflection {'on ' if reflect else 'off'} "
                        f"success={row['success']!s:5} steps={row['steps']:2} "
                        f"{row['seconds']:6.1f}s {row['commands']}",
                        file=sys.stderr,
                        flush=True,
                    )
                    results["summary"] = {
                        ("reflection_on" if on else "reflection_off"): summary(
                            [r for r in rows if r["reflection"] == on]
                        )
                        for on in conditions
                    }
                    save(args, results)
    finally:
        await model.aclose()


# -- scripted loops -----------------------------------------------------------------------------


def act(command: str, plan: str = "look around, then write the answer", **arguments: Any) -> dict:
    thoughts = {"text": f"next: {command}", "reasoning": "it may help", "plan": plan,
                "criticism": "none", "speak": command}  # fmt: skip
    return {"thoughts": thoughts, "command": {"name": command, "args": arguments}}


@dataclass(frozen=True)
class Trace:
    name: str
    answers: list[dict[str, Any]]
    loop_starts: int  # the first step of the loop
    setup: dict[str, str]


def traces() -> list[Trace]:
    read = act("read_file", path="missing.txt")
    listing = act("list_files")
    wrote = [act("write_file", path=f"part{i}.txt", text=f"part {i}") for i in (1, 2)]
    quiet = "look at what is there"  # a plan that announces no work
    cycle3 = [act("read_file", path="missing.txt", plan=quiet), act("list_files", plan=quiet),
              act("read_file", path="notes.txt", plan=quiet)]  # fmt: skip
    return [
        Trace("repeat: one failing read", [read] * 12, 1, {}),
        Trace(
            "cycle of 2: read, list",
            [act("read_file", path="missing.txt", plan=quiet), act("list_files", plan=quiet)] * 6,
            1,
            {},
        ),
        Trace(
            "cycle of 3: read, list, read another",
            cycle3 * 4,
            1,
            {"notes.txt": "nothing useful"},
        ),
        Trace(
            "stall: a new missing file each time, plan without work",
            [act("read_file", path=f"f{i}.txt", plan=quiet) for i in range(12)],
            1,
            {},
        ),
        Trace(
            "no action: the plan says write, only reads",
            [act("read_file", path=f"f{i}.txt") for i in range(12)],
            1,
            {},
        ),
        Trace("progress, then a repeat", [*wrote, *[listing] * 10], 3, {}),
    ]


async def run_trace(trace: Trace, root: Path) -> dict[str, Any]:
    workspace = root / trace.name.split(":")[0].replace(" ", "_")
    workspace.mkdir(parents=True)
    for name, body in trace.setup.items():
        (workspace / name).write_text(body)
    store = RunStore(workspace.with_suffix(".db"))
    model = ScriptedModel(trace.answers)
    settings = RunSettings(model="scripted", continuous=True, memory=False,
                           limits=BudgetLimits(max_steps=len(trace.answers)))  # fmt: skip
    identity = AgentIdentity(name="LoopGPT", role=ROLE, goals=["Write answer.txt"])
    run, _ = await create_run(store, model, "Write answer.txt", settings, workspace=workspace,
                              identity=identity)  # fmt: skip
    await run_agent(store, model, run)
    found = [
        e for e in store.events(run.id) if e.kind == "monitor" and e.data["detection"] != "periodic"
    ]
    store.close()
    first = found[0] if found else None
    return {
        "trace": trace.name,
        "loop_starts": trace.loop_starts,
        "detected_at": first.step if first else None,
        "detection": first.data["detection"] if first else None,
        "wasted_steps": first.step - trace.loop_starts + 1 if first and first.step else None,
    }


async def scripted_part() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="autonoma-traces-") as tmp:
        rows = [await run_trace(trace, Path(tmp)) for trace in traces()]
    wasted = [r["wasted_steps"] for r in rows if r["wasted_steps"] is not None]
    return {
        "traces": rows,
        "mean_wasted_steps": round(sum(wasted) / len(wasted), 2) if wasted else None,
        "max_wasted_steps": max(wasted) if wasted else None,
        "undetected": sum(r["wasted_steps"] is None for r in rows),
    }


def save(args: argparse.Namespace, results: dict[str, Any]) -> None:
    write_result(args.out, results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--goals", default="", help="comma-separated names; default all")
    parser.add_argument("--conditions", default="off,on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scripted-only", action="store_true")
    parser.add_argument("--out", default="loop_reflection")
    args = parser.parse_args()
    results: dict[str, Any] = {
        "model": args.model,
        "max_steps": args.max_steps,
        "seed": args.seed,
        "scripted": asyncio.run(scripted_part()),
    }
    print(json.dumps(results["scripted"], indent=1), flush=True)
    save(args, results)
    if not args.scripted_only:
        asyncio.run(real_part(args, results))


if __name__ == "__main__":
    main()
