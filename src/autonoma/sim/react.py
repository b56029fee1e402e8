"""Reacting to what a persona perceives, as the paper does: of the events it newly perceived,
the one it attends to (another persona doing something before an object's state, the nearest
first), and the question "Should X react to the observation, and if so, what would be an
appropriate reaction?", answered from two retrievals: what X remembers of the observed
entity (their relationship) and of what it is doing (its status). The answer goes on with
the plan, reacts (an action of its own for some minutes, the rest of the block planned
again), or starts a conversation with the persona observed (sim/dialogue.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.memory import TownMemory
from autonoma.sim.perceive import Event
from autonoma.sim.persona import Persona
from autonoma.sim.plan import (
    asked,
    breakdown,
    choose_place,
    minute_of_day,
    scene,
    schema_of,
)
from autonoma.sim.schedule import REACTION, SLEEPING, Action, Block
from autonoma.sim.world import SEPARATOR, World
from autonoma.templating import render

CONTINUE, REACT, TALK = "continue", "react", "talk"
RECALLED = 5  # memories each of the two retrievals gives
COOL_DOWN = timedelta(hours=2)  # before the same two talk again (game time)
# What a reaction does, as the town says what anyone is doing ("Mei Lin is <it>"): a phrase
# opening with a word ending in -ing, or nothing. Free text let the 1.5B model write a line of
# narration or speech ("I'll turn off the stove ...") that the town then showed as an action.
# Words are bounded too: under an unbounded [a-z]+ SmolLM2 once spelt one 500-letter "word"
# until the length limit cut it off, three times over, and the reaction was lost (CI of 6a21501).
DOING = {"type": "string", "pattern": "^([a-z]{1,16}ing( [A-Za-z0-9',.:-]{1,20}){0,10})?$"}


@dataclass(frozen=True)
class Reaction:
    decision: str  # CONTINUE, REACT or TALK
    action: str  # what the persona does instead, when it reacts
    minutes: int
    event: Event


def attended(seen: list[Event], personas: Mapping[str, Persona]) -> Event | None:
    """The event worth deciding about among those newly perceived (nearest first): a persona
    awake and doing something before an object not idle; none if all are at rest."""
    people = [e for e in seen if e.subject in personas and not _resting(e.object)]
    things = [e for e in seen if e.subject not in personas and e.object != "idle"]
    return next(iter(people or things), None)


def _resting(action: str) -> bool:
    return action == "idle" or action.lower().startswith(SLEEPING)


def awake(persona: Persona) -> bool:
    schedule = persona.schedule
    block = schedule.block
    return not (0 <= block < len(schedule.blocks) and schedule.blocks[block].asleep)


def may_talk(persona: Persona, other: Persona, now: datetime) -> bool:
    """Both awake, neither talking already, and not talked together within the cool-down."""
    if persona.talk.partner or other.talk.partner or not (awake(persona) and awake(other)):
        return False
    for one, two in ((persona, other), (other, persona)):
        last = one.talk.last.get(two.name)
        if last is not None and now - datetime.fromisoformat(last) < COOL_DOWN:
            return False
    return True


def subject_name(event: Event) -> str:
    """Who or what the event is about, as a person says it: a name, or an object's own name."""
    return event.subject.rsplit(SEPARATOR, 1)[-1]


async def decide(
    model: Model,
    memory: TownMemory,
    world: World,
    persona: Persona,
    event: Event,
    now: datetime,
    spent: BudgetSpent,
    *,
    can_talk: bool,
) -> Reaction:
    """Whether `persona` reacts to `event`, and how; `can_talk` offers a conversation with
    the persona the event is about."""
    subject = subject_name(event)
    about = await memory.retrieve(persona, subject, now, k=RECALLED)
    status = await memory.retrieve(persona, event.description, now, k=RECALLED)
    recalled = [r.record.text for r in about]
    status_texts = [r.record.text for r in status if r.record.text not in recalled]
    options = [CONTINUE, REACT] + ([TALK] if can_talk else [])
    prompt = render(
        "autonoma.sim",
        "react.j2",
        identity=persona.spec.identity(),
        who=persona.name,
        **scene(world, persona, now),
        subject=subject,
        about=recalled,
        status=status_texts,
        observation=event.description,
        can_talk=can_talk,
    )
    schema = schema_of(
        decision={"type": "string", "enum": options},
        reaction=DOING,
        minutes={"type": "integer", "minimum": 5, "maximum": 30},
    )
    data = await asked(
        model, prompt, spent, schema, max_tokens=80, who=persona.name, what="reaction"
    )
    decision, action = str(data["decision"]), " ".join(str(data["reaction"]).split())
    if decision == REACT and not action:
        decision = CONTINUE  # a reaction with nothing to do is no reaction
    return Reaction(decision, action if decision == REACT else "", int(data["minutes"]), event)


async def replan(
    model: Model,
    world: World,
    persona: Persona,
    now: datetime,
    spent: BudgetSpent,
    action: Action,
) -> None:
    """`action` (a reaction or a conversation, beginning now) takes the place of what the
    persona was doing, and the rest of the current block is broken into actions again from
    where it ends (the paper's re-plan after a reaction). A reaction with no place yet is
    placed in the same answer as the rest, or alone when the rest is too short to break
    down."""
    schedule = persona.schedule
    block = schedule.blocks[schedule.block]
    start = minute_of_day(now)
    end = min(block.end, start + action.minutes)
    rest = Block(end, block.end - end, block.activity)
    unplaced = action.kind == REACTION and not action.place
    place, later = action.place, list[Action]()
    if rest.minutes > 0:
        first = action.description if unplaced else ""
        found, later = await breakdown(model, world, persona, rest, now, spent, first)
        place = place or found
    if unplaced and not place:
        place = await choose_place(model, world, persona, action.description, spent)
    began = Action(start, end - start, action.description, place, action.kind)
    earlier = [a for a in schedule.actions if a.end <= start]
    schedule.actions = [*earlier, began, *later]
    schedule.action = began
    persona.action = began.description
