"""Planned tasks on Ray: each task's agent loop runs on a Ray worker; the run store and the
budget stay on the driver, and stay authoritative.

A worker rebuilds the model from the run's model spec and runs the same `RunLoop` over the
task's run, on a private copy of it: a `ReportingStore`, seeded with the run, its steps and
its events (what the loop reads when it resumes). Every write to that copy is first sent to
the driver, which applies it to the real store, hands its events to the listeners (the live
view), charges the planned run's budget with what the task spent since the last write, and
replies with the budget's verdict. The worker goes on only once that reply is back, so every
step is in the driver's store before its tool runs, as it is locally; and a spent budget
stops the task at its next step, as `within` does locally. A person's approval of a risky
command is asked for on the driver too.

On workers the loop has the commands the run's settings give (files, calculator, code in the
worker's sandbox, web, asking the person at the driver's terminal, remember and recall), its
self-reflection and trials, and long-term memory served by the driver (`DriverMemory`: the
memory store lives beside the driver's run store; each save, recall and reflection is a call
through the same channel, its model spending charged to the task). Not there: sub-agents
(their runs would need the driver's store) and MCP servers (connected to the driver). The
workspace must be the same directory on every node: a local cluster, or a filesystem every
node mounts.

Importing this module does not import Ray; `placement` does, when a run asks for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autonoma.agent.approval import ApprovalRequest, Approver, Decision, RefuseWithoutTerminal
from autonoma.agent.loop import RunLoop
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.services import ToolServices
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import checks_sandbox, open_sandbox, run_tools, tool_services
from autonoma.errors import AutonomaError, ConfigError
from autonoma.llm import LLMSettings, Model, OpenAICompatModel, open_model, parse_model_spec
from autonoma.llm.base import SIDE_LANE
from autonoma.llm.ratelimit import RateLimiter, Slot
from autonoma.memory.agent_memory import AgentMemory
from autonoma.memory.context import Recollection
from autonoma.memory.importance import HeuristicRater, ImportanceRater
from autonoma.memory.records import MemoryRecord, Retrieved
from autonoma.memory.reflection import ReflectionOutcome
from autonoma.memory.summary import Summariser
from autonoma.runtime.budget import BudgetLimits, BudgetSpent, SharedBudget
from autonoma.runtime.executor import Executor
from autonoma.runtime.sink import EventListener
from autonoma.runtime.store import (
    EventRecord,
    RunRecord,
    RunStatus,
    RunStore,
    StepRecord,
    StepStatus,
)
from autonoma.tools import ToolRegistry
from autonoma.tools.sandbox import Sandbox

if TYPE_CHECKING:
    from autonoma.agent.planned import RunTask
    from autonoma.runtime.executor.ray import Channel, RayExecutor


def worker_tools(settings: RunSettings) -> tuple[ToolRegistry, ToolServices, Sandbox | None]:
    """The commands a task's loop has on a worker, what they use (the sandbox, the egress
    guard), and where its acceptance checks run: the run's own, less sub-agents (see above)."""
    there = settings.model_copy(update={"subagents": False})
    sandbox = open_sandbox(there)
    registry = run_tools(there, memory=settings.memory.enabled, sandbox=sandbox)
    return registry, tool_services(there, sandbox), checks_sandbox(there, sandbox)


class WorkspaceNotShared(AutonomaError):
    """A Ray worker does not see the run's workspace."""


# -- where a planned run's tasks run --------------------------------------------------------


@dataclass
class Placement:
    """What PlannedRun is given to run tasks elsewhere; all None: here, as usual."""

    executor: Executor | None = None
    run_task: RunTask | None = None
    tools: list[str] | None = None  # the commands a task has there, for the planner


def check_placement(settings: RunSettings) -> None:
    """Before a run is created: a clear error if its tasks cannot run where it asks (a Ray
    executor for a single loop, a model a worker cannot rebuild, an unreachable cluster)."""
    if settings.planning.executor == "local":
        return
    if settings.strategy != "plan":
        raise ConfigError(
            "--executor ray runs the tasks of a planned run on Ray; add --strategy plan "
            "(a single agent loop runs here)"
        )
    try:
        parse_model_spec(settings.model)
    except ConfigError as error:
        raise ConfigError(
            f"the Ray executor rebuilds the model on every worker from its spec: {error}"
        ) from error
    ray_executor = _ray_module()
    address = ray_executor.resolve_address(settings.planning.ray_address)
    if address is not None:
        ray_executor.check_reachable(address)


