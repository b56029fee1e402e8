"""Scenarios: the shipped Valentine's Day scenario fits the Ville, and the density of the
web of acquaintance counts a pair only when each knows the other."""

from __future__ import annotations

from datetime import datetime

import pytest

from autonoma.sim import shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.persona import shipped_personas
from autonoma.sim.scenario import acquaintances, check_scenario, density, load_scenario


def test_the_valentine_scenario_seeds_the_ville_as_the_paper_did() -> None:
    scenario = load_scenario("valentine")
    world = shipped_world("the_ville")
    people = shipped_personas("the_ville", world)
    check_scenario(scenario, world, people, GameClock(datetime(2023, 2, 13, 7, 0)))
    assert [w.persona for w in scenario.whispers] == ["Isabella Rodriguez", "Sam Moore"]
    assert [f.name for f in scenario.facts] == ["party", "candidacy"]
    [party] = scenario.events
    assert (party.place, party.starts, party.ends) == ("Hobbs Cafe", "day 2 17:00", "day 2 19:00")


def test_density_counts_pairs_who_each_know_the_other() -> None:
    knows = {"a": {"b", "c"}, "b": {"a"}, "c": set(), "d": {"a"}}
    assert density(knows) == pytest.approx(1 / 6)  # a-b only: c and d are not known back
    everyone = {n: {m for m in "abcd" if m != n} for n in "abcd"}
    assert density(everyone) == 1.0


def test_whom_a_persona_knows_is_whom_its_memories_name() -> None:
    world = shipped_world("small_town")
    people = shipped_personas("small_town", world)
    mei = next(p for p in people if p.name == "Mei Lin")
    assert acquaintances(mei.spec.seed_memories(), people, mei) == {
        "John Lin", "Isabella Rodriguez"
    }  # fmt: skip
    assert acquaintances(["Mei Lin is reading"], people, mei) == set()
