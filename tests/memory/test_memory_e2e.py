"""Memory's model calls on a real embedded model (SmolLM2-135M) and the real MiniLM: ratings,
a reflection with evidence, and a rolling summary. What is checked is the shape of the work
(every rating in range, every insight citing records that exist), not the model's wisdom."""

from __future__ import annotations

from pathlib import Path

import pytest

from autonoma.llm import open_model
from autonoma.llm.registry import ModelStore
from autonoma.memory.embeddings import MiniLMEmbedder
from autonoma.memory.importance import ModelRater, Persona
from autonoma.memory.records import NewRecord
from autonoma.memory.reflection import ReflectionSettings, Reflector
from autonoma.memory.stream import MemoryStream
from autonoma.memory.summary import Summariser
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import StepRecord

pytestmark = pytest.mark.e2e

PERSONA = Persona("BirdGPT", "an agent that keeps notes on river birds")
NOTES = [
    "A heron stood in the shallows below the bridge for an hour.",
    "The heron caught two small fish before noon.",
    "A kingfisher dived from the willow branch three times.",
    "The kingfisher nests in the sandy bank near the weir.",
    "notes.txt now holds 12 lines about birds.",
    "write_file failed: the disk was full.",
    "The dipper walked under the water of the fast stream.",
    "A grey wagtail fed on insects on the stones.",
]


@pytest.fixture(scope="module")
def smollm_path() -> Path:
    return ModelStore().ensure("smollm2-135m")


async def test_ratings_reflection_and_summary_with_real_models(
    smollm_path: Path, tmp_path: Path
) -> None:
    model = open_model("local:smollm2-135m?slots=1&context=4096")
    memory = MemoryStream(tmp_path / "memory.db", MiniLMEmbedder())
    spent = BudgetSpent()
    try:
        rater = ModelRater(model, PERSONA)
        records = [NewRecord(agent="bird", text=text) for text in NOTES]
        scores = await rater.rate(records, spent)
        assert len(scores) == len(NOTES) and all(1 <= s <= 10 for s in scores)
        assert rater.fallbacks == 0  # the constrained answer was usable
        stored = await memory.add_many(
            [r.model_copy(update={"importance": s}) for r, s in zip(records, scores, strict=True)]
        )

        settings = ReflectionSettings(threshold=1, recent=8, questions=2, insights=2, evidence=4)
        reflector = Reflector(model, memory, rater, PERSONA, settings)
        assert reflector.due("bird")
        outcome = await reflector.reflect("bird", spent, run_id="run-1")
        assert len(outcome.questions) == 2 and not outcome.problems
        assert outcome.reflections
        ids = {r.id for r in stored}
        for reflection in outcome.reflections:
            assert reflection.kind == "reflection" and reflection.text.strip()
            assert reflection.evidence and set(reflection.evidence) <= ids

        steps = [
            StepRecord(run_id="r", n=n, status="done", thoughts={}, command="append_file",
                       arguments={"path": "notes.txt", "text": text}, observation="appended 1 line",
                       ok=True, started_at=0.0)
            for n, text in enumerate(NOTES[:4], 1)
        ]  # fmt: skip
        summary = await Summariser(model, words=60).update(
            None, steps, who="BirdGPT", goals=["Keep notes on river birds"], spent=spent
        )
        assert summary.upto == 4 and summary.text.strip()
        assert spent.tokens > 0
    finally:
        memory.close()
        await model.aclose()
