"""The rate limiter holds its limit under many concurrent callers."""

from __future__ import annotations

import asyncio
import bisect
import time

from autonoma.llm.ratelimit import RateLimiter, request_sent, sending


def max_in_any_window(times: list[float], weights: list[int], period: float) -> int:
    order = sorted(range(len(times)), key=times.__getitem__)
    ts = [times[i] for i in order]
    ws = [weights[i] for i in order]
    best = 0
    for i, start in enumerate(ts):
        end = bisect.bisect_left(ts, start + period)
        best = max(best, sum(ws[i:end]))
    return best


async def test_requests_limit_holds_under_200_concurrent_callers():
    period, limit = 0.2, 25
    reads: list[float] = []  # as below: the limiter's own last reading is when it admitted

    def clock() -> float:
        reads.append(time.monotonic())
        return reads[-1]

    limiter = RateLimiter(requests=limit, period_s=period, clock=clock)
    admitted: list[float] = []

    async def caller() -> None:
        await limiter.acquire()
        # read after the return, a loaded machine put a request late, into the next window
        admitted.append(reads[-1])

    await asyncio.gather(*(caller() for _ in range(200)))
    assert len(admitted) == 200
    assert max_in_any_window(admitted, [1] * 200, period) <= limit


async def test_tokens_limit_holds_and_big_requests_still_pass():
    period, tokens = 0.2, 1000
    reads: list[float] = []  # the limiter's clock readings: the last before a return is the
    # time it counted the request from (read after the return, a pause of the process could
    # put the request 1.3 ms late, into the next window: seen once in CI)

    def clock() -> float:
        reads.append(time.monotonic())
        return reads[-1]

    limiter = RateLimiter(tokens=tokens, period_s=period, clock=clock)
    admitted: list[tuple[float, int]] = []
    sizes = [150, 300, 50, 2000] * 8  # 2000 exceeds the budget: admitted alone, as 1000

    async def caller(size: int) -> None:
        await limiter.acquire(size)
        admitted.append((reads[-1], min(size, tokens)))

    await asyncio.gather(*(caller(s) for s in sizes))
    assert len(admitted) == len(sizes)
    times = [t for t, _ in admitted]
    assert max_in_any_window(times, [w for _, w in admitted], period) <= tokens


async def test_a_held_slot_counts_until_a_period_after_the_call_ends():
    """A server counting arrivals sees at most the limit in any window, however late each
    request arrives after its admission (here: up to the whole call)."""
    period, limit = 0.2, 10
    limiter = RateLimiter(requests=limit, period_s=period)
    arrivals: list[float] = []
    answered: list[float] = []

    async def call(n: int) -> None:
        async with limiter.hold():
            await asyncio.sleep(0.01 * (n % 7))  # a late arrival at the server
            arrivals.append(limiter._clock())
            await asyncio.sleep(0.05)
            answered.append(limiter._clock())

    await asyncio.gather(*(call(n) for n in range(60)))
    assert len(answered) == 60
    assert max_in_any_window(arrivals, [1] * 60, period) <= limit
    # while every slot is held, a caller waits for a call to end, not for the window
    assert max_in_any_window(answered, [1] * 60, period) <= limit


async def test_a_slot_freed_by_an_error_still_counts_until_a_period_later():
    limiter = RateLimiter(requests=1, period_s=0.2)
    try:
        async with limiter.hold():
            raise RuntimeError("429")
    except RuntimeError:
        pass
    ended = limiter._clock()
    await limiter.acquire()
    assert limiter._clock() - ended >= 0.19


async def test_a_sent_request_counts_from_its_arrival_not_from_the_end_of_a_slow_call():
    """Told when the body went out, a held slot counts from then plus the arrival margin, not
    from the end of a slow answer."""
    margin = 0.01
    limiter = RateLimiter(requests=2, period_s=1.0, arrival_margin_s=margin)
    async with limiter.hold() as slot:
        with sending(slot):
            request_sent()
        await asyncio.sleep(0.05)  # a slow answer: longer than the margin
    ended = limiter._clock()
    assert slot.sent_at is not None
    assert limiter._admitted[0][0] == slot.sent_at + margin < ended


async def test_arrivals_within_the_margin_never_exceed_the_limit():
    """Requests that reach the server up to the margin after being sent: a server counting
    arrivals still never sees more than the limit in any window."""
    period, limit, margin = 0.3, 5, 0.03
    limiter = RateLimiter(requests=limit, period_s=period, arrival_margin_s=margin)
    arrivals: list[float] = []

    async def call(n: int) -> None:
        async with limiter.hold() as slot:
            with sending(slot):
                request_sent()
            assert slot.sent_at is not None
            arrivals.append(slot.sent_at + margin * (n % 3) / 2)  # within the margin
            await asyncio.sleep(0.2)  # a slow answer

    await asyncio.gather(*(call(n) for n in range(15)))
    assert max_in_any_window(arrivals, [1] * 15, period) <= limit


async def test_request_sent_outside_a_held_slot_changes_nothing() -> None:
    request_sent()  # e.g. a call made without a limiter
    limiter = RateLimiter(requests=1, period_s=0.2)
    async with limiter.hold():
        await asyncio.sleep(0.05)
    ended = limiter._clock()
    await limiter.acquire()
    assert limiter._clock() - ended >= 0.19  # never told: counted from the end


async def test_the_openai_client_reports_when_its_request_was_sent() -> None:
    from autonoma.llm import open_model
    from autonoma.llm.types import Message
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(latency_s=0.3) as server:
        model = open_model(f"openai:fake@{server.base_url}")
        limiter = RateLimiter(requests=1, period_s=0.5, arrival_margin_s=0.0)
        model.limiter = limiter  # type: ignore[attr-defined]
        try:
            await model.request([Message(role="user", content="hi")])
            ended = limiter._clock()
            counted_from = limiter._admitted[0][0]
            # the slot counts from the send, about the server's latency before the answer
            assert ended - counted_from >= 0.25
        finally:
            await model.aclose()


async def test_a_slot_can_be_taken_and_given_back_from_different_tasks() -> None:
    """As the Ray keeper does: admit in one actor call, release in another."""
    limiter = RateLimiter(requests=1, period_s=0.1)
    held = limiter.hold()
    await asyncio.create_task(held.__aenter__())
    await asyncio.create_task(held.__aexit__(None, None, None))
    await asyncio.wait_for(limiter.acquire(), 1)  # freed a period later
