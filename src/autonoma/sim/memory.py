"""The personas' memory streams: one memory file a sim, each persona an agent in it, and game
time as the clock, so recency counts game hours since a memory was last used (the paper's).
Each persona's observations are rated for importance once: an event it has rated before
(the stove still idle) costs no model call, nor does an idle one (1, as the reference rates
it)."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from autonoma.llm import Model
from autonoma.memory.importance import ImportanceRater, ModelRater
from autonoma.memory.importance import Persona as Rated
from autonoma.memory.records import Kind, MemoryRecord, NewRecord, Retrieved, record_from_row
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim.perceive import RETENTION, Event
from autonoma.sim.persona import Persona

# What the paper's poignancy prompt gives as mundane and as poignant in a person's day.
MUNDANE = "brushing teeth, making bed"
POIGNANT = "a break up, college acceptance"


def game_seconds(when: datetime) -> float:
    """A game time as the memory stream's clock reads it (seconds, the time taken as UTC)."""
    return when.replace(tzinfo=UTC).timestamp()


def rated(persona: Persona) -> Rated:
    """The persona as memory's prompts describe it: its own description and a person's day's
    examples of mundane and poignant."""
    spec = persona.spec
    return Rated(persona.name, f"{spec.innate}. {spec.currently}", MUNDANE, POIGNANT)


def town_raters(model: Model, personas: Sequence[Persona]) -> dict[str, ImportanceRater]:
    """Each persona's importance rater: the paper's poignancy prompt about that persona."""
    return {p.name: ModelRater(model, rated(p)) for p in personas}


class TownMemory:
    """Every persona's memories in one stream; `raters` gives each persona's rater (the
    prompt's "brief description" is the persona's own)."""

    def __init__(self, stream: MemoryStream, raters: dict[str, ImportanceRater]) -> None:
        self.stream = stream
        self.raters = raters
        self._rated: dict[tuple[str, str], int] = {}  # (persona, text): importance given
        self._latest: dict[str, deque[str]] = {}  # a persona's newest observations, kept
        self._since: dict[str, int] = {}  # importance stored since the persona last reflected

    async def seed(
        self, persona: Persona, when: datetime, spent: BudgetSpent, *, whispers: Sequence[str] = ()
    ) -> bool:
        """The persona's seed memories, and what a scenario whispers to it, as its own
        thoughts at the start (once: False if it has memories already)."""
        if self.stream.count(persona.name):
            return False
        texts = [*persona.spec.seed_memories(), *whispers]
        await self._store(persona, texts, "thought", when, spent)
        return True

    def latest(self, persona: Persona, n: int = RETENTION) -> list[str]:
        """The texts of the persona's n newest observations (perceive skips events among
        them)."""
        kept = self._latest.get(persona.name)
        if kept is None or kept.maxlen != n:  # read once; kept up to date by observe
            records = self.stream.latest(persona.name, n, kinds=["observation"])
            kept = self._latest[persona.name] = deque((r.text for r in records), maxlen=n)
        return list(kept)

    async def observe(
        self, persona: Persona, events: Sequence[Event], when: datetime, spent: BudgetSpent
    ) -> list[MemoryRecord]:
        """Store what the persona perceived, each rated for importance."""
        texts = [e.description for e in events]
        stored = await self._store(persona, texts, "observation", when, spent)
        kept = self._latest.get(persona.name)
        if kept is not None:
            kept.extend(texts)
        return stored

    async def think(
        self, persona: Persona, text: str, when: datetime, spent: BudgetSpent
    ) -> MemoryRecord:
        """A thought of the persona's own (the paper's inner voice, a conclusion drawn)."""
        return await self.remember(persona, text, "thought", when, spent)

    async def remember(
        self, persona: Persona, text: str, kind: Kind, when: datetime, spent: BudgetSpent
    ) -> MemoryRecord:
        """One memory of the persona's (a conversation, a thought), rated."""
        (record,) = await self._store(persona, [text], kind, when, spent)
        return record

    def importance_since_reflection(self, persona: Persona) -> int:
        """What the paper compares with its reflection threshold, kept as memories are
        stored (read from the stream once), so asking costs no query a step."""
        if persona.name not in self._since:
            self._since[persona.name] = self.stream.importance_since_reflection(persona.name)
        return self._since[persona.name]

    def reflected(self, persona: Persona) -> None:
        self._since[persona.name] = 0

    async def retrieve(
        self,
        persona: Persona,
        query: str,
        when: datetime,
        k: int = 10,
        *,
        kinds: Sequence[Kind] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[Retrieved]:
        """The persona's k memories best by recency (in game hours), importance and
        relevance to `query` (of these kinds, stored from `since` up to `until`); their last
        use set to `when`."""
        return await self.stream.retrieve(
            query,
            k,
            agent=persona.name,
            kinds=kinds,
            since=None if since is None else game_seconds(since),
            until=None if until is None else game_seconds(until),
            now=game_seconds(when),
        )

    async def _store(
        self,
        persona: Persona,
        texts: Sequence[str],
        kind: Kind,
        when: datetime,
        spent: BudgetSpent,
    ) -> list[MemoryRecord]:
        at = game_seconds(when)
        records = [
            NewRecord(agent=persona.name, text=text, kind=kind, created_at=at) for text in texts
        ]
        unrated = [
            r for r in records if (persona.name, r.text) not in self._rated and not _idle(r.text)
        ]
        if unrated:
            scores = await self.raters[persona.name].rate(unrated, spent)
            for record, score in zip(unrated, scores, strict=True):
                self._rated[(persona.name, record.text)] = score
        rated = [
            r.model_copy(update={"importance": self._importance(persona, r.text)}) for r in records
        ]
        since = self.importance_since_reflection(persona)
        self._since[persona.name] = since + sum(r.importance for r in rated)
        return await self.stream.add_many(rated)

    def _importance(self, persona: Persona, text: str) -> int:
        return 1 if _idle(text) else self._rated[(persona.name, text)]


def _idle(text: str) -> bool:
    return text.endswith(" is idle")


def stored_memories(
    path: Path, persona: str, limit: int, kinds: Sequence[Kind] | None = None
) -> list[MemoryRecord]:
    """A persona's newest memories (of these kinds), newest first, read straight from the
    sim's memory file (no embedder needed: for the viewer and `show`); none if it has none."""
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        where, params = "agent = ?", [persona]
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += list(kinds)
        rows = db.execute(
            f"SELECT * FROM records WHERE {where} ORDER BY id DESC LIMIT ?", (*params, limit)
        ).fetchall()
        return [record_from_row(row) for row in rows]
    finally:
        db.close()
