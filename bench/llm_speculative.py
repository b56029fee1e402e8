"""Self-speculative decoding of the embedded model on agent answers: generation time with
llama.cpp's n-gram drafts (no draft model) against plain decoding.

An agent's answer is JSON whose keys, and often whose values (file names, text read a step
earlier), are already in its prompt: draft tokens looked up from n-grams of the context and
verified in one batch can be accepted several at a time. Each prompt is a real first-step
prompt of the agent (JSON actions and code actions) for goals of bench/everyday_goals.py, with
the answer's schema as a grammar, greedy (temperature 0), so the answers must come out the same
whichever way they are decoded; the bench says whether they did. Generation seconds and
tokens are llama.cpp's own timings; each prompt is sent twice and the second (prompt cached)
is the one counted.

    python bench/llm_speculative.py [--goals a,b] [--configs none,ngram-simple:3:16]
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

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import run_tools
from autonoma.llm import LLMSettings
from autonoma.llm.embedded import EmbeddedModel
from autonoma.llm.registry import ModelStore
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunStore
from autonoma.tools import Workspace
from bench.common import write_result
from bench.everyday_goals import BY_NAME

GOALS = "sort_ignore_case,csv_sum,fix_typo,slugify_function,chained_instructions,people_csv"
CONFIGS = "none,ngram-simple:3:16,ngram-simple:2:8,ngram-map-k:3:16,ngram-mod:8:16"


def prompts(goals: list[str], root: Path) -> list[dict[str, Any]]:
    """The first step's messages and answer schema for each goal, JSON and code actions."""
    found = []
    store = RunStore(root / "runs.db")
    settings = RunSettings(model="local:qwen2.5-coder-1.5b", continuous=True, memory=False)
    tools = run_tools(settings, memory=False)
    for name in goals:
        goal = BY_NAME[name]
        workspace = root / name
        workspace.mkdir()
        goal.setup(workspace)
        identity = AgentIdentity(name="FileGPT", role="an agent that does file tasks",
                                 goals=[goal.goal])  # fmt: skip
        run = store.create_run(goal=goal.goal, identity=identity.model_dump(),
                               settings=settings.model_dump(), workspace=str(workspace),
                               model=settings.model)  # fmt: skip
        for actions in ("json", "code"):
            config = LoopConfig(continuous=True, checks=False, actions=actions)  # type: ignore[arg-type]
            agent = RunLoop(_Unused(), tools, store, config=config)
            messages = agent.messages(run, identity, Workspace(workspace), [], BudgetSpent())
            found.append({"goal": name, "actions": actions, "messages": messages,
                          "schema": agent.answer_schema()})  # fmt: skip
    return found


def request_body(case: dict[str, Any], *, max_tokens: int, **sampling: Any) -> dict[str, Any]:
    """A chat request for one prompt of `prompts`, its answer constrained by its schema."""
    return {
        "model": "m",
        "messages": case["messages"],
        "max_tokens": max_tokens,
        "seed": 0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": case["schema"]},
        },
        **sampling,
    }


class _Unused(EmbeddedModel):
    """Building a prompt needs a model's context window, nothing else."""

    def __init__(self) -> None:
        super().__init__(Path("unused.gguf"), context=8192, slots=1)


async def measure(config: str, cases: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    kind, *numbers = config.split(":")
    settings = LLMSettings(local_speculative=kind)  # type: ignore[arg-type]
    if numbers:
        settings = settings.model_copy(update={"local_ngram": (int(numbers[0]), int(numbers[1]))})
    model = EmbeddedModel(path, settings=settings, slots=1)
    client = await model.start()
    rows = []
    try:
        async with httpx2.AsyncClient(timeout=600) as http:
            for case in cases:
                body = request_body(case, max_tokens=500, temperature=0)
                for _ in range(2):  # the second is counted: its prompt comes from the cache
                    answer = (
                        await http.post(f"{client.base_url}/chat/completions", json=body)
                    ).json()
                timings = answer.get("timings", {})
                rows.append(
                    {
                        "goal": case["goal"],
                        "actions": case["actions"],
                        "text": answer["choices"][0]["message"]["content"],
                        "tokens": timings.get("predicted_n"),
                        "generation_s": round(timings.get("predicted_ms", 0) / 1000, 2),
                        "draft_n": timings.get("draft_n"),
                        "draft_accepted": timings.get("draft_n_accepted"),
                    }
                )
                print(
                    config, case["goal"], case["actions"], rows[-1]["generation_s"], file=sys.stderr
                )
    finally:
        await model.aclose()
    seconds = [r["generation_s"] for r in rows]
    tokens = sum(r["tokens"] or 0 for r in rows)
    return {
        "config": config,
        "generation_s_mean": round(statistics.mean(seconds), 2),
        "tokens_per_s": round(tokens / sum(seconds), 2) if sum(seconds) else None,
        "rows": rows,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--goals", default=GOALS)
    parser.add_argument("--configs", default=CONFIGS)
    args = parser.parse_args()
    path = ModelStore().ensure("qwen2.5-coder-1.5b")
    with tempfile.TemporaryDirectory() as tmp:
        cases = prompts(args.goals.split(","), Path(tmp))
    results = [await measure(config, cases, path) for config in args.configs.split(",")]
    plain = {(r["goal"], r["actions"]): r["text"] for r in results[0]["rows"]}
    for result in results:
        same = [plain[(r["goal"], r["actions"])] == r["text"] for r in result["rows"]]
        result["same_answers"] = f"{sum(same)} of {len(same)}"
        result["speed_up"] = round(results[0]["generation_s_mean"] / result["generation_s_mean"], 2)
    write_result("llm_speculative", {"configs": [{k: v for k, v in r.items() if k != "rows"}
                                                 for r in results], "rows": results})  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
