"""`autonoma sim`: make a town from a world and its personas, run it (each persona seeing,
remembering, planning its day and walking to it) and resume it, list the sims, show one at
any stored step (the map, who is where doing what, what a persona knows), and change an
object's state while it runs (docs/sim.md)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from autonoma.agent.session import choose_embedder
from autonoma.agent.settings import DEFAULT_MODEL
from autonoma.cli_models import load_model
from autonoma.errors import AutonomaError, ConfigError
from autonoma.llm import Model
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.sim.clock import DEFAULT_START, GameClock
from autonoma.sim.evaluate import (
    CATEGORIES,
    CONDITIONS,
    FULL,
    Evaluation,
    accuracy_of,
    evaluate,
)
from autonoma.sim.interview import interview, whisper
from autonoma.sim.measure import measure
from autonoma.sim.memory import TownMemory, stored_memories, town_raters
from autonoma.sim.persona import load_personas, shipped_personas
from autonoma.sim.runner import SimRun, run_sim
from autonoma.sim.scenario import (
    SHIPPED_SCENARIOS,
    ScenarioSpec,
    check_scenario,
    load_scenario,
)
from autonoma.sim.store import Sim, SimStore
from autonoma.sim.world import SEPARATOR, SHIPPED, World, load_world, shipped_world

sim_app = typer.Typer(help="The town of generative agents (docs/sim.md).", no_args_is_help=True)
out = Console()
err = Console(stderr=True, soft_wrap=True)  # a message is one line, even piped


def _world(given: str) -> tuple[World, str | None]:
    """A shipped town by name, or a world file; the shipped name, if it is one."""
    if given in SHIPPED:
        return shipped_world(given), given
    path = Path(given)
    if not path.exists() and not path.suffix:
        raise AutonomaError(f"no world {given!r}: name one of {', '.join(SHIPPED)} or a file")
    return load_world(path), None


@sim_app.command("new")
def sim_new(
    world: str = typer.Argument(..., help=f"a shipped town ({', '.join(SHIPPED)}) or a world file"),
    personas: Path | None = typer.Option(
        None, "--personas", help="a folder of persona files (default: the shipped town's)"
    ),
    name: str | None = typer.Option(None, "--name", help="the sim's name (default: made up)"),
    start: str = typer.Option(
        DEFAULT_START.strftime("%Y-%m-%d %H:%M"), "--start", help="the game time of step 0"
    ),
    step_seconds: int = typer.Option(
        10, "--step-seconds", min=1, max=3600, help="game seconds a step"
    ),
    scenario: str | None = typer.Option(
        None, "--scenario", help=f"seed it: {', '.join(SHIPPED_SCENARIOS)} or a scenario file"
    ),
) -> None:
    """Make a sim: the town at step 0, each persona at home."""
    town, shipped = _world(world)
    if personas is None and shipped is None:
        raise typer.BadParameter("a world file needs --personas FOLDER (docs/sim.md)")
    people = load_personas(personas, town) if personas else shipped_personas(str(shipped), town)
    clock = GameClock(GameClock().parse(start), step_seconds)
    slug = re.sub(r"[^a-z0-9]+", "-", town.name.lower()).strip("-")
    chosen = name or f"{slug}-{time.strftime('%m%d-%H%M%S')}"
    seeded = load_scenario(scenario) if scenario else None
    if seeded is not None:
        check_scenario(seeded, town, people, clock)
    store = SimStore.open_default()
    sim = store.create(chosen, town, people, clock)
    if seeded is not None:  # its whispers are told as the sim first runs
        store.save(sim, "scenario", seeded.model_dump())
    out.print(
        Text(
            f"sim {sim.record.name}: {town.name}, {len(people)} personas, "
            f"{clock.describe(0)} ({clock.step_seconds} game seconds a step)"
        )
    )


@sim_app.command("list")
def sim_list(
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """The sims, newest first."""
    store = SimStore.open_default()
    records = store.records()
    if as_json:
        print(json.dumps([
            {"id": r.id, "name": r.name, "world": r.world, "personas": r.personas,
             "step": r.step, "game_time": r.clock.at(r.step).isoformat()}
            for r in records
        ], indent=2))  # fmt: skip
        return
    if not records:
        out.print("no sims yet; make one with: autonoma sim new small_town")
        return
    table = Table(title="sims")
    for column in ("name", "world", "personas", "step", "game time"):
        table.add_column(column)
    for r in records:
        table.add_row(r.name, r.world, str(len(r.personas)), str(r.step), r.clock.describe(r.step))
    out.print(table)


@sim_app.command("show")
def sim_show(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    persona: str | None = typer.Option(None, "--persona", help="one persona in full"),
    step: int | None = typer.Option(None, "--step", min=0, help="a past step (default: now)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """A sim at a step: the map with each persona's initial, and where each one is."""
    loaded = SimStore.open_default().load(sim, step)
    if persona is not None:
        _show_persona(loaded, persona, as_json)
        return
    if as_json:
        state = loaded.state() | {
            "step": loaded.step,
            "game_time": loaded.clock.at(loaded.step).isoformat(),
        }
        print(json.dumps(state, indent=2))
        return
    out.print(Text(f"{loaded.record.name}: {loaded.world.name}, step {loaded.step}, "
                   f"{loaded.clock.describe(loaded.step)}", style="bold"))  # fmt: skip
    out.print(Text(loaded.world.render({p.name: p.tile for p in loaded.personas})))
    table = Table()
    for column in ("", "persona", "where", "doing"):
        table.add_column(column)
    for p in loaded.personas:
        where = loaded.world.place_at(p.tile).address or "the street"
        table.add_row(p.name[:1].upper(), p.name, where, p.action)
    out.print(table)


