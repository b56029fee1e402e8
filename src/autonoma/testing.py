"""What a test of tools and goals needs, without a real model: the scripted model, builders
for answers in the action schema, and a run of a goal against a script in a temporary store
and workspace. autonoma's own tests use the same (docs/library.md, "Testing")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.library import Approve, run
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.settings import RunSettings
from autonoma.llm.scripted import Answer, AnswerFunction, ScriptedModel, Truncated
from autonoma.runtime.sink import EventListener
from autonoma.runtime.store import RunStore
from autonoma.tools import Tool

__all__ = ["ScriptedModel", "Truncated", "act", "program", "run_scripted"]

THOUGHTS = ("text", "reasoning", "plan", "criticism", "speak")


def act(
    command: str, *, thoughts: dict[str, str] | None = None, **arguments: Any
) -> dict[str, Any]:
    """An answer in the JSON action schema: `command` with `arguments`, and thoughts that
    name it (or `thoughts`, for a test that reads them)."""
    said = {
        "text": f"next: {command}",
        "reasoning": "it serves the goal",
        "plan": "write, check, finish",
        "criticism": "be brief",
        "speak": f"running {command}",
    }
    return {"thoughts": said | (thoughts or {}), "command": {"name": command, "args": arguments}}


def program(code: str, *, thoughts: dict[str, str] | None = None) -> dict[str, Any]:
    """An answer in the code action schema (`RunSettings(actions="code")`): a Python program
    that calls the tools as functions."""
    said = {key: "" for key in THOUGHTS} | {"text": "the program below", "plan": "run it"}
    return {"thoughts": said | (thoughts or {}), "code": code}


async def run_scripted(
    goal: str,
    answers: Iterable[Answer | Truncated] | AnswerFunction,
    tmp_path: Path,
    settings: RunSettings | None = None,
    *,
    identity: AgentIdentity | None = None,
    tools: Sequence[Tool] = (),
    on_event: EventListener | None = None,
    approve: Approve | None = None,
) -> tuple[RunOutcome, ScriptedModel]:
    """Run `goal` against scripted `answers` with its store and workspace under `tmp_path`.
    Unless `settings` say otherwise, the run is continuous, writes no acceptance checks and
    keeps no long-term memory, so the script holds the steps alone; without `identity`, the
    agent is named from the goal without asking the model."""
    model = ScriptedModel(answers)
    settings = settings or RunSettings(continuous=True, checks=False, memory=False)
    identity = identity or AgentIdentity(
        name="TestGPT", role="an agent under test", goals=[goal.strip()[:300]]
    )
    outcome = await run(
        goal,
        settings,
        model=model,
        store=RunStore(tmp_path / "runs.db"),
        workspace=tmp_path / "workspace",
        identity=identity,
        tools=tools,
        on_event=on_event,
        approve=approve,
    )
    return outcome, model
