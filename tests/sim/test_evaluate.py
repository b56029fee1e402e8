"""The paper's interview evaluation: 25 questions in five categories, each checked by rule
where the sim holds its answer (the persona's file, seed memories, schedule, whom it met and
talked with), a right answer passing and a wrong or made-up one failing; the ablation's
answers drawing only on the memories their condition allows."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.sim import shipped_world
from autonoma.sim.clock import GameClock
from autonoma.sim.evaluate import (
    CATEGORIES,
    CONDITIONS,
    Question,
    accuracy_of,
    denies,
    evaluate,
    questions_for,
    says_hour,
    shares_words,
)
from autonoma.sim.memory import TownMemory, town_raters
from autonoma.sim.persona import shipped_personas
from autonoma.sim.schedule import Block, Schedule
from autonoma.sim.store import Sim, SimStore

DAY = [Block(0, 420, "sleeping"), Block(420, 60, "having breakfast with John"),
       Block(480, 240, "teaching sociology at the college"), Block(720, 60, "having lunch"),
       Block(780, 540, "writing her article"), Block(1320, 120, "sleeping")]  # fmt: skip


def town(tmp_path: Path, at: datetime) -> tuple[Sim, SimStore]:
    world = shipped_world("small_town")
    people = shipped_personas("small_town", world)
    store = SimStore(tmp_path / "sims.db")
    sim = store.create("willow", world, people, GameClock(datetime(2023, 2, 13, 7, 0)))
    sim.step = sim.clock.step_of(at)
    for persona in sim.personas:
        persona.schedule = Schedule("2023-02-13", ["teach", "write"], list(DAY))
    return sim, store


def by_text(questions: list[Question]) -> dict[str, Question]:
    return {q.text: q for q in questions}


def test_the_questions_cover_five_categories_and_check_what_the_sim_holds(
    tmp_path: Path,
) -> None:
    sim, _ = town(tmp_path, datetime(2023, 2, 13, 10, 0))
    mei = sim.persona("Mei Lin")
    mei.talk.last["John Lin"] = "2023-02-13T07:30:00"
    memories = ["John Lin is making toast", "Mei Lin talked with John Lin about breakfast"]
    questions = questions_for(sim, mei, memories)
    assert [q.category for q in questions] == [c for c in CATEGORIES for _ in range(5)]
    q = by_text(questions)
    assert q["How old are you?"].check("I am 44 years old.")  # type: ignore[misc]
    assert not q["How old are you?"].check("I am 45.")  # type: ignore[misc]
    assert q["Who do you live with?"].check("My husband John.")  # type: ignore[misc]
    assert not q["Who do you live with?"].check("I live alone.")  # type: ignore[misc]
    assert q["Where do you live?"].check("In the Lin family house.")  # type: ignore[misc]
    assert q["What is your occupation?"].check is None  # not held by the sim: unchecked
    # the seed memories name John and Isabella: she knows them, and saying so is right
    assert q["Who is John Lin?"].check("John is my husband, the librarian.")  # type: ignore[misc]
    assert not q["Who is John Lin?"].check("I don't know who John is.")  # type: ignore[misc]
    # Isabella is named in her seed memories but not in what she has stored since
    assert "Who is Isabella Rodriguez?" in q
    # her past and her plans, from the schedule
    past = q["What were you doing at 08:00 today?"]
    assert past.check("I was teaching my sociology class.")  # type: ignore[misc]
    assert not past.check("I was sleeping in.")  # type: ignore[misc]
    ahead = q["What will you be doing at 13:00 today?"]
    assert ahead.check("Writing my article, I hope.")  # type: ignore[misc]
    assert q["When do you go to bed tonight?"].check("Around 10 pm.")  # type: ignore[misc]
    assert not q["When do you go to bed tonight?"].check("Around 11 pm.")  # type: ignore[misc]
    talked = q["Whom have you talked with today?"]
    assert talked.check("Only John, at breakfast.")  # type: ignore[misc]
    assert not talked.check("No one today.")  # type: ignore[misc]
    assert all(q.check is None for q in questions if q.category == "reactions")


def test_a_stranger_is_someone_to_say_one_does_not_know(tmp_path: Path) -> None:
    sim, _ = town(tmp_path, datetime(2023, 2, 13, 10, 0))
    mei = sim.persona("Mei Lin")
    stranger = by_text(questions_for(sim, mei, ["John Lin is making toast"]))[
        "Who is Isabella Rodriguez?"
    ]
    assert stranger.expected == "does not know Isabella Rodriguez"
    assert stranger.check("I'm not sure, I have never met her.")  # type: ignore[misc]
    assert not stranger.check("Isabella is a painter who lives by the pond.")  # type: ignore[misc]


def test_the_rules_read_answers_as_people_write_them() -> None:
    assert denies("I don't know anyone by that name") and denies("Nobody, really.")
    assert not denies("She owns the cafe.")
    assert says_hour(22)("I go to bed at 10 p.m.") and says_hour(22)("22:00")
    assert says_hour(22)("at 10pm") and not says_hour(22)("at 10 am")
    assert says_hour(9)("at 9:30 am") and not says_hour(9)("at 19:00")
    assert shares_words("reading a book")("I will read for a while")
    assert not shares_words("reading a book")("I will go for a walk")


async def test_answers_are_checked_and_the_ablation_recalls_less(tmp_path: Path) -> None:
    sim, store = town(tmp_path, datetime(2023, 2, 13, 10, 0))
    prompts: list[str] = []

    def answer(messages: list[Message], request: CompletionRequest) -> Any:
        schema = request.plan.schema or {}
        if "ratings" in schema.get("properties", {}):
            return {"ratings": [5] * schema["properties"]["ratings"]["minItems"]}
        prompt = str(messages[-1].content)
        prompts.append(prompt)
        if "How old are you?" in prompt:
            return {"answer": "I am 44."}
        if "Who do you live with?" in prompt:
            return {"answer": "I live alone."}  # wrong: she lives with John
        return {"answer": "I am not sure."}

    model = ScriptedModel(answer)
    stream = MemoryStream(tmp_path / "memory.db", LexicalEmbedder())
    memory = TownMemory(stream, town_raters(model, sim.personas))
    mei, spent = sim.persona("Mei Lin"), BudgetSpent()
    await memory.seed(mei, sim.clock.at(0), spent)
    later = sim.clock.at(sim.step)
    await memory.remember(mei, "John Lin is burning the toast", "observation", later, spent)
    await memory.remember(mei, "The Lins like their toast dark", "reflection", later, spent)
    done = [
        await evaluate(model, memory, sim, mei, c, ["John Lin is burning toast"], spent)
        for c in CONDITIONS
    ]
    full = done[0]
    assert len(full.answers) == 25
    right, checked = full.accuracy()["self-knowledge"]
    assert checked == 4 and right == 1  # the age right, where she lives with whom wrong...
    assert accuracy_of(done)["self-knowledge"] == (4, 16)
    toast = [p for p in prompts if "burning the toast" in p or "toast dark" in p]
    asked = len(prompts) // len(CONDITIONS)
    full_prompts, seed_only = prompts[:asked], prompts[-asked:]
    assert any("toast dark" in p for p in full_prompts) and toast
    assert not any("toast" in p for p in seed_only)  # the seed memories alone
    assert any("professor of sociology" in p for p in seed_only)
    store.close()
