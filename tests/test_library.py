"""autonoma from Python: the documented example as written, the public names, tools and
approvals given from code, resume, and the testing kit's strictness about unused answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

import autonoma
from autonoma import ApprovalRequest, Decision, EventRecord, RunSettings, RunStore, tool
from autonoma.errors import ConfigError, ModelError
from autonoma.testing import ScriptedModel, act, run_scripted
from tests.cli_helpers import HAIKU, scripted, spec
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).parent.parent


def documented_example() -> str:
    """The block docs/library.md marks as the example (the README shows the same)."""
    text = (ROOT / "docs" / "library.md").read_text()
    found = re.search(r"<!-- example:[^\n]*-->\n```python\n(.*?)```", text, re.S)
    assert found, "docs/library.md lost its marked example"
    return found.group(1)


def test_the_documented_example_runs_as_written(tmp_path: Path, server: FakeOpenAI) -> None:
    example = documented_example()
    assert example in (ROOT / "README.md").read_text()
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="done")]
    )
    # the one change: the model the settings name is the scripted server
    script = example.replace('"local:qwen2.5-coder-1.5b"', repr(spec(server)))
    assert script != example
    (tmp_path / "example.py").write_text(script)
    env = os.environ | {"AUTONOMA_HOME": str(tmp_path / "home"), "AUTONOMA_EMBEDDER": "lexical"}
    result = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "asked: write_file (write)" in lines  # the approval, answered by the function
    assert "1 step_result" in lines and "None run_finished" in lines  # events as they came
    assert lines[-1] == "completed ['haiku.txt']"
    runs = RunStore(tmp_path / "home" / "runs.db").list_runs()
    assert len(runs) == 1 and runs[0].model == spec(server)  # named once, stored as named


def test_the_public_names_are_the_documented_ones() -> None:
    documented = (ROOT / "docs" / "library.md").read_text()
    for name in autonoma.__all__:
        assert f"`{name}" in documented, name
        assert getattr(autonoma, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Agent'"):
        _ = autonoma.Agent  # type: ignore[attr-defined]


def test_importing_the_llm_layer_does_not_load_the_agent() -> None:
    probe = "import sys, autonoma.llm; print('autonoma.agent' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert shown.stdout.strip() == "False", shown.stderr


def test_the_event_union_and_its_schema_load_without_the_agent() -> None:
    # a server or viewer that reads events needs neither the agent nor its tools
    probe = (
        "import sys, autonoma; autonoma.event_schema(); autonoma.Event;"
        " print(sorted(m for m in sys.modules if m.startswith('autonoma.')"
        " and not m.startswith('autonoma.runtime')))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert shown.stdout.strip() == "[]", shown.stderr


async def test_a_runs_events_are_the_public_union_and_its_schema_names_them(
    tmp_path: Path,
) -> None:
    seen: list[EventRecord] = []
    outcome, model = await run_scripted(
        "Write hello to hello.txt",
        [act("write_file", path="hello.txt", text="hello"), act("task_complete", reason="done")],
        tmp_path,
        on_event=seen.append,
    )
    model.assert_complete()
    assert outcome.status == "completed", outcome.reason
    events = TypeAdapter(autonoma.Event)
    for record in seen:
        typed = record.event
        # what a server sends as JSON reads back, through the public union, as the same event
        assert events.validate_json(typed.model_dump_json()) == typed, record.kind
    schema = autonoma.event_schema()
    assert schema == events.json_schema()
    named = {
        kind
        for definition in schema["$defs"].values()
        for kind in [
            *definition["properties"]["kind"].get("enum", []),
            definition["properties"]["kind"].get("const"),
        ]
    }
    assert (
        {"run_started", "step_intent", "step_result", "run_finished"}
        <= {r.kind for r in seen}
        <= named
    )


@tool()
def shout(text: str) -> str:
    """Say a text in capitals.

    Args:
        text: what to say
    """
    return text.upper()


async def test_tools_events_and_approvals_from_code(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Decision:
        asked.append(request)
        if request.command == "delete_file":
            return Decision("feedback", feedback="keep it; write a copy instead")
        return Decision("yes")

    seen: list[EventRecord] = []
    outcome, model = await run_scripted(
        "Shout hello into hello.txt",
        [
            act("shout", text="hello"),
            act("write_file", path="hello.txt", text="HELLO"),
            act("delete_file", path="hello.txt"),
            act("task_complete", reason="hello.txt holds HELLO"),
        ],
        tmp_path,
        RunSettings(checks=False, memory=False),  # not continuous: writes are asked
        tools=[shout],
        on_event=seen.append,
        approve=approve,
    )
    model.assert_complete()
    assert outcome.status == "completed", outcome.reason
    assert (tmp_path / "workspace" / "hello.txt").read_text() == "HELLO"
    assert [r.command for r in asked] == ["write_file", "delete_file"]
    store = RunStore(tmp_path / "runs.db")
    steps = store.steps(outcome.run_id)
    assert steps[0].observation == "HELLO"
    assert "keep it; write a copy instead" in (steps[2].observation or "")
    kinds = [e.kind for e in seen]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert [e.kind for e in store.events(outcome.run_id)] == kinds  # stored as they came


async def test_a_plain_yes_or_no_answers_an_approval(tmp_path: Path) -> None:
    answers = iter([False, True])
    write = act("write_file", path="hello.txt", text="hi")
    outcome, model = await run_scripted(
        "Write hi to hello.txt",
        [write, write, act("task_complete", reason="hello.txt holds hi")],
        tmp_path,
        RunSettings(checks=False, memory=False),
        approve=lambda request: next(answers),
    )
    model.assert_complete()
    assert outcome.status == "completed", outcome.reason
    steps = RunStore(tmp_path / "runs.db").steps(outcome.run_id)
    assert [s.status for s in steps] == ["denied", "done", "done"]
    assert steps[0].observation == "the person refused to run write_file"


async def test_the_model_is_named_once(tmp_path: Path) -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigError, match="name it once"):
        await autonoma.run(
            "Write hello", RunSettings(model="local:qwen2.5-coder-1.5b"), model=model
        )
    with pytest.raises(ConfigError, match="the goal is empty"):
        await autonoma.run("  ", model=model, store=RunStore(tmp_path / "runs.db"))


async def test_a_run_the_model_failed_resumes_from_code(tmp_path: Path) -> None:
    first, model = await run_scripted(
        "Write hello to hello.txt",
        [act("list_files"), ModelError("the server went away")],
        tmp_path,
    )
    model.assert_complete()
    assert first.status == "failed" and "can be resumed" in first.reason
    store = RunStore(tmp_path / "runs.db")
    with pytest.raises(ConfigError, match="was started with scripted"):
        await autonoma.resume(first.run_id, store=store, model=ScriptedModel([], name="other"))
    again = ScriptedModel(
        [act("write_file", path="hello.txt", text="hello"), act("task_complete", reason="x")]
    )
    resumed = await autonoma.resume(first.run_id, store=store, model=again)
    again.assert_complete()
    assert resumed.status == "completed"
    assert [s.command for s in store.steps(first.run_id)] == [
        "list_files",
        "write_file",
        "task_complete",
    ]


async def test_unused_scripted_answers_are_noticed(tmp_path: Path) -> None:
    script: list[Any] = [
        act("write_file", path="a.txt", text="a"),
        act("task_complete", reason="done"),
        act("list_files"),  # never asked for: the run ended first
    ]
    _, model = await run_scripted("Write a.txt", script, tmp_path)
    with pytest.raises(AssertionError, match=r"1 scripted answer\(s\) left unused"):
        model.assert_complete()


def test_every_settings_file_the_docs_show_is_valid() -> None:
    import contextlib
    import tomllib

    from pydantic import ValidationError

    from autonoma import ToolSettings

    shown = [
        block
        for page in ("library.md", "agent.md", "planning.md", "memory.md", "tools.md")
        if (ROOT / "docs" / page).exists()
        for block in re.findall(r"```toml\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)
    ]
    run_files = 0
    for data in [tomllib.loads(block) for block in shown]:
        with contextlib.suppress(ValidationError):
            ToolSettings.model_validate(data)
            continue  # a tool settings file (--tool-settings)
        settings = RunSettings.model_validate(data)
        run_files += 1
        if "planning" in data:
            assert (
                settings.planning.model_dump() | data["planning"] == settings.planning.model_dump()
            )
    assert run_files, "the docs show no run settings file"
