"""Importance (poignancy) of a memory, 1 to 10, as Generative Agents rates it.

`ModelRater` asks the model with the paper's poignancy prompt ("On the scale of 1 to 10, where
1 is purely mundane ... and 10 is extremely poignant ..."), several memories in one request so
a busy agent pays one call per batch, not one per memory (rated alone, the 1.5B model answers
8 to every memory; words in place of numbers did no better: bench/sim_importance.py).
`HeuristicRater` costs nothing: a score from the memory's kind and a few words that mark
failure or success, for runs that opt out of the model calls.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.context import one_line
from autonoma.memory.records import Kind, MemoryRecord, NewRecord
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render

log = logging.getLogger("autonoma.memory")

AGENT_MUNDANE = "listing a folder, reading a file it has just written"
AGENT_POIGNANT = "the goal reached, a key fact found, work lost, a command that keeps failing"


class ImportanceRater(ABC):
    name: str

    @abstractmethod
    async def rate(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        """One score from 1 to 10 a record; what the rating cost is charged to `spent`."""


_BASE: dict[Kind, int] = {
    "reflection": 7,
    "plan": 4,
    "thought": 3,
    "chat": 3,
    "action": 2,
    "result": 3,
    "observation": 3,
}
_FAILURE = re.compile(
    r"\b(error|fail(ed|s|ure)?|refused|denied|exception|traceback|not found|timed? ?out)\b", re.I
)
_SUCCESS = re.compile(
    r"\b(complete[d]?|succeed(ed|s)?|success|solved|goal (is )?met|found)\b", re.I
)
_FACT = re.compile(r"\d|https?://|\b[\w-]+\.(txt|md|py|json|csv|html)\b")


class HeuristicRater(ImportanceRater):
    """No model call: the kind's base score (reflections high, bare actions low), +3 for a
    failure or a success, +1 for a concrete fact (a number, a URL, a file name)."""

    name = "heuristic"

    async def rate(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        return [self.score(r.kind, r.text) for r in records]

    @staticmethod
    def score(kind: Kind, text: str) -> int:
        score = _BASE[kind]
        if _FAILURE.search(text) or _SUCCESS.search(text):
            score += 3
        if _FACT.search(text):
            score += 1
        return max(1, min(10, score))


@dataclass(frozen=True)
class Persona:
    """Whose memories are rated: the prompt's "brief description", and what counts as
    mundane and as poignant for them (the paper's examples suit a person's day, not an agent's
    work, so the agent passes its own)."""

    name: str
    description: str
    mundane: str = AGENT_MUNDANE
    poignant: str = AGENT_POIGNANT


class ModelRater(ImportanceRater):
    """The paper's poignancy prompt, `batch_size` memories a request, the answer constrained to
    exactly one integer from 1 to 10 a memory. An answer that cannot be used after the model
    layer's re-asks falls back to the heuristic for that batch (logged), so no memory is lost
    for want of a rating; a model that cannot be reached raises."""

    name = "model"

    def __init__(
        self, model: Model, persona: Persona, *, batch_size: int = 10, max_chars: int = 600
    ) -> None:
        self.model = model
        self.persona = persona
        self.batch_size = batch_size
        self.max_chars = max_chars  # of each memory shown: poignancy shows in the opening
        self.fallbacks = 0

    async def rate(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        scores: list[int] = []
        for start in range(0, len(records), self.batch_size):
            scores += await self._rate_batch(records[start : start + self.batch_size], spent)
        return scores

    async def _rate_batch(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        prompt = render(
            "autonoma.memory",
            "importance.j2",
            who=f"{self.persona.name}: {self.persona.description}",
            agent_name=self.persona.name,
            mundane=self.persona.mundane,
            poignant=self.persona.poignant,
            texts=[one_line(r.text, self.max_chars) for r in records],
        )
        answer = await ask(
            self.model,
            prompt,
            spent,
            output=ratings_schema(len(records)),
            max_tokens=8 * len(records) + 32,
            temperature=0.0,
        )
        if not isinstance(answer, ModelResponse):
            self.fallbacks += 1
            log.warning("importance rating failed (%s); rated by the heuristic instead", answer)
            return [HeuristicRater.score(r.kind, r.text) for r in records]
        return [int(x) for x in answer.data["ratings"]]


def ratings_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "ratings": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 10},
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": ["ratings"],
    }


async def add_rated(
    stream: MemoryStream, rater: ImportanceRater, records: Sequence[NewRecord], spent: BudgetSpent
) -> list[MemoryRecord]:
    """Store the records with the importance `rater` gives them."""
    scores = await rater.rate(records, spent)
    return await stream.add_many(
        [r.model_copy(update={"importance": s}) for r, s in zip(records, scores, strict=True)]
    )
