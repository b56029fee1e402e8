"""Starting and resuming runs: the glue between a person's request, the store and the loop.

The CLI (and later the server) call these; they hold no display logic.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from autonoma.agent.approval import Approver
from autonoma.agent.identity import AgentIdentity, generate_identity
from autonoma.agent.loop import Agent, AgentConfig, EventListener, RunOutcome
from autonoma.agent.memory_tools import MEMORY_TOOLS
from autonoma.agent.planned import PlanConfig, PlannedRun
from autonoma.agent.remote import placement
from autonoma.agent.subagents import SUB_AGENT_TOOLS
from autonoma.errors import ConfigError
from autonoma.llm import Model
from autonoma.llm.base import SIDE_LANE
from autonoma.llm.registry import default_actions
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
from autonoma.runtime.lease import driving
from autonoma.runtime.store import RunRecord, RunStore, default_home, new_run_id
from autonoma.tools import CORE_TOOLS, Tool, ToolRegistry, Workspace
from autonoma.tools.calculator import calculator
from autonoma.tools.code import CODE_TOOLS
from autonoma.tools.egress import EgressGuard
from autonoma.tools.person import ask_person
from autonoma.tools.retrieval import ToolRetriever, needs_retrieval
from autonoma.tools.sandbox import Sandbox, SandboxUnavailable, make_sandbox
from autonoma.tools.settings import ToolSettings
from autonoma.tools.web import WEB_TOOLS

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
"""The embedded model that achieved the demo goal on a 2-core laptop (docs/benchmarks.md)."""


class RunSettings(BaseModel):
    """What a run was started with; stored with it so `resume` continues the same way."""

    model: str = DEFAULT_MODEL
    limits: BudgetLimits = Field(default_factory=BudgetLimits)
    continuous: bool = False
    seed: int | None = None  # sampling seed, for runs that can be replayed exactly
    memory: bool = True  # long-term memory, reflection and the model's rolling summary
    memory_agent: str | None = None  # whose memory: default the run's own (its id)
    importance: Literal["model", "heuristic"] = "model"
    embedder: Literal["auto", "minilm", "lexical"] = "auto"
    strategy: Literal["loop", "plan"] = "loop"  # one agent loop, or a planned task graph
    concurrency: int = Field(4, ge=1)  # planned: tasks running at once
    task_steps: int = Field(15, ge=1)  # planned: step limit of one attempt at a task
    task_retries: int = Field(1, ge=0)  # planned: further attempts at a failed task
    subagents: bool = False  # the start_agent, message_agent, ... commands
    create_tasks: bool = False  # planned: after each result the model may add and re-order
    replans: int = Field(2, ge=0)  # planned: revisions of the rest after a task fails for good
    executor: Literal["local", "ray"] = "local"  # planned: where tasks run (docs/planning.md)
    ray_address: str | None = None  # executor ray: a cluster to join; default: start Ray here
    tools: ToolSettings = Field(default_factory=ToolSettings)
    # planned: how the goal becomes a graph: one structured answer (decompose), the best of
    # several rated ones (tot: Tree of Thoughts), or a PDDL problem solved by a planner (pddl)
    planner: Literal["decompose", "tot", "pddl"] = "decompose"
    pddl_domain: str = "blocksworld"  # a shipped domain's name or a .pddl file
    tot_k: int = Field(3, ge=1, le=8)  # tot: plans proposed at each level
    tot_depth: int = Field(1, ge=1, le=2)  # tot: 2 also refines the best plan
    tot_rate: Literal["value", "vote"] = "value"  # tot: score each plan, or vote among them
    tot_search: Literal["bfs", "dfs"] = "bfs"  # tot: level by level, or best branch first
    # on a loop, stall or budget burn the monitor detects, reflect and keep the lesson
    self_reflect: bool = False
    trials: int = Field(2, ge=1, le=5)  # with self_reflect: attempts at the task in one run
    # acceptance checks written from the goals before the work; task_complete needs them passed
    checks: bool = True
    # the run ends completed once every check passes after a step, claimed or not
    finish_on_checks: bool = True
    # json: one command a step; code: a short Python program a step, calling the tools;
    # None: the model's own (llm.registry.default_actions), JSON where code cannot run
    actions: Literal["json", "code"] | None = None
    # set by autonoma on a sub-agent's or a planned task's run whose task came from a run with
    # outside content in its context: the mark travels with the task
    outside_at_start: bool = False

    @classmethod
    def stored(cls, data: dict[str, Any]) -> RunSettings:
        """The settings a run was stored with. A run stored before `actions` existed acted
        by JSON: it resumes so, whatever its model's own form is now."""
        return cls.model_validate({"actions": "json", **data})

    @model_validator(mode="after")
    def _actions_of_the_model(self) -> RunSettings:
        """Settles `actions` when it was not chosen, so a stored run resumes the same way."""
        if self.actions is None:
            chosen = default_actions(self.model)
            if chosen == "code" and not _code_can_run(self):
                chosen = "json"
            self.actions = chosen
        return self

    def agent_config(self, limits: BudgetLimits) -> AgentConfig:
        """The agent loop's configuration for one run (or task) of these settings."""
        return AgentConfig(
            limits=limits,
            continuous=self.continuous,
            seed=self.seed,
            approve_after_untrusted=self.tools.approve_after_untrusted,
            outside_at_start=self.outside_at_start,
            trust_workspace=self.tools.trust_workspace,
            tool_hint=self.tools.retrieval.hint,
            self_reflect=self.self_reflect,
            trials=self.trials,
            checks=self.checks,
            finish_on_checks=self.finish_on_checks,
            actions=self.actions or "json",  # settled by the validator
        )


