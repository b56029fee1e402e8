"""The long-term memory stream: natural-language records in SQLite (WAL), retrieved by a
weighted sum of recency, importance and relevance, as Generative Agents does.

    score = w_recency * recency + w_importance * importance + w_relevance * relevance

Each term is min-max normalised over every record that passes the filters (all equal: 0.5
each, as the reference code does). Recency is `decay ** hours since last access` (the paper's
0.995 per hour), importance the stored 1-10 score, relevance the cosine similarity of the
query's embedding and the record's. The default weights are the reference implementation's
(`gw = [0.5, 3, 2]` in joonspk-research/generative_agents, retrieve.py): recency 0.5,
importance 2, relevance 3. A read is a write: retrieved records get their last-accessed time
set to now.

Several agents of one process and several processes may write at once: every write is one
SQLite transaction (BEGIN IMMEDIATE, with a busy timeout), and before it searches each process
catches up with the records others wrote and the access times their retrievals set.

Embeddings also live in a FAISS index beside the database (`memory.db.faiss`). SQLite is the
truth: on open the two are checked against each other, and an index that is missing, corrupt
or disagrees is rebuilt from SQLite with a notice.

Retrieval reads no SQLite until it has chosen: every record's scoring columns (importance,
last access, creation time, owner, kind) are also kept in memory (`Columns`), caught up like
the index. Up to `ann_from` records that pass the filters, every one is scored; above it, a
threshold algorithm over the ANN index (relevance) and the columns (recency and importance)
scores only records that could still enter the top k.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from autonoma.memory.columns import Columns, filters
from autonoma.memory.embeddings import Embedder, Vectors
from autonoma.memory.index import HNSW_FROM, VectorIndex
from autonoma.memory.records import (
    EmbeddingMismatch,
    Kind,
    MemoryRecord,
    MemoryStoreError,
    NewRecord,
    RetrievalWeights,
    Retrieved,
    record_from_row,
)
from autonoma.memory.scoring import Scale, Terms
from autonoma.runtime.sqlite import Database

log = logging.getLogger("autonoma.memory")
# Above this many records that pass the filters, retrieval scores candidates rather than
# every record (measured in bench/memory_retrieval.py).
ANN_FROM = 5_000
# The threshold algorithm scores up to this many records a place of the ANN list's depth
# before it searches twice as deep instead: at 1M records a place of HNSW search costs 3 to
# 5 us (400 deep: 1.3 ms, 800: 4 ms), reading one vector and scoring it 0.5 to 1 us.
EXACT_PER_DEPTH = 8
# With filters, how far the list nearest to -query is read for the lowest passing cosine.
FAR_LIST = 64
# HNSW keeps as many candidates as the nearest list is long: twice as many found no more of
# the true nearest (about 97% at 1M either way; the rest the graph hardly reaches) at up to
# three times the cost. The search for the lowest cosine keeps 128.
FAR_EF = 128
# The access log keeps about this many latest entries (trimmed every ACCESS_LOG_TRIM); a
# process that falls further behind rereads every access time.
ACCESS_LOG_KEEP = 100_000
ACCESS_LOG_TRIM = 10_000
# Pages written (roughly counted) between two checkpoints of the write-ahead log: SQLite's
# own default.
CHECKPOINT_PAGES = 1000


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
    evidence TEXT NOT NULL DEFAULT '[]',
    outside INTEGER NOT NULL DEFAULT 0
);
-- Apart from the records, so the scoring columns stay in few pages (1.5 KB a vector).
CREATE TABLE IF NOT EXISTS embeddings (
    id INTEGER PRIMARY KEY REFERENCES records (id),
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS records_agent ON records (agent, created_at);
-- Retrieval ranks by importance and access time in memory (Columns): without SQLite indexes
-- on them, a retrieval's access-time update rewrites one page a record, not three.
DROP INDEX IF EXISTS records_importance;
DROP INDEX IF EXISTS records_accessed;
-- Access times set by retrievals, in order: another process applies these to its in-memory
-- columns instead of rereading every record.
CREATE TABLE IF NOT EXISTS accesses (
    seq INTEGER PRIMARY KEY,
    id INTEGER NOT NULL,
    accessed_at REAL NOT NULL
);
"""


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
        # Guards the index (FAISS is not safe for concurrent writes) and the in-memory columns.
        self._index_lock = threading.RLock()
        # synchronous=NORMAL in WAL mode: durable across a crashed or killed process, not a
        # power cut; a retrieval's access-time update then costs no fsync.
        self._database = Database(
            path,
            _SCHEMA,
            "synchronous=NORMAL",
            "mmap_size=1073741824",  # reads without a syscall a page
            "cache_size=-131072",  # 128 MiB of pages
            "busy_timeout=30000",
            "wal_autocheckpoint=0",  # checkpoints run on a thread of their own (_wrote)
        )
        self._lock, self._db, self._tx = (
            self._database.lock,
            self._database.db,
            self._database.tx,
        )
        self._database.add_columns({"records": ["outside INTEGER NOT NULL DEFAULT 0"]})
        self._check_embedder()
        self._columns = Columns()
        self._data_version: int | None = None
        self._depths: deque[int] = deque(maxlen=16)  # how deep recent ANN lists had to be
        self._helper: ThreadPoolExecutor | None = None
        self._checkpoints = ThreadPoolExecutor(1, thread_name_prefix="autonoma-checkpoint")
        self._checkpointer: sqlite3.Connection | None = None  # the checkpoint thread's own
        self._unchecked = 0  # pages written since the last checkpoint, about
        with self._lock:  # log entries from here on are applied to the columns read below
            (self._columns.seq,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM accesses"
            ).fetchone()
        self.index = self._open_index()
        self._sync(force=True)

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

    def _sync(self, *, force: bool = False) -> None:
        """Bring the index and the columns up to date with what other connections (other
        processes, other streams) wrote: new records, and access times their retrievals set.
        One PRAGMA when no other connection has committed since the last look."""
        with self._index_lock:
            with self._lock:
                (version,) = self._db.execute("PRAGMA data_version").fetchone()
            if version == self._data_version and not force:
                return
            self._data_version = version
            self._catch_up(self.index)
            self._catch_up_columns()
            self._columns.tidy()  # the first sort happens here, at open

    def _catch_up_columns(self) -> None:
        """The access log first, then new records up to the index's last (so every record in
        the columns is in the index): a record read after a log entry is read with it."""
        columns = self._columns
        with self._lock:
            cursor = self._db.cursor()
            cursor.row_factory = None  # plain tuples: a million rows at open
            log = cursor.execute(
                "SELECT seq, id, accessed_at FROM accesses WHERE seq > ? ORDER BY seq",
                (columns.seq,),
            ).fetchall()
            if log and log[0][0] != columns.seq + 1:  # entries we never read were trimmed
                columns.reload_accessed(
                    cursor.execute(
                        "SELECT id, accessed_at FROM records WHERE id <= ?", (columns.max_id,)
                    ).fetchall()
                )
            elif log:
                columns.touch(
                    np.array([row[1] for row in log], dtype=np.int64),
                    np.array([row[2] for row in log], dtype=np.float64),
                )
            if log:
                columns.seq = log[-1][0]
            columns.extend(
                cursor.execute(
                    "SELECT id, agent, kind, created_at, accessed_at, importance FROM records"
                    " WHERE id > ? AND id <= ? ORDER BY id",
                    (columns.max_id, self.index.max_id),
                )
            )

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
        if self._helper is not None:
            self._helper.shutdown()
        self._checkpoints.submit(self._checkpoint, close=True)
        self._checkpoints.shutdown()

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
        outside: bool = False,
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
                    outside=outside,
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
                " importance, evidence, outside) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        int(r.outside),
                    )
                    for i, r in enumerate(records)
                ),
            )
            db.executemany(
                "INSERT INTO embeddings (id, vector) VALUES (?, ?)",
                ((last + 1 + i, vectors[i].tobytes()) for i in range(len(records))),
            )
        self._wrote(2 + (vectors.nbytes + 200 * len(records)) // 4096)  # vectors and rows
        self._sync(force=True)
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
        with self._index_lock:  # guards the columns as well as the index
            self._sync()
            columns = self._columns
            mask = columns.mask(agent, kinds, since, until)
            ranked = self._rank(query_vector, k, weights, now, mask)
            if ranked is None:
                return []
            pool, (score, recency, importance, relevance) = ranked
            top = np.lexsort((pool, -score))[:k]  # ties: the older record first
            chosen = [int(i) for i in columns.ids[pool[top]]]
        records = self._touch(chosen, now)
        return [
            Retrieved(
                record=records[record_id],
                score=float(score[i]),
                recency=float(recency[i]),
                importance=float(importance[i]),
                relevance=float(relevance[i]),
            )
            for record_id, i in zip(chosen, top, strict=True)
        ]

    def _rank(
        self,
        query_vector: Vectors | None,
        k: int,
        weights: RetrievalWeights,
        now: float,
        mask: np.ndarray | None,
    ) -> tuple[np.ndarray, Terms] | None:
        """Candidates (positions in the columns) that hold the k best records that pass
        `mask`, and their terms; None if no record passes."""
        columns = self._columns
        passing = columns.n if mask is None else int(np.count_nonzero(mask))
        if not passing:
            return None
        columns.tidy()
        scale = Scale(weights, now, *columns.bounds(mask))
        if query_vector is None:  # recency and importance alone: the heads of the runs
            pool = columns.best(k, mask)
            return pool, scale.terms(columns.importance[pool], columns.accessed[pool], None)
        if passing <= self.ann_from:
            return self._everyone(query_vector, scale, mask)
        return self._threshold(query_vector, k, scale, mask, passing)

    def _everyone(
        self, query_vector: Vectors, scale: Scale, mask: np.ndarray | None
    ) -> tuple[np.ndarray, Terms]:
        """Every record that passes `mask`, scored."""
        columns = self._columns
        pool = np.arange(columns.n) if mask is None else np.flatnonzero(mask)
        cosine = self.index.similarities(query_vector, columns.ids[pool]).astype(np.float64)
        scale.cosine = (float(cosine.min()), float(cosine.max()))
        return pool, scale.terms(columns.importance[pool], columns.accessed[pool], cosine)

    def _threshold(
        self,
        query_vector: Vectors,
        k: int,
        scale: Scale,
        mask: np.ndarray | None,
        passing: int,
    ) -> tuple[np.ndarray, Terms]:
        """A threshold algorithm over two sorted lists: the records nearest the query (the ANN
        index) and the records best by recency and importance together (the columns' runs).

        The index's list, `depth` long, is scored; its k-th best score is a floor the answer
        reaches. A record outside that list is no more relevant than the list's last record,
        so it can only reach the floor if its recency and importance part exceeds the floor
        less that relevance: the runs give every such record at once, and those are scored
        too. If there are too many of them (`EXACT_PER_DEPTH` times the depth: more than a
        deeper search would cost), the list doubles instead."""
        # Start as deep as recent retrievals needed (a store's need grows with its size, and
        # each doubling repeats the search), and deep enough to hold k passing records.
        least = max(self.candidates, 2 * k)
        depth = max(least, sorted(self._depths)[len(self._depths) // 2] if self._depths else 0)
        depth = max(depth, 2 * k * self._columns.n // passing)
        if passing <= EXACT_PER_DEPTH * depth:  # a filter few pass: score them all
            return self._everyone(query_vector, scale, mask)
        # The lowest cosine, from a second search, runs on another core meanwhile: two walks
        # through a large index are both slow when it is out of the CPU caches.
        if self._helper is None:
            self._helper = ThreadPoolExecutor(1, thread_name_prefix="autonoma-memory")
        lowest = self._helper.submit(self._lowest, query_vector, mask, passing)
        try:
            return self._threshold_with(query_vector, k, scale, mask, passing, lowest, least, depth)
        finally:
            wait([lowest])  # the index may change once the caller lets go of its lock

    def _lowest(self, query_vector: Vectors, mask: np.ndarray | None, passing: int) -> float | None:
        """The lowest cosine of a passing record: the first passing one of the list nearest
        to -query (None: too few pass to find one that way)."""
        columns, index = self._columns, self.index
        depth = 1 if mask is None else FAR_LIST
        while True:
            ids, sims = index.search(-query_vector.reshape(-1), depth, ef=FAR_EF)
            positions, ok = columns.positions(ids)
            if mask is not None:
                ok &= mask[positions]
            if ok.any():
                return -float(sims[ok][0])
            if EXACT_PER_DEPTH * depth >= passing or len(ids) >= len(index):
                return None
            depth *= 4

    def _threshold_with(
        self,
        query_vector: Vectors,
        k: int,
        scale: Scale,
        mask: np.ndarray | None,
        passing: int,
        lowest: Future[float | None],
        least: int,
        depth: int,
    ) -> tuple[np.ndarray, Terms]:
        columns, index = self._columns, self.index
        query = query_vector.reshape(-1)
        while True:
            ids, sims = index.search(query, depth, ef=depth)
            # The relevance range over the passing records: the highest is the first passing
            # record of this list, the lowest from the other search.
            far = lowest.result()
            if far is None:
                return self._everyone(query_vector, scale, mask)
            positions, ok = columns.positions(ids)
            if mask is not None:
                ok &= mask[positions]
            listed = np.flatnonzero(ok)  # the passing records' places in the list
            pool, cosine = positions[listed], sims[listed].astype(np.float64)
            high = float(cosine[0]) if len(cosine) else float(sims[0])
            scale.cosine = (min(far, float(cosine.min(initial=high))), high)
            if len(ids) >= len(index):  # the list holds every record
                break
            if passing <= EXACT_PER_DEPTH * depth:  # cheaper than searching deeper
                return self._everyone(query_vector, scale, mask)
            score = scale.terms(columns.importance[pool], columns.accessed[pool], cosine)[0]
            more = self._beyond(scale, k, mask, passing, sims, listed, score, depth)
            if more is not None:
                # How deep the list had to be: its first half, a quarter, ... may have done.
                needed = depth
                while needed // 2 >= least and (
                    self._beyond(scale, k, mask, passing, sims, listed, score, needed // 2)
                    is not None
                ):
                    needed //= 2
                self._depths.append(needed)
                more = more[~np.isin(more, pool, assume_unique=True)]
                found = index.similarities(query, columns.ids[more]).astype(np.float64)
                pool = np.concatenate([pool, more])
                cosine = np.concatenate([cosine, found])
                break
            depth *= 2
        # A record the index missed may lie outside the range found so far.
        low, high = scale.cosine
        scale.cosine = (min(low, float(cosine.min())), max(high, float(cosine.max())))
        return pool, scale.terms(columns.importance[pool], columns.accessed[pool], cosine)

    def _beyond(
        self,
        scale: Scale,
        k: int,
        mask: np.ndarray | None,
        passing: int,
        sims: np.ndarray,
        listed: np.ndarray,
        score: np.ndarray,
        depth: int,
    ) -> np.ndarray | None:
        """The records outside the nearest list's first `depth` that could still beat the k-th
        best passing record inside it (no more relevant than the list's last record, they
        must beat it on recency and importance), or None if there are more than scoring them
        is worth (`EXACT_PER_DEPTH` a place of depth) or fewer than k inside."""
        inside = listed < depth
        if np.count_nonzero(inside) < k:
            return None
        floor = float(np.partition(score[inside], -k)[-k])
        needed = floor - scale.weights.relevance * scale.relevance(float(sims[depth - 1]))
        columns = self._columns
        return columns.above(scale, needed, mask, EXACT_PER_DEPTH * depth * columns.n // passing)

    def _touch(self, chosen: list[int], now: float) -> dict[int, MemoryRecord]:
        """Set the chosen records' last access to now (in SQLite, the access log and the
        columns) and read them."""
        marks = ", ".join("?" for _ in chosen)
        with self._tx() as db:
            (last,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM accesses").fetchone()
            db.execute(f"UPDATE records SET accessed_at = ? WHERE id IN ({marks})", (now, *chosen))
            db.executemany(
                "INSERT INTO accesses (seq, id, accessed_at) VALUES (?, ?, ?)",
                [(last + 1 + i, record_id, now) for i, record_id in enumerate(chosen)],
            )
            end = last + len(chosen)
            if end // ACCESS_LOG_TRIM != last // ACCESS_LOG_TRIM:
                db.execute("DELETE FROM accesses WHERE seq <= ?", (end - ACCESS_LOG_KEEP,))
            rows = db.execute(f"SELECT * FROM records WHERE id IN ({marks})", chosen).fetchall()
        self._wrote(2 + len(chosen))  # a page a record, and the log's
        with self._index_lock:
            self._columns.touch(np.array(chosen, dtype=np.int64), np.full(len(chosen), now))
            if self._columns.seq == last:  # no other connection logged in between
                self._columns.seq = end
        return {row["id"]: record_from_row(row) for row in rows}

    def _wrote(self, pages: int) -> None:
        """After a write transaction of about this many pages: once CHECKPOINT_PAGES have
        been written, copy the write-ahead log back into the database on the checkpoint
        thread. Left to SQLite, the commit that takes the log past 1,000 pages would do it,
        two fsyncs included: 10 to 20 ms added to about one retrieval in a hundred."""
        self._unchecked += pages
        if self._unchecked >= CHECKPOINT_PAGES:
            self._unchecked = 0
            self._checkpoints.submit(self._checkpoint)

    def _checkpoint(self, *, close: bool = False) -> None:
        """On the checkpoint thread, with a connection of its own: PASSIVE waits for no reader
        or writer."""
        if close:
            if self._checkpointer is not None:
                self._checkpointer.close()
            return
        if self._checkpointer is None:
            self._checkpointer = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

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
        clauses, params = filters(agent, kinds, None, None)
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
