"""How well the town's importance ratings tell the mundane from the poignant, on a real model:
memories of the kind the town stores (what a persona sees, hears and thinks), each given a grade
by hand (1 mundane, 2 ordinary, 3 notable, 4 life-changing), rated by each way of asking, and
scored by the rank correlation (Spearman) of ratings with grades, with the calls and tokens a
memory costs. The first game-day sitting found the 1.5B model's ratings following position in
a batch of ten (8, 7, 9, 6, 5, 4, 3, 2, 1, 1) and rating every single memory 8.

    python bench/sim_importance.py [--model qwen2.5-coder-1.5b] [--ways numbers,single,labels]

Ways: `numbers` (the paper's prompt, ten memories a request, an integer each: ModelRater),
`single` (the same, one memory a request), `labels` (one memory a request, answered with a
word of LABELS: LabelRater), `label_batch` (ten memories a request, a word each). Memories
go in a fixed shuffled order, so a batch's position says nothing of the grade.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.common

from autonoma.llm import open_model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.context import one_line
from autonoma.memory.importance import HeuristicRater, ImportanceRater, ModelRater, Persona
from autonoma.memory.records import NewRecord
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_personas, shipped_world
from autonoma.sim.memory import rated
from bench.common import write_result

# The words the label ways offer, mildest first, and the importance each stands for; the middle
# ones with examples from a person's day (the extremes take the persona's own).
LABELS = {"mundane": 1, "ordinary": 3, "notable": 5, "important": 7, "life-changing": 10}
MIDDLE_EXAMPLES = {
    "ordinary": "buying groceries, a chat about the weather",
    "notable": "an argument with a friend, news about a neighbour",
    "important": "a new job offer, a friend's wedding",
}
LABEL_PROMPT = """Here is a brief description of {who}.

How poignant is each of the following memories likely to be for {name}? Say it with one of \
these words, from purely mundane to extremely poignant:
{scale}

{memories}

Answer with one word for each of the {count} memories, in order."""


class LabelRater(ImportanceRater):
    """The poignancy prompt answered with a word of LABELS a memory, `batch_size` memories a
    request, the requests sent together; an unusable answer is rated by the heuristic."""

    name = "label"

    def __init__(self, model: Any, persona: Persona, *, batch_size: int) -> None:
        self.model, self.persona, self.batch_size = model, persona, batch_size

    async def rate(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        size = self.batch_size
        batches = [records[start : start + size] for start in range(0, len(records), size)]
        rated = await asyncio.gather(*(self._rate_batch(batch, spent) for batch in batches))
        return [score for batch in rated for score in batch]

    async def _rate_batch(self, records: Sequence[NewRecord], spent: BudgetSpent) -> list[int]:
        examples = {"mundane": self.persona.mundane, **MIDDLE_EXAMPLES,
                    "life-changing": self.persona.poignant}  # fmt: skip
        prompt = LABEL_PROMPT.format(
            who=f"{self.persona.name}: {self.persona.description}",
            name=self.persona.name,
            scale="\n".join(f"- {label} (e.g., {examples[label]})" for label in LABELS),
            memories="\n".join(
                f"Memory {n}: {one_line(r.text, 600)}" for n, r in enumerate(records, 1)
            ),
            count=len(records),
        )
        words = {"type": "string", "enum": list(LABELS)}
        n = len(records)
        listed = {"type": "array", "items": words, "minItems": n, "maxItems": n}
        schema = {"type": "object", "properties": {"labels": listed}, "required": ["labels"]}
        answer = await ask(self.model, prompt, spent, output=schema,
                           max_tokens=8 * len(records) + 32, temperature=0.0)  # fmt: skip
        if not isinstance(answer, ModelResponse):
            return [HeuristicRater.score(r.kind, r.text) for r in records]
        return [LABELS[label] for label in answer.data["labels"]]


# (text, grade): 1 mundane, 2 ordinary, 3 notable, 4 life-changing, for the persona named.
GRADED: dict[str, list[tuple[str, int]]] = {
    "Isabella Rodriguez": [
        ("Hobbs Cafe: kitchen: stove is idle", 1),
        ("Isabella Rodriguez is brushing her teeth", 1),
        ("Isabella Rodriguez is wiping down the counter", 1),
        ("Klaus Mueller is reading a book at a table of Hobbs Cafe", 1),
        ("Hobbs Cafe: cafe: coffee machine is brewing coffee", 1),
        ("Isabella Rodriguez is walking to Hobbs Cafe", 1),
        ("John Lin is buying his morning coffee", 2),
        ("Isabella Rodriguez is baking almond croissants for the morning", 2),
        ("Maria Lopez said the coffee is good today", 2),
        ("Isabella Rodriguez is ordering flour at The Willows Market and Pharmacy", 2),
        ("Eddy Lin is practicing the piano at Hobbs Cafe", 2),
        ("Sam Moore told Isabella Rodriguez that he is running for mayor of Willow Park", 3),
        ("A customer complained loudly that Isabella Rodriguez got his order wrong", 3),
        ("Yuriko Yamamoto said the cafe owes more tax this year than expected", 3),
        ("Isabella Rodriguez decided to host a Valentine's Day party at Hobbs Cafe", 3),
        ("Klaus Mueller said his paper is about small shops pushed out by rising rents", 3),
        ("The kitchen of Hobbs Cafe caught fire and the fire brigade came", 4),
        ("The landlord told Isabella Rodriguez that Hobbs Cafe must close next month", 4),
        ("Isabella Rodriguez's mother was taken to hospital after a stroke", 4),
        ("Giorgio Rossi told Isabella Rodriguez that he has loved her for years", 4),
    ],
    "Klaus Mueller": [
        ("Dorm for Oak Hill College: Klaus's room: bed is idle", 1),
        ("Klaus Mueller is making his bed", 1),
        ("Klaus Mueller is walking to Oak Hill College", 1),
        ("Isabella Rodriguez is wiping down the counter", 1),
        ("Oak Hill College: library: shelf is being tidied", 1),
        ("Klaus Mueller is eating breakfast", 1),
        ("Klaus Mueller is reading articles on rising rents at the library", 2),
        ("Maria Lopez is studying at the next table", 2),
        ("Mei Lin said the seminar starts at ten tomorrow", 2),
        ("Klaus Mueller is taking notes on interviews with shop owners", 2),
        ("Isabella Rodriguez asked Klaus Mueller how his studies are going", 2),
        ("Mei Lin said Klaus Mueller's draft needs a stronger argument", 3),
        ("Isabella Rodriguez invited Klaus Mueller to a Valentine's Day party at Hobbs Cafe", 3),
        ("Sam Moore said he is running for mayor to keep rents down", 3),
        ("Klaus Mueller lost his notes for the paper", 3),
        ("Maria Lopez said she likes spending time with Klaus Mueller", 3),
        ("Klaus Mueller's paper won the college's research prize", 4),
        ("Maria Lopez told Klaus Mueller that she loves him", 4),
        ("Klaus Mueller learned that his family is being evicted from their home", 4),
        ("Oak Hill College expelled Klaus Mueller for plagiarism", 4),
    ],
}


def raters(way: str, model: Any, persona: Any) -> ImportanceRater:
    described = rated(persona)
    if way == "numbers":
        return ModelRater(model, described, batch_size=10)
    if way == "single":
        return ModelRater(model, described, batch_size=1)
    if way == "labels":
        return LabelRater(model, described, batch_size=1)
    return LabelRater(model, described, batch_size=10)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Rank correlation, ties given their mean rank; 0 when either side does not vary."""

    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    if len(set(rx)) < 2 or len(set(ry)) < 2:
        return 0.0
    return statistics.correlation(rx, ry)


