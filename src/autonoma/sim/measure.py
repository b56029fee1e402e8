"""The paper's town-level figures, from a stored sim and its scenario: how far each seeded
fact spread (every persona interviewed with the fact's question twice, once drawing only on
what it knew at the start and once on everything, and counted as knowing it when its answer
holds the fact's words and does not deny), the density of the web of acquaintance at the
start and now (from each persona's memories), and who was at each seeded event's place
during its hours."""

from __future__ import annotations

from typing import Any

from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.evaluate import denies
from autonoma.sim.interview import Recall, interview
from autonoma.sim.memory import TownMemory, game_seconds, stored_memories
from autonoma.sim.scenario import (
    ScenarioSpec,
    Spread,
    acquaintances,
    density,
    spread_json,
)
from autonoma.sim.store import Sim, SimStore

MEMORIES = 5000  # of each persona's, read for whom it knows


def knows_fact(answer: str, words: list[str]) -> bool:
    said = answer.lower()
    return all(w.lower() in said for w in words) and not denies(answer)


async def measure(
    model: Model,
    memory: TownMemory,
    store: SimStore,
    sim: Sim,
    scenario: ScenarioSpec,
    spent: BudgetSpent,
) -> dict[str, Any]:
    """Spread, density and attendance at the sim's step, as JSON."""
    start, now = sim.clock.at(0), sim.clock.at(sim.step)
    spreads = []
    for fact in scenario.facts:
        at_start: list[str] = []
        knows_now: list[str] = []
        for persona in sim.personas:
            for recall, knowing in ((Recall(until=start), at_start), (Recall(), knows_now)):
                answer = await interview(
                    model, memory, sim.world, persona, fact.question, now, spent, recall=recall
                )
                if knows_fact(answer, fact.knows):
                    knowing.append(persona.name)
        spreads.append(Spread(fact.name, at_start, knows_now, len(sim.personas)))
    path = store.memory_path(sim.record)
    then: dict[str, set[str]] = {}
    today: dict[str, set[str]] = {}
    for persona in sim.personas:
        records = stored_memories(path, persona.name, MEMORIES)
        first = [r.text for r in records if r.created_at <= game_seconds(start)]
        texts = [r.text for r in records] or persona.spec.seed_memories()
        then[persona.name] = acquaintances(
            first or persona.spec.seed_memories(), sim.personas, persona
        )
        today[persona.name] = acquaintances(texts, sim.personas, persona)
    total = len(sim.personas)
    return {
        "step": sim.step,
        "time": sim.clock.describe(sim.step),
        "facts": [spread_json(s, total) for s in spreads],
        "density": {"start": round(density(then), 3), "now": round(density(today), 3)},
        "events": [
            attendance(store, sim, e.name, e.place, e.starts, e.ends) for e in scenario.events
        ],
    }


def attendance(
    store: SimStore, sim: Sim, name: str, place: str, starts: str, ends: str
) -> dict[str, Any]:
    """Who stood at `place` at some minute between `starts` and `ends` (the stored steps
    read a game minute apart)."""
    clock = sim.clock
    first, last = clock.step_of(clock.parse(starts)), clock.step_of(clock.parse(ends))
    address = sim.world.resolve(place)
    said: dict[str, Any] = {"event": name, "place": address, "starts": starts, "ends": ends}
    if sim.record.step < first:
        return said | {"reached": False, "came": []}
    tiles = set(sim.world.tiles_of(address))
    came: set[str] = set()
    every = max(1, 60 // clock.step_seconds)
    for step in range(first, min(last, sim.record.step) + 1, every):
        then = store.load(sim.record.id, step)
        came |= {p.name for p in then.personas if p.tile in tiles}
    return said | {"reached": sim.record.step >= last, "came": sorted(came)}
