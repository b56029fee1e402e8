"""The real all-MiniLM-L6-v2 embedder, loaded offline from its package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autonoma.memory.embeddings import MiniLMEmbedder, normalise
from autonoma.memory.records import RetrievalWeights
from autonoma.memory.stream import MemoryStream

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


GARDEN = [
    "The garden behind the old house was planted with tomatoes, beans and squash every spring.",
    "In the mornings the gardener watered the rows slowly, moving from the fence to the shed.",
    "Weeds grew quickly between the beds whenever the weather turned warm and wet.",
    "By midsummer the vines had climbed the trellis and shaded the path along the wall.",
    "Neighbours often stopped to ask how the pumpkins were coming along this year.",
]
KEY = "The spare key to the boathouse is hidden under the blue flowerpot by the jetty."


async def test_a_sentence_past_the_models_input_limit_is_not_ignored(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    filler = " ".join(GARDEN * 5)
    record = f"{filler} {KEY}"
    model = await embedder._load()

    def count(text: str) -> int:
        return len(model.tokenizer(text, verbose=False)["input_ids"])

    assert count(filler) > model.max_seq_length  # the key sentence is past the limit
    truncated = normalise(model.encode([record, filler]))
    assert float(truncated[0] @ truncated[1]) > 0.999  # so the model alone never sees the key

    (pieces,) = await embedder.chunk([record])
    assert len(pieces) >= 2 and pieces[-1].endswith(KEY)
    assert all(count(piece) <= model.max_seq_length for piece in pieces)

    memory = MemoryStream(tmp_path / "memory.db", embedder)
    await memory.add("ada", filler, importance=5)
    await memory.add("ada", record, importance=5)
    await memory.add("ada", "Quarterly tax filings are due in April.", importance=5)
    relevance = RetrievalWeights(recency=0, importance=0, relevance=1)
    ranked = await memory.retrieve("Where is the boathouse key hidden?", k=3, weights=relevance)
    assert ranked[0].record.text == record  # above the same text without the key sentence


async def test_loading_the_model_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """The CLI's live view owns the terminal: no progress bar or log line of the libraries'
    (transformers draws "Loading weights: 100%|██| 103/103" unless told not to)."""
    from transformers.utils import logging as transformers_logging

    bars = transformers_logging.is_progress_bar_enabled()
    verbosity = transformers_logging.get_verbosity()
    capfd.readouterr()
    model = await MiniLMEmbedder()._load()
    assert model.max_seq_length == 256
    assert capfd.readouterr() == ("", "")
    # and the libraries' settings are as they were
    assert transformers_logging.is_progress_bar_enabled() == bars
    assert transformers_logging.get_verbosity() == verbosity
