"""The commands that look at a stored run and act on its record: `show`, `graph`, `export`,
`undo`, `rate`, and `schema` for what runs report."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from autonoma.agent.display import neutralise_lines
from autonoma.agent.settings import RunSettings
from autonoma.cli_view import checks_view, reflections_view, run_report, task_report
from autonoma.errors import AutonomaError
from autonoma.memory.reflection import reflection_trees
from autonoma.planning.graph import Task, TaskGraph, render_dot, render_tree
from autonoma.planning.picture import render_svg
from autonoma.runtime.events import OutsideEntered, Rated, Undone, event_schema
from autonoma.runtime.export import FORMATS, trajectories
from autonoma.runtime.lease import ensure_free
from autonoma.runtime.sink import emit
from autonoma.runtime.store import RunStore
from autonoma.tools.changes import journal_of

out = Console()
err = Console(stderr=True, soft_wrap=True)  # a message is one line, even piped


def show_command(
    run_id: str = typer.Argument(..., help="the run to show"),
    as_json: bool = typer.Option(False, "--json", help="the run with every step and event"),
) -> None:
    """Show one run: identity, status, totals and every step (for a planned run: the task
    graph, and each task's run with its steps)."""
    store = RunStore.open_default()
    record = store.get_run(run_id)
    steps = store.steps(run_id)
    graph = TaskGraph(tasks=[Task.model_validate(t) for t in store.tasks(run_id)])
    children = store.children(run_id)
    totals = store.total_spent(record)
    trees = [
        tree
        for path in sorted((store.path.parent / "memory").glob("*.db"))
        for tree in reflection_trees(path, run_id)
    ]
    journal = journal_of(store.path.parent, run_id, Path(record.workspace))
    if as_json:
        events = store.events(run_id)
        print(
            json.dumps(
                record.model_dump()
                | {
                    "steps": [s.model_dump() for s in steps],
                    "events": [e.model_dump() for e in events],
                    "reflections": [tree.to_json() for tree in trees],
                    "tasks": [t.model_dump() for t in graph.tasks],
                    "children": [
                        child.model_dump()
                        | {"steps": [s.model_dump() for s in store.steps(child.id)]}
                        for child in children
                    ],
                    "totals": totals.model_dump() | {"tokens": totals.tokens},
                    "changes": [asdict(c) for c in journal.changes()],
                },
                indent=2,
            )
        )
    else:
        run_report(out, record, steps, totals)
        events = store.events(run_id)
        checks = checks_view(events)
        if checks is not None:
            out.print(checks)
        for stored in events:
            if isinstance(event := stored.event, OutsideEntered):
                at = f"step {stored.step}" if stored.step else "its start"
                said = f"outside content in the context from {at}: {event.why}"
                out.print(Text(neutralise_lines(said), style="yellow"))
        changes = journal.changes()
        if changes:
            out.print(
                Text(
                    "workspace changes (autonoma undo RUN [--to-step N] puts them back):",
                    style="bold",
                )
            )
            for step in sorted({c.step for c in changes}):
                said = ", ".join(c.describe() for c in changes if c.step == step)
                out.print(Text(neutralise_lines(f"  step {step}: {said}")))
        if graph.tasks:
            out.print(Text("plan:", style="bold"))
            out.print(Text(neutralise_lines(render_tree(graph))))
        for child in children:
            task_report(out, child, store.steps(child.id))
        if trees:
            out.print(reflections_view(trees))


def graph_command(
    run_id: str = typer.Argument(..., help="a run started with --strategy plan"),
    format: str = typer.Option("text", "--format", "-f", help="text, dot (Graphviz) or svg"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write to this file"),
) -> None:
    """Show a planned run's task graph, each task with its status."""
    store = RunStore.open_default()
    store.get_run(run_id)  # a clear error if there is no such run
    tasks = [Task.model_validate(t) for t in store.tasks(run_id)]
    if not tasks:
        raise AutonomaError(
            f"run {run_id} has no task graph (it was not started with --strategy plan)"
        )
    plan = TaskGraph(tasks=tasks)
    renderers = {"text": render_tree, "dot": lambda g: render_dot(g, run_id), "svg": render_svg}
    if format not in renderers:
        raise typer.BadParameter(f"--format is one of {', '.join(renderers)}, not {format!r}")
    text = renderers[format](plan)
    if output is not None:
        write_output(output, text if text.endswith("\n") else text + "\n")
        err.print(f"wrote {output}", highlight=False)
    elif format == "text":
        out.print(Text(neutralise_lines(text)))
    else:
        print(text, end="")


def write_output(path: Path, text: str) -> None:
    """`-o FILE`, or one line saying why it cannot be written."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise AutonomaError(f"cannot write {path}: {error.strerror or error}") from None


def export_command(
    run_id: str = typer.Argument(..., help="the run to export (with the runs serving it)"),
    format: str = typer.Option("jsonl", "--format", "-f", help="jsonl"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write to this file"),
) -> None:
    """Write a run's trajectories, one JSON line per trial (of it and of its tasks' and
    sub-agents' runs), with their feedback and outcomes, for fine-tuning."""
    if format not in FORMATS:
        raise typer.BadParameter(f"--format is one of {', '.join(FORMATS)}, not {format!r}")
    store = RunStore.open_default()
    lines = [
        json.dumps(record, ensure_ascii=False) + "\n" for record in trajectories(store, run_id)
    ]
    if output is not None:
        write_output(output, "".join(lines))
        said = "1 trajectory" if len(lines) == 1 else f"{len(lines)} trajectories"
        err.print(f"wrote {said} to {output}", highlight=False)
    else:
        sys.stdout.write("".join(lines))


def undo_command(
    run_id: str = typer.Argument(..., help="the run whose changes to the workspace to undo"),
    to_step: int = typer.Option(
        0, "--to-step", min=0, help="keep what steps up to N did (0: undo the whole run)"
    ),
    force: bool = typer.Option(
        False, "--force", help="also put back files changed after the run (by you or another)"
    ),
) -> None:
    """Put the run's workspace back as it was after step N: files it made are removed, files it
    changed or removed come back (`show` lists each step's changes)."""
    store = RunStore.open_default()
    record = store.get_run(run_id)
    ensure_free(store, run_id)  # never under a process that is driving the run
    journal = journal_of(store.path.parent, run_id, Path(record.workspace))
    if not journal.changes():
        out.print(f"run {run_id} recorded no changes to its workspace", highlight=False)
        return
    done = journal.undo(to_step, force=force)
    for line in done or [f"nothing changed after step {to_step}"]:
        out.print(Text(neutralise_lines(line)))
    asyncio.run(emit(store, (), run_id, Undone(to_step=to_step, done=done)))


def rate_command(
    run_id: str = typer.Argument(..., help="the run to rate"),
    score: int = typer.Argument(..., help="1 (bad) to 5 (good)"),
    comment: str = typer.Option("", "--comment", "-c", help="what was good or bad about it"),
) -> None:
    """Rate a run from 1 to 5, with a comment: later attempts at the task see it (hindsight),
    and export carries it."""
    if not 1 <= score <= 5:
        raise typer.BadParameter(f"SCORE is 1 to 5, not {score}")
    store = RunStore.open_default()
    store.get_run(run_id)  # a clear error if there is no such run
    asyncio.run(emit(store, (), run_id, Rated(score=score, comment=comment)))
    out.print(f"rated run {run_id} {score} of 5", highlight=False)


def schema_command(
    what: str = typer.Argument("events", help="events (what a run reports) or settings"),
) -> None:
    """Print the JSON Schema of a run's events or of its settings (docs/library.md)."""
    schemas = {"events": event_schema, "settings": RunSettings.model_json_schema}
    if what not in schemas:
        raise typer.BadParameter(f"schema is one of {', '.join(schemas)}, not {what!r}")
    print(json.dumps(schemas[what](), indent=2))
