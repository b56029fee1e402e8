"""The run store: every run, step and event in SQLite (WAL), written before the next step.

A step is written twice: its intent (thoughts, command, arguments) before its tool runs, and
its result after. A step with an intent and no result was cut off mid-tool; on resume it is
reported to the model as interrupted, never silently run again.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError
from autonoma.redact import redact
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.events import Event, Unrecognised, parse_event
from autonoma.runtime.sqlite import Database

# incomplete: the run stopped claiming it was done while its acceptance checks failed
RunStatus = Literal["running", "completed", "incomplete", "budget_exhausted", "stopped", "failed"]
StepStatus = Literal["running", "done", "invalid", "denied", "interrupted"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    goal TEXT NOT NULL,
    identity TEXT NOT NULL,
    settings TEXT NOT NULL,
    workspace TEXT NOT NULL,
    model TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    spent TEXT NOT NULL,
    parent_id TEXT,
    task_id TEXT
);
CREATE TABLE IF NOT EXISTS tasks (
    run_id TEXT NOT NULL REFERENCES runs(id),
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL REFERENCES runs(id),
    n INTEGER NOT NULL,
    status TEXT NOT NULL,
    thoughts TEXT NOT NULL,
    command TEXT NOT NULL,
    arguments TEXT NOT NULL,
    observation TEXT,
    ok INTEGER,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    finished_at REAL,
    untrusted INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    prompt_seconds REAL NOT NULL DEFAULT 0,
    generation_seconds REAL NOT NULL DEFAULT 0,
    checks TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, n)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id),
    step INTEGER,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_run ON events(run_id, id);
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY REFERENCES runs(id),
    token TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    since REAL NOT NULL,
    heartbeat REAL NOT NULL
);
"""

_ADDED_COLUMNS = {
    "runs": ["parent_id TEXT", "task_id TEXT"],
    "steps": [
        "untrusted INTEGER NOT NULL DEFAULT 0",
        "cached_tokens INTEGER NOT NULL DEFAULT 0",
        "prompt_seconds REAL NOT NULL DEFAULT 0",
        "generation_seconds REAL NOT NULL DEFAULT 0",
        "checks TEXT NOT NULL DEFAULT ''",
    ],
}
"""Columns added after a store was first created: added on open to a store that lacks them."""


LEASE_FIELDS = ("token", "pid", "host", "since", "heartbeat")


@dataclass(frozen=True)
class LeaseHolder:
    """Who asks for a run's lease: a process on a host, with a token of its own."""

    token: str
    pid: int
    host: str
    since: float
    heartbeat: float


@dataclass(frozen=True)
class Lease(LeaseHolder):
    run_id: str = ""


class RunBusy(AutonomaError):
    """Another process is driving the run."""

    def __init__(self, run_id: str, lease: Lease) -> None:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(lease.since))
        beat = max(0, round(time.time() - lease.heartbeat))
        super().__init__(
            f"run {run_id} is being driven by process {lease.pid} on {lease.host} since "
            f"{since} (its last heartbeat {beat}s ago); wait for it to end, or stop it "
            "(Ctrl-C there, or kill it) and resume again"
        )
        self.lease = lease


class RunNotFound(AutonomaError):
    pass


class RunRecord(BaseModel):
    id: str
    created_at: float
    updated_at: float
    goal: str
    identity: dict[str, Any]
    settings: dict[str, Any]
    workspace: str
    model: str
    status: RunStatus
    reason: str = ""
    spent: BudgetSpent = Field(default_factory=BudgetSpent)
    parent_id: str | None = None  # set for a task's or a sub-agent's run: the run it serves
    task_id: str | None = None


class StepRecord(BaseModel):
    run_id: str
    n: int
    status: StepStatus
    thoughts: dict[str, Any]
    command: str
    arguments: dict[str, Any]
    observation: str | None = None
    ok: bool | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    started_at: float
    finished_at: float | None = None
    untrusted: bool = False  # the observation came from outside: data, not instructions
    # the server's own figures for the step's answer: prompt tokens it took from its cache,
    # seconds it spent on the prompt and on generating (0 when it does not say)
    cached_tokens: int = 0
    prompt_seconds: float = 0.0
    generation_seconds: float = 0.0
    checks: str = ""  # what the acceptance checks said after the step, when it was news


