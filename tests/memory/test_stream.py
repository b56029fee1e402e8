"""The memory stream on real SQLite: scoring by hand-computed examples, filters, access times,
the embedder check, and two processes writing at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autonoma.memory.records import (
    HOUR,
    EmbeddingMismatch,
    MemoryStoreError,
    NewRecord,
    RetrievalWeights,
)
from autonoma.memory.stream import MemoryStream
from tests.memory.table_embedder import TableEmbedder

NOW = 1_000_000.0
# Three records; the query points along x. Cosines with the query: a 1.0, b 0.6, c 0.0.
TABLE = {
    "query": [1.0, 0.0, 0.0],
    "a": [1.0, 0.0, 0.0],
    "b": [0.6, 0.8, 0.0],
    "c": [0.0, 0.0, 1.0],
}
ONLY = {
    "recency": RetrievalWeights(recency=1, importance=0, relevance=0),
    "importance": RetrievalWeights(recency=0, importance=1, relevance=0),
    "relevance": RetrievalWeights(recency=0, importance=0, relevance=1),
}


@pytest.fixture
async def stream(tmp_path: Path) -> MemoryStream:
    memory = MemoryStream(tmp_path / "memory.db", TableEmbedder(TABLE))
    # a: relevant, old (10 h), mundane. b: half relevant, fresh, fairly important.
    # c: irrelevant, 5 h old, life-changing.
    await memory.add("ada", "a", importance=1, created_at=NOW - 10 * HOUR)
    await memory.add("ada", "b", importance=6, created_at=NOW)
    await memory.add("ada", "c", importance=10, created_at=NOW - 5 * HOUR)
    return memory


async def texts(memory: MemoryStream, query: str, weights: RetrievalWeights) -> list[str]:
    found = await memory.retrieve(query, k=3, weights=weights, now=NOW)
    return [item.record.text for item in found]


async def test_each_term_alone_orders_as_computed_by_hand(stream: MemoryStream) -> None:
    assert await texts(stream, "query", ONLY["recency"]) == ["b", "c", "a"]
    assert await texts(stream, "query", ONLY["importance"]) == ["c", "b", "a"]
    assert await texts(stream, "query", ONLY["relevance"]) == ["a", "b", "c"]


async def test_the_combined_score_matches_the_hand_computed_one(stream: MemoryStream) -> None:
    # recency 0.995**h: a 0.95111, b 1.0, c 0.97525 -> min-max: a 0, b 1, c 0.50656
    # importance 1, 6, 10 -> a 0, b 0.55556, c 1; relevance 1, 0.6, 0 -> a 1, b 0.6, c 0
    found = await stream.retrieve("query", k=3, now=NOW)  # weights 0.5, 2, 3
    scores = {item.record.text: item.score for item in found}
    assert scores["a"] == pytest.approx(0.5 * 0 + 2 * 0 + 3 * 1.0)
    assert scores["b"] == pytest.approx(0.5 * 1 + 2 * 5 / 9 + 3 * 0.6)
    c_recency = (0.995**5 - 0.995**10) / (1 - 0.995**10)
    assert scores["c"] == pytest.approx(0.5 * c_recency + 2 * 1 + 3 * 0)
    assert [item.record.text for item in found] == ["b", "a", "c"]
    b = found[0]
    assert (b.recency, b.importance, b.relevance) == pytest.approx((1.0, 5 / 9, 0.6))


async def test_recency_decays_from_the_last_access_and_retrieval_refreshes_it(
    stream: MemoryStream,
) -> None:
    later = NOW + 2 * HOUR
    (first,) = await stream.retrieve("query", k=1, weights=ONLY["relevance"], now=later)
    assert first.record.text == "a" and stream.get(first.record.id).accessed_at == later
    assert stream.get(first.record.id).created_at == NOW - 10 * HOUR  # created stays
    # a was the stalest; now it is the most recently accessed, so recency ranks it first.
    assert (await texts(stream, "", ONLY["recency"]))[0] == "a"


async def test_an_empty_query_gives_the_recent_and_important(stream: MemoryStream) -> None:
    found = await stream.retrieve("  ", k=3, now=NOW)
    assert [item.relevance for item in found] == [0.0, 0.0, 0.0]
    assert [item.record.text for item in found] == ["c", "b", "a"]  # 2*1+0.5*.507 > 0.5+2*.556


async def test_filters_by_owner_kind_and_time(stream: MemoryStream) -> None:
    await stream.add("bob", "a", kind="thought", importance=9, created_at=NOW)
    everyone = await stream.retrieve("query", k=10, now=NOW)
    assert len(everyone) == 4
    bob = await stream.retrieve("query", k=10, agent="bob", now=NOW)
    assert [(r.record.agent, r.record.kind) for r in bob] == [("bob", "thought")]
    thoughts = await stream.retrieve("query", k=10, kinds=["thought"], now=NOW)
    assert [r.record.agent for r in thoughts] == ["bob"]
    recent = await stream.retrieve("query", k=10, agent="ada", since=NOW - 6 * HOUR, now=NOW)
    assert sorted(r.record.text for r in recent) == ["b", "c"]
    early = await stream.retrieve("query", k=10, until=NOW - 6 * HOUR, now=NOW)
    assert [r.record.text for r in early] == ["a"]
    assert await stream.retrieve("query", agent="nobody") == []


async def test_records_survive_reopening_and_keep_their_evidence(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    memory = MemoryStream(path, TableEmbedder(TABLE))
    first = await memory.add("ada", "a", importance=3, run_id="r1")
    insight = await memory.add(
        "ada", "b", kind="reflection", importance=7, evidence=[first.id], run_id="r1"
    )
    memory.close()
    again = MemoryStream(path, TableEmbedder(TABLE))
    assert again.get(insight.id).evidence == [first.id]
    assert again.get(insight.id).kind == "reflection" and again.count("ada") == 2
    with pytest.raises(MemoryStoreError, match="no memory record 99"):
        again.get(99)
    with pytest.raises(MemoryStoreError, match="needs text"):
        await again.add("ada", "   ")


async def test_another_embedder_is_refused_until_the_store_is_reembedded(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    memory = MemoryStream(path, TableEmbedder(TABLE))
    await memory.add("ada", "a")
    await memory.add("ada", "c")
    memory.close()
    wider = TableEmbedder(dim=5)
    wider.name = "wider"
    with pytest.raises(EmbeddingMismatch, match=r"embedded with table \(3 dimensions\).*reembed"):
        MemoryStream(path, wider)
    moved = await MemoryStream.reembed(path, wider)
    assert moved.count() == 2
    found = await moved.retrieve("a", k=1, weights=ONLY["relevance"])
    assert found[0].record.text == "a"  # its new 5-dimensional vector matches itself


async def test_the_embedder_batches_and_caches_by_text(tmp_path: Path) -> None:
    embedder = TableEmbedder(TABLE)
    vectors = await embedder.embed(["a", "b", "a", "x1", "x2", "x3", "x4"])
    assert vectors.shape == (7, 3) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.array_equal(vectors[0], vectors[2])
    assert [len(batch) for batch in embedder.batches] == [4, 2]  # 6 distinct texts, batch of 4
    await embedder.embed(["b", "x4"])
    assert len(embedder.batches) == 2  # both came from the cache


WRITER = """
import asyncio, sys
from pathlib import Path
from autonoma.memory.stream import MemoryStream
from tests.memory.table_embedder import TableEmbedder

