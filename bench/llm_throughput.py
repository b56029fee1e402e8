"""Prompt and generation speed of the embedded models, with 1 and 2 parallel slots.

llama.cpp reports its own timings per request; we send `slots` requests at once and report
the per-request speeds (prompt processing, generation) and the aggregate generation rate: all
generated tokens / wall time, prompt processing included, as an agent step sees it.

    python bench/llm_throughput.py [--models smollm2-135m,qwen2.5-coder-1.5b] [--gen 128]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.llm import EmbeddedModel, LLMSettings, ModelStore
from bench.common import write_result

PROMPT = (
    "You are an autonomous agent. Your goal: write a short report on renewable energy. "
    "Commands: write_file(path, text), read_file(path), web_search(query). "
) * 12  # about 500 tokens


async def run(name: str, slots: int, gen_tokens: int, rounds: int) -> dict[str, Any]:
    path = ModelStore().ensure(name)
    model = EmbeddedModel(path, settings=LLMSettings(local_context=2048, local_slots=slots))
    client = await model.start()

    async def one(i: int) -> dict[str, Any]:
        response = await client._http().chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": f"[{i} {time.time_ns()}] {PROMPT}"}],
            max_tokens=gen_tokens,
            temperature=0.0,
            extra_body={"ignore_eos": True, "cache_prompt": False},
        )
        timings: dict[str, Any] = (response.model_extra or {})["timings"]
        return timings

    await one(-1)  # warm-up
    prompt_tps, gen_tps, aggregate, prompt_n = [], [], [], []
    for r in range(rounds):
        started = time.perf_counter()
        timings = await asyncio.gather(*(one(r * slots + i) for i in range(slots)))
        wall = time.perf_counter() - started
        prompt_tps += [t["prompt_per_second"] for t in timings]
        gen_tps += [t["predicted_per_second"] for t in timings]
        prompt_n += [t["prompt_n"] for t in timings]
        aggregate.append(sum(t["predicted_n"] for t in timings) / wall)
    await model.aclose()
    row = {
        "model": name,
        "slots": slots,
        "prompt_tokens": round(sum(prompt_n) / len(prompt_n)),
        "generated_tokens": gen_tokens,
        "prompt_tokens_per_s_per_request": round(sum(prompt_tps) / len(prompt_tps), 1),
        "gen_tokens_per_s_per_request": round(sum(gen_tps) / len(gen_tps), 1),
        "gen_tokens_per_s_aggregate": round(sum(aggregate) / len(aggregate), 1),
    }
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-1.5b")
    parser.add_argument("--gen", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = [
        asyncio.run(run(name, slots, args.gen, args.rounds))
        for name in args.models.split(",")
        for slots in (1, 2)
    ]
    write_result("llm_throughput", {"generated_tokens": args.gen, "results": rows})


if __name__ == "__main__":
    main()