class EventRecord(BaseModel):
    """An event as stored: its kind and data as JSON; `event` is the same, typed."""

    id: int
    run_id: str
    step: int | None
    at: float
    kind: str
    data: dict[str, Any]

    @property
    def event(self) -> Event | Unrecognised:
        return parse_event(self.kind, self.data)


def default_home() -> Path:
    """$AUTONOMA_HOME, or the user data directory."""
    return Path(os.environ.get("AUTONOMA_HOME") or platformdirs.user_data_dir("autonoma"))


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStore:
    """One SQLite database. Safe for several threads of a process and several processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        database = Database(
            path,
            _SCHEMA,
            "synchronous=FULL",  # a committed step survives power loss too
            "busy_timeout=10000",
            "foreign_keys=ON",
        )
        self._database = database
        self._lock, self._db, self._tx = database.lock, database.db, database.tx
        self._database.add_columns(_ADDED_COLUMNS)

    @classmethod
    def open_default(cls) -> RunStore:
        return cls(default_home() / "runs.db")

    def close(self) -> None:
        self._database.close()

    # -- leases: one driver a run (runtime/lease.py) ---------------------------------------

    def take_lease(self, run_id: str, holder: LeaseHolder, alive: Callable[[Lease], bool]) -> Lease:
        """The run's lease for `holder`, or RunBusy naming the driver that holds it while
        `alive` says it is; a lease whose holder is gone is taken over."""
        with self._tx() as db:
            row = db.execute("SELECT * FROM leases WHERE run_id = ?", (run_id,)).fetchone()
            if row is not None:
                held = Lease(run_id=run_id, **{k: row[k] for k in LEASE_FIELDS})
                if alive(held):
                    raise RunBusy(run_id, held)
            lease = Lease(run_id=run_id, **holder.__dict__)
            db.execute(
                "INSERT OR REPLACE INTO leases (run_id, token, pid, host, since, heartbeat) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, lease.token, lease.pid, lease.host, lease.since, lease.heartbeat),
            )
            return lease

    def renew_lease(self, lease: Lease, now: float) -> bool:
        """A heartbeat; False when the lease is no longer this holder's."""
        with self._tx() as db:
            changed = db.execute(
                "UPDATE leases SET heartbeat = ? WHERE run_id = ? AND token = ?",
                (now, lease.run_id, lease.token),
            ).rowcount
        return changed == 1

    def release_lease(self, lease: Lease) -> None:
        with self._tx() as db:
            db.execute(
                "DELETE FROM leases WHERE run_id = ? AND token = ?", (lease.run_id, lease.token)
            )

    def lease_of(self, run_id: str) -> Lease | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM leases WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else Lease(run_id=run_id, **{k: row[k] for k in LEASE_FIELDS})

    # -- runs -----------------------------------------------------------------------------

    def create_run(
        self,
        *,
        goal: str,
        identity: dict[str, Any],
        settings: dict[str, Any],
        workspace: str,
        model: str,
        run_id: str | None = None,
        spent: BudgetSpent | None = None,
        parent_id: str | None = None,
        task_id: str | None = None,
    ) -> RunRecord:
        """A new run, in status running. `spent` is what setting it up cost (its identity).
        A run that does one task of another run (or serves it as a sub-agent) names it as its
        parent."""
        now = time.time()
        record = RunRecord(
            id=run_id or new_run_id(),
            created_at=now,
            updated_at=now,
            goal=goal,
            identity=identity,
            settings=_without_secrets(settings),  # the model client alone keeps a credential
            workspace=workspace,
            model=redact(model),
            status="running",
            spent=spent or BudgetSpent(),
            parent_id=parent_id,
            task_id=task_id,
        )
        with self._tx() as db:
            db.execute(
                "INSERT INTO runs (id, created_at, updated_at, goal, identity, settings, "
                "workspace, model, status, reason, spent, parent_id, task_id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    record.id,
                    now,
                    now,
                    goal,
                    json.dumps(identity),
                    json.dumps(record.settings),
                    workspace,
                    record.model,
                    record.status,
                    "",
                    record.spent.model_dump_json(),
                    parent_id,
                    task_id,
                ),
            )
        return record

    def get_run(self, run_id: str) -> RunRecord:
        with self._lock:
            row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in {self.path}; `autonoma runs` lists them")
        return _run(row)

    def list_runs(self, limit: int = 50) -> list[RunRecord]:
        """The newest runs a person started (not the runs that serve them), newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE parent_id IS NULL ORDER BY created_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [_run(r) for r in rows]

    def delete_run(self, run_id: str) -> list[RunRecord]:
        """Remove a run and every run serving it (tasks, sub-agents, theirs), with their
        steps, events, tasks and leases, in one transaction; the runs removed, the run first.
        Workspaces and kept file versions are the caller's to remove (cli_runs.py)."""
        gone = [self.get_run(run_id)]
        for run in gone:  # grows as each run's children are found
            gone.extend(self.children(run.id))
        ids = [(run.id,) for run in gone]
        with self._tx() as db:
            for table in ("steps", "events", "tasks", "leases"):
                db.executemany(f"DELETE FROM {table} WHERE run_id = ?", ids)
            db.executemany("DELETE FROM runs WHERE id = ?", ids)
        return gone

    def runs_before(self, before: float, statuses: AbstractSet[str]) -> list[RunRecord]:
        """The runs a person started before `before` (seconds since the epoch) whose status is
        one of `statuses`, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE parent_id IS NULL AND created_at < ? ORDER BY created_at",
                (before,),
            ).fetchall()
        return [run for run in map(_run, rows) if run.status in statuses]

    def total_spent(self, run: RunRecord) -> BudgetSpent:
        """What a run and every run serving it (tasks, sub-agents, theirs) spent; the time is
        the run's own, since they ran inside it."""
        total = run.spent.model_copy()
        for child in self.children(run.id):
            total = total.plus(self.total_spent(child))
        return total

    def children(self, run_id: str) -> list[RunRecord]:
        """The runs that serve a run (its tasks' and sub-agents'), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE parent_id = ? ORDER BY created_at, rowid", (run_id,)
            ).fetchall()
        return [_run(r) for r in rows]

    def carries_outside(self, run_id: str) -> bool:
        """Whether outside content entered the run's context (agent/loop.py marks it): what
        the run hands on (a task's result, a sub-agent's task) carries it too."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM events WHERE run_id = ? AND kind = 'outside_entered' UNION ALL "
                "SELECT 1 FROM steps WHERE run_id = ? AND untrusted = 1 LIMIT 1",
                (run_id, run_id),
            ).fetchone()
        return row is not None

    def set_status(
        self, run_id: str, status: RunStatus, reason: str = "", spent: BudgetSpent | None = None
    ) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                (status, reason, time.time(), run_id),
            )
            if spent is not None:
                _save_spent(db, run_id, spent)

    def set_settings(self, run_id: str, settings: dict[str, Any]) -> None:
        """Replace a run's settings (a resume may raise its limits or change its model)."""
        settings = _without_secrets(settings)
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE runs SET settings = ?, model = coalesce(?, model), updated_at = ? "
                "WHERE id = ?",
                (json.dumps(settings), settings.get("model"), time.time(), run_id),
            )
            if cursor.rowcount == 0:
                raise RunNotFound(f"no run {run_id!r} in {self.path}; `autonoma runs` lists them")

    def save_spent(self, run_id: str, spent: BudgetSpent) -> None:
        with self._tx() as db:
            _save_spent(db, run_id, spent)

    # -- tasks (a planned run's graph) ------------------------------------------------------

    def put_tasks(self, run_id: str, tasks: list[dict[str, Any]]) -> None:
        """Insert or update tasks (each a dict with an "id"), in one transaction. A new task
        goes after the ones already there."""
        now = time.time()
        with self._tx() as db:
            (last,) = db.execute(
                "SELECT coalesce(max(position), -1) FROM tasks WHERE run_id = ?", (run_id,)
            ).fetchone()
            for task in tasks:
                last += 1
                db.execute(
                    "INSERT INTO tasks VALUES (?,?,?,?,?) ON CONFLICT (run_id, id) "
                    "DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
                    (run_id, task["id"], last, json.dumps(task), now),
                )

    def remove_tasks(self, run_id: str, task_ids: list[str]) -> None:
        with self._tx() as db:
            db.executemany(
                "DELETE FROM tasks WHERE run_id = ? AND id = ?", [(run_id, t) for t in task_ids]
            )

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT data FROM tasks WHERE run_id = ? ORDER BY position", (run_id,)
            ).fetchall()
        return [json.loads(r["data"]) for r in rows]

    # -- steps ----------------------------------------------------------------------------

    def begin_step(self, step: StepRecord, spent: BudgetSpent) -> None:
        """Record a step's intent (and the budget it spent) before its tool runs."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO steps (run_id, n, status, thoughts, command, arguments, "
                "observation, ok, prompt_tokens, completion_tokens, cost_usd, started_at, "
                "finished_at, untrusted, cached_tokens, prompt_seconds, generation_seconds) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    step.run_id,
                    step.n,
                    step.status,
                    json.dumps(step.thoughts),
                    step.command,
                    json.dumps(step.arguments),
                    step.observation,
                    None if step.ok is None else int(step.ok),
                    step.prompt_tokens,
                    step.completion_tokens,
                    step.cost_usd,
                    step.started_at,
                    step.finished_at,
                    int(step.untrusted),
                    step.cached_tokens,
                    step.prompt_seconds,
                    step.generation_seconds,
                ),
            )
            _save_spent(db, step.run_id, spent)

    def finish_step(
        self,
        run_id: str,
        n: int,
        *,
        status: StepStatus,
        observation: str,
        ok: bool,
        spent: BudgetSpent | None = None,
        untrusted: bool = False,
        checks: str = "",
    ) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE steps SET status = ?, observation = ?, ok = ?, finished_at = ?, "
                "untrusted = ?, checks = ? WHERE run_id = ? AND n = ?",
                (status, observation, int(ok), time.time(), int(untrusted), checks, run_id, n),
            )
            if spent is not None:
                _save_spent(db, run_id, spent)

    def steps(self, run_id: str) -> list[StepRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM steps WHERE run_id = ? ORDER BY n", (run_id,)
            ).fetchall()
        return [_step(r) for r in rows]

    # -- events ---------------------------------------------------------------------------

    def add_event(
        self, run_id: str, kind: str, data: dict[str, Any], step: int | None = None
    ) -> EventRecord:
        at = time.time()
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO events (run_id, step, at, kind, data) VALUES (?,?,?,?,?)",
                (run_id, step, at, kind, json.dumps(data, default=str)),
            )
            event_id = cursor.lastrowid or 0
        return EventRecord(id=event_id, run_id=run_id, step=step, at=at, kind=kind, data=data)

    def events(self, run_id: str, after_id: int = 0) -> list[EventRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM events WHERE run_id = ? AND id > ? ORDER BY id", (run_id, after_id)
            ).fetchall()
        return [
            EventRecord(
                id=r["id"],
                run_id=r["run_id"],
                step=r["step"],
                at=r["at"],
                kind=r["kind"],
                data=json.loads(r["data"]),
            )
            for r in rows
        ]


def _without_secrets(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as stored: a credential in the model spec is never written (redact.py)."""
    if isinstance(settings.get("model"), str):
        return {**settings, "model": redact(settings["model"])}
    return settings


