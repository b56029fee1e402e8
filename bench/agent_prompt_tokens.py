"""Prompt tokens per step: autonoma's prompt against AutoGPT's original, same 7 commands.

Both prompts get the same identity and the same seven commands, and both are counted by the
same tokenizer (Qwen2.5-Coder's, through llama.cpp with the chat template applied). Then a
20-step trajectory is replayed through both context builders:
  autonoma: system prompt + a transcript of the recent steps within a token budget,
            older steps summarised one line each;
  AutoGPT:  system prompt + time + the full message history (its JSON answers and
            "Command X returned: ..." results), newest first until 3,000 tokens
            (its 4,000-token limit minus 1,000 kept for the answer), + the trigger.

    python bench/agent_prompt_tokens.py [--model qwen2.5-coder-1.5b] [--steps 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from string import Template
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.agent.wiring import default_tools
from autonoma.llm import EmbeddedModel, LLMSettings, ModelStore
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunRecord, RunStore, StepRecord
from autonoma.tools import Workspace
from bench.common import write_result

BASELINE = Template((Path(__file__).parent / "baselines" / "autogpt_prompt.txt").read_text())
IDENTITY = AgentIdentity(
    name="HaikuGPT",
    role="an AI that writes seasonal haiku and keeps them in files",
    goals=["Write a haiku about autumn to haiku.txt, three lines"],
)
AUTOGPT_RESPONSE_FORMAT = {
    "thoughts": {
        "text": "thought",
        "reasoning": "reasoning",
        "plan": "- short bulleted\n- list that conveys\n- long-term plan",
        "criticism": "constructive self-criticism",
        "speak": "thoughts summary to say to user",
    },
    "command": {"name": "command name", "args": {"arg name": "value"}},
}
TRIGGER = "Determine which next command to use, and respond using the format specified above:"
HISTORY_LIMIT = 3000


def autogpt_system_prompt() -> str:
    commands = []
    for index, tool in enumerate(default_tools(), 1):
        label = tool.name.replace("_", " ").capitalize()
        args = ", ".join(f'"{name}": "<{name}>"' for name in tool.args_model.model_fields)
        commands.append(f'{index}. {label}: "{tool.name}", args: {args}')
    return BASELINE.substitute(
        name=IDENTITY.name,
        role=IDENTITY.role,
        goals="\n".join(f"{i}. {g}" for i, g in enumerate(IDENTITY.goals, 1)),
        commands="\n".join(commands),
        response_format=json.dumps(AUTOGPT_RESPONSE_FORMAT, indent=4),
    )


def trajectory(steps: int) -> list[StepRecord]:
    """A plausible run: notes written, read back, appended to, listed, in turn."""
    verse = "Maple leaves let go\nthe river carries their red\nnorth wind counts the stones\n"
    calls = [
        ("write_file", {"path": "draft.txt", "text": verse * 2}, "wrote 6 lines, 150 characters"),
        ("read_file", {"path": "draft.txt"}, "draft.txt (6 lines, 150 characters):\n" + verse * 2),
        ("append_file", {"path": "notes.md", "text": "- tried a seasonal word\n"}, "appended"),
        ("list_files", {"directory": "."}, "draft.txt\nnotes.md"),
    ]
    thoughts = {
        "text": "The draft exists; I should check its form before saving the final haiku.",
        "reasoning": "A haiku needs three lines; reading the draft shows what I have.",
        "plan": "- read the draft\n- fix the form\n- save haiku.txt",
        "criticism": "I have spent several steps on drafts.",
        "speak": "Checking the draft.",
    }
    return [
        StepRecord(
            run_id="bench",
            n=n,
            status="done",
            thoughts=thoughts,
            command=calls[(n - 1) % 4][0],
            arguments=calls[(n - 1) % 4][1],
            observation=calls[(n - 1) % 4][2],
            ok=True,
            started_at=0.0,
        )
        for n in range(1, steps + 1)
    ]


async def autogpt_messages(
    model: EmbeddedModel, system: str, done: list[StepRecord]
) -> list[dict[str, str]]:
    head = [
        {"role": "system", "content": system},
        {"role": "system", "content": "The current time and date is Mon Nov 23 10:00:00 2026"},
    ]
    history: list[dict[str, str]] = []
    for step in done:
        answer = {
            "thoughts": step.thoughts,
            "command": {"name": step.command, "args": step.arguments},
        }
        history += [
            {"role": "user", "content": TRIGGER},
            {"role": "assistant", "content": json.dumps(answer)},
            {"role": "system", "content": f"Command {step.command} returned: {step.observation}"},
        ]
    tail = [{"role": "user", "content": TRIGGER}]
    kept: list[dict[str, str]] = []
    for message in reversed(history):
        candidate = [*head, message, *kept, *tail]
        if await model.count_prompt_tokens(candidate) > HISTORY_LIMIT:
            break
        kept.insert(0, message)
    return head + kept + tail


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    model = EmbeddedModel(
        ModelStore().ensure(args.model), settings=LLMSettings(local_context=8192, local_slots=1)
    )
    workspace = Workspace(Path("/tmp/autonoma-bench-prompt"))
    run = RunRecord(
        id="bench",
        created_at=0,
        updated_at=0,
        goal="Write a haiku about autumn to haiku.txt",
        identity=IDENTITY.model_dump(),
        settings={},
        workspace=str(workspace.root),
        model=args.model,
        status="running",
    )
    agent = RunLoop(
        model,
        default_tools(),
        RunStore(Path("/tmp/autonoma-bench-prompt.db")),
        config=LoopConfig(continuous=True),
    )
    steps = trajectory(args.steps)
    autogpt_system = autogpt_system_prompt()
    ours_system = agent.system_prompt(run, IDENTITY)
    rows: list[dict[str, Any]] = []
    try:
        system_tokens = {
            "autonoma": await model.count_prompt_tokens(
                [{"role": "system", "content": ours_system}]
            ),
            "autogpt": await model.count_prompt_tokens(
                [{"role": "system", "content": autogpt_system}]
            ),
        }
        for n in range(1, args.steps + 1):
            done = steps[: n - 1]
            spent = BudgetSpent(steps=n - 1)
            ours = agent.messages(run, IDENTITY, workspace, done, spent)
            theirs = await autogpt_messages(model, autogpt_system, done)
            rows.append(
                {
                    "step": n,
                    "autonoma": await model.count_prompt_tokens(ours),
                    "autogpt": await model.count_prompt_tokens(theirs),
                }
            )
            print(rows[-1], flush=True)
    finally:
        await model.aclose()
    write_result(
        "agent_prompt_tokens",
        {
            "tokenizer": args.model,
            "commands": len(default_tools()),
            "system_prompt_tokens": system_tokens,
            "per_step": rows,
            "total": {
                "autonoma": sum(r["autonoma"] for r in rows),
                "autogpt": sum(r["autogpt"] for r in rows),
            },
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