def _ray_module() -> Any:
    try:
        from autonoma.runtime.executor import ray as ray_executor
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] != "ray":
            raise
        raise ConfigError(
            "--executor ray needs Ray, which is not installed: pip install 'autonoma[ray]'"
        ) from error
    return ray_executor


@asynccontextmanager
async def placement(
    settings: RunSettings,
    store: RunStore,
    model: Model,
    approver: Approver | None = None,
    listeners: list[EventListener] | None = None,
    memory: AgentMemory | None = None,
) -> AsyncIterator[Placement]:
    """Where a run's tasks run, for as long as it runs. For the Ray executor: connected (or
    Ray started here) before anything runs, so a cluster that cannot be reached fails the run
    before its first task; the model's rate limit is made one limit for the whole cluster."""
    if settings.planning.executor == "local":
        yield Placement()
        return
    check_placement(settings)
    # a Ray started here gets a CPU slot for every task that may run at once (a task's loop
    # mostly waits for the model), and at least one per core
    slots = max(os.cpu_count() or 1, settings.planning.concurrency)
    executor: RayExecutor = _ray_module().RayExecutor(
        settings.planning.ray_address, settings.planning.concurrency, num_cpus=slots
    )
    await executor.aconnect()
    limited = model if isinstance(model, OpenAICompatModel) else None
    own_limiter = limited.limiter if limited is not None else None
    shared: SharedLimiter | None = None
    try:
        shared = await asyncio.to_thread(SharedLimiter.start, own_limiter)
        if limited is not None and shared is not None:
            limited.limiter = shared  # the planner's calls count against the same limit
        tasks = RayTasks(
            executor,
            store,
            WorkerSetup(llm_settings=model.settings, settings=settings, limiter=shared),
            approver=approver,
            listeners=listeners,
            memory=memory,
        )
        yield Placement(executor, tasks, [tool.name for tool in worker_tools(settings)[0]])
    finally:
        if limited is not None:
            limited.limiter = own_limiter
        if shared is not None and shared is not own_limiter:
            await asyncio.to_thread(shared.stop)
        await asyncio.to_thread(executor.close)


# -- one limit for the whole cluster --------------------------------------------------------


class _LimitKeeper:
    """An async Ray actor holding the one RateLimiter every process's calls are admitted by.
    A held slot is known by the caller's ticket, so a caller that gives up while it waits
    (cancelled) still frees the slot it is given later."""

    def __init__(self, requests: int | None, tokens: int | None, period_s: float) -> None:
        self.limiter = RateLimiter(requests, tokens, period_s)
        self._held: dict[str, Any] = {}
        self._abandoned: set[str] = set()

    async def acquire(self, tokens: int) -> None:
        await self.limiter.acquire(tokens)

    async def admit(self, ticket: str, tokens: int) -> None:
        slot = self.limiter.hold(tokens)
        await slot.__aenter__()
        if ticket in self._abandoned:
            self._abandoned.discard(ticket)
            await slot.__aexit__(None, None, None)
        else:
            self._held[ticket] = slot

    async def release(self, ticket: str) -> None:
        slot = self._held.pop(ticket, None)
        if slot is None:
            self._abandoned.add(ticket)  # not admitted yet: released as soon as it is
        else:
            await slot.__aexit__(None, None, None)


