"""Helpers shared by tests (moved out of test modules: a test module is never imported
by another)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI
from tests.memory_answers import fake_server_memory_answer

HAIKU = "Leaves let go of light\nthe river carries their red\nnorth wind counts the stones"


IDENTITY = {
    "name": "HaikuGPT",
    "description": "an AI that writes haiku",
    "goals": ["Write a haiku about autumn"],
}


def is_identity_request(body: dict[str, Any]) -> bool:
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    return "goals" in schema.get("properties", {})


def scripted(answers: list[dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Answer the identity request with IDENTITY and each step request with the next answer
    (the last one repeats)."""
    remaining = list(answers)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if (memory := fake_server_memory_answer(body)) is not None:
            return memory
        if is_identity_request(body):
            return {"content": json.dumps(IDENTITY)}
        answer = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return {"content": json.dumps(answer)}

    return respond


def cli(
    home: Path, *args: str, timeout: float = 120, real_cache: bool = False
) -> subprocess.CompletedProcess[str]:
    """`autonoma ARGS` in a subprocess with its own home; `real_cache` keeps the user's model
    cache, so end-to-end tests fetch each model once."""
    env = {**os.environ, "AUTONOMA_HOME": str(home), "COLUMNS": "200"}
    env.setdefault("AUTONOMA_EMBEDDER", "lexical")  # MiniLM is tested on its own
    env.setdefault("AUTONOMA_CONFIG", str(home / "no-user-config.toml"))  # not the machine's
    if real_cache:
        env.pop("AUTONOMA_CACHE_DIR", None)
    else:
        env["AUTONOMA_CACHE_DIR"] = str(home / "cache")
    return subprocess.run(
        [sys.executable, "-m", "autonoma", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )


def spec(server: FakeOpenAI) -> str:
    return f"openai:fake@{server.base_url}"


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return " ".join(lines)
