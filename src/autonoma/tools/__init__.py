"""Tools the agent can call: the Tool type, the registry, and built-ins."""

from autonoma.tools.base import Risk, Tool, ToolContext, ToolResult, tool
from autonoma.tools.files import CORE_TOOLS, FILE_TOOLS
from autonoma.tools.registry import ToolRegistry
from autonoma.tools.workspace import Workspace, WorkspaceError

__all__ = [
    "CORE_TOOLS",
    "FILE_TOOLS",
    "Risk",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "Workspace",
    "WorkspaceError",
    "tool",
]
