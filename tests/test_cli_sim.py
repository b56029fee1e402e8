"""`autonoma sim` from the command line: new, list, show (the map, a persona, a past step,
JSON) and set, with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from autonoma.cli import app
from tests.cli_helpers import cli, one_line_error


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
