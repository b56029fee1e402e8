"""Starting and resuming runs: the glue between a person's request, the store and the loop.

The CLI (and later the server) call these; they hold no display logic.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autonoma.agent.approval import Approver
from autonoma.agent.identity import AgentIdentity, generate_identity
from autonoma.agent.loop import Agent, AgentConfig, EventListener, RunOutcome
from autonoma.errors import ConfigError
from autonoma.llm import Model
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.runtime.store import RunRecord, RunStore, default_home, new_run_id
from autonoma.tools import CORE_TOOLS, ToolRegistry, Workspace

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
"""The embedded model that achieved the demo goal on a 2-core laptop (docs/benchmarks.md)."""


class RunSettings(BaseModel):
    """What a run was started with; stored with it so `resume` continues the same way."""

    model: str = DEFAULT_MODEL
    limits: BudgetLimits = Field(default_factory=BudgetLimits)
    continuous: bool = False
    seed: int | None = None  # sampling seed, for runs that can be replayed exactly


def default_workspace(run_id: str) -> Path:
    return default_home() / "workspaces" / run_id


def default_tools() -> ToolRegistry:
    return ToolRegistry(CORE_TOOLS)


async def create_run(
    store: RunStore,
    model: Model,
    goal: str,
    settings: RunSettings,
    *,
    workspace: Path | None = None,
    identity: AgentIdentity | None = None,
    tools: ToolRegistry | None = None,
) -> tuple[RunRecord, str | None]:
    """A new stored run. Without an identity the model makes one from the goal; the second
    value says why it fell back to a plain one, if it did."""
    goal = goal.strip()
    if not goal:
        raise ConfigError("the goal is empty; say what the agent should achieve")
    run_id = new_run_id()
    root = Workspace(workspace or default_workspace(run_id)).root  # created, or a clear error
    fallback = None
    spent = BudgetSpent()
    if identity is None:
        made = await generate_identity(model, goal, tools or default_tools(), seed=settings.seed)
        identity, fallback = made.identity, made.fallback_reason
        spent = BudgetSpent(
            prompt_tokens=made.prompt_tokens,
            completion_tokens=made.completion_tokens,
            usd=made.cost_usd,
        )
    run = await asyncio.to_thread(
        store.create_run,
        goal=goal,
        identity=identity.model_dump(),
        settings=settings.model_dump(),
        workspace=str(root),
        model=settings.model,
        run_id=run_id,
        spent=spent,
    )
    return run, fallback


def identity_from_options(
    goal: str, name: str | None, role: str | None, goals: list[str]
) -> AgentIdentity | None:
    """The person's own identity, if they gave any part of one (the rest is filled in)."""
    if name is None and role is None and not goals:
        return None
    values: dict[str, Any] = {
        "name": name or "AutonomaGPT",
        "role": role or "an autonomous agent that pursues the goal it is given",
        "goals": goals or [goal.strip()[:300]],
    }
    try:
        return AgentIdentity.model_validate(values)
    except ValueError as error:
        raise ConfigError(f"invalid identity: {error}".splitlines()[0]) from error


async def run_agent(
    store: RunStore,
    model: Model,
    run: RunRecord,
    *,
    approver: Approver | None = None,
    listeners: list[EventListener] | None = None,
    tools: ToolRegistry | None = None,
) -> RunOutcome:
    """Run, or resume, a stored run with the settings it was started with."""
    settings = RunSettings.model_validate(run.settings)
    agent = Agent(
        model,
        tools or default_tools(),
        store,
        config=AgentConfig(
            limits=settings.limits, continuous=settings.continuous, seed=settings.seed
        ),
        approver=approver,
        listeners=listeners,
    )
    return await agent.run(run.id)
