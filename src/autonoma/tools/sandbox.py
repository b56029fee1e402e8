"""Where model-written code runs: bubblewrap namespaces with rlimits, or (on the person's
explicit say-so) a plain child process with rlimits only.

The bubblewrap sandbox sees a read-only system (/usr and the /bin, /lib links, a handful of
/etc files, the interpreter's installation), a fresh /proc in its own PID namespace, a
minimal /dev, small memory-backed /tmp and /dev/shm, and the run's workspace at /workspace,
the one place it can write to disk (unless it is bound read-only). It has no network (a new
network namespace holds only its own loopback), a cleared environment, a new session (no
TIOCSTI into the terminal), and it dies with autonoma. Limits are set with util-linux
`prlimit` on the first process inside: RLIMIT_CPU (soft: SIGXCPU, a second later: SIGKILL),
RLIMIT_AS (memory), RLIMIT_FSIZE, RLIMIT_NPROC and no core files; the wall clock is kept here
and kills the whole sandbox.

Never root. The kernel does not enforce RLIMIT_NPROC for processes whose real uid outside is
0, so a sandbox running as root (even as uid 1000 inside a user namespace that maps to root)
cannot be stopped from fork-bombing by an rlimit. So:

- autonoma running as root: bubblewrap runs as root (it needs to read the workspace and
  the interpreter wherever they are) without a user namespace, and the first process inside
  switches to a dedicated unprivileged uid (`SANDBOX_UID`, owned by no one on the host)
  with util-linux `setpriv`, dropping every capability and setting no_new_privs. The
  workspace is lent to that uid (`chown`, walked with directory fds so a symlink cannot
  redirect it) while commands run in it, and given back when the last one ends: each entry
  to whose it was, what the sandbox made to the workspace's owner.
  RLIMIT_NPROC counts every process of that uid, so sandboxes running at the same time
  share the `processes` allowance.
- autonoma running as an ordinary user: bubblewrap runs as that user with a new user
  namespace (uid 1000 inside, the user outside) and no further user namespaces allowed
  inside. Files written in the workspace belong to the user. Since Linux 5.14 RLIMIT_NPROC
  is counted per user namespace, so the allowance counts only the sandbox's own processes,
  not the user's other programs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import stat
import sys
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autonoma.errors import AutonomaError
from autonoma.tools.base import ToolContext
from autonoma.tools.sandbox_loans import LOANS
from autonoma.tools.settings import SandboxSettings
from autonoma.tools.workspace import own_state

SANDBOX_UID = 65533  # Debian reserves 65000-65533; outside systemd's dynamic range and subuids
INSIDE_UID = 1000  # the user namespace's uid when autonoma is not root
WORKDIR = "/workspace"  # where the workspace appears inside the bubblewrap sandbox
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# /etc entries an interpreter or a shell tool may want; nothing that holds a secret.
ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "mime.types",
    "os-release",
    "debian_version",
    "fonts",
    "python3",
    f"python3.{sys.version_info.minor}",
)
DRAIN_AFTER_KILL_S = 5.0  # how long to wait for the pipes to close once the sandbox is killed


class SandboxError(AutonomaError):
    """The sandbox itself failed to start a command (not the command failing)."""


class SandboxUnavailable(SandboxError):
    """The chosen sandbox cannot run on this host; the message says how to fix that."""


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed command did. `exit_code` is the command's status: 128+N when signal N
    ended it. `stopped` is a plain sentence when a limit stopped it, else None."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: int = 0  # how much it printed in all, of which `stdout` shows a part when cut
    stderr_bytes: int = 0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class _Capture:
    """One output stream read as it comes: the first and last parts are kept, the middle of
    a long output is counted and dropped, so a program printing gigabytes costs no memory."""

    def __init__(self, chars: int) -> None:
        self.head_chars = chars * 2 // 3
        self.tail_chars = chars - self.head_chars
        # UTF-8 needs at most 4 bytes a character; the text is cut to characters at the end
        self.head_limit = 4 * self.head_chars
        self.tail_limit = 4 * self.tail_chars
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> tuple[str, bool]:
        """The text to show, and whether some of it was cut out."""
        if not self.tail:
            whole = self.head.decode("utf-8", errors="replace")
            if len(whole) <= self.head_chars + self.tail_chars:
                return whole, False
            head, tail = whole[: self.head_chars], whole[-self.tail_chars :]
        else:
            head = self.head.decode("utf-8", errors="replace")[: self.head_chars]
            tail = self.tail[-self.tail_limit :].decode("utf-8", errors="replace")
            tail = tail[-self.tail_chars :] if self.tail_chars else ""
        shown = len(head.encode()) + len(tail.encode())
        cut = max(self.total - shown, 0)
        return f"{head}\n[... {cut:,} bytes cut ...]\n{tail}", True


@dataclass
class _Launch:
    """A command made ready for one backend: the full argv, the fds and env for it."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None = None
    pass_fds: list[int] = field(default_factory=list)  # the child's alone: closed here once started
    info_fd: int | None = None  # where bwrap says its init's pid (--info-fd); read and closed here

    def close(self) -> None:
        _close(self.pass_fds)
        self.pass_fds = []


