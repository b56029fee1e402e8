"""Client overhead: 1,000 concurrent requests to a fake OpenAI server answering after 50 ms.

The server runs in its own process. For each concurrency limit C, the ideal total time is
latency x ceil(requests / C). On 2 cores the fake server itself (one uvicorn process) cannot
reach the ideal at high C, so the same requests are also sent by a bare HTTP client (httpx2,
the JSON body posted and decoded, nothing else): autonoma's client against that floor is what
the layer costs (SDK, validation, usage and cost accounting, rate limiting, retries).

    python bench/llm_client_overhead.py [--requests 1000] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import subprocess
import sys
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autonoma.llm import LLMSettings, OpenAICompatModel  # noqa: E402
from bench.common import write_result  # noqa: E402


async def measure(base_url: str, requests: int, limit: int) -> float:
    model = OpenAICompatModel("fake", base_url=base_url, api_key="x", settings=LLMSettings())
    gate = asyncio.Semaphore(limit)

    async def one(i: int) -> None:
        async with gate:
            await model.request([{"role": "user", "content": f"request {i}"}], max_tokens=8)

    await one(-1)  # open the connection pool before timing
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(requests)))
    elapsed = time.perf_counter() - started
    await model.aclose()
    return elapsed


async def measure_bare(base_url: str, requests: int, limit: int) -> float:
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    gate = asyncio.Semaphore(limit)
    async with httpx2.AsyncClient(base_url=base_url, limits=limits, timeout=60) as http:

        async def one(i: int) -> None:
            body = {
                "model": "fake",
                "messages": [{"role": "user", "content": f"request {i}"}],
                "max_tokens": 8,
            }
            async with gate:
                response = await http.post("/chat/completions", json=body)
                response.raise_for_status()
                response.json()

        await one(-1)
        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--limits", default="50,100,250,1000")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--latency", str(args.latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        rows = []
        for limit in (int(x) for x in args.limits.split(",")):
            elapsed = asyncio.run(measure(base_url, args.requests, limit))
            bare = asyncio.run(measure_bare(base_url, args.requests, limit))
            ideal = args.latency * math.ceil(args.requests / limit)
            row = {
                "concurrency": limit,
                "seconds": round(elapsed, 3),
                "ideal_seconds": round(ideal, 3),
                "overhead_ratio": round(elapsed / ideal, 2),
                "requests_per_second": round(args.requests / elapsed, 1),
                "bare_http_seconds": round(bare, 3),
                "over_bare_http": round(elapsed / bare, 2),
            }
            print(row, flush=True)
            rows.append(row)
    finally:
        server.terminate()
        server.wait()
    write_result(
        "llm_client_overhead",
        {"requests": args.requests, "latency_s": args.latency, "results": rows},
    )


if __name__ == "__main__":
    main()
