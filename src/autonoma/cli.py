"""The command line. Errors are one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperArgument, TyperOption

from autonoma.agent.approval import Approver, RefuseWithoutTerminal
from autonoma.agent.display import neutralise_lines
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.remote import check_placement
from autonoma.agent.session import (
    choose_embedder,
    create_run,
    identity_from_options,
    load_pddl_domain,
    run_agent,
)
from autonoma.agent.settings import DEFAULT_MODEL, RunSettings
from autonoma.cli_inspect import (
    export_command,
    graph_command,
    rate_command,
    schema_command,
    show_command,
    undo_command,
)
from autonoma.cli_logging import own_logging
from autonoma.cli_models import fetch_progress, load_model
from autonoma.cli_runs import runs_app
from autonoma.cli_settings import (
    SAME_NAME,
    about,
    given,
    read_settings_file,
    run_settings,
    settings_laid_over,
    tool_settings_from,
    unused_options,
    user_config,
    user_defaults,
)
from autonoma.cli_sim import sim_app
from autonoma.cli_tools import tools_command
from autonoma.cli_view import (
    ConsoleApprover,
    LiveView,
    QuietView,
    identity_panel,
    short,
)
from autonoma.errors import AutonomaError, ConfigError
from autonoma.llm import Model
from autonoma.llm.registry import REGISTRY, ModelStore, lookup
from autonoma.redact import HIDDEN, redact
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.lease import ensure_free
from autonoma.runtime.store import RunRecord, RunStore, default_home
from autonoma.tools.settings import TOOL_GROUPS

app = typer.Typer(no_args_is_help=True, help="autonoma: autonomous agents")
models_app = typer.Typer(help="List and fetch embedded models.", invoke_without_command=True)
app.add_typer(models_app, name="models")
app.add_typer(runs_app, name="runs")
app.add_typer(sim_app, name="sim")

out = Console()
err = Console(stderr=True, soft_wrap=True)  # a message is one line, even piped


def show_version(asked: bool) -> None:
    if asked:
        print(f"autonoma {package_version('autonoma')}")
        raise typer.Exit(0)


@app.callback()
def options(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="show every library's log lines too (always in the log file)"
    ),
    version: bool = typer.Option(
        False, "--version", callback=show_version, is_eager=True, help="print the version"
    ),
) -> None:
    """autonoma: autonomous agents. Logs go to AUTONOMA_HOME/logs/autonoma.log."""
    own_logging(verbose, err)


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
def models_pull(
    name: str = typer.Argument(..., help="a registry model, by name or spec (`autonoma models`)"),
) -> None:
    """Fetch a model into the cache (once), checking its SHA-256."""
    name = name.removeprefix("local:")  # the spec `autonoma models` shows names it too
    model = lookup(name)
    store = ModelStore()
    if store.is_cached(name) or store.verify(name):
        out.print(f"{name} is already cached at {store.path_for(name)}")
        return
    with fetch_progress(name, model.size) as report:
        path = store.pull(name, progress=report)
    out.print(f"{name} fetched and verified: {path}")


# -- runs -----------------------------------------------------------------------------------

EXIT_CODES = {"completed": 0, "failed": 1, "budget_exhausted": 3, "incomplete": 4, "stopped": 130}


def choose_approver(continuous: bool, view_console: Console) -> Approver | None:
    """The person at the terminal, if there is one. A continuous run asks only when outside
    content has entered its context (unless the person trusts outside content)."""
    if not sys.stdin.isatty():
        return RefuseWithoutTerminal()
    return ConsoleApprover(view_console)


def limits_from(
    max_steps: int | None,
    max_tokens: int | None,
    budget_usd: float | None,
    max_minutes: float | None,
    base: BudgetLimits | None = None,
) -> BudgetLimits:
    """Budget limits from CLI options; options not given keep `base`'s values."""
    limits = (base or BudgetLimits()).model_copy()
    if max_steps is not None:
        limits.max_steps = max_steps
    if max_tokens is not None:
        limits.max_tokens = max_tokens
    if budget_usd is not None:
        limits.max_usd = budget_usd
    if max_minutes is not None:
        limits.max_seconds = max_minutes * 60
    return limits