class Sandbox(ABC):
    """Runs a command with the run's workspace as its working directory, under limits."""

    #: a short name for logs and the run record ("bwrap", "unsafe")
    name: str = ""
    #: False when the command is not isolated from the host (the unsafe backend)
    isolated: bool = True

    def __init__(self, settings: SandboxSettings, *, prlimit: str | None = None) -> None:
        self.settings = settings
        found = prlimit or shutil.which("prlimit", path=SYSTEM_PATH)
        if found is None:
            raise SandboxUnavailable(
                "util-linux's prlimit was not found, so the sandbox cannot set its limits; "
                "install util-linux (apt-get install util-linux)"
            )
        self.prlimit = found
        self.python = _interpreter(settings.python)
        self.shell = next(
            (
                s
                for s in ("/usr/bin/bash", "/bin/bash", "/usr/bin/sh", "/bin/sh")
                if Path(s).exists()
            ),
            "/bin/sh",
        )

    def path_inside(self, workspace: Path, target: Path) -> str:
        """How the sandboxed command names `target`, a path inside the workspace."""
        return target.relative_to(workspace).as_posix()

    async def run(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        stdin: str | None = None,
        writable: bool = True,
        pass_fds: Sequence[int] = (),
        env: Mapping[str, str] | None = None,
        binds: Sequence[tuple[Path, str]] = (),
    ) -> SandboxResult:
        """Run `argv` in the sandbox with `workspace` as its working directory and `stdin` as
        its input (none when None). Never raises for what the command does; raises
        SandboxError when the sandbox could not start it.

        `writable=False` binds the workspace read-only, so that every change has to go
        through the host (the unsafe backend cannot enforce it). `pass_fds` reach the command
        under the same numbers and become its alone: they are closed here once it has started,
        or when it could not be, so the host sees end-of-file when the command is gone. `env`
        adds variables to the sandbox's cleared environment (or replaces some of them).
        `binds`: host directories shown read-only at the given absolute paths inside (the
        unsafe backend sees the host's paths; the caller tells the command where)."""
        fds = list(pass_fds)
        try:
            if not argv:
                raise SandboxError("nothing to run: the command is empty")
            extra = _checked_env(env or {})
            workspace = workspace.resolve()
            if not workspace.is_dir():
                raise SandboxError(f"the workspace {workspace} is not a directory")
            for _, inside in binds:
                if not inside.startswith("/") or inside.rstrip("/") in ("", WORKDIR):
                    raise SandboxError(f"cannot bind a directory at {inside!r} in the sandbox")
        except BaseException:
            _close(fds)
            raise
        async with self._lent(workspace):
            try:
                launch = await self._prepare(
                    list(argv), workspace, writable=writable, env=extra, binds=list(binds)
                )
            except BaseException:
                _close(fds)
                raise
            launch.pass_fds += fds
            result = await _execute(launch, stdin, self.settings)
        self._check_started(result)
        return result

    @contextlib.asynccontextmanager
    async def _lent(self, workspace: Path) -> AsyncIterator[None]:
        """While a command runs: the workspace made writable to it, where the backend must
        (BubblewrapSandbox as root), and given back after."""
        yield

    async def check(self, workspace: Path) -> None:
        """Run `true` once; SandboxUnavailable saying why when this host cannot sandbox."""
        try:
            result = await self.run(["true"], workspace=workspace)
        except SandboxError as err:
            raise SandboxUnavailable(str(err)) from err
        if result.exit_code != 0:
            raise SandboxUnavailable(
                f"the {self.name} sandbox cannot run commands here: {result.stderr.strip()}"
            )

    @abstractmethod
    async def _prepare(
        self,
        argv: list[str],
        workspace: Path,
        *,
        writable: bool,
        env: dict[str, str],
        binds: Sequence[tuple[Path, str]] = (),
    ) -> _Launch:
        """The launch for argv."""

    def _check_started(self, result: SandboxResult) -> None:  # noqa: B027 (optional hook)
        """Raise SandboxError when the backend itself failed before the command ran."""

    def _limits(self, nproc: int | None) -> list[str]:
        s = self.settings
        argv = [
            self.prlimit,
            f"--cpu={s.cpu_s}:{s.cpu_s + 1}",
            f"--as={s.memory_mb * 2**20}",
            f"--fsize={s.file_mb * 2**20}",
            "--core=0",
        ]
        if nproc is not None:
            argv.append(f"--nproc={nproc}")
        return [*argv, "--"]

    def _env(self, home: str) -> dict[str, str]:
        return {
            "PATH": SYSTEM_PATH,
            "HOME": home,
            "USER": "sandbox",
            "LOGNAME": "sandbox",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "XDG_CACHE_HOME": "/tmp/.cache",  # caches stay out of the workspace
            "PYTHONUNBUFFERED": "1",  # output printed before a kill is not lost
            "PYTHONDONTWRITEBYTECODE": "1",
            "MALLOC_ARENA_MAX": "2",  # glibc's per-thread arenas eat address space (RLIMIT_AS)
        }


