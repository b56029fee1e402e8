"""Code actions against real bubblewrap: model-written Python calling the agent's tools through
the bridge, and the sandbox options it stands on (a read-only workspace, passed descriptors,
extra environment)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from autonoma.tools import FILE_TOOLS, Tool, ToolContext, ToolResult, Workspace, tool
from autonoma.tools.bridge import (
    CANCELLED,
    BridgedCall,
    ProgramResult,
    ToolCaller,
    run_program,
    tool_functions,
)
from autonoma.tools.sandbox import BubblewrapSandbox, Sandbox, SandboxError, UnsafeSandbox
from tests.tools.helpers import limits, processes_with


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


@pytest.fixture
def sandbox() -> Sandbox:
    if not Path("/usr/bin/bwrap").exists():
        pytest.skip("bubblewrap is not installed (/usr/bin/bwrap); the bridge runs in it")
    return BubblewrapSandbox(limits())


@tool()
def shout(text: str, times: int = 1) -> str:
    """Say it louder.

    Args:
        text: what to say
        times: how often
    """
    return " ".join([text.upper()] * times)


@tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the thing broke")


TOOLS: list[Tool] = [*FILE_TOOLS, shout, fail]


def caller(ws: Workspace, tools: Sequence[Tool] = TOOLS) -> ToolCaller:
    """Runs the real tools, as the agent's call does without its policy."""
    context = ToolContext(workspace=ws)
    by_name = {t.name: t for t in tools}

    async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        return await by_name[name].run(context, arguments)

    return call


async def run(sandbox: Sandbox, ws: Workspace, code: str, **options: Any) -> ProgramResult:
    return await run_program(sandbox, ws.root, code, TOOLS, caller(ws), **options)


# -- the sandbox's options -------------------------------------------------------------------


async def test_passed_fds_arrive_through_bwrap(sandbox: Sandbox, ws: Workspace) -> None:
    """Through bwrap, prlimit and (as root) setpriv, under the same numbers, and nothing else
    of the host's; the host's copies are closed once the program has started."""
    into_read, into_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(into_write, b"ping")
    os.close(into_write)
    code = (
        "import os\n"
        f"os.write({out_write}, os.read({into_read}, 10) + b' pong')\n"
        "print(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))\n"
    )
    result = await sandbox.run(
        [sandbox.python, "-c", code], workspace=ws.root, pass_fds=[into_read, out_write]
    )
    assert result.exit_code == 0, result.stderr
    listed = [int(fd) for fd in result.stdout.strip("[]\n").split(", ")]
    # stdin, stdout, stderr, the two passed, and the one listdir opened
    assert {0, 1, 2, into_read, out_write} <= set(listed) and len(listed) == 6
    os.set_blocking(out_read, False)
    assert os.read(out_read, 100) == b"ping pong"
    assert os.read(out_read, 100) == b""  # end of file: no copy of the write end is left here
    os.close(out_read)


async def test_env_is_set_and_names_are_checked(sandbox: Sandbox, ws: Workspace) -> None:
    result = await sandbox.run(
        [sandbox.shell, "-c", 'echo "$GREETING|$HOME"'],
        workspace=ws.root,
        env={"GREETING": "hello there", "HOME": "/tmp"},
    )
    assert result.stdout == "hello there|/tmp\n"
    read, write = os.pipe()
    with pytest.raises(SandboxError, match="'BAD-NAME'"):
        await sandbox.run(["true"], workspace=ws.root, env={"BAD-NAME": "x"}, pass_fds=[read])
    with pytest.raises(BrokenPipeError):  # the refused command's descriptor was closed too
        os.write(write, b"x")
    os.close(write)


async def test_read_only_workspace(sandbox: Sandbox, ws: Workspace) -> None:
    (ws.root / "given.txt").write_text("from the host\n", encoding="utf-8")
    code = (
        "import errno\n"
        "print(open('given.txt').read(), end='')\n"
        "for path in ('given.txt', 'new.txt'):\n"
        "    try:\n"
        "        open(path, 'a').write('x')\n"
        "    except OSError as err:\n"
        "        print(errno.errorcode[err.errno])\n"
        "open('/tmp/scratch', 'w').write('fine')\n"
        "print(open('/tmp/scratch').read())\n"
    )
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code, writable=False)
    assert result.stdout == "from the host\nEROFS\nEROFS\nfine\n", result.stderr
    assert ws.files() == ["given.txt"]
    assert (ws.root / "given.txt").read_text(encoding="utf-8") == "from the host\n"


