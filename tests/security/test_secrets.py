"""A credential inside a model URL is used, never shown or stored: a canary key searched for
in everything the CLI prints and in every file under its home, on success and on failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autonoma.redact import redact
from tests.fake_openai import FakeOpenAI

CANARY = "CANARY-7f3a91-KEY"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTONOMA_HOME": str(home), "COLUMNS": "200"}
    env["AUTONOMA_EMBEDDER"] = "lexical"
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "autonoma", *args],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def answer(body: dict[str, Any]) -> dict[str, Any]:
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    if "goals" in schema.get("properties", {}):
        identity = {"name": "NoteGPT", "description": "an AI that notes", "goals": ["note"]}
        return {"content": json.dumps(identity)}
    step = {"thoughts": {"text": "done", "plan": "-"},
            "command": {"name": "task_complete", "args": {"reason": "noted"}}}  # fmt: skip
    return {"content": json.dumps(step)}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.responder = answer
        yield fake


def leaks(home: Path, *outputs: str) -> list[str]:
    found = [f"output {n}" for n, text in enumerate(outputs) if CANARY in text]
    for path in home.rglob("*"):
        if path.is_file() and CANARY.encode() in path.read_bytes():
            found.append(str(path.relative_to(home)))
    return found


def test_a_key_in_the_model_url_is_used_but_never_printed_or_stored(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    home = tmp_path / "home"
    keyed = f"openai:fake@http://user:{CANARY}@127.0.0.1:{server.port}/v1"
    common = ("--continuous", "--no-checks", "--no-memory", "--workspace", str(tmp_path / "ws"))
    ran = cli(home, "run", "Take a note", "--model", keyed, *common, "--json")
    assert ran.returncode == 0, ran.stderr
    outcome = json.loads(ran.stdout)
    assert outcome["status"] == "completed"
    assert "user:***@127.0.0.1" in ran.stderr  # the banner names the endpoint, not the key
    shown = cli(home, "show", outcome["run_id"], "--json")
    listed = cli(home, "runs", "--json")
    assert json.loads(shown.stdout)["settings"]["model"].startswith("openai:fake@http://user:***@")

    refused = cli(home, "resume", outcome["run_id"])  # completed: nothing to resume anyway
    unreachable = f"openai:fake@http://{CANARY}@127.0.0.1:9/v1"
    failed = cli(home, "run", "Take a note", "--model", unreachable, *common)
    assert failed.returncode != 0 and "***@127.0.0.1:9" in failed.stderr
    assert "Traceback" not in failed.stderr
    outputs = [r.stdout + r.stderr for r in (ran, shown, listed, refused, failed)]
    assert leaks(home, *outputs) == []


def test_a_run_whose_key_was_not_stored_asks_for_it_on_resume(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    def looking(body: dict[str, Any]) -> dict[str, Any]:
        said = answer(body)
        if "NoteGPT" in said["content"]:
            return said
        step = {"thoughts": {"text": "look", "plan": "-"},
                "command": {"name": "list_files", "args": {"directory": "."}}}  # fmt: skip
        return {"content": json.dumps(step)}

    server.responder = looking
    home = tmp_path / "home"
    keyed = f"openai:fake@http://user:{CANARY}@127.0.0.1:{server.port}/v1"
    ran = cli(
        home, "run", "Take a note", "--model", keyed, "--continuous", "--no-checks",
        "--no-memory", "--max-steps", "1", "--json",
    )  # fmt: skip
    outcome = json.loads(ran.stdout)
    assert outcome["status"] == "budget_exhausted", ran.stderr
    again = cli(home, "resume", outcome["run_id"], "--max-steps", "3")
    assert again.returncode == 1
    said = " ".join(again.stderr.split())
    assert "held a credential, which is never stored" in said
    assert f"autonoma resume {outcome['run_id']} --model SPEC" in said
    given = cli(home, "resume", outcome["run_id"], "--max-steps", "2", "--model", keyed, "--json")
    assert json.loads(given.stdout)["status"] == "budget_exhausted", given.stderr  # it ran on
    outputs = [r.stdout + r.stderr for r in (ran, again, given)]
    assert leaks(home, *outputs) == []


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("openai:m@http://user:KEY@host/v1", "openai:m@http://user:***@host/v1"),
        ("openai:m@https://KEY@host:8443/v1", "openai:m@https://***@host:8443/v1"),
        ("GET https://h/v1?api_key=KEY&model=x#top", "GET https://h/v1?api_key=***&model=x#top"),
        ("https://h/?token=KEY&Access-Token=KEY&sig=KEY", "https://h/?token=***&Access-Token=***&sig=***"),
        ("local:smollm2-135m?slots=2", "local:smollm2-135m?slots=2"),
        ("a broken http://[::1/v1 stays as it was", "a broken http://[::1/v1 stays as it was"),
        ("two: http://a:KEY@x and ws://KEY@y/z", "two: http://a:***@x and ws://***@y/z"),
    ],
)  # fmt: skip
def test_credentials_are_hidden_in_any_url_of_a_text(text: str, shown: str) -> None:
    assert redact(text) == shown
