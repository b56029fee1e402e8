"""A 300-step run with long-term memory: does the prompt stay inside the model's context, and
flat in size once the window fills?

The agent's commands follow a fixed script (appending to notes, reading them back, writing
and listing files, remember and recall), so every run sees the same work; everything memory
does runs for real with the embedded model: importance ratings, the rolling summary it
rewrites as steps age out, and reflections. Every agent prompt is counted with the model's own
tokenizer and chat template. The baseline is the whole history verbatim (every step's command
and result after the same system prompt), which is what a loop without a short-term memory
budget sends.

    python bench/memory_context.py [--model smollm2-135m] [--steps 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import RunSettings, create_run, run_agent
from autonoma.llm import EmbeddedModel, LLMSettings
from autonoma.llm.base import CompletionRequest, Model, RawCompletion
from autonoma.llm.registry import ModelStore
from autonoma.llm.types import MessagesLike, ModelResponse, OutputSpec, Usage
from autonoma.memory.context import step_text
from autonoma.memory.embeddings import MiniLMEmbedder
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from bench.common import write_result

IDENTITY = AgentIdentity(
    name="ArchivistGPT",
    role="an agent that keeps a research notebook on river birds",
    goals=[
        "Keep notes on river birds in notes.txt",
        "Write a short profile of each bird to its own file",
        "Keep an index of the profiles in index.md",
    ],
)
BIRDS = ["heron", "kingfisher", "dipper", "egret", "cormorant", "grebe", "wagtail", "sandpiper"]


def scripted_action(n: int) -> dict[str, Any]:
    bird = BIRDS[n % len(BIRDS)]
    cycle = n % 10
    if cycle == 0:
        command, args = "read_file", {"path": "notes.txt"}
    elif cycle == 3:
        text = f"# {bird.title()}\nSeen at the river on day {n}. Feeds on fish and insects.\n"
        command, args = "write_file", {"path": f"{bird}-{n}.md", "text": text}
    elif cycle == 5:
        command, args = "list_files", {}
    elif cycle == 7:
        command, args = "remember", {"text": f"The {bird} was seen on day {n} near the weir."}
    elif cycle == 9:
        command, args = "recall", {"query": f"where was the {bird} seen"}
    else:
        line = f"day {n}: a {bird} fished below the bridge for {n % 17 + 3} minutes.\n"
        command, args = "append_file", {"path": "notes.txt", "text": line}
    thoughts = {
        "text": f"step {n}: {command} for the {bird}",
        "reasoning": f"the notebook needs the {bird}",
        "plan": f"note the {bird}, then profile it",
        "criticism": "keep notes short",
        "speak": f"{command} for the {bird}",
    }
    return {"thoughts": thoughts, "command": {"name": command, "args": args}}


class ScriptedAgentRealMemory(Model):
    """Agent steps from `scripted_action`, counted with the real tokenizer; every other
    request (memory's) goes to the real model."""

    def __init__(self, real: EmbeddedModel) -> None:
        super().__init__(real.name, model_id=real.model_id, settings=real.settings)
        self.real = real
        self.prompt_tokens: list[int] = []
        self.prompts: list[list[dict[str, Any]]] = []

    @property
    def context_window(self) -> int:
        return int(self.real.context_window)

    async def request(
        self, messages: MessagesLike, output: OutputSpec = None, **kwargs: Any
    ) -> ModelResponse:
        schema = output if isinstance(output, dict) else {}
        if "command" not in schema.get("properties", {}):
            return await self.real.request(messages, output, **kwargs)
        tokens = await self.real.count_prompt_tokens(messages)
        self.prompt_tokens.append(tokens)
        self.prompts.append([dict(m) for m in messages])
        action = scripted_action(len(self.prompt_tokens))
        return ModelResponse(
            text=json.dumps(action),
            data=action,
            usage=Usage(prompt_tokens=tokens, completion_tokens=60),
        )

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        raise NotImplementedError


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    real = EmbeddedModel(
        ModelStore().ensure(args.model), settings=LLMSettings(local_context=8192, local_slots=1)
    )
    model = ScriptedAgentRealMemory(real)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="autonoma-context-") as tmp:
        store = RunStore(Path(tmp) / "runs.db")
        settings = RunSettings(
            model=args.model, continuous=True, limits=BudgetLimits(max_steps=args.steps)
        )
        run, _ = await create_run(
            store, model, "Keep a notebook on river birds", settings,
            workspace=Path(tmp) / "ws", identity=IDENTITY,
        )  # fmt: skip
        try:
            outcome = await run_agent(store, model, run, embedder=MiniLMEmbedder())
            steps = store.steps(run.id)
            events = store.events(run.id)
            system = model.prompts[0][0]
            baseline = []
            for n in range(10, args.steps + 1, 10):
                history = "\n\n".join(step_text(s, 4000) for s in steps[: n - 1])
                full = [system, {"role": "user", "content": history + "\n\nNext command?"}]
                baseline.append({"step": n, "tokens": await real.count_prompt_tokens(full)})
                print(f"step {n}: ours {model.prompt_tokens[n - 1]}, full history "
                      f"{baseline[-1]['tokens']}", flush=True)  # fmt: skip
        finally:
            await real.aclose()
    kinds = [e.kind for e in events]
    tokens = model.prompt_tokens
    window = real.context_window
    write_result(
        "memory_context",
        {
            "model": args.model,
            "steps": len(tokens),
            "status": outcome.status,
            "context_window": window,
            "answer_tokens": 700,
            "prompt_tokens": tokens,
            "max_prompt_tokens": max(tokens),
            "mean_prompt_tokens_last_100": round(sum(tokens[-100:]) / len(tokens[-100:]), 1),
            "full_history_tokens": baseline,
            "summary_updates": kinds.count("summary_updated"),
            "memory_saves": kinds.count("memory_saved"),
            "reflections": sum(
                len(e.data.get("reflections", [])) for e in events if e.kind == "reflected"
            ),
            "reflection_rounds": kinds.count("reflected"),
            "total_tokens": outcome.spent.tokens,
            "seconds": round(time.perf_counter() - started),
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
