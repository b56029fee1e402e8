"""The code sandbox and the code tools against real bubblewrap: real Python and shell, the
workspace shared with the host, output caps, exit codes, the wall clock, clear refusals.
What the sandbox must keep out is in tests/security/test_sandbox.py."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest

from autonoma.tools import ToolContext, Workspace
from autonoma.tools.code import CODE_TOOLS, execute_python, execute_python_file, execute_shell
from autonoma.tools.egress import EgressGuard
from autonoma.tools.sandbox import (
    BubblewrapSandbox,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    UnsafeSandbox,
    _Capture,
    make_sandbox,
    sandbox_of,
)
from autonoma.tools.settings import WebSettings
from tests.tools.helpers import limits, processes_with

needs_bwrap = pytest.mark.skipif(
    not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed"
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


@pytest.fixture
def sandbox() -> Sandbox:
    if not Path("/usr/bin/bwrap").exists():
        pytest.skip("bubblewrap is not installed")
    return BubblewrapSandbox(limits())


@pytest.fixture
def ctx(ws: Workspace, sandbox: Sandbox) -> ToolContext:
    return ToolContext(workspace=ws, sandbox=sandbox)


# -- real Python and shell -------------------------------------------------------------------


async def test_runs_python_and_shell(sandbox: Sandbox, ws: Workspace) -> None:
    result = await sandbox.run([sandbox.python, "-c", "print(6 * 7)"], workspace=ws.root)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "42\n", "")
    assert result.ok and not result.timed_out and result.stopped is None

    shell = await sandbox.run(
        [sandbox.shell, "-c", "echo out; echo err >&2; pwd; exit 3"], workspace=ws.root
    )
    assert shell.exit_code == 3 and not shell.ok
    assert shell.stdout == "out\n/workspace\n"
    assert shell.stderr == "err\n"


async def test_program_text_on_stdin(sandbox: Sandbox, ws: Workspace) -> None:
    code = "import sys\nprint(sys.version_info[:2] >= (3, 8))\nprint(len(sys.argv))\n"
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    assert result.stdout == "True\n1\n"
    cat = await sandbox.run(["cat"], workspace=ws.root, stdin="é" * 100_000)
    assert cat.stdout_bytes == 200_000  # all of it went through, more than a pipe holds


async def test_workspace_is_shared_with_the_host(sandbox: Sandbox, ws: Workspace) -> None:
    (ws.root / "given.txt").write_text("from the host\n", encoding="utf-8")
    (ws.root / "data").mkdir()
    (ws.root / "data" / "numbers.csv").write_text("1\n2\n3\n", encoding="utf-8")
    code = (
        "import pathlib\n"
        "print(open('given.txt').read(), end='')\n"
        "total = sum(int(x) for x in open('data/numbers.csv'))\n"
        "pathlib.Path('out/deep').mkdir(parents=True)\n"
        "pathlib.Path('out/deep/sum.txt').write_text(str(total))\n"
        "open('given.txt', 'a').write('and from the sandbox\\n')\n"
        "open('data/numbers.csv', 'w').write('changed')\n"
    )
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "from the host\n"
    assert (ws.root / "out" / "deep" / "sum.txt").read_text(encoding="utf-8") == "6"
    assert (ws.root / "given.txt").read_text(encoding="utf-8") == (
        "from the host\nand from the sandbox\n"
    )
    # the host can still change and remove everything the sandbox made or touched
    (ws.root / "out" / "deep" / "sum.txt").write_text("host again", encoding="utf-8")
    (ws.root / "data" / "numbers.csv").unlink()
    (ws.root / "out" / "deep" / "sum.txt").unlink()
    (ws.root / "out" / "deep").rmdir()
    assert ws.files() == ["given.txt"]

    # a second call sees the host's changes
    again = await sandbox.run(["ls", "-A"], workspace=ws.root)
    assert again.stdout.split() == ["data", "given.txt", "out"]


async def test_runs_as_an_unprivileged_user(sandbox: Sandbox, ws: Workspace) -> None:
    code = (
        "import os\n"
        "print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())\n"
        "status = open('/proc/self/status').read()\n"
        "print([l.split()[1] for l in status.splitlines() if l.startswith(('CapEff', 'NoNewPrivs'))])\n"
    )
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    uid, euid, gid, groups, caps = result.stdout.split(maxsplit=4)
    assert uid == euid != "0" and gid != "0"
    assert "0," not in groups and "[0]" not in groups
    if os.geteuid() == 0:
        assert int(uid) == BubblewrapSandbox(limits()).uid  # the dedicated uid outside too
    assert caps.strip() == "['0000000000000000', '1']"


async def test_interpreter_outside_usr(ws: Workspace) -> None:
    """An interpreter installed elsewhere (pyenv here) runs with its installation bound
    read-only; a venv's python runs as its base interpreter, without the venv."""
    sandbox = BubblewrapSandbox(limits(python=sys.executable))
    assert not sandbox.python.startswith("/usr/")
    code = (
        "import os, sys, importlib.util\n"
        "print(sys.version_info[:2], sys.prefix == sys.base_prefix)\n"
        f"print(importlib.util.find_spec('autonoma'), os.path.exists({sys.prefix!r}))\n"
    )
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    assert result.exit_code == 0, result.stderr
    assert (
        result.stdout
        == f"{tuple(sys.version_info[:2])} True\nNone {sys.prefix == sys.base_prefix}\n"
    )


