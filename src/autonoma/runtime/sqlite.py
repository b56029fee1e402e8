"""One SQLite connection shared by the threads of a process: WAL, a busy timeout, a lock, and
write transactions that take the database's write lock up front (BEGIN IMMEDIATE), so several
processes can write the same file."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Database:
    def __init__(self, path: Path, schema: str, *pragmas: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        for pragma in pragmas:
            self.db.execute(f"PRAGMA {pragma}")
        with self.lock:
            self.db.executescript(schema)  # its own transaction; IF NOT EXISTS: idempotent

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.db.close()