async def measure(way: str, model: Any, people: dict[str, Any], seed: int) -> dict[str, Any]:
    per_persona, ratings, grades = [], [], []
    spent, started = BudgetSpent(), time.perf_counter()
    for name, graded in GRADED.items():
        shuffled = graded[:]
        random.Random(seed).shuffle(shuffled)
        records = [NewRecord(agent=name, text=t, kind="observation") for t, _ in shuffled]
        scores = await raters(way, model, people[name]).rate(records, spent)
        ratings += scores
        grades += [g for _, g in shuffled]
        per_persona.append({
            "persona": name,
            "rated": [[t, g, s] for (t, g), s in zip(shuffled, scores, strict=True)],
            "spearman": round(spearman(scores, [g for _, g in shuffled]), 3),
        })  # fmt: skip
    seconds = time.perf_counter() - started
    memories = len(ratings)
    batches = sum(-(-len(g) // 10) for g in GRADED.values())
    by_grade = {
        str(g): round(statistics.mean(s for s, h in zip(ratings, grades, strict=True) if h == g), 2)
        for g in sorted(set(grades))
    }
    return {
        "way": way,
        "spearman": round(spearman(ratings, grades), 3),
        "mean_rating_by_grade": by_grade,
        "distinct_ratings": len(set(ratings)),
        "requests": batches if way in ("numbers", "label_batch") else memories,
        "tokens_per_memory": round((spent.prompt_tokens + spent.completion_tokens) / memories, 1),
        "seconds_per_memory": round(seconds / memories, 2),
        "personas": per_persona,
    }


async def run(model_name: str, ways: list[str], seed: int) -> dict[str, Any]:
    world = shipped_world("the_ville")
    people = {p.name: p for p in shipped_personas("the_ville", world) if p.name in GRADED}
    model = open_model(f"local:{model_name}?context=4096")
    results = []
    try:
        for way in ways:
            result = await measure(way, model, people, seed)
            print(way, result["spearman"], result["mean_rating_by_grade"], flush=True)
            results.append(result)
    finally:
        await model.aclose()
    return {"model": model_name, "seed": seed, "memories": sum(map(len, GRADED.values())),
            "ways": results}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--ways", default="numbers,single,labels")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    result = asyncio.run(run(args.model, args.ways.split(","), args.seed))
    write_result(f"sim_importance{'_' + args.label if args.label else ''}", result)


if __name__ == "__main__":
    main()
