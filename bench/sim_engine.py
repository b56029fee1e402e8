"""The town's engine overhead per persona-step, the model's answers costing nothing: the
Ville's 25 personas on a model that answers at once from a script (their day, actions,
places and ratings), their memories in a real memory stream (lexical embeddings). The first
step plans every day and is not counted; then CPU seconds (this process) and model calls are
counted over `--steps` steps and over the saving of each step's state, as `sim run` does
(bench/results/sim_engine.json, docs/benchmarks.md).

    python bench/sim_engine.py [--steps 360] [--town the_ville | crowd:500]

`crowd:N` is a town made for the measure: N personas, four to a walled house on a grid of
streets, and a cafe every one of them knows (no shipped town holds 500).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
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
from autonoma.sim.persona import Persona, PersonaSpec, place
from autonoma.sim.store import SimStore
from autonoma.sim.world import World, WorldSpec
from bench.common import machine, write_result

DAY = ["have breakfast", "work", "have lunch", "work", "have dinner"]
DAY_HOURS = ["07", "08", "12", "13", "18"]


def day_plan(schema: dict[str, Any]) -> dict[str, Any]:
    """The day's items at the hours the schema allows where it lists the persona's waking
    hours (the first two, the middle two and the last but one), else at 07, 08, 12, 13 and
    18 with the bed time asked."""
    if "bed" in schema["properties"]:
        return {"plan": [{"at": f"{h}:00", "do": do} for h, do in zip(DAY_HOURS, DAY, strict=True)],
                "bed": "22:00"}  # fmt: skip
    pattern = schema["properties"]["plan"]["items"]["properties"]["at"]["pattern"]
    hours = pattern[2:].split(")")[0].split("|")  # "^(07|08|...|23):[0-5][0-9]$"
    middle = len(hours) // 2
    picked = [hours[0], hours[1], hours[middle], hours[middle + 1], hours[-2]]
    return {"plan": [{"at": f"{h}:00", "do": do} for h, do in zip(picked, DAY, strict=True)]}


def answers(messages: list[Message], request: CompletionRequest) -> dict[str, Any]:
    schema = request.plan.schema or {}
    wanted = next(iter(schema["properties"]))
    if wanted == "place":
        places = schema["properties"]["place"]["enum"]
        return {"place": places[len(messages[0].content) % len(places)]}
    if wanted == "ratings":
        return {"ratings": [3] * schema["properties"]["ratings"]["minItems"]}
    if wanted == "decision":  # nothing worth reacting to: the cost of asking is counted
        return {"decision": "continue", "reaction": "", "minutes": 5}
    if wanted == "questions":  # a reflection
        return {
            "questions": ["What is my day like?"] * schema["properties"]["questions"]["minItems"]
        }
    if wanted == "insights":
        return {"insights": [{"insight": "My days are busy", "because_of": [1]}]}
    if wanted == "actions":  # each with a place, where the schema asks for one
        item = schema["properties"]["actions"]["items"]["properties"]
        places = item.get("place", {}).get("enum", [])
        actions = [
            {"action": words, "minutes": 10}
            | ({"place": places[(len(messages[0].content) + n) % len(places)]} if places else {})
            for n, words in enumerate(["getting ready", "walking over", "doing it"])
        ]
        top = schema["properties"].get("place", {}).get("enum", [])  # a reaction's place
        return {"actions": actions, **({"place": top[0]} if top else {})}
    if wanted == "plan":
        return day_plan(schema)
    raise AssertionError(f"unexpected request for {wanted}")


def crowd(n: int) -> tuple[World, list[Persona]]:
    """A town of `n` personas, four to a house (7 x 6 tiles, walled, one room with a bed and
    a desk, a door on its south side), the houses on a grid of streets, and a cafe."""
    houses = math.ceil(n / 4)
    columns = math.ceil(math.sqrt(houses + 1))
    rows = math.ceil((houses + 1) / columns)
    sectors: list[dict[str, Any]] = []
    for k in range(houses + 1):
        x, y = 1 + (k % columns) * 8, 1 + (k // columns) * 7
        name = "Crowd Cafe" if k == houses else f"House {k}"
        room = {
            "name": "room",
            "area": [x + 1, y + 1, 5, 4],
            "objects": [
                {"name": "bed", "at": [x + 1, y + 1]},
                {"name": "desk", "at": [x + 5, y + 1]},
            ],
        }
        sectors.append({"name": name, "area": [x, y, 7, 6], "doors": [[x + 3, y + 5]],
                        "arenas": [room]})  # fmt: skip
    spec = WorldSpec.model_validate(
        {"name": f"Crowd of {n}", "size": [columns * 8 + 1, rows * 7 + 1], "sectors": sectors}
    )
    world = World(spec)
    people = [
        PersonaSpec(
            name=f"Person {i}", age=30, innate="curious", learned=f"Person {i} lives in town",
            currently="working", lifestyle="sleeps at 10pm, wakes at 7am",
            home=f"House {i // 4}: room", knows=["Crowd Cafe"],
            memories=f"Person {i} lives in House {i // 4}; Person {i} likes the cafe",
        )
        for i in range(n)
    ]  # fmt: skip
    return world, place(world, people, [f"person {i}" for i in range(n)])


async def measure(town_name: str, steps: int, root: Path) -> dict[str, Any]:
    if town_name.startswith("crowd:"):
        world, people = crowd(int(town_name.split(":", 1)[1]))
    else:
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
    name = "sim_engine" if options.town == "the_ville" else f"sim_engine_{options.town}"
    write_result(
        name.replace(":", ""),
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