def finish(outcome: RunOutcome, as_json: bool, view_console: Console) -> None:
    if as_json:
        print(json.dumps(outcome.to_json(), indent=2))
    else:
        style = {"completed": "green", "failed": "red"}.get(outcome.status, "yellow")
        line = Text(f"{outcome.status}", style=f"bold {style}")
        if outcome.reason:
            line.append(f": {outcome.reason}")
        view_console.print(line)
        spent = outcome.spent
        view_console.print(
            f"run {outcome.run_id} · {spent.steps} steps · {spent.tokens} tokens · "
            f"${spent.usd:.4f} · {spent.seconds:.0f}s · files: {', '.join(outcome.files) or '-'}",
            style="dim",
            highlight=False,
        )
    raise typer.Exit(EXIT_CODES.get(outcome.status, 1))


async def _start_and_drive(
    store: RunStore,
    llm: Model,
    view_console: Console,
    begin: Callable[[], Awaitable[RunRecord]],
    started: list[str],
    quiet: bool = False,
) -> RunOutcome:
    """Make or load the run, then drive it, all in one event loop; the model is always
    closed. The run's id is printed before the first step so a person can resume it (and
    kept in `started` for the line printed when they stop it)."""
    try:
        record = await begin()
        started.append(record.id)
        if quiet:
            view_console.print(Text(f"run {record.id} · {short(record.goal, 100)}"))
        else:
            view_console.print(identity_panel(record))
        settings = RunSettings.stored(record.settings)
        embedder = None
        if settings.memory.enabled:
            embedder, notice = choose_embedder(settings.memory.embedder)
            if notice:
                err.print(Text(notice, style="yellow"))
        return await run_agent(
            store,
            llm,
            record,
            approver=choose_approver(settings.continuous, view_console),
            listeners=[QuietView(view_console) if quiet else LiveView(view_console)],
            embedder=embedder,
        )
    finally:
        await llm.aclose()


def drive(
    store: RunStore,
    llm: Model,
    as_json: bool,
    begin: Callable[[], Awaitable[RunRecord]],
    quiet: bool = False,
) -> None:
    view_console = err if as_json else out
    started: list[str] = []
    try:
        outcome = asyncio.run(_start_and_drive(store, llm, view_console, begin, started, quiet))
    except KeyboardInterrupt:
        again = f"autonoma resume {started[0]}" if started else "autonoma runs, then resume"
        err.print(f"[yellow]stopped[/]; continue with: {again}", highlight=False)
        if as_json and started:
            print(json.dumps({"run_id": started[0], "status": "stopped", "reason": "interrupted"}))
        raise typer.Exit(130) from None
    except AutonomaError as error:  # the run could not start or go on; it is stored as failed
        said = redact(str(error))
        err.print(f"[red]error:[/] {said}", highlight=False)
        if as_json:
            run_id = started[0] if started else None
            print(json.dumps({"run_id": run_id, "status": "failed", "reason": said}))
        raise typer.Exit(1) from None
    finish(outcome, as_json, view_console)


