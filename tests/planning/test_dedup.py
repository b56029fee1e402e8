"""Deduplication: embedding similarity picks the candidates, the model confirms."""

from __future__ import annotations

import numpy as np
import pytest

from autonoma.llm import ScriptedModel
from autonoma.memory.embeddings import LexicalEmbedder, MiniLMEmbedder
from autonoma.planning.dedup import DEFAULT_THRESHOLD, Deduplicator, Duplicate
from autonoma.runtime.budget import BudgetSpent
from tests.memory.table_embedder import TableEmbedder
from tests.planning.answers import Answers, task

MARS = task("t1", "Write three facts about Mars to mars.txt")
VENUS = task("t2", "Write three facts about Venus to venus.txt")
TOKYO = task("t3", "Search the web for the population of Tokyo")
PLAN = [MARS, VENUS, TOKYO]


async def test_a_rephrased_duplicate_merges_into_the_task_it_repeats() -> None:
    answers = Answers(verdicts={"List three facts about Mars in mars.txt": True})
    dedup = Deduplicator(LexicalEmbedder(), answers.model())
    spent = BudgetSpent()
    found = await dedup.duplicate_of(
        "List three facts about Mars in mars.txt", PLAN, spent, goal="Planet notes"
    )
    assert isinstance(found, Duplicate)
    assert found.id == "t1"
    assert DEFAULT_THRESHOLD <= found.similarity < 1.0
    (prompt,) = answers.checked  # only Mars is close enough to ask about
    assert "Goal of the plan: Planet notes" in prompt
    assert "Task A, already in the plan: Write three facts about Mars to mars.txt" in prompt
    assert dedup.checks == 1 and dedup.failures == 0
    assert spent.prompt_tokens > 0  # the check's cost is charged


async def test_an_unrelated_task_is_not_a_duplicate_and_costs_no_model_call() -> None:
    model = ScriptedModel([])
    dedup = Deduplicator(LexicalEmbedder(), model)
    spent = BudgetSpent()
    assert await dedup.duplicate_of("Book a train to Berlin for Monday", PLAN, spent) is None
    assert model.requests == [] and spent.tokens == 0


async def test_a_similar_but_different_task_the_model_rejects_is_not_merged() -> None:
    osaka = "Search the web for the population of Osaka"
    answers = Answers(verdicts={osaka: False})
    dedup = Deduplicator(LexicalEmbedder(), answers.model())
    (close,) = await dedup.similar(osaka, PLAN)
    assert close[0] is TOKYO and close[1] >= DEFAULT_THRESHOLD  # wording alone would merge it
    assert await dedup.duplicate_of(osaka, PLAN, BudgetSpent()) is None
    assert len(answers.checked) == 1
    assert (
        "Task A, already in the plan: Search the web for the population of Tokyo"
        in (answers.checked[0])
    )


async def test_candidates_are_checked_most_similar_first_up_to_max_checks() -> None:
    embedder = TableEmbedder(
        {
            "new": [1.0, 0.0, 0.0],
            "a": [0.9, 0.1, 0.0],  # 0.99
            "b": [0.8, 0.6, 0.0],  # 0.8
            "c": [0.7, 0.7, 0.1],  # 0.70: below the threshold
            "d": [0.85, 0.5, 0.0],  # 0.86
        }
    )
    tasks = [task(x, x) for x in "abcd"]
    answers = Answers(verdicts={"new": False})
    dedup = Deduplicator(embedder, answers.model(), max_checks=2)
    similar = await dedup.similar("new", tasks)
    assert [t.id for t, _ in similar] == ["a", "d", "b"]
    assert await dedup.duplicate_of("new", tasks, BudgetSpent()) is None
    asked = [p.split("Task A, already in the plan: ")[1].split("\n")[0] for p in answers.checked]
    assert asked == ["a", "d"]

    # a yes for the second candidate merges into it
    def second(prompt: str) -> bool:
        return "already in the plan: d\n" in prompt

    model = ScriptedModel(lambda m, r: {"same": second(m[-1].content)})
    found = await Deduplicator(embedder, model).duplicate_of("new", tasks, BudgetSpent())
    assert found is not None and found.id == "d"
    assert found.similarity == pytest.approx(0.862, abs=1e-3)


async def test_an_unusable_verdict_counts_as_different_and_is_charged() -> None:
    model = ScriptedModel(["maybe?", "perhaps", "no idea"])  # every re-ask fails too
    dedup = Deduplicator(LexicalEmbedder(), model)
    spent = BudgetSpent()
    found = await dedup.duplicate_of("List three facts about Mars in mars.txt", PLAN, spent)
    assert found is None
    assert dedup.failures == 1 and len(model.requests) == 3
    assert spent.prompt_tokens > 0


@pytest.mark.e2e
async def test_minilm_puts_a_real_paraphrase_over_the_threshold_and_unrelated_under() -> None:
    embedder = MiniLMEmbedder()
    plan = [
        task("t1", "Search the web for the population of Tokyo"),
        task("t2", "Write unit tests for the parser module"),
    ]
    dedup = Deduplicator(embedder, ScriptedModel([{"same": True}]))
    paraphrase = await dedup.similar("Find the current population of Tokyo online", plan)
    assert [t.id for t, _ in paraphrase] == ["t1"]
    assert paraphrase[0][1] >= DEFAULT_THRESHOLD
    assert await dedup.similar("Book a hotel room in Lisbon for two nights", plan) == []
    vectors = await embedder.embed(
        [plan[0].task, "Find the current population of Tokyo online", "Book a hotel in Lisbon"]
    )
    assert float(vectors[0] @ vectors[2]) < DEFAULT_THRESHOLD - 0.3
    assert np.isclose(np.linalg.norm(vectors[1]), 1.0, atol=1e-5)
    found = await dedup.duplicate_of(
        "Find the current population of Tokyo online", plan, BudgetSpent()
    )
    assert found is not None and found.id == "t1"