def _code_can_run(settings: RunSettings) -> bool:
    try:
        make_sandbox(settings.tools.sandbox)
    except SandboxUnavailable:
        return False
    return True


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


def default_tools(*, memory: bool = False, subagents: bool = False) -> ToolRegistry:
    return ToolRegistry(
        [*CORE_TOOLS, *(MEMORY_TOOLS if memory else []), *(SUB_AGENT_TOOLS if subagents else [])]
    )


OpenedSandbox = tuple[Sandbox | None, str | None]
"""A run's sandbox or why there is none (`open_sandbox`), opened once and handed around."""


def run_tools(
    settings: RunSettings, *, memory: bool, sandbox: OpenedSandbox | None = None
) -> ToolRegistry:
    """The commands a run offers: files and task_complete, then what its settings add."""
    registry = default_tools(memory=memory, subagents=settings.subagents)
    groups = settings.tools.groups
    if "calculator" in groups:
        registry.add(calculator)
    if "person" in groups and not settings.continuous:  # nobody would answer
        registry.add(ask_person)
    if "code" in groups and (sandbox or open_sandbox(settings))[0] is not None:
        for code_tool in CODE_TOOLS:
            registry.add(code_tool)
    if "web" in groups:
        for web_tool in WEB_TOOLS:
            registry.add(web_tool)
    return registry


def open_sandbox(settings: RunSettings) -> OpenedSandbox:
    """The run's code sandbox, or why there is none (bubblewrap missing: how to install it).
    Without one the code commands are not offered at all."""
    if "code" not in settings.tools.groups:
        return None, None
    try:
        return make_sandbox(settings.tools.sandbox), None
    except SandboxUnavailable as error:
        return None, str(error)


def checks_sandbox(settings: RunSettings, sandbox: OpenedSandbox) -> Sandbox | None:
    """Where the run's acceptance checks and code actions run: its code sandbox, or one
    opened for them when the code commands are not offered; None when none can run here
    (then only judged checks are written). Code actions without one are a ConfigError."""
    if sandbox[0] is not None or not (settings.checks or settings.actions == "code"):
        return sandbox[0]
    try:
        return make_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as error:
        if settings.actions == "code":
            raise ConfigError(f"--actions code runs programs in the sandbox: {error}") from None
        return None


