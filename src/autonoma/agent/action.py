"""The agent's answer: thoughts and exactly one command, with a schema made from the tools.

The command is a union of every allowed tool's typed arguments, so a backend that constrains
decoding cannot name a missing command or give it wrong arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from autonoma.tools import Tool

# Characters a thought may take. The embedded model writes about 10 tokens a second here, so
# every 40 characters cost about a second a step; the limits cut only its longest rambles
# (docs/benchmarks.md, "what each thought costs").
THOUGHT_FIELDS = {"text": 120, "plan": 100, "reasoning": 120, "criticism": 80, "speak": 60}
# The thoughts a step is asked for. AutoGPT's reasoning, criticism and speak stay readable
# (older runs, other models) but are not asked: they were 23 of the 1.5B model's 123 tokens a
# step, about a second and a half, and what it wrote there restated the text.
ASKED_THOUGHTS = ("text", "plan")


class Thoughts(BaseModel):
    text: str = ""
    reasoning: str = ""
    plan: str = ""
    criticism: str = ""
    speak: str = ""


class Action(BaseModel):
    thoughts: Thoughts
    command: str
    arguments: dict[str, Any]


def action_schema(tools: Iterable[Tool]) -> dict[str, Any]:
    """One JSON Schema for the whole answer. Thoughts come first so the model reasons before
    it commits to a command; their lengths are bounded so a small model cannot loop forever."""
    commands = []
    for tool in tools:
        args = tool.spec().parameters
        commands.append(
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, "args": args},
                "required": ["name", "args"],
                "additionalProperties": False,
            }
        )
    return {
        "type": "object",
        "properties": {"thoughts": thoughts_schema(), "command": {"anyOf": commands}},
        "required": ["thoughts", "command"],
        "additionalProperties": False,
    }


def thoughts_schema() -> dict[str, Any]:
    """The thoughts before an action: those asked are required, the rest allowed."""
    return {
        "type": "object",
        "properties": {
            field: {"type": "string", "maxLength": limit} for field, limit in THOUGHT_FIELDS.items()
        },
        "required": list(ASKED_THOUGHTS),
        "additionalProperties": False,
    }


def parse_action(data: dict[str, Any]) -> Action:
    """An Action from an answer already validated against `action_schema`."""
    command = data["command"]
    return Action(
        thoughts=Thoughts.model_validate(data["thoughts"]),
        command=command["name"],
        arguments=command.get("args", {}),
    )
