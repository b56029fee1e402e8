"""A persona's day planned top down (broad plan, hourly schedule, actions as a block begins)
and each action's place chosen only among the places the persona knows."""

from __future__ import annotations

from datetime import datetime

import pytest

from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_world
from autonoma.sim.persona import Persona, shipped_personas
from autonoma.sim.plan import (
    HOUR_LABELS,
    PlanFailed,
    choose_place,
    decompose,
    fill,
    known_places,
    merge_hours,
    place_lines,
    plan_day,
    schedule_hours,
)
from autonoma.sim.schedule import Action, Block

WORLD = shipped_world("small_town")
DAY = datetime(2023, 2, 13)


def isabella() -> Persona:
    return next(p for p in shipped_personas("small_town", WORLD) if p.name.startswith("Isabella"))


async def test_the_day_is_planned_in_broad_items_and_a_short_plan_is_asked_again() -> None:
    plan = ["wake up at 6:00 am", "open Hobbs Cafe at 8:00 am", "lunch at 12:00 pm",
            "plan the party at 2:00 pm", "close the cafe at 8:00 pm", "sleep at 11:00 pm"]  # fmt: skip
    model = ScriptedModel([{"plan": plan[:3]}, {"plan": plan}])  # too few items, then right
    spent = BudgetSpent()
    got = await plan_day(model, isabella(), DAY, "She baked croissants.", spent)
    assert got == plan and len(model.requests) == 2
    asked = model.requests[0].messages[0].content
    assert "Isabella Rodriguez" in asked and "Monday February 13" in asked
    assert "Yesterday: She baked croissants." in asked


async def test_the_hours_become_blocks_and_an_answer_never_usable_is_one_error() -> None:
    hours = ["sleeping"] * 6 + ["morning routine"] + ["working at the cafe"] * 5
    hours += ["Working at the cafe."] + ["reading in the park"] * 2 + ["sleeping"] * 9
    model = ScriptedModel([dict(zip(HOUR_LABELS, hours, strict=True))])
    blocks = await schedule_hours(model, isabella(), ["work"], DAY, BudgetSpent())
    labels = model.requests[0].schema["properties"]  # type: ignore[index]
    assert list(labels) == list(HOUR_LABELS)  # each hour's label written before its activity
    assert blocks == [
        Block(0, 360, "sleeping"),
        Block(360, 60, "morning routine"),
        Block(420, 360, "working at the cafe"),
        Block(780, 120, "reading in the park"),
        Block(900, 540, "sleeping"),
    ]
    short = dict.fromkeys(HOUR_LABELS[:23], "sleeping")  # 23:00 left out, every time
    broken = ScriptedModel(lambda messages, request: short)
    with pytest.raises(PlanFailed, match="Isabella Rodriguez's plan: the model's answer"):
        await schedule_hours(broken, isabella(), ["work"], DAY, BudgetSpent())


def test_merged_hours_and_filled_blocks_add_up() -> None:
    assert merge_hours(["a", "A", "b"]) == [Block(0, 120, "a"), Block(120, 60, "b")]
    block = Block(420, 60, "opening the cafe")
    actions = fill(block, [("unlock", 5, "C: door"), ("coffee", 15, "C: bar"), ("cake", 10, "")])
    assert [a.minutes for a in actions] == [10, 30, 20]
    assert [a.place for a in actions] == ["C: door", "C: bar", ""]
    assert actions[0].start == 420 and sum(a.minutes for a in actions) == 60
    odd = fill(Block(0, 50, "x"), [("a", 7, ""), ("b", 7, ""), ("c", 7, "")])
    assert [a.minutes for a in odd] == [17, 17, 16]


async def test_a_block_is_broken_into_actions_at_known_places_and_sleep_costs_no_call() -> None:
    unknown = "Lin family house: kitchen: stove"  # she has never been inside the Lins' house
    breakdown = [
        {"action": "unlocking the door", "minutes": 5, "place": "Hobbs Cafe: cafe"},
        {"action": "brewing coffee", "minutes": 10, "place": "Hobbs Cafe: cafe: coffee machine"},
    ]
    model = ScriptedModel(
        [{"actions": [{**breakdown[0], "place": unknown}]}, {"actions": breakdown}]
    )
    spent = BudgetSpent()
    block = Block(480, 30, "opening the cafe")
    actions = await decompose(model, WORLD, isabella(), block, DAY, spent)
    assert actions == [
        Action(480, 10, "unlocking the door", "Hobbs Cafe: cafe"),
        Action(490, 20, "brewing coffee", "Hobbs Cafe: cafe: coffee machine"),
    ]
    assert len(model.requests) == 2  # the place she does not know was refused and re-asked
    asked = model.requests[0].messages[0].content
    assert "From 08:00 to 08:30 (30 minutes)" in asked
    assert "- Hobbs Cafe: cafe (counter, coffee machine, window table, corner table)" in asked
    item = model.requests[0].schema["properties"]["actions"]["items"]  # type: ignore[index]
    assert item["properties"]["place"]["enum"] == known_places(WORLD, isabella())
    asleep = await decompose(model, WORLD, isabella(), Block(0, 360, "sleeping"), DAY, spent)
    assert asleep == [Action(0, 360, "sleeping")] and len(model.requests) == 2


def test_places_are_listed_an_arena_a_line_with_its_objects() -> None:
    places = ["Home: kitchen", "Home: kitchen: stove", "Home: kitchen: sink", "Park: pond"]
    assert place_lines(places) == ["Home: kitchen (stove, sink)", "Park: pond"]
    assert place_lines(["Home: kitchen: stove"]) == ["Home: kitchen (stove)"]


async def test_a_place_is_chosen_only_among_those_the_persona_knows() -> None:
    person = isabella()
    places = known_places(WORLD, person)
    assert "Hobbs Cafe: cafe" in places and all(WORLD.tiles_of(p) for p in places)
    unknown = "Lin family house: kitchen: stove"
    assert unknown not in places  # she has never been inside the Lins' house
    model = ScriptedModel([{"place": unknown}, {"place": "Hobbs Cafe: kitchen: oven"}])
    spent = BudgetSpent()
    place = await choose_place(model, WORLD, person, "baking croissants", spent)
    assert place == "Hobbs Cafe: kitchen: oven"
    schema = model.requests[0].schema
    assert schema is not None and schema["properties"]["place"]["enum"] == places
    assert len(model.requests) == 2  # the place she does not know was refused and re-asked