def tool_extras(settings: RunSettings, sandbox: OpenedSandbox) -> dict[str, Any]:
    """What the run's tools use besides the workspace, by the key each looks for."""
    extras: dict[str, Any] = {}
    if "web" in settings.tools.groups:
        extras["egress"] = EgressGuard(settings.tools.web)
    if sandbox[0] is not None:
        extras["sandbox"] = sandbox[0]
    return extras


def tool_notices(
    settings: RunSettings, opened: OpenedSandbox | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """What a person must know about the run's tools before it starts, as events: code that
    will run unconfined, or code commands left out because no sandbox can run here."""
    sandbox, problem = opened or open_sandbox(settings)
    if problem is not None:
        return [("code_refused", {"message": problem})]
    if sandbox is not None and not sandbox.isolated:
        return [
            (
                "code_unsafe",
                {
                    "message": "code runs WITHOUT a sandbox (--unsafe-code): it can read and "
                    "change whatever this user can, limited only by rlimits"
                },
            )
        ]
    return []


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
        tools = tools or default_tools(memory=settings.memory, subagents=settings.subagents)
        made = await generate_identity(model.in_lane(SIDE_LANE), goal, tools, seed=settings.seed)
        identity, fallback = made.identity, made.fallback_reason
        spent = BudgetSpent(
            prompt_tokens=made.prompt_tokens,
            completion_tokens=made.completion_tokens,
            usd=made.cost_usd,
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


def identity_from_options(
    goal: str, name: str | None, role: str | None, goals: list[str]
) -> AgentIdentity | None:
    """The person's own identity, if they gave any part of one (the rest is filled in)."""
    if name is None and role is None and not goals:
        return None
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
) -> RunOutcome:
    """Run, or resume, a stored run with the settings it was started with, holding its lease
    (runtime/lease.py): RunBusy, before anything is opened, when another process drives it."""
    async with driving(store, run.id):
        return await _run_leased(store, model, run, approver, listeners, tools, embedder)


async def _run_leased(
    store: RunStore,
    model: Model,
    run: RunRecord,
    approver: Approver | None,
    listeners: list[EventListener] | None,
    tools: ToolRegistry | None,
    embedder: Embedder | None,
) -> RunOutcome:
    settings = RunSettings.stored(run.settings)
    dedup = settings.strategy == "plan" and settings.create_tasks
    # MCP servers can bring many tools: retrieval may be needed although the built-ins fit
    sandbox = open_sandbox(settings)
    offered = tools or run_tools(settings, memory=settings.memory, sandbox=sandbox)
    retrieval = bool(settings.tools.mcp) or needs_retrieval(len(offered), settings.tools.retrieval)
    if embedder is None and (settings.memory or dedup or retrieval):
        embedder = choose_embedder(settings.embedder)[0]
    try:
        return await _run_with(
            store, model, run, settings, approver, listeners, tools, embedder, sandbox
        )
    finally:
        if embedder is not None and not settings.memory:
            await embedder.aclose()  # with memory on, run_memory closes it


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
) -> RunOutcome:
    async with (
        run_memory(store, model, run, settings, embedder) as memory,
        placement(settings, store, model, approver, listeners, memory) as place,  # Ray: connected
        mcp_tools(settings if tools is None else None) as (served, skipped),
    ):
        registry = tools or run_tools(settings, memory=memory is not None, sandbox=sandbox)
        for served_tool in served:
            registry.add(served_tool)
        extras = tool_extras(settings, sandbox)
        notices = tool_notices(settings, sandbox) if tools is None else []
        notices += [("mcp_skipped", {"message": what}) for what in skipped]
        for kind, data in notices:
            event = await asyncio.to_thread(store.add_event, run.id, kind, data)
            for listener in listeners or []:
                listener(event)
        retrieval = settings.tools.retrieval
        retrieving = embedder is not None and needs_retrieval(len(registry), retrieval)
        checking = checks_sandbox(settings, sandbox)

        def make_agent(limits: BudgetLimits) -> Agent:
            # one retriever a run: what its find_tools command found stays on offer in it
            retriever, offered = None, registry
            if retrieving and embedder is not None:
                offered = ToolRegistry(list(registry))
                retriever = ToolRetriever.from_settings(offered, embedder, retrieval)
                offered.add(retriever.find_tools())
            return Agent(
                model,
                offered,
                store,
                config=settings.agent_config(limits),
                approver=approver,
                listeners=listeners,
                memory=memory,
                summariser=Summariser(model.in_lane(SIDE_LANE)) if settings.memory else None,
                retriever=retriever,
                extras=extras,
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
                concurrency=settings.concurrency,
                task_steps=settings.task_steps,
                retries=settings.task_retries,
                replans=settings.replans,
            ),
            tools=place.tools or [tool.name for tool in registry],
            listeners=listeners,
            creator=TaskCreator(
                model, Deduplicator(embedder, model) if embedder is not None else None
            )
            if settings.create_tasks
            else None,
            replanner=Replanner(model) if settings.replans else None,
            executor=place.executor,
            run_task=place.run_task,
        )
        return await planned.run(run.id)


