"""Backoff, Retry-After parsing, and the price table."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from autonoma.llm import Price, Usage
from autonoma.llm.pricing import cost_usd, find_price
from autonoma.llm.retry import RetryPolicy, parse_retry_after


def test_backoff_grows_with_jitter_up_to_the_cap():
    policy = RetryPolicy(backoff_base_s=1.0, backoff_max_s=8.0)
    for attempt, nominal in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = {policy.backoff(attempt) for _ in range(50)}
        assert all(0.5 * nominal <= d <= 1.5 * nominal for d in delays)
        assert len(delays) > 1  # jittered


def test_retry_after_seconds_and_http_dates():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_prices_match_the_longest_prefix_and_overrides_win():
    assert find_price("gpt-4o-mini-2024-07-18") == find_price("gpt-4o-mini")
    assert find_price("gpt-4o-2024-08-06") == find_price("gpt-4o")
    assert find_price("my-local-llama") is None
    own = Price(input_per_mtok=1, output_per_mtok=2)
    assert find_price("my-local-llama", {"my-local": own}) == own


def test_cost_counts_cached_tokens_at_their_own_rate():
    price = Price(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=400_000)
    assert cost_usd(price, usage) == pytest.approx(600_000 * 2e-6 + 400_000 * 0.5e-6 + 4.0)
