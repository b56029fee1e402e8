"""Logging owned by autonoma: every library's log (the MCP SDK, httpx, sentence-transformers)
and autonoma's own go to `AUTONOMA_HOME/logs/autonoma.log`, tracebacks included; the terminal
gets them only with `--verbose`, one line each in the live view's dim style, never a raw
traceback. What a person must see is an event the live view shows, not a log line."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from rich.console import Console
from rich.text import Text

from autonoma.agent.display import neutralise_lines
from autonoma.redact import redact
from autonoma.runtime.store import default_home

LOG_BYTES = 5_000_000  # a log file, before it is rotated
LOG_FILES = 3  # rotated files kept
FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"


class OneLine(logging.Handler):
    """A record as one dim line on the terminal: its level, logger and message, with what a
    traceback would say reduced to its exception's name and message."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            said = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                said += (
                    f": {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                )
            line = neutralise_lines(redact(" ".join(said.split())))[:400]
            self.console.print(
                Text(f"{record.levelname.lower()} {record.name}: {line}", style="dim"),
                highlight=False,
            )
        except Exception:  # a log line must never end the run
            self.handleError(record)


def log_file(home: Path | None = None) -> Path:
    return (home or default_home()) / "logs" / "autonoma.log"


def own_logging(verbose: bool, console: Console) -> Path | None:
    """Route every logger to the log file (None if it cannot be written: then nothing is
    logged, rather than tracebacks on the terminal), and with `verbose` to `console` too.
    Python's warnings are logged, so each is said once, in the file."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    path: Path | None = log_file()
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_BYTES, backupCount=LOG_FILES, encoding="utf-8", delay=True
        )
        to_file.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(to_file)
    except OSError:
        path = None
        root.addHandler(logging.NullHandler())
    if verbose:
        root.addHandler(OneLine(console))
    logging.captureWarnings(True)
    return path
