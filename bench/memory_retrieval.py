"""Memory retrieval at scale: latency, recall@10 and insert throughput, against exact scoring.

Records get 384-dimensional unit vectors drawn around 2,000 topic centres (as sentence
embeddings cluster by topic), importance 1-10 and last-access times over 30 days. Embedding is
excluded throughout: vectors come precomputed (MiniLM's own speed is reported separately).
For each size, 100 queries (each near a random centre):
  autonoma     MemoryStream.retrieve: the threshold algorithm over the FAISS index (HNSW)
               and the in-memory recency and importance columns, all three terms exact on
               the records it scores; timed back to back, then 100 more queries each timed
               "cold", right after the exact reference has scanned every vector
  exact NumPy  the three-term score over every record (the reference for recall@10, with the
               access times the retrievals refreshed replayed in order)
  FAISS flat   a flat inner-product search over every record (relevance only), one thread

    python bench/memory_retrieval.py [--sizes 10000,100000,1000000] [--queries 100] [--cold 100]
                                     [--store DIR] [--no-embedding] [--dry]

The memory footprint of an open store is measured in a fresh process per size: its RSS after
opening the store and after one retrieval, less its RSS before opening (imports done), in all
and its anonymous part (the rest is SQLite's file pages, mapped and shared).

To iterate: --store keeps the built stores in DIR and reuses them on the next run (setting
back the access times earlier runs' retrievals refreshed), so a 1M-record insert is paid once;
--no-embedding skips timing MiniLM; --dry prints without writing bench/results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.memory.embeddings import Embedder, MiniLMEmbedder, Vectors
from autonoma.memory.records import HOUR, NewRecord, RetrievalWeights
from autonoma.memory.stream import MemoryStream
from bench.common import write_result

DIM = 384
CENTRES = 2000
NOW = 2_000_000_000.0


class Precomputed(Embedder):
    """Vectors from a table keyed by text: embedding excluded from every figure."""

    name = "all-MiniLM-L6-v2"
    dim = DIM

    def __init__(self) -> None:
        super().__init__(cache_size=1)
        self.table: dict[str, Vectors] = {}

    async def embed(self, texts: Any) -> Vectors:
        return np.stack([self.table[t] for t in texts])

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        raise NotImplementedError


def clustered(rng: np.random.Generator, centres: Vectors, n: int) -> Vectors:
    picks = rng.integers(0, len(centres), n)
    vectors = centres[picks] + rng.normal(scale=0.06, size=(n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def exact_top(
    vectors: Vectors, importance: np.ndarray, accessed: np.ndarray, query: Vectors, k: int
) -> list[int]:
    w = RetrievalWeights()

    def norm(x: np.ndarray) -> np.ndarray:
        return (x - x.min()) / (x.max() - x.min())

    recency = norm(w.decay_per_hour ** ((NOW - accessed) / HOUR))
    score = (
        w.recency * recency + w.importance * norm(importance) + w.relevance * norm(vectors @ query)
    )
    top = np.argpartition(-score, k)[:k]
    return [int(i) + 1 for i in top[np.argsort(-score[top])]]  # record ids start at 1


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)) * 1000, 2)


# Run in a fresh process: the RSS (VmRSS, and its anonymous part: heap, FAISS, NumPy; the
# rest is SQLite's mmap'd file pages, shared and reclaimable) an open store adds.
FOOTPRINT = """
import asyncio, json, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
from autonoma.memory.stream import MemoryStream
from bench.memory_retrieval import NOW, Precomputed

def rss():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return {key: int(status[key].split()[0]) / 1024 for key in ("VmRSS", "RssAnon")}

async def main():
    embedder = Precomputed()
    embedder.table["query"] = np.load(sys.argv[3])
    before = rss()
    started = time.perf_counter()
    memory = MemoryStream(Path(sys.argv[2]), embedder)
    opened_s = time.perf_counter() - started
    opened = rss()
    await memory.retrieve("query", k=10, now=NOW)
    retrieved = rss()
    print(json.dumps({"open_s": opened_s, "before": before, "opened": opened,
                      "retrieved": retrieved}))

