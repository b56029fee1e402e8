"""Where a run's events go: stored in the run store first, then handed to each listener (the
live view, a library user's callback, later the server's stream). The one way events are
emitted."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from autonoma.runtime.events import Event
from autonoma.runtime.store import EventRecord, RunStore

EventListener = Callable[[EventRecord], None]


async def emit(
    store: RunStore,
    listeners: Sequence[EventListener],
    run_id: str,
    event: Event,
    step: int | None = None,
) -> EventRecord:
    """Store `event` of run `run_id` (at `step`, if it belongs to one), then tell the
    listeners; the stored record."""
    record = await asyncio.to_thread(store.add_event, run_id, event.kind, event.data(), step)
    for listener in listeners:
        listener(record)
    return record
