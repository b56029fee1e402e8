"""A deterministic embedder for unit tests of scoring logic: vectors from a table, or from
the text's hash for texts not in the table."""

from __future__ import annotations

import hashlib

import numpy as np

from autonoma.memory.embeddings import Embedder, Vectors


class TableEmbedder(Embedder):
    name = "table"

    def __init__(self, table: dict[str, list[float]] | None = None, dim: int = 3) -> None:
        super().__init__(batch_size=4)
        self.table = table or {}
        self.dim = dim
        self.batches: list[list[str]] = []

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        self.batches.append(texts)
        rows = []
        for text in texts:
            if text in self.table:
                rows.append(self.table[text])
            else:
                seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
                rows.append(list(np.random.default_rng(seed).normal(size=self.dim)))
        return np.asarray(rows, dtype=np.float32)