@app.command()
def run(
    context: typer.Context,
    goal: str = typer.Argument(..., help="What the agent should achieve."),
    settings_file: Path | None = typer.Option(
        None,
        "--settings",
        help="A TOML or JSON file of run settings (docs/library.md); options given here win.",
    ),
    model: str = typer.Option(
        DEFAULT_MODEL,
        "--model",
        "-m",
        envvar="AUTONOMA_MODEL",
        help=about("model"),
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="The directory the agent works in (default: per run)."
    ),
    max_steps: int = typer.Option(30, "--max-steps", help=about("limits.max_steps")),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", help=about("limits.max_tokens"), rich_help_panel="Budget"
    ),
    budget_usd: float | None = typer.Option(
        None, "--budget-usd", help=about("limits.max_usd"), rich_help_panel="Budget"
    ),
    max_minutes: float | None = typer.Option(
        None,
        "--max-minutes",
        help="Minutes of wall clock, at most; a step in progress is cut at the limit.",
        rich_help_panel="Budget",
    ),
    continuous: bool = typer.Option(False, "--continuous", help=about("continuous")),
    as_json: bool = typer.Option(False, "--json", help="Print only a JSON result on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="One line per step."),
    name: str | None = typer.Option(
        None, "--name", help="The agent's name (skip generation).", rich_help_panel="Identity"
    ),
    role: str | None = typer.Option(
        None, "--role", help="The agent's one-line role.", rich_help_panel="Identity"
    ),
    goals: list[str] = typer.Option(
        [], "--goal", help="A concrete goal (up to 5).", rich_help_panel="Identity"
    ),
    seed: int | None = typer.Option(None, "--seed", help=about("seed")),
    memory: bool = typer.Option(
        True,
        "--memory/--no-memory",
        help=about("memory.enabled"),
        rich_help_panel="Memory",
    ),
    memory_of: str | None = typer.Option(
        None,
        "--memory-of",
        help=about("memory.agent"),
        rich_help_panel="Memory",
    ),
    importance: str = typer.Option(
        "model",
        "--importance",
        help=about("memory.importance"),
        rich_help_panel="Memory",
    ),
    embedder: str = typer.Option(
        "auto",
        "--embedder",
        envvar="AUTONOMA_EMBEDDER",
        help=about("memory.embedder"),
        rich_help_panel="Memory",
    ),
    strategy: str = typer.Option(
        "loop",
        "--strategy",
        help=about("strategy"),
        rich_help_panel="Planning",
    ),
    concurrency: int = typer.Option(
        4, "--concurrency", help=about("planning.concurrency"), rich_help_panel="Planning"
    ),
    task_steps: int = typer.Option(
        15,
        "--task-steps",
        help=about("planning.task_steps"),
        rich_help_panel="Planning",
    ),
    subagents: bool = typer.Option(
        False,
        "--subagents",
        help=about("subagents"),
        rich_help_panel="Planning",
    ),
    create_tasks: bool = typer.Option(
        False,
        "--create-tasks",
        help=about("planning.create_tasks"),
        rich_help_panel="Planning",
    ),
    replans: int = typer.Option(
        2,
        "--replans",
        help=about("planning.replans"),
        rich_help_panel="Planning",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help=about("planning.executor"),
        rich_help_panel="Planning",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help=about("planning.ray_address"),
        rich_help_panel="Planning",
    ),
    self_reflect: bool = typer.Option(
        False,
        "--self-reflect",
        help=about("self_reflect"),
        rich_help_panel="Reflection",
    ),
    trials: int = typer.Option(
        2,
        "--trials",
        help=about("trials"),
        rich_help_panel="Reflection",
    ),
    planner: str = typer.Option(
        "decompose",
        "--planner",
        help=about("planning.planner"),
        rich_help_panel="Planning",
    ),
    pddl_domain: str = typer.Option(
        "blocksworld",
        "--pddl-domain",
        help=about("planning.pddl_domain"),
        rich_help_panel="Planning",
    ),
    tot_rate: str = typer.Option(
        "value",
        "--tot-rate",
        help=about("planning.tot_rate"),
        rich_help_panel="Planning",
    ),
    tot_search: str = typer.Option(
        "bfs",
        "--tot-search",
        help=about("planning.tot_search"),
        rich_help_panel="Planning",
    ),
    tools: str = typer.Option(
        ",".join(TOOL_GROUPS),
        "--tools",
        help=about("tools.groups"),
    ),
    tool_settings: Path | None = typer.Option(
        None,
        "--tool-settings",
        help="A JSON or TOML file of tool settings: sandbox limits, web guard, MCP servers, "
        "tool retrieval (docs/tools.md).",
        rich_help_panel="Tools and trust",
    ),
    allow_hosts: list[str] = typer.Option(
        [],
        "--allow-host",
        help="Let web tools reach this private host or network (repeatable).",
        rich_help_panel="Tools and trust",
    ),
    unsafe_code: bool = typer.Option(
        False,
        "--unsafe-code",
        help="Run code WITHOUT the bubblewrap sandbox (rlimits only): only on a machine you "
        "can lose.",
        rich_help_panel="Tools and trust",
    ),
    trust_outside: bool = typer.Option(
        False,
        "--trust-outside",
        help="Continuous runs: do not ask before risky commands once web or API content is "
        "in the context.",
        rich_help_panel="Tools and trust",
    ),
    trust_workspace: bool = typer.Option(
        False,
        "--trust-workspace",
        help="The files in the workspace when the run starts are yours: they do not count as "
        "outside content (files others change during the run still do).",
        rich_help_panel="Tools and trust",
    ),
    actions: str | None = typer.Option(
        None,
        "--actions",
        help=about("actions"),
    ),
    checks: bool = typer.Option(
        True,
        "--checks/--no-checks",
        help=about("checks"),
    ),
) -> None:
    """Pursue GOAL with an autonomous agent, showing each step live."""
    if not goal.strip():
        raise typer.BadParameter("the goal is empty; say what the agent should achieve")
    store = RunStore.open_default()
    chosen = given(context)
    base = user_defaults() | (
        read_settings_file(settings_file, "the run settings") if settings_file else {}
    )
    tool_config = tool_settings_from(
        tool_settings,
        tools if "tools" in chosen else None,
        allow_hosts,
        unsafe_code,
        trust_outside,
        trust_workspace,
        base=base.get("tools"),
        base_path=settings_file,
    )
    options = {name: value for name, value in locals().items() if name in SAME_NAME}
    options["limits"] = {
        field: value
        for option, field, value in (
            ("max_steps", "max_steps", max_steps),
            ("max_tokens", "max_tokens", max_tokens),
            ("budget_usd", "max_usd", budget_usd),
            ("max_minutes", "max_seconds", max_minutes and max_minutes * 60),
        )
        if option in chosen
    }
    if memory_of is not None:
        options |= memory_continued(store, memory_of, base, chosen, memory, embedder)
        chosen |= {"memory_agent", "embedder"}
    source = settings_file or (user_config() if user_config().exists() else None)
    settings = run_settings(base, source, options, chosen, tool_config)
    unused = unused_options(settings, chosen)
    if unused:
        raise typer.BadParameter(unused)
    check_placement(settings)  # an unreachable Ray cluster fails here, before the run exists
    if settings.strategy == "plan" and settings.planning.planner == "pddl":
        load_pddl_domain(settings)  # so does a domain that cannot be read or parsed
    identity = identity_from_options(goal, name, role, goals)
    view_console = err if as_json else out
    llm = load_model(settings.model, settings.llm)

    async def begin() -> RunRecord:
        with view_console.status("choosing a name, a role and goals…"):
            record, fallback = await create_run(
                store, llm, goal, settings, workspace=workspace, identity=identity
            )
        if fallback:
            err.print(Text(fallback, style="yellow"))
        return record

    drive(store, llm, as_json, begin, quiet)


