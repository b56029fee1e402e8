"""The long-term memory stream: natural-language records in SQLite (WAL), retrieved by a
weighted sum of recency, importance and relevance, as Generative Agents does.

    score = w_recency * recency + w_importance * importance + w_relevance * relevance

Each term is min-max normalised over the candidates (all equal: 0.5 each, as the reference
code does). Recency is `decay ** hours since last access` (the paper's 0.995 per hour),
importance the stored 1-10 score, relevance the cosine similarity of the query's embedding and
the record's. The default weights are the reference implementation's (`gw = [0.5, 3, 2]` in
joonspk-research/generative_agents, retrieve.py): recency 0.5, importance 2, relevance 3.
A read is a write: retrieved records get their last-accessed time set to now.

Several agents of one process and several processes may write at once: every write is one
SQLite transaction (BEGIN IMMEDIATE, with a busy timeout), and each process's index catches up
with records written by others before it searches.

Embeddings also live in a FAISS index beside the database (`memory.db.faiss`). SQLite is the
truth: on open the two are checked against each other, and an index that is missing, corrupt
or disagrees is rebuilt from SQLite with a notice. Up to `ann_from` records every record is
scored; above it, Fagin's threshold algorithm runs over the ANN index (relevance) and SQLite's
indexes (importance, recency) until no unseen record could enter the top k.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError
from autonoma.memory.embeddings import Embedder, Vectors
from autonoma.memory.index import HNSW_FROM, VectorIndex
from autonoma.runtime.sqlite import Database

log = logging.getLogger("autonoma.memory")
# From this many records, retrieval scores candidates rather than every record: fetching and
# scoring all rows costs more than the index search (measured in bench/memory_retrieval.py).
ANN_FROM = 5_000

Kind = Literal["observation", "action", "result", "thought", "plan", "reflection", "chat"]
HOUR = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent TEXT NOT NULL,
    run_id TEXT,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    accessed_at REAL NOT NULL,
    importance INTEGER NOT NULL,
    evidence TEXT NOT NULL DEFAULT '[]'
);
-- Apart from the records, so the scoring columns stay in few pages (1.5 KB a vector).
CREATE TABLE IF NOT EXISTS embeddings (
    id INTEGER PRIMARY KEY REFERENCES records (id),
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS records_agent ON records (agent, created_at);
CREATE INDEX IF NOT EXISTS records_importance ON records (importance, accessed_at);
CREATE INDEX IF NOT EXISTS records_accessed ON records (accessed_at);
"""


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


class NewRecord(BaseModel):
    """What a caller gives to add a record; the store assigns id and times."""

    agent: str
    text: str
    kind: Kind = "observation"
    importance: int = Field(5, ge=1, le=10)
    run_id: str | None = None
    evidence: list[int] = Field(default_factory=list)
    created_at: float | None = None


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


