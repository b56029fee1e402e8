"""What a persona perceives in a step, as the paper's perceive does: the events on the tiles
within its vision that lie in its own arena (a wall between two rooms hides what happens
next door), the nearest few, less those already among its latest memories. An event is what
a persona is doing or the state of an object, in words: "Isabella Rodriguez is brewing
coffee", "stove is burning"."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from autonoma.sim.persona import Persona
from autonoma.sim.world import SEPARATOR, Tile, World

VISION = 8  # tiles, a square around the persona (the paper's vision_r)
BANDWIDTH = 3  # events perceived a step, the nearest (the paper's att_bandwidth)
RETENTION = 5  # latest memories an event must not already be among (the paper's retention)


@dataclass(frozen=True)
class Event:
    """Something happening on a tile: (subject, predicate, object) and its description."""

    subject: str  # a persona's name or an object's address
    predicate: str
    object: str
    description: str
    tile: Tile


def town_events(world: World, personas: Sequence[Persona]) -> list[Event]:
    """Every event in the town now: each persona's action where it stands, each object's
    state where the object is."""
    events = [Event(p.name, "is", p.action, f"{p.name} is {p.action}", p.tile) for p in personas]
    for address, state in world.states.items():
        tile = world.object_tile(address)
        if tile is not None:
            name = address.rsplit(SEPARATOR, 1)[-1]
            events.append(Event(address, "is", state, f"{name} is {state}", tile))
    return events


def by_arena(world: World, events: Sequence[Event]) -> dict[tuple[str, str], list[Event]]:
    """The events of each (sector, arena), for perceiving a persona's own arena's only."""
    grouped: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        place = world.place_at(event.tile)
        grouped.setdefault((place.sector, place.arena), []).append(event)
    return grouped


def perceive(
    world: World,
    persona: Persona,
    events: Sequence[Event],
    *,
    latest: Collection[str] = (),
    vision: int = VISION,
    bandwidth: int = BANDWIDTH,
) -> list[Event]:
    """The events `persona` perceives now, nearest first: within `vision` tiles, in its own
    arena (or the same stretch of street), not its own action, at most `bandwidth` of them,
    and none whose description is among `latest` (its latest memories' texts)."""
    here = world.place_at(persona.tile)
    x0, y0 = persona.tile
    seen = []
    for event in events:
        x, y = event.tile
        if event.subject == persona.name or max(abs(x - x0), abs(y - y0)) > vision:
            continue
        there = world.place_at(event.tile)
        if (there.sector, there.arena) != (here.sector, here.arena):
            continue
        seen.append((math.dist(event.tile, persona.tile), event.description, event))
    seen.sort(key=lambda found: found[:2])
    return [event for _, description, event in seen[:bandwidth] if description not in latest]
