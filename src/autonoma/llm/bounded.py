"""An HTTP transport whose answers are bounded in size after decompression.

httpx inflates a gzip body whole, so a small answer that inflates to gigabytes would be held
in memory. This transport asks for no compression, inflates what comes compressed anyway one
chunk at a time with a cap on its output, and stops any body, compressed or not, at a limit.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

import httpx2

MAX_ANSWER_BYTES = 64 * 2**20


class UnreadableAnswer(Exception):
    """A model server's answer passed the size limit (once inflated), or is compressed in a way
    autonoma does not read."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int = MAX_ANSWER_BYTES) -> None:
        self.inner = inner
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self.inner.handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        headers = [
            (k, v)
            for k, v in response.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length")
        ]
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_BoundedStream(response, encoding, self.limit),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, response: httpx2.Response, encoding: str, limit: int) -> None:
        self.response = response
        self.encoding = encoding
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        inflate = _inflater(self.encoding)
        total = 0
        async for raw in self.response.aiter_raw():
            data = raw
            while data:
                if inflate is None:
                    out, data = data, b""
                else:
                    out = inflate.decompress(data, 1 << 20)  # at most 1 MiB at a time
                    data = inflate.unconsumed_tail
                total += len(out)
                if total > self.limit:
                    raise UnreadableAnswer(
                        f"the answer passed {self.limit // 2**20} MiB"
                        + (" once inflated" if inflate is not None else "")
                    )
                if out:
                    yield out

    async def aclose(self) -> None:
        await self.response.aclose()


def _inflater(encoding: str) -> zlib._Decompress | None:
    if encoding in ("identity", ""):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise UnreadableAnswer(
        f"the answer is compressed as {encoding!r}, which autonoma does not read (it asks for none)"
    )
