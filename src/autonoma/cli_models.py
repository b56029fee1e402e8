"""Models for the CLI's commands: a registry model fetched with a progress bar the first
time a command needs it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from autonoma.llm import Model, open_model
from autonoma.llm.registry import REGISTRY, ModelStore
from autonoma.llm.settings import LLMSettings

err = Console(stderr=True, soft_wrap=True)


@contextmanager
def fetch_progress(name: str, size: int) -> Iterator[Any]:
    """A download bar on standard error; yields the callback the model store reports to."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(f"fetching {name}", total=size)

        def report(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        yield report


def load_model(spec: str, settings: LLMSettings | None = None) -> Model:
    """The model a spec names, fetching a registry model (with a progress bar) if needed."""
    name = spec.removeprefix("local:").split("?")[0]
    if spec.startswith("local:") and name in REGISTRY and not ModelStore().is_cached(name):
        with fetch_progress(name, REGISTRY[name].size) as report:
            return open_model(spec, settings, progress=report)
    return open_model(spec, settings)
