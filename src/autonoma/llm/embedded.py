"""A GGUF model run inside this process by llama.cpp (the `xllamacpp` wheels).

xllamacpp starts llama.cpp's own server in-process, with an OpenAI-compatible HTTP endpoint on
127.0.0.1. We start it on first use and talk to it through `OpenAICompatModel`, so the embedded
model gets the same retries, streaming and accounting as any server, plus what llama.cpp adds:
several parallel slots, prompt-prefix caching, and JSON Schema turned into a grammar so that a
structured answer always parses.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2

from autonoma.errors import ModelError, ModelNotFound
from autonoma.llm.base import Capabilities, CompletionRequest, Model, RawCompletion
from autonoma.llm.kept_prompts import KeptPrompts, family_of, kept_prompts_dir
from autonoma.llm.openai_compat import OpenAICompatModel
from autonoma.llm.pricing import FREE
from autonoma.llm.settings import LLMSettings
from autonoma.llm.slots import SlotMap
from autonoma.llm.types import MessagesLike, as_messages

# llama.cpp constrains decoding to a JSON Schema (LLGuidance); its tool calling depends on the
# model's chat template, so tools are asked for as a schema-constrained JSON call instead.
EMBEDDED_CAPABILITIES = Capabilities(json_schema=True, native_tools=False)
_GGUF_MAGIC = b"GGUF"


class EmbeddedModel(Model):
    """A local GGUF file served by an in-process llama.cpp server."""

    def __init__(
        self,
        path: Path,
        *,
        name: str | None = None,
        settings: LLMSettings | None = None,
        context: int | None = None,
        slots: int | None = None,
        threads: int | None = None,
        keep_prompts_in: Path | None = None,
    ) -> None:
        """`keep_prompts_in`: a folder where the slots' prompt caches are kept between
        processes (kept_prompts.py); None keeps them only while the server runs."""
        settings = settings or LLMSettings()
        super().__init__(
            name or f"local:{path}",
            model_id=path.stem,
            settings=settings,
            capabilities=EMBEDDED_CAPABILITIES,
            price=FREE,
        )
        self.path = path
        self.slots = slots or settings.local_slots
        self.context = context or settings.local_context
        self.threads = threads or settings.local_threads or os.cpu_count() or 1
        self.generation_threads = settings.local_generation_threads or self.threads
        self._server: Any = None
        self._client: OpenAICompatModel | None = None
        self._slots = SlotMap(self.slots)
        self._lock = asyncio.Lock()
        self._keep_prompts_in = keep_prompts_in
        self._kept: KeptPrompts | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None
        self._gate_sem: asyncio.Semaphore | None = None

    @property
    def context_window(self) -> int:
        return self.context  # each slot's share

    @property
    def started(self) -> bool:
        return self._client is not None

    async def start(self) -> OpenAICompatModel:
        """Load the model and start the server (once; later calls return at once)."""
        async with self._lock:
            if self._client is None:
                address = await asyncio.to_thread(self._start_server)
                self._client = OpenAICompatModel(
                    self.model_id,
                    base_url=f"{address}/v1",
                    api_key="local",
                    settings=self.settings,
                    capabilities=EMBEDDED_CAPABILITIES,
                    name=self.name,
                    price=FREE,
                    extra_body={"cache_prompt": True, **self.settings.local_sampling},
                )
            return self._client

    def _start_server(self) -> str:
        check_gguf(self.path)
        try:
            import xllamacpp
        except ImportError as err:  # the `local` extra is not installed
            raise ModelError(
                "the embedded model needs xllamacpp: pip install 'autonoma[local]'"
            ) from err
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        # The context is shared by the slots, so each slot gets `context` tokens.
        params.n_ctx = self.context * self.slots
        params.n_parallel = self.slots
        params.cpuparams.n_threads = self.generation_threads
        params.cpuparams_batch.n_threads = self.threads
        params.cache_prompt = True
        params.verbosity = -1  # llama.cpp logs every slot event to stderr otherwise
        if self._keep_prompts_in is not None:
            where = kept_prompts_dir(self._keep_prompts_in, self.path, self.context, self.slots)
            self._kept = KeptPrompts(where, self.settings.timeout_s)
            params.slot_save_path = self._kept.save_path
        _speculate(params, xllamacpp, self.settings)
        try:
            self._server = xllamacpp.Server(params)
        except RuntimeError as err:
            raise ModelError(
                f"llama.cpp could not load {self.path}: {err}. If it is a registry model, "
                "fetch it again with: autonoma models pull NAME"
            ) from err
        return str(self._server.listening_address)

    async def tokenize(self, text: str) -> list[int]:
        """The model's own token ids for `text` (no chat template added)."""
        body = await self._post("tokenize", {"content": text})
        return [int(t) for t in body["tokens"]]

    async def render_chat(self, messages: MessagesLike) -> str:
        """The exact prompt text the model's chat template makes of `messages`."""
        payload = {"messages": [m.to_openai() for m in as_messages(messages)]}
        return str((await self._post("apply-template", payload))["prompt"])

    async def count_prompt_tokens(self, messages: MessagesLike) -> int:
        """How many tokens `messages` take once the chat template is applied."""
        return len(await self.tokenize(await self.render_chat(messages)))

    async def _post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        client = await self.start()
        url = f"{client.base_url.removesuffix('/v1')}/{endpoint}"
        async with httpx2.AsyncClient(timeout=self.settings.timeout_s) as http:
            response = await http.post(url, json=payload)
        if response.status_code != 200:
            raise ModelError(
                f"llama.cpp {endpoint} failed ({response.status_code}): {response.text}"
            )
        body: dict[str, Any] = response.json()
        return body

    def _gate(self) -> asyncio.Semaphore:
        """At most `slots` requests in llama.cpp at once: one waiting there for a free slot
        gets no answer begun, and the first-byte limit would take it for a hung server. They
        wait here instead, where no limit runs (one gate an event loop)."""
        loop = asyncio.get_running_loop()
        if self._gate_loop is not loop:
            self._gate_loop, self._gate_sem = loop, asyncio.Semaphore(self.slots)
        assert self._gate_sem is not None
        return self._gate_sem

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        client = await self.start()
        async with self._serving(client, request) as slot:
            return await client._complete(_in_slot(request, slot))

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[str | RawCompletion]:
        client = await self.start()
        async with self._serving(client, request) as slot:
            async for piece in client._stream(_in_slot(request, slot)):
                yield piece

    @contextlib.asynccontextmanager
    async def _serving(
        self, client: OpenAICompatModel, request: CompletionRequest
    ) -> AsyncIterator[int | None]:
        """Through the gate, into a slot, with the family's kept state loaded before and
        the state it leaves kept after (only after an answer: a failed one keeps nothing)."""
        async with self._gate():
            with self._slots.serving(request.lane) as slot:
                kept = await self._before(client, request, slot)
                yield slot
                await self._after(client, kept)

    async def _before(
        self, client: OpenAICompatModel, request: CompletionRequest, slot: int | None
    ) -> tuple[int, str] | None:
        """The request's slot and prompt family, if the slot is known and states are kept;
        on the family's first request here, the state kept for it is loaded first."""
        slot = 0 if self.slots == 1 else slot
        if self._kept is None or slot is None:
            return None
        family = family_of(request.messages)
        await self._kept.before(_root(client), slot, family)
        return slot, family

    async def _after(self, client: OpenAICompatModel, kept: tuple[int, str] | None) -> None:
        if self._kept is not None and kept is not None:
            await self._kept.after(_root(client), *kept)

    async def aclose(self) -> None:
        async with self._lock:
            if self._client is not None:
                await self._client.aclose()
                self._client = None
            self._server = None  # its destructor stops llama.cpp's threads