async def main():
    memory = MemoryStream(Path(sys.argv[1]), TableEmbedder())
    for i in range(int(sys.argv[3])):
        await memory.add(sys.argv[2], f"{sys.argv[2]} record {i}", importance=1 + i % 10)

asyncio.run(main())
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    MemoryStream(path, TableEmbedder()).close()
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, "200"])
        for name in ("ada", "bob")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    memory = MemoryStream(path, TableEmbedder())
    assert memory.count("ada") == memory.count("bob") == 200
    texts = {memory.get(i).text for i in range(1, 401)}
    assert texts == {f"{n} record {i}" for n in ("ada", "bob") for i in range(200)}


async def test_a_deleted_or_corrupt_index_is_rebuilt_from_sqlite_with_a_notice(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    memory = MemoryStream(path, TableEmbedder(TABLE))
    for text in ("a", "b", "c"):
        await memory.add("ada", text)
    memory.close()
    assert memory.index_path.exists()
    assert MemoryStream(path, TableEmbedder(TABLE)).notices == []  # it agreed

    memory.index_path.unlink()
    rebuilt = MemoryStream(path, TableEmbedder(TABLE))
    assert "is missing; rebuilding it" in rebuilt.notices[0]
    assert len(rebuilt.index) == 3
    assert (await texts(rebuilt, "query", ONLY["relevance"]))[0] == "a"
    rebuilt.close()

    memory.index_path.write_bytes(b"not a faiss index")
    again = MemoryStream(path, TableEmbedder(TABLE))
    assert "is unusable" in again.notices[0] and len(again.index) == 3


async def test_an_index_that_disagrees_with_sqlite_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = MemoryStream(path, TableEmbedder(TABLE))
    await first.add("ada", "a")
    first.close()
    stale = first.index_path.read_bytes()  # an index of one record
    second = MemoryStream(path, TableEmbedder(TABLE))
    await second.add("ada", "b")
    await second.add("ada", "c")
    second.close()
    reopened = MemoryStream(path, TableEmbedder(TABLE))  # a newer index: no notice
    assert reopened.notices == [] and len(reopened.index) == 3
    reopened.close()
    first.index_path.write_bytes(stale)  # older than the store: caught up, not rebuilt
    caught_up = MemoryStream(path, TableEmbedder(TABLE))
    assert caught_up.notices == [] and len(caught_up.index) == 3
    with caught_up._lock:
        caught_up._db.execute("DELETE FROM records WHERE id = 1")  # the store lost one
    caught_up.close()
    rebuilt = MemoryStream(path, TableEmbedder(TABLE))
    assert "rebuilding it" in rebuilt.notices[0] and len(rebuilt.index) == 2


async def test_ann_candidates_give_the_exact_top_k(tmp_path: Path) -> None:
    """Above ann_from the index (HNSW) supplies relevance candidates; the top 10 must match
    exact scoring over every record."""
    rng = np.random.default_rng(7)
    table = {f"m{i}": list(rng.normal(size=16)) for i in range(600)}
    queries = {f"q{i}": list(rng.normal(size=16)) for i in range(10)}
    embedder = TableEmbedder({**table, **queries}, dim=16)
    exact = MemoryStream(tmp_path / "exact.db", embedder)
    ann = MemoryStream(tmp_path / "ann.db", embedder, ann_from=100, hnsw_from=100, candidates=60)
    for i, text in enumerate(table):
        when = NOW - float(rng.uniform(0, 48)) * HOUR
        for memory in (exact, ann):
            await memory.add("ada", text, importance=1 + i % 10, created_at=when)
    assert ann.index.kind == "hnsw" and exact.index.kind == "flat"
    for query in queries:
        want = await exact.retrieve(query, k=10, now=NOW)
        got = await ann.retrieve(query, k=10, now=NOW)
        assert [r.record.text for r in got] == [r.record.text for r in want]


def test_a_process_sees_records_another_process_wrote(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    reader = MemoryStream(path, TableEmbedder())
    writer = subprocess.run([sys.executable, "-c", WRITER, str(path), "bob", "5"], check=False)
    assert writer.returncode == 0
    import asyncio

    found = asyncio.run(reader.retrieve("bob record 3", k=1, weights=ONLY["relevance"]))
    assert found[0].record.text == "bob record 3" and len(reader.index) == 5


async def test_many_records_are_added_in_one_go(tmp_path: Path) -> None:
    memory = MemoryStream(tmp_path / "memory.db", TableEmbedder(TABLE))
    await memory.add("ada", "c", importance=2)
    added = await memory.add_many(
        [
            NewRecord(agent="ada", text="a", importance=9, created_at=NOW),
            NewRecord(agent="bob", text="b", kind="chat", run_id="r2"),
        ]
    )
    assert [r.id for r in added] == [2, 3] and memory.count() == 3 and len(memory.index) == 3
    assert memory.get(3).kind == "chat" and memory.get(2).accessed_at == NOW
    assert (await texts(memory, "query", ONLY["relevance"]))[0] == "a"
    with pytest.raises(MemoryStoreError, match="needs text"):
        await memory.add_many([NewRecord(agent="ada", text="")])
    assert memory.count() == 3


# -- the in-memory columns and the threshold algorithm ------------------------------------


def stored_columns(memory: MemoryStream) -> tuple[list[int], list[float]]:
    """Ids and access times as SQLite has them."""
    with memory._lock:
        rows = memory._db.execute("SELECT id, accessed_at FROM records ORDER BY id").fetchall()
    return [row[0] for row in rows], [row[1] for row in rows]


def assert_columns_match_sqlite(memory: MemoryStream) -> None:
    ids, accessed = stored_columns(memory)
    columns = memory._columns
    assert columns.ids.tolist() == ids
    assert columns.accessed.tolist() == accessed
    # the runs: by importance (highest first), then by the access time at the sort
    order = columns.order
    assert sorted(order.tolist()) == list(range(columns.sorted_n))
    keys = list(zip(-columns.importance[order], columns.order_neg_accessed, strict=True))
    assert keys == sorted(keys)


READER_WRITER = """
import asyncio, sys
from pathlib import Path
from autonoma.memory.stream import MemoryStream
from autonoma.memory.records import RetrievalWeights
from tests.memory.table_embedder import TableEmbedder

async def main():
    memory = MemoryStream(Path(sys.argv[1]), TableEmbedder())
    for i in range(5):
        await memory.add("bob", f"bob record {i}", importance=3, created_at=1000.0 + i)
    relevance = RetrievalWeights(recency=0, importance=0, relevance=1)
    await memory.retrieve("ada record 1", k=1, weights=relevance, now=5_000_000.0)

asyncio.run(main())
"""


async def test_columns_follow_records_and_access_times_another_process_wrote(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    memory = MemoryStream(path, TableEmbedder())
    for i in range(3):
        await memory.add("ada", f"ada record {i}", importance=5, created_at=NOW + i)
    await memory.retrieve("ada record 0", k=1, now=NOW + 10)  # this process's own access
    other = subprocess.run([sys.executable, "-c", READER_WRITER, str(path)], check=False)
    assert other.returncode == 0
    # The other process set "ada record 1" accessed at 5,000,000: it is now the most recent.
    found = await memory.retrieve("", k=1, weights=ONLY["recency"], now=5_000_000.0)
    assert found[0].record.text == "ada record 1"
    assert memory._columns.n == 8 and len(memory.index) == 8
    assert_columns_match_sqlite(memory)
    assert [r.record.agent for r in await memory.retrieve("", k=10, agent="bob")] == ["bob"] * 5


async def test_a_stream_behind_the_trimmed_access_log_rereads_every_access_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("autonoma.memory.stream.ACCESS_LOG_KEEP", 6)
    monkeypatch.setattr("autonoma.memory.stream.ACCESS_LOG_TRIM", 4)
    path = tmp_path / "memory.db"
    reader = MemoryStream(path, TableEmbedder())
    writer = MemoryStream(path, TableEmbedder())  # another connection, as another process
    await writer.add_many([NewRecord(agent="ada", text=f"r{i}", created_at=NOW) for i in range(20)])
    await reader.retrieve("r1", k=1, now=NOW)
    assert_columns_match_sqlite(reader)
    for i in range(20):  # 40 accesses: the log keeps only the last few
        await writer.retrieve(f"r{i}", k=2, now=NOW + i)
    with writer._lock:
        (first,) = writer._db.execute("SELECT MIN(seq) FROM accesses").fetchone()
    assert first > reader._columns.seq + 1
    found = await reader.retrieve("", k=1, weights=ONLY["recency"], now=NOW + 100)
    assert found[0].record.accessed_at == NOW + 100
    assert_columns_match_sqlite(reader)
    assert reader._columns.seq == writer._columns.seq + 1  # its own access came after


async def test_the_threshold_algorithm_gives_the_exact_top_k_with_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ann_from the index's list, the columns' runs and the loose records (few allowed,
    so they are merged back often) must give what scoring every record gives, with filters,
    other weights, empty queries and the access times that retrieval changes. The index is
    flat here, so its list is exact and any difference is the algorithm's (with HNSW, see
    test_ann_candidates_give_the_exact_top_k)."""
    monkeypatch.setattr("autonoma.memory.columns.LOOSE_MAX", 25)
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(20, 16))
    table = {f"m{i}": list(centres[i % 20] + rng.normal(scale=0.5, size=16)) for i in range(1500)}
    queries = {f"q{i}": list(centres[i % 20] + rng.normal(scale=0.5, size=16)) for i in range(60)}
    embedder = TableEmbedder({**table, **queries}, dim=16)
    exact = MemoryStream(tmp_path / "exact.db", embedder, ann_from=10**9)
    ann = MemoryStream(tmp_path / "ann.db", embedder, ann_from=100, candidates=20)
    agents, kinds = ("ada", "bob", "cy"), ("observation", "thought", "reflection")
    records = [
        NewRecord(
            agent=agents[i % 3],
            kind=kinds[i // 3 % 3],
            text=text,
            importance=int(rng.integers(1, 11)),
            created_at=NOW - float(rng.uniform(0, 100)) * HOUR,
        )
        for i, text in enumerate(table)
    ]
    for memory in (exact, ann):
        for start in range(0, len(records), 400):
            await memory.add_many(records[start : start + 400])
    assert ann.index.kind == "flat"
    filters: list[dict[str, object]] = [
        {},
        {"agent": "bob"},
        {"kinds": ["thought", "reflection"]},
        {"agent": "ada", "since": NOW - 50 * HOUR},
        {"until": NOW - 20 * HOUR},
    ]
    for i, query in enumerate(queries):
        kwargs: dict[str, Any] = {
            "k": 10,
            "now": NOW + i * HOUR / 2,
            "weights": RetrievalWeights(recency=3, importance=1, relevance=1)
            if i % 7 == 0
            else RetrievalWeights(),
            **filters[i % 5],
        }
        text = "" if i % 11 == 0 else query
        want = await exact.retrieve(text, **kwargs)
        got = await ann.retrieve(text, **kwargs)
        assert [r.record.id for r in got] == [r.record.id for r in want], (i, kwargs)
        for name in ("score", "recency", "importance", "relevance"):
            assert [getattr(r, name) for r in got] == pytest.approx(
                [getattr(r, name) for r in want], abs=1e-6
            ), (i, name)
    assert len(ann._columns.loose()) < 60  # 600 accesses: merged back again and again
    assert_columns_match_sqlite(ann)


async def test_the_write_ahead_log_is_checkpointed_off_the_retrieval_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("autonoma.memory.stream.CHECKPOINT_PAGES", 5)
    memory = MemoryStream(tmp_path / "memory.db", TableEmbedder(TABLE))
    with memory._lock:
        assert memory._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    await memory.add("ada", "a")
    assert memory._checkpointer is None  # not 5 pages yet
    for _ in range(3):
        await memory.retrieve("query", k=1, now=NOW)
    memory._checkpoints.submit(lambda: None).result()  # what was queued has run
    assert memory._checkpointer is not None  # the checkpoint thread's own connection
    memory.close()
