"""`autonoma sim` from the command line: new, list, show (the map, a persona, a past step,
JSON) and set, with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from autonoma.cli import app
from tests.cli_helpers import cli, one_line_error, spec
from tests.fake_openai import FakeOpenAI
from tests.sim.town_answers import served_townsfolk


def test_a_sim_is_made_listed_shown_and_an_object_set(home: Path) -> None:
    assert "no sims yet" in cli(home, "sim", "list").stdout
    made = cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 08:00")
    assert made.returncode == 0, made.stderr
    assert "sim willow: Willow Lane, 3 personas, day 1, Monday February 13, 08:00" in " ".join(
        made.stdout.split()
    )
    [listed] = json.loads(cli(home, "sim", "list", "--json").stdout)
    assert listed["name"] == "willow" and len(listed["personas"]) == 3 and listed["step"] == 0

    shown = cli(home, "sim", "show", "willow").stdout
    assert "Willow Lane, step 0" in shown and "Mei Lin" in shown and "Lin family house" in shown
    assert ".##########." in shown  # the map, walls and all
    mei = json.loads(cli(home, "sim", "show", "willow", "--persona", "mei lin", "--json").stdout)
    assert mei["home"] == "Lin family house: bedroom" and "Oak Hill College" in mei["knows"]

    set_ = cli(home, "sim", "set", "willow", "hobbs cafe:kitchen: oven", "on fire")
    assert "no persona 'Klaus'" in one_line_error(
        cli(home, "sim", "show", "willow", "--persona", "Klaus")
    )
    assert "Hobbs Cafe: kitchen: oven is now on fire" in " ".join(set_.stdout.split())
    state = json.loads(cli(home, "sim", "show", "willow", "--json").stdout)
    assert state["objects"]["Hobbs Cafe: kitchen: oven"] == "on fire"


def test_sim_errors_say_what_is_wrong(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # in-process (each is one line through main's handler, as the test above shows for one)
    monkeypatch.setenv("AUTONOMA_HOME", str(home))

    def said(*args: str) -> str:
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code != 0, result.output
        if isinstance(result.exception, SystemExit):  # a usage error, printed by click
            return result.stderr
        return str(result.exception)

    assert CliRunner().invoke(app, ["sim", "new", "small_town", "--name", "willow"]).exit_code == 0
    for command, expected in [
        (["sim", "new", "small_town", "--name", "willow"], "there is a sim named 'willow'"),
        (["sim", "new", "nowhere"], "no world 'nowhere': name one of small_town, the_ville"),
        (["sim", "show", "oak"], "no sim 'oak' (sims: willow)"),
        (["sim", "show", "willow", "--step", "4"], "has steps 0 to 0, not 4"),
        (["sim", "show", "willow", "--persona", "Klaus"], "no persona 'Klaus' in willow"),
        (["sim", "set", "willow", "Hobbs Cafe: kitchen: ovn", "x"], "did you mean 'Hobbs Cafe"),
        (["sim", "new", "small_town", "--start", "tomorrow"], "is not a game time"),
    ]:
        assert expected in said(*command), command
    world = tmp_path / "town.yaml"
    world.write_text(yaml.safe_dump({"name": "T", "size": [4, 4], "sectors": []}))
    assert "sectors" in said("sim", "new", str(world), "--personas", ".")
    park = {"name": "park", "area": [0, 0, 4, 4], "walls": False,
            "arenas": [{"name": "lawn", "area": [0, 0, 4, 4]}]}  # fmt: skip
    world.write_text(yaml.safe_dump({"name": "T", "size": [4, 4], "sectors": [park]}))
    assert "needs --personas" in " ".join(said("sim", "new", str(world)).split())
    empty = tmp_path / "nobody"
    empty.mkdir()
    assert "holds no persona file" in said("sim", "new", str(world), "--personas", str(empty))


def test_a_sim_runs_stores_its_steps_and_resumes_after_its_server_failed(
    home: Path, server: FakeOpenAI
) -> None:
    def failing_after_planning(body: dict[str, Any]) -> dict[str, Any]:
        # step 0 plans every day; at step 1 the Lins see each other making toast, and the
        # server fails as it is asked to rate that
        if "making toast" in json.dumps(body["messages"]) and "ratings" in json.dumps(body):
            return {"status": 500}
        return served_townsfolk(body)

    server.responder = failing_after_planning
    cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00")
    model = ["--model", spec(server), "--embedder", "lexical", "-q"]
    failed = cli(home, "sim", "run", "willow", "--until", "day 1 07:10", *model)
    assert "Traceback" not in failed.stderr and failed.returncode != 0
    stopped = json.loads(cli(home, "sim", "show", "willow", "--json").stdout)
    assert 1 <= stopped["step"] < 60  # the steps taken before the server failed are kept
    assert "500" in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
    server.responder = served_townsfolk
    resumed = cli(home, "sim", "resume", "willow", *model)
    assert resumed.returncode == 0, resumed.stderr
    assert "steps to day 1, Monday February 13, 07:10" in " ".join(resumed.stdout.split())
    state = json.loads(cli(home, "sim", "show", "willow", "--json").stdout)
    assert state["step"] == 60 and state["game_time"] == "2023-02-13T07:10:00"
    for name, persona in state["personas"].items():
        assert persona["schedule"]["day"] == "2023-02-13", name
        assert persona["action"] in ("making toast", "eating toast")
        assert persona["schedule"]["action"]["place"].endswith(": kitchen")
    done = one_line_error(cli(home, "sim", "resume", "willow", *model))
    assert "willow has no unfinished run; use sim run --steps N" in done
    shown = " ".join(cli(home, "sim", "show", "willow").stdout.split())
    assert "Lin family house: kitchen" in shown and "toast" in shown
    mei = cli(home, "sim", "show", "willow", "--persona", "Mei Lin").stdout
    assert "Plan for 2023-02-13:" in mei and "07:30 have breakfast" in mei
    earlier = json.loads(cli(home, "sim", "show", "willow", "--step", "1", "--json").stdout)
    assert earlier["step"] == 1


def test_a_persona_is_whispered_to_and_interviewed_from_its_memories(
    home: Path, server: FakeOpenAI
) -> None:
    prompts: list[str] = []

    def answering(body: dict[str, Any]) -> dict[str, Any]:
        schema = body["response_format"]["json_schema"]["schema"]
        if "answer" not in schema["properties"]:
            return served_townsfolk(body)
        prompt = body["messages"][-1]["content"]
        prompts.append(prompt)
        recalled = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
        return {"content": json.dumps({"answer": f"I recall that {recalled[0]}"})}

    server.responder = answering
    cli(home, "sim", "new", "small_town", "--name", "willow")
    model = ["--model", spec(server), "--embedder", "lexical"]
    told = cli(home, "sim", "whisper", "willow", "Mei Lin", "You will run for mayor", *model)
    assert told.returncode == 0, told.stderr
    assert "Mei Lin now thinks: You will run for mayor (importance 4)" in told.stdout
    asked = cli(home, "sim", "interview", "willow", "mei lin", "Will you run for mayor?",
                *model, "--json")  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["persona"] == "Mei Lin" and answer["step"] == 0
    assert answer["answer"] == "I recall that You will run for mayor"
    assert (
        "Name: Mei Lin" in prompts[0]
        and 'Someone asks Mei Lin: "Will you run for mayor?"' in prompts[0]
    )
    assert "Mei Lin is married to John Lin" in prompts[0]  # her seed memories, stored first
    state = json.loads(cli(home, "sim", "show", "willow", "--json").stdout)
    assert state["step"] == 0  # neither moved the clock
    assert "no persona 'Klaus'" in one_line_error(
        cli(home, "sim", "interview", "willow", "Klaus", "Hello?", *model)
    )


def test_a_sim_is_evaluated_by_the_papers_interviews_with_its_ablation(
    home: Path, server: FakeOpenAI
) -> None:
    def answering(body: dict[str, Any]) -> dict[str, Any]:
        schema = body["response_format"]["json_schema"]["schema"]
        if "answer" not in schema["properties"]:
            return served_townsfolk(body)
        prompt = body["messages"][-1]["content"]
        said = "I am 44 and I live with John." if "Mei Lin" in prompt else "I am not sure."
        return {"content": json.dumps({"answer": said})}

    server.responder = answering
    cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00")
    model = ["--model", spec(server), "--embedder", "lexical"]
    assert cli(home, "sim", "run", "willow", "--steps", "6", *model, "-q").returncode == 0
    done = cli(home, "sim", "evaluate", "willow", "--persona", "Mei Lin", "--ablation", *model,
               "--json", timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert list(result["accuracy"]) == [
        "full", "no reflection", "no reflection, no planning",
        "no observation, no reflection, no planning",
    ]  # fmt: skip
    assert len(result["evaluations"]) == 4
    assert all(len(e["answers"]) == 25 for e in result["evaluations"])
    right, checked = result["accuracy"]["full"]["self-knowledge"]
    assert checked == 4 and right >= 2  # her age and whom she lives with
    table = cli(home, "sim", "evaluate", "willow", "--persona", "Mei Lin", *model)
    assert "self-knowledge" in table.stdout and "reflections" in table.stdout
    assert "answers are not checked by rule" in " ".join(table.stdout.split())
    assert "no persona 'Klaus'" in one_line_error(
        cli(home, "sim", "evaluate", "willow", "--persona", "Klaus", *model)
    )


def test_a_scenario_is_whispered_at_the_start_and_its_spread_measured(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    scenario = tmp_path / "club.yaml"
    scenario.write_text(yaml.safe_dump({
        "name": "book club",
        "whispers": [{"persona": "mei lin",
                      "statement": "Mei Lin is starting a book club at Hobbs Cafe"}],
        "facts": [{"name": "club", "question": "Do you know of a book club?",
                   "knows": ["book club"]}],
        "events": [{"name": "breakfast", "place": "Lin family house",
                    "starts": "day 1 07:00", "ends": "day 1 07:01"},
                   {"name": "club", "place": "Lin family house: bedroom",
                    "starts": "day 1 07:00", "ends": "day 1 07:01"}],
    }))  # fmt: skip

    def answering(body: dict[str, Any]) -> dict[str, Any]:
        schema = body["response_format"]["json_schema"]["schema"]
        if "answer" not in schema["properties"]:
            return served_townsfolk(body)
        recalled = [ln for ln in body["messages"][-1]["content"].splitlines() if ln[:2] == "- "]
        knows = any("book club" in line for line in recalled)
        said = "Yes, Mei's book club at Hobbs Cafe." if knows else "I don't know of any."
        return {"content": json.dumps({"answer": said})}

    server.responder = answering
    made = cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00",
               "--scenario", str(scenario))  # fmt: skip
    assert made.returncode == 0, made.stderr
    model = ["--model", spec(server), "--embedder", "lexical"]
    assert cli(home, "sim", "run", "willow", "--steps", "12", *model, "-q").returncode == 0
    measured = cli(home, "sim", "measure", "willow", *model, "--json", timeout=300)
    assert measured.returncode == 0, measured.stderr
    figures = json.loads(measured.stdout)
    [club] = figures["facts"]
    assert club["knew_at_start"] == ["Mei Lin"] and club["knows_now"] == ["Mei Lin"]
    assert club["share_at_start"] == round(1 / 3, 3)
    assert 0 < figures["density"]["start"] <= figures["density"]["now"] <= 1
    breakfast, club_meeting = figures["events"]
    assert breakfast["reached"] and breakfast["came"] == ["John Lin", "Mei Lin"]
    assert "knew" not in breakfast  # no fact of that name: nobody was invited
    assert club_meeting["knew"] == ["Mei Lin"] and club_meeting["knew_and_came"] == ["Mei Lin"]
    said = cli(home, "sim", "measure", "willow", *model).stdout
    assert "knows of the club: 33% at the start, 33% now (Mei Lin)" in " ".join(said.split())
    assert "of the 1 who knew of it, 1 came" in " ".join(said.split())

    bad = tmp_path / "bad.yaml"
    for content, expected in [
        ({"name": "x", "whispers": [{"persona": "Klaus", "statement": "hi"}]},
         "no persona 'Klaus' in this town"),
        ({"name": "x", "events": [{"name": "e", "place": "Moon", "starts": "day 1 08:00",
                                   "ends": "day 1 09:00"}]}, "event 'e': no place 'Moon'"),
        ({"name": "x", "events": [{"name": "e", "place": "Hobbs Cafe", "starts": "day 1 09:00",
                                   "ends": "day 1 08:00"}]}, "event 'e' ends first"),
        ({"name": "x", "colour": "red"}, "colour"),
    ]:  # fmt: skip
        bad.write_text(yaml.safe_dump(content))
        error = one_line_error(cli(home, "sim", "new", "small_town", "--scenario", str(bad)))
        assert expected in error, error
    assert "no scenario 'nope'" in one_line_error(
        cli(home, "sim", "new", "small_town", "--scenario", "nope")
    )
    cli(home, "sim", "new", "small_town", "--name", "plain")
    assert "made without --scenario" in one_line_error(cli(home, "sim", "measure", "plain", *model))


def test_a_sim_stops_when_its_token_budget_is_spent_and_resumes(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = served_townsfolk
    cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00")
    model = ["--model", spec(server), "--embedder", "lexical"]
    ran = cli(home, "sim", "run", "willow", "--steps", "60", "--max-tokens", "50", *model, "-q")
    assert ran.returncode == 0, ran.stderr
    said = " ".join(ran.stdout.split())
    assert "1 steps to" in said and "stopped: the token budget (50) is spent" in said
    assert json.loads(cli(home, "sim", "show", "willow", "--json").stdout)["step"] == 1
    resumed = cli(home, "sim", "resume", "willow", *model, "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert "59 steps to day 1, Monday February 13, 07:10" in " ".join(resumed.stdout.split())
