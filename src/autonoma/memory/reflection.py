"""Reflection synthesis, as Generative Agents does it.

When the summed importance of an agent's records since its last reflection passes a threshold
(150 in the paper), take its most recent records (100), ask the model for the 3 most salient
high-level questions they raise, retrieve the records relevant to each question, and ask for
insights that each cite their evidence by number ("insight (because of 1, 5, 3)"). Each insight
becomes a reflection record pointing at its evidence. Reflections are retrieved like any other
record, so they can be the evidence of later reflections, and reflection trees grow.

The citations come back as structured JSON (the answer is constrained to a schema) rather than
as text to parse; numbers that name no statement are dropped, and an insight left with no
evidence is not stored.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.context import one_line
from autonoma.memory.importance import ImportanceRater, Persona, add_rated
from autonoma.memory.records import MemoryRecord, NewRecord, record_from_row
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render

log = logging.getLogger("autonoma.memory")


@dataclass(frozen=True)
class ReflectionSettings:
    threshold: int = 150  # summed importance since the last reflection (the paper's)
    recent: int = 100  # records the questions are asked about (the paper's)
    questions: int = 3  # (the paper's)
    insights: int = 5  # a question (the paper's)
    evidence: int = 10  # records retrieved for each question
    statement_chars: int = 300  # of each record shown


@dataclass
class ReflectionOutcome:
    questions: list[str] = field(default_factory=list)
    reflections: list[MemoryRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # answers that could not be used


class Reflector:
    def __init__(
        self,
        model: Model,
        stream: MemoryStream,
        rater: ImportanceRater,
        persona: Persona,
        settings: ReflectionSettings | None = None,
    ) -> None:
        self.model = model
        self.stream = stream
        self.rater = rater
        self.persona = persona
        self.settings = settings or ReflectionSettings()

    def due(self, agent: str) -> bool:
        return self.stream.importance_since_reflection(agent) >= self.settings.threshold

    async def reflect(
        self,
        agent: str,
        spent: BudgetSpent,
        *,
        run_id: str | None = None,
        now: float | None = None,
    ) -> ReflectionOutcome:
        """Questions from the recent records, then insights with evidence for each. `now` is
        the stream's clock where it is not the wall's (a sim's game time): recency is
        counted to it and the insights are stored at it."""
        outcome = ReflectionOutcome()
        recent = self._fitting(self.stream.latest(agent, self.settings.recent), keep_last=True)
        if not recent:
            return outcome
        answer = await self._ask(
            "reflection_questions.j2",
            _questions_schema(self.settings.questions),
            spent,
            outcome,
            statements=self._statements(recent),
            n=self.settings.questions,
        )
        if answer is None:
            return outcome
        outcome.questions = [q.strip() for q in answer["questions"] if q.strip()]
        new: list[NewRecord] = []
        for question in outcome.questions:
            found = await self.stream.retrieve(
                question, self.settings.evidence, agent=agent, now=now
            )
            evidence = self._fitting([r.record for r in found])
            if not evidence:
                continue
            answer = await self._ask(
                "reflection_insights.j2",
                _insights_schema(self.settings.insights, len(evidence)),
                spent,
                outcome,
                statements=self._statements(evidence),
                question=question,
                n=self.settings.insights,
            )
            for insight in [] if answer is None else answer["insights"]:
                cited = sorted(
                    {evidence[i - 1].id for i in insight["because_of"] if 1 <= i <= len(evidence)}
                )
                text = insight["insight"].strip()
                if text and cited:
                    # an insight drawn from outside content is outside content too
                    outside = any(e.outside for e in evidence if e.id in cited)
                    new.append(
                        NewRecord(
                            agent=agent,
                            text=text,
                            kind="reflection",
                            run_id=run_id,
                            evidence=cited,
                            outside=outside,
                            created_at=now,
                        )
                    )
        if new:
            outcome.reflections = await add_rated(self.stream, self.rater, new, spent)
        return outcome

    def _fitting(
        self, records: list[MemoryRecord], *, keep_last: bool = False
    ) -> list[MemoryRecord]:
        """As many records as fit the model's context with room for the instructions and the
        answer, at a cautious three characters a token (a 100-record prompt overflows a small
        model's window): the first ones, or with `keep_last` the last (the newest)."""
        room = max(1000, (self.model.context_window - 1200) * 3)
        order = records[::-1] if keep_last else records
        kept: list[MemoryRecord] = []
        for record in order:
            room -= min(len(record.text), self.settings.statement_chars) + 8
            if room < 0:
                break
            kept.append(record)
        return kept[::-1] if keep_last else kept

    def _statements(self, records: Sequence[MemoryRecord]) -> list[str]:
        return [one_line(record.text, self.settings.statement_chars) for record in records]

    async def _ask(
        self,
        template: str,
        schema: dict[str, Any],
        spent: BudgetSpent,
        outcome: ReflectionOutcome,
        **values: Any,
    ) -> dict[str, Any] | None:
        prompt = render(
            "autonoma.memory",
            template,
            who=f"{self.persona.name} ({self.persona.description})",
            **values,
        )
        answer = await ask(self.model, prompt, spent, output=schema, max_tokens=700)
        if not isinstance(answer, ModelResponse):
            outcome.problems.append(f"{template}: {answer}")
            log.warning("reflection answer unusable (%s)", answer)
            return None
        data: dict[str, Any] = answer.data
        return data


def _questions_schema(n: int) -> dict[str, Any]:
    question = {"type": "string", "minLength": 5, "maxLength": 200}
    return {
        "type": "object",
        "properties": {
            "questions": {"type": "array", "items": question, "minItems": n, "maxItems": n}
        },
        "required": ["questions"],
    }


def _insights_schema(n: int, statements: int) -> dict[str, Any]:
    insight = {
        "type": "object",
        "properties": {
            "insight": {"type": "string", "minLength": 5, "maxLength": 300},
            "because_of": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": statements},
                "minItems": 1,
                "maxItems": 8,
            },
        },
        "required": ["insight", "because_of"],
    }
    return {
        "type": "object",
        "properties": {
            "insights": {"type": "array", "items": insight, "minItems": 1, "maxItems": n}
        },
        "required": ["insights"],
    }


@dataclass(frozen=True)
class ReflectionTree:
    """A reflection and its evidence, each of which may be a reflection with evidence."""

    record: MemoryRecord
    evidence: list[ReflectionTree]

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record.model_dump(),
            "evidence": [tree.to_json() for tree in self.evidence],
        }


def reflection_trees(path: Path, run_id: str, depth: int = 3) -> list[ReflectionTree]:
    """A run's reflections with their evidence, read straight from the store's SQLite (no
    embedder or index needed): for `autonoma show`."""
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        rows = db.execute(
            "SELECT * FROM records WHERE run_id = ? AND kind = 'reflection' ORDER BY id", (run_id,)
        ).fetchall()

        def tree(record: MemoryRecord, level: int) -> ReflectionTree:
            if level >= depth or not record.evidence:
                return ReflectionTree(record, [])
            marks = ", ".join("?" for _ in record.evidence)
            found = db.execute(
                f"SELECT * FROM records WHERE id IN ({marks}) ORDER BY id", record.evidence
            ).fetchall()
            return ReflectionTree(record, [tree(record_from_row(row), level + 1) for row in found])

        return [tree(record_from_row(row), 0) for row in rows]
    finally:
        db.close()
