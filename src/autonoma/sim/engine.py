"""A step of the town: each persona sees what is around it, remembers what it perceived,
reflects when what it stored since it last did weighs enough, keeps its day's plan (planned
when the day is new, a block broken into actions as it begins, a place chosen as an action
begins), decides whether to react to what it newly perceived (or talk with whom it saw), and
takes one step towards where its action happens. Every persona's model calls of a step go
out at once, then the conversations begun in it; calls whose answer could not change are not
made (a sleeping persona perceives and plans nothing, an action under way is not re-planned,
an event already rated is not rated again, an event seen before is not reacted to again)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from autonoma.llm import Model
from autonoma.memory.reflection import Reflector
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.dialogue import conclude, converse, speaking_minutes
from autonoma.sim.memory import TownMemory, game_seconds, rated
from autonoma.sim.paths import path_between
from autonoma.sim.perceive import VISION, Event, by_arena, perceive, town_events
from autonoma.sim.persona import Persona, Talk
from autonoma.sim.plan import (
    PlanFailed,
    choose_place,
    decompose,
    minute_of_day,
    plan_day,
    summarize_day,
)
from autonoma.sim.react import REACT, TALK, Reaction, attended, awake, decide, may_talk, replan
from autonoma.sim.schedule import PLANNED, REACTION, Action, Schedule
from autonoma.sim.schedule import TALK as TALKING
from autonoma.sim.store import Sim
from autonoma.sim.world import Tile

YESTERDAY_MEMORIES = 15  # a day's memories its summary is written from


class Town:
    """A sim that moves: its personas' minds on `model`, their memories in `memory`, every
    call charged to `spent`."""

    def __init__(self, sim: Sim, model: Model, memory: TownMemory, spent: BudgetSpent) -> None:
        self.sim = sim
        self.model = model
        self.memory = memory
        self.spent = spent
        self.happened: list[tuple[str, dict[str, Any]]] = []  # reactions, talks, reflections
        self._walks: dict[str, tuple[str, list[Tile]]] = {}  # a persona's place and path there
        self._looked: dict[str, Tile] = {}  # where each persona last looked around
        self._by_name = {p.name: p for p in sim.personas}
        self._reflectors = {
            p.name: Reflector(model, memory.stream, memory.raters[p.name], rated(p))
            for p in sim.personas
        }

    async def begin(self, whispers: Sequence[tuple[str, str]] = ()) -> None:
        """Each persona's seed memories, and the statements a scenario whispers to it ((name,
        statement)), stored once, at the sim's start."""
        when = self.sim.clock.at(0)
        told = {
            p.name: [said for who, said in whispers if p.name == who] for p in self.sim.personas
        }
        await asyncio.gather(
            *(
                self.memory.seed(p, when, self.spent, whispers=told[p.name])
                for p in self.sim.personas
            )
        )

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        """What happened since the last drain, for the store's events: reactions, talks,
        reflections, and reactions lost to an unusable answer."""
        happened, self.happened = self.happened, []
        return happened

    async def step(self) -> None:
        """Take the sim from its step n to n + 1: think at step n's game time, talk, then
        move."""
        now = self.sim.clock.at(self.sim.step)
        personas = self.sim.personas
        events = by_arena(self.sim.world, town_events(self.sim.world, personas))
        wishes = await asyncio.gather(*(self._think(p, now, events) for p in personas))
        pairs: list[tuple[Persona, Persona]] = []
        busy: set[str] = set()
        for persona, wish in zip(personas, wishes, strict=True):
            if wish is None:
                continue
            other = self._by_name[wish.event.subject]
            if {persona.name, other.name} & busy or not may_talk(persona, other, now):
                continue  # the other was taken by a conversation begun first
            busy |= {persona.name, other.name}
            pairs.append((persona, other))
        await asyncio.gather(*(self._talk(a, b, now) for a, b in pairs))
        for persona in personas:  # in turn, so two never step onto one tile
            self.walk(persona)
        self.sim.step += 1

    async def _think(
        self, persona: Persona, now: datetime, events: dict[tuple[str, str], list[Event]]
    ) -> Reaction | None:
        """Perceive, remember, reflect, plan and decide about what was seen; a wish to talk
        is returned, to be begun once every persona has thought."""
        world = self.sim.world
        seen: list[Event] = []
        if awake(persona):
            if self._looked.get(persona.name) != persona.tile:  # nothing new from where it was
                persona.spatial.see(world, persona.tile, VISION)
                self._looked[persona.name] = persona.tile
            here = world.place_at(persona.tile)
            near = events.get((here.sector, here.arena), [])
            seen = perceive(world, persona, near, latest=self.memory.latest(persona))
            if seen:
                await self.memory.observe(persona, seen, now, self.spent)
                await self._reflect(persona, now)
        await self._plan(persona, now)
        if not seen or not awake(persona) or _occupied(persona):
            return None
        event = attended(seen, self._by_name)
        if event is None:
            return None
        other = self._by_name.get(event.subject)
        can_talk = other is not None and may_talk(persona, other, now)
        try:
            reaction = await decide(
                self.model, self.memory, world, persona, event, now, self.spent, can_talk=can_talk
            )
        except PlanFailed as error:  # a reaction is optional: the plan goes on, the loss kept
            self._happened("unusable", persona=persona.name, to=event.description, error=str(error))
            return None
        if reaction.decision == TALK:
            return reaction
        if reaction.decision == REACT:
            action = Action(0, reaction.minutes, reaction.action, "", REACTION)
            await replan(self.model, world, persona, now, self.spent, action)
            place = persona.schedule.action.place if persona.schedule.action else ""
            self._happened(
                "reaction", persona=persona.name, to=event.description,
                action=reaction.action, minutes=reaction.minutes, place=place,
            )  # fmt: skip
        return None

    async def _reflect(self, persona: Persona, now: datetime) -> None:
        """The paper's reflection, when the importance stored since the last one passes the
        threshold: insights pointing at their evidence, in game time."""
        reflector = self._reflectors[persona.name]
        if self.memory.importance_since_reflection(persona) < reflector.settings.threshold:
            return
        outcome = await reflector.reflect(persona.name, self.spent, now=game_seconds(now))
        self.memory.reflected(persona)
        insights = [r.text for r in outcome.reflections]
        self._happened(
            "reflection", persona=persona.name, questions=outcome.questions, insights=insights
        )

    async def _talk(self, first: Persona, second: Persona, now: datetime) -> None:
        """A conversation `first` begins with `second`; both remember it and what they took
        from it, and talk as long as saying it takes, their blocks planned again after."""
        world = self.sim.world
        lines = await converse(self.model, self.memory, world, first, second, now, self.spent)
        minutes = speaking_minutes(lines)

        async def settle(persona: Persona, other: Persona) -> None:
            about = await conclude(self.model, self.memory, persona, other, lines, now, self.spent)
            last = {**persona.talk.last, other.name: now.isoformat()}
            persona.talk = Talk(other.name, list(lines), last)
            action = Action(0, minutes, f"talking with {other.name} about {about}", "", TALKING)
            await replan(self.model, world, persona, now, self.spent, action)

        await asyncio.gather(settle(first, second), settle(second, first))
        between, said = [first.name, second.name], [list(line) for line in lines]
        self._happened("talk", between=between, minutes=minutes, lines=said)

    def _happened(self, kind: str, **data: Any) -> None:
        self.happened.append((kind, data))

    async def _plan(self, persona: Persona, now: datetime) -> None:
        schedule = persona.schedule
        today = now.date().isoformat()
        if schedule.day != today:
            yesterday = await self._yesterday(persona, schedule, now)
            plan, blocks = await plan_day(self.model, persona, now, yesterday, self.spent)
            schedule = persona.schedule = Schedule(today, plan, blocks)
            said = f"{persona.name}'s plan for {now:%A %B} {now.day}: {'; '.join(plan)}"
            await self.memory.remember(persona, said, "plan", now, self.spent)
        minute = minute_of_day(now)
        block = schedule.block_at(minute)
        if block != schedule.block:
            schedule.block = block
            schedule.actions = (
                await decompose(
                    self.model, self.sim.world, persona, schedule.blocks[block], now, self.spent
                )
                if block >= 0
                else []
            )
        action = schedule.action_at(minute)
        if action is None or _same(action, schedule.action):
            return
        if persona.talk.partner:  # the conversation is over
            persona.talk = Talk(last=persona.talk.last)
        if schedule.blocks[block].asleep:
            place = persona.home  # no call: one sleeps at home
        else:  # chosen with the block's breakdown; asked alone where that gave none
            place = action.place or await choose_place(
                self.model, self.sim.world, persona, action.description, self.spent
            )
        schedule.action = replace(action, place=place)
        persona.action = action.description

    async def _yesterday(self, persona: Persona, schedule: Schedule, now: datetime) -> str:
        """The summary of the persona's last planned day, from its memories of that day (the
        day's plan if it remembers nothing of it); nothing before its first day."""
        if not schedule.day:
            return ""
        began = datetime.fromisoformat(schedule.day)
        found = await self.memory.retrieve(
            persona, f"what {persona.name} did and whom {persona.name} met", now,
            k=YESTERDAY_MEMORIES, since=began, until=began + timedelta(days=1),
        )  # fmt: skip
        memories = [r.record.text for r in found]
        summary = await summarize_day(self.model, persona, began, memories, self.spent)
        return summary or "; ".join(schedule.plan)

    def walk(self, persona: Persona) -> None:
        """One tile along the persona's path to its action's place: the path found when it
        sets out and kept (a search costs milliseconds in the Ville, docs/benchmarks.md),
        found again only when someone stands on its next tile or no way was open."""
        action = persona.schedule.action
        if action is None or not action.place:
            return
        place, path = self._walks.get(persona.name, ("", [persona.tile]))
        if place == action.place and not path:
            return  # arrived
        occupied = {p.tile for p in self.sim.personas if p is not persona}
        if place != action.place or len(path) < 2 or path[1] in occupied:
            world = self.sim.world
            found = path_between(world, persona.tile, world.tiles_of(action.place), occupied)
            if found is None:  # no way open now: wait, and look again next step
                self._walks.pop(persona.name, None)
                return
            path = found
        if len(path) == 1:  # there
            path = []
        else:
            persona.tile, path = path[1], path[1:]
        self._walks[persona.name] = (action.place, path if len(path) > 1 else [])


def _same(action: Action, current: Action | None) -> bool:
    """The same action of the schedule (its place aside: chosen once it began)."""
    return current is not None and (action.start, action.description) == (
        current.start,
        current.description,
    )


def _occupied(persona: Persona) -> bool:
    """Reacting or talking already, or with no block to re-plan: nothing to decide now."""
    action = persona.schedule.action
    no_block = persona.schedule.block < 0
    return no_block or persona.talk.partner != "" or (action is not None and action.kind != PLANNED)
