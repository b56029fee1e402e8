"""A persona's day, planned top down as the paper plans it: a plan in 5 to 8 broad items
from who the persona is and how yesterday went, each with the time it begins; the
schedule's blocks from those times (the paper asks the model for each hour's activity);
each block broken into 5-to-15-minute actions as it begins. Every action happens at a
place the persona knows, chosen under a schema that lists only those places, so a place
that is not on the map cannot be named (the reference implementation fell back to a random
place when the model made one up). Sleep is not decomposed: its answer could not change."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from itertools import groupby, pairwise
from typing import Any

from autonoma.errors import ModelError
from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.persona import Persona
from autonoma.sim.schedule import SLEEPING, Action, Block
from autonoma.sim.world import SEPARATOR, World, WorldFileError
from autonoma.templating import render

DAY_MINUTES = 24 * 60
CLOCK_TIME = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}  # "07:30"
MOST_ACTIONS = 12  # in one block's breakdown
LONGEST_BLOCK = MOST_ACTIONS * 15  # minutes: what one breakdown's actions can fill
_WAKES = re.compile(r"wakes? up (?:around |at )?(\d{1,2})(?::(\d\d))? ?([ap]m)", re.I)
_BEDS = re.compile(r"to bed (?:around |at )?(?:(midnight)|(\d{1,2})(?::(\d\d))? ?([ap]m))", re.I)
_SLEEP = re.compile(r"(?:sleep|go(?:es|ing)? (?:back )?to (?:bed|sleep)|bed\b|bedtime)", re.I)


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
) -> tuple[list[str], list[Block]]:
    """The day in 5 to 8 broad items, each with the time it begins ("07:30 open the cafe"),
    and the schedule's blocks that follow from those times and the hour of going to bed.
    The blocks come from the plan's own times, not from a second call naming each hour's
    activity: on the 1.5B model that one drifted from the plan (awake at 01:00, asleep by
    day) and cost about 830 tokens a persona-day."""
    waking = waking_hours(persona.spec.lifestyle)
    times = CLOCK_TIME if waking is None else _hours_between(*waking)
    item = schema_of(at=times, do={"type": "string", "minLength": 2, "maxLength": 100})
    # with its waking hour known, the day may gain a first item, waking up: room is kept for it
    # (SmolLM2 gave John 8 items from 17:02 on, and the day had 9: CI of 585c114)
    most = 7 if waking else 8
    items = {"type": "array", "items": item, "minItems": 5, "maxItems": most}
    schema = schema_of(plan=items) if waking else schema_of(plan=items, bed=CLOCK_TIME)
    awake = "" if waking is None else f"{clock_time(waking[0])} to {clock_time(waking[1])}"
    prompt = persona_prompt("day_plan.j2", persona, day, yesterday=yesterday, awake=awake)
    data = await asked(model, prompt, spent, schema, max_tokens=450, who=persona.name)
    wake, bed = waking or (0, _minutes(data["bed"]))  # the model's bed may be past midnight
    latest = bed if waking else DAY_MINUTES
    told = [
        (max(wake, _minutes(e["at"])), " ".join(e["do"].split()).rstrip(".")) for e in data["plan"]
    ]
    timed = sorted((t for t in told if t[0] < latest), key=lambda t: t[0])
    if not timed:
        raise PlanFailed(f"{persona.name}'s plan: no item before the bed time, {clock_time(bed)}")
    if waking and timed[0][0] > wake:
        timed.insert(0, (wake, "waking up and getting ready for the day"))
    timed = _spread(timed, _day_end(timed[-1][0], bed))
    plan = [f"{clock_time(at)} {words}" for at, words in timed]
    return plan, day_blocks(timed, bed)


def _spread(items: list[tuple[int, str]], end: int) -> list[tuple[int, str]]:
    """Items given one time share the time until the next item (or `end`) in equal parts,
    in their order: the 135M model set every item at 06:00."""
    spread: list[tuple[int, str]] = []
    for at, group in groupby(items, key=lambda item: item[0]):
        words = [w for _, w in group]
        later = next((t for t, _ in items if t > at), end)
        share = max(0, later - at) // len(words)
        spread += [(at + n * share, w) for n, w in enumerate(words)]
    return spread


def _day_end(last: int, bed: int) -> int:
    """Where the day's last item ends: at bed, or, for a bed time not after it (past
    midnight), at the day's end."""
    return min(bed, DAY_MINUTES) if bed > last else DAY_MINUTES


def waking_hours(lifestyle: str) -> tuple[int, int] | None:
    """(waking, bed) in minutes after midnight, as the persona's lifestyle states them ("goes
    to bed around 1am, wakes up around 8:30am": (510, 1500), a bed after midnight past
    1440), or None where it does not say both. The paper asks the model for the wake-up
    hour; a persona file that states it is the persona's own answer."""
    wake, bed = _WAKES.search(lifestyle), _BEDS.search(lifestyle)
    if wake is None or bed is None:
        return None
    woken = _clock(*wake.groups())
    slept = DAY_MINUTES if bed.group(1) else _clock(*bed.groups()[1:])
    if slept <= woken:
        slept += DAY_MINUTES
    return woken, slept


def _clock(hour: str, minute: str | None, half: str) -> int:
    return (int(hour) % 12 + (12 if half.lower() == "pm" else 0)) * 60 + int(minute or 0)


def _hours_between(wake: int, bed: int) -> dict[str, Any]:
    """A clock time ("HH:MM") whose hour is one the persona is awake in: under the grammar,
    a plan item cannot be set in the night (the 1.5B model began a day at 01:00)."""
    hours = range(wake // 60, (min(bed, DAY_MINUTES) - 1) // 60 + 1)
    return {"type": "string", "pattern": f"^({'|'.join(f'{h:02d}' for h in hours)}):[0-5][0-9]$"}


def day_blocks(items: list[tuple[int, str]], bed: int) -> list[Block]:
    """The schedule of a day planned as (minute it begins, activity) items, in order: asleep
    until the first, each item until the next begins, the last until bed, asleep from bed
    to midnight. A bed time not after the last item is past midnight: the last item runs to
    the day's end. An item that is sleep ("go to bed") is asleep; a run of one activity is
    one block; a block longer than a breakdown can fill (LONGEST_BLOCK) is cut in equal
    parts, each broken into actions as it begins."""
    bed = _day_end(items[-1][0], bed)
    edges = [at for at, _ in items] + [bed]
    spans = [(0, items[0][0], SLEEPING)]
    spans += [(edges[n], edges[n + 1], words) for n, (_, words) in enumerate(items)]
    spans.append((bed, DAY_MINUTES, SLEEPING))
    merged: list[Block] = []
    for start, end, words in spans:
        activity = SLEEPING if _SLEEP.match(words) else words
        if end <= start:
            continue
        if merged and merged[-1].activity.lower() == activity.lower():
            merged[-1] = Block(merged[-1].start, end - merged[-1].start, merged[-1].activity)
        else:
            merged.append(Block(start, end - start, activity))
    blocks: list[Block] = []
    for block in merged:
        parts = 1 if block.asleep else -(-block.minutes // LONGEST_BLOCK)
        cuts = [block.start + block.minutes * k // parts for k in range(parts + 1)]
        blocks += [Block(a, b - a, block.activity) for a, b in pairwise(cuts)]
    return blocks


def _minutes(hh_mm: str) -> int:
    hours, minutes = hh_mm.split(":")
    return int(hours) * 60 + int(minutes)


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
    most = max(1, min(MOST_ACTIONS, block.minutes // 5))
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


def _object(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return schema_of(**{key: value})
