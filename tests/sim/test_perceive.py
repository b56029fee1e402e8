"""Perception and the personas' memories: the nearest events in a persona's own arena, less
those among its latest memories; stored with game time as the clock, each event rated once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.importance import ImportanceRater
from autonoma.memory.records import NewRecord
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_world
from autonoma.sim.memory import TownMemory, game_seconds
from autonoma.sim.perceive import Event, perceive, town_events
from autonoma.sim.persona import Persona, shipped_personas

WORLD = shipped_world("small_town")
MORNING = datetime(2023, 2, 13, 7, 0)


def people() -> dict[str, Persona]:
    return {p.name: p for p in shipped_personas("small_town", WORLD)}


def test_a_persona_perceives_the_nearest_events_of_its_own_arena() -> None:
    town = people()
    mei, john = town["Mei Lin"], town["John Lin"]
    mei.tile, john.tile = (3, 3), (4, 4)  # the Lins' kitchen: stove (2,2), sink (3,2), fridge (5,2)
    john.action = "making breakfast"
    world = shipped_world("small_town")
    world.set_state("Lin family house: kitchen: stove", "heating a pan")
    seen = perceive(world, mei, town_events(world, list(town.values())))
    assert [e.description for e in seen] == [
        "kitchen sink is idle",  # 1 tile away
        "John Lin is making breakfast",  # 1.4
        "stove is heating a pan",  # 1.4, after John by its words
    ]
    assert seen[1] == Event("John Lin", "is", "making breakfast", seen[1].description, (4, 4))
    # the bedroom's desk at (6, 2) is as near as the fridge, but behind a wall
    wide = perceive(world, mei, town_events(world, list(town.values())), bandwidth=10)
    assert "refrigerator is idle" in [e.description for e in wide]
    assert not {"desk is idle", "bed is idle"} & {e.description for e in wide}
    assert "Mei Lin is idle" not in [e.description for e in wide]  # not her own action


def test_events_among_the_latest_memories_are_not_perceived_again() -> None:
    town = people()
    mei = town["Mei Lin"]
    mei.tile = (3, 3)
    events = town_events(WORLD, [mei])
    latest = ["kitchen sink is idle"]
    seen = perceive(WORLD, mei, events, latest=latest)
    # the nearest three are taken first, then those already known left out (the paper's)
    assert [e.description for e in seen] == ["stove is idle", "refrigerator is idle"]
    far = perceive(WORLD, mei, events, vision=0)
    assert far == []


class CountingRater(ImportanceRater):
    """Rates by the length of a text, counting what it was asked to rate."""

    name = "counting"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def rate(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        self.asked += [r.text for r in records]
        return [min(10, len(r.text) // 5) for r in records]


async def test_observations_are_rated_once_and_remembered_in_game_time(tmp_path: Path) -> None:
    town = people()
    mei = town["Mei Lin"]
    rater = CountingRater()
    stream = MemoryStream(tmp_path / "memory.db", LexicalEmbedder())
    memory = TownMemory(stream, {mei.name: rater})
    spent = BudgetSpent()
    await memory.seed(mei, MORNING, spent)
    await memory.seed(mei, MORNING, spent)  # once only
    seeds = mei.spec.seed_memories()
    assert stream.count(mei.name) == len(seeds) and rater.asked == seeds
    rater.asked.clear()
    fire = Event("Lin family house: kitchen: stove", "is", "on fire", "stove is on fire", (2, 2))
    idle = Event("Lin family house: kitchen: sink", "is", "idle", "kitchen sink is idle", (3, 2))
    first = await memory.observe(mei, [fire, idle], MORNING + timedelta(hours=1), spent)
    again = await memory.observe(mei, [fire], MORNING + timedelta(hours=3), spent)
    assert rater.asked == ["stove is on fire"]  # the idle sink and the fire seen again: no call
    assert [r.importance for r in first] == [3, 1] and again[0].importance == 3
    assert first[0].created_at == game_seconds(MORNING + timedelta(hours=1))
    assert memory.latest(mei, 2) == ["kitchen sink is idle", "stove is on fire"]
    later = MORNING + timedelta(days=1)
    found = await memory.retrieve(mei, "the stove is burning", later, k=3)
    assert found[0].record.text == "stove is on fire"
    assert stream.get(found[0].record.id).accessed_at == game_seconds(later)
    stream.close()
