"""Every record's scoring columns in memory, in id order, so retrieval ranks without asking
SQLite (memory/stream.py keeps them in step with it)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from autonoma.memory.records import Kind
from autonoma.memory.scoring import Scale

# Records whose access time changed since the columns' last sort are kept apart, up to this
# many, then merged back.
LOOSE_MAX = 4096


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """`array` with room for `size` entries (doubling, so appends cost O(1) each)."""
    if size <= len(array):
        return array
    grown = np.empty(max(size, 2 * len(array), 1024), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


class Columns:
    """Every record's scoring columns (id, importance, last access, creation time, owner,
    kind) in memory, in id order: retrieval ranks and normalises from these instead of asking
    SQLite. `MemoryStream._sync` keeps them in step: records written since (by id), and
    access times other connections set since (from the `accesses` log). Only the access time
    of a record ever changes.

    For the threshold algorithm, `order` lists positions by importance (highest first), then
    by last access (latest first): each importance is one run of it, and along a run the
    recency and importance part of the score only falls, so a run's head holds its best. A
    record whose access time changed since the sort, or that came since, is 'loose': its place
    in `order` (if any) is stale and skipped, and it is looked at one by one. Past
    `LOOSE_MAX` loose records, they are merged back into `order`."""

    def __init__(self) -> None:
        self.n = 0
        self.seq = 0  # the last entry of the access log taken in
        self.agents: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
        self._ids = np.empty(0, dtype=np.int64)
        self._agent = np.empty(0, dtype=np.int32)
        self._kind = np.empty(0, dtype=np.int16)
        self._created = np.empty(0, dtype=np.float64)
        self._accessed = np.empty(0, dtype=np.float64)
        self._importance = np.empty(0, dtype=np.int16)
        self._bounds: tuple[tuple[float, float], tuple[float, float]] | None = None
        self.order = np.empty(0, dtype=np.int64)
        self.order_neg_accessed = np.empty(0, dtype=np.float64)  # -access time, at the sort
        self.runs: list[tuple[int, int, int]] = []  # (importance, start, end) in order
        self.sorted_n = 0  # positions from here on came after the sort: loose
        self._loose = np.zeros(0, dtype=bool)  # of positions in order: changed since the sort
        self._changed = np.empty(0, dtype=np.int64)  # those positions

    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self.n]

    @property
    def max_id(self) -> int:
        return int(self._ids[self.n - 1]) if self.n else 0

    @property
    def importance(self) -> np.ndarray:
        return self._importance[: self.n]

    @property
    def accessed(self) -> np.ndarray:
        return self._accessed[: self.n]

    def extend(self, rows: Iterable[tuple[int, str, str, float, float, int]]) -> None:
        """Append records (id, agent, kind, created_at, accessed_at, importance) in id order."""
        agents, kinds = self.agents, self.kinds
        new = np.fromiter(
            (
                (i, agents.setdefault(a, len(agents)), kinds.setdefault(k, len(kinds)), c, t, m)
                for i, a, k, c, t, m in rows
            ),
            dtype=_ROW,
        )
        if not len(new):
            return
        start, end = self.n, self.n + len(new)
        for name in ("ids", "agent", "kind", "created", "accessed", "importance"):
            column = _grown(getattr(self, f"_{name}"), end)
            column[start:end] = new[name]
            setattr(self, f"_{name}", column)
        self.n = end
        if self._bounds is not None:
            (low_i, high_i), (oldest, newest) = self._bounds
            self._bounds = (
                (
                    min(low_i, float(new["importance"].min())),
                    max(high_i, float(new["importance"].max())),
                ),
                (
                    min(oldest, float(new["accessed"].min())),
                    max(newest, float(new["accessed"].max())),
                ),
            )

    def positions(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where these ids are, and which of them are here at all."""
        if not self.n:
            return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
        if self.max_id == self.n:  # ids 1 to n, none missing: the usual case
            ok = (ids >= 1) & (ids <= self.n)
            return np.where(ok, ids - 1, 0), ok
        at = np.minimum(np.searchsorted(self.ids, ids), self.n - 1)
        return at, self.ids[at] == ids

    def touch(self, ids: np.ndarray, accessed: np.ndarray) -> None:
        """Set these records' last access (ids not here yet are skipped: they are read with
        their current access time when they come)."""
        at, ok = self.positions(ids)
        at, accessed = at[ok], accessed[ok]
        if not len(at):
            return
        if self._bounds is not None:
            importance, (oldest, newest) = self._bounds
            if float(self._accessed[at].min()) <= oldest:  # the oldest may be gone
                self._bounds = None
            else:
                newest = max(newest, float(accessed.max()))
                self._bounds = importance, (min(oldest, float(accessed.min())), newest)
        self._accessed[at] = accessed
        placed = at[at < self.sorted_n]
        placed = np.unique(placed[~self._loose[placed]])
        self._loose[placed] = True
        self._changed = np.concatenate([self._changed, placed])

    def reload_accessed(self, rows: list[tuple[int, float]]) -> None:
        """Every access time anew (after missing some of the log); the order is rebuilt."""
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        at, ok = self.positions(ids)
        self._accessed[at[ok]] = np.fromiter((r[1] for r in rows), np.float64, len(rows))[ok]
        self._bounds = None
        self.order, self.runs, self.sorted_n = np.empty(0, dtype=np.int64), [], 0
        self._loose, self._changed = np.zeros(0, dtype=bool), np.empty(0, dtype=np.int64)

    def mask(
        self,
        agent: str | None,
        kinds: Sequence[Kind] | None,
        since: float | None,
        until: float | None,
    ) -> np.ndarray | None:
        """Which records pass the filters (None: no filter, all do)."""
        if agent is None and not kinds and since is None and until is None:
            return None
        mask = np.ones(self.n, dtype=bool)
        if agent is not None:
            if agent not in self.agents:
                return np.zeros(self.n, dtype=bool)
            mask &= self._agent[: self.n] == self.agents[agent]
        if kinds:
            wanted = np.zeros(len(self.kinds) + 1, dtype=bool)
            wanted[[self.kinds[kind] for kind in kinds if kind in self.kinds]] = True
            mask &= wanted[self._kind[: self.n]]
        if since is not None:
            mask &= self._created[: self.n] >= since
        if until is not None:
            mask &= self._created[: self.n] <= until
        return mask

    def bounds(self, mask: np.ndarray | None) -> tuple[tuple[float, float], tuple[float, float]]:
        """The lowest and highest importance and last access of the records that pass."""
        if mask is not None:
            importance, accessed = self.importance[mask], self.accessed[mask]
        elif self._bounds is not None:
            return self._bounds
        else:
            importance, accessed = self.importance, self.accessed
        found = (
            (float(importance.min()), float(importance.max())),
            (float(accessed.min()), float(accessed.max())),
        )
        if mask is None:
            self._bounds = found
        return found

    def loose(self) -> np.ndarray:
        return np.concatenate([self._changed, np.arange(self.sorted_n, self.n)])

    def tidy(self) -> None:
        """Merge the loose records back into the order once there are many."""
        if len(self._changed) + self.n - self.sorted_n <= LOOSE_MAX:
            return
        importance, accessed = self.importance, self.accessed
        if self.sorted_n < self.n // 2:  # mostly unsorted (a store just opened): sort it all
            order = np.lexsort((-accessed, -importance))
            neg_accessed = -accessed[order]
        else:
            # Both the order without its stale places and the loose records (sorted) are
            # ordered by importance then access: merge them, run by run.
            keep = ~self._loose[self.order]
            clean, clean_neg = self.order[keep], self.order_neg_accessed[keep]
            extra = self.loose()
            extra = extra[np.lexsort((-accessed[extra], -importance[extra]))]
            extra_importance, extra_neg = importance[extra], -accessed[extra]
            at = np.empty(len(extra), dtype=np.int64)
            start = 0
            spans = {}
            for level, begin, end in self.runs:
                kept = int(np.count_nonzero(keep[begin:end]))
                spans[level] = (start, start + kept)
                start += kept
            for level in np.unique(extra_importance):
                chosen = extra_importance == level
                if int(level) in spans:
                    begin, end = spans[int(level)]
                    at[chosen] = begin + np.searchsorted(
                        clean_neg[begin:end], extra_neg[chosen], side="right"
                    )
                else:  # a new importance: after every run of a higher one
                    at[chosen] = sum(e - b for lv, (b, e) in spans.items() if lv > level)
            order = np.insert(clean, at, extra)
            neg_accessed = np.insert(clean_neg, at, extra_neg)
        levels = importance[order]
        cuts = np.flatnonzero(np.diff(levels)) + 1
        starts = np.concatenate([[0], cuts])
        ends = np.concatenate([cuts, [len(order)]])
        self.runs = [(int(levels[s]), int(s), int(e)) for s, e in zip(starts, ends, strict=True)]
        self.order, self.order_neg_accessed = order, neg_accessed
        self.sorted_n = self.n
        self._loose = np.zeros(self.n, dtype=bool)
        self._changed = np.empty(0, dtype=np.int64)

    def _head(self, start: int, end: int, count: int, mask: np.ndarray | None) -> np.ndarray:
        """The first `count` records of order[start:end] that are in place and pass."""
        step = max(count, 16)
        while True:
            chunk = self.order[start : min(end, start + step)]
            chunk = chunk[~self._loose[chunk]]
            if mask is not None:
                chunk = chunk[mask[chunk]]
            if len(chunk) >= count or start + step >= end:
                return chunk[:count]
            step *= 4

    def best(self, k: int, mask: np.ndarray | None) -> np.ndarray:
        """Records that hold the k best by recency and importance: each run's k first and
        the loose (any other record has k better in its own run)."""
        loose = self.loose()
        if mask is not None:
            loose = loose[mask[loose]]
        heads = [self._head(start, end, k, mask) for _, start, end in self.runs]
        return np.concatenate([*heads, loose])

    def above(
        self, scale: Scale, needed: float, mask: np.ndarray | None, limit: int
    ) -> np.ndarray | None:
        """Every record that passes whose recency and importance part exceeds `needed`, or
        None if the runs hold more than `limit` candidates for it."""
        parts = []
        total = 0
        for level, start, end in self.runs:
            floor = scale.accessed_floor(level, needed)
            if floor == math.inf:
                continue
            count = end - start
            if floor > -math.inf:  # the run is sorted by -access: those accessed after floor
                run = self.order_neg_accessed[start:end]
                count = int(np.searchsorted(run, -floor, side="left"))
            total += count
            if total > limit:
                return None
            parts.append(self.order[start : start + count])
        head = np.concatenate([*parts, np.empty(0, dtype=np.int64)])
        head = head[~self._loose[head]]
        loose = self.loose()
        if len(loose):
            part = scale.partial(self.importance[loose], self.accessed[loose])
            loose = loose[part > needed - 1e-9]
        found = np.concatenate([head, loose])
        return found if mask is None else found[mask[found]]


def filters(
    agent: str | None,
    kinds: Sequence[Kind] | None,
    since: float | None,
    until: float | None,
) -> tuple[str, tuple[object, ...]]:
    clauses: list[str] = []
    params: list[object] = []
    if agent is not None:
        clauses.append("agent = ?")
        params.append(agent)
    if kinds:
        clauses.append(f"kind IN ({', '.join('?' for _ in kinds)})")
        params.extend(kinds)
    if since is not None:
        clauses.append("created_at >= ?")
        params.append(since)
    if until is not None:
        clauses.append("created_at <= ?")
        params.append(until)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


_ROW = np.dtype(
    [
        ("ids", np.int64),
        ("agent", np.int32),
        ("kind", np.int16),
        ("created", np.float64),
        ("accessed", np.float64),
        ("importance", np.int16),
    ]
)
