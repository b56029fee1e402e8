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
    Event,
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
        "events": [invited(attendance(store, sim, e), spreads) for e in scenario.events],
    }


def invited(came: dict[str, Any], spreads: list[Spread]) -> dict[str, Any]:
    """Beside who came to an event, who knew of it (the fact of the same name) and which of
    them came: the paper's "5 of the 12 invited came"."""
    fact = next((s for s in spreads if s.fact == came["event"]), None)
    if fact is None:
        return came
    knew = fact.knows_now
    return came | {"knew": knew, "knew_and_came": [n for n in knew if n in came["came"]]}


def attendance(store: SimStore, sim: Sim, event: Event) -> dict[str, Any]:
    """Who stood at the event's place at some minute of its hours (the stored steps read a
    game minute apart)."""
    clock = sim.clock
    first, last = clock.step_of(clock.parse(event.starts)), clock.step_of(clock.parse(event.ends))
    address = sim.world.resolve(event.place)
    said: dict[str, Any] = {
        "event": event.name, "place": address, "starts": event.starts, "ends": event.ends
    }  # fmt: skip
    if sim.record.step < first:
        return said | {"reached": False, "came": []}
    tiles = set(sim.world.tiles_of(address))
    came: set[str] = set()
    every = max(1, 60 // clock.step_seconds)
    for step in range(first, min(last, sim.record.step) + 1, every):
        came |= {name for name, tile in store.tiles_at(sim.record, step).items() if tile in tiles}
    return said | {"reached": sim.record.step >= last, "came": sorted(came)}
