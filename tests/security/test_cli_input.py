"""Security suite, bad command-line and environment input: malformed model URLs, an
AUTONOMA_HOME that is a file or holds a corrupt store, and an unexpected error anywhere, each
end in one clear line and a non-zero exit, never a traceback; a corrupt store is not
overwritten."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autonoma.cli import main

CLI = [str(Path(sys.executable).parent / "autonoma")]


def _cli(args: list[str], home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"AUTONOMA_HOME": str(home), "COLUMNS": "200"} | env
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=environment, timeout=120
    )


def _one_clear_error(result: subprocess.CompletedProcess[str]) -> str:
    said = result.stdout + result.stderr
    assert result.returncode != 0, said
    assert "Traceback" not in said and "╭" not in said, said
    assert "error" in said.lower(), said
    return said


@pytest.mark.parametrize(
    "spec",
    [
        "openai:x@http://[::1/v1",
        "openai:x@http://host:port/v1",
        "openai:x@http://host:99999999/v1",
        "openai:x@ftp://host/v1",
        "openai:@http://host/v1",
        "local:",
    ],
)
def test_malformed_model_specs_are_one_line(tmp_path: Path, spec: str) -> None:
    said = _one_clear_error(_cli(["run", "a goal", "--model", spec], tmp_path / "home"))
    assert "model" in said.lower()


def test_a_home_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    for args in (["runs"], ["run", "a goal", "--model", "scripted"], ["show", "x"]):
        said = _one_clear_error(_cli(args, home))
        assert "AUTONOMA_HOME" in said


def test_a_corrupt_store_is_reported_and_left_as_it_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = home / "runs.db"
    store.write_bytes(os.urandom(8192))
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    for args in (["runs"], ["run", "a goal", "--model", "scripted"]):
        said = _one_clear_error(_cli(args, home))
        assert "mv " in said and "runs.db.broken" in said
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_an_unexpected_error_is_one_line_with_the_traceback_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTONOMA_HOME", str(tmp_path / "home"))

    def broken() -> None:
        raise ZeroDivisionError("something nobody foresaw")

    monkeypatch.setattr("autonoma.cli.run_app", broken)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    said = capsys.readouterr().err
    assert "unexpected ZeroDivisionError: something nobody foresaw" in said
    assert "Traceback" not in said
    reports = list((tmp_path / "home" / "logs").glob("crash-*.txt"))
    assert len(reports) == 1 and str(reports[0]) in "".join(said.split())
    assert "Traceback" in reports[0].read_text()
