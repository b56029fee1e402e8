"""Embedders over real HTTP: an OpenAI-compatible /embeddings endpoint on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest

from autonoma.errors import ModelError
from autonoma.memory.embeddings import OpenAIEmbedder
from tests.fake_openai import FakeOpenAI


async def test_openai_embeddings_come_back_in_order_normalised_and_cached(
    fake_openai: FakeOpenAI,
) -> None:
    server = fake_openai
    embedder = OpenAIEmbedder("fake-embed", 8, base_url=server.base_url, batch_size=2)
    try:
        vectors = await embedder.embed(["aaa", "bbb", "aab", "aaa"])
        again = await embedder.embed(["bbb"])
    finally:
        await embedder.aclose()
    assert vectors.shape == (4, 8) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], [1, 0, 0, 0, 0, 0, 0, 0])  # despite the reversed answer
    assert np.allclose(vectors[1], [0, 1, 0, 0, 0, 0, 0, 0])
    assert np.array_equal(vectors[0], vectors[3]) and np.array_equal(again[0], vectors[1])
    assert [len(r["input"]) for r in server.requests] == [2, 1]  # batches of 2, 3 distinct


async def test_a_wrong_dimension_or_unreachable_endpoint_is_a_clear_error(
    fake_openai: FakeOpenAI,
) -> None:
    server = fake_openai
    wrong = OpenAIEmbedder("fake-embed", 16, base_url=server.base_url)
    with pytest.raises(ModelError, match=r"shape \(1, 8\), expected \(1, 16\)"):
        await wrong.embed(["text"])
    await wrong.aclose()
    gone = OpenAIEmbedder("fake-embed", 8, base_url="http://127.0.0.1:9/v1", timeout_s=2)
    with pytest.raises(ModelError, match="embedding with fake-embed failed"):
        await gone.embed(["text"])
    await gone.aclose()