async def test_default_interpreter_is_the_systems(tmp_path: Path) -> None:
    sandbox = BubblewrapSandbox(limits())
    if Path("/usr/bin/python3").exists():
        assert sandbox.python == os.path.realpath("/usr/bin/python3")
    with pytest.raises(SandboxUnavailable, match="sandbox.python"):
        BubblewrapSandbox(limits(python=str(tmp_path / "no-python")))


# -- output, exit codes, the wall clock -----------------------------------------------------


async def test_output_is_capped_keeping_head_and_tail(sandbox: Sandbox, ws: Workspace) -> None:
    code = "print('START' + 'x' * 2_000_000 + 'END')\nimport sys\nsys.stderr.write('e' * 50_000 + 'LAST')"
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    assert result.exit_code == 0
    assert result.stdout_truncated and result.stderr_truncated
    assert result.stdout_bytes == 2_000_009 and result.stderr_bytes == 50_004
    assert result.stdout.startswith("STARTxxx") and result.stdout.endswith("xxxEND\n")
    assert result.stderr.endswith("eeeLAST")
    assert "bytes cut ...]" in result.stdout
    for text in (result.stdout, result.stderr):
        assert len(text) < 1000 + 60  # the cap and the marker


async def test_short_output_is_whole(sandbox: Sandbox, ws: Workspace) -> None:
    text = "ü" * 999
    result = await sandbox.run(["printf", "%s", text], workspace=ws.root)
    assert result.stdout == text and not result.stdout_truncated


def test_capture_holds_bounded_memory() -> None:
    capture = _Capture(1000)
    chunk = b"a" * 65536
    for _ in range(2000):  # 131 MB through it
        capture.add(chunk)
    capture.add(b"the end")
    assert capture.total == 2000 * 65536 + 7
    assert len(capture.head) + len(capture.tail) <= 4 * 1000 * 3
    text, cut = capture.text()
    assert cut and text.endswith("the end") and len(text) < 1100


async def test_a_flood_of_output_costs_no_memory(sandbox: Sandbox, ws: Workspace) -> None:
    result = await sandbox.run(
        [sandbox.shell, "-c", "head -c 100000000 /dev/zero | tr '\\0' y; echo done"],
        workspace=ws.root,
    )
    assert result.exit_code == 0
    assert result.stdout_bytes == 100_000_005 and result.stdout.endswith("yyydone\n")


