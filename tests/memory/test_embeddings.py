"""Embedders without a model: over real HTTP (an OpenAI-compatible /embeddings endpoint on\n127.0.0.1), the lexical fallback, and chunking with a fake embedder."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import itertools
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from autonoma.errors import ModelError
from autonoma.memory.embeddings import (
    Embedder,
    LexicalEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    Vectors,
    approximate_token_spans,
    chunk_spans,
    default_embedder,
    normalise,
)
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


class ChunkRecorder(Embedder):
    """A tiny input limit, counted approximately; each piece's vector from its hash."""

    name = "chunk-recorder"
    dim = 6
    max_tokens = 12

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batches: list[list[str]] = []

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        self.batches.append(texts)
        return np.asarray([piece_vector(text) for text in texts], dtype=np.float32)


def piece_vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    return list(np.random.default_rng(seed).normal(size=ChunkRecorder.dim))


SENTENCES = (
    "The river rose after three days of rain. "
    "Boats were pulled up onto the bank before dark. "
    "Nobody expected the bridge to close, but it did. "
    "In the morning the water had gone down again."
)


def tokens_in(tokens: list[tuple[int, int]], start: int, end: int) -> int:
    return sum(1 for a, b in tokens if a >= start and b <= end)


def test_chunks_cover_the_whole_text_fit_the_limit_overlap_and_end_at_sentences() -> None:
    tokens = approximate_token_spans(SENTENCES)
    assert len(tokens) > 30
    spans = chunk_spans(SENTENCES, tokens, limit=20, overlap=4)
    assert len(spans) >= 3
    assert spans[0][0] == 0 and spans[-1][1] == len(SENTENCES)
    covered = set().union(*(range(a, b) for a, b in spans))
    assert all(i in covered for i, c in enumerate(SENTENCES) if not c.isspace())
    for (start, end), (next_start, _) in itertools.pairwise(spans):
        assert start < next_start < end  # in order, and the next one starts a little earlier
        assert SENTENCES[start:end].endswith(".")  # a sentence end fits in each one here
        assert SENTENCES[next_start - 1] == " "  # and each starts at a word
    assert all(tokens_in(tokens, a, b) <= 20 for a, b in spans)
    # A text that fits is one chunk, untouched; one unbroken run is cut at the limit.
    assert chunk_spans(SENTENCES, tokens, limit=len(tokens), overlap=4) == [(0, len(SENTENCES))]
    blob = "x9" * 100
    blob_tokens = approximate_token_spans(blob)
    pieces = chunk_spans(blob, blob_tokens, limit=16, overlap=2)
    assert all(tokens_in(blob_tokens, a, b) <= 16 for a, b in pieces)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(blob)
    assert all(n < e for (_, e), (n, _) in itertools.pairwise(pieces))


async def test_a_long_text_is_the_normalised_mean_of_its_chunks_batched_with_the_rest() -> None:
    embedder = ChunkRecorder(batch_size=4)
    short = ["A short note.", "Another short note."]
    vectors = await embedder.embed([short[0], SENTENCES, short[1]])
    (pieces,) = await embedder.chunk([SENTENCES])
    assert len(pieces) >= 3 and all(p in SENTENCES for p in pieces)
    assert pieces[0].startswith("The river") and pieces[-1].endswith("again.")
    words, at = SENTENCES.split(), 0  # every word is in a chunk, in order
    for piece in pieces:
        piece_words = piece.split()
        at = next(i for i in range(at + 1) if words[i : i + len(piece_words)] == piece_words)
        at += len(piece_words)
    assert at == len(words)
    sent = [piece for batch in embedder.batches for piece in batch]
    assert sent == [short[0], *pieces, short[1]]  # every chunk embedded, in one stream
    assert all(len(batch) <= 4 for batch in embedder.batches)
    assert [len(b) for b in embedder.batches][:-1] == [4] * (len(embedder.batches) - 1)
    chunk_vectors = normalise(np.asarray([piece_vector(p) for p in pieces]))
    expected = chunk_vectors.mean(axis=0) / np.linalg.norm(chunk_vectors.mean(axis=0))
    assert np.allclose(vectors[1], expected, atol=1e-6)
    assert np.allclose(vectors[0], normalise(np.asarray([piece_vector(short[0])]))[0])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    batches = len(embedder.batches)
    again = await embedder.embed([SENTENCES])  # cached by the whole text
    assert len(embedder.batches) == batches and np.array_equal(again[0], vectors[1])


async def test_more_new_texts_than_the_cache_holds_still_come_back() -> None:
    embedder = ChunkRecorder(batch_size=2, cache_size=2)
    texts = [f"note {i}" for i in range(5)]
    vectors = await embedder.embed(texts)
    assert np.allclose(vectors, normalise(np.asarray([piece_vector(t) for t in texts])))


async def test_openai_embedder_chunks_a_text_over_its_max_tokens(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder("fake-embed", 8, base_url=fake_openai.base_url, max_tokens=16)
    try:
        (vector,) = await embedder.embed([SENTENCES])
    finally:
        await embedder.aclose()
    (inputs,) = [request["input"] for request in fake_openai.requests]
    assert len(inputs) >= 3 and inputs[0].startswith("The river") and inputs[-1].endswith("again.")
    assert all(len(approximate_token_spans(text)) <= 16 for text in inputs)
    assert np.isclose(np.linalg.norm(vector), 1.0)


async def test_lexical_ranks_shared_words_first_with_unit_vectors() -> None:
    embedder = LexicalEmbedder()
    query, sharing, unrelated, empty = await embedder.embed(
        [
            "Where did Ada leave the red bicycle?",
            "Ada left her red bicycle by the library.",
            "Quarterly tax filings are due in April.",
            "",
        ]
    )
    assert embedder.dim == 512 and embedder.name == "lexical-hash-v1"
    assert float(query @ sharing) > float(query @ unrelated) + 0.2
    vectors = np.stack([query, sharing, unrelated, empty])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # Case, accents and punctuation do not matter; word order does, a little (word pairs).
    plain, loud, reordered = await embedder.embed(["cafe au lait", "CAFÉ au lait!", "lait au cafe"])
    assert np.allclose(plain, loud)
    assert 0.5 < float(plain @ reordered) < 0.99


def test_lexical_vectors_are_the_same_in_another_process() -> None:
    texts = ["The spare key is under the blue flowerpot.", "Ünïcode wörds and 42 numbers"]
    here = asyncio.run(LexicalEmbedder().embed(texts))
    code = (
        "import asyncio, sys; from autonoma.memory.embeddings import LexicalEmbedder; "
        "v = asyncio.run(LexicalEmbedder().embed(sys.argv[1:])); print(v.tobytes().hex())"
    )
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code, *texts],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert bytes.fromhex(result.stdout.strip()) == here.tobytes()


def test_default_embedder_falls_back_to_lexical_with_a_notice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_find_spec = importlib.util.find_spec

    def without_sentence_transformers(name: str, *args: Any) -> Any:
        return None if name == "sentence_transformers" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_sentence_transformers)
    embedder, notice = default_embedder(batch_size=8)
    assert isinstance(embedder, LexicalEmbedder) and embedder.batch_size == 8
    assert notice is not None and "lexical only" in notice
    assert "pip install 'autonoma[memory]'" in notice and "torch==2.13.0" in notice

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: object())
    embedder, notice = default_embedder()
    assert isinstance(embedder, MiniLMEmbedder) and notice is None
    assert embedder._model is None  # found, not loaded
