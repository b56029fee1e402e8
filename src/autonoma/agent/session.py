"""Starting and resuming runs: the glue between a person's request, the store and the loop.

The CLI (and later the server) call these; they hold no display logic.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autonoma.agent.approval import Approver
from autonoma.agent.identity import (
    AgentIdentity,
    GeneratedIdentity,
    fallback_identity,
    generate_identity,
)
from autonoma.agent.loop import RunLoop
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.planned import PlanConfig, PlannedRun
from autonoma.agent.remote import placement
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import (
    OpenedSandbox,
    checks_sandbox,
    default_tools,
    open_sandbox,
    run_tools,
    tool_notices,
    tool_services,
)
from autonoma.errors import AutonomaError, ConfigError
from autonoma.llm import Model
from autonoma.llm.base import SIDE_LANE
from autonoma.memory.agent_memory import AgentMemory
from autonoma.memory.embeddings import Embedder, LexicalEmbedder, MiniLMEmbedder, default_embedder
from autonoma.memory.importance import HeuristicRater, ImportanceRater, ModelRater, Persona
from autonoma.memory.reflection import Reflector
from autonoma.memory.stream import MemoryStream
from autonoma.memory.summary import Summariser
from autonoma.planning.creation import TaskCreator
from autonoma.planning.decompose import Decomposer, Planner
from autonoma.planning.dedup import Deduplicator
from autonoma.planning.replan import Replanner
from autonoma.planning.tot import ToTDecomposer
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.runtime.events import Notice, RunFinished
from autonoma.runtime.lease import driving
from autonoma.runtime.sink import EventListener, emit
from autonoma.runtime.store import RunRecord, RunStore, default_home, new_run_id
from autonoma.tools import Tool, ToolRegistry, Workspace
from autonoma.tools.retrieval import ToolRetriever, needs_retrieval

if TYPE_CHECKING:
    from autonoma.planning.pddl import PddlDomain


def memory_path(store: RunStore, embedder: Embedder) -> Path:
    """Beside the run store, one memory store an embedder: records embedded by one model
    cannot be searched with another's vectors."""
    return store.path.parent / "memory" / f"{embedder.name}.db"


def choose_embedder(choice: str) -> tuple[Embedder, str | None]:
    """The embedder a run asks for, and a notice to show once if relevance is lexical only."""
    if choice == "minilm":
        return MiniLMEmbedder(), None
    if choice == "lexical":
        return LexicalEmbedder(), None
    return default_embedder()


def default_workspace(run_id: str) -> Path:
    return default_home() / "workspaces" / run_id


async def create_run(
    store: RunStore,
    model: Model,
    goal: str,
    settings: RunSettings,
    *,
    workspace: Path | None = None,
    identity: AgentIdentity | None = None,
    tools: ToolRegistry | None = None,
) -> tuple[RunRecord, str | None]:
    """A new stored run. Without an identity the model makes one from the goal; the second
    value says why it fell back to a plain one, if it did."""
    goal = goal.strip()
    if not goal:
        raise ConfigError("the goal is empty; say what the agent should achieve")
    run_id = new_run_id()
    root = Workspace(workspace or default_workspace(run_id)).root  # created, or a clear error
    fallback = None
    spent = BudgetSpent()
    if identity is None:
        tools = tools or default_tools(memory=settings.memory.enabled, subagents=settings.subagents)
        started = time.monotonic()
        made = await _identity_within(
            generate_identity(model.in_lane(SIDE_LANE), goal, tools, seed=settings.seed),
            settings.limits.max_seconds,
            goal,
        )
        identity, fallback = made.identity, made.fallback_reason
        spent = BudgetSpent(
            prompt_tokens=made.prompt_tokens,
            completion_tokens=made.completion_tokens,
            usd=made.cost_usd,
            seconds=time.monotonic() - started,  # the run's time limit counts it
        )
    run = await asyncio.to_thread(
        store.create_run,
        goal=goal,
        identity=identity.model_dump(),
        settings=settings.model_dump(),
        workspace=str(root),
        model=settings.model,
        run_id=run_id,
        spent=spent,
    )
    return run, fallback


async def _identity_within(
    making: Coroutine[Any, Any, GeneratedIdentity], seconds: float | None, goal: str
) -> GeneratedIdentity:
    """The identity, made within the run's time limit, else the goal as is (a hung model
    ran 28 s into a 3-second limit and the run was never stored); the run then ends at once
    as `budget_exhausted`, with an id to resume."""
    try:
        async with asyncio.timeout(seconds):
            return await making
    except TimeoutError:
        said = f"no identity within the run's time limit ({seconds:g}s); using the goal as is"
        return GeneratedIdentity(fallback_identity(goal), said)


