"""autonoma: an autonomous LLM agent system.

    import autonoma

    outcome = autonoma.run_sync("Write a haiku about autumn to haiku.txt")

The public surface is what `__all__` names (docs/library.md). Each name is imported when first
used, so `import autonoma.llm` does not pull in the agent.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {
    "run": "autonoma.agent.library",
    "resume": "autonoma.agent.library",
    "run_sync": "autonoma.agent.library",
    "RunSettings": "autonoma.agent.settings",
    "MemorySettings": "autonoma.agent.settings",
    "PlanningSettings": "autonoma.agent.settings",
    "BudgetLimits": "autonoma.runtime.budget",
    "ToolSettings": "autonoma.tools.settings",
    "RunOutcome": "autonoma.agent.outcome",
    "RunStore": "autonoma.runtime.store",
    "EventRecord": "autonoma.runtime.store",
    "Event": "autonoma.runtime.events",
    "event_schema": "autonoma.runtime.events",
    "ApprovalRequest": "autonoma.agent.approval",
    "Decision": "autonoma.agent.approval",
    "tool": "autonoma.tools",
    "Risk": "autonoma.tools",
    "ToolContext": "autonoma.tools",
}

__all__ = [
    "ApprovalRequest",
    "BudgetLimits",
    "Decision",
    "Event",
    "EventRecord",
    "MemorySettings",
    "PlanningSettings",
    "Risk",
    "RunOutcome",
    "RunSettings",
    "RunStore",
    "ToolContext",
    "ToolSettings",
    "event_schema",
    "resume",
    "run",
    "run_sync",
    "tool",
]

if TYPE_CHECKING:
    from autonoma.agent.approval import ApprovalRequest, Decision
    from autonoma.agent.library import resume, run, run_sync
    from autonoma.agent.outcome import RunOutcome
    from autonoma.agent.settings import MemorySettings, PlanningSettings, RunSettings
    from autonoma.runtime.budget import BudgetLimits
    from autonoma.runtime.events import Event, event_schema
    from autonoma.runtime.store import EventRecord, RunStore
    from autonoma.tools import Risk, ToolContext, tool
    from autonoma.tools.settings import ToolSettings


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'autonoma' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *__all__]
