"""Code actions: a short Python program written by the model runs in the sandbox, and every
agent tool is a plain function in it. Calling one sends a request to the host, which runs the
real tool through `call` (jailing, policy and approval are the caller's) and sends back the
result: the output string, or ToolError raised in the program when the tool failed. What the
program prints is what the model sees.

The bridge is one Unix socket pair, JSON lines, one call at a time:

    program -> host   {"tool": "read_file", "arguments": {"path": "a.txt"}}
    host -> program   {"ok": true, "output": "..."}

A request the preamble never sends (not JSON, the wrong shape, longer than MAX_REQUEST_BYTES)
gets an error reply and closes the bridge, and so does the call after the `max_calls`-th; the
program's further calls then raise ToolError. The time the host spends on a call counts
against the sandbox's wall clock, as the program is waiting for it.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import keyword
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autonoma.tools.base import Tool, ToolResult
from autonoma.tools.sandbox import Sandbox, SandboxResult

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Runs one tool by name with the program's arguments; the caller jails and approves it."""

MAX_REQUEST_BYTES = 2**20  # one request line; the preamble refuses to send a longer one
ENV = "AUTONOMA_BRIDGE"  # "fd,max_request_bytes" for the preamble, which removes it
CANCELLED = (
    "cancelled: the program ended before this call returned; the tool may have done all or "
    "part of its work"
)

# Runs as `python -c` before the model's code, which arrives on stdin with the tools' source
# (an argument holds at most 128 KiB; stdin has no such limit). It defines the tools in a
# fresh __main__ module, so the program cannot break the bridge by reusing a name, and hides
# its own frames ("<string>", "<tools>") from tracebacks.
PREAMBLE = r'''
import sys
_cwd = sys.path.pop(0) if sys.path and sys.path[0] == "" else None  # no workspace json.py here
import __future__, ast, json, linecache, os, socket, threading, traceback, types
if _cwd is not None:
    sys.path.insert(0, _cwd)


class ToolError(Exception):
    """A tool failed; the message is the tool's."""


class _Default:
    def __repr__(self):
        return "DEFAULT"


DEFAULT = _Default()
_fd, _MAX = (int(n) for n in os.environ.pop("AUTONOMA_BRIDGE").split(","))
_bridge = socket.socket(fileno=_fd)
_bridge.set_inheritable(False)
_io = _bridge.makefile("rwb")
_lock = threading.Lock()


def _call_tool(name, arguments):
    arguments = {k: v for k, v in arguments.items() if v is not DEFAULT and v is not None}
    try:
        line = json.dumps({"tool": name, "arguments": arguments}, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name}(): an argument is not JSON ({error}); pass str, int, float, bool, None, "
            "or lists and dicts of them"
        ) from None
    request = line.encode() + b"\n"
    if len(request) > _MAX:
        raise ValueError(f"{name}(): the arguments take {len(request):,} bytes, over {_MAX:,}")
    with _lock:
        try:
            _io.write(request)
            _io.flush()
            reply = _io.readline()
        except OSError:
            reply = b""
    if not reply:
        raise ToolError(f"{name}: the tools cannot be reached, the host closed the bridge")
    answer = json.loads(reply)
    if not answer["ok"]:
        raise ToolError(answer["output"])
    return answer["output"]


def _report(error, lines):
    if isinstance(error, SyntaxError) and error.filename == "program.py" and error.lineno:
        # CPython takes the line from a file of that name in the workspace, if there is one
        error.text = lines[error.lineno - 1] if error.lineno <= len(lines) else None
    shown = traceback.TracebackException(type(error), error, error.__traceback__)
    todo, seen = [shown], set()
    while todo:
        part = todo.pop()
        if id(part) not in seen:
            seen.add(id(part))
            frames = list(part.stack)
            ours = [i for i, f in enumerate(frames) if f.filename == "program.py"]
            frames = frames[ours[0] :] if ours else []
            frames = [f for f in frames if f.filename not in ("<string>", "<tools>")]
            part.stack = traceback.StackSummary.from_list(frames)
            todo += [p for p in (part.__cause__, part.__context__) if p is not None]
    sys.stderr.write("".join(shown.format()))


def _main():
    job = json.loads(sys.stdin.buffer.read())
    program = types.ModuleType("__main__")
    program.__dict__.update(ToolError=ToolError, DEFAULT=DEFAULT, _call_tool=_call_tool)
    sys.modules["__main__"] = program
    sys.argv = ["program.py"]
    flags = __future__.annotations.compiler_flag
    exec(compile(job["tools"], "<tools>", "exec", flags, True), program.__dict__)
    code = job["code"]
    lines = code.splitlines(True)
    linecache.cache["program.py"] = (len(code), None, lines, "program.py")
    try:
        tree = ast.parse(code, "program.py")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "program.py", "exec"), program.__dict__)
        if last is not None:  # shown as a REPL would: small models end on read_file("x")
            expression = compile(ast.Expression(last.value), "program.py", "eval")
            value = eval(expression, program.__dict__)
            if value is not None:
                print(value)
    except SystemExit:
        raise
    except BaseException as error:
        _report(error, lines)
        sys.exit(1)


_main()
'''


