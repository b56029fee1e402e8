"""Running a stored sim: its steps taken one after another up to a target step, each stored
as it ends (so a killed sim resumes at the last stored step), an object's state a person set
meanwhile (`autonoma sim set`) taken in before the next step, and what the model calls cost
recorded when the run ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from autonoma.llm import Model
from autonoma.memory.embeddings import Embedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.sim.engine import Town
from autonoma.sim.memory import TownMemory, town_raters
from autonoma.sim.store import Sim, SimStore


@dataclass
class SimRun:
    steps: int  # taken by this run
    spent: BudgetSpent
    seconds: float
    stopped: str = ""  # why it stopped before its target ("": it reached it)


def over_budget(spent: BudgetSpent, limits: BudgetLimits | None) -> str:
    """What of the budget is spent, in words ("" if nothing is)."""
    if limits is None:
        return ""
    if limits.max_tokens is not None and spent.tokens >= limits.max_tokens:
        return f"the token budget ({limits.max_tokens:,}) is spent ({spent.tokens:,})"
    if limits.max_usd is not None and spent.usd >= limits.max_usd:
        return f"the money budget (${limits.max_usd:.2f}) is spent (${spent.usd:.2f})"
    return ""


async def run_sim(
    store: SimStore,
    sim: Sim,
    model: Model,
    embedder: Embedder,
    until: int,
    on_step: Callable[[Sim, BudgetSpent], None] | None = None,
    *,
    limits: BudgetLimits | None = None,
) -> SimRun:
    """Take `sim` from its step to step `until`, storing each step; stopped after the step
    that spent what `limits` allow (the target kept, for `sim resume`)."""
    store.set_target(sim.record, until)
    stream = MemoryStream(store.memory_path(sim.record), embedder)
    spent = BudgetSpent()
    started, first = time.monotonic(), sim.step
    stopped = ""
    try:
        town = Town(sim, model, TownMemory(stream, town_raters(model, sim.personas)), spent)
        if sim.step == 0:
            await town.begin(store.whispers(sim.record))
        seen = max((e[0] for e in store.events_after(sim.record.id, 0)), default=0)
        while sim.step < until:
            for event_id, _, kind, data in store.events_after(sim.record.id, seen):
                seen = event_id
                if kind == "object_set" and data.get("by") == "person":
                    sim.world.set_state(data["object"], data["state"])
            await town.step()
            store.save(sim)
            for kind, data in town.drain():  # reactions, talks, reflections of the step
                store.save(sim, kind, data)
            if on_step is not None:
                on_step(sim, spent)
            stopped = over_budget(spent, limits)
            if stopped:
                break
    finally:
        stream.close()
        ran = SimRun(sim.step - first, spent, time.monotonic() - started, stopped)
        store.save(sim, "ran", {
            "steps": ran.steps, "prompt_tokens": spent.prompt_tokens,
            "completion_tokens": spent.completion_tokens, "usd": spent.usd,
            "seconds": round(ran.seconds, 1), "stopped": stopped,
        })  # fmt: skip
    return ran
