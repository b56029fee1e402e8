"""Reacting, talking and reflecting in the town, with a scripted model: a reaction takes the
place of the action under way and the rest of the block is planned again after it; two
personas who see each other talk in turns until one ends it (or each has spoken its most),
both remember the conversation and what they took from it, and the same pair does not talk
again within the cool-down; an event already decided about is not decided about again; a
persona reflects, in game time, when what it stored weighs enough; and all of it is stored
with the sim."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.scripted import RecordedRequest
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.dialogue import TURNS, speaking_minutes
from autonoma.sim.engine import Town
from autonoma.sim.memory import TownMemory, game_seconds, town_raters
from autonoma.sim.persona import Persona, shipped_personas
from autonoma.sim.plan import minute_of_day
from autonoma.sim.react import COOL_DOWN, DOING, replan
from autonoma.sim.runner import run_sim
from autonoma.sim.schedule import PLANNED, REACTION, TALK, Action
from autonoma.sim.store import SimStore

from .town_answers import townsfolk

Decider = Callable[[dict[str, Any], str], dict[str, Any]]


def continuing(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    return {"decision": "continue", "reaction": "", "minutes": 5}


def talk_if_offered(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    if "talk" in schema["properties"]["decision"]["enum"]:
        return {"decision": "talk", "reaction": "", "minutes": 5}
    return continuing(schema, prompt)


async def step_until_talking(town: Town, persona: Persona, steps: int = 60) -> None:
    """Step the town until `persona` is talking (at most `steps` steps)."""
    for _ in range(steps):
        await town.step()
        if persona.talk.partner:
            return


def scripted(decider: Decider, *, ends_after: int | None = 3, rating: int = 4) -> ScriptedModel:
    """The townsfolk's day, with decisions from `decider`, utterances numbered until the
    `ends_after`th (None: never ended), and every memory rated `rating`."""
    said = [0]

    def answer(messages: list[Message], request: CompletionRequest) -> Any:
        schema = request.plan.schema or {}
        wanted = next(iter(schema.get("properties", {})))
        prompt = str(messages[-1].content)
        if wanted == "decision":
            return decider(schema, prompt)
        if wanted == "utterance":
            said[0] += 1
            return {"utterance": f"line {said[0]}", "end": said[0] == ends_after}
        if wanted == "about":
            return {"about": "the toast", "conclusion": "We both like toast in the morning."}
        if wanted == "ratings":
            return {"ratings": [rating] * schema["properties"]["ratings"]["minItems"]}
        if wanted == "questions":
            return {"questions": ["What does the family eat?"] * 3}
        if wanted == "insights":
            return {"insights": [{"insight": "The Lins eat toast together", "because_of": [1, 2]}]}
        return townsfolk(messages, request)

    return ScriptedModel(answer)


def open_town(tmp_path: Path, model: ScriptedModel, start: datetime) -> tuple[Town, SimStore]:
    world = shipped_world("small_town")
    people = shipped_personas("small_town", world)
    store = SimStore(tmp_path / "sims.db")
    sim = store.create("willow", world, people, GameClock(start))
    memory = TownMemory(
        MemoryStream(tmp_path / "memory.db", LexicalEmbedder()), town_raters(model, people)
    )
    return Town(sim, model, memory, BudgetSpent()), store


def prompt_of(request: RecordedRequest) -> str:
    return str(request.messages[-1].content)


def requests_for(model: ScriptedModel, wanted: str) -> list[RecordedRequest]:
    return [
        r for r in model.requests if next(iter((r.schema or {}).get("properties", {}))) == wanted
    ]


MORNING = datetime(2023, 2, 13, 7, 0)


async def test_a_reaction_takes_over_and_the_rest_of_the_block_is_planned_again(
    tmp_path: Path,
) -> None:
    def react_to_john(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        if "Observation: John Lin is making toast" in prompt:
            return {"decision": "react", "reaction": "pouring John some juice", "minutes": 10}
        return continuing(schema, prompt)

    model = scripted(react_to_john)
    town, _ = open_town(tmp_path, model, MORNING)
    mei = town.sim.persona("Mei Lin")
    for _ in range(60):
        await town.step()
        if mei.schedule.action is not None and mei.schedule.action.kind == REACTION:
            break
    action = mei.schedule.action
    assert action is not None and action.kind == REACTION
    assert mei.action == "pouring John some juice" and action.place.endswith(": kitchen")
    [happened] = [data for kind, data in town.drain() if kind == "reaction"]
    assert happened["to"] == "John Lin is making toast" and happened["minutes"] == 10
    # placed in the same answer as the rest of the block, with no call of its own
    assert happened["place"] == action.place and requests_for(model, "place") == []
    replanned = requests_for(model, "actions")[-1]
    assert "Mei Lin is pouring John some juice. Then, from" in prompt_of(replanned)
    assert list(replanned.schema["properties"]) == ["actions", "place"]  # type: ignore[index]
    now = town.sim.clock.at(town.sim.step - 1)
    assert action.start == minute_of_day(now) and action.minutes == 10
    block = mei.schedule.blocks[mei.schedule.block]
    after = [a for a in mei.schedule.actions if a.start >= action.end]
    assert after and all(a.kind == PLANNED for a in after)  # the rest planned again
    assert after[0].start == action.end and after[-1].end == block.end  # filling the block
    decided = len(requests_for(model, "decision"))
    for _ in range(30):  # five minutes into the reaction: nothing decided, nothing re-planned
        await town.step()
    assert mei.schedule.action == action
    mei_decisions = [
        r for r in requests_for(model, "decision")[decided:] if "Mei Lin is at" in prompt_of(r)
    ]
    assert mei_decisions == []


async def test_a_reaction_answer_that_cannot_be_used_is_recorded_and_the_plan_goes_on(
    tmp_path: Path,
) -> None:
    rambling = "reacted" + "irecionaryismalltownswaylifehobbescafewelightroom" * 10  # CI's answer

    def ramble(schema: dict[str, Any], prompt: str) -> dict[str, Any]:  # re-asked too
        return {"decision": "continue", "reaction": rambling, "minutes": 5}

    model = scripted(ramble)
    town, _ = open_town(tmp_path, model, MORNING)
    mei = town.sim.persona("Mei Lin")
    lost: list[dict[str, Any]] = []
    for _ in range(60):
        await town.step()
        lost += [data for kind, data in town.drain() if kind == "unusable"]
        if lost:
            break
    [meis] = [data for data in lost if data["persona"] == "Mei Lin"]
    assert meis["to"] == "John Lin is making toast"
    assert "Mei Lin's reaction: the model's answer could not be used" in meis["error"]
    action = mei.schedule.action
    assert action is not None and action.kind == PLANNED  # still on its plan
    await town.step()  # and the town goes on


async def test_a_reaction_to_the_end_of_its_block_is_placed_on_its_own(tmp_path: Path) -> None:
    model = scripted(continuing)
    town, _ = open_town(tmp_path, model, MORNING)
    mei = town.sim.persona("Mei Lin")
    await town.step()  # the day planned: waking up from 07:00 to 07:30
    late = MORNING + timedelta(minutes=25)
    action = Action(0, 10, "wiping the table", "", REACTION)
    await replan(model, town.sim.world, mei, late, BudgetSpent(), action)
    began = mei.schedule.action
    assert began is not None and began.minutes == 5 and began.place.endswith(": kitchen")
    assert len(requests_for(model, "place")) == 1  # no time left to break down: asked alone


async def test_two_who_meet_talk_in_turns_and_both_remember_it(tmp_path: Path) -> None:
    model = scripted(talk_if_offered, ends_after=3)
    town, store = open_town(tmp_path, model, MORNING)
    mei, john = town.sim.persona("Mei Lin"), town.sim.persona("John Lin")
    await step_until_talking(town, mei)
    assert mei.talk.partner == "John Lin" and john.talk.partner == "Mei Lin"
    talks = [data for kind, data in town.drain() if kind == "talk"]
    assert len(talks) == 1  # both wished to talk in one step: one conversation
    lines = talks[0]["lines"]
    speakers = [who for who, _ in lines]
    assert [said for _, said in lines] == ["line 1", "line 2", "line 3"]  # ended at the third
    assert speakers[0] != speakers[1] and speakers[0] == speakers[2]  # in turns
    assert mei.talk.lines == john.talk.lines == [tuple(line) for line in lines]
    for persona, other in ((mei, john), (john, mei)):
        action = persona.schedule.action
        assert action is not None and action.kind == TALK and action.place == ""
        assert persona.action == f"talking with {other.name} about the toast"
        assert action.minutes == speaking_minutes([tuple(line) for line in lines])
        texts = [r.text for r in town.memory.stream.latest(persona.name, 5)]
        assert f"{persona.name} talked with {other.name} about the toast:" in "\n".join(texts)
        assert "We both like toast in the morning." in texts
    # an utterance is written from what the speaker remembers of the other
    first = requests_for(model, "utterance")[0]
    said = prompt_of(first)
    assert (
        "What Mei Lin remembers of John Lin" in said or "What John Lin remembers of Mei Lin" in said
    )
    store.save(town.sim)
    again = store.load("willow")
    assert again.persona("Mei Lin").talk == mei.talk
    assert again.persona("Mei Lin").schedule.action == mei.schedule.action


async def test_a_conversation_never_ended_stops_when_each_has_spoken_its_most(
    tmp_path: Path,
) -> None:
    model = scripted(talk_if_offered, ends_after=None)
    town, _ = open_town(tmp_path, model, MORNING)
    mei = town.sim.persona("Mei Lin")
    await step_until_talking(town, mei)
    assert len(mei.talk.lines) == 2 * TURNS
    last = requests_for(model, "utterance")[-1]
    assert "last turn" in prompt_of(last)


async def test_the_same_two_do_not_talk_again_within_the_cool_down(tmp_path: Path) -> None:
    offered: list[bool] = []

    def talk_if_offered(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        can = "talk" in schema["properties"]["decision"]["enum"]
        offered.append(can)
        if can:
            return {"decision": "talk", "reaction": "", "minutes": 5}
        return continuing(schema, prompt)

    model = scripted(talk_if_offered, ends_after=1)
    town, _ = open_town(tmp_path, model, MORNING)
    mei, john = town.sim.persona("Mei Lin"), town.sim.persona("John Lin")
    await step_until_talking(town, mei)
    talked_at = datetime.fromisoformat(mei.talk.last["John Lin"])
    assert any(offered)
    before = len(offered)  # both may have wished to talk in that step
    for _ in range(240):  # 40 game minutes: the talk ends, new actions are seen
        await town.step()
    assert not mei.talk.partner and not john.talk.partner  # the conversation is over
    later = offered[before:]
    assert later and not any(later)  # decided about again, never offered a talk
    assert town.sim.clock.at(town.sim.step) - talked_at < COOL_DOWN
    assert len([k for k, _ in town.drain() if k == "talk"]) == 1


async def test_a_persona_reflects_in_game_time_when_its_memories_weigh_enough(
    tmp_path: Path,
) -> None:
    model = scripted(continuing, rating=10)  # every memory poignant: the threshold comes soon
    town, _ = open_town(tmp_path, model, MORNING)
    await town.begin()
    mei = town.sim.persona("Mei Lin")
    for worry in ("Mei Lin worries about John's health", "Mei Lin lost her job",
                  "Mei Lin's mother is ill"):  # fmt: skip
        await town.memory.think(mei, worry, MORNING, town.spent)
    for _ in range(60):
        await town.step()
    reflections = [data for kind, data in town.drain() if kind == "reflection"]
    assert [r["persona"] for r in reflections] == ["Mei Lin"]  # only she had enough
    assert set(reflections[0]["insights"]) == {"The Lins eat toast together"}
    who = "Mei Lin"
    [record] = [r for r in town.memory.stream.latest(who, 500) if r.kind == "reflection"][:1]
    assert record.evidence  # pointing at what it was drawn from
    start, end = game_seconds(MORNING), game_seconds(MORNING + timedelta(minutes=10))
    assert start <= record.created_at <= end  # stored in game time, not the wall's
    persona = town.sim.persona(who)
    assert town.memory.importance_since_reflection(persona) < 150
    assert town.memory.stream.importance_since_reflection(who) == (
        town.memory.importance_since_reflection(persona)
    )  # the kept sum is the stream's


async def test_a_run_stores_what_happened_in_its_steps(tmp_path: Path) -> None:
    model = scripted(talk_if_offered)
    store = SimStore(tmp_path / "sims.db")
    world = shipped_world("small_town")
    sim = store.create("willow", world, shipped_personas("small_town", world), GameClock(MORNING))
    await run_sim(store, sim, model, LexicalEmbedder(), until=60)
    kinds = [kind for _, kind, _ in store.events(sim.record.id)]
    assert "talk" in kinds and kinds[-1] == "ran"
    [(step, _, talk)] = [e for e in store.events(sim.record.id) if e[1] == "talk"]
    assert 0 < step <= 60 and len(talk["lines"]) == 3


async def test_a_new_day_is_planned_from_a_summary_of_yesterday(tmp_path: Path) -> None:
    inner = scripted(continuing)
    model = ScriptedModel(lambda m, r: answer_with(inner, m, r))
    town, _ = open_town(tmp_path, model, datetime(2023, 2, 13, 23, 58))
    await town.begin()
    for _ in range(13):  # two game minutes: past midnight
        await town.step()
    summaries = requests_for(model, "summary")
    assert len(summaries) == 3  # one a persona, on its second day only
    assert "2023-02-13" not in prompt_of(summaries[0]) and "Monday February 13" in prompt_of(
        summaries[0]
    )
    mei = next(r for r in summaries if "Name: Mei Lin" in prompt_of(r))
    assert "Mei Lin's plan for Monday February 13" in prompt_of(mei)  # what it remembers
    plans = requests_for(model, "plan")
    assert len(plans) == 6 and all(
        "Yesterday: A quiet day of reading at home." in prompt_of(r) for r in plans[3:]
    )
    assert all(p.schedule.day == "2023-02-14" for p in town.sim.personas)


def answer_with(inner: ScriptedModel, messages: list[Message], request: CompletionRequest) -> Any:
    schema = request.plan.schema or {}
    if "summary" in schema.get("properties", {}):
        return {"summary": "A quiet day of reading at home."}
    return inner._function(messages, request)  # type: ignore[misc]


def test_a_reaction_is_said_as_a_doing_never_as_narration_or_speech() -> None:
    doing = Draft202012Validator(DOING)
    for ok in ("", "helping Mei Lin set up the espresso machine", "turning off the stove"):
        assert doing.is_valid(ok), ok
    for wrong in (
        "Mei Lin asked if she could help set up the espresso machine.",
        "I'll turn off the stove for 10 minutes",
        "Helping Mei Lin",
        'saying "hello"',
        "waving\nand leaving",
        "reacted" + "irecionaryismalltownswaylife" * 20,  # one endless word (CI of 6a21501)
        "walking " + "far " * 11,  # more than ten words after the first
    ):
        assert not doing.is_valid(wrong), wrong
