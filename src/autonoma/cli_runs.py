"""`autonoma runs`: the stored runs, newest first, telling a live run from one whose driver is
gone; `runs delete` and `runs prune` remove runs with their own workspaces, after saying
what they will remove."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from autonoma.cli_view import runs_table
from autonoma.errors import AutonomaError
from autonoma.runtime.lease import holder_alive
from autonoma.runtime.store import RunRecord, RunStore, default_home

runs_app = typer.Typer(help="List, delete and prune stored runs.", invoke_without_command=True)
out = Console()
err = Console(stderr=True, soft_wrap=True)  # a message is one line, even piped

STATUSES = ("running", "completed", "incomplete", "budget_exhausted", "stopped", "failed")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([mhdw])$")
_AGE_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


def driven(store: RunStore, run: RunRecord) -> bool | None:
    """For a `running` run: whether a live process drives it (False: it was killed, and
    resume takes it up again); None for a run that has ended."""
    if run.status != "running":
        return None
    lease = store.lease_of(run.id)
    return lease is not None and holder_alive(lease)


@runs_app.callback()
def runs_list(
    ctx: typer.Context,
    limit: int = typer.Option(50, "--limit", min=1, help="how many, newest first"),
    status: list[str] = typer.Option(
        [], "--status", help="only runs with this status (again for more)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """List stored runs, newest first (a `running` run whose process is gone says so)."""
    if ctx.invoked_subcommand is not None:
        return
    unknown = [s for s in status if s not in STATUSES]
    if unknown:
        raise typer.BadParameter(f"--status is one of {', '.join(STATUSES)}, not {unknown[0]!r}")
    store = RunStore.open_default()
    records = store.list_runs(limit if not status else 10_000)
    records = [r for r in records if not status or r.status in status][:limit]
    lives = [driven(store, r) for r in records]
    if as_json:
        print(
            json.dumps(
                [r.model_dump() | {"driven": live} for r, live in zip(records, lives, strict=True)],
                indent=2,
            )
        )
        return
    if not records and status:
        out.print(f"no runs with status {' or '.join(status)} ({store.path})")
        return
    if not records:
        out.print(f'no runs yet in {store.path}; start one with: autonoma run "GOAL"')
        return
    out.print(runs_table(records, [store.total_spent(r) for r in records], lives))


def removal(store: RunStore, run: RunRecord) -> tuple[list[str], list[str]]:
    """What deleting `run` removes (its serving runs' too) and what it keeps: a workspace is
    removed only when it is autonoma's own per-run folder, never one the person named."""
    own = default_home() / "workspaces"
    removed, kept = [f"run {run.id} ({run.status}): {run.goal[:60]}"], []
    place = Path(run.workspace)
    if place.parent == own and place.name == run.id:
        removed.append(f"its workspace {place}")
    elif place.exists():
        kept.append(f"{place} (a workspace you named: kept)")
    return removed, kept


def delete(store: RunStore, runs: list[RunRecord], yes: bool) -> None:
    """Say what goes, ask (unless `yes`), then remove the runs, their change journals and
    their own workspaces."""
    busy = [r.id for r in runs if driven(store, r)]
    if busy:
        raise AutonomaError(f"run {busy[0]} is being driven by a live process: stop it first")
    removed, kept = [], []
    for run in runs:
        gone, stays = removal(store, run)
        removed += gone
        kept += stays
    for line in removed:
        err.print(Text(f"remove {line}"))
    for line in kept:
        err.print(Text(f"keep   {line}", style="dim"))
    if not yes:
        if not sys.stdin.isatty():
            raise AutonomaError("nothing removed: give --yes to remove without being asked")
        if not typer.confirm(f"remove {_runs(len(runs))}?", default=False, err=True):
            raise typer.Exit(1)
    own = default_home() / "workspaces"
    for run in runs:
        for record in store.delete_run(run.id):
            shutil.rmtree(store.path.parent / "changes" / record.id, ignore_errors=True)
            place = Path(record.workspace)
            if place.parent == own and place.name == record.id:
                shutil.rmtree(place, ignore_errors=True)
    out.print(f"removed {_runs(len(runs))}")


def _runs(n: int) -> str:
    return "1 run" if n == 1 else f"{n} runs"


@runs_app.command("delete")
def runs_delete(
    run_ids: list[str] = typer.Argument(..., help="the runs to remove"),
    yes: bool = typer.Option(False, "--yes", "-y", help="remove without asking"),
) -> None:
    """Remove runs, the runs serving them, and their own workspaces (not one you named)."""
    store = RunStore.open_default()
    delete(store, [store.get_run(run_id) for run_id in run_ids], yes)


def age_seconds(text: str) -> float:
    found = _AGE.match(text.strip())
    if found is None:
        raise typer.BadParameter(
            f"--older-than takes an age such as 30m, 12h, 7d or 2w, not {text!r}"
        )
    return float(found.group(1)) * _AGE_SECONDS[found.group(2)]


@runs_app.command("prune")
def runs_prune(
    older_than: str = typer.Option(..., "--older-than", help="an age: 30m, 12h, 7d, 2w"),
    status: list[str] = typer.Option(
        [], "--status", help="only runs with this status (again for more; default: every ended one)"
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="remove without asking"),
) -> None:
    """Remove the runs started longer ago than an age (ended ones, or those of --status)."""
    unknown = [s for s in status if s not in STATUSES]
    if unknown:
        raise typer.BadParameter(f"--status is one of {', '.join(STATUSES)}, not {unknown[0]!r}")
    before = time.time() - age_seconds(older_than)
    store = RunStore.open_default()
    chosen: Any = set(status) or set(STATUSES) - {"running"}
    runs = store.runs_before(before, chosen)
    if not runs:
        out.print("no run to prune")
        return
    delete(store, runs, yes)
