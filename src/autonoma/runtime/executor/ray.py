"""The Ray executor: the schedule stays here, on the driver; what an attempt places on the
cluster runs there as a Ray task.

`RayExecutor` is the local executor's loop (priority, concurrency, retries, failure spreading
to dependents, interruption, cancelling) with a cluster behind it, so a job moves through the
schedule exactly as it does locally. Work keeps the `Work` signature: a coroutine on the
driver, because what gives a job its meaning (the run store, the budget, the schedule) stays
authoritative here. It places its heavy part on the cluster with `call`: a picklable function
that runs as one Ray task and reports back through a `Channel`. Each message it sends is
handled on the driver by the call's `on_message`, and the sender goes on only once the reply
is back, so what a worker reports is applied here before it takes its next step.

`remote(fn)` makes whole-job work of a plain function (each attempt one Ray task), for jobs
that need nothing from the driver but their inputs.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from autonoma.errors import AutonomaError, ConfigError
from autonoma.runtime.executor.base import Job, OnChange, Schedule, Work
from autonoma.runtime.executor.local import LocalExecutor

log = logging.getLogger(__name__)

OnMessage = Callable[[Any], Awaitable[Any]]
"""Handles one message from a running call on the driver; what it returns is the reply."""


class RayUnavailable(ConfigError):
    """No Ray cluster at the address given, or Ray could not be started here."""


class RemoteLost(AutonomaError):
    """A Ray task ended without a result of its own: its worker or its node was lost, or it
    was cancelled by someone else."""


class ChannelError(AutonomaError):
    """The driver could not handle a message (raised on the worker that sent it)."""


# -- the address --------------------------------------------------------------------------

_HINT = (
    "Start a cluster with `ray start --head` and pass the address it prints "
    "(--ray-address HOST:PORT), or leave --ray-address out to start Ray on this machine"
)


def resolve_address(address: str | None) -> str | None:
    """The cluster to join: `address`, else $RAY_ADDRESS; None means start Ray here. "auto"
    is the cluster last started on this machine with `ray start`."""
    chosen = (address or os.environ.get("RAY_ADDRESS") or "").strip()
    if chosen in ("", "local"):
        return None
    if chosen != "auto":
        return chosen
    try:
        from ray._private.services import canonicalize_bootstrap_address

        found = canonicalize_bootstrap_address("auto")
    except Exception as error:
        raise RayUnavailable(
            f"--ray-address auto found no Ray cluster on this machine ({error}). {_HINT}"
        ) from error
    if not found:
        raise RayUnavailable(f"--ray-address auto found no Ray cluster on this machine. {_HINT}")
    return str(found)


def host_port(address: str) -> tuple[str, int]:
    """HOST:PORT (or ray://HOST:PORT for Ray Client; [v6]:PORT) as a host and a port."""
    text = address.strip().removeprefix("ray://")
    host, colon, port = text.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayUnavailable(
            f"the Ray address {address!r} is not HOST:PORT: give the head node's address, "
            "for example 10.0.0.5:6379 (or ray://10.0.0.5:10001 for Ray Client)"
        )
    return host, int(port)


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A clear error within `timeout_s` if nothing listens at `address`. Ray itself retries
    an unreachable address for minutes before it gives up."""
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as error:
        why = error.strerror or str(error) or type(error).__name__
        raise RayUnavailable(f"cannot reach a Ray cluster at {address}: {why}. {_HINT}") from error


# -- the channel ----------------------------------------------------------------------------


class _Mailbox:
    """An async Ray actor between running calls and the driver. A message stays here until
    the driver replies, so a driver that stops listening midway loses none: the next one
    takes whatever has no reply yet."""

    def __init__(self) -> None:
        self._seq = 0
        self._pending: dict[int, tuple[str, Any, asyncio.Future[tuple[bool, Any]]]] = {}
        self._closed: set[str] = set()
        self._arrived = asyncio.Event()

    async def post(self, key: str, message: Any) -> tuple[bool, Any]:
        if key in self._closed:
            return False, "the driver no longer listens to this call (it ended or was cancelled)"
        self._seq += 1
        seq = self._seq
        answer: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        self._pending[seq] = (key, message, answer)
        self._arrived.set()
        self._arrived = asyncio.Event()
        try:
            return await answer
        finally:
            self._pending.pop(seq, None)

    async def take(self, after: int, wait_s: float) -> list[tuple[int, str, Any]]:
        """Messages after `after` that have no reply yet, waiting up to `wait_s` for one."""
        if not any(seq > after for seq in self._pending):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), wait_s)
        return [(seq, key, msg) for seq, (key, msg, _) in self._pending.items() if seq > after]

    def reply(self, seq: int, ok: bool, value: Any) -> None:
        pending = self._pending.get(seq)
        if pending is not None and not pending[2].done():
            pending[2].set_result((ok, value))

    def close(self, key: str) -> None:
        """Refuse further messages of a call, and answer those still waiting with an error."""
        self._closed.add(key)
        for seq, (owner, _, answer) in list(self._pending.items()):
            if owner == key and not answer.done():
                answer.set_result((False, "the call ended before the driver handled this"))
                self._pending.pop(seq, None)


@dataclass(frozen=True)
class Channel:
    """A running call's line to the driver (picklable; handed to the call's function)."""

    mailbox: Any  # the executor's _Mailbox actor
    key: str

    def send(self, message: Any) -> Any:
        """Hand `message` to the driver and return its reply once it has been handled there.
        Blocks: from async code use `await asyncio.to_thread(channel.send, message)`."""
        ok, value = ray.get(self.mailbox.post.remote(self.key, message))
        if not ok:
            raise ChannelError(f"the driver could not handle {_label(message)}: {value}")
        return value


def _label(message: Any) -> str:
    if isinstance(message, tuple) and message and isinstance(message[0], str):
        return " ".join(str(part) for part in message[:2] if isinstance(part, str))
    return type(message).__name__


def _attempt(fn: Callable[..., Any], channel: Channel, args: tuple[Any, ...]) -> Any:
    """What runs on a worker: `fn(channel, *args)`, a coroutine run to its end. `ray.cancel`
    interrupts it, and asyncio.run turns the interrupt into a CancelledError inside it, so
    its cleanup (a run marked stopped) still reports to the driver."""
    result = fn(channel, *args)
    if inspect.iscoroutine(result):
        return asyncio.run(_awake(result))
    return result


async def _awake(work: Coroutine[Any, Any, Any]) -> Any:
    """Runs `work` with the event loop waking every 0.2 s. Ray's interrupt is no real signal,
    so a loop asleep in select (a long model call) would see it only when woken."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.2)

    ticker = asyncio.create_task(tick())
    try:
        return await work
    finally:
        ticker.cancel()


