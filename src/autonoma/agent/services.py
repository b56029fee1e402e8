"""What a run hands its tools besides the workspace, typed: the services its settings make
(`ToolServices`, from agent/wiring.py), and what the agent layer's own tools (memory,
sub-agents) reach the run through (`RunServices`, in `ToolContext.run`). A sub-agent tool sees
the small `SubAgentHost`, not the whole loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from autonoma.agent.outcome import RunOutcome
from autonoma.memory.agent_memory import AgentMemory
from autonoma.runtime.budget import BudgetLimits, SharedBudget
from autonoma.runtime.events import Event
from autonoma.runtime.store import RunRecord, RunStore
from autonoma.tools import ToolContext, ToolRegistry
from autonoma.tools.egress import EgressGuard
from autonoma.tools.sandbox import Sandbox
from autonoma.tools.web import SearchProvider


@dataclass(frozen=True)
class ToolServices:
    """The services a run's settings make for its tools (None: not made)."""

    sandbox: Sandbox | None = None
    egress: EgressGuard | None = None
    search: SearchProvider | None = None


class Helper(Protocol):
    async def run(self, run_id: str, *, within: SharedBudget | None = None) -> RunOutcome: ...


class SubAgentHost(Protocol):
    """What starting and messaging sub-agents needs of the loop driving the parent run."""

    store: RunStore
    tools: ToolRegistry

    @property
    def carries_outside(self) -> bool: ...

    async def emit(self, run_id: str, event: Event, step: int | None = None) -> None: ...

    def helper(self, tools: ToolRegistry, limits: BudgetLimits) -> Helper:
        """A loop like this one with other tools and limits, for a sub-agent's run."""
        ...


@dataclass(frozen=True)
class RunServices:
    run: RunRecord
    budget: SharedBudget
    host: SubAgentHost
    memory: AgentMemory | None = None


def run_services(context: ToolContext) -> RunServices:
    """The run's services, for a tool of the agent layer; a clear error outside a run."""
    if not isinstance(context.run, RunServices):
        raise RuntimeError("this command works only inside a running agent's run")
    return context.run