class BubblewrapSandbox(Sandbox):
    """Namespaces and rlimits with bubblewrap; see the module's docstring."""

    name = "bwrap"

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        bwrap: str = "/usr/bin/bwrap",
        uid: int = SANDBOX_UID,
        prlimit: str | None = None,
        setpriv: str | None = None,
    ) -> None:
        if not (Path(bwrap).is_file() and os.access(bwrap, os.X_OK)):
            raise SandboxUnavailable(
                f"bubblewrap is not installed ({bwrap} does not exist), so code cannot run in "
                "a sandbox. Install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: "
                "dnf install bubblewrap), or choose the unsafe backend to run code unconfined "
                "on this machine, knowing that it can then read and change whatever you can."
            )
        super().__init__(settings, prlimit=prlimit)
        self.bwrap = bwrap
        self.as_root = os.geteuid() == 0
        self.uid = uid if self.as_root else INSIDE_UID
        self.setpriv = setpriv or shutil.which("setpriv", path=SYSTEM_PATH)
        if self.as_root and self.setpriv is None:
            raise SandboxUnavailable(
                "util-linux's setpriv was not found, so the sandbox cannot leave root; "
                "install util-linux (apt-get install util-linux)"
            )
        # a setuid bwrap (old distributions) refuses --size; the tmpfs are then unsized
        self.sized_tmpfs = not os.stat(bwrap).st_mode & stat.S_ISUID

    def path_inside(self, workspace: Path, target: Path) -> str:
        relative = target.relative_to(workspace).as_posix()
        return WORKDIR if relative == "." else f"{WORKDIR}/{relative}"

    async def _prepare(
        self,
        argv: list[str],
        workspace: Path,
        *,
        writable: bool,
        env: dict[str, str],
        binds: Sequence[tuple[Path, str]] = (),
    ) -> _Launch:
        passwd = f"sandbox:x:{self.uid}:{self.uid}:sandbox:{WORKDIR}:/bin/sh\n"
        group = f"sandbox:x:{self.uid}:\n"
        hosts = "127.0.0.1 localhost sandbox\n::1 localhost\n"
        launch = _Launch(argv=[], env={"PATH": SYSTEM_PATH})
        try:
            files = []
            for path, text in (
                ("/etc/passwd", passwd),
                ("/etc/group", group),
                ("/etc/hosts", hosts),
            ):
                fd = _data_fd(text)
                launch.pass_fds.append(fd)
                files += ["--perms", "0644", "--ro-bind-data", str(fd), path]
            launch.info_fd, info_write = os.pipe()
            launch.pass_fds.append(info_write)
        except BaseException:
            launch.close()
            raise
        tmp_size = str(self.settings.memory_mb * 2**20)
        sized = ["--size", tmp_size] if self.sized_tmpfs else []
        bw = [self.bwrap, "--info-fd", str(info_write)]
        bw += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        bw += ["--unshare-cgroup-try", "--hostname", "sandbox"]
        if not self.as_root:
            bw += ["--unshare-user", "--disable-userns", "--uid", str(self.uid)]
            bw += ["--gid", str(self.uid)]
        bw += ["--die-with-parent", "--new-session", "--clearenv"]
        bw += _system_binds()
        bw += ["--perms", "0755", "--dir", "/etc"]
        bw += [
            arg for name in ETC_ENTRIES for arg in ("--ro-bind-try", f"/etc/{name}", f"/etc/{name}")
        ]
        bw += files
        bw += _interpreter_binds(self.python)
        bw += ["--proc", "/proc", "--dev", "/dev"]
        bw += [*sized, "--perms", "1777", "--tmpfs", "/dev/shm"]
        bw += [*sized, "--perms", "1777", "--tmpfs", "/tmp"]
        bw += ["--bind" if writable else "--ro-bind", str(workspace), WORKDIR]
        for inside in _own_state_inside(workspace):
            bw += ["--perms", "0000", "--tmpfs", f"{WORKDIR}/{inside}"]  # autonoma's state hidden
        for host, inside in binds:
            bw += ["--ro-bind", str(host), inside]
        bw += ["--chdir", WORKDIR, "--remount-ro", "/"]
        for name, value in (self._env(WORKDIR) | env).items():
            bw += ["--setenv", name, value]
        if self.as_root:
            # bwrap keeps only these two capabilities for setpriv, which gives them up
            bw += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
            inner = [*self._limits(self.settings.processes), *self._leave_root(), *argv]
        else:
            # bwrap's own init (pid 1) is one of the user's processes in the namespace
            inner = [*self._limits(self.settings.processes + 1), *argv]
        launch.argv = [*bw, "--", *inner]
        return launch

    @contextlib.asynccontextmanager
    async def _lent(self, workspace: Path) -> AsyncIterator[None]:
        if not self.as_root:
            yield
            return
        await asyncio.to_thread(LOANS.lend, workspace, self.uid)
        try:
            yield
        finally:
            await asyncio.shield(asyncio.to_thread(LOANS.give_back, workspace, self.uid))

    def _leave_root(self) -> list[str]:
        assert self.setpriv is not None
        return [
            self.setpriv,
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--no-new-privs",
            "--",
        ]

    def _check_started(self, result: SandboxResult) -> None:
        # bwrap reports its own failures (a bind it could not make, no user namespaces,
        # a command it could not execute) as status 1 with "bwrap: ..." on stderr
        if result.exit_code == 1 and result.stderr.startswith("bwrap: "):
            raise SandboxError(
                f"the sandbox could not start the command: {result.stderr.strip()}"
                + _userns_hint(result.stderr)
            )


