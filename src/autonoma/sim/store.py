"""Stored sims (SQLite, `sims.db` under AUTONOMA_HOME): each sim's world and personas as
they were when it began, its clock, and the town's state at every step (each part of it
stored when it changed), so a sim resumes where it was and any past step can be shown again."""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from autonoma.errors import AutonomaError
from autonoma.runtime.sqlite import Database
from autonoma.runtime.store import default_home
from autonoma.sim.clock import GameClock
from autonoma.sim.persona import Persona, PersonaSpec, Talk
from autonoma.sim.schedule import Schedule
from autonoma.sim.spatial import SpatialMemory
from autonoma.sim.world import World, WorldSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sims (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    world TEXT NOT NULL,
    personas TEXT NOT NULL,
    start TEXT NOT NULL,
    step_seconds INTEGER NOT NULL,
    step INTEGER NOT NULL DEFAULT 0
);
-- The town's state in parts (the objects; each persona's place, spatial memory and day), a
-- part stored at a step only when it changed: a sim at step n is each part's latest row at or
-- before n. A whole state a step was 75 KB in the Ville, 650 MB a game day.
CREATE TABLE IF NOT EXISTS parts (
    sim_id TEXT NOT NULL REFERENCES sims(id),
    part TEXT NOT NULL,
    step INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (sim_id, part, step)
);
CREATE TABLE IF NOT EXISTS sim_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sim_id TEXT NOT NULL REFERENCES sims(id),
    step INTEGER NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
