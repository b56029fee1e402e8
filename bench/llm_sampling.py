"""Does the embedded model's sampling cost generation speed? Tokens a second with the default
local sampling (DRY and a repeat penalty, `LLMSettings.local_sampling`) against plain
sampling, at temperature 0.2 (the agent's) and 0, on real first-step prompts of the agent
(JSON and code actions, bench/llm_speculative.py's `prompts`) with the answer's schema as a
grammar. Each prompt is sent twice and the second (prompt cached) is counted; llama.cpp's
own timings.

    python bench/llm_sampling.py [--goals a,b]
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

DEFAULT_SAMPLING = LLMSettings().local_sampling
CONFIGS: dict[str, dict[str, Any]] = {
    "default sampling, t 0.2": {"temperature": 0.2, **DEFAULT_SAMPLING},
    "plain, t 0.2": {"temperature": 0.2},
    "default sampling, t 0": {"temperature": 0, **DEFAULT_SAMPLING},
    "plain, t 0": {"temperature": 0},
}


async def measure(cases: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    model = EmbeddedModel(path, slots=1)
    client = await model.start()
    results = []
    try:
        async with httpx2.AsyncClient(timeout=600) as http:
            for label, sampling in CONFIGS.items():
                rows = []
                for case in cases:
                    body = request_body(case, max_tokens=400, **sampling)
                    for _ in range(2):
                        answer = (
                            await http.post(f"{client.base_url}/chat/completions", json=body)
                        ).json()
                    timings = answer.get("timings", {})
                    rows.append(
                        {
                            "goal": case["goal"],
                            "actions": case["actions"],
                            "tokens": timings.get("predicted_n"),
                            "tokens_per_s": round(timings.get("predicted_per_second", 0), 2),
                        }
                    )
                    print(label, case["goal"], case["actions"], rows[-1], file=sys.stderr)
                speeds = [r["tokens_per_s"] for r in rows]
                results.append(
                    {
                        "config": label,
                        "tokens_per_s_mean": round(statistics.mean(speeds), 2),
                        "tokens_per_s_range": [min(speeds), max(speeds)],
                        "rows": rows,
                    }
                )
    finally:
        await model.aclose()
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--goals", default="csv_sum,sort_ignore_case")
    args = parser.parse_args()
    path = ModelStore().ensure("qwen2.5-coder-1.5b")
    with tempfile.TemporaryDirectory() as tmp:
        cases = prompts(args.goals.split(","), Path(tmp))
    results = await measure(cases, path)
    write_result("llm_sampling", {"configs": results})


if __name__ == "__main__":
    asyncio.run(main())
