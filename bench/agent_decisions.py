"""How often the model takes the right next step in four situations of the demo task.

Each situation is a run frozen after some steps; the model is asked for the next command
`--samples` times (temperature 0.2) and each answer is scored:
  first    nothing done yet             -> write_file haiku.txt with three lines
  done     a 3-line haiku was written   -> task_complete
  reread   written, then read twice     -> task_complete (not a third read)
  short    a 1-line haiku was written   -> write_file haiku.txt again, with three lines
Two ways of showing the steps so far are compared:
  transcript       autonoma's: commands and results in the user message, no old thoughts
  assistant-turns  AutoGPT's: each earlier answer (thoughts and command) as an assistant
                   message, each result as the next user message

    python bench/agent_decisions.py [--model qwen2.5-coder-1.5b] [--samples 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.action import parse_action
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.agent.wiring import default_tools
from autonoma.llm import open_model
from autonoma.memory.context import step_text
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunRecord, RunStore, StepRecord
from autonoma.tools import Workspace
from bench.common import write_result

TASK = "Write a haiku about autumn to haiku.txt"
# The identity the model itself most often gives this task.
NAME, ROLE = "AutumnHaikuGPT", "an AI that creates beautiful, evocative poems"
HAIKU = "Autumn leaves fall,\nNature's breath fades,\nPeace in silence."
ONE_LINE = "Autumn leaves fall, crisp air blows."
THOUGHTS = {
    "text": "I need to write a haiku about autumn and save it in haiku.txt.",
    "reasoning": "Writing it directly is the fewest steps.",
    "plan": "- write haiku.txt\n- check it\n- finish",
    "criticism": "None.",
    "speak": "Writing haiku.txt.",
}


def step(n: int, command: str, args: dict[str, Any], observation: str) -> StepRecord:
    return StepRecord(
        run_id="bench",
        n=n,
        status="done",
        thoughts=THOUGHTS,
        command=command,
        arguments=args,
        observation=observation,
        ok=True,
        started_at=0.0,
    )


WRITE = step(
    1,
    "write_file",
    {"path": "haiku.txt", "text": HAIKU},
    "wrote 3 lines, 58 characters to haiku.txt",
)
READ = f"haiku.txt (3 lines, 58 characters):\n{HAIKU}"


@dataclass(frozen=True)
class Situation:
    goals: list[str]
    steps: list[StepRecord]
    content: str | None  # haiku.txt in the workspace

    def score(self, name: str, command: str, args: dict[str, Any]) -> bool:
        lines = [line for line in str(args.get("text", "")).splitlines() if line.strip()]
        writes_three = command == "write_file" and args.get("path") == "haiku.txt"
        if name in ("first", "short"):
            return writes_three and len(lines) == 3
        return command == "task_complete"


SITUATIONS = {
    "first": Situation([TASK], [], None),
    "done": Situation([TASK], [WRITE], HAIKU),
    "reread": Situation(
        [TASK],
        [
            WRITE,
            step(2, "read_file", {"path": "haiku.txt"}, READ),
            step(3, "read_file", {"path": "haiku.txt"}, READ),
        ],
        HAIKU,
    ),
    "short": Situation(
        [f"{TASK}, as three lines"],
        [
            step(
                1,
                "write_file",
                {"path": "haiku.txt", "text": ONE_LINE},
                "wrote 1 line, 35 characters to haiku.txt",
            )
        ],
        ONE_LINE,
    ),
}


def assistant_turns(
    messages: list[dict[str, Any]], steps: list[StepRecord]
) -> list[dict[str, Any]]:
    """The same request, with earlier steps shown as AutoGPT showed them."""
    system, user = messages
    closing = user["content"].split("\n\n")[-1]
    turns: list[dict[str, Any]] = [system, {"role": "user", "content": "Your steps so far follow."}]
    for s in steps:
        answer = {"thoughts": s.thoughts, "command": {"name": s.command, "args": s.arguments}}
        turns.append({"role": "assistant", "content": json.dumps(answer)})
        turns.append({"role": "user", "content": step_text(s, 2000).split("\n", 1)[1]})
    turns[-1] = {"role": "user", "content": f"{turns[-1]['content']}\n\n{closing}"}
    return turns


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument(
        "--styles", default="transcript,assistant-turns", help="which ways of showing steps"
    )
    args = parser.parse_args()
    model = open_model(f"local:{args.model}")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        agent = RunLoop(
            model,
            default_tools(),
            RunStore(Path(tmp) / "runs.db"),
            config=LoopConfig(continuous=True),
        )
        try:
            for name, situation in SITUATIONS.items():
                workspace = Workspace(Path(tmp) / name)
                if situation.content is not None:
                    (workspace.root / "haiku.txt").write_text(situation.content)
                identity = AgentIdentity(name=NAME, role=ROLE, goals=situation.goals)
                run = RunRecord(
                    id="bench",
                    created_at=0,
                    updated_at=0,
                    goal=TASK,
                    identity=identity.model_dump(),
                    settings={},
                    workspace=str(workspace.root),
                    model=args.model,
                    status="running",
                )
                spent = BudgetSpent(steps=len(situation.steps))
                ours = agent.messages(run, identity, workspace, situation.steps, spent)
                styles = {"transcript": ours}
                if situation.steps:
                    styles["assistant-turns"] = assistant_turns(ours, situation.steps)
                chosen = {k: v for k, v in styles.items() if k in args.styles.split(",")}
                for style, messages in chosen.items():
                    right = 0
                    for _ in range(args.samples):
                        response = await model.request(
                            messages, output=agent.answer_schema(), max_tokens=700, temperature=0.2
                        )
                        action = parse_action(response.data)
                        right += situation.score(name, action.command, action.arguments)
                    results.setdefault(name, {})[style] = f"{right}/{args.samples}"
                    print(name, style, right, "/", args.samples, flush=True)
        finally:
            await model.aclose()
    write_result(
        "agent_decisions", {"model": args.model, "samples": args.samples, "situations": results}
    )


if __name__ == "__main__":
    asyncio.run(main())
