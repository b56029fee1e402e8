"""Sub-agents with ScriptedModel: stored under the parent run, a budget carved out of the
parent's, messages that continue the same sub-agent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from autonoma.testing import act

IDENTITY = AgentIdentity(name="BossGPT", role="an agent that delegates", goals=["facts.txt"])


class Office:
    """The parent follows its script; a sub-agent (its system prompt says so) writes
    facts.txt, or appends when its parent asked for more, then answers."""

    def __init__(self, parent: list[dict[str, Any]], child_loops: bool = False) -> None:
        self.parent = parent
        self.child_loops = child_loops
        self.child_prompts: list[str] = []

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        system = messages[0].content
        if "a sub-agent that BossGPT started" not in system:
            return self.parent.pop(0) if len(self.parent) > 1 else self.parent[0]
        seen = "\n".join(m.content for m in messages)
        self.child_prompts.append(seen)
        if self.child_loops:
            return act("list_files")
        if "BossGPT says: add one more" in seen and "appended" not in seen.lower():
            return act("append_file", path="facts.txt", text="fact 3\n")
        if "BossGPT says" in seen:
            return act("task_complete", reason="facts.txt now holds 3 facts")
        if "characters to facts.txt" not in seen:
            return act("write_file", path="facts.txt", text="fact 1\nfact 2\n")
        return act("task_complete", reason="facts.txt holds 2 facts")


async def start(tmp_path: Path, office: Office, max_steps: int = 30) -> tuple[RunStore, Any]:
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        subagents=True,
        limits=BudgetLimits(max_steps=max_steps),
    )
    run, _ = await create_run(
        store, ScriptedModel(office), "Get facts into facts.txt", settings,
        workspace=tmp_path / "ws", identity=IDENTITY,
    )  # fmt: skip
    return store, await run_agent(store, ScriptedModel(office), run)


async def test_a_sub_agent_works_answers_and_takes_messages(tmp_path: Path) -> None:
    office = Office(
        [
            act(
                "start_agent",
                name="Researcher",
                task="Write two facts to facts.txt",
                prompt="Two facts, one per line",
            ),
            act("message_agent", key="researcher-1", message="add one more"),
            act("list_agents"),
            act("delete_agent", key="researcher-1"),
            act("list_agents"),
            act("message_agent", key="researcher-1", message="are you there?"),
            act("task_complete", reason="facts.txt holds 3 facts"),
        ]
    )
    store, outcome = await start(tmp_path, office)
    assert outcome.status == "completed"
    steps = store.steps(outcome.run_id)
    observations = [s.observation or "" for s in steps]
    assert observations[0] == "agent researcher-1 answered: facts.txt holds 2 facts"
    assert observations[1] == "agent researcher-1 answered: facts.txt now holds 3 facts"
    assert re.match(
        r"researcher-1: Researcher, task: Write two facts to facts.txt; completed, 4 steps",
        observations[2],
    )
    assert observations[3] == "deleted sub-agent researcher-1"
    assert observations[4].startswith("no sub-agents")
    assert observations[5].startswith("error: there is no sub-agent 'researcher-1'")
    assert (tmp_path / "ws" / "facts.txt").read_text() == "fact 1\nfact 2\nfact 3\n"

    (child,) = store.children(outcome.run_id)
    assert child.task_id == "agent:researcher-1" and child.identity["name"] == "Researcher"
    commands = [s.command for s in store.steps(child.id)]
    assert commands == ["write_file", "task_complete", "message", "append_file", "task_complete"]
    # the sub-agent has no sub-agent commands of its own
    assert "start_agent" not in office.child_prompts[0]
    # the parent's totals include the sub-agent's steps; its own record does not
    assert outcome.spent.steps == 7 + 4
    assert store.get_run(outcome.run_id).spent.steps == 7


async def test_a_sub_agent_is_stopped_by_its_carved_budget_and_by_the_parents(
    tmp_path: Path,
) -> None:
    start_it = act("start_agent", name="Looper", task="List files", prompt="go")
    office = Office([start_it, act("task_complete", reason="gave up")], child_loops=True)
    store, outcome = await start(tmp_path, office)
    first = store.steps(outcome.run_id)[0].observation or ""
    assert first.startswith(
        "agent looper-1 stopped (budget_exhausted): step limit reached (10 of 10"
    )

    office = Office([start_it, act("task_complete", reason="gave up")], child_loops=True)
    store, outcome = await start(tmp_path / "second", office, max_steps=5)
    first = store.steps(outcome.run_id)[0].observation or ""
    # the parent's 5 steps: its own first, and 4 of the sub-agent's
    assert "step limit reached (5 of 5 steps)" in first
    assert outcome.status == "budget_exhausted"
    assert outcome.spent.steps == 5
