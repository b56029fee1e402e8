"""The one async interface to every model, and the output loop every provider shares.

A provider implements `_complete` (and `_stream`) for one backend; `Model` turns the caller's
request into a schema-constrained call where the backend can constrain decoding, or into
instructions plus parse, repair and re-ask where it cannot, and does the accounting.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from string import Template
from typing import Any, Literal

from autonoma.errors import ModelError, ModelRefused, OutputInvalid, OutputTruncated
from autonoma.llm.output import OutputPlan, OutputProblem, extract_json
from autonoma.llm.pricing import FREE, Price, cost_usd, find_price
from autonoma.llm.settings import LLMSettings
from autonoma.llm.types import (
    FinishReason,
    Message,
    MessagesLike,
    ModelResponse,
    OutputSpec,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
    as_messages,
)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do. `json_schema`: it can constrain decoding to a JSON Schema.
    `native_tools`: it has OpenAI-style tool calling."""

    json_schema: bool = True
    native_tools: bool = True


Mode = Literal["text", "json_schema", "native_tools"]


@dataclass(frozen=True)
class CompletionRequest:
    """One call to the backend, after the output plan has chosen how to ask."""

    messages: list[Message]
    mode: Mode
    plan: OutputPlan
    max_tokens: int
    temperature: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    # Requests of one lane share a cached prompt prefix (see `Model.in_lane`); `extra` is what
    # a provider adds to the request body for it (llama.cpp's `id_slot`).
    lane: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


SIDE_LANE = "side"
"""The lane of calls made beside an agent's steps (memory, checks, identity, reflection)."""


@dataclass
class RawToolCall:
    id: str
    name: str
    arguments: str


@dataclass
class RawCompletion:
    """What the backend said, before any parsing."""

    text: str
    finish_reason: FinishReason = "stop"
    usage: Usage | None = None
    tool_calls: list[RawToolCall] = field(default_factory=list)
    refusal: str | None = None
    model: str | None = None


# No tokenizer writes more than a few dozen characters a token: an answer longer than its
# max_tokens allows came from a broken or hostile server, not from generation. It is cut and
# treated as cut off (re-asked, then an error), so nothing unbounded is stored or carried on.
CHARS_A_TOKEN = 32


def bounded(raw: RawCompletion, max_tokens: int) -> RawCompletion:
    limit = max(4096, max_tokens * CHARS_A_TOKEN)
    calls = raw.tool_calls
    if len(raw.text) <= limit and sum(len(c.arguments) + len(c.name) for c in calls) <= limit:
        return raw
    kept = [
        RawToolCall(id=c.id[:200], name=c.name[:200], arguments=c.arguments[:limit])
        for c in calls[:16]
    ]
    return replace(raw, text=raw.text[:limit], tool_calls=kept, finish_reason="length")


def _prompt(name: str) -> Template:
    return Template(resources.files("autonoma.llm").joinpath(f"prompts/{name}.txt").read_text())


