"""Valid-action rate of the embedded models: constrained decoding against free-form JSON.

For each model and each of the 60 agent-style prompts, ask for one of 7 typed commands:
  constrained   - the tool-call schema becomes a llama.cpp grammar (autonoma's path), no re-ask;
                  any failures are asked again with the default re-asks, as the agent runs
  free-form     - the same schema described in the prompt, decoding unconstrained; the raw
                  answer is scored two ways:
                    autogpt: json.loads(text.strip()), as AutoGPT parsed replies
                    repair:  autonoma's extraction and repair (fences, prose, quotes, tails)
An answer is valid when it parses and names a known command with arguments matching its schema.

    python bench/llm_valid_actions.py [--models smollm2-135m,qwen2.5-coder-1.5b] [--prompts 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.errors import OutputInvalid
from autonoma.llm import Capabilities, LLMSettings, Tools, open_model
from autonoma.llm.output import OutputPlan, OutputProblem, extract_json
from bench.agent_prompts import AGENT_PROMPTS, AGENT_TOOLS, agent_messages
from bench.common import write_result

TOOLS = Tools(AGENT_TOOLS)
PLAN = OutputPlan.of(TOOLS)
MAX_TOKENS = 200
TEMPERATURE = 0.2


def valid_call(value: Any) -> bool:
    try:
        PLAN.parse_tool_json(value)
    except OutputProblem:
        return False
    return True


def autogpt_parse(text: str) -> bool:
    try:
        return valid_call(json.loads(text.strip()))
    except json.JSONDecodeError:
        return False


def repair_parse(text: str) -> bool:
    try:
        return valid_call(extract_json(text))
    except OutputProblem:
        return False


async def run_model(name: str, prompts: list[str]) -> dict[str, Any]:
    settings = LLMSettings(max_reasks=0, local_context=4096, local_slots=2)
    model = open_model(f"local:{name}", settings)
    gate = asyncio.Semaphore(2)

    async def constrained(prompt: str, reasks: int = 0) -> str | None:
        """None when the answer is a valid command, else why it is not."""
        model.settings = model.settings.model_copy(update={"max_reasks": reasks})
        async with gate:
            try:
                await model.request(
                    agent_messages(prompt),
                    output=TOOLS,
                    max_tokens=MAX_TOKENS,
                    temperature=TEMPERATURE,
                )
            except OutputInvalid as error:
                return str(error).splitlines()[0]
            return None

    async def free_form(prompt: str) -> str:
        """The raw answer to the prompt an unconstrained backend gets (schema in the prompt)."""
        async with gate:
            call = model._plan_call(agent_messages(prompt), TOOLS, MAX_TOKENS, TEMPERATURE, None)
            raw = await model._complete(replace(call, plan=OutputPlan.of(None), mode="text"))
            return raw.text

    started = time.monotonic()
    problems = await asyncio.gather(*(constrained(p) for p in prompts))
    constrained_s = time.monotonic() - started
    constrained_ok = [problem is None for problem in problems]
    failed = [(p, why) for p, why in zip(prompts, problems, strict=True) if why is not None]
    # The failures again, with the layer's default re-asks (as the agent runs).
    default_reasks = LLMSettings().max_reasks
    retried = [await constrained(p, default_reasks) for p, _ in failed]
    model.capabilities = Capabilities(json_schema=False, native_tools=False)
    started = time.monotonic()
    raws = await asyncio.gather(*(free_form(p) for p in prompts))
    free_s = time.monotonic() - started
    await model.aclose()
    n = len(prompts)
    result = {
        "prompts": n,
        "constrained_valid": sum(constrained_ok),
        "constrained_rate": sum(constrained_ok) / n,
        "constrained_failures": [{"prompt": p, "problem": why} for p, why in failed],
        "constrained_with_reasks_valid": n - sum(why is not None for why in retried),
        "constrained_with_reasks_rate": (n - sum(why is not None for why in retried)) / n,
        "default_max_reasks": default_reasks,
        "freeform_autogpt_valid": sum(autogpt_parse(t) for t in raws),
        "freeform_autogpt_rate": sum(autogpt_parse(t) for t in raws) / n,
        "freeform_repair_valid": sum(repair_parse(t) for t in raws),
        "freeform_repair_rate": sum(repair_parse(t) for t in raws) / n,
        "constrained_seconds": round(constrained_s, 1),
        "freeform_seconds": round(free_s, 1),
        "freeform_examples": raws[:3],
    }
    print(name, {k: v for k, v in result.items() if k != "freeform_examples"}, flush=True)
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-1.5b")
    parser.add_argument("--prompts", type=int, default=len(AGENT_PROMPTS))
    args = parser.parse_args()
    prompts = AGENT_PROMPTS[: args.prompts]
    results = {name: await run_model(name, prompts) for name in args.models.split(",")}
    write_result(
        "llm_valid_actions",
        {
            "max_tokens": MAX_TOKENS,
            "temperature": TEMPERATURE,
            "commands": len(AGENT_TOOLS),
            "models": results,
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