def memory_continued(
    store: RunStore,
    memory_of: str,
    base: dict[str, Any],
    chosen: set[str],
    memory: bool,
    embedder: str,
) -> dict[str, Any]:
    """The options --memory-of sets: whose memory, and the embedder it was made with (a
    memory is kept per embedder); refused with memory off or another --embedder."""
    in_file = base.get("memory", True)
    if isinstance(in_file, dict):
        in_file = in_file.get("enabled", True)
    if not (memory if "memory" in chosen else in_file):
        raise typer.BadParameter(unused_options(RunSettings(memory=False), {"memory_of"}))
    owner = memory_owner(store, memory_of)  # an unknown run is one line here
    theirs = RunSettings.stored(store.get_run(memory_of).settings).memory.embedder
    if "embedder" in chosen and embedder != theirs:
        raise typer.BadParameter(
            f"--memory-of {memory_of} continues a memory made with the {theirs} embedder; "
            f"--embedder {embedder} would read an empty one"
        )
    return {"memory_agent": owner, "embedder": theirs}


def memory_owner(store: RunStore, run_id: str | None) -> str | None:
    """Whose memory a run continues: the earlier run's own owner (memory passes down)."""
    if run_id is None:
        return None
    earlier = store.get_run(run_id)  # a clear error if there is no such run
    return RunSettings.stored(earlier.settings).memory.agent or earlier.id


