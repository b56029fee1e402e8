"""Deduplication: a proposed task that means the same as a task already in the plan is merged
into it, not added.

Two steps: the cosine similarity of the task texts' embeddings picks the existing tasks close
enough to be the same (cheap, no model call), then the model says yes or no for each of those
in one small schema-constrained answer, most similar first. Similar wording is not the same
work ("population of Tokyo" and "population of Osaka"), which is why the model decides.

The default threshold, 0.75, is measured with all-MiniLM-L6-v2 on task texts: paraphrases
scored 0.80 to 0.93 ("Search the web for the population of Tokyo" / "Look up how many people
live in Tokyo online" 0.80), tasks on another subject 0.66 to 0.83 (Mars / Venus facts 0.67,
Tokyo / Osaka 0.83), unrelated tasks below 0.35. Another embedder needs its own threshold
(the lexical one scores word overlap, not meaning: its paraphrases fall as low as 0.15).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.embeddings import Embedder
from autonoma.planning.graph import Task
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render

log = logging.getLogger("autonoma.planning")

DEFAULT_THRESHOLD = 0.75
"""Cosine similarity above which all-MiniLM-L6-v2 task texts are checked with the model."""


class SameAnswer(BaseModel):
    """The model's verdict on two tasks."""

    same: bool


@dataclass(frozen=True)
class Duplicate:
    """A proposed task is the same work as existing task `id`."""

    id: str
    similarity: float


@dataclass
class Deduplicator:
    """Finds the existing task a proposed one duplicates. `checks` counts model checks asked,
    `failures` those whose answer was unusable (counted as "not the same")."""

    embedder: Embedder
    model: Model
    threshold: float = DEFAULT_THRESHOLD
    max_checks: int = 2  # most similar tasks above the threshold the model is asked about
    max_tokens: int = 32
    checks: int = 0
    failures: int = 0

    async def similar(self, text: str, tasks: Sequence[Task]) -> list[tuple[Task, float]]:
        """The tasks whose text's cosine similarity to `text` is at least the threshold, most
        similar first (ties in the given order)."""
        if not tasks:
            return []
        vectors = await self.embedder.embed([text, *(t.task for t in tasks)])
        scores = vectors[1:] @ vectors[0]
        found = [
            (task, float(score))
            for task, score in zip(tasks, scores, strict=True)
            if float(score) >= self.threshold
        ]
        return sorted(found, key=lambda pair: -pair[1])

    async def same(
        self, proposed: str, existing: Task, spent: BudgetSpent, *, goal: str = ""
    ) -> bool | None:
        """Whether the model says `proposed` is the same work as `existing`; None when its
        answer was unusable. The answer's cost is charged to `spent` either way."""
        prompt = render(
            "autonoma.planning", "dedup.j2", goal=goal, existing=existing.task, proposed=proposed
        )
        self.checks += 1
        answer = await ask(
            self.model,
            prompt,
            spent,
            output=SameAnswer,
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        if not isinstance(answer, ModelResponse):
            self.failures += 1
            log.warning("duplicate check of %r failed (%s); taken as different", proposed, answer)
            return None
        verdict: SameAnswer = answer.data
        return verdict.same

    async def duplicate_of(
        self, proposed: str, tasks: Sequence[Task], spent: BudgetSpent, *, goal: str = ""
    ) -> Duplicate | None:
        """The task among `tasks` that `proposed` (a task text) means the same as: the most
        similar one above the threshold that the model confirms. None when there is none."""
        for task, score in (await self.similar(proposed, tasks))[: self.max_checks]:
            if await self.same(proposed, task, spent, goal=goal):
                return Duplicate(task.id, score)
        return None