def _speculate(params: Any, xllamacpp: Any, settings: LLMSettings) -> None:
    """Self-speculative decoding from n-grams of the context, if the settings ask for it."""
    if settings.local_speculative == "none":
        return
    kind = settings.local_speculative.upper().replace("-", "_")
    spec = params.speculative
    spec.types = [getattr(xllamacpp.common_speculative_type, f"COMMON_SPECULATIVE_TYPE_{kind}")]
    matched, drafted = settings.local_ngram
    if settings.local_speculative == "ngram-mod":
        spec.ngram_mod.n_match, spec.ngram_mod.n_max = matched, drafted
        spec.ngram_mod.n_min = min(spec.ngram_mod.n_min, drafted)
        return
    table = spec.ngram_simple if kind == "NGRAM_SIMPLE" else spec.ngram_map_k
    table.size_n, table.size_m = matched, drafted


def _root(client: OpenAICompatModel) -> str:
    return client.base_url.removesuffix("/v1")


def _in_slot(request: CompletionRequest, slot: int | None) -> CompletionRequest:
    if slot is None:
        return request
    return replace(request, lane=None, extra={**request.extra, "id_slot": slot})


def check_gguf(path: Path) -> None:
    """Refuse a missing file or one that is not GGUF, with a message saying what to do."""
    if not path.is_file():
        raise ModelNotFound(f"model file {path} does not exist")
    with path.open("rb") as f:
        if f.read(4) != _GGUF_MAGIC:
            raise ModelNotFound(f"{path} is not a GGUF model file (it does not start with GGUF)")