asyncio.run(main())
"""


def footprint(path: Path, query: Vectors) -> dict[str, Any]:
    query_file = path.with_name(path.name + ".query.npy")
    np.save(query_file, query)
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", FOOTPRINT, root, str(path), str(query_file)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    got = json.loads(out.splitlines()[-1])
    before = got["before"]

    def mb(phase: str, key: str) -> float:
        return round(got[phase][key] - before[key], 1)

    return {
        "open_s": round(got["open_s"], 2),
        "rss_open_mb": mb("opened", "VmRSS"),
        "rss_after_retrieve_mb": mb("retrieved", "VmRSS"),
        "rss_anon_after_retrieve_mb": mb("retrieved", "RssAnon"),
    }


def reuse(path: Path, n: int, accessed: np.ndarray) -> bool:
    """Whether a store of n records from an earlier run is there; if so, set back the access
    times its retrievals refreshed (to NOW), so every run starts from the same state."""
    if not path.exists() or not path.with_name(path.name + ".faiss").exists():
        return False
    db = sqlite3.connect(path, isolation_level=None)
    try:
        (count,) = db.execute("SELECT COUNT(*) FROM records").fetchone()
        if count != n:
            raise SystemExit(f"{path} holds {count} records, not {n}: delete it")
        touched = [
            row[0] for row in db.execute("SELECT id FROM records WHERE accessed_at >= ?", (NOW,))
        ]
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "UPDATE records SET accessed_at = ? WHERE id = ?",
            [(float(accessed[i - 1]), i) for i in touched],
        )
        db.execute("COMMIT")
    finally:
        db.close()
    return True


async def run_size(n: int, queries: int, cold: int, root: Path) -> dict[str, Any]:
    import faiss

    rng = np.random.default_rng(n)
    centres = rng.normal(size=(CENTRES, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = clustered(rng, centres, n)
    importance = rng.integers(1, 11, n)
    accessed = NOW - rng.uniform(0, 30 * 24, n) * HOUR
    embedder = Precomputed()
    path = root / f"memory-{n}.db"
    reused = reuse(path, n, accessed)
    started = time.perf_counter()
    memory = MemoryStream(path, embedder)
    if reused:
        print(f"  {n}: reused {path} (opened in {time.perf_counter() - started:.1f} s)")
    for start in range(0, 0 if reused else n, 20_000):
        end = min(n, start + 20_000)
        batch = []
        for i in range(start, end):
            text = f"record {i}"
            embedder.table[text] = vectors[i]
            batch.append(
                NewRecord(
                    agent="ada",
                    text=text,
                    importance=int(importance[i]),
                    created_at=float(accessed[i]),
                )
            )
        await memory.add_many(batch)
        embedder.table.clear()
        print(f"  {n}: inserted {end}", flush=True)
    insert_s = time.perf_counter() - started

    query_vectors = clustered(rng, centres, queries + cold)
    flat = faiss.IndexFlatIP(DIM)
    flat.add(vectors)
    faiss.omp_set_num_threads(1)
    ours_s, cold_s, exact_s, flat_s, recalls = [], [], [], [], []
    # Back to back: each retrieval as the previous one left the caches.
    found = []
    for q in range(queries):
        text = f"query {q}"
        embedder.table[text] = query_vectors[q]
        t0 = time.perf_counter()
        got = await memory.retrieve(text, k=10, now=NOW)
        ours_s.append(time.perf_counter() - t0)
        found.append({r.record.id for r in got})
    # The references, replaying the access times those retrievals refreshed, and the baselines.
    for q in range(queries):
        t0 = time.perf_counter()
        want = exact_top(vectors, importance, accessed, query_vectors[q], 10)
        exact_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        flat.search(query_vectors[q : q + 1], 10)
        flat_s.append(time.perf_counter() - t0)
        recalls.append(len(found[q] & set(want)) / 10)
        for record_id in found[q]:
            accessed[record_id - 1] = NOW
    # Cold: each retrieval right after the reference's scan of every vector (1.5 GB at 1M)
    # has pushed the index out of the CPU caches, as the model's inference would in an agent.
    for q in range(queries, queries + cold):
        text = f"query {q}"
        embedder.table[text] = query_vectors[q]
        want = exact_top(vectors, importance, accessed, query_vectors[q], 10)
        t0 = time.perf_counter()
        got = await memory.retrieve(text, k=10, now=NOW)
        cold_s.append(time.perf_counter() - t0)
        recalls.append(len({r.record.id for r in got} & set(want)) / 10)
        for r in got:
            accessed[r.record.id - 1] = NOW
    faiss.omp_set_num_threads(0)
    memory.close()
    db_bytes = memory.path.stat().st_size + memory.index_path.stat().st_size
    row = {
        "records": n,
        "index": memory.index.kind,
        "insert_records_per_s": None if reused else round(n / insert_s),
        "retrieve_p50_ms": percentile(ours_s, 50),
        "retrieve_p99_ms": percentile(ours_s, 99),
        "retrieve_cold_p50_ms": percentile(cold_s, 50) if cold_s else None,
        "retrieve_cold_p99_ms": percentile(cold_s, 99) if cold_s else None,
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "exact_numpy_p50_ms": percentile(exact_s, 50),
        "exact_numpy_p99_ms": percentile(exact_s, 99),
        "faiss_flat_1thread_p50_ms": percentile(flat_s, 50),
        "faiss_flat_1thread_p99_ms": percentile(flat_s, 99),
        "disk_mb": round(db_bytes / 2**20, 1),
        **footprint(path, query_vectors[0]),
    }
    print(row, flush=True)
    return row


async def embedding_speed() -> dict[str, Any]:
    embedder = MiniLMEmbedder()
    await embedder.embed(["warm up"])
    texts = [f"Observation {i}: the agent wrote notes about topic {i % 37}." for i in range(512)]
    started = time.perf_counter()
    await embedder.embed(texts)
    batch_s = time.perf_counter() - started
    singles = []
    for i in range(20):
        t0 = time.perf_counter()
        await embedder.embed([f"a single query about topic {i}"])
        singles.append(time.perf_counter() - t0)
    return {
        "model": embedder.name,
        "batch_texts_per_s": round(len(texts) / batch_s, 1),
        "single_query_p50_ms": percentile(singles, 50),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cold", type=int, default=100, help="queries timed with cold caches")
    parser.add_argument("--store", type=Path, help="keep the built stores here and reuse them")
    parser.add_argument("--no-embedding", action="store_true", help="skip timing MiniLM")
    parser.add_argument("--dry", action="store_true", help="print, do not write bench/results")
    args = parser.parse_args()
    embedding = None if args.no_embedding else await embedding_speed()
    print(embedding, flush=True)
    with tempfile.TemporaryDirectory(prefix="autonoma-memory-") as tmp:
        root = args.store or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        rows = [
            await run_size(int(n), args.queries, args.cold, root) for n in args.sizes.split(",")
        ]
    if args.dry:
        return
    write_result(
        "memory_retrieval",
        {
            "dim": DIM,
            "queries": args.queries,
            "cold_queries": args.cold,
            "embedding": embedding,
            "sizes": rows,
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
