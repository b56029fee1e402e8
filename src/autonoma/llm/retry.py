"""When to retry a failed model call and how long to wait."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    max_retry_after_s: float = 60.0

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter around the nominal delay (attempt counts from 1)."""
        nominal = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (attempt - 1))
        jitter: float = random.uniform(0.5, 1.5)
        return nominal * jitter


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
