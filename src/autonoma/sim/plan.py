"""A persona's day, planned as the paper plans it, top down: a plan in 5 to 8 broad items
from who the persona is and how yesterday went, an hourly schedule from that plan, and each
block of the schedule broken into 5-to-15-minute actions as it begins. Every action happens
at a place the persona knows, chosen under a schema that lists only those places, so a place
that is not on the map cannot be named (the reference implementation fell back to a random
place when the model made one up). Sleep is not decomposed: its answer could not change."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from autonoma.errors import ModelError
from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.persona import Persona
from autonoma.sim.schedule import Action, Block
from autonoma.sim.world import SEPARATOR, World, WorldFileError
from autonoma.templating import render

DAY_MINUTES = 24 * 60
HOUR_LABELS = tuple(f"{hour:02d}:00" for hour in range(24))


class PlanFailed(ModelError):
    """The model's answer could not be used for a persona's plan, even after re-asking."""


def persona_prompt(template: str, persona: Persona, day: datetime, **values: Any) -> str:
    """A prompt of the town's (sim/prompts/) about one persona: who it is, on what day."""
    return render(
        "autonoma.sim",
        template,
        identity=persona.spec.identity(),
        who=persona.name,
        today=f"{day:%A %B} {day.day}",
        **values,
    )


def scene(world: World, persona: Persona, now: datetime) -> dict[str, str]:
    """Where and when a prompt about the persona finds it: the time, its place, its action."""
    return {
        "now": f"{now:%A %B} {now.day}, {now:%H:%M}",
        "here": world.place_at(persona.tile).address or "the street",
        "doing": persona.action,
    }


