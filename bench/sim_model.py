"""The town on a real model: model calls and tokens per persona-step, by kind of call, and
wall time, against the reference implementation's 0.15 requests and 72 tokens a persona-step
(13,705 requests and 6.6M tokens over 25 personas x 3,665 steps, its issue #156). A sim of a
shipped town runs from `--start` for `--steps` steps as `autonoma sim run` runs it (every
persona's calls of a step at once, memories in a real stream), each call recorded with the
tokens the server counted (bench/results/sim_model_<label>.json, docs/benchmarks.md).

    python bench/sim_model.py --label NAME [--town small_town] [--steps 360]
        [--start "2023-02-13 07:00"] [--model local:qwen2.5-coder-1.5b] [--keep DIR]

With `--keep DIR` the sim, its memories and every call so far are kept in DIR, so a measure
longer than one sitting (a game day is 8,640 steps) is stopped with Ctrl-C or a TERM signal
and taken up again by the same command: `--steps` counts from the sim's first step, and the
result covers every sitting.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.common

from autonoma.llm import Model, open_model
from autonoma.llm.types import ModelResponse
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.sim import shipped_personas, shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.runner import run_sim
from autonoma.sim.store import SimStore
from bench.common import machine, write_result

ANSWERS_KEPT = ("ratings", "decision")
REFERENCE = {"requests_per_persona_step": 0.15, "tokens_per_persona_step": 72}


def counted(
    model: Model,
    calls: list[dict[str, Any]],
    log: Path | None = None,
    step: Callable[[], int] = lambda: 0,
) -> Model:
    """`model` with each request recorded: its kind (the schema's first key), its tokens, the
    sim's step, and the answer of the small kinds (ratings, decisions: what tells whether a
    call could have been spared); each also appended to `log` as it ends, so a stopped
    measure loses none."""
    request = model.request

    async def recording(messages: Any, **options: Any) -> ModelResponse:
        schema = getattr(options.get("output"), "get", lambda *_: None)("properties") or {}
        kind = next(iter(schema), "text")
        started = time.perf_counter()
        try:
            response = await request(messages, **options)
        except Exception as error:
            record({"kind": kind, "failed": type(error).__name__})
            raise
        record({
            "kind": kind,
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "seconds": round(time.perf_counter() - started, 2),
            "step": step(),
            **kept(kind, messages, response),
        })  # fmt: skip
        return response

    def record(call: dict[str, Any]) -> None:
        calls.append(call)
        if log is not None:
            with log.open("a") as out:
                out.write(json.dumps(call) + "\n")

    model.request = recording  # type: ignore[method-assign]
    return model


def kept(kind: str, messages: Any, response: ModelResponse) -> dict[str, Any]:
    """For a rating or a decision, its answer and what it was about (its prompt's memory or
    observation lines): whether such a call could have been spared is read from them."""
    if kind not in ANSWERS_KEPT:
        return {}
    text = "\n".join(str(m["content"] if isinstance(m, dict) else m.content) for m in messages)
    about = [line for line in text.splitlines() if line.startswith(("Observation:", "Memory "))]
    return {"answer": response.data, "about": about}


def earlier(log: Path) -> tuple[list[dict[str, Any]], float]:
    """The calls and the wall seconds of a kept measure's earlier sittings."""
    calls: list[dict[str, Any]] = []
    wall = 0.0
    if log.exists():
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            if "sitting" in entry:
                wall += entry["sitting"]["wall_seconds"]
            else:
                calls.append(entry)
    return calls, wall


async def run(town: str, steps: int, start: dt.datetime, spec: str, root: Path) -> dict[str, Any]:
    """The sim from where `root` left it (from `start` if it holds none) to step `steps`."""
    store = SimStore(root / "sims.db")
    if any(record.name == "bench" for record in store.records()):
        sim = store.load("bench")
        people = sim.personas
    else:
        world = shipped_world(town)
        people = shipped_personas(town, world)
        sim = store.create("bench", world, people, GameClock(start))
    log = root / "calls.jsonl"
    calls, wall_before = earlier(log)
    model = counted(open_model(spec), calls, log, lambda: sim.step)
    first = sim.step
    wall = time.perf_counter()
    try:
        await run_sim(store, sim, model, LexicalEmbedder(), steps)
    finally:
        await model.aclose()
        sitting = {
            "from_step": first,
            "to_step": sim.step,
            "wall_seconds": time.perf_counter() - wall,
        }
        with log.open("a") as out:
            out.write(json.dumps({"sitting": sitting}) + "\n")
    wall = wall_before + sitting["wall_seconds"]
    events = Counter(kind for _, kind, _ in store.events(sim.record.id))
    store.close()
    persona_steps = sim.step * len(people)
    tokens = sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)
    by_kind: dict[str, dict[str, Any]] = {}
    for call in calls:
        kind = by_kind.setdefault(call["kind"], {"calls": 0, "tokens": 0, "seconds": 0.0})
        kind["calls"] += 1
        kind["tokens"] += call.get("prompt_tokens", 0) + call.get("completion_tokens", 0)
        kind["seconds"] = round(kind["seconds"] + call.get("seconds", 0.0), 1)
    return {
        "town": town,
        "personas": len(people),
        "steps": sim.step,
        "game_time": f"{sim.clock.describe(0)} to {sim.clock.describe(sim.step)}",
        "wall_seconds": round(wall, 1),
        "model_calls": len(calls),
        "failed_calls": sum("failed" in c for c in calls),
        "tokens": tokens,
        "requests_per_persona_step": round(len(calls) / persona_steps, 4),
        "tokens_per_persona_step": round(tokens / persona_steps, 2),
        "share_of_reference_tokens": round(tokens / persona_steps / 72, 3),
        "by_kind": by_kind,
        "happened": {k: v for k, v in events.items() if k in ("reaction", "talk", "reflection")},
        "game_day_hours_at_this_rate": round(wall / sim.step * 8640 / 3600, 1),
        "calls": calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--town", default="small_town")
    parser.add_argument("--steps", type=int, default=360)
    parser.add_argument("--start", default="2023-02-13 07:00")
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--keep", type=Path, help="keep the sim here, to take it up again")
    options = parser.parse_args()
    start = dt.datetime.fromisoformat(options.start)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped as by Ctrl-C: kept
    if options.keep is not None:
        options.keep.mkdir(parents=True, exist_ok=True)
        result = asyncio.run(run(options.town, options.steps, start, options.model, options.keep))
    else:
        with tempfile.TemporaryDirectory() as root:
            args = (options.town, options.steps, start, options.model, Path(root))
            result = asyncio.run(run(*args))
    shown = {k: v for k, v in result.items() if k != "calls"}
    print(shown)
    write_result(f"sim_model_{options.label}", {
        "benchmark": "sim_model", "label": options.label, "model": options.model,
        "machine": machine(), "reference": REFERENCE, **result,
    })  # fmt: skip


if __name__ == "__main__":
    main()
