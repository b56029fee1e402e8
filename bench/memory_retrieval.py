"""Memory retrieval at scale: latency, recall@10 and insert throughput, against exact scoring.

Records get 384-dimensional unit vectors drawn around 2,000 topic centres (as sentence
embeddings cluster by topic), importance 1-10 and last-access times over 30 days. Embedding is
excluded throughout: vectors come precomputed (MiniLM's own speed is reported separately).
For each size, 100 queries (each near a random centre):
  autonoma     MemoryStream.retrieve: candidates from the FAISS index (HNSW) plus the most
               important and most recent, all three terms exact on them
  exact NumPy  the three-term score over every record (the reference for recall@10)
  FAISS flat   a flat inner-product search over every record (relevance only), one thread

    python bench/memory_retrieval.py [--sizes 10000,100000,1000000] [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.memory.embeddings import Embedder, MiniLMEmbedder, Vectors
from autonoma.memory.stream import HOUR, MemoryStream, NewRecord, RetrievalWeights
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


async def run_size(n: int, queries: int, root: Path) -> dict[str, Any]:
    import faiss

    rng = np.random.default_rng(n)
    centres = rng.normal(size=(CENTRES, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = clustered(rng, centres, n)
    importance = rng.integers(1, 11, n)
    accessed = NOW - rng.uniform(0, 30 * 24, n) * HOUR
    embedder = Precomputed()
    memory = MemoryStream(root / f"memory-{n}.db", embedder)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    for start in range(0, n, 20_000):
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
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    query_vectors = clustered(rng, centres, queries)
    flat = faiss.IndexFlatIP(DIM)
    flat.add(vectors)
    faiss.omp_set_num_threads(1)
    ours_s, exact_s, flat_s, recalls = [], [], [], []
    for q in range(queries):
        text = f"query {q}"
        embedder.table[text] = query_vectors[q]
        want = exact_top(vectors, importance, accessed, query_vectors[q], 10)
        t0 = time.perf_counter()
        got = await memory.retrieve(text, k=10, now=NOW)
        ours_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        exact_top(vectors, importance, accessed, query_vectors[q], 10)
        exact_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        flat.search(query_vectors[q : q + 1], 10)
        flat_s.append(time.perf_counter() - t0)
        recalls.append(len({r.record.id for r in got} & set(want)) / 10)
        # retrieval refreshes access times; keep the reference in step with the store
        for r in got:
            accessed[r.record.id - 1] = NOW
    faiss.omp_set_num_threads(0)
    memory.close()
    db_bytes = memory.path.stat().st_size + memory.index_path.stat().st_size
    row = {
        "records": n,
        "index": memory.index.kind,
        "insert_records_per_s": round(n / insert_s),
        "retrieve_p50_ms": percentile(ours_s, 50),
        "retrieve_p99_ms": percentile(ours_s, 99),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "exact_numpy_p50_ms": percentile(exact_s, 50),
        "exact_numpy_p99_ms": percentile(exact_s, 99),
        "faiss_flat_1thread_p50_ms": percentile(flat_s, 50),
        "faiss_flat_1thread_p99_ms": percentile(flat_s, 99),
        "disk_mb": round(db_bytes / 2**20, 1),
        "rss_growth_mb_while_inserting": round((rss_after - rss_before) / 1024, 1),
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
    args = parser.parse_args()
    embedding = await embedding_speed()
    print(embedding, flush=True)
    with tempfile.TemporaryDirectory(prefix="autonoma-memory-") as tmp:
        rows = [await run_size(int(n), args.queries, Path(tmp)) for n in args.sizes.split(",")]
    write_result(
        "memory_retrieval",
        {"dim": DIM, "queries": args.queries, "embedding": embedding, "sizes": rows},
    )


if __name__ == "__main__":
    asyncio.run(main())
