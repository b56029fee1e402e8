"""A shared limit on requests and tokens per period that many concurrent callers respect."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Slot:
    """A call admitted by `RateLimiter.hold`; knows when its request was sent, if told."""

    clock: Callable[[], float]
    sent_at: float | None = None


_sending: ContextVar[Slot | None] = ContextVar("autonoma_rate_slot", default=None)


@contextmanager
def sending(slot: Slot | None) -> Iterator[None]:
    """Within this block, `request_sent()` marks `slot` (None: marks nothing)."""
    marker = _sending.set(slot)
    try:
        yield
    finally:
        _sending.reset(marker)


def request_sent() -> None:
    """Called by the HTTP layer once a request's body is on the wire, inside `sending(slot)`:
    the slot then counts from then (plus a margin) instead of from the end of the call."""
    slot = _sending.get()
    if slot is not None:
        slot.sent_at = slot.clock()


class RateLimiter:
    """Sliding-window limiter: in any window of `period_s` seconds, at most `requests` requests
    and `tokens` tokens are admitted. Callers are served first come, first served.

    A leaky bucket (aiolimiter) lets a full burst through at each end of a window, so it can
    admit up to twice the limit in one window; an API counting per minute would answer 429.

    `hold()` is for calls whose arrival at the server is later than their admission (a slot
    counted from admission alone was freed a window after it, while its request may have
    arrived up to a second later, and a server counting arrivals answered 429). The slot is
    taken from admission until the call ends, and then counts for `period_s` from the latest
    moment the request can have arrived: when the HTTP layer said its body was sent
    (`request_sent`) plus `arrival_margin_s`, or the end of the call when it did not say.
    """

    def __init__(
        self,
        requests: int | None = None,
        tokens: int | None = None,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        arrival_margin_s: float = 0.25,
    ) -> None:
        if requests is not None and requests < 1:
            raise ValueError("requests per period must be at least 1")
        if tokens is not None and tokens < 1:
            raise ValueError("tokens per period must be at least 1")
        self.requests = requests
        self.tokens = tokens
        self.period_s = period_s
        self._clock = clock
        self.arrival_margin_s = arrival_margin_s  # from sent to counted by the server, at most
        self._admitted: list[tuple[float, int, int]] = []  # heap of (counted from, seq, tokens)
        self._held: dict[int, int] = {}  # calls in flight: seq to tokens
        self._seq = itertools.count()
        self._token_sum = 0
        self._lock = asyncio.Lock()
        self._released = asyncio.Event()

    def _expire(self, now: float) -> None:
        while self._admitted and now - self._admitted[0][0] >= self.period_s:
            _, _, amount = heapq.heappop(self._admitted)
            self._token_sum -= amount

    def _fits(self, amount: int) -> bool:
        used = len(self._admitted) + len(self._held)
        if self.requests is not None and used + 1 > self.requests:
            return False
        return self.tokens is None or self._token_sum + amount <= self.tokens

    async def _admit(self, tokens: int, held: bool) -> int:
        amount = max(0, tokens if self.tokens is None else min(tokens, self.tokens))
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                if self._fits(amount):
                    seq = next(self._seq)
                    self._token_sum += amount
                    if held:
                        self._held[seq] = amount
                    else:
                        heapq.heappush(self._admitted, (now, seq, amount))
                    return seq
                if self._admitted:
                    wait = self.period_s - (now - self._admitted[0][0])
                    await asyncio.sleep(max(wait, 0.001))
                else:  # every slot is held by a call in flight: wait for one to end
                    self._released.clear()
                    await self._released.wait()

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request of `tokens` tokens fits; it counts from now. A request larger
        than the whole token budget is admitted alone once the window is empty, rather than
        never."""
        await self._admit(tokens, held=False)

    @asynccontextmanager
    async def hold(self, tokens: int = 0) -> AsyncIterator[Slot]:
        """Admit one call (as `acquire`); its slot counts until `period_s` after the request
        arrived (as known: see the class; send it within `sending(slot)`)."""
        seq = await self._admit(tokens, held=True)
        slot = Slot(self._clock)
        try:
            yield slot
        finally:
            amount = self._held.pop(seq)
            arrived = self._clock()
            if slot.sent_at is not None:
                arrived = min(arrived, slot.sent_at + self.arrival_margin_s)
            heapq.heappush(self._admitted, (arrived, seq, amount))
            self._released.set()
