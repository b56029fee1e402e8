"""Talking to a persona from outside the sim, as the paper's evaluation does: an interview
answered in character from the memories the question retrieves, and the paper's inner voice,
a statement stored as the persona's own thought. Neither moves the game clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from autonoma.errors import ConfigError, ModelError
from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.records import Kind, MemoryRecord
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.memory import TownMemory
from autonoma.sim.persona import Persona
from autonoma.sim.plan import scene, schema_of
from autonoma.sim.world import World
from autonoma.templating import render

RECALLED = 10  # memories an answer draws on


@dataclass(frozen=True)
class Recall:
    """Which memories an answer may draw on: of these kinds (None: all), stored up to this
    game time (None: any)."""

    kinds: tuple[Kind, ...] | None = None
    until: datetime | None = None


async def interview(
    model: Model,
    memory: TownMemory,
    world: World,
    persona: Persona,
    question: str,
    now: datetime,
    spent: BudgetSpent,
    *,
    recall: Recall | None = None,
) -> str:
    """The persona's answer to `question`, from its identity and the memories it retrieves
    (only those `recall` allows: the paper's ablations)."""
    asked = " ".join(question.split())
    if not asked:
        raise ConfigError("the question is empty")
    recall = recall or Recall()
    found = await memory.retrieve(
        persona, asked, now, k=RECALLED, kinds=recall.kinds, until=recall.until
    )
    prompt = render(
        "autonoma.sim",
        "interview.j2",
        identity=persona.spec.identity(),
        who=persona.name,
        **scene(world, persona, now),
        memories=[r.record.text for r in found],
        question=asked[:500],
    )
    schema = schema_of(answer={"type": "string", "minLength": 1, "maxLength": 600})
    answer = await ask(model, prompt, spent, output=schema, max_tokens=300)
    if not isinstance(answer, ModelResponse):
        raise ModelError(f"{persona.name}'s answer could not be used ({answer})")
    return " ".join(str(answer.data["answer"]).split())


async def whisper(
    memory: TownMemory, persona: Persona, statement: str, now: datetime, spent: BudgetSpent
) -> MemoryRecord:
    """The paper's inner voice: `statement` stored as the persona's own thought, rated."""
    said = " ".join(statement.split())
    if not said:
        raise ConfigError("the statement is empty")
    return await memory.think(persona, said[:1000], now, spent)
