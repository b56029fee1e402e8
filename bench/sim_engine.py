"""The town's engine overhead per persona-step, the model's answers costing nothing: the
Ville's 25 personas on a model that answers at once from a script (their day, hours, actions,
places and ratings), their memories in a real memory stream (lexical embeddings). The first
step plans every day and is not counted; then CPU seconds (this process) and model calls are
counted over `--steps` steps and over the saving of each step's state, as `sim run` does
(bench/results/sim_engine.json, docs/benchmarks.md).

    python bench/sim_engine.py [--steps 360] [--town the_ville]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.common

from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_personas, shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.engine import Town
from autonoma.sim.memory import TownMemory, town_raters
from autonoma.sim.plan import HOUR_LABELS
from autonoma.sim.store import SimStore
from bench.common import machine, write_result

HOURS = ["sleeping"] * 7 + ["having breakfast"] + ["working"] * 14 + ["sleeping"] * 2


def answers(messages: list[Message], request: CompletionRequest) -> dict[str, Any]:
    schema = request.plan.schema or {}
    wanted = next(iter(schema["properties"]))
    if wanted == "place":
        places = schema["properties"]["place"]["enum"]
        return {"place": places[len(messages[0].content) % len(places)]}
    if wanted == "ratings":
        return {"ratings": [3] * schema["properties"]["ratings"]["minItems"]}
    if wanted == "00:00":  # the hours, each under its label
        return dict(zip(HOUR_LABELS, HOURS, strict=True))
    if wanted == "decision":
        return {"decision": "continue", "reaction": "", "minutes": 5}
    return {
        "plan": {"plan": ["wake up at 7:00 am", "breakfast", "work", "dinner", "sleep"]},
        "actions": {
            "actions": [
                {"action": "getting ready", "minutes": 10},
                {"action": "walking over", "minutes": 10},
                {"action": "doing it", "minutes": 10},
            ]
        },
    }[wanted]


async def measure(town_name: str, steps: int, root: Path) -> dict[str, Any]:
    world = shipped_world(town_name)
    people = shipped_personas(town_name, world)
    store = SimStore(root / "sims.db")
    sim = store.create("bench", world, people, GameClock(dt.datetime(2023, 2, 13, 7, 0)))
    model = ScriptedModel(answers)
    stream = MemoryStream(root / "memory.db", LexicalEmbedder())
    town = Town(sim, model, TownMemory(stream, town_raters(model, people)), BudgetSpent())
    await town.begin()
    await town.step()  # every day planned: not counted
    store.save(sim)
    calls_before = len(model.requests)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(steps):
        await town.step()
        store.save(sim)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    calls = [r.schema or {} for r in model.requests[calls_before:]]
    kinds: dict[str, int] = {}
    for schema in calls:
        kind = next(iter(schema.get("properties", {"?": 0})))
        kinds[kind] = kinds.get(kind, 0) + 1
    persona_steps = steps * len(people)
    state_bytes = len(json.dumps(sim.state()))
    [(stored,)] = store._read(  # what the measured steps stored: the parts that changed
        "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM parts WHERE sim_id = ? AND step > 1",
        sim.record.id,
    )
    stream.close()
    store.close()
    return {
        "personas": len(people),
        "steps": steps,
        "cpu_ms_per_persona_step": round(cpu * 1000 / persona_steps, 3),
        "wall_ms_per_persona_step": round(wall * 1000 / persona_steps, 3),
        "model_calls": len(calls),
        "model_calls_by_kind": kinds,
        "model_calls_per_persona_step": round(len(calls) / persona_steps, 4),
        "state_bytes_per_step": state_bytes,
        "stored_bytes_per_step": round(stored / steps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=360)
    parser.add_argument("--town", default="the_ville")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        result = asyncio.run(measure(options.town, options.steps, Path(root)))
    print(json.dumps(result, indent=2))
    write_result(
        "sim_engine",
        {
            "benchmark": "sim_engine",
            "command": f"python bench/sim_engine.py --steps {options.steps} --town {options.town}",
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": machine(),
            "town": options.town,
            **result,
        },
    )


if __name__ == "__main__":
    main()