@app.command()
def resume(
    run_id: str = typer.Argument(..., help="the run to continue (autonoma runs lists them)"),
    model: str | None = typer.Option(None, "--model", "-m", help="use another model spec"),
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, help="this many more steps than the run has taken"
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="this many more tokens than it has spent"
    ),
    budget_usd: float | None = typer.Option(
        None, "--budget-usd", min=0, help="this much more USD than it has spent"
    ),
    max_minutes: float | None = typer.Option(
        None, "--max-minutes", min=0.01, help="this many more minutes than it has run"
    ),
    as_json: bool = typer.Option(False, "--json", help="print only a JSON result on stdout"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="one line per step"),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="a run with --executor ray: join this cluster instead"
    ),
    tool_settings: Path | None = typer.Option(
        None,
        "--tool-settings",
        help="new tool settings for the run (a server that would not start, say), in place of "
        "the stored ones",
    ),
    settings_file: Path | None = typer.Option(
        None,
        "--settings",
        help="a TOML or JSON file of run settings laid over the stored ones, key by key (model "
        "timeouts in [llm], say); the options above apply after it",
    ),
    continuous: bool | None = typer.Option(
        None,
        "--continuous/--approve",
        help="go on without asking (or ask again) for risky commands",
        show_default=False,
    ),
) -> None:
    """Continue a run that was stopped, killed, failed or ran out of budget (raise its limits
    with the same options as run, or mend its model or tool settings)."""
    store = RunStore.open_default()
    record = store.get_run(run_id)
    if record.status == "completed":
        raise AutonomaError(f"run {run_id} is already completed; start a new one with run")
    ensure_free(store, run_id)  # said before its settings are touched
    settings = RunSettings.stored(record.settings)
    if settings_file is not None:
        settings = settings_laid_over(settings, settings_file)
    spent = store.total_spent(record)  # resume's limits are more on top of what is spent
    settings.limits = limits_from(
        max_steps and spent.steps + max_steps,
        max_tokens and spent.tokens + max_tokens,
        budget_usd if budget_usd is None else spent.usd + budget_usd,
        max_minutes and spent.seconds / 60 + max_minutes,
        settings.limits,
    )
    if model is not None:
        settings.model = model
    elif HIDDEN in settings.model:
        raise ConfigError(
            f"run {run_id}'s model spec held a credential, which is never stored "
            f"({settings.model}); give it again: autonoma resume {run_id} --model SPEC"
        )
    if ray_address is not None:
        settings.planning.ray_address = ray_address
    if tool_settings is not None:
        named = "groups" in read_settings_file(tool_settings, "the tool settings")
        groups = None if named else ",".join(settings.tools.groups) or "none"
        settings.tools = tool_settings_from(tool_settings, groups, [], False, False)
    if continuous is not None:
        settings.continuous = continuous
    check_placement(settings)
    store.set_settings(run_id, settings.model_dump())  # stored without the credential
    llm = load_model(settings.model, settings.llm)

    async def begin() -> RunRecord:
        return await asyncio.to_thread(store.get_run, run_id)

    drive(store, llm, as_json, begin, quiet)


for name, command in (
    ("show", show_command),
    ("graph", graph_command),
    ("export", export_command),
    ("undo", undo_command),
    ("rate", rate_command),
    ("tools", tools_command),
    ("schema", schema_command),
):
    app.command(name)(command)


