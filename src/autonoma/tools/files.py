"""Built-in tools: files in the run's workspace, and task_complete."""

from __future__ import annotations

import fnmatch
from typing import Annotated

from pydantic import Field

from autonoma.tools.base import Risk, Tool, ToolContext, ToolResult, tool

MAX_READ_BYTES = 200_000
MAX_LISTED = 200
MAX_MATCHES = 100

# Small models like to "create the file first" with no text and then lose track; the schema
# (so the constrained decoder) asks for the content in the same command.
WholeText = Annotated[str, Field(min_length=1)]


@tool(risk=Risk.READ, timeout_s=10)
def read_file(context: ToolContext, path: str) -> str:
    """Read a text file from the workspace.

    Args:
        path: the file's path, relative to the workspace
    """
    target = context.workspace.resolve(path)
    if not target.is_file():
        raise context.workspace.not_a_file(path)
    size = target.stat().st_size
    text = target.read_bytes()[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    if size > MAX_READ_BYTES:
        return f"{path} (first {MAX_READ_BYTES} of {size} bytes):\n{text}"
    return f"{path} ({text_size(text)}):\n{text}"


def text_size(text: str) -> str:
    """ "3 lines, 64 characters". Models count badly; saying it lets them check a file at a
    glance instead of reading it again and again."""
    return f"{_count(len(text.splitlines()), 'line')}, {_count(len(text), 'character')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@tool(risk=Risk.WRITE, timeout_s=10)
def write_file(context: ToolContext, path: str, text: WholeText) -> str:
    """Create or replace a file in the workspace, giving its complete text at once.

    Args:
        path: the file's path, relative to the workspace
        text: the whole new content
    """
    target = context.workspace.resolve(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return f"wrote {text_size(text)} to {path}"


@tool(risk=Risk.WRITE, timeout_s=10)
def append_file(context: ToolContext, path: str, text: str) -> str:
    """Append text to the end of a file in the workspace (creating it if needed).

    Args:
        path: the file's path, relative to the workspace
        text: the text to add
    """
    target = context.workspace.resolve(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as f:
        f.write(text)
    return (
        f"appended {text_size(text)} to {path}; it now holds {text_size(target.read_text('utf-8'))}"
    )


@tool(risk=Risk.WRITE, timeout_s=10)
def delete_file(context: ToolContext, path: str) -> str:
    """Delete a file from the workspace.

    Args:
        path: the file's path, relative to the workspace
    """
    target = context.workspace.resolve(path)
    if not target.is_file():
        raise context.workspace.not_a_file(path)
    target.unlink()
    return f"deleted {path}"


@tool(risk=Risk.READ, timeout_s=10)
def list_files(context: ToolContext, directory: str = ".") -> str:
    """List the files under a workspace directory.

    Args:
        directory: the directory, relative to the workspace ("." for all of it)
    """
    base = context.workspace.resolve(directory)
    if not base.is_dir():
        raise NotADirectoryError(f"{directory} is not a directory in the workspace")
    names = sorted(
        context.workspace.relative(p) for p in base.rglob("*") if p.is_file() and not p.is_symlink()
    )
    if not names:
        return f"no files in {directory}"
    shown = names[:MAX_LISTED]
    more = f"\n[{len(names) - MAX_LISTED} more not shown]" if len(names) > MAX_LISTED else ""
    return "\n".join(shown) + more


@tool(risk=Risk.READ, timeout_s=20)
def search_files(context: ToolContext, pattern: str = "*", text: str = "") -> str:
    """Find files whose name matches a glob pattern and, if text is given, the lines holding it.

    Args:
        pattern: a file-name glob such as "*.md" or "notes/*"
        text: text to look for inside the files (case-insensitive); empty to match names only
    """
    workspace = context.workspace
    hits: list[str] = []
    for name in workspace.files():
        if not (
            fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(name.rsplit("/", 1)[-1], pattern)
        ):
            continue
        if not text:
            hits.append(name)
            continue
        body = (workspace.root / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(body.splitlines(), 1):
            if text.lower() in line.lower():
                hits.append(f"{name}:{number}: {line.strip()[:200]}")
        if len(hits) >= MAX_MATCHES:
            break
    if not hits:
        return "no matches"
    return "\n".join(hits[:MAX_MATCHES])


@tool(risk=Risk.READ, timeout_s=5)
def task_complete(reason: str) -> ToolResult:
    """Say that every goal is achieved and stop.

    Args:
        reason: what was achieved, and how it can be checked
    """
    return ToolResult(True, f"task complete: {reason}", final=True)


FILE_TOOLS: list[Tool] = [
    write_file,
    append_file,
    read_file,
    delete_file,
    list_files,
    search_files,
]
CORE_TOOLS: list[Tool] = [*FILE_TOOLS, task_complete]