class SharedLimiter(RateLimiter):
    """A RateLimiter whose admissions are made by one Ray actor, so the requests and tokens
    per period of every worker (and of the driver's planner) add up to one limit. A worker
    that dies in the middle of a call keeps its slot until the run ends."""

    def __init__(self, keeper: Any, requests: int | None, tokens: int | None, period_s: float):
        super().__init__(requests, tokens, period_s)
        self.keeper = keeper

    @classmethod
    def start(cls, limiter: RateLimiter | None) -> SharedLimiter | None:
        """The cluster-wide form of a model's limiter (None without one)."""
        if limiter is None:
            return None
        if isinstance(limiter, SharedLimiter):
            return limiter
        import ray

        keeper = ray.remote(num_cpus=0)(_LimitKeeper).remote(
            limiter.requests, limiter.tokens, limiter.period_s
        )
        return cls(keeper, limiter.requests, limiter.tokens, limiter.period_s)

    def stop(self) -> None:
        import ray

        with suppress(Exception):
            ray.kill(self.keeper)

    def __reduce__(self) -> tuple[Any, ...]:
        return (SharedLimiter, (self.keeper, self.requests, self.tokens, self.period_s))

    async def acquire(self, tokens: int = 0) -> None:
        await self.keeper.acquire.remote(tokens)

    @asynccontextmanager
    async def hold(self, tokens: int = 0) -> AsyncIterator[Slot]:
        """Held at the keeper, which is not told when the request was sent (the slot given
        here is not read): the slot counts from the end of the call."""
        ticket = uuid.uuid4().hex
        try:
            await self.keeper.admit.remote(ticket, tokens)
            yield Slot(self._clock)
        finally:
            await asyncio.shield(self.keeper.release.remote(ticket))


# -- the driver's side ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs besides the task's run to run its loop (picklable)."""

    llm_settings: LLMSettings
    settings: RunSettings  # the planned run's, as its tasks run here
    limiter: SharedLimiter | None = None


@dataclass(frozen=True)
class Snapshot:
    """A task's run as stored on the driver when an attempt starts (plain data)."""

    run: dict[str, Any]
    steps: list[dict[str, Any]]
    events: list[dict[str, Any]]
    served: dict[str, Any]  # what the runs serving it (its sub-agents) spent
    verdict: str | None  # the planned run's budget: why it is spent, or None


class RayTasks:
    """PlannedRun's `run_task` on Ray: runs (or resumes) a task's run on a worker and applies
    everything it reports to the store and the budget here."""

    def __init__(
        self,
        executor: RayExecutor,
        store: RunStore,
        setup: WorkerSetup,
        *,
        approver: Approver | None = None,
        listeners: list[EventListener] | None = None,
        memory: AgentMemory | None = None,
    ) -> None:
        self.executor = executor
        self.store = store
        self.setup = setup
        self.approver: Approver = approver or RefuseWithoutTerminal()
        self.listeners = listeners or []
        self.memory = memory

    async def __call__(self, run_id: str, limits: BudgetLimits, within: SharedBudget) -> RunOutcome:
        from autonoma.runtime.executor.ray import RemoteLost

        snapshot = await asyncio.to_thread(self._snapshot, run_id, within)
        applier = Applier(
            self.store, run_id, within, self.approver, self.listeners, memory=self.memory
        )
        applier.seen = BudgetSpent.model_validate(snapshot.run["spent"])
        try:
            result = await self.executor.call(
                run_on_worker,
                snapshot,
                limits,
                self.setup,
                on_message=applier,
                name=f"task run {run_id}",
            )
        except RemoteLost as lost:
            reason = f"{lost} (a further attempt starts afresh)"
            await asyncio.to_thread(self.store.set_status, run_id, "failed", reason)
            result = {"status": "failed", "reason": reason, "files": []}
        except Exception as error:  # raised on the worker: the task's attempt fails with it
            reason = f"{type(error).__name__}: {error}"
            await asyncio.to_thread(self.store.set_status, run_id, "failed", reason)
            raise
        record = await asyncio.to_thread(self.store.get_run, run_id)
        status: RunStatus = result["status"]
        return RunOutcome(
            run_id, status, result["reason"], record.workspace, result["files"], record.spent
        )

    def _snapshot(self, run_id: str, within: SharedBudget) -> Snapshot:
        run = self.store.get_run(run_id)
        served = BudgetSpent()
        for child in self.store.children(run_id):
            served = served.plus(self.store.total_spent(child))
        return Snapshot(
            run=run.model_dump(mode="json"),
            steps=[s.model_dump(mode="json") for s in self.store.steps(run_id)],
            events=[
                {"kind": e.kind, "data": e.data, "step": e.step} for e in self.store.events(run_id)
            ],
            served=served.model_dump(),
            verdict=within.exhausted(),
        )