async def test_exit_codes(sandbox: Sandbox, ws: Workspace) -> None:
    exits = await sandbox.run([sandbox.python, "-c", "raise SystemExit(5)"], workspace=ws.root)
    assert exits.exit_code == 5
    raises = await sandbox.run([sandbox.python, "-c", "1/0"], workspace=ws.root)
    assert raises.exit_code == 1 and "ZeroDivisionError" in raises.stderr
    killed = await sandbox.run([sandbox.shell, "-c", "kill -TERM $$"], workspace=ws.root)
    assert killed.exit_code == 128 + 15 and killed.stopped is None


async def test_wall_clock_kills_everything(ws: Workspace) -> None:
    sandbox = BubblewrapSandbox(limits(wall_s=1))
    marker = f"autonoma-marker-{uuid.uuid4().hex}"
    result = await sandbox.run(
        [
            sandbox.shell,
            "-c",
            f"echo started; (exec -a {marker} sleep 600) & exec -a {marker} sleep 600",
        ],
        workspace=ws.root,
    )
    assert result.timed_out and not result.ok
    assert result.stopped == "stopped: ran longer than 1 second (wall clock)"
    assert result.stdout == "started\n"  # what it printed before the kill is kept
    assert processes_with(marker) == []


async def test_cancelling_a_call_kills_the_sandbox(sandbox: Sandbox, ws: Workspace) -> None:
    marker = f"autonoma-marker-{uuid.uuid4().hex}"
    call = asyncio.create_task(
        sandbox.run([sandbox.shell, "-c", f"exec -a {marker} sleep 600"], workspace=ws.root)
    )
    for _ in range(200):
        await asyncio.sleep(0.05)
        if processes_with(marker):
            break
    assert processes_with(marker)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert processes_with(marker) == []


async def test_a_call_cancelled_while_the_sandbox_starts_leaves_nothing(
    sandbox: Sandbox, ws: Workspace
) -> None:
    # Ctrl-C can land while bwrap is still setting the sandbox up, before it has said its
    # init's pid: the init and the command must not outlive the call, nor the call hang on
    # a command still reading its input.
    marker = f"autonoma-marker-{uuid.uuid4().hex}"
    program = f"import sys, time\nsys.stdin.read()\ntime.sleep(600)  # {marker}"
    for delay in [i * 0.004 for i in range(40)]:
        call = asyncio.create_task(
            sandbox.run([sandbox.python, "-c", program], workspace=ws.root, stdin="x" * 100)
        )
        await asyncio.sleep(delay)
        call.cancel()
        async with asyncio.timeout(60):  # a hang, not a speed limit
            with pytest.raises(asyncio.CancelledError):
                await call
        assert processes_with(marker) == [], f"left running after a cancel at {delay:.3f} s"


async def test_limits_are_named(ws: Workspace) -> None:
    sandbox = BubblewrapSandbox(limits(cpu_s=1, file_mb=1))
    spin = await sandbox.run([sandbox.python, "-c", "while True: pass"], workspace=ws.root)
    assert spin.exit_code == 128 + 24  # SIGXCPU
    assert spin.stopped == "stopped: used more than 1 CPU second"
    big = await sandbox.run(
        [sandbox.python, "-c", "open('big', 'wb').write(b'x' * 3_000_000)"], workspace=ws.root
    )
    assert big.stopped == "stopped: tried to write a file larger than 1 MB"
    assert (ws.root / "big").stat().st_size == 2**20
    shell_big = await sandbox.run(
        [sandbox.shell, "-c", "head -c 3000000 /dev/zero > big2"], workspace=ws.root
    )
    assert shell_big.stopped == "stopped: tried to write a file larger than 1 MB"


@pytest.mark.alone  # another test's sandbox would share the allowance
async def test_process_allowance_is_exact(ws: Workspace) -> None:
    """`processes` counts the program itself and everything it starts."""
    sandbox = BubblewrapSandbox(limits(processes=6))
    code = (
        "import os, time\n"
        "children = 0\n"
        "for _ in range(20):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except BlockingIOError:\n"
        "        break\n"
        "    if pid == 0:\n"
        "        time.sleep(2)\n"
        "        os._exit(0)\n"
        "    children += 1\n"
        "print(children)\n"
    )
    result = await sandbox.run([sandbox.python, "-"], workspace=ws.root, stdin=code)
    assert result.stdout == "5\n"


