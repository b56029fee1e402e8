"""Two personas talking, as the paper's agents do: turns taken in order, at most `TURNS`
utterances each, each written from the speaker's identity, what it remembers of the other
and of what was just said, and the conversation so far, with an explicit end; then each
stores the conversation and what it concluded from it, and both spend as long as saying it
takes talking (the rest of their blocks planned again after it)."""

from __future__ import annotations

import math
from datetime import datetime

from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.memory import TownMemory
from autonoma.sim.persona import Persona
from autonoma.sim.plan import asked, persona_prompt, scene, schema_of
from autonoma.sim.world import World
from autonoma.templating import render

TURNS = 8  # utterances each, at most
RECALLED = 5  # memories of the other, and of what was just said
WORDS_A_MINUTE = 150  # how long saying it takes
STORED_CHARS = 1500  # of the conversation, in each persona's memory

Line = tuple[str, str]  # (speaker, utterance)
UTTERANCE = schema_of(
    utterance={"type": "string", "minLength": 1, "maxLength": 240}, end={"type": "boolean"}
)
TAKEAWAY = schema_of(
    about={"type": "string", "minLength": 3, "maxLength": 60},
    conclusion={"type": "string", "minLength": 5, "maxLength": 200},
)


async def converse(
    model: Model,
    memory: TownMemory,
    world: World,
    first: Persona,
    second: Persona,
    now: datetime,
    spent: BudgetSpent,
    *,
    turns: int = TURNS,
) -> list[Line]:
    """The conversation `first` begins with `second`, until one of them ends it or each has
    spoken `turns` times."""
    of_other: dict[str, list[str]] = {}
    for speaker, other in ((first, second), (second, first)):
        found = await memory.retrieve(speaker, other.name, now, k=RECALLED)
        of_other[speaker.name] = [r.record.text for r in found]
    lines: list[Line] = []
    for turn in range(2 * turns):
        speaker, listener = (first, second) if turn % 2 == 0 else (second, first)
        recalled = list(of_other[speaker.name])
        if lines:
            just_said = await memory.retrieve(speaker, lines[-1][1], now, k=RECALLED)
            recalled += [r.record.text for r in just_said if r.record.text not in recalled]
        prompt = render(
            "autonoma.sim",
            "utterance.j2",
            identity=speaker.spec.identity(),
            who=speaker.name,
            other=listener.name,
            **scene(world, speaker, now),
            other_doing=listener.action,
            memories=recalled,
            lines=lines,
            last_turn=turn >= 2 * turns - 2,
        )
        data = await asked(
            model, prompt, spent, UTTERANCE, max_tokens=120, who=speaker.name, what="conversation"
        )
        said = " ".join(str(data["utterance"]).split())
        if said:
            lines.append((speaker.name, said))
        if data["end"] or not said:
            break
    return lines


def speaking_minutes(lines: list[Line]) -> int:
    """How long the conversation takes to say, in whole minutes (at least one)."""
    words = sum(len(said.split()) for _, said in lines)
    return max(1, math.ceil(words / WORDS_A_MINUTE))


def transcript(lines: list[Line]) -> str:
    return "\n".join(f"{who}: {said}" for who, said in lines)


async def conclude(
    model: Model,
    memory: TownMemory,
    persona: Persona,
    other: Persona,
    lines: list[Line],
    now: datetime,
    spent: BudgetSpent,
) -> str:
    """What the conversation was about, for `persona`; stored in its memory with the
    conversation itself and what it concluded from it."""
    prompt = persona_prompt("conversation_memory.j2", persona, now, other=other.name, lines=lines)
    data = await asked(
        model, prompt, spent, TAKEAWAY, max_tokens=120, who=persona.name, what="conversation"
    )
    about = " ".join(str(data["about"]).split()).rstrip(".")
    conclusion = " ".join(str(data["conclusion"]).split())
    said = f"{persona.name} talked with {other.name} about {about}:\n{transcript(lines)}"
    await memory.remember(persona, said[:STORED_CHARS], "chat", now, spent)
    await memory.remember(persona, conclusion, "thought", now, spent)
    return about