class UnsafeSandbox(Sandbox):
    """A plain child process in the workspace with a cleared environment and rlimits, and
    nothing else: it can read and write whatever autonoma can, and reach the network. Only
    for hosts without bubblewrap, on the person's explicit choice. When autonoma is root
    the process limit does not hold (the kernel exempts root from RLIMIT_NPROC), and a
    read-only workspace (`writable=False`) is not enforced."""

    name = "unsafe"
    isolated = False

    async def _prepare(
        self,
        argv: list[str],
        workspace: Path,
        *,
        writable: bool,
        env: dict[str, str],
        binds: Sequence[tuple[Path, str]] = (),
    ) -> _Launch:
        nproc = None
        if os.geteuid() != 0:
            # without a user namespace RLIMIT_NPROC counts every process of the user
            nproc = await asyncio.to_thread(_count_processes, os.getuid())
            nproc += self.settings.processes
        return _Launch(
            argv=[*self._limits(nproc), *argv],
            env=self._env(str(workspace)) | env,
            cwd=str(workspace),
        )


def make_sandbox(settings: SandboxSettings) -> Sandbox:
    """The sandbox the settings ask for; SandboxUnavailable when it cannot run here."""
    if settings.backend == "bwrap":
        return BubblewrapSandbox(settings)
    if settings.backend == "unsafe":
        return UnsafeSandbox(settings)
    raise SandboxUnavailable(
        "the docker sandbox backend is not available in this version; use bwrap "
        "(apt-get install bubblewrap)"
    )


