"""What slows a request that runs alone? Generation and prompt speed of one request at a
time with the embedded model served with 1 and 2 slots (the agent's server has 2: one for the
agent's steps, one for memory's calls), asked two ways: a plain HTTP request answered whole
(`--via http`), and the agent's own path, `Model.request`, which streams every answer
(`--via model`). Real first-step prompts of the agent, the answer's schema as a grammar, the
default sampling. Each prompt is sent twice; the second (its prompt cached) gives the
generation figure, the first the prompt figure. llama.cpp's own timings.

    python bench/llm_slots.py [--goals a,b] [--slots 1,2] [--via http,model] [--context 8192]
        [--generation-threads 2,1]

`--generation-threads` compares llama.cpp's threads while generating (prompts are computed
with all cores whatever it says).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2

from autonoma.llm import LLMSettings
from autonoma.llm.embedded import EmbeddedModel
from autonoma.llm.registry import ModelStore
from bench.common import write_result
from bench.llm_speculative import prompts, request_body


async def _timed(
    via: str, model: EmbeddedModel, http: httpx2.AsyncClient, url: str, case: dict[str, Any]
) -> tuple[int, float, int, float]:
    """Prompt tokens, prompt tokens a second, generated tokens, generated tokens a second."""
    if via == "http":
        body = request_body(case, max_tokens=400, **model.settings.local_sampling)
        t = (await http.post(f"{url}/chat/completions", json=body)).json().get("timings", {})
        return (
            t.get("prompt_n", 0), round(t.get("prompt_per_second", 0), 2),
            t.get("predicted_n", 0), round(t.get("predicted_per_second", 0), 2),
        )  # fmt: skip
    answer = await model.request(
        case["messages"], output=case["schema"], max_tokens=400, temperature=0.2, seed=0
    )
    usage = answer.usage
    computed = usage.prompt_tokens - usage.cached_tokens
    return (
        computed, round(computed / usage.prompt_seconds, 2) if usage.prompt_seconds else 0.0,
        usage.completion_tokens,
        round(usage.completion_tokens / usage.generation_seconds, 2)
        if usage.generation_seconds else 0.0,
    )  # fmt: skip


async def measure(
    cases: list[dict[str, Any]],
    path: Path,
    slots: int,
    context: int,
    via: str,
    generation_threads: int | None = None,
) -> dict[str, Any]:
    settings = LLMSettings(
        local_context=context,
        local_keep_prompts=False,
        local_generation_threads=generation_threads,
    )
    model = EmbeddedModel(path, slots=slots, settings=settings)
    client = await model.start()
    rows = []
    try:
        async with httpx2.AsyncClient(timeout=600) as http:
            for case in cases:
                timings = [await _timed(via, model, http, client.base_url, case) for _ in (1, 2)]
                rows.append(
                    {
                        "goal": case["goal"],
                        "actions": case["actions"],
                        "prompt_tokens": timings[0][0],
                        "prompt_per_s": timings[0][1],
                        "tokens": timings[1][2],
                        "tokens_per_s": timings[1][3],
                    }
                )
                print(slots, via, model.generation_threads, rows[-1], file=sys.stderr)
    finally:
        await model.aclose()
    speeds = [r["tokens_per_s"] for r in rows]
    prompt_speeds = [r["prompt_per_s"] for r in rows]
    return {
        "slots": slots,
        "via": via,
        "generation_threads": model.generation_threads,
        "context_per_slot": context,
        "tokens_per_s_mean": round(statistics.mean(speeds), 2),
        "prompt_per_s_mean": round(statistics.mean(prompt_speeds), 2),
        "rows": rows,
    }


def _counts(text: str) -> list[int]:
    """'2,1' as [2, 1]; an argparse error for anything else."""
    try:
        counts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of thread counts: {text!r}") from None
    if any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"thread counts are 1 or more: {text!r}")
    return counts


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--goals", default="csv_sum,sort_ignore_case")
    parser.add_argument("--slots", default="1,2")
    parser.add_argument("--via", default="http,model")
    parser.add_argument("--context", type=int, default=LLMSettings().local_context)
    parser.add_argument(
        "--generation-threads", type=_counts, default=[], help="e.g. 2,1; default: all cores"
    )
    parser.add_argument("--label", default="", help="results go to llm_slots_LABEL.json")
    args = parser.parse_args()
    path = ModelStore().ensure("qwen2.5-coder-1.5b")
    with tempfile.TemporaryDirectory() as tmp:
        cases = prompts(args.goals.split(","), Path(tmp))
    threads: list[int | None] = [*args.generation_threads] or [None]
    results = [
        await measure(cases, path, int(slots), args.context, via, generation)
        for via in args.via.split(",")
        for slots in args.slots.split(",")
        for generation in threads
    ]
    write_result(f"llm_slots_{args.label}" if args.label else "llm_slots", {"configs": results})


if __name__ == "__main__":
    asyncio.run(main())