# -- refusals and errors ---------------------------------------------------------------------


def test_missing_bubblewrap_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        BubblewrapSandbox(limits(), bwrap=str(tmp_path / "no" / "bwrap"))
    message = str(info.value)
    assert "bubblewrap is not installed" in message
    assert "apt-get install bubblewrap" in message
    assert "unsafe" in message


def test_make_sandbox_picks_the_backend() -> None:
    if Path("/usr/bin/bwrap").exists():
        assert isinstance(make_sandbox(limits()), BubblewrapSandbox)
    unsafe = make_sandbox(limits(backend="unsafe"))
    assert isinstance(unsafe, UnsafeSandbox) and not unsafe.isolated
    with pytest.raises(SandboxUnavailable, match="docker"):
        make_sandbox(limits(backend="docker"))


async def test_a_sandbox_that_cannot_start_says_why(tmp_path: Path, ws: Workspace) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    sandbox = BubblewrapSandbox(limits(), bwrap=str(fake))
    with pytest.raises(SandboxError, match="user namespaces"):
        await sandbox.run(["true"], workspace=ws.root)
    with pytest.raises(SandboxUnavailable, match="No permissions"):
        await sandbox.check(ws.root)


async def test_check_passes_here(sandbox: Sandbox, ws: Workspace) -> None:
    await sandbox.check(ws.root)


async def test_no_sandbox_in_the_context(ws: Workspace) -> None:
    with pytest.raises(SandboxUnavailable, match="not set up"):
        sandbox_of(ToolContext(workspace=ws))
    result = await execute_python.run(ToolContext(workspace=ws), {"code": "print(1)"})
    assert not result.ok
    assert result.output.startswith("error: SandboxUnavailable: code execution is not set up")


# -- the tools -------------------------------------------------------------------------------


def test_tool_specs() -> None:
    assert [t.name for t in CODE_TOOLS] == [
        "execute_python",
        "execute_python_file",
        "execute_shell",
    ]
    assert all(t.risk == "execute" for t in CODE_TOOLS)
    assert execute_python_file.signature() == "execute_python_file(path: string, args: any)"
    assert execute_shell.spec().parameters["required"] == ["command"]


async def test_execute_python_tool(ctx: ToolContext) -> None:
    result = await execute_python.run(
        ctx, {"code": "print('hello')\nimport sys; print('warn', file=sys.stderr)"}
    )
    assert result.ok
    assert result.output == "exit code 0\nstdout:\nhello\nstderr:\nwarn"
    failed = await execute_python.run(ctx, {"code": "raise ValueError('bad')"})
    assert not failed.ok
    assert failed.output.startswith("exit code 1\nstdout: (empty)\nstderr:\nTraceback")
    assert failed.output.endswith("ValueError: bad")
    unimported = await execute_python.run(ctx, {"code": "print(csv.reader)"})
    assert unimported.output.endswith(
        "NameError: name 'csv' is not defined\n"
        "(csv is a standard module: the code must `import csv` first)"
    )
    unknown = await execute_python.run(ctx, {"code": "print(total)"})
    assert unknown.output.endswith("NameError: name 'total' is not defined")


