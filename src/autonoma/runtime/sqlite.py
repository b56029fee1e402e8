"""One SQLite connection shared by the threads of a process: WAL, a busy timeout, a lock, and
write transactions that take the database's write lock up front (BEGIN IMMEDIATE), so several
processes can write the same file."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autonoma.errors import AutonomaError


class StoreError(AutonomaError):
    """A database autonoma keeps cannot be opened; nothing in it was changed."""


class Database:
    def __init__(self, path: Path, schema: str, *pragmas: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise StoreError(
                f"cannot keep {path.name} in {path.parent}: it, or a folder above it, is a "
                "file; set AUTONOMA_HOME to a directory"
            ) from None
        except OSError as err:
            raise StoreError(
                f"cannot create {path.parent}: {err.strerror}; set AUTONOMA_HOME to a "
                "directory you can write"
            ) from None
        if path.exists() and not path.is_file():
            raise StoreError(f"{path} is not a file; set AUTONOMA_HOME to another directory")
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            for pragma in pragmas:
                self.db.execute(f"PRAGMA {pragma}")
            with self.lock:
                self.db.executescript(schema)  # its own transaction; IF NOT EXISTS: idempotent
        except sqlite3.DatabaseError as err:
            self.db.close()
            raise StoreError(
                f"{path} cannot be used as autonoma's database ({err}). It is left as it is: "
                f"move it aside (mv {path} {path}.broken) to start a new one, or set "
                "AUTONOMA_HOME to another directory"
            ) from None

    def add_columns(self, added: dict[str, list[str]]) -> None:
        """Columns added after a database was first made: added on open where missing."""
        with self.tx() as db:
            for table, columns in added.items():
                have = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
                for column in columns:
                    if column.split()[0] not in have:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")

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