def sandbox_of(context: ToolContext) -> Sandbox:
    """The run's sandbox."""
    sandbox = context.sandbox
    if sandbox is None:
        raise SandboxUnavailable(
            "code execution is not set up for this run (no sandbox in the tool context); "
            "the run must be started with a sandbox (bubblewrap, or the explicit unsafe option)"
        )
    return sandbox


# -- running ---------------------------------------------------------------------------------


async def _execute(launch: _Launch, stdin: str | None, settings: SandboxSettings) -> SandboxResult:
    info = _InitPid(launch.info_fd) if launch.info_fd is not None else None
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=launch.env,
            cwd=launch.cwd,
            pass_fds=launch.pass_fds,
            start_new_session=True,  # one group to kill; the terminal's Ctrl-C is ours alone
        )
    )
    # A cancel during the start waits for it, then kills the sandbox below: asyncio's own
    # undoing of a cancelled start kills bwrap alone, which leaves the sandbox's init and
    # command running, and then waits for ever for pipes the command holds.
    cancelled = False
    try:
        while True:
            try:
                proc = await asyncio.shield(starting)
                break
            except asyncio.CancelledError:
                if starting.cancelled():
                    raise
                cancelled = True  # the start goes on (shielded); it is undone below
    except OSError as err:
        if info:
            info.task.cancel()
        raise SandboxError(f"could not start {launch.argv[0]}: {err}") from err
    finally:
        launch.close()
    assert proc.stdout is not None and proc.stderr is not None
    out, errs = _Capture(settings.output_chars), _Capture(settings.output_chars)
    readers = {
        asyncio.create_task(_read(proc.stdout, out)),
        asyncio.create_task(_read(proc.stderr, errs)),
    }
    feeder = asyncio.create_task(_feed(proc.stdin, stdin))
    waiter = asyncio.create_task(proc.wait())
    timed_out = False
    try:
        if cancelled:
            raise asyncio.CancelledError
        try:
            async with asyncio.timeout(settings.wall_s):
                await asyncio.wait({waiter})  # asyncio.wait cancels nothing when it times out
        except TimeoutError:
            timed_out = True
            await _stop(proc, info)
        # the sandbox is gone and its pipes close; read what is left in them, not for ever
        # (an unsafe command's background child may hold them open)
        await asyncio.wait(readers, timeout=DRAIN_AFTER_KILL_S)
    finally:
        # cancelled (the tool's own timeout, Ctrl-C) or done: nothing may outlive the call
        if proc.returncode is None:
            await asyncio.shield(_stop(proc, info))
        for task in (*readers, feeder, *([info.task] if info else [])):
            task.cancel()
        if proc.stdin is not None:
            proc.stdin.close()  # a reader left alive sees the end of its input, not a hang
        # Python 3.11's wait() also waits for the pipes to close, which a process outside
        # the sandbox's kill could hold for ever; the exit status alone is enough here
        await asyncio.wait({waiter}, timeout=DRAIN_AFTER_KILL_S)
        while proc.returncode is None:
            await asyncio.sleep(0.02)
    code = proc.returncode
    assert code is not None
    exit_code = 128 - code if code < 0 else code  # a signal: as a shell reports it
    stdout, stdout_cut = out.text()
    stderr, stderr_cut = errs.text()
    return SandboxResult(
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        stdout_bytes=out.total,
        stderr_bytes=errs.total,
        stdout_truncated=stdout_cut,
        stderr_truncated=stderr_cut,
        timed_out=timed_out,
        stopped=_stopped(exit_code, stderr, timed_out, settings),
    )


