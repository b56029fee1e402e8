"""Importance ratings: the model's (batched, with the paper's prompt) and the heuristic."""

from __future__ import annotations

import json

from autonoma.llm import ScriptedModel
from autonoma.memory.importance import HeuristicRater, ModelRater, Persona
from autonoma.memory.records import NewRecord
from autonoma.runtime.budget import BudgetSpent

PERSONA = Persona("Ada", "an agent that writes reports")


def records(*texts: str) -> list[NewRecord]:
    return [NewRecord(agent="ada", text=text) for text in texts]


async def test_the_model_rates_a_batch_in_one_request_with_the_poignancy_prompt() -> None:
    model = ScriptedModel([{"ratings": [2, 9, 5]}])
    spent = BudgetSpent()
    rater = ModelRater(model, PERSONA)
    scores = await rater.rate(records("listed files", "the report is done", "read notes"), spent)
    assert scores == [2, 9, 5]
    (request,) = model.requests
    prompt = request.messages[0].content
    assert "On the scale of 1 to 10, where 1 is purely mundane" in prompt
    assert "10 is extremely poignant" in prompt and "Ada: an agent that writes reports" in prompt
    assert "Memory 2: the report is done" in prompt
    ratings = request.schema["properties"]["ratings"]  # type: ignore[index]
    assert ratings["minItems"] == ratings["maxItems"] == 3
    assert ratings["items"] == {"type": "integer", "minimum": 1, "maximum": 10}
    assert spent.tokens > 0  # what rating cost counts toward the run's budget


async def test_batches_are_split_by_batch_size() -> None:
    model = ScriptedModel([{"ratings": [1, 2]}, {"ratings": [3]}])
    scores = await ModelRater(model, PERSONA, batch_size=2).rate(
        records("a", "b", "c"), BudgetSpent()
    )
    assert scores == [1, 2, 3]
    assert len(model.requests) == 2


async def test_an_unusable_answer_falls_back_to_the_heuristic_and_loses_nothing() -> None:
    # a rating out of range, every time: invalid after the re-asks
    model = ScriptedModel([json.dumps({"ratings": [11, 0]})] * 3)
    spent = BudgetSpent()
    rater = ModelRater(model, PERSONA)
    texts = ("the command failed with an error", "listed the folder")
    scores = await rater.rate(records(*texts), spent)
    assert scores == [HeuristicRater.score("observation", t) for t in texts]
    assert rater.fallbacks == 1
    assert len(model.requests) == 3 and spent.tokens > 0


async def test_the_heuristic_rates_failures_and_successes_above_routine() -> None:
    rater = HeuristicRater()
    routine, failure, success, fact = await rater.rate(
        records(
            "listed the folder",
            "write_file failed: permission denied",
            "the task is complete",
            "read notes.txt",
        ),
        BudgetSpent(),
    )
    assert routine < failure and routine < success and routine < fact
    assert HeuristicRater.score("reflection", "an insight") > HeuristicRater.score(
        "action", "an insight"
    )
    assert 1 <= HeuristicRater.score("reflection", "failed 12 times at http://x") <= 10