def identity_from_options(
    goal: str, name: str | None, role: str | None, goals: list[str]
) -> AgentIdentity | None:
    """The person's own identity, if they gave any part of one (the rest is filled in)."""
    if name is None and role is None and not goals:
        return None
    if len(goals) > 5:
        raise ConfigError(f"at most five goals: --goal was given {len(goals)} times")
    values: dict[str, Any] = {
        "name": name or "AutonomaGPT",
        "role": role or "an autonomous agent that pursues the goal it is given",
        "goals": goals or [goal.strip()[:300]],
    }
    try:
        return AgentIdentity.model_validate(values)
    except ValueError as error:
        raise ConfigError(f"invalid identity: {error}".splitlines()[0]) from error


async def run_agent(
    store: RunStore,
    model: Model,
    run: RunRecord,
    *,
    approver: Approver | None = None,
    listeners: list[EventListener] | None = None,
    tools: ToolRegistry | None = None,
    embedder: Embedder | None = None,
    extra_tools: Sequence[Tool] = (),
) -> RunOutcome:
    """Run, or resume, a stored run with the settings it was started with, holding its lease
    (runtime/lease.py): RunBusy, before anything is opened, when another process drives it.
    `tools` replaces the commands the settings make; `extra_tools` are offered beside them."""
    async with driving(store, run.id):
        return await _run_leased(
            store, model, run, approver, listeners, tools, embedder, extra_tools
        )


async def _run_leased(
    store: RunStore,
    model: Model,
    run: RunRecord,
    approver: Approver | None,
    listeners: list[EventListener] | None,
    tools: ToolRegistry | None,
    embedder: Embedder | None,
    extra_tools: Sequence[Tool],
) -> RunOutcome:
    began = time.time()
    settings = RunSettings.stored(run.settings)
    dedup = settings.strategy == "plan" and settings.planning.create_tasks
    # MCP servers can bring many tools: retrieval may be needed although the built-ins fit
    sandbox = open_sandbox(settings)
    offered = tools or run_tools(settings, memory=settings.memory.enabled, sandbox=sandbox)
    offered_count = len(offered) + len(extra_tools)
    retrieval = bool(settings.tools.mcp) or needs_retrieval(offered_count, settings.tools.retrieval)
    if embedder is None and (settings.memory.enabled or dedup or retrieval):
        embedder = choose_embedder(settings.memory.embedder)[0]
    try:
        return await _run_with(
            store, model, run, settings, approver, listeners, tools, embedder, sandbox, extra_tools
        )
    except Exception as error:  # it could not start or go on: not left `running`; raised on
        if isinstance(error, AutonomaError):  # an MCP server, the model, the settings
            said = f"{error} (the run can be resumed)"
        else:  # a bug
            said = f"unexpected {type(error).__name__}: {str(error)[:300]} (the run can be resumed)"
        await _ended_failed(store, run, listeners, said, since=began)
        raise
    finally:
        if embedder is not None and not settings.memory.enabled:
            await embedder.aclose()  # with memory on, run_memory closes it


async def _ended_failed(
    store: RunStore,
    run: RunRecord,
    listeners: list[EventListener] | None,
    reason: str,
    *,
    since: float,
) -> None:
    """A run that stopped on an error its loop did not end it with: stored as failed, with
    the reason, so it is neither left `running` nor lost (resume takes it up again). One its
    loop ended after `since` (an error while closing up) keeps the loop's end."""
    current = await asyncio.to_thread(store.get_run, run.id)
    if current.status != "running" and current.updated_at >= since:
        return
    await asyncio.to_thread(store.set_status, run.id, "failed", reason, current.spent)
    await emit(store, listeners or [], run.id, RunFinished(status="failed", reason=reason))


