"""The step loop with long-term memory, on a real store: steps saved as they age out, the
rolling summary, reflection at the threshold, recall in the prompt, remember and recall as
commands, resume without duplicates, and memory handed to a later run. The model is scripted:
it plays the agent and answers memory's requests (ratings, summaries, reflections)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autonoma import testing
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, memory_path, run_agent
from autonoma.agent.settings import MemorySettings, RunSettings
from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.memory.context import rough_tokens
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from tests.memory_answers import memory_answer

IDENTITY = AgentIdentity(
    name="NoteGPT", role="an agent that keeps notes", goals=["Write notes to notes.txt"]
)
BUDGET = 1500  # the prompt's token budget in these tests: small, so steps age out quickly


def act(command: str, **args: Any) -> dict[str, Any]:
    """An action whose plan is the same every step (what memory is asked about)."""
    thoughts = {"text": f"doing {command}", "plan": "keep notes", "criticism": "", "speak": ""}
    return testing.act(command, thoughts=thoughts | {"reasoning": f"step needs {command}"}, **args)


class Agentish:
    """Plays the agent from `plan` (step n answers plan(n)) and answers memory's requests;
    keeps every agent prompt to check its size."""

    def __init__(self, plan: Callable[[int], dict[str, Any]], rating: int = 9) -> None:
        self.plan = plan
        self.rating = rating
        self.prompts: list[list[Message]] = []

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        schema = request.plan.schema
        prompt = "\n".join(m.content for m in messages)
        answer = memory_answer(schema, prompt, rating=self.rating)
        if answer is not None:
            return answer
        self.prompts.append(messages)
        return self.plan(len(self.prompts))


def notes(n: int) -> dict[str, Any]:
    if n == 3:
        return act("remember", text="The secret code word is PELICAN-42")
    if n == 30:
        return act("recall", query="secret code word")
    return act("append_file", path="notes.txt", text=f"note {n}: " + "words " * 40 + "\n")


async def start(
    tmp_path: Path, store: RunStore, agentish: Agentish, max_steps: int, **settings: Any
) -> Any:
    model = ScriptedModel(agentish)
    run_settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        limits=BudgetLimits(max_steps=max_steps),
        **settings,
    )
    run, _ = await create_run(
        store, model, "Write notes", run_settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    return run, model


def small_context(monkeypatch: pytest.MonkeyPatch) -> None:
    from autonoma.memory import context

    monkeypatch.setattr(
        context.ContextLimits,
        "for_window",
        classmethod(lambda cls, window, answer: cls(max_tokens=BUDGET, max_recent_steps=4)),
    )


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.db")


def stream_of(store: RunStore) -> MemoryStream:
    return MemoryStream(memory_path(store, LexicalEmbedder()), LexicalEmbedder())


async def test_a_long_run_stays_in_budget_saves_summarises_reflects_and_recalls(
    tmp_path: Path, store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_context(monkeypatch)
    agentish = Agentish(notes)
    run, model = await start(tmp_path, store, agentish, max_steps=60)
    outcome = await run_agent(store, model, run, embedder=LexicalEmbedder())
    assert outcome.status == "budget_exhausted" and outcome.spent.steps == 60

    sizes = [sum(rough_tokens(m.content) for m in prompt) for prompt in agentish.prompts]
    assert len(sizes) == 60 and max(sizes) <= BUDGET
    assert max(sizes[30:]) <= 1.25 * max(sizes[10:30])  # flat once the window is full

    events = store.events(run.id)
    summaries = [e.data for e in events if e.kind == "summary_updated"]
    assert len(summaries) >= 10
    assert [s["upto"] for s in summaries] == sorted({s["upto"] for s in summaries})
    later = "\n".join(m.content for m in agentish.prompts[-1])
    assert f"Summary of steps 1 to {summaries[-1]['upto']}:" in later

    saved = [e.data for e in events if e.kind == "memory_saved"]
    assert saved[-1]["upto"] == 60  # the rest saved at the end
    memory = stream_of(store)
    records = memory.latest(run.id, 1000)
    actions = [r for r in records if r.kind == "action"]
    assert len(actions) == 60  # each step once
    assert len({r.text for r in actions}) == 60
    assert any(r.kind == "thought" and "PELICAN-42" in r.text for r in records)

    reflected = [e.data for e in events if e.kind == "reflected"]
    assert reflected and reflected[0]["reflections"]
    reflections = [r for r in records if r.kind == "reflection"]
    assert reflections and all(r.evidence for r in reflections)
    assert all(memory.get(i).agent == run.id for r in reflections for i in r.evidence)
    assert "Lessons from your reflections:" in later
    assert "What you remember that may help now:" in later

    (recall_step,) = [s for s in store.steps(run.id) if s.command == "recall"]
    assert "PELICAN-42" in (recall_step.observation or "")
    memory.close()


async def test_resume_continues_memory_without_saving_a_step_twice(
    tmp_path: Path, store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_context(monkeypatch)
    agentish = Agentish(notes, rating=3)
    run, model = await start(tmp_path, store, agentish, max_steps=15)
    first = await run_agent(store, model, run, embedder=LexicalEmbedder())
    assert first.status == "budget_exhausted"
    settings = RunSettings.model_validate(run.settings)
    settings.limits.max_steps = 25
    store.set_settings(run.id, settings.model_dump())
    second = await run_agent(store, model, store.get_run(run.id), embedder=LexicalEmbedder())
    assert second.spent.steps == 25

    memory = stream_of(store)
    actions = [r.text for r in memory.latest(run.id, 1000) if r.kind == "action"]
    assert len(actions) == len(set(actions)) == 25
    memory.close()


async def test_a_later_run_can_be_given_an_earlier_runs_memory(
    tmp_path: Path, store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_context(monkeypatch)
    earlier, model = await start(tmp_path, store, Agentish(notes), max_steps=5)
    await run_agent(store, model, earlier, embedder=LexicalEmbedder())

    def later_plan(n: int) -> dict[str, Any]:
        return act("recall", query="secret code word")

    later_agent = Agentish(later_plan)
    later, model = await start(
        tmp_path, store, later_agent, max_steps=1, memory=MemorySettings(agent=earlier.id)
    )
    await run_agent(store, model, later, embedder=LexicalEmbedder())
    (step,) = store.steps(later.id)
    assert "PELICAN-42" in (step.observation or "")
    # and a run of its own memory does not see it
    alone, model = await start(tmp_path, store, Agentish(later_plan), max_steps=1)
    await run_agent(store, model, alone, embedder=LexicalEmbedder())
    (step,) = store.steps(alone.id)
    assert "PELICAN-42" not in (step.observation or "")


async def test_memory_off_offers_no_memory_commands(tmp_path: Path, store: RunStore) -> None:
    agentish = Agentish(lambda n: act("task_complete", reason="nothing to do"))
    run, model = await start(tmp_path, store, agentish, max_steps=3, memory=False)
    await run_agent(store, model, run)
    schema = json.dumps(model.requests[0].schema)
    assert "remember" not in schema and "recall" not in schema
    assert not memory_path(store, LexicalEmbedder()).exists()
