"""How long the LLM layer takes to give up on a dead or hung model server, and that a slow
one is never cut, with the default limits (docs/llm.md: answers streamed, a first-byte limit,
an idle limit between chunks, timeouts tried twice).

Each case is a real HTTP server on 127.0.0.1 (the tests' fake OpenAI server):

- refused: nothing listens at the address;
- hung: the server accepts and never begins an answer;
- silent: it sends its headers, then nothing;
- slow: it streams an answer for about 90 s, a few characters every 0.6 s;
- long prompt: it sends llama.cpp's keep-alive every 30 s for 120 s, then the answer.

    python bench/llm_hung_server.py [--cases refused,hung,silent,slow,long_prompt]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.errors import ModelError
from autonoma.llm import LLMSettings, OpenAICompatModel
from bench.common import write_result
from tests.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": "hi"}]
SLOW_TEXT = "a slow model writes this answer " * 14  # 448 characters: 150 chunks of 3
CASES: dict[str, dict[str, Any]] = {
    "hung": {"stall": 3600},
    "silent": {"content": "never seen", "silence": 3600},
    "slow": {"content": SLOW_TEXT, "pause": 0.6},
    "long_prompt": {"content": "after a long prompt", "keepalive": [4, 30.0]},
}


async def attempt(base_url: str) -> dict[str, Any]:
    model = OpenAICompatModel("m", base_url=base_url, api_key="k", settings=LLMSettings())
    started = time.monotonic()
    try:
        answer = await model.request(MESSAGES, max_tokens=200)
        outcome = {"answered": True, "text_chars": len(answer.text)}
    except ModelError as err:
        outcome = {"answered": False, "error": str(err)}
    finally:
        await model.aclose()
    return outcome | {"seconds": round(time.monotonic() - started, 1)}


async def run_case(name: str) -> dict[str, Any]:
    if name == "refused":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
            return await attempt(f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
    with FakeOpenAI() as server:
        server.default = CASES[name]
        outcome = await attempt(server.base_url)
        return outcome | {"requests": len(server.requests)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="refused,hung,silent,slow,long_prompt")
    args = parser.parse_args()
    settings = LLMSettings()
    names = ["connect_timeout_s", "first_byte_timeout_s", "idle_timeout_s"]
    limits = {k: getattr(settings, k) for k in [*names, "max_attempts", "timeout_attempts"]}
    results = {}
    for name in args.cases.split(","):
        results[name] = await run_case(name)
        print(name, results[name], file=sys.stderr)
    write_result("llm_hung_server", {"limits": limits, "cases": results})


if __name__ == "__main__":
    asyncio.run(main())
