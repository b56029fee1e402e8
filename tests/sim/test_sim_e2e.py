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
