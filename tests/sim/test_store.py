"""Stored sims: made at step 0, read back at any stored step with the town's state then,
and the game clock."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from autonoma.errors import ConfigError
from autonoma.sim import shipped_personas, shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.store import SimNotFound, SimStore


def test_a_sim_is_stored_and_read_back_at_each_step(tmp_path: Path) -> None:
    store = SimStore(tmp_path / "sims.db")
    world = shipped_world("small_town")
    sim = store.create("willow", world, shipped_personas("small_town", world), GameClock())
    mei = sim.persona("mei lin")
    start = mei.tile
    sim.step, mei.tile = 1, (15, 9)  # outside the Rodriguez house
    mei.spatial.see(sim.world, mei.tile, radius=4)
    sim.world.set_state("Hobbs Cafe: kitchen: oven", "burning")
    store.save(sim, "object_set", {"object": "Hobbs Cafe: kitchen: oven", "state": "burning"})
    store.close()

    again = SimStore(tmp_path / "sims.db")
    now = again.load("willow")
    assert now.step == 1 and now.persona("Mei Lin").tile == (15, 9)
    assert now.world.states["Hobbs Cafe: kitchen: oven"] == "burning"
    assert now.persona("Mei Lin").spatial.knows("Rodriguez house: living room")  # seen
    before = again.load(now.record.id, step=0)  # by id, at a past step
    assert before.persona("Mei Lin").tile == start
    assert before.world.states["Hobbs Cafe: kitchen: oven"] == "idle"
    assert not before.persona("Mei Lin").spatial.knows("Rodriguez house: living room")
    assert again.events(now.record.id) == [
        (1, "object_set", {"object": "Hobbs Cafe: kitchen: oven", "state": "burning"})
    ]
    assert [r.name for r in again.records()] == ["willow"]


def test_unknown_sims_steps_personas_and_taken_names_are_one_line(tmp_path: Path) -> None:
    store = SimStore(tmp_path / "sims.db")
    world = shipped_world("small_town")
    store.create("willow", world, shipped_personas("small_town", world), GameClock())
    with pytest.raises(SimNotFound, match=r"no sim 'oak' \(sims: willow\)"):
        store.load("oak")
    with pytest.raises(SimNotFound, match="has steps 0 to 0, not 3"):
        store.load("willow", step=3)
    with pytest.raises(SimNotFound, match="no persona 'Klaus' in willow: there are"):
        store.load("willow").persona("Klaus")
    with pytest.raises(Exception, match="there is a sim named 'willow' already"):
        store.create("willow", world, [], GameClock())


def test_the_clock_counts_game_seconds_and_reads_game_times() -> None:
    clock = GameClock(datetime(2023, 2, 13, 7, 0), 10)
    assert clock.at(360) == datetime(2023, 2, 13, 8, 0)
    assert clock.describe(8640) == "day 2, Tuesday February 14, 07:00"
    assert clock.parse("day 2 08:00") == datetime(2023, 2, 14, 8, 0)
    assert clock.step_of(clock.parse("Day 2  08:00")) == 8640 + 360
    assert clock.parse("2023-02-14 09:30") == datetime(2023, 2, 14, 9, 30)
    assert clock.step_of(datetime(2023, 2, 13, 7, 0, 5)) == 1  # the first step at or after
    for bad in ("day 0", "day 2 25:00", "tomorrow"):
        with pytest.raises(ConfigError, match="is not a game time"):
            clock.parse(bad)
    with pytest.raises(ConfigError, match="a step is 1 to 3600 game seconds"):
        GameClock(step_seconds=0)