"""


class SimNotFound(AutonomaError):
    pass


@dataclass
class SimRecord:
    id: str
    name: str
    created_at: float
    world: str  # the world's name
    personas: list[str]
    clock: GameClock
    step: int  # the latest stored step


@dataclass
class Sim:
    """A sim at one step: its world (objects in their states then), its personas where
    they were, and its clock."""

    record: SimRecord
    world: World
    personas: list[Persona]
    step: int

    @property
    def clock(self) -> GameClock:
        return self.record.clock

    def persona(self, name: str) -> Persona:
        for persona in self.personas:
            if persona.name.lower() == " ".join(name.split()).lower():
                return persona
        known = ", ".join(p.name for p in self.personas)
        raise SimNotFound(f"no persona {name!r} in {self.record.name}: there are {known}")

    def parts(self) -> dict[str, str]:
        """The state in the parts it is stored in, each as JSON."""
        parts = {"objects": json.dumps(self.world.states)}
        for p in self.personas:
            parts[f"{p.name}\tplace"] = json.dumps({"tile": list(p.tile), "action": p.action})
            parts[f"{p.name}\tspatial"] = json.dumps(p.spatial.to_json())
            parts[f"{p.name}\tschedule"] = json.dumps(p.schedule.to_json())
            parts[f"{p.name}\ttalk"] = json.dumps(p.talk.to_json())
        return parts

    def state(self) -> dict[str, Any]:
        return {
            "personas": {
                p.name: {
                    "tile": list(p.tile),
                    "spatial": p.spatial.to_json(),
                    "action": p.action,
                    "schedule": p.schedule.to_json(),
                    "talk": p.talk.to_json(),
                }
                for p in self.personas
            },
            "objects": dict(self.world.states),
        }


class SimStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._database = Database(path, _SCHEMA, "synchronous=FULL", "busy_timeout=10000")
        self._database.add_columns({"sims": ["target INTEGER"]})
        self._saved: dict[str, dict[str, str]] = {}  # each sim's parts as last stored here

    @classmethod
    def open_default(cls) -> SimStore:
        return cls(default_home() / "sims.db")

    def close(self) -> None:
        self._database.close()

    def create(self, name: str, world: World, personas: list[Persona], clock: GameClock) -> Sim:
        """A new sim at step 0; its name must be new."""
        sim_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        record = SimRecord(
            sim_id, name, time.time(), world.name, [p.name for p in personas], clock, 0
        )
        sim = Sim(record, world, personas, 0)
        with self._database.tx() as db:
            if db.execute("SELECT 1 FROM sims WHERE name = ?", (name,)).fetchone():
                raise AutonomaError(f"there is a sim named {name!r} already; give another --name")
            db.execute(
                "INSERT INTO sims (id, name, created_at, world, personas, start, step_seconds)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    sim_id,
                    name,
                    record.created_at,
                    world.spec.model_dump_json(),
                    json.dumps([p.spec.model_dump() | {"home": p.home} for p in personas]),
                    clock.start.isoformat(),
                    clock.step_seconds,
                ),
            )
            self._store_parts(db, sim)
        return sim

    def _store_parts(self, db: sqlite3.Connection, sim: Sim) -> None:
        """Each part of the state that changed since this store last stored the sim."""
        last = self._saved.setdefault(sim.record.id, {})
        changed = [(k, v) for k, v in sim.parts().items() if last.get(k) != v]
        db.executemany(
            "INSERT OR REPLACE INTO parts (sim_id, part, step, data) VALUES (?, ?, ?, ?)",
            ((sim.record.id, part, sim.step, data) for part, data in changed),
        )
        last.update(changed)

    def _read(self, sql: str, *args: Any) -> list[Any]:
        with self._database.lock:
            return self._database.db.execute(sql, args).fetchall()

    def records(self) -> list[SimRecord]:
        return [_record(row) for row in self._read("SELECT * FROM sims ORDER BY created_at DESC")]

    def load(self, name_or_id: str, step: int | None = None) -> Sim:
        """The sim named (or with the id) `name_or_id` at `step` (default: its latest)."""
        found = self._read("SELECT * FROM sims WHERE name = ? OR id = ?", name_or_id, name_or_id)
        if not found:
            names = ", ".join(r.name for r in self.records()[:10]) or "none yet"
            raise SimNotFound(f"no sim {name_or_id!r} (sims: {names})")
        row = found[0]
        record = _record(row)
        at = record.step if step is None else step
        if not 0 <= at <= record.step:
            raise SimNotFound(f"sim {record.name} has steps 0 to {record.step}, not {at}")
        rows = self._read(
            "SELECT part, data FROM parts AS p WHERE sim_id = ? AND step = (SELECT MAX(step)"
            " FROM parts WHERE sim_id = p.sim_id AND part = p.part AND step <= ?)",
            record.id,
            at,
        )
        parts = {r["part"]: json.loads(r["data"]) for r in rows}
        world = World(WorldSpec.model_validate_json(row["world"]))
        world.states.update(parts["objects"])
        personas = []
        for data in json.loads(row["personas"]):
            home = data["home"]  # stored as the world writes it
            spec = PersonaSpec.model_validate(data)
            place = parts[f"{spec.name}\tplace"]
            spatial = SpatialMemory.from_json(parts[f"{spec.name}\tspatial"])
            schedule = Schedule.from_json(parts[f"{spec.name}\tschedule"])
            talk = Talk.from_json(parts.get(f"{spec.name}\ttalk"))  # none before talking came
            tile = (place["tile"][0], place["tile"][1])
            personas.append(Persona(spec, home, tile, spatial, place["action"], schedule, talk))
        sim = Sim(record, world, personas, at)
        if at == record.step:  # what a save from here compares with
            self._saved[record.id] = sim.parts()
        return sim

    def tiles_at(self, record: SimRecord, step: int) -> dict[str, tuple[int, int]]:
        """Where each persona stood at `step`, read from its place part alone (no world or
        personas built: for measures over many steps)."""
        rows = self._read(
            "SELECT part, data FROM parts AS p WHERE sim_id = ? AND part LIKE '%' || char(9)"
            " || 'place' AND step = (SELECT MAX(step) FROM parts WHERE sim_id = p.sim_id"
            " AND part = p.part AND step <= ?)",
            record.id,
            step,
        )
        tiles = {}
        for row in rows:
            x, y = json.loads(row["data"])["tile"]
            tiles[row["part"].split("\t")[0]] = (x, y)
        return tiles

    def save(self, sim: Sim, kind: str = "", data: dict[str, Any] | None = None) -> None:
        """Store the sim's state at its step (and an event saying why, if `kind`)."""
        with self._database.tx() as db:
            self._store_parts(db, sim)
            db.execute(
                "UPDATE sims SET step = MAX(step, ?) WHERE id = ?", (sim.step, sim.record.id)
            )
            if kind:
                db.execute(
                    "INSERT INTO sim_events (sim_id, step, at, kind, data) VALUES (?, ?, ?, ?, ?)",
                    (sim.record.id, sim.step, time.time(), kind, json.dumps(data or {})),
                )

    def memory_path(self, record: SimRecord) -> Path:
        """Where the sim's personas' memories are kept, beside the sims."""
        return self.path.parent / "sim-memory" / f"{record.id}.db"

    def target(self, record: SimRecord) -> int | None:
        """The step the sim was last told to run to (`sim resume` goes on to it)."""
        [row] = self._read("SELECT target FROM sims WHERE id = ?", record.id)
        return None if row["target"] is None else int(row["target"])

    def set_target(self, record: SimRecord, step: int) -> None:
        with self._database.tx() as db:
            db.execute("UPDATE sims SET target = ? WHERE id = ?", (step, record.id))

    def events_after(self, sim_id: str, after: int) -> list[tuple[int, int, str, dict[str, Any]]]:
        """The sim's events stored after the event `after` (0: all): id, step, kind, data."""
        rows = self._read(
            "SELECT id, step, kind, data FROM sim_events WHERE sim_id = ? AND id > ? ORDER BY id",
            sim_id,
            after,
        )
        return [(r["id"], r["step"], r["kind"], json.loads(r["data"])) for r in rows]

    def scenario(self, record: SimRecord) -> dict[str, Any] | None:
        """The scenario the sim was made with (as stored then), if any."""
        found = self._read(
            "SELECT data FROM sim_events WHERE sim_id = ? AND kind = 'scenario' ORDER BY id"
            " LIMIT 1",
            record.id,
        )
        if not found:
            return None
        data: dict[str, Any] = json.loads(found[0]["data"])
        return data

    def whispers(self, record: SimRecord) -> list[tuple[str, str]]:
        """(persona, statement) the sim's scenario whispers as it begins, names as the sim
        writes them."""
        scenario = self.scenario(record)
        if scenario is None:
            return []
        names = {name.lower(): name for name in record.personas}
        return [
            (names[" ".join(w["persona"].split()).lower()], w["statement"])
            for w in scenario.get("whispers", [])
        ]

    def events(self, sim_id: str) -> list[tuple[int, str, dict[str, Any]]]:
        rows = self._read(
            "SELECT step, kind, data FROM sim_events WHERE sim_id = ? ORDER BY id", sim_id
        )
        return [(r["step"], r["kind"], json.loads(r["data"])) for r in rows]


def _record(row: Any) -> SimRecord:
    clock = GameClock(datetime.fromisoformat(row["start"]), row["step_seconds"])
    names = [p["name"] for p in json.loads(row["personas"])]
    world = json.loads(row["world"])["name"]
    return SimRecord(row["id"], row["name"], row["created_at"], world, names, clock, row["step"])