class Applier:
    """Applies what one task's worker reports, in the order it reports it: store writes (and
    their events, to the listeners), spending (to the planned run's budget), approvals."""

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        within: SharedBudget,
        approver: Approver,
        listeners: list[EventListener],
        *,
        memory: AgentMemory | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.within = within
        self.approver = approver
        self.listeners = listeners
        self.memory = memory
        self.seen = BudgetSpent()  # the task run's spending as last reported

    async def __call__(self, message: Any) -> Any:
        kind = message[0]
        if kind == "approve":
            request: ApprovalRequest = message[1]
            return await self.approver(request)
        if kind == "ask":  # ask_person, answered at the driver's terminal
            ask = getattr(self.approver, "ask", None)
            return await ask(message[1]) if ask is not None else None
        if kind == "memory":
            return await self._memory(message[1], message[2])
        if kind != "write":
            raise ValueError(f"unknown report {kind!r} from a task's worker")
        _, method, args = message
        event, spent = await asyncio.to_thread(self._write, method, args)
        if spent is not None:
            self._charge(spent)
        if event is not None:
            for listener in self.listeners:
                listener(event)
        return self.within.exhausted()

    async def _memory(self, method: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """A worker's memory call, made on the run's memory here: its answer, and what it spent
        (the worker charges that to the task). Saves also say whether a reflection is due."""
        if self.memory is None:
            raise ValueError("a worker asked for long-term memory, but this run has none")
        spent = BudgetSpent()
        if method == "save_steps":
            steps = [StepRecord.model_validate(s) for s in args["steps"]]
            rater = HeuristicRater() if args["heuristic"] else None
            count = await self.memory.save_steps(steps, spent, rater=rater)
            answer: Any = (count, self.memory.reflection_due())
        elif method == "remember":
            answer = await self.memory.remember(args["text"], spent)
        elif method == "recall":
            answer = await self.memory.recall(args["query"], args["k"])
        elif method == "recollection":
            answer = await self.memory.recollection(args["task"])
        elif method == "reflect":
            answer = await self.memory.reflect(spent)
        else:
            raise ValueError(f"a worker asked for an unknown memory call {method!r}")
        return answer, spent.model_dump()

    def _write(
        self, method: str, args: dict[str, Any]
    ) -> tuple[EventRecord | None, BudgetSpent | None]:
        run_id = args["step"]["run_id"] if method == "begin_step" else args["run_id"]
        if run_id != self.run_id:
            raise ValueError(f"a worker running {self.run_id} wrote to another run, {run_id}")
        spent = BudgetSpent.model_validate(args["spent"]) if args.get("spent") else None
        store = self.store
        if method == "add_event":
            return store.add_event(run_id, args["kind"], args["data"], args["step"]), None
        if method == "begin_step":
            assert spent is not None
            store.begin_step(StepRecord.model_validate(args["step"]), spent)
        elif method == "finish_step":
            store.finish_step(
                run_id,
                args["n"],
                status=args["status"],
                observation=args["observation"],
                ok=args["ok"],
                spent=spent,
                untrusted=args.get("untrusted", False),
                checks=args.get("checks", ""),
            )
        elif method == "set_status":
            store.set_status(run_id, args["status"], args["reason"], spent)
        elif method == "save_spent":
            assert spent is not None
            store.save_spent(run_id, spent)
        elif method == "set_settings":
            store.set_settings(run_id, args["settings"])
        else:
            raise ValueError(f"a worker asked for an unknown store write {method!r}")
        return None, spent

    def _charge(self, spent: BudgetSpent) -> None:
        """What the task spent since its last report goes into the planned run's budget."""
        seen, total = self.seen, self.within.spent
        total.charge(
            max(0, spent.prompt_tokens - seen.prompt_tokens),
            max(0, spent.completion_tokens - seen.completion_tokens),
            max(0.0, spent.usd - seen.usd),
        )
        for _ in range(spent.steps - seen.steps):
            total.count_step()
        self.seen = spent


# -- the worker's side ----------------------------------------------------------------------


async def run_on_worker(
    channel: Channel, snapshot: Snapshot, limits: BudgetLimits, setup: WorkerSetup
) -> dict[str, Any]:
    """Runs on a Ray worker: the task's agent loop over a reporting copy of its run."""
    run = RunRecord.model_validate(snapshot.run)
    if not Path(run.workspace).is_dir():
        raise WorkspaceNotShared(
            f"the workspace {run.workspace} does not exist on Ray node {socket.gethostname()}: "
            "the Ray executor needs every node to see it at the same path (a filesystem every "
            "node mounts), or a cluster on this machine"
        )
    settings = setup.settings
    tools, services, checking = worker_tools(settings)
    with tempfile.TemporaryDirectory(prefix="autonoma-task-") as scratch:
        store = await asyncio.to_thread(
            ReportingStore.seeded, Path(scratch) / "runs.db", channel, snapshot
        )
        model = open_model(run.model, setup.llm_settings, limiter=setup.limiter)
        memory = DriverMemory(channel) if settings.memory.enabled else None
        try:
            agent = RunLoop(
                model,
                tools,
                store,
                config=settings.agent_config(limits),
                approver=DriverApprover(channel),
                summariser=Summariser(model.in_lane(SIDE_LANE)) if memory else None,
                services=services,
                memory=memory,
                sandbox=checking,
            )
            outcome = await agent.run(run.id, within=store.within)
        finally:
            await model.aclose()
            await asyncio.to_thread(store.close)
    return {"status": outcome.status, "reason": outcome.reason, "files": outcome.files}


class DriverMemory(AgentMemory):
    """On a worker, the run's long-term memory as the driver holds it: every call goes
    through the channel and is made there (`Applier._memory`); what it spent is charged here."""

    def __init__(self, channel: Channel) -> None:  # no stream here: nothing of the parent's
        self.channel = channel
        self._due = False
        self.stores = 0

    async def _call(self, method: str, spent: BudgetSpent | None, **args: Any) -> Any:
        answer, cost = await asyncio.to_thread(self.channel.send, ("memory", method, args))
        if spent is not None:
            used = BudgetSpent.model_validate(cost)
            spent.charge(used.prompt_tokens, used.completion_tokens, used.usd)
        return answer

    async def save_steps(
        self,
        steps: Sequence[StepRecord],
        spent: BudgetSpent,
        *,
        rater: ImportanceRater | None = None,
    ) -> int:
        self.stores += 1
        count, self._due = await self._call(
            "save_steps",
            spent,
            steps=[s.model_dump(mode="json") for s in steps],
            heuristic=isinstance(rater, HeuristicRater),
        )
        return int(count)

    async def remember(self, text: str, spent: BudgetSpent) -> MemoryRecord:
        self.stores += 1
        record: MemoryRecord = await self._call("remember", spent, text=text)
        return record

    async def recall(self, query: str, k: int = 5) -> list[Retrieved]:
        found: list[Retrieved] = await self._call("recall", None, query=query, k=k)
        return found

    async def recollection(self, task: str) -> Recollection:
        recalled: Recollection = await self._call("recollection", None, task=task)
        return recalled

    def reflection_due(self) -> bool:
        return self._due  # as the driver said after the latest save

    async def reflect(self, spent: BudgetSpent) -> ReflectionOutcome:
        self._due = False
        self.stores += 1
        outcome: ReflectionOutcome = await self._call("reflect", spent)
        return outcome


class DriverBudget(SharedBudget):
    """On a worker, the planned run's budget as the driver last judged it: each reported
    write brings the verdict back. `spent` only gathers what this task spends."""

    def __init__(self, verdict: str | None) -> None:
        super().__init__(BudgetLimits(max_steps=None), BudgetSpent())
        self.verdict = verdict

    def exhausted(self) -> str | None:
        return self.verdict


@dataclass
class DriverApprover:
    """Asks the driver's approver (the person at its terminal, or the refusal without one)."""

    channel: Channel

    async def __call__(self, request: ApprovalRequest) -> Decision:
        decision: Decision = await asyncio.to_thread(self.channel.send, ("approve", request))
        return decision

    async def ask(self, question: str) -> str | None:
        answer: str | None = await asyncio.to_thread(self.channel.send, ("ask", question))
        return answer


class ReportingStore(RunStore):
    """A worker's store: a private SQLite copy of one task's run. Every write is sent to the
    driver first (and applied there) and then made here; reads are answered here."""

    def __init__(self, path: Path, channel: Channel, verdict: str | None = None) -> None:
        super().__init__(path)
        self.channel = channel
        self.within = DriverBudget(verdict)
        self.served = BudgetSpent()
        self.run_id = ""

    @classmethod
    def seeded(cls, path: Path, channel: Channel, snapshot: Snapshot) -> ReportingStore:
        store = cls(path, channel, snapshot.verdict)
        run = RunRecord.model_validate(snapshot.run)
        store.run_id = run.id
        store.served = BudgetSpent.model_validate(snapshot.served)
        store.create_run(
            goal=run.goal,
            identity=run.identity,
            settings=run.settings,
            workspace=run.workspace,
            model=run.model,
            run_id=run.id,
            spent=run.spent,
            parent_id=run.parent_id,
            task_id=run.task_id,
        )
        for step in snapshot.steps:
            RunStore.begin_step(store, StepRecord.model_validate(step), run.spent)
        for event in snapshot.events:
            RunStore.add_event(store, run.id, event["kind"], event["data"], event["step"])
        return store

    def _report(self, method: str, **args: Any) -> None:
        self.within.verdict = self.channel.send(("write", method, args))

    def total_spent(self, run: RunRecord) -> BudgetSpent:
        total = super().total_spent(run)
        return total.plus(self.served) if run.id == self.run_id else total

    def set_status(
        self, run_id: str, status: RunStatus, reason: str = "", spent: BudgetSpent | None = None
    ) -> None:
        self._report("set_status", run_id=run_id, status=status, reason=reason, spent=_dump(spent))
        super().set_status(run_id, status, reason, spent)

    def set_settings(self, run_id: str, settings: dict[str, Any]) -> None:
        self._report("set_settings", run_id=run_id, settings=settings)
        super().set_settings(run_id, settings)

    def save_spent(self, run_id: str, spent: BudgetSpent) -> None:
        self._report("save_spent", run_id=run_id, spent=_dump(spent))
        super().save_spent(run_id, spent)

    def begin_step(self, step: StepRecord, spent: BudgetSpent) -> None:
        self._report("begin_step", step=step.model_dump(mode="json"), spent=_dump(spent))
        super().begin_step(step, spent)

    def finish_step(
        self,
        run_id: str,
        n: int,
        *,
        status: StepStatus,
        observation: str,
        ok: bool,
        spent: BudgetSpent | None = None,
        untrusted: bool = False,
        checks: str = "",
    ) -> None:
        self._report(
            "finish_step",
            run_id=run_id,
            n=n,
            status=status,
            observation=observation,
            ok=ok,
            spent=_dump(spent),
            untrusted=untrusted,
            checks=checks,
        )
        super().finish_step(
            run_id,
            n,
            status=status,
            observation=observation,
            ok=ok,
            spent=spent,
            untrusted=untrusted,
            checks=checks,
        )

    def add_event(
        self, run_id: str, kind: str, data: dict[str, Any], step: int | None = None
    ) -> EventRecord:
        self._report("add_event", run_id=run_id, kind=kind, data=_plain(data), step=step)
        return super().add_event(run_id, kind, data, step)


def _dump(spent: BudgetSpent | None) -> dict[str, Any] | None:
    return None if spent is None else spent.model_dump()


def _plain(data: dict[str, Any]) -> Any:
    """Event data as the store keeps it (JSON), so nothing unpicklable crosses to the
    driver and the driver stores what it would have stored locally."""
    return json.loads(json.dumps(data, default=str))
