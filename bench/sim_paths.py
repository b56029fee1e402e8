"""The town's engine costs that need no model: loading a shipped town and its people, and a
path on its grid (bench/results/sim_paths.json, docs/benchmarks.md).

A path is timed between random walkable tiles and to a random arena (its nearest free tile),
with 24 other personas standing on random tiles; `next_step` (one step of a persona walking)
is timed the same way. Median and p90 of `--pairs` timings, seeded.

    python bench/sim_paths.py [--pairs 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.common

from autonoma.sim import next_step, path_between, shipped_personas, shipped_world
from bench.common import machine, write_result

T = TypeVar("T")


def _timed(run: Callable[..., T], *args: Any) -> tuple[T, float]:
    """run(*args) and the milliseconds it took."""
    began = time.perf_counter()
    result = run(*args)
    return result, (time.perf_counter() - began) * 1000


def _summary(timings: list[float]) -> dict[str, float]:
    ordered = sorted(timings)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p90_ms": round(ordered[int(len(ordered) * 0.9)], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    towns = {}
    for town in ("small_town", "the_ville"):
        world, load_ms = _timed(shipped_world, town)
        _, people_ms = _timed(shipped_personas, town, world)
        free = sorted(world.graph.nodes)
        arenas = [f"{s}: {a}" for s, arenas in world.tree().items() for a in arenas]
        tiles, arena_paths, steps, lengths = [], [], [], []
        for _ in range(options.pairs):
            start, goal = rng.sample(free, 2)
            others = set(rng.sample(free, 24)) - {start, goal}
            target = world.tiles_of(rng.choice(arenas))
            path, ms = _timed(path_between, world, start, [goal], others)
            tiles.append(ms)
            arena_paths.append(_timed(path_between, world, start, target, others)[1])
            steps.append(_timed(next_step, world, start, target, others)[1])
            if path:
                lengths.append(len(path))
        towns[town] = {
            "size": [world.width, world.height],
            "load_world_ms": round(load_ms, 1),
            "load_personas_ms": round(people_ms, 1),
            "tile_to_tile": _summary(tiles),
            "to_an_arena": _summary(arena_paths),
            "next_step": _summary(steps),
            "median_path_tiles": statistics.median(lengths),
        }
        print(town, towns[town])
    write_result(
        "sim_paths",
        {
            "benchmark": "sim_paths",
            "command": f"python bench/sim_paths.py --pairs {options.pairs} --seed {options.seed}",
            "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
            "machine": machine(),
            "towns": towns,
        },
    )


if __name__ == "__main__":
    main()
