"""A fake OpenAI-compatible server over real HTTP on 127.0.0.1, scripted per request.

Each request takes the next behaviour from `script` (or `default` when the script is empty):
    {"content": "...", "finish_reason": "stop"}       an answer
    {"tool_calls": [{"name": ..., "arguments": "..."}]} a native tool call
    {"status": 429, "retry_after": "2"}                 an error status, with Retry-After
    {"stall": 5.0}                                      accept, then say nothing for 5 s
    {"content": "...", "pause": 0.2}                    streamed, 0.2 s between chunks
    {"content": "...", "silence": 30}                   streamed: headers, then 30 s of nothing
    {"content": "...", "keepalive": [5, 0.2]}           streamed: 5 keep-alives 0.2 s apart first
    {"refusal": "I can't help with that"}               an OpenAI refusal
    {"content": "...", "usage": {...}, "timings": {...}} the usage given, llama.cpp's timings
    {"raw": b"...", "headers": {...}}                  these bytes and headers, status 200
Every request's JSON body is kept in `requests`. `latency_s` delays every answer.
`responder`, when set, decides each behaviour from the request body instead of the script.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


class FakeOpenAI:
    def __init__(self, latency_s: float = 0.0) -> None:
        self.script: deque[dict[str, Any]] = deque()
        self.default: dict[str, Any] = {"content": "hello"}
        self.requests: list[dict[str, Any]] = []
        self.latency_s = latency_s
        self.responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self._lock = threading.Lock()
        self.embedding_dim = 8
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )
        # IPPROTO_TCP, so asyncio sets TCP_NODELAY: a bare socket() delays each answer ~40 ms
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._sock = sock
        config = uvicorn.Config(
            app, log_level="error", lifespan="off", backlog=4096, timeout_keep_alive=30
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fake server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._server.force_exit = True
        self._thread.join(timeout=10)

    def push(self, *behaviours: dict[str, Any]) -> None:
        self.script.extend(behaviours)

    async def _embeddings(self, request: Request) -> Response:
        """Deterministic vectors: a text's letters counted into `embedding_dim` buckets, in
        reversed order (so the client must sort by index)."""
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for index, text in enumerate(texts):
            vector = [0.0] * self.embedding_dim
            for char in text.lower():
                if char.isalpha():
                    vector[(ord(char) - ord("a")) % self.embedding_dim] += 1.0
            data.append({"object": "embedding", "index": index, "embedding": vector})
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        payload = {"object": "list", "data": data[::-1], "model": body["model"], "usage": usage}
        return JSONResponse(payload)

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            if self.responder is not None:
                behaviour = self.responder(body)
            else:
                behaviour = self.script.popleft() if self.script else self.default
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if "stall" in behaviour:
            await asyncio.sleep(behaviour["stall"])
        if "raw" in behaviour:
            return Response(behaviour["raw"], headers=behaviour.get("headers", {}))
        if "status" in behaviour:
            headers = {}
            if "retry_after" in behaviour:
                headers["retry-after"] = str(behaviour["retry_after"])
            error = {"error": {"message": behaviour.get("message", "fake error"), "type": "x"}}
            return JSONResponse(error, status_code=behaviour["status"], headers=headers)
        message: dict[str, Any] = {"role": "assistant", "content": behaviour.get("content")}
        if "refusal" in behaviour:
            message["refusal"] = behaviour["refusal"]
            message["content"] = None
        if "tool_calls" in behaviour:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for i, c in enumerate(behaviour["tool_calls"])
            ]
        finish = behaviour.get(
            "finish_reason", "tool_calls" if "tool_calls" in behaviour else "stop"
        )
        usage = behaviour.get(
            "usage", {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        )
        extra = {"timings": behaviour["timings"]} if "timings" in behaviour else {}
        if body.get("stream"):
            chunks = _sse(body, message, finish, usage | extra)
            return StreamingResponse(_paced(chunks, behaviour), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
                **extra,
            }
        )


async def _paced(chunks: AsyncIterator[str], behaviour: dict[str, Any]) -> AsyncIterator[str]:
    """The chunks as a slow, hung or busy server sends them (llama.cpp's keep-alive while it
    reads a long prompt is an SSE comment line)."""
    if "silence" in behaviour:
        yield ":\n\n"
        await asyncio.sleep(behaviour["silence"])
    count, interval = behaviour.get("keepalive", (0, 0))
    for _ in range(count):
        yield ":\n\n"
        await asyncio.sleep(interval)
    async for chunk in chunks:
        yield chunk
        if behaviour.get("pause"):
            await asyncio.sleep(behaviour["pause"])


async def _sse(
    body: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, Any]
) -> AsyncIterator[str]:
    """The answer as OpenAI streams it: text a few characters a chunk (larger chunks for a
    long text), a refusal, tool calls (name first, arguments in pieces), then the finish and
    a last chunk with the usage (and llama.cpp's timings, which it sends there)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None, **extra: Any) -> str:
        data = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }
        return f"data: {json.dumps(data)}\n\n"

    content = message.get("content") or ""
    size = max(3, len(content) // 1000)
    for start in range(0, len(content), size):
        yield chunk({"content": content[start : start + size]}, None)
    if message.get("refusal"):
        yield chunk({"refusal": message["refusal"]}, None)
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        head = {"id": call["id"], "type": "function", "function": {"name": function["name"]}}
        yield chunk({"tool_calls": [{"index": index, **head}]}, None)
        arguments = function["arguments"] or ""
        for start in range(0, len(arguments), 8):
            piece = {"arguments": arguments[start : start + 8]}
            yield chunk({"tool_calls": [{"index": index, "function": piece}]}, None)
    yield chunk({}, finish)
    timings = usage.pop("timings", None)
    final = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": usage,
        **({"timings": timings} if timings else {}),
    }
    yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


def main() -> None:
    """Serve until killed, printing the base URL: python -m tests.fake_openai --latency 0.05"""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with FakeOpenAI(latency_s=args.latency) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
