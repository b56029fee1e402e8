"""A 300-step run with long-term memory: does the prompt stay inside the model's context, and
flat in size once the window fills?

The agent's commands follow a fixed script (appending to notes, reading them back, writing
and listing files, remember and recall), so every run sees the same work; everything memory
does runs for real with the embedded model: importance ratings, the rolling summary it
rewrites as steps age out, and reflections. Every agent prompt is counted with the model's own
tokenizer and chat template. The baseline is the whole history verbatim (every step's command
and result after the same system prompt), which is what a loop without a short-term memory
budget sends.

    python bench/memory_context.py [--model smollm2-135m] [--steps 300] [--report-from DIR]
        [--label LABEL]

`prefix_kept_*`: the share of each agent prompt (in characters) that begins as the prompt before
it does, which is the most a prompt cache can reuse.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.llm import EmbeddedModel, LLMSettings
from autonoma.llm.base import CompletionRequest, Model, RawCompletion
from autonoma.llm.registry import ModelStore
from autonoma.llm.types import MessagesLike, ModelResponse, OutputSpec, Usage, as_messages
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
        self.previous = ""
        self.kept: list[float] = []  # each prompt's share that begins as the one before it

    @property
    def context_window(self) -> int:
        return int(self.real.context_window)

    def in_lane(self, lane: str) -> Model:
        return self  # the loop asks through a lane: its requests must still come here

    async def request(
        self, messages: MessagesLike, output: OutputSpec = None, **kwargs: Any
    ) -> ModelResponse:
        schema = output if isinstance(output, dict) else {}
        if "command" not in schema.get("properties", {}):
            return await self.real.request(messages, output, **kwargs)
        tokens = await self.real.count_prompt_tokens(messages)
        self.prompt_tokens.append(tokens)
        text = "\n".join(m.content for m in as_messages(messages))
        if self.previous:
            same = len(os.path.commonprefix([self.previous, text]))  # noqa: RUF071 (by character)
            self.kept.append(same / len(text))
        self.previous = text
        action = scripted_action(len(self.prompt_tokens))
        return ModelResponse(
            text=json.dumps(action),
            data=action,
            usage=Usage(prompt_tokens=tokens, completion_tokens=60),
        )

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        raise NotImplementedError


def prefix_kept(kept: list[float]) -> dict[str, Any]:
    """How much of each agent prompt a prompt cache could reuse from the one before (the
    characters they share from the start): the most any server's cache can give."""
    if not kept:
        return {}
    ordered = sorted(kept)
    return {
        "prefix_kept_mean": round(sum(kept) / len(kept), 3),
        "prefix_kept_median": round(ordered[len(ordered) // 2], 3),
        "prefix_kept_p10": round(ordered[len(ordered) // 10], 3),
    }


async def report(
    store: RunStore, run_id: str, real: EmbeddedModel, name: str = "memory_context", **extra: Any
) -> None:
    """The results, all from the run store (each step's prompt tokens are the real count the
    wrapper charged), so a run cut short can be reported too (`--report-from`)."""
    steps = store.steps(run_id)
    events = store.events(run_id)
    run = store.get_run(run_id)
    tokens = [s.prompt_tokens for s in steps if s.prompt_tokens]
    agent = RunLoop(
        real, default_tools(memory=True), store, config=LoopConfig(checks=False, continuous=True)
    )
    identity = AgentIdentity.model_validate(run.identity)
    system = {"role": "system", "content": agent.system_prompt(run, identity)}
    baseline = []
    for n in range(10, len(steps) + 1, 10):
        history = "\n\n".join(step_text(s, 4000) for s in steps[: n - 1])
        full = [system, {"role": "user", "content": history + "\n\nNext command?"}]
        baseline.append({"step": n, "tokens": await real.count_prompt_tokens(full)})
        print(f"step {n}: ours {tokens[n - 1]}, every step verbatim {baseline[-1]['tokens']}")
    kinds = [e.kind for e in events]
    write_result(
        name,
        {
            **extra,
            "steps": len(tokens),
            "status": run.status,
            "context_window": real.context_window,
            "answer_tokens": LoopConfig(checks=False).max_answer_tokens,
            "prompt_tokens": tokens,
            "max_prompt_tokens": max(tokens),
            "mean_prompt_tokens_last_50": round(sum(tokens[-50:]) / len(tokens[-50:]), 1),
            "full_history_tokens": baseline,
            "summary_updates": kinds.count("summary_updated"),
            "memory_saves": kinds.count("memory_saved"),
            "reflection_rounds": kinds.count("reflected"),
            "reflections": sum(
                len(e.data.get("reflections", [])) for e in events if e.kind == "reflected"
            ),
            "total_tokens": run.spent.tokens,
        },
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--label", default="", help="memory_context_LABEL.json")
    parser.add_argument(
        "--report-from", type=Path, help="report the run kept in this directory (runs.db)"
    )
    args = parser.parse_args()
    name = f"memory_context_{args.label}" if args.label else "memory_context"
    real = EmbeddedModel(
        ModelStore().ensure(args.model), settings=LLMSettings(local_context=8192, local_slots=1)
    )
    try:
        if args.report_from:
            store = RunStore(args.report_from / "runs.db")
            (run,) = store.list_runs(1)
            await report(store, run.id, real, name, model=args.model, planned_steps=args.steps)
            return
        directory = Path(tempfile.mkdtemp(prefix="autonoma-context-"))
        print(f"run kept in {directory} (report it with --report-from if cut short)")
        store = RunStore(directory / "runs.db")
        model = ScriptedAgentRealMemory(real)
        settings = RunSettings(
            checks=False,
            model=args.model,
            continuous=True,
            limits=BudgetLimits(max_steps=args.steps),
        )
        run, _ = await create_run(
            store, model, "Keep a notebook on river birds", settings,
            workspace=directory / "ws", identity=IDENTITY,
        )  # fmt: skip
        started = time.perf_counter()
        await run_agent(store, model, run, embedder=MiniLMEmbedder())
        seconds = round(time.perf_counter() - started)
        await report(store, run.id, real, name, model=args.model, planned_steps=args.steps,
                     seconds=seconds, **prefix_kept(model.kept))  # fmt: skip
    finally:
        await real.aclose()


if __name__ == "__main__":
    asyncio.run(main())
