"""A/B of the tool-schema cache: CPU per step of the planned strategy (a chain of one-step
tasks, one at a time, server at zero latency) with `autonoma.tools.base._model_schema`
cached (as shipped) and uncached, interleaved so both see the same machine.

    python bench/tool_schema_cache.py [--tasks 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import autonoma.tools.base as base  # noqa: E402
from bench.common import write_result  # noqa: E402
from bench.planning_makespan import FakeServer, layered, run_planned  # noqa: E402


def uncached(model: Any) -> str:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return json.dumps(schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cached = base._model_schema
    results: dict[str, list[float]] = {"cached_cpu_us": [], "uncached_cpu_us": []}
    with FakeServer(0.0, 0.0, None) as server:
        asyncio.run(run_planned(server.base_url, layered(10, 1), concurrency=1))  # warm up
        for _ in range(args.rounds):
            for name, schema in (("cached", cached), ("uncached", uncached)):
                base._model_schema = schema  # type: ignore[assignment]
                timing = asyncio.run(
                    run_planned(server.base_url, layered(args.tasks, 1), concurrency=1)
                )
                results[f"{name}_cpu_us"].append(timing.per_step_us()["cpu_us"])
                print(name, timing.per_step_us(), flush=True)
    base._model_schema = cached
    write_result("tool_schema_cache", {"tasks": args.tasks, **results})


if __name__ == "__main__":
    main()
