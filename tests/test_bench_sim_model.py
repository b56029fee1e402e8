"""The town's model benchmark keeps a long measure over several sittings: the sim, its
memories and every call so far are kept, and the result covers them all."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from bench.sim_model import run
from tests.cli_helpers import spec
from tests.fake_openai import FakeOpenAI
from tests.sim.town_answers import served_townsfolk

START = dt.datetime(2023, 2, 13, 7, 0)


async def test_a_kept_measure_is_taken_up_again_and_counts_every_sitting(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.responder = served_townsfolk
    first = await run("small_town", 3, START, spec(server), tmp_path)
    assert first["steps"] == 3 and first["model_calls"] > 0
    again = await run("small_town", 6, START, spec(server), tmp_path)  # from step 3, not 0
    assert again["steps"] == 6 and again["game_time"].endswith("07:01")
    assert again["calls"][: len(first["calls"])] == first["calls"]  # the first sitting's kept
    assert [c["step"] for c in again["calls"]] == sorted(c["step"] for c in again["calls"])
    assert {c["kind"] for c in first["calls"]} >= {"plan", "actions"}  # step 0 only
    rating = next(c for c in first["calls"] if c["kind"] == "ratings")  # kept with its answer
    assert rating["about"][0].startswith("Memory 1: ") and set(rating["answer"]["ratings"]) == {4}
    logged = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    sittings = [
        (s["sitting"]["from_step"], s["sitting"]["to_step"]) for s in logged if "sitting" in s
    ]
    assert sittings == [(0, 3), (3, 6)]
    assert again["requests_per_persona_step"] == round(again["model_calls"] / 18, 4)
