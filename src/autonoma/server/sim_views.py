"""What the town's viewer shows, as JSON: a sim's map (its sectors, arenas, objects, walls
and doors), its state at a step (who stands where doing what, who is saying what, each
object's state), and one persona's panel (who it is, its plan, what it remembers, its
reflections and whom it knows)."""

from __future__ import annotations

from typing import Any

from autonoma.sim.memory import stored_memories
from autonoma.sim.persona import Persona
from autonoma.sim.store import Sim, SimStore
from autonoma.sim.world import Area

MEMORIES = 12  # the newest shown in a persona's panel
REFLECTIONS = 8


def town_map(sim: Sim) -> dict[str, Any]:
    """The sim's world as drawn: tiles are (x, y) from the top left, areas [x, y, w, h]."""
    spec = sim.world.spec
    return {
        "sim": sim.record.name,
        "world": spec.name,
        "size": list(spec.size),
        "blocked": [_rect(area) for area in spec.blocked],
        "sectors": [
            {
                "name": sector.name,
                "area": _rect(sector.area),
                "walls": sector.walls,
                "doors": [list(door) for door in sector.doors],
                "arenas": [
                    {
                        "name": arena.name,
                        "area": _rect(arena.area),
                        "objects": [{"name": o.name, "at": list(o.at)} for o in arena.objects],
                    }
                    for arena in sector.arenas
                ],
            }
            for sector in spec.sectors
        ],
        "personas": [p.name for p in sim.personas],
        "steps": sim.record.step,
        "step_seconds": sim.clock.step_seconds,
    }


def _rect(area: Area) -> list[int]:
    return [area.x, area.y, area.width, area.height]


def frame(sim: Sim) -> dict[str, Any]:
    """The town at the sim's step: each persona's tile, action and conversation, each
    object's state, and the game time."""
    return {
        "step": sim.step,
        "latest": sim.record.step,
        "time": sim.clock.describe(sim.step),
        "personas": [
            {
                "name": p.name,
                "tile": list(p.tile),
                "action": p.action,
                "place": _place(p),
                "talking_with": p.talk.partner,
                "lines": [list(line) for line in p.talk.lines],
            }
            for p in sim.personas
        ],
        "objects": dict(sim.world.states),
    }


def _place(persona: Persona) -> str:
    action = persona.schedule.action
    return action.place if action is not None else ""


def panel(store: SimStore, sim: Sim, name: str) -> dict[str, Any]:
    """One persona as the viewer's side panel shows it."""
    persona = sim.persona(name)
    path = store.memory_path(sim.record)
    memories = stored_memories(path, persona.name, MEMORIES)
    reflections = stored_memories(path, persona.name, REFLECTIONS, kinds=["reflection"])
    spec = persona.spec
    schedule = persona.schedule
    return {
        "name": persona.name,
        "age": spec.age,
        "innate": spec.innate,
        "currently": spec.currently,
        "home": persona.home,
        "action": persona.action,
        "place": _place(persona),
        "plan": list(schedule.plan),
        "blocks": [
            {"start": b.start, "minutes": b.minutes, "activity": b.activity}
            for b in schedule.blocks
        ],
        "memories": [
            {"kind": r.kind, "text": r.text, "importance": r.importance} for r in memories
        ],
        "reflections": [{"text": r.text, "evidence": len(r.evidence)} for r in reflections],
        "relationships": relationships(store, sim, persona),
    }


def relationships(store: SimStore, sim: Sim, persona: Persona) -> list[dict[str, Any]]:
    """The other personas this one knows: those its memories name (seed memories, what it
    saw, conversations), with how many memories name them and when they last talked."""
    texts = [r.text for r in stored_memories(store.memory_path(sim.record), persona.name, 2000)]
    if not texts:  # before the sim first ran: the persona file's seed memories
        texts = persona.spec.seed_memories()
    known = []
    for other in sim.personas:
        if other is persona:
            continue
        named = sum(other.name in text for text in texts)
        if named:
            known.append(
                {"name": other.name, "memories": named, "talked": persona.talk.last.get(other.name)}
            )
    return sorted(known, key=lambda k: -k["memories"])
