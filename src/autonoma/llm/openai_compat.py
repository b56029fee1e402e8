"""Any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter.

This module is the one owner of retries: the SDK's own retries are switched off
(`max_retries=0`) so that waits are not stacked and `Retry-After` is honoured once.

Every answer is streamed, also when the caller wants it whole, so that time is limited in two
ways that tell a dead server from a slow model: the server must begin answering (send its
headers) within `first_byte_timeout_s`, and then say something at least every
`idle_timeout_s` (a token, or llama.cpp's keep-alive every 30 s while it reads a long prompt).
The whole answer has no limit: a local model writing two tokens a second is never cut, and a
hung server is found in under a minute. A server that ignores `stream` and answers whole is
understood too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx2
import openai
from openai._models import construct_type  # the SDK's own lenient reading of a response
from openai.types.chat import ChatCompletion

from autonoma.errors import (
    ConfigError,
    ModelRequestRejected,
    ModelUnavailable,
    RateLimited,
    SchemaUnsupported,
)
from autonoma.llm.base import (
    CHARS_A_TOKEN,
    Capabilities,
    CompletionRequest,
    Model,
    RawCompletion,
    RawToolCall,
    estimate_tokens,
)
from autonoma.llm.bounded import BoundedTransport, UnreadableAnswer
from autonoma.llm.pricing import Price
from autonoma.llm.ratelimit import RateLimiter, request_sent, sending
from autonoma.llm.retry import RetryPolicy, parse_retry_after
from autonoma.llm.settings import LLMSettings
from autonoma.llm.types import FinishReason, Usage
from autonoma.redact import redact

T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
_SCHEMA_WORDS = ("response_format", "json_schema", "schema", "grammar")
_NOT_JSON = (
    "it answered with a body that is not JSON text (empty, not UTF-8, or nested too deep); "
    "is the URL the server's OpenAI-compatible address?"
)


class OpenAICompatModel(Model):
    """A model behind an OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        settings: LLMSettings | None = None,
        capabilities: Capabilities | None = None,
        limiter: RateLimiter | None = None,
        name: str | None = None,
        price: Price | None = None,
        extra_body: dict[str, Any] | None = None,
        lane_body: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        settings = settings or LLMSettings()
        super().__init__(
            name or f"openai:{model_id}",
            model_id=model_id,
            settings=settings,
            capabilities=capabilities,
            price=price,
        )
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        self.endpoint = redact(self.base_url)  # what messages show: no credentials
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == DEFAULT_BASE_URL:
                raise ConfigError(
                    "OPENAI_API_KEY is not set: export it, or point at a local server with "
                    "openai:MODEL@http://127.0.0.1:PORT/v1 (or OPENAI_BASE_URL)"
                )
            key = "not-needed"  # local servers ignore it, the SDK insists on one
        self.retry = RetryPolicy(
            max_attempts=settings.max_attempts,
            backoff_base_s=settings.backoff_base_s,
            backoff_max_s=settings.backoff_max_s,
            max_retry_after_s=settings.max_retry_after_s,
        )
        self.limiter = limiter or _limiter_from(settings)
        self.extra_body = extra_body or {}
        # what a request's lane adds to its body; OpenAI routes by `prompt_cache_key`, other
        # servers may refuse fields they do not know, so they get none unless told
        if lane_body is None and self.base_url == DEFAULT_BASE_URL:
            lane_body = _openai_cache_key
        self.lane_body = lane_body
        self._api_key = key
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> openai.AsyncOpenAI:
        """The SDK client of the running event loop. Its connections belong to one loop, so a
        model used from a second `asyncio.run` gets a fresh client instead of a dead pool."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(
                    event_hooks={"request": [_traced]},
                    transport=BoundedTransport(httpx2.AsyncHTTPTransport()),
                ),
                # between two reads of a streamed answer; the wait for its start is first_byte's
                timeout=openai.Timeout(
                    self.settings.idle_timeout_s, connect=self.settings.connect_timeout_s
                ),
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    # -- building the call ------------------------------------------------------------------

    def _arguments(self, request: CompletionRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.model_id,
            "messages": [m.to_openai() for m in request.messages],
            "max_tokens": request.max_tokens,
        }
        if request.temperature is not None:
            args["temperature"] = request.temperature
        if request.stop:
            args["stop"] = request.stop
        if request.seed is not None:
            args["seed"] = request.seed
        plan = request.plan
        if request.mode == "json_schema":
            args["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": plan.schema, "strict": False},
            }
        elif request.mode == "native_tools":
            assert plan.tools is not None
            args["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": s.name,
                        "description": s.description,
                        "parameters": s.parameters,
                    },
                }
                for s in plan.tools.specs
            ]
            args["tool_choice"] = "required"
            args["parallel_tool_calls"] = plan.tools.parallel
        body = {**self.extra_body, **request.extra}
        if request.lane is not None and self.lane_body is not None:
            body |= self.lane_body(request.lane)
        if body:
            args["extra_body"] = body
        return args

    def _token_estimate(self, request: CompletionRequest) -> int:
        return sum(estimate_tokens(m.content) for m in request.messages) + request.max_tokens

    # -- the one retry loop -----------------------------------------------------------------

    async def _call(self, request: CompletionRequest, send: Callable[[], Awaitable[T]]) -> T:
        reason = "no attempt was made"
        timeouts = 0
        for attempt in range(1, self.retry.max_attempts + 1):
            slot = (
                self.limiter.hold(self._token_estimate(request))
                if self.limiter is not None
                else contextlib.nullcontext()
            )
            try:
                async with slot as held:
                    with sending(held):  # the limiter learns when the request went out
                        return await send()
            except UnreadableAnswer as err:
                raise ModelUnavailable(self.endpoint, str(err)) from None
            except (ValueError, RecursionError):  # the SDK could not decode the body as JSON
                raise ModelUnavailable(self.endpoint, _NOT_JSON) from None
            except _NoFirstByte:
                reason = f"no answer began within {self.settings.first_byte_timeout_s:g}s"
                delay = self.retry.backoff(attempt)
                timeouts += 1
            except (openai.APITimeoutError, httpx2.TimeoutException) as err:
                cause = err.__cause__ if isinstance(err, openai.APITimeoutError) else err
                if isinstance(cause, httpx2.ConnectTimeout):
                    reason = f"cannot connect within {self.settings.connect_timeout_s:g}s"
                    timeouts += 1
                else:  # silent inside an answer for the whole idle limit: not asked again
                    reason = (
                        f"the answer stopped: nothing came for {self.settings.idle_timeout_s:g}s"
                    )
                    timeouts = self.settings.timeout_attempts
                delay = self.retry.backoff(attempt)
            except openai.APIConnectionError as err:
                if isinstance(err.__cause__, UnreadableAnswer):
                    raise ModelUnavailable(self.endpoint, str(err.__cause__)) from None
                reason = f"cannot connect ({err.__cause__ or err})"
                delay = self.retry.backoff(attempt)
            except openai.APIStatusError as err:
                status = err.status_code
                detail = _detail(err)
                if status != 429 and status < 500:
                    if status in (400, 422) and any(w in detail.lower() for w in _SCHEMA_WORDS):
                        raise SchemaUnsupported(
                            f"{self.endpoint} cannot use the requested output schema: {detail}"
                        ) from err
                    raise ModelRequestRejected(self.endpoint, status, detail) from err
                reason = f"HTTP {status}: {detail}"
                wait = parse_retry_after(err.response.headers.get("retry-after"))
                if wait is not None and wait > self.retry.max_retry_after_s:
                    raise RateLimited(
                        self.endpoint,
                        f"it asked to wait {wait:g}s (Retry-After), more than the "
                        f"{self.retry.max_retry_after_s:g}s allowed",
                    ) from err
                delay = wait if wait is not None else self.retry.backoff(attempt)
            except httpx2.TransportError as err:  # the connection broke off mid-answer
                reason = f"the answer broke off ({type(err).__name__}: {err})"
                delay = self.retry.backoff(attempt)
            if timeouts >= self.settings.timeout_attempts:
                break
            if attempt < self.retry.max_attempts:
                await asyncio.sleep(delay)
        tries = f"{attempt} attempt" + ("s" if attempt > 1 else "")
        raise ModelUnavailable(self.endpoint, f"{reason}, after {tries}")

    # -- completions --------------------------------------------------------------------------

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        args = self._streamed(request)
        return await self._call(request, lambda: self._whole_answer(args))

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[str | RawCompletion]:
        args = self._streamed(request)
        raw = await self._call(request, lambda: self._begin(args))
        try:
            async for piece in self._read(raw, args["max_tokens"]):
                yield piece
        except (openai.APIError, httpx2.HTTPError, UnreadableAnswer) as err:
            raise ModelUnavailable(self.endpoint, f"the stream broke off: {err}") from err

    def _streamed(self, request: CompletionRequest) -> dict[str, Any]:
        return {
            **self._arguments(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }

    async def _begin(self, args: dict[str, Any]) -> Any:
        """Send the request; the raw response once the server has begun answering."""
        create = self._http().chat.completions.with_raw_response.create(**args)
        try:
            return await asyncio.wait_for(create, self.settings.first_byte_timeout_s)
        except TimeoutError:
            raise _NoFirstByte from None

    async def _whole_answer(self, args: dict[str, Any]) -> RawCompletion:
        raw = await self._begin(args)
        answer: RawCompletion | None = None
        async for piece in self._read(raw, args["max_tokens"]):
            if isinstance(piece, RawCompletion):
                answer = piece
        assert answer is not None  # _read ends with the whole answer
        return answer

    async def _read(self, raw: Any, max_tokens: int) -> AsyncIterator[str | RawCompletion]:
        """The answer's text as it arrives, then the whole answer. Reading stops once the
        answer is far longer than its tokens allow (`bounded` then cuts it)."""
        if "text/event-stream" not in raw.headers.get("content-type", ""):
            yield self._unstreamed(await raw.http_response.aread())
            return
        limit = max(4096, max_tokens * CHARS_A_TOKEN)
        read = 0
        stream = raw.parse()
        text: list[str] = []
        calls: dict[int, RawToolCall] = {}
        finish: FinishReason = "other"
        usage: Usage | None = None
        refusal: str | None = None
        model: str | None = None
        try:
            async for chunk in stream:
                model = model or getattr(chunk, "model", None) or None
                if chunk.usage is not None:
                    usage = _usage(chunk)
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                        yield delta.content
                    if getattr(delta, "refusal", None):
                        refusal = (refusal or "") + str(delta.refusal)
                    for tc in delta.tool_calls or []:
                        slot = calls.setdefault(tc.index, RawToolCall(id="", name="", arguments=""))
                        if tc.id:
                            slot.id = tc.id
                        if tc.function and tc.function.name:
                            slot.name += tc.function.name
                        if tc.function and tc.function.arguments:
                            slot.arguments += tc.function.arguments
                    if choice.finish_reason:
                        finish = _FINISH.get(choice.finish_reason, "other")
                    read += len(delta.content or "") + sum(
                        len(tc.function.arguments or "")
                        for tc in delta.tool_calls or []
                        if tc.function
                    )
                if read > limit:
                    finish = "length"
                    await stream.close()
                    break
        except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError):
            raise ModelUnavailable(self.endpoint, _not_a_completion(stream)) from None
        yield RawCompletion(
            text="".join(text),
            finish_reason=finish,
            usage=usage,
            tool_calls=[calls[i] for i in sorted(calls)],
            refusal=refusal,
            model=model,
        )

    def _unstreamed(self, body: bytes) -> RawCompletion:
        """A server that answered whole although asked to stream, read as the SDK reads
        a whole answer."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            if not text.strip() or text.lstrip().startswith(("[", "{")):
                raise ModelUnavailable(self.endpoint, _NOT_JSON) from None
            raise ModelUnavailable(self.endpoint, _not_a_completion(text)) from None
        try:
            return self._completion_of(construct_type(type_=ChatCompletion, value=data))
        except (AttributeError, TypeError, KeyError, IndexError, ValueError):
            raise ModelUnavailable(self.endpoint, _not_a_completion(text)) from None

    def _completion_of(self, response: Any) -> RawCompletion:
        if not response.choices:
            return RawCompletion(text="", finish_reason="other", usage=_usage(response))
        choice = response.choices[0]
        message = choice.message
        calls = [
            RawToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
            for c in (message.tool_calls or [])
            if c.type == "function"
        ]
        return RawCompletion(
            text=message.content or "",
            finish_reason=_FINISH.get(choice.finish_reason or "", "other"),
            usage=_usage(response),
            tool_calls=calls,
            refusal=getattr(message, "refusal", None),
            model=response.model or None,
        )


class _NoFirstByte(Exception):
    """The server did not begin its answer in time."""


async def _traced(request: httpx2.Request) -> None:
    """Tells the rate limiter when the request's body has been sent (httpcore's trace)."""
    request.extensions["trace"] = _on_trace


async def _on_trace(event: str, info: dict[str, Any]) -> None:
    if event.endswith("send_request_body.complete"):
        request_sent()


def _openai_cache_key(lane: str) -> dict[str, Any]:
    return {"prompt_cache_key": lane}


def _limiter_from(settings: LLMSettings) -> RateLimiter | None:
    if settings.requests_per_minute is None and settings.tokens_per_minute is None:
        return None
    return RateLimiter(settings.requests_per_minute, settings.tokens_per_minute)


def _usage(response: Any) -> Usage | None:
    """The answer's usage, with the server's own timings when it gives them (llama.cpp adds
    `timings` beside `usage`: prompt and generation milliseconds)."""
    usage = response.usage
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    timings = (getattr(response, "model_extra", None) or {}).get("timings") or {}
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_tokens=cached,
        prompt_seconds=_seconds(timings.get("prompt_ms")),
        generation_seconds=_seconds(timings.get("predicted_ms")),
    )


def _not_a_completion(response: Any) -> str:
    """Why an answer is unusable, with its start: a proxy's welcome page is HTML."""
    shown = response if isinstance(response, str) else repr(response)
    start = " ".join(shown[:120].split())
    return (
        f"it answered with something that is not a chat completion ({start!r}); is the URL "
        "the server's OpenAI-compatible address, usually ending in /v1?"
    )


def _seconds(milliseconds: Any) -> float:
    return float(milliseconds) / 1000 if isinstance(milliseconds, int | float) else 0.0


def _detail(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return err.message or "no detail"