def estimate_tokens(text: str) -> int:
    """A rough count (4 characters a token) for budgeting when no tokenizer is at hand."""
    return max(1, len(text) // 4)


class Model(ABC):
    """An LLM. `request` for a whole answer, `stream` for deltas as they come."""

    def __init__(
        self,
        name: str,
        *,
        model_id: str,
        settings: LLMSettings | None = None,
        capabilities: Capabilities | None = None,
        price: Price | None = None,
    ) -> None:
        self.name = name
        self.model_id = model_id
        self.settings = settings or LLMSettings()
        self.capabilities = capabilities or Capabilities()
        known = price or find_price(model_id, self.settings.prices)
        self.price = known or FREE
        self.price_known = known is not None  # False: its cost counts $0 for want of a price

    @property
    def context_window(self) -> int:
        """Tokens the model can attend to, prompt and answer together."""
        return self.settings.context_window

    # -- what a provider implements -------------------------------------------------------

    @abstractmethod
    async def _complete(self, request: CompletionRequest) -> RawCompletion: ...

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[str | RawCompletion]:
        """Yield text pieces, then the RawCompletion. Default: one piece, from `_complete`."""
        raw = await self._complete(request)
        if raw.text:
            yield raw.text
        yield raw

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most models hold nothing
        """Release what the model holds (connections, an embedded server)."""

    def in_lane(self, lane: str) -> Model:
        """This model, its requests marked as one lane: a stream of calls whose prompts share
        a prefix (one agent loop's steps; `SIDE_LANE` for memory's calls). A server with a
        prompt cache keeps each lane's prefix apart, so one lane's calls do not evict
        another's (llama.cpp: a slot each; OpenAI: `prompt_cache_key`)."""
        return _Lane(self, lane)

    # -- the public interface ---------------------------------------------------------------

    async def request(
        self,
        messages: MessagesLike,
        output: OutputSpec = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        seed: int | None = None,
    ) -> ModelResponse:
        """Ask the model. With a schema or tools, the answer is validated (and re-asked up to
        `settings.max_reasks` times) before it is returned; it never comes back half-parsed."""
        started = time.monotonic()
        call = self._plan_call(messages, output, max_tokens, temperature, stop, seed)
        usage = Usage()
        attempts = 0
        while True:
            attempts += 1
            raw = bounded(await self._complete(call), call.max_tokens)
            usage = usage + self._usage_of(call, raw)
            try:
                return self._finish(call, raw, usage, attempts, started)
            except ModelRefused as refused:
                raise self._charged(refused, usage) from None
            except OutputProblem as problem:
                if attempts > self.settings.max_reasks:
                    error = OutputTruncated if raw.finish_reason == "length" else OutputInvalid
                    raise self._charged(error(str(problem), raw.text, attempts), usage) from problem
                call = self._reask(call, raw, problem)

    def _charged(self, error: ModelError, usage: Usage) -> ModelError:
        """Attach what the answers that led to `error` cost, for budgets."""
        error.prompt_tokens = usage.prompt_tokens
        error.completion_tokens = usage.completion_tokens
        error.cost_usd = cost_usd(self.price, usage)
        return error

    async def stream(
        self,
        messages: MessagesLike,
        output: OutputSpec = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Yield `TextDelta`s as the model writes, then one `StreamDone` with the validated
        response. A structured answer that fails validation raises OutputInvalid at the end
        (a streamed answer is not re-asked: what was shown cannot be taken back)."""
        started = time.monotonic()
        call = self._plan_call(messages, output, max_tokens, temperature, stop, seed)
        async for piece in self._stream(call):
            if isinstance(piece, str):
                yield TextDelta(piece)
                continue
            piece = bounded(piece, call.max_tokens)
            usage = self._usage_of(call, piece)
            try:
                response = self._finish(call, piece, usage, 1, started)
            except ModelRefused as refused:
                raise self._charged(refused, usage) from None
            except OutputProblem as problem:
                error = OutputTruncated if piece.finish_reason == "length" else OutputInvalid
                raise self._charged(error(str(problem), piece.text, 1), usage) from problem
            yield StreamDone(response)

    # -- the shared output loop -----------------------------------------------------------

    def _plan_call(
        self,
        messages: MessagesLike,
        output: OutputSpec,
        max_tokens: int | None,
        temperature: float | None,
        stop: list[str] | None,
        seed: int | None = None,
    ) -> CompletionRequest:
        plan = OutputPlan.of(output)
        msgs = as_messages(messages)
        if not msgs:
            raise ValueError("request needs at least one message")
        mode: Mode = "text"
        if plan.kind == "tools" and self.capabilities.native_tools:
            mode = "native_tools"
        elif plan.kind != "text" and self.capabilities.json_schema:
            mode = "json_schema"
        elif plan.kind != "text":
            msgs = _with_instructions(msgs, plan)
        return CompletionRequest(
            messages=msgs,
            mode=mode,
            plan=plan,
            max_tokens=max_tokens or self.settings.max_tokens,
            temperature=temperature,
            stop=stop,
            seed=seed,
        )

    def _finish(
        self,
        call: CompletionRequest,
        raw: RawCompletion,
        usage: Usage,
        attempts: int,
        started: float,
    ) -> ModelResponse:
        if raw.refusal:
            raise ModelRefused("refusal", raw.refusal)
        if raw.finish_reason == "content_filter":
            raise ModelRefused("content filter", "the provider filtered the answer")
        if not raw.text.strip() and not raw.tool_calls:
            if raw.finish_reason == "length":
                raise OutputProblem("the answer was cut off before it said anything")
            raise ModelRefused("empty answer", f"finish_reason={raw.finish_reason}")
        plan = call.plan
        data: Any = None
        tool_calls: list[ToolCall] = []
        if plan.kind != "text" and raw.finish_reason == "length":
            raise OutputProblem("the answer was cut off at the length limit")
        if plan.kind == "json":
            data = plan.parse_json(extract_json(raw.text))
        elif plan.kind == "tools" and raw.tool_calls:
            tool_calls = [plan.parse_tool_call(c.name, c.arguments, c.id) for c in raw.tool_calls]
        elif plan.kind == "tools":
            tool_calls = [plan.parse_tool_json(extract_json(raw.text))]
        if plan.tools is not None and not plan.tools.parallel and len(tool_calls) > 1:
            tool_calls = tool_calls[:1]
        return ModelResponse(
            text=raw.text,
            data=data,
            tool_calls=tool_calls,
            usage=usage,
            cost_usd=cost_usd(self.price, usage),
            latency_s=time.monotonic() - started,
            model=raw.model or self.model_id,
            finish_reason=raw.finish_reason,
            attempts=attempts,
        )

    def _reask(
        self, call: CompletionRequest, raw: RawCompletion, problem: OutputProblem
    ) -> CompletionRequest:
        """The next attempt: quote the problem back, or give a cut-off answer more room."""
        if raw.finish_reason == "length":
            longer = min(call.max_tokens * 2, max(self.settings.max_tokens_cap, call.max_tokens))
            if longer > call.max_tokens:
                return replace(call, max_tokens=longer)
            note = _prompt("reask_truncated").substitute()
            return replace(call, messages=[*call.messages, Message(role="user", content=note)])
        quoted = _prompt("reask").substitute(problem=str(problem))
        said = raw.text or json.dumps([c.__dict__ for c in raw.tool_calls])
        return replace(
            call,
            messages=[
                *call.messages,
                Message(role="assistant", content=said),
                Message(role="user", content=quoted),
            ],
        )

    def _usage_of(self, call: CompletionRequest, raw: RawCompletion) -> Usage:
        if raw.usage is not None:
            return raw.usage
        prompt = sum(estimate_tokens(m.content) for m in call.messages)
        return Usage(
            prompt_tokens=prompt, completion_tokens=estimate_tokens(raw.text), estimated=True
        )


def _with_instructions(messages: list[Message], plan: OutputPlan) -> list[Message]:
    """For a backend that cannot constrain decoding: say in the prompt what to answer."""
    if plan.kind == "tools":
        assert plan.tools is not None
        listing = "\n".join(
            json.dumps({"name": s.name, "description": s.description, "arguments": s.parameters})
            for s in plan.tools.specs
        )
        note = _prompt("tool_instructions").substitute(tools=listing)
    else:
        note = _prompt("json_instructions").substitute(schema=json.dumps(plan.schema))
    if messages[0].role == "system":
        head = Message(role="system", content=f"{messages[0].content}\n\n{note}")
        return [head, *messages[1:]]
    return [Message(role="system", content=note), *messages]


class _Lane(Model):
    """A model's view whose requests carry a lane; everything else is the model's own."""

    def __init__(self, inner: Model, lane: str) -> None:
        super().__init__(
            inner.name,
            model_id=inner.model_id,
            settings=inner.settings,
            capabilities=inner.capabilities,
            price=inner.price,
        )
        self.inner = inner
        self.lane = lane

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    def in_lane(self, lane: str) -> Model:
        return self.inner.in_lane(lane)

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        return await self.inner._complete(replace(request, lane=self.lane))

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[str | RawCompletion]:
        async for piece in self.inner._stream(replace(request, lane=self.lane)):
            yield piece

    def __getattr__(self, name: str) -> Any:  # the inner model's own methods (tokenize, ...)
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