async def _read(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(65536):
        capture.add(chunk)


async def _feed(pipe: asyncio.StreamWriter | None, text: str | None) -> None:
    if pipe is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if text:
            pipe.write(text.encode("utf-8"))
            await pipe.drain()
        pipe.close()
        await pipe.wait_closed()


class _InitPid:
    """The host pid of the sandbox's init, from what bwrap writes to --info-fd. The pipe is
    read to its end (bwrap would die of SIGPIPE if it were closed early)."""

    def __init__(self, fd: int) -> None:
        self.pid: int | None = None
        self.said = asyncio.Event()  # set once the pid is known or bwrap can no longer say it
        self.task = asyncio.create_task(self._read(fd))

    async def _read(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
        )
        try:
            seen = b""
            while chunk := await reader.read(4096):
                seen += chunk
                found = re.search(rb'"child-pid"\s*:\s*(\d+)', seen)
                if found and self.pid is None:
                    self.pid = int(found.group(1))
                    self.said.set()
        finally:
            transport.close()
            self.said.set()


async def _stop(proc: asyncio.subprocess.Process, info: _InitPid | None) -> None:
    """Kill the sandbox and everything in it. With bubblewrap: its init, the PID namespace's
    pid 1, whose death makes the kernel kill and reap every process in the namespace before
    bwrap can see it gone, so when bwrap ends nothing is left. Otherwise (bwrap had not said
    its init's pid yet, the unsafe backend) bwrap or the command and its process group."""
    if info is not None and proc.returncode is None:
        # bwrap may have made the sandbox's init without having said so yet: bwrap killed
        # alone would leave the init and the command running (its --die-with-parent does
        # not reach them then), so wait for the pid it writes right after
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(info.said.wait(), DRAIN_AFTER_KILL_S)
    pid = info.pid if info else None
    if pid and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_AFTER_KILL_S):
                await proc.wait()
                return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _stopped(exit_code: int, stderr: str, timed_out: bool, settings: SandboxSettings) -> str | None:
    """A plain sentence when a limit stopped the command."""
    forks = "Resource temporarily unavailable" in stderr and (
        "fork" in stderr or "BlockingIOError" in stderr
    )
    also = f"; it had also hit the limit of {settings.processes} processes" if forks else ""
    if timed_out:
        wall = f"{settings.wall_s:g} second{'' if settings.wall_s == 1 else 's'}"
        return f"stopped: ran longer than {wall} (wall clock){also}"
    if exit_code == 0:
        return None
    if exit_code in (128 + signal.SIGXCPU, 128 + signal.SIGKILL) and (
        exit_code == 128 + signal.SIGXCPU or "CPU time limit" in stderr
    ):
        cpu = f"{settings.cpu_s} CPU second{'' if settings.cpu_s == 1 else 's'}"
        return f"stopped: used more than {cpu}"
    if exit_code == 128 + signal.SIGXFSZ or "File too large" in stderr:
        return f"stopped: tried to write a file larger than {settings.file_mb} MB"
    if any(sign in stderr for sign in ("MemoryError", "Cannot allocate memory", "bad_alloc")):
        return f"stopped: tried to use more than {settings.memory_mb} MB of memory"
    if forks:
        return f"stopped: tried to run more than {settings.processes} processes at once"
    return None


