"""Helpers shared by tests (moved out of test modules: a test module is never imported
by another)."""

from __future__ import annotations

import os
from pathlib import Path

from autonoma.tools.settings import SandboxSettings


def limits(**changes: object) -> SandboxSettings:
    base: dict[str, object] = {
        "cpu_s": 5,
        "memory_mb": 512,
        "file_mb": 5,
        "processes": 32,
        "wall_s": 20,
        "output_chars": 1000,
    }
    return SandboxSettings.model_validate(base | changes)


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line holds `marker`: what a killed sandbox left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