def make_planner(model: Model, settings: RunSettings) -> Planner:
    if settings.planner == "tot":
        return ToTDecomposer(
            model,
            k=settings.tot_k,
            depth=settings.tot_depth,
            rate=settings.tot_rate,
            search=settings.tot_search,
        )
    if settings.planner == "pddl":
        from autonoma.planning.pddl import PddlDomain, PddlPlanner  # needs the planning extra

        name = settings.pddl_domain
        if not name.endswith(".pddl"):
            return PddlPlanner(model, PddlDomain.load(name))
        try:
            return PddlPlanner(model, PddlDomain.from_file(Path(name)))
        except OSError as error:
            raise ConfigError(f"cannot read the PDDL domain {name}: {error.strerror}") from None
    return Decomposer(model)


@asynccontextmanager
async def mcp_tools(settings: RunSettings | None) -> AsyncIterator[tuple[list[Tool], list[str]]]:
    """The tools of the run's MCP servers, connected for as long as it runs, and what was left
    out (optional servers that failed, tools whose schema could not be used). A server that
    is not optional and cannot be reached stops the run here with an McpError naming it."""
    if settings is None or not settings.tools.mcp:
        yield [], []
        return
    from autonoma.tools.mcp import McpTools  # needs the mcp extra

    connections = McpTools(settings.tools.mcp)
    async with connections as served:
        yield served, connections.skipped


@asynccontextmanager
async def run_memory(
    store: RunStore, model: Model, run: RunRecord, settings: RunSettings, embedder: Embedder | None
) -> AsyncIterator[AgentMemory | None]:
    """The run's long-term memory (None with memory off), closed (index saved) afterwards."""
    if not settings.memory:
        yield None
        return
    embedder = embedder or choose_embedder(settings.embedder)[0]
    identity = AgentIdentity.model_validate(run.identity)
    persona = Persona(identity.name, identity.role)
    model = model.in_lane(SIDE_LANE)  # memory's calls keep out of the steps' cached prefix
    rater: ImportanceRater = (
        ModelRater(model, persona) if settings.importance == "model" else HeuristicRater()
    )
    path = memory_path(store, embedder)
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = await asyncio.to_thread(MemoryStream, path, embedder)
    try:
        yield AgentMemory(
            stream,
            settings.memory_agent or run.id,
            run.id,
            rater,
            Reflector(model, stream, rater, persona),
        )
    finally:
        await asyncio.to_thread(stream.close)
        await embedder.aclose()