class MemoryStream:
    """One SQLite file holds the records of every agent that shares it."""

    def __init__(
        self,
        path: Path,
        embedder: Embedder,
        *,
        ann_from: int = ANN_FROM,
        hnsw_from: int = HNSW_FROM,
        candidates: int = 200,
    ) -> None:
        self.path = path
        self.index_path = path.with_name(path.name + ".faiss")
        self.embedder = embedder
        self.ann_from = ann_from
        self.hnsw_from = hnsw_from
        self.candidates = candidates
        self.notices: list[str] = []
        self._index_lock = threading.RLock()  # FAISS is not safe for concurrent writes
        # synchronous=NORMAL in WAL mode: durable across a crashed or killed process, not a
        # power cut; a retrieval's access-time update then costs no fsync.
        self._database = Database(
            path,
            _SCHEMA,
            "synchronous=NORMAL",
            "mmap_size=1073741824",  # reads without a syscall a page
            "cache_size=-131072",  # 128 MiB of pages
            "busy_timeout=30000",
        )
        self._lock, self._db, self._tx = (
            self._database.lock,
            self._database.db,
            self._database.tx,
        )
        self._check_embedder()
        self.index = self._open_index()

    def _notice(self, text: str) -> None:
        self.notices.append(text)
        log.warning(text)

    def _open_index(self) -> VectorIndex:
        """The saved index if it agrees with SQLite (caught up with newer records), else one
        rebuilt from SQLite."""
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM records").fetchone()
        if not self.index_path.exists():
            if count:
                self._notice(f"memory index {self.index_path} is missing; rebuilding it")
            return self._rebuild()
        try:
            index = VectorIndex.load(self.index_path, self.embedder.dim, hnsw_from=self.hnsw_from)
        except ValueError as error:
            self._notice(f"memory index {self.index_path} is unusable ({error}); rebuilding it")
            return self._rebuild()
        with self._lock:
            (upto,) = self._db.execute(
                "SELECT COUNT(*) FROM records WHERE id <= ?", (index.max_id,)
            ).fetchone()
        if upto != len(index):
            self._notice(
                f"memory index {self.index_path} holds {len(index)} records where the store "
                f"has {upto}; rebuilding it"
            )
            return self._rebuild()
        self._catch_up(index)
        return index

    def _rebuild(self) -> VectorIndex:
        index = VectorIndex(self.embedder.dim, hnsw_from=self.hnsw_from)
        self._catch_up(index)
        index.save(self.index_path)
        return index

    def _catch_up(self, index: VectorIndex, batch: int = 50_000) -> None:
        """Add the records written since the index last saw one (by any process)."""
        with self._index_lock:
            self._catch_up_locked(index, batch)

    def _catch_up_locked(self, index: VectorIndex, batch: int) -> None:
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT e.id, e.vector FROM embeddings e JOIN records r ON r.id = e.id"
                    " WHERE e.id > ? ORDER BY e.id LIMIT ?",
                    (index.max_id, batch),
                ).fetchall()
            if not rows:
                return
            ids = np.fromiter((r["id"] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            index.add(ids, vectors.reshape(len(rows), -1))

    def save_index(self) -> None:
        with self._index_lock:
            self.index.save(self.index_path)

    def _check_embedder(self) -> None:
        with self._tx() as db:
            rows = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                db.execute("INSERT INTO meta VALUES ('embedder', ?)", (self.embedder.name,))
                db.execute("INSERT INTO meta VALUES ('dim', ?)", (str(self.embedder.dim),))
                return
        if rows["embedder"] != self.embedder.name or int(rows["dim"]) != self.embedder.dim:
            raise EmbeddingMismatch(
                f"the memory in {self.path} was embedded with {rows['embedder']} "
                f"({rows['dim']} dimensions), not {self.embedder.name} "
                f"({self.embedder.dim}): open it with {rows['embedder']}, or re-embed it with "
                "`await MemoryStream.reembed(path, new_embedder)`"
            )

    @classmethod
    async def reembed(cls, path: Path, embedder: Embedder) -> MemoryStream:
        """Embed every record again with `embedder` and make it the store's embedder."""
        db = sqlite3.connect(path, isolation_level=None)
        try:
            rows = db.execute("SELECT id, text FROM records ORDER BY id").fetchall()
            vectors = await embedder.embed([text for _, text in rows]) if rows else None
            db.execute("BEGIN IMMEDIATE")
            for row, (record_id, _) in enumerate(rows):
                assert vectors is not None
                db.execute(
                    "UPDATE embeddings SET vector = ? WHERE id = ?",
                    (vectors[row].tobytes(), record_id),
                )
            db.execute("DELETE FROM meta")
            db.execute("INSERT INTO meta VALUES ('embedder', ?)", (embedder.name,))
            db.execute("INSERT INTO meta VALUES ('dim', ?)", (str(embedder.dim),))
            db.execute("COMMIT")
        finally:
            db.close()
        return cls(path, embedder)

    def close(self) -> None:
        """Save the index and close the database."""
        self.save_index()
        self._database.close()

    async def add(
        self,
        agent: str,
        text: str,
        *,
        kind: Kind = "observation",
        importance: int = 5,
        run_id: str | None = None,
        evidence: Sequence[int] = (),
        created_at: float | None = None,
    ) -> MemoryRecord:
        (record,) = await self.add_many(
            [
                NewRecord(
                    agent=agent,
                    text=text,
                    kind=kind,
                    importance=importance,
                    run_id=run_id,
                    evidence=list(evidence),
                    created_at=created_at,
                )
            ]
        )
        return record

    async def add_many(self, records: Sequence[NewRecord]) -> list[MemoryRecord]:
        """Many records in one transaction (embedded in batches): for imports and bulk loads."""
        if any(not r.text.strip() for r in records):
            raise MemoryStoreError("a memory record needs text")
        vectors = await self.embedder.embed([r.text for r in records])
        now = time.time()
        full = [
            MemoryRecord(
                id=0,
                accessed_at=now if r.created_at is None else r.created_at,
                **r.model_dump(exclude={"created_at"}),
                created_at=now if r.created_at is None else r.created_at,
            )
            for r in records
        ]
        return await asyncio.to_thread(self._insert_many, full, vectors)

    def _insert_many(self, records: list[MemoryRecord], vectors: Vectors) -> list[MemoryRecord]:
        with self._tx() as db:
            (last,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM records").fetchone()
            db.executemany(
                "INSERT INTO records (id, agent, run_id, kind, text, created_at, accessed_at,"
                " importance, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        last + 1 + i,
                        r.agent,
                        r.run_id,
                        r.kind,
                        r.text,
                        r.created_at,
                        r.accessed_at,
                        r.importance,
                        json.dumps(r.evidence),
                    )
                    for i, r in enumerate(records)
                ),
            )
            db.executemany(
                "INSERT INTO embeddings (id, vector) VALUES (?, ?)",
                ((last + 1 + i, vectors[i].tobytes()) for i in range(len(records))),
            )
        self._catch_up(self.index)
        return [r.model_copy(update={"id": last + 1 + i}) for i, r in enumerate(records)]

    def get(self, record_id: int) -> MemoryRecord:
        with self._lock:
            row = self._db.execute("SELECT * FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            raise MemoryStoreError(f"there is no memory record {record_id}")
        return record_from_row(row)

    def count(self, agent: str | None = None) -> int:
        where, params = ("WHERE agent = ?", (agent,)) if agent else ("", ())
        with self._lock:
            (n,) = self._db.execute(f"SELECT COUNT(*) FROM records {where}", params).fetchone()
        return int(n)

    async def retrieve(
        self,
        query: str,
        k: int = 10,
        *,
        weights: RetrievalWeights | None = None,
        agent: str | None = None,
        kinds: Sequence[Kind] | None = None,
        since: float | None = None,
        until: float | None = None,
        now: float | None = None,
    ) -> list[Retrieved]:
        """The k best records by the three-term score. An empty query scores by recency and
        importance alone."""
        weights = weights or RetrievalWeights()
        now = time.time() if now is None else now
        query_vector = await self.embedder.embed_one(query) if query.strip() else None
        return await asyncio.to_thread(
            self._retrieve, query_vector, k, weights, agent, kinds, since, until, now
        )

    def _retrieve(
        self,
        query_vector: Vectors | None,
        k: int,
        weights: RetrievalWeights,
        agent: str | None,
        kinds: Sequence[Kind] | None,
        since: float | None,
        until: float | None,
        now: float,
    ) -> list[Retrieved]:
        self._catch_up(self.index)
        clauses, params = _filters(agent, kinds, since, until)
        if len(self.index) < self.ann_from:
            pool = self._everyone(query_vector, clauses, params)
            terms = _terms(pool, weights, now, None)
        else:
            pool, terms = self._threshold(query_vector, k, weights, now, clauses, params)
        if not len(pool.ids):
            return []
        score, recency, importance, relevance = terms
        top = np.argsort(-score, kind="stable")[:k]
        chosen = [int(pool.ids[i]) for i in top]
        with self._tx() as db:
            db.executemany(
                "UPDATE records SET accessed_at = ? WHERE id = ?", [(now, i) for i in chosen]
            )
            marks = ", ".join("?" for _ in chosen)
            rows = db.execute(f"SELECT * FROM records WHERE id IN ({marks})", chosen).fetchall()
        records = {row["id"]: record_from_row(row) for row in rows}
        return [
            Retrieved(
                record=records[int(pool.ids[i])],
                score=float(score[i]),
                recency=float(recency[i]),
                importance=float(importance[i]),
                relevance=float(relevance[i]),
            )
            for i in top
        ]

    def _everyone(
        self, query_vector: Vectors | None, clauses: str, params: tuple[object, ...]
    ) -> _Pool:
        """Every record that passes the filters, with relevance from the (exact) index."""
        with self._lock:
            light = self._db.execute(
                f"SELECT id, importance, accessed_at FROM records {clauses}", params
            ).fetchall()
        pool = _Pool.of(light)
        if query_vector is None or not len(pool.ids):
            return pool
        with self._index_lock:
            found, sims = self.index.search(query_vector, len(self.index))
        order = np.argsort(found)
        pool.cosine = sims[order][np.searchsorted(found[order], pool.ids)].astype(np.float64)
        return pool

    def _bounds(self, clauses: str, params: tuple[object, ...]) -> tuple[float, ...]:
        """Lowest and highest importance and access time over the filtered records."""
        found = []
        with self._lock:  # one aggregate a query, so SQLite answers each from an index
            for aggregate in ("importance", "accessed_at"):
                for fn in ("MIN", "MAX"):
                    query = f"SELECT {fn}({aggregate}) FROM records {clauses}"
                    found.append(float(self._db.execute(query, params).fetchone()[0]))
        return tuple(found)

    def _threshold(
        self,
        query_vector: Vectors | None,
        k: int,
        weights: RetrievalWeights,
        now: float,
        clauses: str,
        params: tuple[object, ...],
    ) -> tuple[_Pool, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Fagin's threshold algorithm over three sorted lists: the nearest by relevance (the
        ANN index), the most important and the most recently accessed (SQLite indexes). The
        pools double until no record outside them could outscore the k-th best inside."""
        bounds = self._bounds(clauses, params)
        lowest = None
        if query_vector is not None:  # the farthest record is the nearest to -query
            with self._index_lock:
                _, lowest = self.index.search(-query_vector, 1)
        n = max(self.candidates, 2 * k)
        while True:
            pool, edges = self._pools(query_vector, n, clauses, params)
            cosine_range = None
            if lowest is not None and len(lowest) and pool.cosine is not None:
                cosine_range = (-float(lowest[0]), max(edges[3], float(pool.cosine.max())))
            terms = _terms(pool, weights, now, bounds, cosine_range=cosine_range)
            score = terms[0]
            exhausted = n >= len(self.index)  # every record was in some list
            if len(score) >= k and not exhausted:
                kth = float(np.sort(score)[-k])
                importance_edge, accessed_edge, cosine_edge, _, tie_accessed = edges
                # A record in none of the lists is either as important as the importance
                # list's edge but accessed no later than that edge record (the list is ordered
                # by importance, then access), or less important; and no more recent or
                # relevant than the other lists' edges. Integer importance: "less" is -1.
                unseen = _terms(
                    _Pool(
                        ids=np.zeros(2, dtype=np.int64),
                        importance=np.array([importance_edge, importance_edge - 1]),
                        accessed=np.array([min(tie_accessed, accessed_edge), accessed_edge]),
                        cosine=None if pool.cosine is None else np.full(2, cosine_edge),
                    ),
                    weights,
                    now,
                    bounds,
                    cosine_range=cosine_range,
                )[0].max()
                if kth >= unseen:
                    return pool, terms
            elif exhausted or not len(score):
                return pool, terms
            n *= 2

    def _pools(
        self, query_vector: Vectors | None, n: int, clauses: str, params: tuple[object, ...]
    ) -> tuple[_Pool, tuple[float, float, float, float, float]]:
        """The top n of each list, each list's value at its edge (what any record left out of
        that list is at most), the highest cosine, and the importance edge's access time."""
        cosines: dict[int, float] = {}
        cosine_edge = cosine_top = -1.0
        if query_vector is not None:
            with self._index_lock:
                found, sims = self.index.search(query_vector, n * 10 if params else n)
            cosines = dict(zip(found.tolist(), sims.astype(np.float64).tolist(), strict=True))
            if len(sims):
                cosine_edge, cosine_top = float(sims[-1]), float(sims[0])
        wanted = set(cosines)
        edges = []
        with self._lock:
            for order in ("importance DESC, accessed_at DESC", "accessed_at DESC"):
                rows = self._db.execute(
                    f"SELECT id, importance, accessed_at FROM records {clauses} "
                    f"ORDER BY {order} LIMIT ?",
                    (*params, n),
                ).fetchall()
                wanted.update(row[0] for row in rows)
                edges.append(rows[-1] if rows else None)
            marks = ", ".join("?" for _ in wanted)
            where = f"{clauses} AND id IN ({marks})" if clauses else f"WHERE id IN ({marks})"
            light = self._db.execute(
                f"SELECT id, importance, accessed_at FROM records {where}", (*params, *wanted)
            ).fetchall()
        pool = _Pool.of(light)
        if query_vector is not None:
            missing = np.array([i for i in pool.ids.tolist() if i not in cosines], dtype=np.int64)
            with self._index_lock:
                vectors = self.index.vectors(missing)
            cosines.update(zip(missing.tolist(), (vectors @ query_vector).tolist(), strict=True))
            pool.cosine = np.array([cosines[i] for i in pool.ids.tolist()], dtype=np.float64)
        by_importance, by_recency = edges
        return pool, (
            float(by_importance[1]) if by_importance else 0.0,
            float(by_recency[2]) if by_recency else 0.0,
            cosine_edge,
            cosine_top,
            float(by_importance[2]) if by_importance else 0.0,
        )

    # -- reading by time (reflection and working memory use these) ------------------------

    def latest(
        self,
        agent: str,
        n: int,
        *,
        kinds: Sequence[Kind] | None = None,
        run_id: str | None = None,
    ) -> list[MemoryRecord]:
        """The agent's n newest records (of these kinds, of this run), oldest first."""
        clauses, params = _filters(agent, kinds, None, None)
        if run_id is not None:
            clauses += " AND run_id = ?"
            params = (*params, run_id)
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM records {clauses} ORDER BY id DESC LIMIT ?", (*params, n)
            ).fetchall()
        return [record_from_row(row) for row in reversed(rows)]

    def importance_since_reflection(self, agent: str) -> int:
        """The summed importance of the agent's records since its latest reflection: what
        Generative Agents compares with its reflection threshold."""
        with self._lock:
            (total,) = self._db.execute(
                "SELECT COALESCE(SUM(importance), 0) FROM records WHERE agent = ? AND kind !="
                " 'reflection' AND id > (SELECT COALESCE(MAX(id), 0) FROM records"
                " WHERE agent = ? AND kind = 'reflection')",
                (agent, agent),
            ).fetchone()
        return int(total)


