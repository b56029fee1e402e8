"""Self-reflection on goals that invite loops: success, steps and tokens with reflection off and
on, and how many steps a loop wastes before the Monitor notices it.

Real-model part: each goal of bench/reflection_goals.py, its workspace set up fresh, is run to
its end by the embedded model (opened once) in continuous mode, memory off, a fixed identity
(no identity call), once per condition: self_reflect off, or on with two trials. Success is the
goal's checker on the workspace. The JSON is written after every run.

Scripted part (`--scripted-only` runs it alone, in seconds): scripted traces that loop in known
ways go through the real agent loop with the default Monitor and self-reflection off. For each,
the loop's start is known from the script: the first step of the first occurrence of what is
then repeated (or of the stretch that stalls or only reads). Wasted steps = the step of the
first `monitor` detection (periodic checks aside) - loop start + 1: the steps spent in the loop
up to and including the one after which it was caught (a repeat caught at its third identical
step wastes 3).

    python bench/reflection_loops.py [--model qwen2.5-coder-1.5b] [--max-steps 10]
        [--goals a,b] [--conditions off,on] [--seed 0] [--scripted-only]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import Model, ScriptedModel, open_model
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from bench.common import write_result
from bench.reflection_goals import BY_NAME, GOALS, ReflectionGoal

NAME, ROLE = "FileGPT", "an agent that does small file tasks in its workspace carefully"


# -- the real model -------------------------------------------------------------------------


async def run_goal(
    model: Model,
    spec: str,
    goal: ReflectionGoal,
    condition: str,
    args: argparse.Namespace,
    root: Path,
) -> dict[str, Any]:
    workspace = root / f"{goal.name}-{condition}"
    workspace.mkdir(parents=True)
    goal.setup(workspace)
    store = RunStore(root / "runs.db")
    settings = RunSettings(
        checks=False,
        model=spec,
        limits=BudgetLimits(max_steps=args.max_steps),
        continuous=True,
        memory=False,
        seed=args.seed,
        self_reflect=condition == "on",
        trials=2,
    )
    identity = AgentIdentity(name=NAME, role=ROLE, goals=[goal.goal])
    started = time.monotonic()
    run, _ = await create_run(
        store, model, goal.goal, settings, workspace=workspace, identity=identity
    )
    outcome = await run_agent(store, model, run)
    events = store.events(run.id)
    return {
        "goal": goal.name,
        "condition": condition,
        "success": goal.check(workspace),
        "status": outcome.status,
        "reason": outcome.reason,
        "steps": outcome.spent.steps,
        "tokens": outcome.spent.prompt_tokens + outcome.spent.completion_tokens,
        "prompt_tokens": outcome.spent.prompt_tokens,
        "completion_tokens": outcome.spent.completion_tokens,
        "seconds": round(time.monotonic() - started, 1),
        "detections": [
            {"kind": e.data["detection"], "step": e.step, "steps": e.data["steps"]}
            for e in events
            if e.kind == "monitor"
        ],
        "reflections": [
            {"step": e.step, **{k: e.data[k] for k in ("lesson", "verdict", "course")}}
            for e in events
            if e.kind == "self_reflection"
        ],
        "trials_started": sum(e.kind == "trial_started" for e in events),
        "commands": [f"{s.command}({s.arguments})"[:120] for s in store.steps(run.id)],
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"runs": 0}
    return {
        "runs": len(rows),
        "successes": sum(r["success"] for r in rows),
        "success_rate": round(sum(r["success"] for r in rows) / len(rows), 3),
        "mean_steps": round(sum(r["steps"] for r in rows) / len(rows), 1),
        "mean_tokens": round(sum(r["tokens"] for r in rows) / len(rows)),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / len(rows), 1),
        "runs_with_a_detection": sum(
            any(d["kind"] != "periodic" for d in r["detections"]) for r in rows
        ),
        "reflections": sum(len(r["reflections"]) for r in rows),
        "new_trials": sum(r["trials_started"] for r in rows),
    }


# -- scripted loops -------------------------------------------------------------------------

WORK_PLAN = "write the answer to answer.txt, then finish"
LOOK_PLAN = "look at the files again"  # no word that announces work: no no_action detection
SCRIPTED_GOAL = "Write the answer to answer.txt"


def act(command: str, plan: str = LOOK_PLAN, **args: Any) -> dict[str, Any]:
    """An answer in the action schema."""
    thoughts = {
        "text": f"next: {command}",
        "reasoning": "it serves the goal",
        "plan": plan,
        "criticism": "be brief",
        "speak": f"running {command}",
    }
    return {"thoughts": thoughts, "command": {"name": command, "args": args}}


def cycle(answers: list[dict[str, Any]], length: int) -> list[dict[str, Any]]:
    """The answers over and over, `length` of them."""
    return [answers[i % len(answers)] for i in range(length)]


LOOP = 8  # steps of looping in each trace before it finishes
# The same command three times: the third is refused, and with JSON actions the next step's
# schema leaves the command out, so a fourth cannot be asked for (a scripted one would be an
# invalid answer, not a repeat).
REPEATS = 3
FINISH = [
    act("write_file", path="answer.txt", text="42"),
    act("task_complete", reason="answer.txt is written"),
]


@dataclass(frozen=True)
class Trace:
    name: str
    what: str
    script: list[dict[str, Any]]  # before FINISH
    loop_start: int
    files: dict[str, str] = field(default_factory=dict)


TRACES = [
    Trace(
        "repeat",
        "the same read of a missing file, the same error each time",
        cycle([act("read_file", path="missing.txt")], REPEATS),
        loop_start=1,
    ),
    Trace(
        "cycle_2",
        "list_files, read_file notes.txt, over and over",
        cycle([act("list_files"), act("read_file", path="notes.txt")], LOOP),
        loop_start=1,
        files={"notes.txt": "no use\n"},  # short: a longer text shown is not read again
    ),
    Trace(
        "cycle_3",
        "list_files, read a.txt, read b.txt, over and over",
        cycle(
            [act("list_files"), act("read_file", path="a.txt"), act("read_file", path="b.txt")],
            LOOP,
        ),
        loop_start=1,
        files={"a.txt": "see b.txt\n", "b.txt": "see a.txt\n"},
    ),
    Trace(
        "stall",
        "reads of different missing files (each fails, no repeat)",
        [act("read_file", path=f"data{i}.txt") for i in range(1, LOOP + 1)],
        loop_start=1,
    ),
    Trace(
        "no_action",
        "the plan announces writing, but each step reads another file",
        [act("read_file", plan=WORK_PLAN, path=f"note{i}.txt") for i in range(1, LOOP + 1)],
        loop_start=1,
        files={f"note{i}.txt": f"note number {i}\n" for i in range(1, LOOP + 1)},
    ),
    Trace(
        "progress_then_cycle",
        "writes and reads a draft (progress), then list_files, read a missing file, over and over",
        [
            act("write_file", path="draft.txt", text="a draft"),  # short, as above
            act("read_file", path="draft.txt"),
            *cycle([act("list_files"), act("read_file", path="missing.txt")], LOOP),
        ],
        loop_start=3,
    ),
    Trace(
        "same_write",
        "the same write of draft.txt again and again (every step acts)",
        cycle([act("write_file", path="draft.txt", text="a draft")], REPEATS),
        loop_start=1,
    ),
]


async def run_trace(trace: Trace, root: Path) -> dict[str, Any]:
    workspace = root / trace.name
    workspace.mkdir(parents=True)
    for name, text in trace.files.items():
        (workspace / name).write_text(text)
    store = RunStore(root / f"{trace.name}.db")
    model = ScriptedModel([*trace.script, *FINISH])
    settings = RunSettings(
        checks=False,
        model="scripted",
        limits=BudgetLimits(max_steps=30),
        continuous=True,
        memory=False,
    )
    identity = AgentIdentity(name=NAME, role=ROLE, goals=[SCRIPTED_GOAL])
    run, _ = await create_run(
        store, model, SCRIPTED_GOAL, settings, workspace=workspace, identity=identity
    )
    outcome = await run_agent(store, model, run)
    found = [
        (e.data["detection"], e.step or 0)
        for e in store.events(run.id)
        if e.kind == "monitor" and e.data["detection"] != "periodic"
    ]
    kind, step = found[0] if found else (None, None)
    return {
        "trace": trace.name,
        "what": trace.what,
        "status": outcome.status,
        "loop_start": trace.loop_start,
        "detection": kind,
        "detection_step": step,
        "wasted_steps": None if step is None else step - trace.loop_start + 1,
        "detections": [f"{k}@{s}" for k, s in found],
    }


async def scripted(root: Path) -> dict[str, Any]:
    rows = [await run_trace(trace, root) for trace in TRACES]
    wasted = [r["wasted_steps"] for r in rows if r["wasted_steps"] is not None]
    return {
        "definition": "wasted steps = step of the first monitor detection (not periodic) - "
        "loop start + 1; loop start = first step of the first occurrence of what repeats",
        "traces": rows,
        "undetected": sum(r["wasted_steps"] is None for r in rows),
        "mean_wasted_steps": round(sum(wasted) / len(wasted), 2) if wasted else None,
        "max_wasted_steps": max(wasted) if wasted else None,
    }


# -- the whole --------------------------------------------------------------------------------


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--goals", default=",".join(g.name for g in GOALS))
    parser.add_argument("--conditions", default="off,on", help="self_reflect off and/or on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scripted-only", action="store_true")
    args = parser.parse_args()
    goals = [BY_NAME[name] for name in args.goals.split(",")]
    conditions = args.conditions.split(",")
    if set(conditions) - {"off", "on"}:
        parser.error("--conditions takes off and/or on")

    with tempfile.TemporaryDirectory(prefix="autonoma-reflection-") as tmp:
        root = Path(tmp)
        result: dict[str, Any] = {"scripted": await scripted(root / "scripted")}
        for row in result["scripted"]["traces"]:
            print("scripted", row["trace"], row["detections"], file=sys.stderr)
        if args.scripted_only:
            write_result("reflection_loops", result)
            return
        spec = f"local:{args.model}"
        result |= {
            "model": spec,
            "max_steps": args.max_steps,
            "seed": args.seed,
            "trials": 2,
            "goals": {g.name: g.goal for g in goals},
        }
        rows: list[dict[str, Any]] = []
        model = open_model(spec)
        try:
            for goal in goals:
                for condition in conditions:
                    row = await run_goal(model, spec, goal, condition, args, root / "real")
                    rows.append(row)
                    print(
                        goal.name,
                        f"reflection {condition}",
                        "success" if row["success"] else "failure",
                        f"{row['steps']} steps",
                        f"{row['seconds']} s",
                        file=sys.stderr,
                    )
                    result["conditions"] = {
                        c: summarise([r for r in rows if r["condition"] == c]) for c in conditions
                    }
                    result["runs"] = rows
                    write_result("reflection_loops", result)
        finally:
            await model.aclose()


if __name__ == "__main__":
    asyncio.run(main())
