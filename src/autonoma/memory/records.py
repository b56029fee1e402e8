"""What the memory stream stores and gives back: records, what a caller adds, retrieval's
weights and results, and the store's errors."""

from __future__ import annotations

import json
import sqlite3
from typing import Literal

from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError

Kind = Literal["observation", "action", "result", "thought", "plan", "reflection", "chat"]


HOUR = 3600.0


class MemoryStoreError(AutonomaError):
    """The memory store cannot be used as asked."""


class EmbeddingMismatch(MemoryStoreError):
    """The store was embedded by another model than the one it is opened with."""


class MemoryRecord(BaseModel):
    id: int
    agent: str
    run_id: str | None = None
    kind: Kind
    text: str
    created_at: float
    accessed_at: float
    importance: int = Field(ge=1, le=10)
    evidence: list[int] = Field(default_factory=list)  # a reflection's supporting records
    # made from outside content (a page, a file the run did not write): recalled, it is
    # data to use, not instructions, and it marks the recalling run as a page would
    outside: bool = False


class NewRecord(BaseModel):
    """What a caller gives to add a record; the store assigns id and times."""

    agent: str
    text: str
    kind: Kind = "observation"
    importance: int = Field(5, ge=1, le=10)
    run_id: str | None = None
    evidence: list[int] = Field(default_factory=list)
    created_at: float | None = None
    outside: bool = False


class RetrievalWeights(BaseModel):
    recency: float = 0.5
    importance: float = 2.0
    relevance: float = 3.0
    decay_per_hour: float = Field(0.995, gt=0, le=1)


class Retrieved(BaseModel):
    record: MemoryRecord
    score: float
    recency: float  # each term normalised to [0, 1] over the candidates
    importance: float
    relevance: float


def record_from_row(row: sqlite3.Row) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"],
        agent=row["agent"],
        run_id=row["run_id"],
        kind=row["kind"],
        text=row["text"],
        created_at=row["created_at"],
        accessed_at=row["accessed_at"],
        importance=row["importance"],
        evidence=json.loads(row["evidence"]),
        outside=bool(row["outside"]),
    )