@dataclass
class _Pool:
    """Candidates as columns."""

    ids: np.ndarray
    importance: np.ndarray
    accessed: np.ndarray
    cosine: np.ndarray | None = None

    @classmethod
    def of(cls, rows: list[sqlite3.Row]) -> _Pool:
        return cls(
            ids=np.array([r[0] for r in rows], dtype=np.int64),
            importance=np.array([r[1] for r in rows], dtype=np.float64),
            accessed=np.array([r[2] for r in rows], dtype=np.float64),
        )


def _terms(
    pool: _Pool,
    weights: RetrievalWeights,
    now: float,
    bounds: tuple[float, ...] | None,
    *,
    cosine_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Score, recency, importance and relevance of each candidate. With `bounds` (lowest and
    highest importance and access time over every filtered record) and `cosine_range`, the
    terms are normalised as exact scoring over all records would; without, over the pool."""
    decay = weights.decay_per_hour

    def fresh(accessed: np.ndarray | float) -> np.ndarray:
        return np.asarray(decay ** (np.maximum(0.0, now - np.asarray(accessed)) / HOUR))

    if bounds is None:
        recency = _min_max(fresh(pool.accessed))
        importance = _min_max(pool.importance)
    else:
        low_i, high_i, oldest, newest = bounds
        recency = _min_max(fresh(pool.accessed), float(fresh(oldest)), float(fresh(newest)))
        importance = _min_max(pool.importance, low_i, high_i)
    if pool.cosine is None:
        relevance = np.zeros(len(pool.ids))
        w_relevance = 0.0
    else:
        relevance = _min_max(pool.cosine, *(cosine_range or (None, None)))
        w_relevance = weights.relevance
    score = weights.recency * recency + weights.importance * importance + w_relevance * relevance
    return score, recency, importance, relevance


def _filters(
    agent: str | None,
    kinds: Sequence[Kind] | None,
    since: float | None,
    until: float | None,
) -> tuple[str, tuple[object, ...]]:
    clauses: list[str] = []
    params: list[object] = []
    if agent is not None:
        clauses.append("agent = ?")
        params.append(agent)
    if kinds:
        clauses.append(f"kind IN ({', '.join('?' for _ in kinds)})")
        params.extend(kinds)
    if since is not None:
        clauses.append("created_at >= ?")
        params.append(since)
    if until is not None:
        clauses.append("created_at <= ?")
        params.append(until)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _min_max(values: np.ndarray, low: float | None = None, high: float | None = None) -> np.ndarray:
    if not values.size:
        return values.astype(np.float64)
    low = float(values.min()) if low is None else low
    high = float(values.max()) if high is None else high
    if high - low < 1e-12:
        return np.full(values.shape, 0.5)
    return (values - low) / (high - low)


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
    )