# -- helpers ---------------------------------------------------------------------------------


def _interpreter(setting: str | None) -> str:
    """The real path of the Python the sandbox runs: the setting (a path or a command name),
    else the system's python3, else the interpreter autonoma runs on (without its venv)."""
    if setting:
        found = shutil.which(setting) if "/" not in setting else setting
        if not found or not Path(found).is_file():
            raise SandboxUnavailable(
                f"the sandbox's python {setting!r} was not found; give the path of an "
                "interpreter (settings: sandbox.python)"
            )
        return os.path.realpath(found)
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).is_file():
            return os.path.realpath(candidate)
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _system_binds() -> list[str]:
    """/usr read-only, and /bin, /sbin, /lib* as the links (merged /usr) or directories they
    are on the host."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", f"/{name}", f"/{name}"]
    return args


def _interpreter_binds(python: str) -> list[str]:
    """An interpreter outside /usr (pyenv, /opt) has its installation bound read-only at the
    same path, its parent directories created traversable."""
    binary = Path(python)
    prefix = binary.parent.parent if binary.parent.name == "bin" else binary.parent
    if prefix == Path("/") or prefix.is_relative_to("/usr"):
        return []
    args: list[str] = []
    for parent in reversed(prefix.parents[:-1]):
        args += ["--perms", "0755", "--dir", str(parent)]
    return [*args, "--ro-bind", str(prefix), str(prefix)]


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise SandboxError(
                f"cannot set the environment variable {name!r} in the sandbox: a name is "
                "letters, digits and underscores, not starting with a digit"
            )
        if "\0" in value:
            raise SandboxError(f"the environment variable {name} holds a NUL character")
    return dict(env)


def _data_fd(text: str) -> int:
    """A pipe's read end holding `text`, for bwrap's --ro-bind-data."""
    read, write = os.pipe()
    try:
        os.write(write, text.encode("utf-8"))  # far below the pipe's buffer
    finally:
        os.close(write)
    return read


def _own_state_inside(workspace: Path) -> list[str]:
    """autonoma's own state below the workspace (a workspace may contain its home), relative."""
    inside = []
    for place in own_state():
        with contextlib.suppress(OSError):
            real = place.resolve(strict=True)
            if real != workspace and real.is_relative_to(workspace):
                inside.append(real.relative_to(workspace).as_posix())
    return inside


def _count_processes(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    count += 1
    return count


def _userns_hint(message: str) -> str:
    if any(
        s in message for s in ("No permissions to create", "setting up uid map", "Operation not")
    ):
        return (
            ". This host does not let unprivileged users create user namespaces: allow them "
            "(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
            "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)"
        )
    return ""


__all__ = [
    "SANDBOX_UID",
    "BubblewrapSandbox",
    "Sandbox",
    "SandboxError",
    "SandboxResult",
    "SandboxUnavailable",
    "UnsafeSandbox",
    "make_sandbox",
    "sandbox_of",
]
