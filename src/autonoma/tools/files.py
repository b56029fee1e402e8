"""Built-in tools: files in the run's workspace, and task_complete."""

from __future__ import annotations

import fnmatch
import time
from typing import Annotated

from pydantic import Field

from autonoma.tools.base import Risk, Tool, ToolContext, ToolResult, tool
from autonoma.tools.listing import hidden_by, visible
from autonoma.tools.workspace import WorkspaceError

MAX_READ_BYTES = 200_000
MAX_LISTED = 200
MAX_MATCHES = 100
MAX_SEARCHED_BYTES = 2_000_000  # search_files skips bigger files, and says so
SEARCH_SECONDS = 15  # search_files stops itself before its tool's 20 s limit

# Small models like to "create the file first" with no text and then lose track; the schema
# (so the constrained decoder) asks for the content in the same command.
WholeText = Annotated[str, Field(min_length=1)]


@tool(risk=Risk.READ, timeout_s=10)
def read_file(context: ToolContext, path: str) -> ToolResult:
    """Read a text file from the workspace.

    Args:
        path: the file's path, relative to the workspace
    """
    found = context.workspace.read(path, MAX_READ_BYTES)
    text = found.text()
    if found.cut:
        said = f"{path} (first {MAX_READ_BYTES} of {found.size} bytes):\n{text}"
    else:
        said = f"{path} ({text_size(text)}):\n{text}"
    # a file the run did not write is outside content; read whole, it is compared by hash
    whole = None if found.cut else found.data
    outside = context.own is not None and not context.own.holds(path, whole)
    return ToolResult(True, said, untrusted=outside)


def text_size(text: str) -> str:
    """ "3 lines, 64 characters". Models count badly; saying it lets them check a file at a
    glance instead of reading it again and again."""
    return f"{_count(len(text.splitlines()), 'line')}, {_count(len(text), 'character')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@tool(risk=Risk.WRITE, timeout_s=10, undoable=True)
def write_file(context: ToolContext, path: str, text: WholeText) -> str:
    """Create or replace a file in the workspace, giving its complete text at once.

    Args:
        path: the file's path, relative to the workspace
        text: the whole new content
    """
    data = text.encode("utf-8")
    context.workspace.write(path, data)
    if context.own is not None:
        context.own.wrote(path, data)
    return f"wrote {text_size(text)} to {path}{python_problem(path, text)}"


def python_problem(path: str, text: str) -> str:
    """ ", which is not valid Python: <why> at line N" for a .py file whose text does not
    compile, else "". The 1.5B model wrote pal.py from source inside a quoted string, whose
    own quotes cut it (`'... = ''.join(...'`): the program ran, pal.py did not, and the run
    learnt it only from a check's SyntaxError in pal.py (mend_1129)."""
    if not path.endswith(".py"):
        return ""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return f", which is not valid Python: {error.msg} at line {error.lineno}"
    except (ValueError, RecursionError, MemoryError) as error:  # NUL bytes, deep nesting
        return f", which is not valid Python: {error}"
    return ""


@tool(risk=Risk.WRITE, timeout_s=10, undoable=True)
def append_file(context: ToolContext, path: str, text: str) -> str:
    """Append lines to the end of a file in the workspace (creating it if needed); they
    start on a line of their own.

    Args:
        path: the file's path, relative to the workspace
        text: the lines to add
    """
    # whole lines: the 1.5B model appended a haiku's lines, and red, green and blue, one call
    # each, and raw appends ran them together on one line ("Autumn HaikuAutumn Haiku...")
    was_own = context.own is None or context.own.absent_or_own(path)
    now = context.workspace.append(path, text.encode("utf-8"), MAX_READ_BYTES, on_new_line=True)
    if context.own is not None:
        context.own.appended(path, was_own)
    holds = f"{now.size} bytes" if now.cut else text_size(now.text())
    problem = "" if now.cut else python_problem(path, now.text())
    return f"appended {text_size(text)} to {path}; it now holds {holds}{problem}"