def _show_persona(sim: Sim, name: str, as_json: bool) -> None:
    person = sim.persona(name)
    where = sim.world.place_at(person.tile).address or "the street"
    if as_json:
        print(json.dumps({
            **person.spec.model_dump(), "home": person.home, "tile": list(person.tile),
            "where": where, "knows": person.spatial.to_json(), "action": person.action,
            "schedule": person.schedule.to_json(),
        }, indent=2))  # fmt: skip
        return
    out.print(Text(person.spec.identity()))
    out.print(Text(f"Home: {person.home}\nNow at: {where} {list(person.tile)}"))
    out.print(Text(f"Doing: {person.action}"))
    if person.schedule.plan:
        out.print(Text(f"Plan for {person.schedule.day}:\n  " + "\n  ".join(person.schedule.plan)))
    out.print(Text("Knows:\n  " + person.spatial.describe().replace("\n", "\n  ")))
    out.print(Text("Seed memories:\n  " + "\n  ".join(person.spec.seed_memories())))


@sim_app.command("set")
def sim_set(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    thing: str = typer.Argument(
        ..., help=f"an object's address, e.g. 'Hobbs Cafe{SEPARATOR}kitchen{SEPARATOR}oven'"
    ),
    state: str = typer.Argument(..., help="its new state in words, e.g. 'on fire'"),
) -> None:
    """Change an object's state in words; personas who see it will notice."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    address = loaded.world.set_state(thing, state)
    said = loaded.world.states[address]
    store.save(loaded, "object_set", {"object": address, "state": said, "by": "person"})
    out.print(
        Text(f"{address} is now {said} (step {loaded.step}, {loaded.clock.describe(loaded.step)})")
    )


# the options every command that thinks with the model takes
ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        envvar="AUTONOMA_MODEL",
        help="the model every persona thinks with (default: the embedded default model)",
    ),
]
EmbedderOption = Annotated[
    str, typer.Option("--embedder", envvar="AUTONOMA_EMBEDDER", help="auto, minilm or lexical")
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, help="stop once this run's model calls spent this many"),
]
MaxUsdOption = Annotated[
    float | None, typer.Option("--max-usd", min=0, help="stop once this run spent this much")
]


@sim_app.command("run")
def sim_run(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    steps: int | None = typer.Option(None, "--steps", min=1, help="how many steps to take"),
    until: str | None = typer.Option(
        None, "--until", help="a game time to run to: 'day 2 08:00' or '2023-02-14 08:00'"
    ),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
    max_tokens: MaxTokensOption = None,
    max_usd: MaxUsdOption = None,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Run a sim for --steps N or --until a game time, storing every step."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    if (steps is None) == (until is None):
        raise typer.BadParameter("give --steps N or --until 'day 2 08:00' (one of them)")
    target = loaded.step + steps if steps else loaded.clock.step_of(loaded.clock.parse(str(until)))
    if target <= loaded.step:
        raise ConfigError(
            f"{sim} is at {loaded.clock.describe(loaded.step)} already; --until a later time"
        )
    limits = BudgetLimits(max_tokens=max_tokens, max_usd=max_usd)
    _run(store, loaded, model, embedder, target, quiet, limits)


@sim_app.command("resume")
def sim_resume(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
    max_tokens: MaxTokensOption = None,
    max_usd: MaxUsdOption = None,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Go on with a sim that was stopped or killed, to the step its last run was to reach."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    target = store.target(loaded.record)
    if target is None or target <= loaded.step:
        raise ConfigError(f"{loaded.record.name} has no unfinished run; use sim run --steps N")
    limits = BudgetLimits(max_tokens=max_tokens, max_usd=max_usd)
    _run(store, loaded, model, embedder, target, quiet, limits)


def _run(
    store: SimStore,
    sim: Sim,
    model: str,
    embedder: str,
    target: int,
    quiet: bool,
    limits: BudgetLimits,
) -> None:
    chosen, notice = choose_embedder(embedder)
    if notice and not quiet:
        err.print(Text(notice))
    llm = load_model(model)
    first = sim.step
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True, disable=quiet) as bar:
        task = bar.add_task(sim.clock.describe(sim.step), total=target - first)

        def shown(now: Sim, spent: BudgetSpent) -> None:
            doing = "; ".join(f"{p.name.split()[0]}: {p.action}" for p in now.personas[:3])
            said = f"{now.clock.describe(now.step)} | {spent.tokens:,} tokens | {doing}"
            bar.update(task, completed=now.step - first, description=said[:160])

        async def go() -> SimRun:
            try:
                return await run_sim(store, sim, llm, chosen, target, shown, limits=limits)
            finally:
                await llm.aclose()

        ran = asyncio.run(go())
    out.print(Text(
        f"{sim.record.name}: {ran.steps} steps to {sim.clock.describe(sim.step)} "
        f"in {ran.seconds:.0f} s, {ran.spent.tokens:,} tokens"
    ))  # fmt: skip
    if ran.stopped:
        out.print(Text(f"stopped: {ran.stopped}; `autonoma sim resume {sim.record.name}` goes on"))


@sim_app.command("interview")
def sim_interview(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    persona: str = typer.Argument(..., help="whom to ask, e.g. 'Isabella Rodriguez'"),
    question: str = typer.Argument(..., help="the question, e.g. 'Who is John Lin?'"),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Ask a persona a question; answered in character from its memories, the clock still."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    person = loaded.persona(persona)
    now = loaded.clock.at(loaded.step)

    async def ask() -> tuple[str, BudgetSpent]:
        spent = BudgetSpent()
        async with _mind(store, loaded, model, embedder) as (llm, memory):
            await memory.seed(person, loaded.clock.at(0), spent)  # if the sim never ran
            said = await interview(llm, memory, loaded.world, person, question, now, spent)
        return said, spent

    answer, spent = asyncio.run(ask())
    store.save(loaded, "interview", {
        "persona": person.name, "question": question, "answer": answer, "tokens": spent.tokens,
    })  # fmt: skip
    if as_json:
        print(json.dumps({"persona": person.name, "question": question, "answer": answer,
                          "step": loaded.step, "tokens": spent.tokens}, indent=2))  # fmt: skip
        return
    out.print(Text(f"{person.name}: {answer}"))


@sim_app.command("whisper")
def sim_whisper(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    persona: str = typer.Argument(..., help="to whom"),
    statement: str = typer.Argument(
        ..., help="a thought in the persona's head, e.g. 'You are going to run for mayor'"
    ),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
) -> None:
    """The paper's inner voice: a statement stored as the persona's own thought."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    person = loaded.persona(persona)
    now = loaded.clock.at(loaded.step)

    async def tell() -> int:
        spent = BudgetSpent()
        async with _mind(store, loaded, model, embedder) as (_, memory):
            await memory.seed(person, loaded.clock.at(0), spent)  # if the sim never ran
            record = await whisper(memory, person, statement, now, spent)
        return record.importance

    importance = asyncio.run(tell())
    store.save(loaded, "whisper", {"persona": person.name, "statement": statement})
    out.print(Text(f"{person.name} now thinks: {' '.join(statement.split())} "
                   f"(importance {importance})"))  # fmt: skip