def _without_channel(_: Channel, fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


_remote_attempt: Any = ray.remote(max_retries=0)(_attempt)
_mailbox_actor: Any = ray.remote(num_cpus=0)(_Mailbox)


class _RayHost:
    """The thread that starts (or joins) Ray and later shuts it down. Ray's processes are
    started with a parent-death signal, which Linux sends when the *thread* that started
    them ends, so that thread lives as long as the connection does. A daemon thread: it does
    not hold the process at exit, and a ray.init that never returns (something listens at
    the address but is no Ray head) is left behind when we give up on it."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._host, args=(options,), daemon=True)
        self._thread.name = "ray-host"
        self._thread.start()

    def _host(self, options: dict[str, Any]) -> None:
        try:
            ray.init(**options)
        except BaseException as error:
            self.failure = error
            self.ready.set()
            return
        self.ready.set()
        self._release.wait()
        ray.shutdown()

    def abandon(self) -> None:
        self._release.set()  # should ray.init ever return, it shuts Ray down again

    def stop(self) -> None:
        self._release.set()
        self._thread.join()


# -- the executor ---------------------------------------------------------------------------


class RayExecutor(LocalExecutor):
    """Schedules like LocalExecutor; `call` runs functions as Ray tasks on the cluster.

    `address` is a cluster to join (HOST:PORT, ray://HOST:PORT, or "auto"); without one,
    $RAY_ADDRESS, else a Ray instance is started on this machine (`num_cpus` CPUs, default all)
    and stopped by `close`. If this process is already connected to Ray, that connection is
    used as it is. Each call asks the cluster for `task_cpus` CPUs."""

    def __init__(
        self,
        address: str | None = None,
        concurrency: int = 4,
        *,
        num_cpus: int | None = None,
        task_cpus: float = 1.0,
        connect_timeout_s: float = 5.0,
        join_timeout_s: float = 30.0,
        start_timeout_s: float = 120.0,
        cancel_grace_s: float = 10.0,
        poll_s: float = 0.5,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(concurrency)
        self.address = address
        self.num_cpus = num_cpus
        self.task_cpus = task_cpus
        self.connect_timeout_s = connect_timeout_s
        self.join_timeout_s = join_timeout_s
        self.start_timeout_s = start_timeout_s
        self.cancel_grace_s = cancel_grace_s
        self.poll_s = poll_s
        self.runtime_env = runtime_env
        self._mailbox: Any = None
        self._host: _RayHost | None = None
        self._connect_lock = threading.Lock()
        self._calls: dict[str, asyncio.Queue[tuple[int, Any]]] = {}
        self._routed = 0  # the last message handed to a call
        self._pump: asyncio.Task[None] | None = None
        self._pumped: Any = None  # the mailbox that pump takes from

    # -- connecting ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Join the cluster (or start Ray here) unless already connected; a RayUnavailable
        error, within seconds, if it cannot be reached. Blocks: see `aconnect`."""
        with self._connect_lock:
            if self._mailbox is not None:
                return
            address = resolve_address(self.address)
            if address is not None:
                check_reachable(address, self.connect_timeout_s)
            if not ray.is_initialized():
                self._init(address)
            self._mailbox = _mailbox_actor.remote()
            self._routed = 0  # a new mailbox counts its messages from 1

    async def aconnect(self) -> None:
        await asyncio.to_thread(self.connect)

    def _init(self, address: str | None) -> None:
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.WARNING,
            "runtime_env": self.runtime_env,
        }
        if address is None:
            options |= {"address": "local", "num_cpus": self.num_cpus}
            where = "start Ray on this machine"
        else:
            options["address"] = address
            where = f"connect to the Ray cluster at {address}"
        host = _RayHost(options)
        timeout = self.start_timeout_s if address is None else self.join_timeout_s
        if not host.ready.wait(timeout):
            host.abandon()
            why = "Ray did not come up" if address is None else "it answers, but not as Ray"
            raise RayUnavailable(f"could not {where} within {timeout:.0f}s: {why}. {_HINT}")
        if host.failure is not None:
            error = host.failure
            raise RayUnavailable(f"could not {where}: {_gist(error)}. {_HINT}") from error
        self._host = host

    def close(self) -> None:
        """Let go of the cluster: Ray is shut down if this executor started it."""
        mailbox, self._mailbox = self._mailbox, None
        if mailbox is not None and ray.is_initialized():
            with contextlib.suppress(Exception):
                ray.kill(mailbox)
        host, self._host = self._host, None
        if host is not None:
            host.stop()

    # -- running ------------------------------------------------------------------------------

    async def run(self, schedule: Schedule, work: Work, on_change: OnChange | None = None) -> None:
        await self.aconnect()  # before any job starts: an unreachable cluster fails here
        await super().run(schedule, work, on_change)

    def remote(self, fn: Callable[[Job, Mapping[str, Any], int], Any]) -> Work:
        """Work that runs each attempt as the Ray task `fn(job, inputs, attempt)` (a picklable
        function or coroutine function); its result is the job's, what it raises fails it."""

        async def work(job: Job, inputs: Mapping[str, Any], attempt: int) -> Any:
            args = (fn, job, dict(inputs), attempt)
            return await self.call(_without_channel, *args, name=f"{job.id} attempt {attempt}")

        return work

    async def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_message: OnMessage | None = None,
        name: str | None = None,
    ) -> Any:
        """Run `fn(channel, *args)` as one Ray task and return what it returns (a coroutine
        function's result, for an async `fn`). `fn` and `args` must pickle: a module-level
        function and plain data. An exception `fn` raises is raised here as itself; a lost
        worker raises RemoteLost. Cancelling the call cancels the Ray task and waits up to
        `cancel_grace_s` for it to end, still handling its messages."""
        await self.aconnect()
        key = uuid.uuid4().hex
        inbox: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        self._calls[key] = inbox
        self._ensure_pump()
        serving = asyncio.create_task(self._serve(inbox, on_message))
        options: dict[str, Any] = {"num_cpus": self.task_cpus}
        if name:
            options["name"] = name
        ref = _remote_attempt.options(**options).remote(fn, Channel(self._mailbox, key), args)
        finished: asyncio.Future[Any] = asyncio.wrap_future(ref.future())
        finished.add_done_callback(_retrieved)  # also when given up on after a cancel
        try:
            try:
                await asyncio.wait({finished})  # unlike awaiting it, leaves it uncancelled
            except asyncio.CancelledError:
                ray.cancel(ref, recursive=False)  # its own reports must still go through
                done, _ = await asyncio.wait({finished}, timeout=self.cancel_grace_s)
                if not done:
                    ray.cancel(ref, force=True)
                raise
            return _result(finished, name or str(getattr(fn, "__name__", "task")))
        finally:
            del self._calls[key]
            serving.cancel()
            with contextlib.suppress(Exception):
                self._mailbox.close.remote(key)

    async def _serve(self, inbox: asyncio.Queue[tuple[int, Any]], handle: OnMessage | None) -> None:
        """One call's messages, one at a time, in the order it sent them."""
        while True:
            seq, message = await inbox.get()
            try:
                if handle is None:
                    raise ChannelError("this call was started without an on_message handler")
                reply: tuple[bool, Any] = (True, await handle(message))
            except Exception as error:
                log.debug("a remote call's message failed", exc_info=True)
                reply = (False, f"{type(error).__name__}: {error}")
            self._mailbox.reply.remote(seq, *reply)

    def _ensure_pump(self) -> None:
        """One pump per mailbox while calls run (a pump of a closed mailbox ends by itself)."""
        if self._pump is None or self._pump.done() or self._pumped is not self._mailbox:
            self._pumped = self._mailbox
            self._pump = asyncio.create_task(self._pumping())

    async def _pumping(self) -> None:
        """Takes messages from the mailbox and hands each to its call, while calls run."""
        mailbox = self._mailbox
        try:
            while self._calls:
                taken = await mailbox.take.remote(self._routed, self.poll_s)
                for seq, key, message in taken:
                    if seq <= self._routed:
                        continue
                    self._routed = seq
                    inbox = self._calls.get(key)
                    if inbox is None:
                        mailbox.reply.remote(seq, False, "the call has ended")
                    else:
                        inbox.put_nowait((seq, message))
        except Exception:
            if mailbox is self._mailbox:  # else closed while the last take was out: all done
                log.warning("the Ray executor stopped taking messages", exc_info=True)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _result(finished: asyncio.Future[Any], name: str) -> Any:
    error = finished.exception()
    if error is None:
        return finished.result()
    if isinstance(error, RayTaskError):
        cause = getattr(error, "cause", None)
        if isinstance(cause, Exception) and not isinstance(cause, RayError):
            raise cause from error  # as the function raised it, so work can tell what it was
        raise RemoteLost(f"the Ray task {name} failed: {_gist(error)}") from error
    if isinstance(error, RayError):
        raise RemoteLost(f"the Ray task {name} was lost: {_gist(error)}") from error
    raise error


def _gist(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
