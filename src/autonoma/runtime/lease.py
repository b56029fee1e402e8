"""One run, one driver. `run` and `resume` hold a lease on the run in the store (process,
host, heartbeat); a second driver is told who holds it and stops before touching anything. A
lease whose holder is gone (its process ended, even by kill -9, or its heartbeat is stale) is
taken over. The server will rely on the same lease."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator

from autonoma.runtime.store import Lease, LeaseHolder, RunBusy, RunStore

HEARTBEAT_S = 15.0  # how often a driver says it is alive
STALE_S = 120.0  # a holder silent this long is gone, even if a process has its pid


def this_process() -> LeaseHolder:
    now = time.time()
    return LeaseHolder(secrets.token_hex(8), os.getpid(), socket.gethostname(), now, now)


def holder_alive(lease: Lease, *, stale_after: float = STALE_S) -> bool:
    """On this host, a holder is alive while its process is and its heartbeat is fresh; on
    another, while its heartbeat is fresh."""
    if time.time() - lease.heartbeat > stale_after:
        return False
    if lease.host != socket.gethostname():
        return True
    try:
        os.kill(lease.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return not _zombie(lease.pid)


def _zombie(pid: int) -> bool:
    """A killed child nobody has waited for yet still has its pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def ensure_free(store: RunStore, run_id: str, *, stale_after: float = STALE_S) -> None:
    """RunBusy if a live driver holds the run: for a command to say so before it changes the
    run's settings (`driving` takes the lease itself, with the same test)."""
    held = store.lease_of(run_id)
    if held is not None and holder_alive(held, stale_after=stale_after):
        raise RunBusy(run_id, held)


@contextlib.asynccontextmanager
async def driving(
    store: RunStore, run_id: str, *, every: float = HEARTBEAT_S, stale_after: float = STALE_S
) -> AsyncIterator[Lease]:
    """Hold the run's lease while the block runs (RunBusy if another driver holds it)."""
    lease = await asyncio.to_thread(
        store.take_lease,
        run_id,
        this_process(),
        lambda held: holder_alive(held, stale_after=stale_after),
    )

    async def beat() -> None:
        while True:
            await asyncio.sleep(every)
            await asyncio.to_thread(store.renew_lease, lease, time.time())

    heart = asyncio.create_task(beat())
    try:
        yield lease
    finally:
        heart.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await heart
        await asyncio.to_thread(store.release_lease, lease)
