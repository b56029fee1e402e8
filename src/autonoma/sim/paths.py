"""Moving on the town's grid: shortest paths on the walkable tile graph (networkx), one tile a
step, never onto a tile another persona stands on."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import networkx as nx

from autonoma.sim.world import Tile, World


def path_between(
    world: World, start: Tile, goals: Iterable[Tile], occupied: Collection[Tile] = ()
) -> list[Tile] | None:
    """The shortest walk from `start` to the nearest of `goals` (both ends included), around
    the `occupied` tiles; None if no goal can be reached now. A goal tile someone stands on
    is left out: the persona heads for a free tile of the place (or waits)."""
    blocked = set(occupied) - {start}
    free = {g for g in goals if world.walkable(g) and g not in blocked}
    if start in free:
        return [start]
    if not free or not world.walkable(start):
        return None

    def cost(u: Tile, v: Tile, _data: dict[str, Any]) -> int | None:
        return None if u in blocked or v in blocked else 1  # None: no way through

    # Dijkstra from every goal at once, to the start: the nearest goal's path, reversed
    # (an undirected grid), with no copy of the graph per search
    try:
        _, found = nx.multi_source_dijkstra(world.graph, free, target=start, weight=cost)
    except nx.NetworkXNoPath:
        return None
    return list(reversed(found))


def next_step(
    world: World, start: Tile, goals: Iterable[Tile], occupied: Collection[Tile] = ()
) -> Tile:
    """The tile to stand on after one step towards the nearest goal: the next tile of the
    path, or `start` (waiting) when there is none now."""
    path = path_between(world, start, goals, occupied)
    return path[1] if path and len(path) > 1 else start
