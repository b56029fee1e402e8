"""Which of llama.cpp's parallel slots serves a request, so that prompt prefixes stay cached.

llama.cpp keeps one cached prompt a slot and reuses its longest common prefix with the next
prompt the slot serves. An agent loop's prompts share a long prefix from step to step; memory's
calls (importance ratings, summaries) share none with them. Served by the same slot, each
evicts the other's prefix, so every step would be computed from scratch. Here the side lane
(memory, checks, identity, reflection) keeps the last slot, and each agent loop's lane keeps
one of the others, least recently used first when a new loop starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from autonoma.llm.base import SIDE_LANE


class SlotMap:
    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._lanes: dict[str, int] = {}
        self._used: list[int] = list(range(max(slots - 1, 1)))  # least recently used first
        self._busy = [0] * slots

    def _slot_of(self, lane: str) -> int:
        if lane == SIDE_LANE:
            return self.slots - 1
        if lane not in self._lanes:
            self._lanes[lane] = self._used[0]
        slot = self._lanes[lane]
        self._used.remove(slot)
        self._used.append(slot)
        return slot

    @contextmanager
    def serving(self, lane: str | None) -> Iterator[int | None]:
        """The slot for one request of `lane`, held while it runs. None: let llama.cpp choose
        (no lane, one slot only, or the lane's slot busy and no other free, since a request
        pinned to a busy slot waits for it)."""
        slot = None if lane is None or self.slots < 2 else self._slot_of(lane)
        if slot is not None and self._busy[slot]:
            slot = next((s for s in range(self.slots) if not self._busy[s]), None)
        if slot is not None:
            self._busy[slot] += 1
        try:
            yield slot
        finally:
            if slot is not None:
                self._busy[slot] -= 1
