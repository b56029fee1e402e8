"""The town's steps with a scripted model: a day planned once, a block broken down as it
begins, a place chosen as an action begins, one tile a step towards it, nothing asked whose
answer could not change (sleep, an action under way, an event already rated), and the day
stored with the sim so a loaded sim goes on with it."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from autonoma.llm import ScriptedModel
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import engine, shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.engine import Town
from autonoma.sim.memory import TownMemory, town_raters
from autonoma.sim.persona import shipped_personas
from autonoma.sim.schedule import Action
from autonoma.sim.store import SimStore

from .town_answers import townsfolk


def asked(model: ScriptedModel) -> Counter[str]:
    firsts = (next(iter((r.schema or {}).get("properties", {"?": 0}))) for r in model.requests)
    return Counter(firsts)


def open_town(tmp_path: Path, start: datetime) -> tuple[Town, ScriptedModel, SimStore]:
    world = shipped_world("small_town")
    people = shipped_personas("small_town", world)
    store = SimStore(tmp_path / "sims.db")
    sim = store.create("willow", world, people, GameClock(start))
    model = ScriptedModel(townsfolk)
    memory = TownMemory(
        MemoryStream(tmp_path / "memory.db", LexicalEmbedder()), town_raters(model, people)
    )
    return Town(sim, model, memory, BudgetSpent()), model, store


async def test_a_morning_is_planned_once_and_each_persona_walks_to_its_place(
    tmp_path: Path,
) -> None:
    town, model, store = open_town(tmp_path, datetime(2023, 2, 13, 7, 0))
    await town.begin()
    seeds = asked(model)["ratings"]
    assert seeds == 3  # each persona's seed memories rated in one request
    await town.step()
    calls = asked(model)
    # each persona: its day with its times, the breakfast block's actions with their places
    assert (calls["plan"], calls["actions"], calls["place"]) == (3, 3, 0)
    for persona in town.sim.personas:
        schedule = persona.schedule
        activities = [a for a, _ in groupby(b.activity for b in schedule.blocks)]
        assert schedule.day == "2023-02-13" and activities == [
            "sleeping", "waking up and getting ready for the day", "wake up", "have breakfast",
            "read a book", "have dinner", "read by the fire", "sleeping",
        ]  # fmt: skip
        assert persona.action == "making toast"
        assert schedule.action is not None and schedule.action.place.endswith(": kitchen")
        assert persona.schedule.action.place.split(": ")[0] == persona.home.split(": ")[0]
    before = asked(model)
    for _ in range(30):  # five game minutes: still making toast
        await town.step()
    after = asked(model)
    # nothing re-planned: only what was newly seen is rated and decided about
    assert set(after - before) <= {"ratings", "decision"}
    assert after["plan"] == 3 and after["place"] == 0
    for persona in town.sim.personas:  # every kitchen is within 30 tiles of its home's bed
        assert persona.tile in town.sim.world.tiles_of(persona.schedule.action.place)  # type: ignore[union-attr]
    tiles = [p.tile for p in town.sim.personas]
    assert len(set(tiles)) == len(tiles)
    store.save(town.sim, "step")
    again = store.load("willow")
    assert [p.schedule for p in again.personas] == [p.schedule for p in town.sim.personas]
    assert [p.action for p in again.personas] == ["making toast"] * 3


async def test_a_sleeping_town_asks_nothing_but_its_plans(tmp_path: Path) -> None:
    town, model, _ = open_town(tmp_path, datetime(2023, 2, 13, 2, 0))
    await town.step()
    for _ in range(20):
        await town.step()
    calls = asked(model)
    assert calls == Counter({"plan": 3, "ratings": 3})  # the plans' own memories
    assert all(p.action == "sleeping" for p in town.sim.personas)
    homes = [p.schedule.action.place for p in town.sim.personas]  # type: ignore[union-attr]
    assert homes == [p.home for p in town.sim.personas]


async def test_each_event_a_persona_remembers_was_rated_once(tmp_path: Path) -> None:
    town, model, _ = open_town(tmp_path, datetime(2023, 2, 13, 7, 0))
    for _ in range(60):
        await town.step()
    rated = sum(
        (r.schema or {})["properties"]["ratings"]["minItems"]
        for r in model.requests
        if "ratings" in (r.schema or {}).get("properties", {})
    )
    seen = 0
    for persona in town.sim.personas:
        texts = [r.text for r in town.memory.stream.latest(persona.name, 500)]
        seen += len({t for t in texts if not t.endswith(" is idle")})
    mei = [r.text for r in town.memory.stream.latest("Mei Lin", 500)]
    assert "John Lin is making toast" in mei
    assert rated == seen  # each one rated once (idle ones never), the plans' thoughts too


def test_a_walk_is_searched_once_and_again_only_when_its_way_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    town, _, _ = open_town(tmp_path, datetime(2023, 2, 13, 9, 0))
    searches = []
    real = engine.path_between

    def counted(*args: Any) -> Any:
        searches.append(args[1])
        return real(*args)

    monkeypatch.setattr(engine, "path_between", counted)
    mei, john = (town.sim.persona(name) for name in ("Mei Lin", "John Lin"))
    mei.schedule.action = Action(540, 60, "having coffee", "Hobbs Cafe: cafe")
    for _ in range(200):
        town.walk(mei)
    assert mei.tile in town.sim.world.tiles_of("Hobbs Cafe: cafe")
    assert len(searches) == 1  # one search for the whole walk, none once there
    door = (5, 8)  # the Lins' only door
    john.tile = door
    mei.schedule.action = Action(600, 60, "going home", "Lin family house: kitchen")
    for _ in range(200):
        town.walk(mei)
    assert mei.tile not in town.sim.world.tiles_of("Lin family house: kitchen")  # John's in the way
    waited = len(searches)
    john.tile = (8, 10)  # out of the doorway, down the street
    for _ in range(200):
        town.walk(mei)
    assert mei.tile in town.sim.world.tiles_of("Lin family house: kitchen")
    assert len(searches) == waited + 1
