"""Answers to the requests made beside the agent's steps (memory's importance ratings, rolling
summaries, reflection questions and insights; acceptance checks and their judge), for tests
whose scripted model or fake server plays the agent."""

from __future__ import annotations

import json
from typing import Any

from autonoma.agent.completion import named_files


def _schema_properties(schema: dict[str, Any] | None) -> dict[str, Any]:
    return (schema or {}).get("properties", {})


def _files_check(prompt: str) -> dict[str, Any]:
    """The check a goal implies at the least: the files its task and goals name hold two
    lines or more (a line of junk does not pass: the writer's probe sends such a check
    back), or the workspace holds a file, if they name none."""
    asked = prompt.split("Now the agent's task:", 1)[-1].split("The workspace ", 1)[0]
    names = sorted(named_files([asked]))
    if not names:
        return {"goal": 0, "what": "the workspace holds a file", "kind": "code",
                "code": "import os\nassert os.listdir('.'), 'the workspace is empty'"}  # fmt: skip
    code = (
        f"for name in {names!r}:\n"
        "    lines = [line for line in open(name).read().splitlines() if line.strip()]\n"
        "    assert len(lines) >= 2, f'{name} holds {len(lines)} lines'"
    )
    return {"goal": 1, "what": f"{', '.join(names)} hold two lines or more", "kind": "code",
            "code": code}  # fmt: skip


def memory_answer(schema: dict[str, Any] | None, prompt: str, rating: int = 5) -> str | None:
    """The answer to a memory request, or None if the request is not one (an agent step)."""
    props = _schema_properties(schema)
    if "ratings" in props:
        n = props["ratings"]["minItems"]
        return json.dumps({"ratings": [rating] * n})
    if "questions" in props:
        n = props["questions"]["minItems"]
        return json.dumps({"questions": [f"What did the agent learn ({i})?" for i in range(n)]})
    if "insights" in props:
        return json.dumps(
            {"insights": [{"insight": "The agent works step by step.", "because_of": [1]}]}
        )
    if "checks" in props:
        return json.dumps({"checks": [_files_check(prompt)]})
    if "passed" in props and "why" in props:
        return json.dumps({"passed": True, "why": "it meets the criterion"})
    if schema is None and "running summary" in prompt:
        return "The agent has been working; summary kept short."
    return None


def fake_server_memory_answer(body: dict[str, Any]) -> dict[str, Any] | None:
    """The same for a request body the fake OpenAI server received."""
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    answer = memory_answer(schema, prompt)
    return None if answer is None else {"content": answer}
