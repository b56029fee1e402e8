"""A step of the town: each persona sees what is around it, remembers what it perceived,
keeps its day's plan (planned when the day is new, a block broken into actions as it begins,
a place chosen as an action begins) and takes one step towards where its action happens.
Every persona's model calls of a step go out at once; calls whose answer could not change are
not made (a sleeping persona perceives and plans nothing, an action under way is not
re-planned, an event already rated is not rated again). Reacting, talking and reflecting come
next (docs/sim.md)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime

from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.memory import TownMemory
from autonoma.sim.paths import path_between
from autonoma.sim.perceive import VISION, Event, by_arena, perceive, town_events
from autonoma.sim.persona import Persona
from autonoma.sim.plan import (
    choose_place,
    decompose,
    minute_of_day,
    plan_day,
    schedule_hours,
)
from autonoma.sim.schedule import Action, Schedule
from autonoma.sim.store import Sim
from autonoma.sim.world import Tile


class Town:
    """A sim that moves: its personas' minds on `model`, their memories in `memory`, every
    call charged to `spent`."""

    def __init__(self, sim: Sim, model: Model, memory: TownMemory, spent: BudgetSpent) -> None:
        self.sim = sim
        self.model = model
        self.memory = memory
        self.spent = spent
        self._walks: dict[str, tuple[str, list[Tile]]] = {}  # a persona's place and path there
        self._looked: dict[str, Tile] = {}  # where each persona last looked around

    async def begin(self) -> None:
        """Each persona's seed memories, stored once, at the sim's start."""
        when = self.sim.clock.at(0)
        await asyncio.gather(*(self.memory.seed(p, when, self.spent) for p in self.sim.personas))

    async def step(self) -> None:
        """Take the sim from its step n to n + 1: think at step n's game time, then move."""
        now = self.sim.clock.at(self.sim.step)
        events = by_arena(self.sim.world, town_events(self.sim.world, self.sim.personas))
        await asyncio.gather(*(self._think(p, now, events) for p in self.sim.personas))
        for persona in self.sim.personas:  # in turn, so two never step onto one tile
            self.walk(persona)
        self.sim.step += 1

    async def _think(
        self, persona: Persona, now: datetime, events: dict[tuple[str, str], list[Event]]
    ) -> None:
        world = self.sim.world
        awake = not _asleep(persona)
        if awake:
            if self._looked.get(persona.name) != persona.tile:  # nothing new from where it was
                persona.spatial.see(world, persona.tile, VISION)
                self._looked[persona.name] = persona.tile
            here = world.place_at(persona.tile)
            near = events.get((here.sector, here.arena), [])
            seen = perceive(world, persona, near, latest=self.memory.latest(persona))
            if seen:
                await self.memory.observe(persona, seen, now, self.spent)
        await self._plan(persona, now)

    async def _plan(self, persona: Persona, now: datetime) -> None:
        schedule = persona.schedule
        today = now.date().isoformat()
        if schedule.day != today:
            yesterday = "; ".join(schedule.plan)
            plan = await plan_day(self.model, persona, now, yesterday, self.spent)
            blocks = await schedule_hours(self.model, persona, plan, now, self.spent)
            schedule = persona.schedule = Schedule(today, plan, blocks)
            said = f"{persona.name}'s plan for {now:%A %B} {now.day}: {'; '.join(plan)}"
            await self.memory.think(persona, said, now, self.spent)
        minute = minute_of_day(now)
        block = schedule.block_at(minute)
        if block != schedule.block:
            schedule.block = block
            schedule.actions = (
                await decompose(self.model, persona, schedule.blocks[block], now, self.spent)
                if block >= 0
                else []
            )
        action = schedule.action_at(minute)
        if action is None or _same(action, schedule.action):
            return
        if schedule.blocks[block].asleep:
            place = persona.home  # no call: one sleeps at home
        else:
            place = await choose_place(
                self.model, self.sim.world, persona, action.description, self.spent
            )
        schedule.action = replace(action, place=place)
        persona.action = action.description

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


def _asleep(persona: Persona) -> bool:
    schedule = persona.schedule
    return 0 <= schedule.block < len(schedule.blocks) and schedule.blocks[schedule.block].asleep