@tool(risk=Risk.WRITE, timeout_s=10, undoable=True)
def delete_file(context: ToolContext, path: str) -> str:
    """Delete a file from the workspace.

    Args:
        path: the file's path, relative to the workspace
    """
    context.workspace.delete(path)
    if context.own is not None:
        context.own.removed(path)
    return f"deleted {path}"


@tool(risk=Risk.READ, timeout_s=10)
def list_files(context: ToolContext, directory: str = ".") -> ToolResult:
    """List the files under a workspace directory.

    Args:
        directory: the directory, relative to the workspace ("." for all of it)
    """
    try:
        found = context.workspace.listing(directory)
    except (FileNotFoundError, NotADirectoryError):
        raise NotADirectoryError(f"{directory} is not a directory in the workspace") from None
    names = visible(context.workspace, found.files)
    hidden = len(found.files) - len(names)
    unlisted = f"\n[{hidden} files in .git, .venv and the like, or ignored by .gitignore]"
    if not names:
        return ToolResult(True, f"no files in {directory}" + (unlisted if hidden else ""))
    shown = names[:MAX_LISTED]
    more = ""
    if len(names) > MAX_LISTED or found.cut:
        counted = f"{len(names) - MAX_LISTED}" if not found.cut else "many"
        more = f"\n[{counted} more not shown]"
    if hidden:
        more += unlisted
    # a name the run did not give can carry words meant for the model as well as a text can
    others = context.own is not None and bool(context.own.named(shown))
    return ToolResult(True, "\n".join(shown) + more, untrusted=others)


@tool(risk=Risk.READ, timeout_s=20)
def search_files(context: ToolContext, pattern: str = "*", text: str = "") -> ToolResult:
    """Find files whose name matches a glob pattern and, if text is given, the lines holding it.

    Args:
        pattern: a file-name glob such as "*.md" or "notes/*"
        text: text to look for inside the files (case-insensitive); empty to match names only
    """
    hits: list[str] = []
    files: list[str] = []  # those the hits are from
    skipped: list[str] = []
    hidden = 0
    is_hidden = hidden_by(context.workspace)
    deadline = time.monotonic() + SEARCH_SECONDS
    for entry in context.workspace.walk():
        if entry.cut or time.monotonic() > deadline:
            skipped.append("the rest of the workspace (the search stops at its limit)")
            break
        name = entry.path
        by_path = fnmatch.fnmatch(name, pattern)
        if not (by_path or fnmatch.fnmatch(name.rsplit("/", 1)[-1], pattern)):
            continue
        # as list_files: not .git's objects, .venv or what .gitignore leaves out (every git
        # object and hook came back), unless the pattern names its path
        if not (by_path and "/" in pattern) and is_hidden(name):
            hidden += 1
            continue
        if not text:
            hits.append(name)
            files.append(name)
        elif entry.stat is not None and entry.stat.st_size > MAX_SEARCHED_BYTES:
            skipped.append(f"{name} ({entry.stat.st_size} bytes; read_file shows its start)")
        else:
            lines = _lines_holding(context, name, text)
            hits.extend(lines)
            files += [name] if lines else []
        if len(hits) >= MAX_MATCHES:
            break
    found = "\n".join(sorted(hits[:MAX_MATCHES]) if not text else hits[:MAX_MATCHES])
    if hidden:
        skipped.append(
            f"{hidden} files in .git, .venv and the like, or ignored by .gitignore (a pattern "
            "with their path searches them)"
        )
    if skipped:
        found += ("\n" if found else "no matches\n") + "not searched: " + "; ".join(skipped[:5])
    others = context.own is not None and bool(
        context.own.foreign(files) if text else context.own.named(files)
    )
    return ToolResult(True, found or "no matches", untrusted=others)


def _lines_holding(context: ToolContext, name: str, text: str) -> list[str]:
    try:
        body = context.workspace.read(name, MAX_SEARCHED_BYTES).text()
    except (OSError, WorkspaceError):
        return []  # gone or changed since the walk saw it
    return [
        f"{name}:{number}: {line.strip()[:200]}"
        for number, line in enumerate(body.splitlines(), 1)
        if text.lower() in line.lower()
    ]


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
