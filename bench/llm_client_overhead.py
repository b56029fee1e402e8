"""Client overhead: 1,000 concurrent requests to a fake OpenAI server answering after 50 ms.

The server runs in its own process. For each concurrency limit C, the ideal total time is
latency x ceil(requests / C); what the client adds on top is its overhead.

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
            ideal = args.latency * math.ceil(args.requests / limit)
            row = {
                "concurrency": limit,
                "seconds": round(elapsed, 3),
                "ideal_seconds": round(ideal, 3),
                "overhead_ratio": round(elapsed / ideal, 2),
                "requests_per_second": round(args.requests / elapsed, 1),
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
