"""`autonoma export` and `autonoma rate` on a stored run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autonoma.cli import app
from autonoma.runtime.events import Rated
from autonoma.runtime.store import RunNotFound, RunStore
from tests.cli_helpers import cli, one_line_error
from tests.runtime.helpers import two_trial_run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("AUTONOMA_HOME", str(home))
    return home


@pytest.fixture
def run_id(home: Path) -> str:
    store = RunStore(home / "runs.db")
    try:
        return two_trial_run(store)
    finally:
        store.close()


def events_of(home: Path, run_id: str, kind: str) -> list[dict[str, object]]:
    store = RunStore(home / "runs.db")
    try:
        return [e.data for e in store.events(run_id) if e.kind == kind]
    finally:
        store.close()


def test_export_writes_one_json_line_per_trial_to_stdout(run_id: str) -> None:
    result = CliRunner().invoke(app, ["export", run_id, "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["run_id"], r["trial"]) for r in records] == [(run_id, 1), (run_id, 2)]
    assert records[1]["outcome"]["rating"] == {"score": 4, "comment": "good, a bit long"}


def test_export_to_a_file(run_id: str, tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["export", run_id, "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert f"wrote 2 trajectories to {target}" in " ".join(result.stderr.split())
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["trial"] for line in lines] == [1, 2]


def test_export_to_a_file_that_cannot_be_written_says_so_in_one_line(
    home: Path, run_id: str, tmp_path: Path
) -> None:
    target = tmp_path / "no such folder" / "out.jsonl"
    said = one_line_error(cli(home, "export", run_id, "-o", str(target)))
    assert said == f"error: cannot write {target}: No such file or directory"


def test_export_rejects_another_format(run_id: str) -> None:
    result = CliRunner().invoke(app, ["export", run_id, "--format", "csv"])
    assert result.exit_code == 2
    assert "--format is one of jsonl, not 'csv'" in result.stderr


def test_rate_stores_the_score_and_comment(home: Path, run_id: str) -> None:
    result = CliRunner().invoke(app, ["rate", run_id, "2", "--comment", "too slow"])
    assert result.exit_code == 0, result.output
    assert f"rated run {run_id} 2 of 5" in result.stdout
    assert events_of(home, run_id, "rated")[-1] == {"score": 2, "comment": "too slow"}
    store = RunStore(home / "runs.db")
    assert store.events(run_id)[-1].event == Rated(score=2, comment="too slow")  # read typed
    store.close()
    export = CliRunner().invoke(app, ["export", run_id])
    last = json.loads(export.stdout.splitlines()[-1])
    assert last["outcome"]["rating"] == {"score": 2, "comment": "too slow"}  # the latest


@pytest.mark.parametrize("score", ["0", "6", "-1"])
def test_rate_refuses_a_score_outside_1_to_5(home: Path, run_id: str, score: str) -> None:
    result = CliRunner().invoke(app, ["rate", run_id, "--", score])
    assert result.exit_code == 2
    assert f"SCORE is 1 to 5, not {score}" in result.stderr
    assert len(events_of(home, run_id, "rated")) == 1  # only the one the run already had


def test_an_unknown_run_is_refused(home: Path) -> None:
    for args in (["export", "nope"], ["rate", "nope", "3"]):
        result = CliRunner().invoke(app, args)
        assert isinstance(result.exception, RunNotFound)
        assert "no run 'nope'" in str(result.exception)


def test_errors_are_one_line_from_the_command_line(home: Path) -> None:
    assert "no run 'nope'" in one_line_error(cli(home, "export", "nope"))
    assert "no run 'nope'" in one_line_error(cli(home, "rate", "nope", "3"))
    assert "valid integer" in one_line_error(cli(home, "rate", "nope", "five"))
    assert "--format is one of jsonl" in one_line_error(cli(home, "export", "x", "-f", "csv"))
