"""The town with a real embedded model through the CLI: SmolLM2-135M (the small model, so CI
can afford it) plans three personas' day under the schemas, chooses their places among those
they know, and answers an interview."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autonoma.sim import SpatialMemory, shipped_world
from autonoma.sim.persona import shipped_personas
from autonoma.sim.plan import known_places
from tests.cli_helpers import cli

pytestmark = pytest.mark.e2e

MODEL = ["--model", "local:smollm2-135m", "--embedder", "lexical"]


def test_the_small_model_plans_the_small_towns_morning_and_is_interviewed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00",
               real_cache=True)  # fmt: skip
    assert made.returncode == 0, made.stderr
    ran = cli(home, "sim", "run", "willow", "--steps", "3", *MODEL, "-q", timeout=1200,
              real_cache=True)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "3 steps to day 1, Monday February 13, 07:00" in " ".join(ran.stdout.split())
    state = json.loads(cli(home, "sim", "show", "willow", "--json", real_cache=True).stdout)
    world = shipped_world("small_town")
    people = {p.name: p for p in shipped_personas("small_town", world)}
    for name, persona in state["personas"].items():
        schedule = persona["schedule"]
        assert schedule["day"] == "2023-02-13" and 5 <= len(schedule["plan"]) <= 8, name
        assert sum(b["minutes"] for b in schedule["blocks"]) == 24 * 60
        action = schedule["action"]
        assert action is not None and persona["action"] == action["description"]
        people[name].spatial = SpatialMemory.from_json(persona["spatial"])
        assert action["place"] in [*known_places(world, people[name]), people[name].home]
    asked = cli(home, "sim", "interview", "willow", "Mei Lin", "What are you doing today?",
                *MODEL, "--json", timeout=600, real_cache=True)  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["answer"].strip()


async def test_the_small_model_decides_reacts_and_talks_under_the_schemas(tmp_path: Path) -> None:
    """The decision's enum, the utterance's `end` boolean and the conversation's memory,
    under llama.cpp's grammar with the real small model: the answers are always usable."""
    from datetime import datetime

    from autonoma.llm import ModelStore, open_model
    from autonoma.memory.embeddings import LexicalEmbedder
    from autonoma.memory.stream import MemoryStream
    from autonoma.runtime.budget import BudgetSpent
    from autonoma.sim.dialogue import conclude, converse
    from autonoma.sim.memory import TownMemory, town_raters
    from autonoma.sim.perceive import Event
    from autonoma.sim.plan import breakdown
    from autonoma.sim.react import CONTINUE, REACT, TALK, decide
    from autonoma.sim.schedule import Block

    ModelStore().ensure("smollm2-135m")
    world = shipped_world("small_town")
    people = shipped_personas("small_town", world)
    mei, john = people[2], people[1]
    assert (mei.name, john.name) == ("Mei Lin", "John Lin")
    model = open_model("local:smollm2-135m?context=4096")
    stream = MemoryStream(tmp_path / "memory.db", LexicalEmbedder())
    memory = TownMemory(stream, town_raters(model, people))
    now, spent = datetime(2023, 2, 13, 7, 30), BudgetSpent()
    try:  # no seed memories: their ratings would only cost CI time
        john.action = "burning the toast"
        seen = Event("John Lin", "is", john.action, "John Lin is burning the toast", john.tile)
        reaction = await decide(model, memory, world, mei, seen, now, spent, can_talk=True)
        assert reaction.decision in (CONTINUE, REACT, TALK)
        assert 5 <= reaction.minutes <= 30
        # a reaction's place and the rest of the block after it, in one answer
        rest = Block(460, 20, "having breakfast")
        place, later = await breakdown(model, world, mei, rest, now, spent, "wiping up")
        known = known_places(world, mei)
        assert place in known and later and all(a.place in known for a in later)
        lines = await converse(model, memory, world, mei, john, now, spent, turns=2)
        assert 1 <= len(lines) <= 4 and all(said.strip() for _, said in lines)
        assert lines[0][0] == "Mei Lin" and all(
            who == ("Mei Lin" if n % 2 == 0 else "John Lin") for n, (who, _) in enumerate(lines)
        )
        about = await conclude(model, memory, mei, john, lines, now, spent)
        assert about.strip()
        kinds = [r.kind for r in stream.latest("Mei Lin", 2)]
        assert kinds == ["chat", "thought"]
    finally:
        stream.close()
        await model.aclose()