def plain_metavars(command: Any) -> Any:
    """Help that reads as the command line is typed: nothing after a flag (not `<bool>`,
    which invited `--json true`), TEXT for a repeated option (not `<list[str]>`), and an
    argument in capitals (GOAL); a docstring's lines joined into paragraphs, which the
    terminal wraps. `command` is typer's click command."""
    if command.help:
        command.help = re.sub(r"(?<!\n)\n(?!\n)", " ", inspect.cleandoc(command.help))
    for param in command.params:
        if isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
        elif isinstance(param, TyperOption) and param.multiple:
            param.metavar = "TEXT"
        elif isinstance(param, TyperArgument):
            param.metavar = (param.name or "value").upper()
            # the usage line as click and argparse write it: GOAL, not typer's {GOAL}
            param.get_usage_pieces = _usage_as_typed(param)  # type: ignore[method-assign,assignment]
            if param.nargs != 1:  # TEXT..., as for a repeated option, not <list[str]>
                param.display_type_rich = lambda ctx: "TEXT..."  # type: ignore[method-assign]
    command.get_help_option = _plain_help(command.get_help_option)
    for inner in getattr(command, "commands", {}).values():
        plain_metavars(inner)
    return command


def _usage_as_typed(argument: TyperArgument) -> Callable[[Any], list[str]]:
    shown = argument.metavar if argument.required else f"[{argument.metavar}]"
    return lambda ctx: [f"{shown}..." if argument.nargs != 1 else str(shown)]


def _plain_help(made: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """click makes --help when help is shown, after plain_metavars has run: plain it then."""

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            option.metavar = ""
        return option

    return get_help_option


def run_app() -> None:
    """The command line, its help tidied (plain_metavars). A bad option, argument or
    setting is one line saying what is wrong and where help is (click's usage lines and a
    box around the message were three to six lines for one mistake)."""
    command = plain_metavars(typer.main.get_command(app))
    try:
        code = command.main(prog_name="autonoma", standalone_mode=False)
    except typer.TyperException as error:  # click's errors, as typer ships click
        if not hasattr(error, "ctx"):  # not a usage error: as click shows it
            error.show()  # type: ignore[attr-defined]
            sys.exit(getattr(error, "exit_code", 1))
        bare = isinstance(error, typer.BadParameter) and not (error.param or error.param_hint)
        said = error.message if bare else error.format_message()
        if not said.strip():  # no arguments at all: the help was shown
            sys.exit(getattr(error, "exit_code", 2))
        where = error.ctx.command_path if error.ctx is not None else "autonoma"
        line = " ".join(f"{said} (see {where} --help)".split())
        err.print(Text.assemble(("error:", "red"), f" {line}"), highlight=False)
        sys.exit(getattr(error, "exit_code", 2))
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    if isinstance(code, int) and code:
        sys.exit(code)


def main() -> None:
    try:
        run_app()
    except AutonomaError as error:
        err.print(f"[red]error:[/] {redact(str(error))}", highlight=False)
        json_failure(redact(str(error)))
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
    except Exception as error:  # the net under every other error path: one line, not a dump
        where = write_crash_report(error)
        said = neutralise_lines(redact(str(error)))[:300]
        err.print(
            f"[red]error:[/] unexpected {type(error).__name__}: {said}"
            f" (a bug in autonoma; the full traceback is in {where})",
            highlight=False,
        )
        json_failure(f"unexpected {type(error).__name__}: {said}")
        sys.exit(1)


def json_failure(reason: str) -> None:
    """With --json, a script reads a status object on every end: this one when the command
    failed before a run could report its own."""
    if "--json" in sys.argv[1:] and sys.argv[1:2] in (["run"], ["resume"]):
        print(json.dumps({"run_id": None, "status": "failed", "reason": reason}))


def write_crash_report(error: BaseException) -> str:
    """The traceback of an unexpected error, written beside the run store (or to the temporary
    directory when the store's home is unusable); where it went."""
    text = redact("".join(traceback.format_exception(error)))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    for folder in (default_home() / "logs", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
            return str(folder / name)
        except OSError:
            continue
    return "nowhere (no folder could be written)"
