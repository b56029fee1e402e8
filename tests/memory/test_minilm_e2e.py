"""The real all-MiniLM-L6-v2 embedder, loaded offline from its package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autonoma.memory.embeddings import MiniLMEmbedder
from autonoma.memory.stream import MemoryStream, RetrievalWeights

pytestmark = pytest.mark.e2e


async def test_a_paraphrase_ranks_above_an_unrelated_sentence(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    query, paraphrase, unrelated = await embedder.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly tax filings are due in April.",
        ]
    )
    assert query.shape == (384,) and np.isclose(np.linalg.norm(query), 1.0, atol=1e-5)
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3

    memory = MemoryStream(tmp_path / "memory.db", embedder)
    await memory.add("ada", "Quarterly tax filings are due in April.", importance=5)
    await memory.add("ada", "A kitten naps on the couch.", importance=5)
    relevance = RetrievalWeights(recency=0, importance=0, relevance=1)
    (best,) = await memory.retrieve("Where is the cat sleeping?", k=1, weights=relevance)
    assert best.record.text == "A kitten naps on the couch."
