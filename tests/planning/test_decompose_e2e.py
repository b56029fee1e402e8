"""The default embedded model (Qwen2.5-Coder-1.5B) plans a goal it has not seen in the prompt's
example: a valid graph, independent tasks left independent, the combining task last."""

from __future__ import annotations

import pytest

from autonoma.agent.settings import DEFAULT_MODEL
from autonoma.llm import open_model
from autonoma.planning.decompose import Decomposer
from autonoma.runtime.budget import BudgetSpent

pytestmark = pytest.mark.e2e

GOAL = (
    "Write a short poem about the sea in the file sea.txt and a poem about mountains in the "
    "file mountains.txt, then write index.md that lists both poems with their first lines"
)
TOOLS = ["write_file", "append_file", "read_file", "list_files", "task_complete"]


async def test_the_default_model_decomposes_a_goal_into_a_valid_graph() -> None:
    model = open_model(DEFAULT_MODEL)
    try:
        planner = Decomposer(model)
        spent = BudgetSpent()
        graph = await planner.plan(GOAL, spent, tools=TOOLS)
    finally:
        await model.aclose()
    assert graph.problems(tools=TOOLS) == []
    assert 2 <= len(graph.tasks) <= 8
    assert spent.prompt_tokens > 0 and spent.completion_tokens > 0
    made = graph.producers()
    assert {"sea.txt", "mountains.txt", "index.md"} <= set(made), made
    index = graph.get(made["index.md"])
    # the index waits for both poems; the poems do not wait for each other
    assert {made["sea.txt"], made["mountains.txt"]} <= set(graph.deps(index))
    sea, mountains = graph.get(made["sea.txt"]), graph.get(made["mountains.txt"])
    if sea.id != mountains.id:
        assert mountains.id not in graph.deps(sea) and sea.id not in graph.deps(mountains)