def schema_of(**properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON object schema with these properties, all required, in this order."""
    return {"type": "object", "properties": properties, "required": list(properties)}


def clock_time(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


async def plan_day(
    model: Model, persona: Persona, day: datetime, yesterday: str, spent: BudgetSpent
) -> list[str]:
    """The day in 5 to 8 broad items, each with the time it begins."""
    prompt = persona_prompt("day_plan.j2", persona, day, yesterday=yesterday)
    schema = _object("plan", _texts(5, 8, 120))
    data = await asked(model, prompt, spent, schema, max_tokens=400, who=persona.name)
    return [" ".join(item.split()) for item in data["plan"]]


async def summarize_day(
    model: Model, persona: Persona, day: datetime, memories: list[str], spent: BudgetSpent
) -> str:
    """How the persona's `day` went, in two or three sentences, from what it remembers of it
    (the paper's summary of yesterday, read by the next day's plan)."""
    if not memories:
        return ""
    prompt = persona_prompt("day_summary.j2", persona, day, memories=memories)
    schema = _object("summary", {"type": "string", "minLength": 5, "maxLength": 400})
    data = await asked(
        model, prompt, spent, schema, max_tokens=200, who=persona.name, what="day's summary"
    )
    return " ".join(str(data["summary"]).split())


async def schedule_hours(
    model: Model, persona: Persona, plan: list[str], day: datetime, spent: BudgetSpent
) -> list[Block]:
    """An activity for each hour of the day, hours of one activity running on merged into one
    block."""
    prompt = persona_prompt("hourly_schedule.j2", persona, day, plan=plan)
    # an hour's label is written before its activity: the small model sees which hour it is
    # filling (asked for a list of 24, the 1.5B model slept until 18:00)
    hour = {"type": "string", "minLength": 2, "maxLength": 80}
    schema = {
        "type": "object",
        "properties": {label: hour for label in HOUR_LABELS},
        "required": list(HOUR_LABELS),
        "additionalProperties": False,
    }
    data = await asked(model, prompt, spent, schema, max_tokens=900, who=persona.name)
    return merge_hours([" ".join(data[label].split()).rstrip(".") for label in HOUR_LABELS])


def merge_hours(hours: list[str]) -> list[Block]:
    """Hour-long activities as blocks, a run of the same activity (case aside) as one."""
    blocks: list[Block] = []
    for hour, activity in enumerate(hours):
        if blocks and blocks[-1].activity.lower() == activity.lower():
            last = blocks[-1]
            blocks[-1] = Block(last.start, last.minutes + 60, last.activity)
        else:
            blocks.append(Block(hour * 60, 60, activity))
    return blocks


async def decompose(
    model: Model, world: World, persona: Persona, block: Block, day: datetime, spent: BudgetSpent
) -> list[Action]:
    """The block's actions, as `breakdown` gives them."""
    _, actions = await breakdown(model, world, persona, block, day, spent)
    return actions


async def breakdown(
    model: Model,
    world: World,
    persona: Persona,
    block: Block,
    day: datetime,
    spent: BudgetSpent,
    first: str = "",
) -> tuple[str, list[Action]]:
    """The block's actions, 5 to 15 minutes each as the model gives them, their lengths then
    scaled to fill the block exactly, each with its place: one the persona knows, chosen in
    the same answer under a schema that lists only those (a call for each action's place
    cost more tokens than the breakdown itself, docs/benchmarks.md); with `first` (a
    reaction just before the block), where the persona does that too, in the same answer
    (asked alone, it cost a call of its own). Sleep, or a block under ten minutes, is one
    action with no model call (and `first` left unplaced: "")."""
    if block.asleep or block.minutes < 10:
        return "", [Action(block.start, block.minutes, block.activity)]
    places = known_places(world, persona)
    prompt = persona_prompt(
        "decompose.j2",
        persona,
        day,
        start=clock_time(block.start),
        end=clock_time(block.end),
        minutes=block.minutes,
        activity=block.activity,
        places=place_lines(places),
        home=persona.home,
        first=first if places else "",
    )
    place = {"type": "string", "enum": places}
    item = schema_of(
        action={"type": "string", "minLength": 3, "maxLength": 80},
        minutes={"type": "integer", "minimum": 5, "maximum": 15},
        **({"place": place} if places else {}),
    )
    most = max(1, min(12, block.minutes // 5))
    actions = {"type": "array", "items": item, "minItems": 1, "maxItems": most}
    schema = schema_of(actions=actions, **({"place": place} if first and places else {}))
    data = await asked(model, prompt, spent, schema, max_tokens=80 * most + 30, who=persona.name)
    told = [
        (" ".join(a["action"].split()), a["minutes"], a.get("place", "")) for a in data["actions"]
    ]
    return str(data.get("place", "")), fill(block, told)


def fill(block: Block, actions: list[tuple[str, int, str]]) -> list[Action]:
    """The actions' lengths scaled to the block's, in whole minutes, the last taking what
    rounding left; an action scaled to nothing is dropped."""
    total = sum(minutes for _, minutes, _ in actions)
    filled: list[Action] = []
    start = block.start
    for n, (description, minutes, place) in enumerate(actions):
        length = (
            block.end - start if n == len(actions) - 1 else round(minutes * block.minutes / total)
        )
        length = min(length, block.end - start)
        if length > 0:
            filled.append(Action(start, length, description, place))
            start += length
    return filled


def known_places(world: World, persona: Persona) -> list[str]:
    """Every arena and object the persona knows, as the world writes their addresses."""
    places = []
    for sector in persona.spatial.sectors():
        for arena in persona.spatial.arenas(sector):
            places.append(f"{sector}{SEPARATOR}{arena}")
            places += [
                f"{sector}{SEPARATOR}{arena}{SEPARATOR}{thing}"
                for thing in persona.spatial.objects(sector, arena)
            ]
    return [p for p in places if _on_map(world, p)]


def place_lines(places: list[str]) -> list[str]:
    """The places as a prompt lists them: one line an arena, its objects after it in
    brackets ("Hobbs Cafe: kitchen (oven, sink)"), half the tokens of one line a place."""
    objects: dict[str, list[str]] = {}
    for address in places:
        sector, arena, *thing = address.split(SEPARATOR, 2)
        objects.setdefault(f"{sector}{SEPARATOR}{arena}", []).extend(thing)
    return [f"{arena} ({', '.join(found)})" if found else arena for arena, found in objects.items()]


def _on_map(world: World, address: str) -> bool:
    try:
        return bool(world.tiles_of(address))
    except WorldFileError:  # a place the persona remembers that this map does not have
        return False


async def choose_place(
    model: Model, world: World, persona: Persona, action: str, spent: BudgetSpent
) -> str:
    """Where the persona does `action`: one of the places it knows, the answer constrained to
    them (a backend that cannot constrain decoding is re-asked when it names another)."""
    places = known_places(world, persona)
    here = world.place_at(persona.tile).address or "the street"
    prompt = render(
        "autonoma.sim",
        "place.j2",
        identity=persona.spec.identity(),
        who=persona.name,
        here=here,
        action=action,
        home=persona.home,
        places=place_lines(places),
    )
    schema = _object("place", {"type": "string", "enum": places})
    data = await asked(model, prompt, spent, schema, max_tokens=60, who=persona.name)
    return str(data["place"])


def day_start(when: datetime) -> datetime:
    return datetime.combine(when.date(), datetime.min.time())


def minute_of_day(when: datetime) -> int:
    return int((when - day_start(when)) / timedelta(minutes=1))


async def asked(
    model: Model,
    prompt: str,
    spent: BudgetSpent,
    schema: dict[str, Any],
    *,
    max_tokens: int,
    who: str,
    what: str = "plan",
) -> dict[str, Any]:
    """The answer's data, constrained to `schema`; PlanFailed naming whose `what` it was
    when it cannot be used after the model layer's re-asks."""
    answer = await ask(model, prompt, spent, output=schema, max_tokens=max_tokens)
    if not isinstance(answer, ModelResponse):
        raise PlanFailed(f"{who}'s {what}: the model's answer could not be used ({answer})")
    data: dict[str, Any] = answer.data
    return data


def _texts(least: int, most: int, longest: int) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "minLength": 2, "maxLength": longest},
        "minItems": least,
        "maxItems": most,
    }


def _object(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return schema_of(**{key: value})