def _save_spent(db: sqlite3.Connection, run_id: str, spent: BudgetSpent) -> None:
    db.execute(
        "UPDATE runs SET spent = ?, updated_at = ? WHERE id = ?",
        (spent.model_dump_json(), time.time(), run_id),
    )


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        goal=row["goal"],
        identity=json.loads(row["identity"]),
        settings=json.loads(row["settings"]),
        workspace=row["workspace"],
        model=row["model"],
        status=row["status"],
        reason=row["reason"],
        spent=BudgetSpent.model_validate_json(row["spent"]),
        parent_id=row["parent_id"],
        task_id=row["task_id"],
    )


def _step(row: sqlite3.Row) -> StepRecord:
    return StepRecord(
        run_id=row["run_id"],
        n=row["n"],
        status=row["status"],
        thoughts=json.loads(row["thoughts"]),
        command=row["command"],
        arguments=json.loads(row["arguments"]),
        observation=row["observation"],
        ok=None if row["ok"] is None else bool(row["ok"]),
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        cost_usd=row["cost_usd"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        untrusted=bool(row["untrusted"]),
        cached_tokens=row["cached_tokens"],
        prompt_seconds=row["prompt_seconds"],
        generation_seconds=row["generation_seconds"],
        checks=row["checks"],
    )
