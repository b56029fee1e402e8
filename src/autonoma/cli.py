"""The command line. Errors are one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn
from rich.table import Table

from autonoma.errors import AutonomaError
from autonoma.llm.registry import REGISTRY, ModelStore, lookup

app = typer.Typer(no_args_is_help=True, add_completion=False, help="autonoma: autonomous agents")
models_app = typer.Typer(help="List and fetch embedded models.", invoke_without_command=True)
app.add_typer(models_app, name="models")

out = Console()
err = Console(stderr=True)


@models_app.callback()
def models_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """List the registry's models and whether each is cached."""
    if ctx.invoked_subcommand is not None:
        return
    store = ModelStore()
    rows = [
        {
            "name": m.name,
            "spec": f"local:{m.name}",
            "size_mb": round(m.size / 1e6),
            "cached": store.is_cached(m.name),
            "path": str(store.path_for(m.name)),
            "description": m.description,
        }
        for m in REGISTRY.values()
    ]
    if as_json:
        print(json.dumps({"cache_dir": str(store.cache_dir), "models": rows}, indent=2))
        return
    table = Table(title=f"Embedded models (cache: {store.cache_dir})")
    for column in ("spec", "size", "cached", "description"):
        table.add_column(column)
    for m in REGISTRY.values():
        cached = "[green]yes[/]" if store.is_cached(m.name) else "[dim]no[/]"
        table.add_row(f"local:{m.name}", f"{round(m.size / 1e6)} MB", cached, m.description)
    out.print(table)
    out.print("Any GGUF file works too: --model local:/path/to/model.gguf")


@models_app.command("pull")
def models_pull(name: str = typer.Argument(..., help="a registry model name")) -> None:
    """Fetch a model into the cache (once), checking its SHA-256."""
    model = lookup(name)
    store = ModelStore()
    if store.is_cached(name) or store.verify(name):
        out.print(f"{name} is already cached at {store.path_for(name)}")
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(f"fetching {name}", total=model.size)

        def report(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        path = store.pull(name, progress=report)
    out.print(f"{name} fetched and verified: {path}")


def main() -> None:
    try:
        app()
    except AutonomaError as error:
        err.print(f"[red]error:[/] {error}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