async def test_unsafe_backend_passes_fds_and_env(ws: Workspace) -> None:
    sandbox = UnsafeSandbox(limits())
    read, write = os.pipe()
    result = await sandbox.run(
        [sandbox.python, "-c", f"import os; os.write({write}, os.environ['WORD'].encode())"],
        workspace=ws.root,
        pass_fds=[write],
        env={"WORD": "through"},
    )
    assert result.exit_code == 0, result.stderr
    assert os.read(read, 100) == b"through"
    os.close(read)


# -- programs calling tools ------------------------------------------------------------------


async def test_program_reads_transforms_and_writes(sandbox: Sandbox, ws: Workspace) -> None:
    (ws.root / "names.txt").write_text("ann\nbo\n", encoding="utf-8")
    code = (
        "names = open('names.txt').read().split()\n"
        "print(write_file('loud.txt', '\\n'.join(shout(n, times=2) for n in names)))\n"
        "print(list_files())\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.exit_code == 0, result.sandbox.stderr
    assert (ws.root / "loud.txt").read_text(encoding="utf-8") == "ANN ANN\nBO BO"
    assert result.sandbox.stdout == (
        "wrote 2 lines, 13 characters to loud.txt\nloud.txt\nnames.txt\n"
    )
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("shout", {"text": "ann", "times": 2}),
        ("shout", {"text": "bo", "times": 2}),
        ("write_file", {"path": "loud.txt", "text": "ANN ANN\nBO BO"}),
        ("list_files", {}),  # an optional argument not given is not sent
    ]
    assert all(c.result.ok for c in result.calls)


