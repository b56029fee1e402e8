"""Reflection synthesis on a real store: the threshold, questions, insights that point at their
evidence, reflections on reflections, and the trees `autonoma show` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autonoma.llm import LLMSettings, ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.importance import HeuristicRater, Persona
from autonoma.memory.records import NewRecord
from autonoma.memory.reflection import ReflectionSettings, Reflector, reflection_trees
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent

PERSONA = Persona("Ada", "an agent that studies birds")


@pytest.fixture
def stream(tmp_path: Path) -> MemoryStream:
    return MemoryStream(tmp_path / "memory.db", LexicalEmbedder())


async def fill(stream: MemoryStream, importances: list[int], run_id: str = "run-1") -> None:
    await stream.add_many(
        [
            NewRecord(agent="ada", text=f"observed sparrow number {i} eating seeds", importance=v,
                      run_id=run_id)
            for i, v in enumerate(importances)
        ]
    )  # fmt: skip


def answers(insight_citations: list[list[int]]) -> Any:
    """Three questions, then for each an insight citing the given statement numbers."""
    cited = iter(insight_citations)

    def respond(messages: list[Message], request: CompletionRequest) -> Any:
        props = (request.plan.schema or {}).get("properties", {})
        if "questions" in props:
            return {"questions": ["What do sparrows eat?", "When?", "Where do they feed?"]}
        return {"insights": [{"insight": "Sparrows eat seeds", "because_of": next(cited)}]}

    return respond


async def test_reflection_is_due_when_importance_since_the_last_passes_the_threshold(
    stream: MemoryStream,
) -> None:
    reflector = Reflector(ScriptedModel([]), stream, HeuristicRater(), PERSONA)
    await fill(stream, [10] * 14 + [9])  # 149
    assert not reflector.due("ada")
    await fill(stream, [1])  # 150
    assert reflector.due("ada")
    assert not reflector.due("bob")  # per agent
    await stream.add("ada", "a reflection", kind="reflection", importance=8)
    assert not reflector.due("ada")  # the count starts again after a reflection
    await fill(stream, [10] * 15)
    assert reflector.due("ada")


async def test_insights_are_stored_as_reflections_pointing_at_their_evidence(
    stream: MemoryStream,
) -> None:
    await fill(stream, [8] * 20)
    model = ScriptedModel(answers([[1, 2], [3], [2, 1]]))
    spent = BudgetSpent()
    settings = ReflectionSettings(recent=10, evidence=5)
    reflector = Reflector(model, stream, HeuristicRater(), PERSONA, settings)
    outcome = await reflector.reflect("ada", spent, run_id="run-1")

    assert outcome.questions == ["What do sparrows eat?", "When?", "Where do they feed?"]
    assert len(outcome.reflections) == 3 and not outcome.problems
    first_prompt = model.requests[0].messages[0].content
    assert "most salient high-level questions" in first_prompt
    assert first_prompt.count("observed sparrow") == 10  # the 10 most recent records
    insight_prompt = model.requests[1].messages[0].content
    assert "Question: What do sparrows eat?" in insight_prompt
    assert "(because of 1, 5, 3)" in insight_prompt
    # statement n of the insight prompt is the n-th record listed there
    listed = [line.split(". ", 1)[1] for line in insight_prompt.splitlines()
              if line[:1].isdigit() and ". " in line]  # fmt: skip
    first = outcome.reflections[0]
    assert first.kind == "reflection" and first.run_id == "run-1"
    ids = {r.text: r.id for r in stream.latest("ada", 30)}
    assert first.evidence == sorted(ids[text] for text in listed[:2])
    assert all(r.evidence for r in outcome.reflections)
    assert spent.tokens > 0
    assert not reflector.due("ada")


async def test_reflections_can_be_evidence_so_trees_grow(
    stream: MemoryStream, tmp_path: Path
) -> None:
    await fill(stream, [8] * 5)
    low = await stream.add_many(
        [NewRecord(agent="ada", text="sparrows eat seeds", kind="reflection", evidence=[1, 2],
                   run_id="run-1")]
    )  # fmt: skip
    high = await stream.add(
        "ada", "birds here feed on seeds", kind="reflection", evidence=[low[0].id, 3],
        run_id="run-1",
    )  # fmt: skip
    trees = reflection_trees(stream.path, "run-1")
    assert [t.record.id for t in trees] == [low[0].id, high.id]
    top = trees[1]
    assert [child.record.id for child in top.evidence] == [3, low[0].id]
    nested = top.evidence[1]
    assert [child.record.text for child in nested.evidence] == [
        "observed sparrow number 0 eating seeds",
        "observed sparrow number 1 eating seeds",
    ]
    assert top.to_json()["evidence"][1]["record"]["kind"] == "reflection"
    assert reflection_trees(stream.path, "another-run") == []
    assert reflection_trees(tmp_path / "missing.db", "run-1") == []


async def test_an_unusable_answer_is_reported_and_nothing_is_stored(stream: MemoryStream) -> None:
    await fill(stream, [8] * 5)
    model = ScriptedModel(["not json"] * 3)
    outcome = await Reflector(model, stream, HeuristicRater(), PERSONA).reflect(
        "ada", BudgetSpent()
    )
    assert outcome.reflections == [] and len(outcome.problems) == 1
    assert stream.latest("ada", 10, kinds=["reflection"]) == []


async def test_statements_are_cut_to_fit_a_small_context(stream: MemoryStream) -> None:
    await stream.add_many(
        [NewRecord(agent="ada", text=f"record {i}: " + "long words " * 40) for i in range(100)]
    )
    model = ScriptedModel(answers([[1]] * 3), settings=LLMSettings(context_window=4096))
    await Reflector(model, stream, HeuristicRater(), PERSONA).reflect("ada", BudgetSpent())
    questions_prompt = model.requests[0].messages[0].content
    assert len(questions_prompt) // 3 < 4096 - 700  # room for the answer
    assert "record 99:" in questions_prompt  # the newest are the ones kept
    assert "record 0:" not in questions_prompt