async def test_code_that_fetches_is_told_the_sandbox_has_no_network(
    ctx: ToolContext, ws: Workspace, tmp_path: Path
) -> None:
    # the 1.5B model ran `curl -s URL | grep ...` seven times: exit code 1 and nothing else
    url = "http://127.0.0.1:9/page"
    no_network = "(code runs with no network, so nothing it runs can fetch a URL"
    fetched = await execute_shell.run(ctx, {"command": f"curl -s {url} | grep figure"})
    assert not fetched.ok and fetched.output.endswith(f"{no_network})")
    web = ToolContext(workspace=ws, sandbox=ctx.sandbox, egress=EgressGuard(WebSettings()))
    program = f"import urllib.request\nurllib.request.urlopen('{url}')"
    in_python = await execute_python.run(web, {"code": program})
    assert in_python.output.endswith(f"{no_network}; http_request or browse_website reads one)")
    (ws.root / "fetch.py").write_text(program)
    from_a_file = await execute_python_file.run(ctx, {"path": "fetch.py"})
    assert from_a_file.output.endswith(f"{no_network})")
    piped = await execute_shell.run(ctx, {"command": f"curl -s {url} | awk '{{print $2}}'"})
    assert piped.ok and piped.output.endswith(f"{no_network})")  # exit code 0, and no page
    # a failure that has nothing to do with fetching, or a fetch with a network, is not told
    failed = await execute_shell.run(ctx, {"command": "grep figure missing.txt"})
    assert no_network not in failed.output
    local = UnsafeSandbox(limits())  # the host's own network: a failure there is real
    unsafe = await execute_shell.run(
        ToolContext(workspace=ws, sandbox=local), {"command": f"curl -s {url}"}
    )
    assert not unsafe.ok and no_network not in unsafe.output


async def test_execute_python_file_tool(ctx: ToolContext, ws: Workspace) -> None:
    (ws.root / "tools").mkdir()
    (ws.root / "tools" / "greet.py").write_text(
        "import sys\nprint('hi', *sys.argv[1:])\nprint(__file__)\nopen('greeted', 'w').write('yes')\n",
        encoding="utf-8",
    )
    result = await execute_python_file.run(ctx, {"path": "tools/greet.py", "args": ["ann", "bo"]})
    assert (
        result.output
        == "exit code 0\nstdout:\nhi ann bo\n/workspace/tools/greet.py\nstderr: (empty)"
    )
    assert (ws.root / "greeted").read_text() == "yes"
    missing = await execute_python_file.run(ctx, {"path": "nope.py"})
    assert not missing.ok and "nope.py is not a file in the workspace" in missing.output


async def test_execute_shell_tool(ctx: ToolContext, ws: Workspace) -> None:
    result = await execute_shell.run(ctx, {"command": "echo a > f.txt; cat f.txt; ls"})
    assert result.output == "exit code 0\nstdout:\na\nf.txt\nstderr: (empty)"
    failed = await execute_shell.run(ctx, {"command": "false"})
    assert failed == type(failed)(False, "exit code 1\nstdout: (empty)\nstderr: (empty)")


async def test_tool_output_names_the_limit(ws: Workspace) -> None:
    sandbox = BubblewrapSandbox(limits(wall_s=1, output_chars=100))
    ctx = ToolContext(workspace=ws, sandbox=sandbox)
    result = await execute_shell.run(ctx, {"command": "seq 1 100000; sleep 600"})
    assert not result.ok
    lines = result.output.splitlines()
    assert lines[:3] == [
        "exit code 137",
        "stopped: ran longer than 1 second (wall clock)",
        "stdout (588,895 bytes, the middle cut):",
    ]
    assert lines[3] == "1" and lines[-2] == "100000" and lines[-1] == "stderr: (empty)"


# -- the unsafe backend ----------------------------------------------------------------------


async def test_unsafe_backend_runs_in_the_workspace(ws: Workspace) -> None:
    sandbox = UnsafeSandbox(limits(wall_s=1))
    result = await sandbox.run(
        [
            sandbox.python,
            "-c",
            "import os; open('made', 'w').write(os.getcwd()); print(os.environ['HOME'])",
        ],
        workspace=ws.root,
    )
    assert result.exit_code == 0, result.stderr
    assert (ws.root / "made").read_text() == str(ws.root)
    assert result.stdout == f"{ws.root}\n"
    marker = f"autonoma-marker-{uuid.uuid4().hex}"
    slow = await sandbox.run(
        [sandbox.shell, "-c", f"(exec -a {marker} sleep 600) & exec -a {marker} sleep 600"],
        workspace=ws.root,
    )
    assert slow.timed_out and processes_with(marker) == []
    spin = await UnsafeSandbox(limits(cpu_s=1)).run(
        [sandbox.python, "-c", "while True: pass"], workspace=ws.root
    )
    assert spin.stopped == "stopped: used more than 1 CPU second"