@sim_app.command("evaluate")
def sim_evaluate(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    personas: list[str] = typer.Option(
        [], "--persona", help="whom to interview (repeatable; default: everyone)"
    ),
    ablation: bool = typer.Option(
        False, "--ablation", help="also answer with less memory, as the paper's ablation does"
    ),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The paper's interviews: 25 questions in five categories a persona, answered in
    character, checked by rule where the sim holds the answer; accuracy per category."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    chosen = [loaded.persona(name) for name in personas] or loaded.personas
    conditions = CONDITIONS if ablation else (FULL,)
    path = store.memory_path(loaded.record)

    async def go() -> tuple[list[Evaluation], BudgetSpent]:
        spent, done = BudgetSpent(), []
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        async with _mind(store, loaded, model, embedder) as (llm, memory):
            with Progress(*columns, console=err, transient=True) as bar:
                task = bar.add_task("interviews", total=len(chosen) * len(conditions))
                for person in chosen:
                    await memory.seed(person, loaded.clock.at(0), spent)  # if it never ran
                    texts = [r.text for r in stored_memories(path, person.name, 5000)]
                    for condition in conditions:
                        bar.update(task, description=f"{person.name}, {condition}")
                        done.append(await evaluate(
                            llm, memory, loaded, person, condition, texts, spent
                        ))  # fmt: skip
                        bar.advance(task)
        return done, spent

    evaluations, spent = asyncio.run(go())
    for done in evaluations:
        store.save(loaded, "evaluation", done.to_json() | {"step": loaded.step})
    totals = {c: accuracy_of([e for e in evaluations if e.condition == c]) for c in conditions}
    if as_json:
        print(json.dumps({
            "sim": loaded.record.name, "step": loaded.step, "tokens": spent.tokens,
            "accuracy": {c: {k: list(v) for k, v in t.items()} for c, t in totals.items()},
            "evaluations": [e.to_json() for e in evaluations],
        }, indent=2))  # fmt: skip
        return
    table = Table(title=f"{loaded.record.name} at {loaded.clock.describe(loaded.step)}: "
                  "right / checked")  # fmt: skip
    table.add_column("category")
    for condition in conditions:
        table.add_column(condition)
    for category in CATEGORIES:
        cells = []
        for condition in conditions:
            right, checked = totals[condition][category]
            cells.append(f"{right}/{checked}" + (f" ({right / checked:.0%})" if checked else ""))
        table.add_row(category, *cells)
    out.print(table)
    unchecked = sum(a.right is None for e in evaluations for a in e.answers)
    out.print(Text(f"{unchecked} answers are not checked by rule (stored with the sim: "
                   f"sim show {loaded.record.name} --json); {spent.tokens:,} tokens"))  # fmt: skip


@sim_app.command("measure")
def sim_measure(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The paper's town figures for a sim made with --scenario: how far each seeded fact
    spread (every persona interviewed), how dense acquaintance grew, who came to its events."""
    store = SimStore.open_default()
    loaded = store.load(sim)
    stored = store.scenario(loaded.record)
    if stored is None:
        raise AutonomaError(f"{loaded.record.name} was made without --scenario: nothing to measure")
    scenario = ScenarioSpec.model_validate(stored)

    async def go() -> tuple[dict[str, Any], BudgetSpent]:
        spent = BudgetSpent()
        async with _mind(store, loaded, model, embedder) as (llm, memory):
            for person in loaded.personas:  # a sim never run: its seed memories and whispers
                told = [said for who, said in store.whispers(loaded.record) if who == person.name]
                await memory.seed(person, loaded.clock.at(0), spent, whispers=told)
            with err.status(f"interviewing {len(loaded.personas)} personas..."):
                return await measure(llm, memory, store, loaded, scenario, spent), spent

    figures, spent = asyncio.run(go())
    store.save(loaded, "measure", figures | {"tokens": spent.tokens})
    if as_json:
        print(json.dumps(figures | {"tokens": spent.tokens}, indent=2))
        return
    out.print(Text(f"{loaded.record.name} at {figures['time']} ({scenario.name})"))
    for fact in figures["facts"]:
        who = ", ".join(fact["knows_now"]) or "no one"
        out.print(Text(f"knows of the {fact['fact']}: {fact['share_at_start']:.0%} at the "
                       f"start, {fact['share_now']:.0%} now ({who})"))  # fmt: skip
    density = figures["density"]
    out.print(Text(f"acquaintance density: {density['start']:.3f} at the start, "
                   f"{density['now']:.3f} now"))  # fmt: skip
    for event in figures["events"]:
        when = "" if event["reached"] else " (not over yet)"
        came = ", ".join(event["came"]) or "no one"
        invited = (
            f"; of the {len(event['knew'])} who knew of it, {len(event['knew_and_came'])} came"
            if "knew" in event else ""
        )  # fmt: skip
        out.print(Text(f"at the {event['event']} ({event['place']}){when}: {came}{invited}"))
    out.print(Text(f"{spent.tokens:,} tokens"))


@sim_app.command("serve")
def sim_serve(
    sim: str = typer.Argument(..., help="the sim's name or id"),
    host: str = typer.Option("127.0.0.1", "--host", help="the address to listen on"),
    port: int = typer.Option(8000, "--port", help="the port to listen on"),
    model: ModelOption = DEFAULT_MODEL,
    embedder: EmbedderOption = "auto",
) -> None:
    """The town's viewer in the browser: the map and its personas, live while the sim runs,
    every stored step to scrub through, each persona's plan, memories and reflections, and
    interviews (the model is opened at the first)."""
    import uvicorn

    from autonoma.server.app import create_app

    store = SimStore.open_default()
    shown = store.load(sim).record.name
    chosen, _ = choose_embedder(embedder)
    opened: list[Model] = []
    opening = asyncio.Lock()

    async def interviewer(at: Sim, persona: str, question: str) -> str:
        async with opening:
            if not opened:
                opened.append(load_model(model))
        llm, person, spent = opened[0], at.persona(persona), BudgetSpent()
        stream = MemoryStream(store.memory_path(at.record), chosen)
        try:
            memory = TownMemory(stream, town_raters(llm, at.personas))
            await memory.seed(person, at.clock.at(0), spent)  # if the sim never ran
            now = at.clock.at(at.step)
            answer = await interview(llm, memory, at.world, person, question, now, spent)
        finally:
            stream.close()
        store.save(at, "interview", {
            "persona": person.name, "question": question, "answer": answer,
            "tokens": spent.tokens, "from": "viewer",
        })  # fmt: skip
        return answer

    async def closing() -> None:
        for llm in opened:
            await llm.aclose()

    app = create_app(store, interviewer, closing)
    try:  # bound before the address is printed: a port in use is one line, not uvicorn's log
        listening = socket.create_server((host, port))
    except OSError as error:
        raise AutonomaError(f"cannot serve on {host}:{port}: {error.strerror or error}") from None
    out.print(Text(f"the town's viewer: http://{host}:{port}/sims/{shown} (Ctrl-C stops it)"))
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


@asynccontextmanager
async def _mind(
    store: SimStore, sim: Sim, model: str, embedder: str
) -> AsyncIterator[tuple[Model, TownMemory]]:
    """The sim's model and its personas' memories, closed after use."""
    chosen, _ = choose_embedder(embedder)
    llm = load_model(model)
    stream = MemoryStream(store.memory_path(sim.record), chosen)
    try:
        yield llm, TownMemory(stream, town_raters(llm, sim.personas))
    finally:
        stream.close()
        await llm.aclose()
