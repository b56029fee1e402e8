"""A shared limit on requests and tokens per period that many concurrent callers respect."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable


class RateLimiter:
    """Sliding-window limiter: in any window of `period_s` seconds, at most `requests` requests
    and `tokens` tokens are admitted. Callers are served first come, first served.

    A leaky bucket (aiolimiter) lets a full burst through at each end of a window, so it can
    admit up to twice the limit in one window; an API counting per minute would answer 429.
    """

    def __init__(
        self,
        requests: int | None = None,
        tokens: int | None = None,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests is not None and requests < 1:
            raise ValueError("requests per period must be at least 1")
        if tokens is not None and tokens < 1:
            raise ValueError("tokens per period must be at least 1")
        self.requests = requests
        self.tokens = tokens
        self.period_s = period_s
        self._clock = clock
        self._admitted: deque[tuple[float, int]] = deque()
        self._token_sum = 0
        self._lock = asyncio.Lock()

    def _expire(self, now: float) -> None:
        while self._admitted and now - self._admitted[0][0] >= self.period_s:
            _, amount = self._admitted.popleft()
            self._token_sum -= amount

    def _fits(self, amount: int) -> bool:
        if self.requests is not None and len(self._admitted) + 1 > self.requests:
            return False
        return self.tokens is None or self._token_sum + amount <= self.tokens

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request of `tokens` tokens fits. A request larger than the whole
        token budget is admitted alone once the window is empty, rather than never."""
        amount = max(0, tokens if self.tokens is None else min(tokens, self.tokens))
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                if self._fits(amount):
                    self._admitted.append((now, amount))
                    self._token_sum += amount
                    return
                wait = self.period_s - (now - self._admitted[0][0])
                await asyncio.sleep(max(wait, 0.001))