async def test_workspace_is_read_only_unless_asked(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "import errno\n"
        "try:\n"
        "    open('direct.txt', 'w')\n"
        "except OSError as err:\n"
        "    print(errno.errorcode[err.errno])\n"
        "open('/tmp/t', 'w').write('tmp works')\n"
        "open('/tmp/t').read()\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.stdout == "EROFS\ntmp works\n", result.sandbox.stderr
    assert not (ws.root / "direct.txt").exists()
    writable = await run(sandbox, ws, "open('direct.txt', 'w').write('ok')", writable=True)
    assert writable.sandbox.exit_code == 0, writable.sandbox.stderr
    assert (ws.root / "direct.txt").read_text(encoding="utf-8") == "ok"


async def test_failing_tool_raises_tool_error(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "try:\n"
        "    read_file('missing.txt')\n"
        "except ToolError as err:\n"
        "    print('caught:', err)\n"
        "fail()\n"
        "print('not reached')\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.exit_code == 1
    assert result.sandbox.stdout == (
        "caught: error: FileNotFoundError: missing.txt is not a file in the workspace "
        "(list_files shows what is)\n"
    )
    stderr = result.sandbox.stderr
    assert stderr.endswith("ToolError: error: ValueError: the thing broke\n")
    # the program's frames alone: not the preamble's, not the tool functions'
    assert 'File "program.py", line 5, in <module>\n    fail()\n' in stderr
    assert "<string>" not in stderr and "<tools>" not in stderr and "_call_tool" not in stderr
    assert [(c.name, c.result.ok) for c in result.calls] == [("read_file", False), ("fail", False)]


async def test_last_expression_is_printed(sandbox: Sandbox, ws: Workspace) -> None:
    (ws.root / "a.txt").write_text("first\nsecond\n", encoding="utf-8")
    cases = {
        "x = 6\nx * 7": "42\n",
        "open('a.txt').read()": "first\nsecond\n\n",  # the text itself, as print shows it
        "shout('hi')": "HI\n",
        "print('once')": "once\n",  # print's None is not printed again
        "None": "",
        "if True:\n    5": "",  # only a last top-level expression
    }
    for code, shown in cases.items():
        result = await run(sandbox, ws, code)
        assert (result.sandbox.stdout, result.sandbox.stderr) == (shown, ""), code


async def test_tracebacks_name_program_lines(sandbox: Sandbox, ws: Workspace) -> None:
    # a program.py in the workspace must not be shown instead of the program's own lines
    (ws.root / "program.py").write_text("something else\n" * 10, encoding="utf-8")
    code = "def half(n):\n    return n / 0\n\nvalues = [1, 2]\nhalf(values[0])\n"
    result = await run(sandbox, ws, code)
    assert result.sandbox.stderr == (
        "Traceback (most recent call last):\n"
        '  File "program.py", line 5, in <module>\n'
        "    half(values[0])\n"
        '  File "program.py", line 2, in half\n'
        "    return n / 0\n"
        "           ~~^~~\n"
        "ZeroDivisionError: division by zero\n"
    )
    broken = await run(sandbox, ws, "x = 1\ny = (\n")
    assert broken.sandbox.exit_code == 1
    assert broken.sandbox.stderr == (
        "  File \"program.py\", line 2\n    y = (\n        ^\nSyntaxError: '(' was never closed\n"
    )


async def test_bad_arguments_are_type_errors(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "for attempt in (\n"
        "    lambda: read_file(path='a.txt', encoding='utf-8'),\n"
        "    lambda: write_file('a.txt'),\n"
        "    lambda: write_file('a.txt', {1, 2}),\n"
        "    lambda: shout(float('nan')),\n"
        "):\n"
        "    try:\n"
        "        attempt()\n"
        "    except TypeError as err:\n"
        "        print(err)\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.exit_code == 0, result.sandbox.stderr
    lines = result.sandbox.stdout.splitlines()
    assert lines[0] == "read_file() got an unexpected keyword argument 'encoding'"
    assert lines[1] == "write_file() missing 1 required positional argument: 'text'"
    assert lines[2].startswith("write_file(): an argument is not JSON (Object of type set")
    assert lines[3].startswith("shout(): an argument is not JSON (Out of range float")
    assert result.calls == ()


async def test_unknown_tool_and_a_failing_caller(sandbox: Sandbox, ws: Workspace) -> None:
    async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        raise RuntimeError(f"policy store is down ({name})")

    code = (
        "for attempt in (lambda: _call_tool('launch_rockets', {}), lambda: shout('x')):\n"
        "    try:\n"
        "        attempt()\n"
        "    except ToolError as err:\n"
        "        print(err)\n"
    )
    result = await run_program(sandbox, ws.root, code, TOOLS, call)
    assert result.sandbox.stdout == (
        "error: there is no tool named 'launch_rockets'\n"
        "error: shout failed on the host: RuntimeError: policy store is down (shout)\n"
    )
    assert [c.name for c in result.calls] == ["launch_rockets", "shout"]


async def test_max_calls(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "for n in range(5):\n"
        "    try:\n"
        "        print(shout(str(n)))\n"
        "    except ToolError as err:\n"
        "        print(err)\n"
    )
    result = await run(sandbox, ws, code, max_calls=3)
    assert result.sandbox.exit_code == 0, result.sandbox.stderr
    assert result.sandbox.stdout.splitlines() == [
        "0",
        "1",
        "2",
        "refused: the program already made 3 tool calls, as many as one program may; the "
        "bridge is closed, so no further call works in it",
        "shout: the tools cannot be reached, the host closed the bridge",
    ]
    assert len(result.calls) == 4 and not result.calls[3].result.ok


@pytest.mark.parametrize(
    ("garbage", "reply"),
    [
        (b"not json\n", "refused: a request that is not JSON"),
        (b"[" * 900_000 + b"\n", "refused: a request that is not JSON"),
        (b'{"tool": 1, "arguments": []}\n', 'refused: a request must be {"tool"'),
        (b"x" * 3_000_000 + b"\n", "refused: a request over 1,048,576 bytes"),
    ],
)
async def test_garbage_on_the_bridge(
    sandbox: Sandbox, ws: Workspace, garbage: bytes, reply: str
) -> None:
    """A program writing to the bridge itself gets one error, then the bridge is closed."""
    code = (
        "bridge = _call_tool.__globals__['_bridge']\n"
        "try:\n"
        f"    bridge.sendall({garbage!r})\n"
        "    print(bridge.makefile('rb').readline().decode())\n"
        "except OSError as err:\n"
        "    print('bridge:', type(err).__name__)\n"
        "try:\n"
        "    shout('after')\n"
        "except ToolError as err:\n"
        "    print(err)\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.exit_code == 0 and not result.sandbox.timed_out, result.sandbox.stderr
    lines = result.sandbox.stdout.splitlines()
    if not lines[0].startswith("bridge:"):  # a flood may find the socket reset instead
        answer = json.loads(lines[0])
        assert answer["ok"] is False and answer["output"].startswith(reply)
        assert answer["output"].endswith("; the bridge is closed")
    assert lines[-1] == "shout: the tools cannot be reached, the host closed the bridge"
    assert result.calls == ()


async def test_flood_without_newlines(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "bridge = _call_tool.__globals__['_bridge']\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        bridge.sendall(b'y' * 1_000_000)\n"
        "except OSError as err:\n"
        "    print('stopped by', type(err).__name__)\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.stdout in (
        "stopped by BrokenPipeError\n",
        "stopped by ConnectionResetError\n",
    )
    assert result.calls == ()


async def test_wall_clock_kills_a_program_waiting_for_a_call(ws: Workspace) -> None:
    if not Path("/usr/bin/bwrap").exists():
        pytest.skip("bubblewrap is not installed (/usr/bin/bwrap); the bridge runs in it")
    sandbox = BubblewrapSandbox(limits(wall_s=1))
    cancelled = asyncio.Event()

    async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolResult(True, "too late")

    result = await run_program(sandbox, ws.root, "print('asking')\nshout('x')", TOOLS, call)
    assert result.sandbox.timed_out
    assert result.sandbox.stopped == "stopped: ran longer than 1 second (wall clock)"
    assert result.sandbox.stdout == "asking\n"
    assert result.calls == (BridgedCall("shout", {"text": "x"}, ToolResult(False, CANCELLED)),)
    assert cancelled.is_set()


async def test_cancelling_leaves_nothing_behind(sandbox: Sandbox, ws: Workspace) -> None:
    def open_fds() -> set[tuple[str, str]]:
        """Each descriptor with what it is ("socket:[1234]"): a number alone may be reused."""
        found = set()
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own descriptor, gone by now
                found.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        return found

    await run(sandbox, ws, "shout('warm up')")  # anything asyncio opens once, opened now
    fds_before, tasks_before = open_fds(), asyncio.all_tasks()
    marker = f"autonoma-marker-{uuid.uuid4().hex}"
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        started.set()
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolResult(True, "")

    code = (
        "import subprocess\n"
        f"subprocess.Popen(['bash', '-c', 'exec -a {marker} sleep 600'])\n"
        "shout('wait for me')\n"
    )
    gc.disable()  # a transport dropped unclosed would close its socket when collected
    try:
        program = asyncio.create_task(run_program(sandbox, ws.root, code, TOOLS, call))
        await asyncio.wait_for(started.wait(), 30)
        for _ in range(200):
            if processes_with(marker):
                break
            await asyncio.sleep(0.05)
        assert processes_with(marker)
        program.cancel()
        with pytest.raises(asyncio.CancelledError):
            await program
        fds_after = open_fds()
    finally:
        gc.enable()
    assert cancelled.is_set()
    assert processes_with(marker) == []
    assert asyncio.all_tasks() == tasks_before
    assert fds_after == fds_before


# -- the functions' source -------------------------------------------------------------------


def test_tool_functions_source() -> None:
    source = tool_functions([FILE_TOOLS[0], shout])
    assert source.startswith(
        "def write_file(path: str, text: str) -> str:\n"
        '    """Create or replace a file in the workspace, giving its complete text at once.\n'
        "\n"
        "    Args:\n"
        "        path: the file's path, relative to the workspace\n"
        "        text: the whole new content\n"
        '    """\n'
        '    return _call_tool("write_file", {"path": path, "text": text})\n'
        "\n\n"
        "def shout(text: str, times: int = DEFAULT) -> str:\n"
    )
    assert "        times: how often (default 1)\n" in source


def test_tool_functions_make_python_names() -> None:
    def echo(arguments: dict[str, Any]) -> str:
        return str(arguments)

    schema = {
        "type": "object",
        "properties": {
            "max-results": {"type": ["integer", "null"], "description": 'at most """ this\\'},
            "from": {"type": "string"},
            "class": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
            "_call_tool": {},
            "2nd": {"type": "boolean"},
        },
        "required": ["from"],
    }
    tools = [
        Tool.from_schema("git.status", 'Ends in "quotes"\x00"', schema, echo),
        Tool.from_schema("git_status", "The other one.", {"type": "object"}, echo),
        Tool.from_schema("print", "Not the builtin.", {"type": "object"}, echo),
    ]
    source = tool_functions(tools)
    assert '# the tool "git.status"\n# its parameter "from" is from_ here\n' in source
    assert (
        "def git_status(from_: str, max_results: int | None = DEFAULT, "
        "class_: list[str] | None = DEFAULT, _call_tool_2: Any = DEFAULT, "
        "_2nd: bool = DEFAULT) -> str:"
    ) in source
    assert "def git_status_2() -> str:" in source
    assert "def print_() -> str:" in source
    sent: list[tuple[str, dict[str, Any]]] = []
    scope: dict[str, Any] = {"DEFAULT": None, "_call_tool": lambda *call: sent.append(call)}
    exec(compile(source, "<tools>", "exec"), scope)  # valid Python, whatever the descriptions
    scope["git_status"]("here", max_results=3)
    scope["print_"]()
    assert sent == [
        (
            "git.status",
            {"from": "here", "max-results": 3, "class": None, "_call_tool": None, "2nd": None},
        ),
        ("print", {}),
    ]
    assert scope["git_status"].__doc__.startswith('Ends in "quotes"\x00"')
    assert 'at most """ this\\' in scope["git_status"].__doc__


async def test_renamed_tools_work_in_the_sandbox(sandbox: Sandbox, ws: Workspace) -> None:
    def echo(arguments: dict[str, Any]) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(arguments.items()))

    schema = {
        "type": "object",
        "properties": {"from": {"type": "string"}, "max-results": {"type": "integer"}},
        "required": ["from"],
    }
    tools = [Tool.from_schema("git.status", "Status.", schema, echo)]
    result = await run_program(
        sandbox, ws.root, "git_status('x', max_results=2)", tools, caller(ws, tools)
    )
    assert result.sandbox.stdout == "from=x,max-results=2\n", result.sandbox.stderr


async def test_a_program_gone_before_its_reply(sandbox: Sandbox, ws: Workspace) -> None:
    """A program that leaves a reply unread resets the socket; the bridge ends quietly."""
    code = (
        "import os, time\n"
        "bridge = _call_tool.__globals__['_bridge']\n"
        'bridge.sendall(b\'{"tool": "shout", "arguments": {"text": "x"}}\\n\')\n'
        "time.sleep(0.5)\n"
        "os._exit(0)\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.exit_code == 0, result.sandbox.stderr
    assert [(c.name, c.result) for c in result.calls] == [("shout", ToolResult(True, "X"))]


async def test_the_program_is_main(sandbox: Sandbox, ws: Workspace) -> None:
    (ws.root / "json.py").write_text("raise ImportError('the bridge imported me')\n")
    (ws.root / "helper.py").write_text("GREETING = 'hello'\n")
    code = (
        "import sys\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from dataclasses import dataclass\n"
        "from helper import GREETING\n"
        "\n"
        "@dataclass\n"
        "class Word:\n"
        "    text: str\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    with ThreadPoolExecutor(4) as pool:\n"
        "        loud = list(pool.map(shout, [GREETING, 'a', 'b', 'c', 'd', 'e']))\n"
        "    print(Word(loud[0]), sys.argv, len(loud))\n"
        "    sys.exit(3)\n"
    )
    result = await run(sandbox, ws, code)
    assert result.sandbox.stdout == "Word(text='HELLO') ['program.py'] 6\n", result.sandbox.stderr
    assert result.sandbox.exit_code == 3
    assert sorted(c.result.output for c in result.calls) == ["A", "B", "C", "D", "E", "HELLO"]
