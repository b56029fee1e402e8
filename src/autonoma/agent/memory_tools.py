"""`remember` and `recall`: the agent's own commands over its long-term memory stream.

They reach the run's AgentMemory through the ToolContext's `run` (agent/services.py), and
charge what they spend to `ToolContext.spent`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from autonoma.agent.services import run_services
from autonoma.memory.agent_memory import AgentMemory, recalled_lines
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Risk, Tool, ToolContext, ToolResult, tool

Note = Annotated[str, Field(min_length=1, max_length=2000)]


def _memory(context: ToolContext) -> tuple[AgentMemory, BudgetSpent]:
    memory = run_services(context).memory
    if memory is None or context.spent is None:
        raise RuntimeError("this run has no long-term memory (it was started with --no-memory)")
    return memory, context.spent


@tool(risk=Risk.READ, timeout_s=120)
async def remember(context: ToolContext, text: Note) -> str:
    """Keep a fact or lesson in long-term memory, to recall later in this run or a later one.

    Args:
        text: what to keep, in a sentence or two
    """
    memory, spent = _memory(context)
    record = await memory.remember(text, spent)
    return f"remembered (memory {record.id}, importance {record.importance} of 10)"


@tool(risk=Risk.READ, timeout_s=60)
async def recall(context: ToolContext, query: Note) -> ToolResult:
    """Search long-term memory for what is relevant, important and recent.

    Args:
        query: what you want to remember
    """
    memory, _ = _memory(context)
    found = await memory.recall(query)
    return ToolResult(True, recalled_lines(found), untrusted=any(r.record.outside for r in found))


MEMORY_TOOLS: list[Tool] = [remember, recall]