@dataclass(frozen=True)
class BridgedCall:
    """One tool call the program made: what it asked for and what the host answered."""

    name: str
    arguments: dict[str, Any]
    result: ToolResult


@dataclass(frozen=True)
class ProgramResult:
    """What a program did: the sandbox's result (exit code, capped output, limits hit) and
    its tool calls in order."""

    sandbox: SandboxResult
    calls: tuple[BridgedCall, ...]


async def run_program(
    sandbox: Sandbox,
    workspace: Path,
    code: str,
    tools: Sequence[Tool],
    call: ToolCaller,
    *,
    writable: bool = False,
    max_calls: int = 50,
    helpers: str = "",
) -> ProgramResult:
    """Run the model's `code` in `sandbox`, each of `tools` a function in it, every call run
    by `call` on the host. The workspace is read-only to the program unless `writable`.
    Raises SandboxError only when the sandbox could not start; whatever the program does is
    in the result. Cancelled, it leaves nothing behind: no process, task or descriptor.
    `helpers`: Python source defined beside the tools, run in the program (no host call)."""
    job = json.dumps({"tools": tool_functions(tools) + helpers, "code": code})
    host, child = socket.socketpair()
    try:
        reader, writer = await asyncio.open_connection(sock=host, limit=MAX_REQUEST_BYTES)
    except BaseException:
        host.close()
        child.close()
        raise
    calls: list[BridgedCall] = []
    env = {ENV: f"{child.fileno()},{MAX_REQUEST_BYTES}"}
    try:
        server = asyncio.create_task(_serve(reader, writer, tools, call, max_calls, calls))
        try:
            result = await sandbox.run(
                [sandbox.python, "-c", PREAMBLE],
                workspace=workspace,
                stdin=job,
                writable=writable,
                pass_fds=[child.detach()],  # the sandbox's from here on
                env=env,
            )
        finally:
            server.cancel()  # a call still running: its program is gone
            await asyncio.wait({server})
    finally:
        child.close()  # still ours only if the sandbox never got it
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    error = None if server.cancelled() else server.exception()
    if error is not None:
        raise error
    return ProgramResult(result, tuple(calls))


async def _serve(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    tools: Sequence[Tool],
    call: ToolCaller,
    max_calls: int,
    calls: list[BridgedCall],
) -> None:
    """Answer the program's requests in order until it closes its end. A request it should
    never have sent, or one call too many, gets an error and closes the bridge."""
    known = {tool.name for tool in tools}
    try:
        while True:
            try:
                line = await reader.readline()
            except ConnectionError:  # gone, leaving a reply unread
                return
            except ValueError:  # longer than the reader's limit
                message = f"refused: a request over {MAX_REQUEST_BYTES:,} bytes"
                await _reply(writer, ToolResult(False, f"{message}; the bridge is closed"))
                return
            if not line.endswith(b"\n"):
                return  # the program is gone, perhaps in the middle of a line
            request = _parse(line)
            if isinstance(request, str):
                await _reply(writer, ToolResult(False, f"{request}; the bridge is closed"))
                return
            name, arguments = request
            if len(calls) >= max_calls:
                result = ToolResult(
                    False,
                    f"refused: the program already made {max_calls} tool calls, as many as "
                    "one program may; the bridge is closed, so no further call works in it",
                )
                calls.append(BridgedCall(name, arguments, result))
                await _reply(writer, result)
                return
            try:
                result = await _run(call, known, name, arguments)
            except asyncio.CancelledError:
                calls.append(BridgedCall(name, arguments, ToolResult(False, CANCELLED)))
                raise
            calls.append(BridgedCall(name, arguments, result))
            await _reply(writer, result)
    finally:
        writer.close()  # the program's next call sees the bridge closed


