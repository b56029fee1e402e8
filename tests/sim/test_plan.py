"""A persona's day planned top down (a broad plan with its times, the blocks from them,
actions as a block begins) and each action's place chosen only among the places the persona
knows."""

from __future__ import annotations

from datetime import datetime

import pytest

from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_world
from autonoma.sim.persona import Persona, shipped_personas
from autonoma.sim.plan import (
    PlanFailed,
    choose_place,
    day_blocks,
    decompose,
    fill,
    known_places,
    place_lines,
    plan_day,
    waking_hours,
)
from autonoma.sim.schedule import Action, Block

WORLD = shipped_world("small_town")
DAY = datetime(2023, 2, 13)


def isabella() -> Persona:
    return next(p for p in shipped_personas("small_town", WORLD) if p.name.startswith("Isabella"))


def timed(*items: tuple[str, str]) -> list[dict[str, str]]:
    return [{"at": at, "do": do} for at, do in items]


async def test_the_day_is_planned_in_timed_items_and_its_blocks_follow_from_the_times() -> None:
    """The plan's items carry the times they begin, within the waking hours the persona's
    lifestyle states (under the schema's pattern); the schedule follows from them, with no
    second call (asked for each hour's activity, the 1.5B model was awake at 01:00)."""
    plan = timed(("08:00", "open Hobbs Cafe."), ("12:00", "lunch"), ("07:00", "bake  croissants"),
                 ("12:00", "call Maria"), ("20:00", "go to bed early"))  # fmt: skip
    night = timed(("05:30", "bake"), *[("08:00", "work")] * 4)  # before she wakes at 06:00
    model = ScriptedModel([{"plan": night}, {"plan": plan}])
    spent = BudgetSpent()
    lines, blocks = await plan_day(model, isabella(), DAY, "She baked croissants.", spent)
    assert len(model.requests) == 2  # an item in the night, asked again
    assert lines == ["06:00 waking up and getting ready for the day", "07:00 bake croissants",
                     "08:00 open Hobbs Cafe", "12:00 lunch", "16:00 call Maria",
                     "20:00 go to bed early"]  # two at 12:00 share the time until 20:00  # fmt: skip
    cafe = "open Hobbs Cafe"
    assert blocks == [
        Block(0, 360, "sleeping"), Block(360, 60, "waking up and getting ready for the day"),
        Block(420, 60, "bake croissants"),
        Block(480, 120, cafe), Block(600, 120, cafe),  # longer than a breakdown fills: halved
        Block(720, 120, "lunch"), Block(840, 120, "lunch"),
        Block(960, 120, "call Maria"), Block(1080, 120, "call Maria"),
        Block(1200, 240, "sleeping"),  # to bed at 20:00, asleep through the bed time, 23:00
    ]  # fmt: skip
    asked = model.requests[0].messages[0].content
    assert "Isabella Rodriguez" in asked and "Monday February 13" in asked
    assert "Yesterday: She baked croissants." in asked and "(06:00 to 23:00)" in asked
    schema = model.requests[0].schema or {}
    assert schema["required"] == ["plan"]  # her bed time is her lifestyle's
    assert schema["properties"]["plan"]["maxItems"] == 7  # room for waking up: 8 at most
    assert schema["properties"]["plan"]["items"]["properties"]["at"]["pattern"] == (
        "^(06|07|08|09|10|11|12|13|14|15|16|17|18|19|20|21|22):[0-5][0-9]$"
    )


async def test_a_lifestyle_without_its_hours_has_the_bed_time_asked() -> None:
    person = isabella()
    person.spec = person.spec.model_copy(update={"lifestyle": "Isabella keeps odd hours."})
    plan = timed(("09:00", "wake up"), ("10:00", "bake"), ("13:00", "lunch"), ("14:00", "bake"),
                 ("18:00", "walk"))  # fmt: skip
    model = ScriptedModel([{"plan": plan, "bed": "01:00"}])
    lines, blocks = await plan_day(model, person, DAY, "", BudgetSpent())
    asked = model.requests[0].schema or {}
    assert asked["required"] == ["plan", "bed"] and asked["properties"]["plan"]["maxItems"] == 8
    assert lines[0] == "09:00 wake up" and blocks[0] == Block(0, 540, "sleeping")
    assert blocks[-1] == Block(1260, 180, "walk")  # to bed after midnight: awake to its end
    assert waking_hours("goes to bed around 1am, wakes up around 8:30am") == (510, 1500)
    assert waking_hours("goes to bed around midnight, wakes up around 7am") == (420, 1440)
    assert waking_hours("Wakes up at 6 am, goes to bed at 9:30 pm") == (360, 1290)


def test_a_bed_time_after_midnight_leaves_the_day_awake_to_its_end() -> None:
    items = [(420, "wake up"), (480, "work"), (1200, "go out"), (1320, "read")]
    assert day_blocks(items, bed=30) == [
        Block(0, 420, "sleeping"), Block(420, 60, "wake up"), Block(480, 180, "work"),
        Block(660, 180, "work"), Block(840, 180, "work"), Block(1020, 180, "work"),
        Block(1200, 120, "go out"), Block(1320, 120, "read"),
    ]  # fmt: skip
    assert day_blocks([(0, "sleeping in"), (600, "Sleeping"), (660, "read")], bed=720) == [
        Block(0, 660, "sleeping"),
        Block(660, 60, "read"),
        Block(720, 720, "sleeping"),
    ]


async def test_an_answer_never_usable_is_one_error() -> None:
    wrong = {"plan": timed(*[("7:00", "work")] * 5)}  # not HH:MM, every time
    broken = ScriptedModel(lambda messages, request: wrong)
    with pytest.raises(PlanFailed, match="Isabella Rodriguez's plan: the model's answer"):
        await plan_day(broken, isabella(), DAY, "", BudgetSpent())


def test_filled_blocks_add_up() -> None:
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


async def test_items_set_at_one_time_share_the_day_in_their_order() -> None:
    """The 135M model set every item of John's day at 06:00: each keeps its line."""
    same = timed(*[("06:00", words) for words in ("wake", "eat", "work", "walk", "read")])
    lines, blocks = await plan_day(
        ScriptedModel([{"plan": same}]), isabella(), DAY, "", BudgetSpent()
    )
    assert lines == ["06:00 wake", "09:24 eat", "12:48 work", "16:12 walk", "19:36 read"]
    assert blocks[0] == Block(0, 360, "sleeping") and blocks[-2] == Block(1278, 102, "read")
