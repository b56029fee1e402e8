"""The personas' day plans on a real model: each plan's items, the schedule's blocks that
follow from them, and whether the day is in phase with the persona's life (asleep at 03:00,
awake at 10:00 and at 15:00), with the tokens a plan costs. The first game-day sitting
found the hourly schedule, asked as 24 labels, out of phase (awake at 01:00, asleep by day).

    python bench/sim_day_plans.py --town the_ville --personas 10
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.common

from autonoma.llm import open_model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_personas, shipped_world
from autonoma.sim.plan import clock_time, plan_day
from autonoma.sim.schedule import Schedule
from bench.common import machine, write_result

IN_PHASE = {"03:00": False, "10:00": True, "15:00": True}  # awake at that time of day?


async def measure(town: str, count: int, model_name: str) -> dict[str, Any]:
    world = shipped_world(town)
    people = shipped_personas(town, world)[:count]
    model = open_model(f"local:{model_name}?context=4096")
    plans: list[dict[str, Any]] = []
    try:
        for persona in people:
            spent, started = BudgetSpent(), time.perf_counter()
            plan, blocks = await plan_day(model, persona, datetime(2023, 2, 13), "", spent)
            schedule = Schedule("2023-02-13", plan, blocks)
            awake = {}
            for label, wanted in IN_PHASE.items():
                hours, minutes = (int(n) for n in label.split(":"))
                block = blocks[schedule.block_at(hours * 60 + minutes)]
                awake[label] = (not block.asleep) == wanted
            plans.append({
                "persona": persona.name,
                "lifestyle": persona.spec.lifestyle,
                "plan": plan,
                "blocks": [[clock_time(b.start), b.minutes, b.activity] for b in blocks],
                "in_phase": awake,
                "prompt_tokens": spent.prompt_tokens,
                "completion_tokens": spent.completion_tokens,
                "seconds": round(time.perf_counter() - started, 1),
            })  # fmt: skip
            print(persona.name, plan, awake, flush=True)
    finally:
        await model.aclose()
    phases = [ok for p in plans for ok in p["in_phase"].values()]
    return {
        "town": town,
        "model": model_name,
        "personas": len(plans),
        "in_phase_share": round(sum(phases) / len(phases), 3),
        "days_wholly_in_phase": sum(all(p["in_phase"].values()) for p in plans),
        "tokens_per_plan": round(
            sum(p["prompt_tokens"] + p["completion_tokens"] for p in plans) / len(plans), 1
        ),
        "plans": plans,
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--town", default="the_ville")
    parser.add_argument("--personas", type=int, default=10)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    result = asyncio.run(measure(args.town, args.personas, args.model))
    name = f"sim_day_plans_{args.label or args.town}"
    print(f"{result['in_phase_share']:.0%} in phase, {result['tokens_per_plan']} tokens a plan")
    print("wrote", write_result(name, result))


if __name__ == "__main__":
    main()