def _parse(line: bytes) -> tuple[str, dict[str, Any]] | str:
    """The tool and arguments a request names, or what is wrong with it."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError) as err:  # RecursionError: "[[[[..." nested deep
        return f"refused: a request that is not JSON ({err})"
    if not (
        isinstance(request, dict)
        and isinstance(request.get("tool"), str)
        and isinstance(request.get("arguments"), dict)
    ):
        return 'refused: a request must be {"tool": name, "arguments": {...}}'
    return request["tool"], request["arguments"]


async def _run(
    call: ToolCaller, known: set[str], name: str, arguments: dict[str, Any]
) -> ToolResult:
    if name not in known:
        return ToolResult(False, f"error: there is no tool named {name!r}")
    try:
        return await call(name, arguments)
    except Exception as err:  # the caller's failure is the program's error, never ours
        return ToolResult(False, f"error: {name} failed on the host: {type(err).__name__}: {err}")


async def _reply(writer: asyncio.StreamWriter, result: ToolResult) -> None:
    writer.write(json.dumps({"ok": result.ok, "output": result.output}).encode() + b"\n")
    with contextlib.suppress(ConnectionError):  # the program is gone: its result says how
        await writer.drain()


# -- the tools as Python functions -----------------------------------------------------------

_PREAMBLE_NAMES = {"ToolError", "DEFAULT", "_call_tool", "__debug__"}
_BUILTINS = set(dir(builtins))
_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
    "null": "None",
}


def tool_functions(tools: Sequence[Tool]) -> str:
    """Python source defining one function per tool, for the preamble and for a prompt:

        def read_file(path: str) -> str:
            \"""Read a text file from the workspace. ...\"""
            return _call_tool("read_file", {"path": path})

    Required parameters come first; an optional one defaults to DEFAULT, which leaves it out
    of the call, and so does None (the prompt shows optional ones as `=None`). A tool or
    parameter whose name is not a usable Python name (a keyword, a builtin, "git.status",
    "max-results") gets one, and a comment above the function says so.
    """
    taken = set(_PREAMBLE_NAMES)
    return "\n\n\n".join(_function(tool, taken) for tool in tools) + "\n"


def _function(tool: Tool, taken: set[str]) -> str:
    schema = tool.spec().parameters
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = [n for n in schema.get("required") or () if isinstance(n, str)]
    names = [*props, *(n for n in required if n not in props)]
    ordered = [n for n in names if n in required] + [n for n in names if n not in required]
    function = _python_name(tool.name, taken, tool=True)
    taken.add(function)
    comments = [] if function == tool.name else [f"# the tool {json.dumps(tool.name)}"]
    local = {"_call_tool"}
    params, pairs, docs = [], [], []
    for name in ordered:
        python = _python_name(name, local, tool=False)
        local.add(python)
        if python != name:
            comments.append(f"# its parameter {json.dumps(name)} is {python} here")
        prop = props.get(name)
        prop = prop if isinstance(prop, dict) else {}
        default = "" if name in required else " = DEFAULT"
        params.append(f"{python}: {_annotation(prop)}{default}")
        pairs.append(f"{json.dumps(name)}: {python}")
        doc = " ".join(str(prop.get("description") or "").split())
        if "default" in prop:
            doc = f"{doc} (default {prop['default']!r})".strip()
        if doc:
            docs.append(f"{python}: {doc}")
    lines = [*comments, f"def {function}({', '.join(params)}) -> str:"]
    text = tool.description.strip()
    if docs:
        text += "\n\nArgs:\n" + "\n".join(f"    {doc}" for doc in docs)
    if text:
        lines.append(_docstring(text))
    lines.append(f"    return _call_tool({json.dumps(tool.name)}, {{{', '.join(pairs)}}})")
    return "\n".join(lines)


def _python_name(name: str, taken: set[str], *, tool: bool) -> str:
    """`name` as a Python identifier that is not in `taken`; a tool's does not hide a builtin
    (a tool named "print" is print_)."""
    base = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if base[0].isdigit():
        base = f"_{base}"
    special = base.startswith("__") and base.endswith("__")
    if keyword.iskeyword(base) or (tool and (base in _BUILTINS or special)):
        base += "_"
    found, n = base, 2
    while found in taken:
        found, n = f"{base}_{n}", n + 1
    return found


def _annotation(schema: Any, depth: int = 0) -> str:
    """A JSON Schema's type as a Python annotation: "str", "list[str] | None", or "Any"."""
    if not isinstance(schema, dict) or depth > 3:
        return "Any"
    kinds = schema.get("type")
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(kinds, str | list) and kinds:
        names = [
            _json_type(kind, schema, depth)
            for kind in ([kinds] if isinstance(kinds, str) else kinds)
        ]
    elif isinstance(options, list) and options:
        names = [_annotation(option, depth + 1) for option in options]
    else:
        return "Any"
    return "Any" if "Any" in names else " | ".join(dict.fromkeys(names))


def _json_type(kind: Any, schema: dict[str, Any], depth: int) -> str:
    name = _JSON_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"
    if name == "list" and "items" in schema:
        items = _annotation(schema["items"], depth + 1)
        return name if items == "Any" else f"list[{items}]"
    return name


def _docstring(text: str) -> str:
    """`text` as a docstring of a function body. Backslashes, a quote that could end it and
    characters that are not printable are escaped: an MCP server writes its own descriptions."""
    text = text.replace("\\", "\\\\")
    text = re.sub(r'"(?="|\Z)', r'\\"', text)
    text = "".join(
        c if c.isprintable() or c in "\n\t" else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
    first, *rest = text.split("\n")
    body = "\n".join([first, *(f"    {line}" if line else "" for line in rest)])
    closing = "\n    " if "\n" in text else ""
    return f'    """{body}{closing}"""'


__all__ = [
    "CANCELLED",
    "MAX_REQUEST_BYTES",
    "BridgedCall",
    "ProgramResult",
    "ToolCaller",
    "run_program",
    "tool_functions",
]
