"""Built-in tools that run code: Python source, a Python file of the workspace, a shell
command. Each runs in the run's sandbox (`sandbox_of(context)`), with the workspace as its
working directory; the model sees the exit code, stdout and stderr, each capped, and a
plain sentence when a limit stopped the program."""

from __future__ import annotations

import re
import sys
from typing import Annotated

from pydantic import Field

from autonoma.tools.base import Risk, Tool, ToolContext, ToolResult, tool
from autonoma.tools.sandbox import Sandbox, SandboxResult, sandbox_of
from autonoma.tools.workspace import WorkspaceError

# The sandbox's own wall clock (settings: sandbox.wall_s) stops a program; this is only the
# tool's backstop, above any sensible wall clock.
TIMEOUT_S = 3600

Source = Annotated[str, Field(min_length=1)]


@tool(risk=Risk.EXECUTE, timeout_s=TIMEOUT_S, undoable=True)
async def execute_python(context: ToolContext, code: Source) -> ToolResult:
    """Run Python code in a sandbox whose working directory is the workspace (no network,
    no input); files it writes there stay. Print what you want to see.

    Args:
        code: the complete Python program
    """
    sandbox = sandbox_of(context)
    result = await sandbox.run(
        [sandbox.python, "-"],
        workspace=context.workspace.root,
        stdin=code,
        writable=context.code_writes,
    )
    return report(result, no_network(code, sandbox, context) or read_only(result, context))


@tool(risk=Risk.EXECUTE, timeout_s=TIMEOUT_S, undoable=True)
async def execute_python_file(
    context: ToolContext, path: str, args: list[str] | None = None
) -> ToolResult:
    """Run a Python file from the workspace in a sandbox whose working directory is the
    workspace (no network, no input).

    Args:
        path: the file's path, relative to the workspace
        args: command-line arguments for the program
    """
    target = context.workspace.resolve(path)
    if not target.is_file():
        raise context.workspace.not_a_file(path)
    sandbox = sandbox_of(context)
    inside = sandbox.path_inside(context.workspace.root, target)
    result = await sandbox.run(
        [sandbox.python, inside, *(args or [])],
        workspace=context.workspace.root,
        writable=context.code_writes,
    )
    note = no_network(_head(context, path), sandbox, context) or read_only(result, context)
    return report(result, note)


@tool(risk=Risk.EXECUTE, timeout_s=TIMEOUT_S, undoable=True)
async def execute_shell(context: ToolContext, command: Source) -> ToolResult:
    """Run a shell command (bash) in a sandbox whose working directory is the workspace
    (no network, no input).

    Args:
        command: the command line
    """
    sandbox = sandbox_of(context)
    result = await sandbox.run(
        [sandbox.shell, "-c", command],
        workspace=context.workspace.root,
        writable=context.code_writes,
    )
    return report(result, no_network(command, sandbox, context) or read_only(result, context))


def report(result: SandboxResult, note: str = "") -> ToolResult:
    """What the model reads: the exit code, a limit that stopped the program, stdout and
    stderr (each capped, the middle of a long one cut), and a plain sentence where the
    output hides a cause (`note`, and a standard module used without its import)."""
    lines = [f"exit code {result.exit_code}"]
    if result.stopped:
        lines.append(result.stopped)
    lines.append(_stream("stdout", result.stdout, result.stdout_bytes, result.stdout_truncated))
    lines.append(_stream("stderr", result.stderr, result.stderr_bytes, result.stderr_truncated))
    missing = _MISSING_NAME.search(result.stderr)
    if missing and missing.group(1) in sys.stdlib_module_names:
        # the 1.5B model used csv without importing it, then re-read its input to the limit
        module = missing.group(1)
        lines.append(f"({module} is a standard module: the code must `import {module}` first)")
    if note:
        lines.append(note)
    return ToolResult(result.ok, "\n".join(lines))


def no_network(source: str, sandbox: Sandbox, context: ToolContext) -> str:
    """For code that fetches in the isolated sandbox: it has no network, and which tool
    reads a URL when the run has one. The 1.5B model ran `curl -s URL | grep ...` seven
    times; curl -s said nothing of it (nor, piped on to awk, did the exit code)."""
    if not sandbox.isolated or not _FETCHES.search(source):
        return ""
    web = "; http_request or browse_website reads one" if context.egress is not None else ""
    return f"(code runs with no network, so nothing it runs can fetch a URL{web})"


def read_only(result: SandboxResult, context: ToolContext) -> str:
    """Why code could not write, when it could not: after outside content, code sees the
    workspace read-only and changes go through the file tools."""
    if context.code_writes or not _READ_ONLY.search(result.stderr):
        return ""
    return (
        "(outside content is in this run's context, so code sees the workspace read-only: "
        "write its results with write_file or append_file, where each change is checked)"
    )


_READ_ONLY = re.compile(r"Read-only file system|Errno 30|EROFS", re.IGNORECASE)
_FETCHES = re.compile(
    r"https?://|\b(curl|wget|urlopen|urllib|requests|httpx|aiohttp|socket)\b", re.IGNORECASE
)


def _head(context: ToolContext, path: str) -> str:
    """The start of a program file of the workspace, to see whether it fetches."""
    try:
        return context.workspace.read(path, 20_000).data.decode("utf-8", "replace")
    except (OSError, WorkspaceError):
        return ""


_MISSING_NAME = re.compile(r"NameError: name '(\w+)' is not defined\s*$")


def _stream(name: str, text: str, total: int, truncated: bool) -> str:
    if not text:
        return f"{name}: (empty)"
    if truncated:
        return f"{name} ({total:,} bytes, the middle cut):\n{text.rstrip()}"
    return f"{name}:\n{text.rstrip()}"


CODE_TOOLS: list[Tool] = [execute_python, execute_python_file, execute_shell]
