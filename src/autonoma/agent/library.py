"""autonoma driven from Python: start a run from a goal and its settings, or resume one, and
watch its events and answer its approvals from code. What `from autonoma import ...` gives.

The model is named once, in the settings (`RunSettings.model`), and opened and closed here.
A test or a custom provider may hand a `Model` object instead; its name then stands for the
settings' model, and a settings model that names another is an error, not a silent choice.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from autonoma.agent.approval import ApprovalRequest, Approver, Decision
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.outcome import RunOutcome
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.errors import ConfigError
from autonoma.llm import Model, open_model
from autonoma.runtime.sink import EventListener
from autonoma.runtime.store import RunStore
from autonoma.tools import Tool

Approve = Callable[[ApprovalRequest], "bool | Decision | Awaitable[bool | Decision]"]
"""Answers a request to run a risky command: True (run it), False (refuse it), or a
`Decision` (yes for the next n commands, no, or feedback the agent reads instead)."""


async def run(
    goal: str,
    settings: RunSettings | None = None,
    *,
    model: Model | None = None,
    store: RunStore | None = None,
    workspace: Path | None = None,
    identity: AgentIdentity | None = None,
    tools: Sequence[Tool] = (),
    on_event: EventListener | None = None,
    approve: Approve | None = None,
) -> RunOutcome:
    """Start a run of `goal` and drive it to its end: completed, incomplete, failed, or out
    of budget. Every step is stored (in `store`, default `$AUTONOMA_HOME/runs.db`), so an
    interrupted run continues with `resume`. Without an identity the model names the agent
    and sets its goals; without `approve`, a command that needs a person's approval is
    refused with a reason the agent reads (`RunSettings.continuous` asks for none)."""
    settings, owned = _settings_for(settings or RunSettings(), model)
    llm = model or open_model(settings.model, settings.llm)
    store = store or RunStore.open_default()
    try:
        record, _ = await create_run(
            store, llm, goal, settings, workspace=workspace, identity=identity
        )
        return await _drive(store, llm, record.id, tools, on_event, approve)
    finally:
        if owned:
            await llm.aclose()


async def resume(
    run_id: str,
    *,
    model: Model | None = None,
    store: RunStore | None = None,
    tools: Sequence[Tool] = (),
    on_event: EventListener | None = None,
    approve: Approve | None = None,
) -> RunOutcome:
    """Continue a stored run from its last stored step, with the settings it was started
    with (its model among them). A run another process is driving raises RunBusy."""
    store = store or RunStore.open_default()
    record = await asyncio.to_thread(store.get_run, run_id)
    settings = RunSettings.stored(record.settings)
    if model is not None and model.name != settings.model:
        raise ConfigError(f"run {run_id} was started with {settings.model}, not {model.name}")
    llm = model or open_model(settings.model, settings.llm)
    try:
        return await _drive(store, llm, run_id, tools, on_event, approve)
    finally:
        if model is None:
            await llm.aclose()


def run_sync(goal: str, settings: RunSettings | None = None, **options: Any) -> RunOutcome:
    """`run` for code that has no event loop of its own."""
    return asyncio.run(run(goal, settings, **options))


async def _drive(
    store: RunStore,
    model: Model,
    run_id: str,
    tools: Sequence[Tool],
    on_event: EventListener | None,
    approve: Approve | None,
) -> RunOutcome:
    record = await asyncio.to_thread(store.get_run, run_id)
    return await run_agent(
        store,
        model,
        record,
        approver=_approver(approve) if approve is not None else None,
        listeners=[on_event] if on_event is not None else None,
        extra_tools=tools,
    )


def _settings_for(settings: RunSettings, model: Model | None) -> tuple[RunSettings, bool]:
    """The settings with the model named once, and whether the model is opened here."""
    if model is None:
        return settings, True
    if "model" in settings.model_fields_set and settings.model != model.name:
        raise ConfigError(
            f"the settings name the model {settings.model!r} and the model given is "
            f"{model.name!r}: name it once"
        )
    chosen = settings.model_fields_set
    data = settings.model_dump(exclude=None if "actions" in chosen else {"actions"})
    return RunSettings.model_validate(data | {"model": model.name}), False


def _approver(approve: Approve) -> Approver:
    async def ask(request: ApprovalRequest) -> Decision:
        answer = approve(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, Decision):
            return answer
        return Decision(kind="yes" if answer else "no")

    return ask