async def _run_with(
    store: RunStore,
    model: Model,
    run: RunRecord,
    settings: RunSettings,
    approver: Approver | None,
    listeners: list[EventListener] | None,
    tools: ToolRegistry | None,
    embedder: Embedder | None,
    sandbox: OpenedSandbox,
    extra_tools: Sequence[Tool],
) -> RunOutcome:
    async with (
        run_memory(store, model, run, settings, embedder) as memory,
        placement(settings, store, model, approver, listeners, memory) as place,  # Ray: connected
        mcp_tools(settings if tools is None else None, Path(run.workspace)) as (served, skipped),
    ):
        registry = tools or run_tools(settings, memory=memory is not None, sandbox=sandbox)
        for added in [*served, *extra_tools]:
            registry.add(added)
        services = tool_services(settings, sandbox)
        notices = tool_notices(settings, sandbox) if tools is None else []
        notices += [Notice(kind="mcp_skipped", message=what) for what in skipped]
        if settings.limits.max_usd is not None and not getattr(model, "price_known", True):
            said = (
                f"--budget-usd is set, but no price is known for {model.name}: its cost counts "
                "as $0 and the limit never stops the run; give prices in the spec "
                "(?price_in=USD&price_out=USD per million tokens)"
            )
            notices.append(Notice(kind="price_unknown", message=said))
        for notice in notices:
            await emit(store, listeners or [], run.id, notice)
        retrieval = settings.tools.retrieval
        retrieving = embedder is not None and needs_retrieval(len(registry), retrieval)
        checking = checks_sandbox(settings, sandbox)
        summariser = Summariser(model.in_lane(SIDE_LANE)) if settings.memory.enabled else None

        def make_agent(limits: BudgetLimits) -> RunLoop:
            # one retriever a run: what its find_tools command found stays on offer in it
            retriever, offered = None, registry
            if retrieving and embedder is not None:
                offered = ToolRegistry(list(registry))
                retriever = ToolRetriever.from_settings(offered, embedder, retrieval)
                offered.add(retriever.find_tools())
            return RunLoop(
                model,
                offered,
                store,
                config=settings.agent_config(limits),
                approver=approver,
                listeners=listeners,
                memory=memory,
                summariser=summariser,
                retriever=retriever,
                services=services,
                sandbox=checking,
            )

        if settings.strategy == "loop":
            return await make_agent(settings.limits).run(run.id)
        planned = PlannedRun(
            store,
            make_planner(model, settings),
            make_agent,
            limits=settings.limits,
            config=PlanConfig(
                concurrency=settings.planning.concurrency,
                task_steps=settings.planning.task_steps,
                retries=settings.planning.task_retries,
                replans=settings.planning.replans,
            ),
            tools=place.tools or [tool.name for tool in registry],
            listeners=listeners,
            creator=TaskCreator(
                model, Deduplicator(embedder, model) if embedder is not None else None
            )
            if settings.planning.create_tasks
            else None,
            replanner=Replanner(model) if settings.planning.replans else None,
            executor=place.executor,
            run_task=place.run_task,
            sandbox=checking,
        )
        return await planned.run(run.id)


def make_planner(model: Model, settings: RunSettings) -> Planner:
    if settings.planning.planner == "tot":
        return ToTDecomposer(
            model,
            k=settings.planning.tot_k,
            depth=settings.planning.tot_depth,
            rate=settings.planning.tot_rate,
            search=settings.planning.tot_search,
        )
    if settings.planning.planner == "pddl":
        from autonoma.planning.pddl import PddlPlanner  # needs the planning extra

        return PddlPlanner(model, load_pddl_domain(settings))
    return Decomposer(model)


def load_pddl_domain(settings: RunSettings) -> PddlDomain:
    """The run's PDDL domain, shipped (by name) or from a .pddl file: a clear error if it
    cannot be read or parsed (the CLI asks before the run is made)."""
    from autonoma.planning.pddl import PddlDomain  # needs the planning extra

    name = settings.planning.pddl_domain
    if not name.endswith(".pddl"):
        return PddlDomain.load(name)
    try:
        return PddlDomain.from_file(Path(name))
    except OSError as error:
        raise ConfigError(f"cannot read the PDDL domain {name}: {error.strerror}") from None


@asynccontextmanager
async def mcp_tools(
    settings: RunSettings | None, workspace: Path
) -> AsyncIterator[tuple[list[Tool], list[str]]]:
    """The tools of the run's MCP servers, connected for as long as it runs, and what was left
    out (optional servers that failed, tools whose schema could not be used). A server that
    is not optional and cannot be reached stops the run here with an McpError naming it.
    Stdio servers start in the run's `workspace`, which `{workspace}` in their settings names."""
    if settings is None or not settings.tools.mcp:
        yield [], []
        return
    from autonoma.tools.mcp import McpTools  # needs the mcp extra

    connections = McpTools(settings.tools.mcp, workspace)
    async with connections as served:
        yield served, connections.skipped


@asynccontextmanager
async def run_memory(
    store: RunStore, model: Model, run: RunRecord, settings: RunSettings, embedder: Embedder | None
) -> AsyncIterator[AgentMemory | None]:
    """The run's long-term memory (None with memory off), closed (index saved) afterwards."""
    if not settings.memory.enabled:
        yield None
        return
    embedder = embedder or choose_embedder(settings.memory.embedder)[0]
    identity = AgentIdentity.model_validate(run.identity)
    persona = Persona(identity.name, identity.role)
    model = model.in_lane(SIDE_LANE)  # memory's calls keep out of the steps' cached prefix
    rater: ImportanceRater = (
        ModelRater(model, persona) if settings.memory.importance == "model" else HeuristicRater()
    )
    path = memory_path(store, embedder)
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = await asyncio.to_thread(MemoryStream, path, embedder)
    try:
        yield AgentMemory(
            stream,
            settings.memory.agent or run.id,
            run.id,
            rater,
            Reflector(model, stream, rater, persona),
        )
    finally:
        await asyncio.to_thread(stream.close)
        await embedder.aclose()
