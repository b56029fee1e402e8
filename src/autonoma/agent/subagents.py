"""Sub-agents, as AutoGPT had them: `start_agent`, `message_agent`, `list_agents`,
`delete_agent`. A sub-agent is a run stored under its parent's run, with its own identity and
a step budget carved out of the parent's: its spending counts against the parent's limits, and
its steps show in `autonoma show` of the parent. It has every command its parent has except
these four (sub-agents do not start sub-agents of their own).

The commands reach the parent run through the ToolContext's `run` (agent/services.py)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Annotated, Any

from pydantic import Field

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.services import SubAgentHost, run_services
from autonoma.runtime.budget import BudgetLimits, SharedBudget
from autonoma.runtime.events import AgentStarted
from autonoma.runtime.store import RunRecord, StepRecord
from autonoma.tools import Risk, Tool, ToolContext, ToolRegistry, tool

SUB_AGENT_STEPS = 10
"""Steps a sub-agent may take for its task, and again for each message."""

PREFIX = "agent:"  # a sub-agent's run has task_id "agent:<key>"

Name = Annotated[str, Field(min_length=1, max_length=40)]
Text = Annotated[str, Field(min_length=1, max_length=4000)]


def _parent(context: ToolContext) -> tuple[SubAgentHost, RunRecord, SharedBudget]:
    services = run_services(context)
    return services.host, services.run, services.budget


def _agents(agent: SubAgentHost, run: RunRecord) -> dict[str, RunRecord]:
    """The parent's sub-agents still in service, by key."""
    return {
        child.task_id.removeprefix(PREFIX): child
        for child in agent.store.children(run.id)
        if child.task_id and child.task_id.startswith(PREFIX) and not child.settings.get("deleted")
    }


def _key(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
    n = 1
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


async def _drive(agent: SubAgentHost, child: RunRecord, budget: SharedBudget) -> RunOutcome:
    """Run the sub-agent (or continue it) for up to SUB_AGENT_STEPS more steps."""
    tools = ToolRegistry([t for t in agent.tools if t.name not in SUB_AGENT_NAMES])
    limits = BudgetLimits(max_steps=child.spent.steps + SUB_AGENT_STEPS)
    return await agent.helper(tools, limits).run(child.id, within=budget)


def _reply(key: str, outcome: RunOutcome) -> str:
    if outcome.status == "completed":
        return f"agent {key} answered: {outcome.reason}"
    return f"agent {key} stopped ({outcome.status}): {outcome.reason}"


@tool(risk=Risk.READ, timeout_s=3600)
async def start_agent(context: ToolContext, name: Name, task: Text, prompt: Text) -> str:
    """Delegate a task to a new sub-agent; it works on it with your commands and answers.

    Args:
        name: a short name for the sub-agent, such as Researcher
        task: the task it is for, in one sentence
        prompt: what you ask it to do first
    """
    agent, run, budget = _parent(context)
    key = _key(name, set(await asyncio.to_thread(_agents, agent, run)))
    parent_name = run.identity.get("name", "its parent")
    identity = AgentIdentity(
        name=re.sub(r"[^A-Za-z0-9_-]", "", name)[:40] or "Helper",
        role=f"a sub-agent that {parent_name} started for one task",
        goals=[task],
    )
    child = await asyncio.to_thread(
        agent.store.create_run,
        goal=f"{task}\n{prompt}",
        identity=identity.model_dump(),
        settings=run.settings | {"memory": False, "outside_at_start": agent.carries_outside},
        workspace=run.workspace,
        model=run.model,
        parent_id=run.id,
        task_id=PREFIX + key,
    )
    await agent.emit(run.id, AgentStarted(key=key, run=child.id, name=identity.name))
    return _reply(key, await _drive(agent, child, budget))


@tool(risk=Risk.READ, timeout_s=3600)
async def message_agent(context: ToolContext, key: Name, message: Text) -> str:
    """Send a message to one of your sub-agents and wait for its answer.

    Args:
        key: the sub-agent's key, as start_agent or list_agents gave it
        message: what you say or ask
    """
    agent, run, budget = _parent(context)
    agents = await asyncio.to_thread(_agents, agent, run)
    if key not in agents:
        return f"error: there is no sub-agent {key!r}; list_agents shows yours"
    child = agents[key]
    steps = await asyncio.to_thread(agent.store.steps, child.id)
    said = StepRecord(
        run_id=child.id,
        n=len(steps) + 1,
        status="done",
        thoughts={},
        command="message",
        arguments={"from": run.identity.get("name", "parent")},
        observation=f"{run.identity.get('name', 'your parent')} says: {message}",
        ok=True,
        untrusted=agent.carries_outside,  # the parent's words may be a page's
        started_at=time.time(),
        finished_at=time.time(),
    )
    await asyncio.to_thread(agent.store.begin_step, said, child.spent)
    return _reply(
        key, await _drive(agent, await asyncio.to_thread(agent.store.get_run, child.id), budget)
    )


@tool(risk=Risk.READ)
async def list_agents(context: ToolContext) -> str:
    """List your sub-agents: key, name, task, status and steps taken."""
    agent, run, _ = _parent(context)
    agents = await asyncio.to_thread(_agents, agent, run)
    if not agents:
        return "no sub-agents (start one with start_agent)"
    lines = []
    for key, child in agents.items():
        goal = child.identity.get("goals", [""])[0]
        lines.append(
            f"{key}: {child.identity.get('name')}, task: {goal}; {child.status}, "
            f"{child.spent.steps} steps"
        )
    return "\n".join(lines)


@tool(risk=Risk.READ)
async def delete_agent(context: ToolContext, key: Name) -> str:
    """Dismiss a sub-agent you no longer need (its steps stay on record).

    Args:
        key: the sub-agent's key
    """
    agent, run, _ = _parent(context)
    agents = await asyncio.to_thread(_agents, agent, run)
    if key not in agents:
        return f"error: there is no sub-agent {key!r}; list_agents shows yours"
    child = agents[key]
    settings: dict[str, Any] = child.settings | {"deleted": True}
    await asyncio.to_thread(agent.store.set_settings, child.id, settings)
    if child.status == "running":
        await asyncio.to_thread(
            agent.store.set_status, child.id, "stopped", "deleted by its parent"
        )
    return f"deleted sub-agent {key}"


SUB_AGENT_TOOLS: list[Tool] = [start_agent, message_agent, list_agents, delete_agent]
SUB_AGENT_NAMES = frozenset(t.name for t in SUB_AGENT_TOOLS)
