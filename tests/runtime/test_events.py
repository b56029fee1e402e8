"""Typed events: every kind a run reports reads back as its own model, old stored shapes still
read, a misspelt field is an error where the event is made, and the schema names every kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from autonoma.runtime.events import (
    Event,
    RunStarted,
    StepResult,
    TrialStarted,
    Unrecognised,
    event_schema,
    parse_event,
)
from autonoma.runtime.store import RunStore
from autonoma.testing import act, run_scripted

KINDS = {
    kind
    for model in get_args(get_args(Event)[0])
    for kind in get_args(model.model_fields["kind"].annotation)
}


async def test_a_runs_events_read_back_typed_as_they_were_made(tmp_path: Path) -> None:
    seen = []
    outcome, _ = await run_scripted(
        "Write hi to hi.txt",
        [act("write_file", path="hi.txt", text="hi"), act("task_complete", reason="written")],
        tmp_path,
        on_event=seen.append,
    )
    stored = RunStore(tmp_path / "runs.db").events(outcome.run_id)
    assert [e.event for e in stored] == [e.event for e in seen]
    assert not any(isinstance(e.event, Unrecognised) for e in stored)
    result = next(e.event for e in stored if e.kind == "step_result")
    assert isinstance(result, StepResult) and result.ok
    assert {e.kind for e in stored} <= KINDS


def test_old_shapes_still_read_and_unknown_kinds_are_kept() -> None:
    # a field an older autonoma stored and this one dropped: ignored
    old = parse_event("step_result", {"ok": True, "observation": "x", "status": "done", "n": 3})
    assert old == StepResult(ok=True, observation="x", status="done")
    # a kind this autonoma does not know, or data that no longer fits: kept as stored
    assert parse_event("agent_messaged", {"key": "a"}) == Unrecognised(
        kind="agent_messaged", data={"key": "a"}
    )
    assert isinstance(parse_event("trial_started", {"trial": "two"}), Unrecognised)


def test_fields_are_checked_where_an_event_is_made() -> None:
    with pytest.raises(ValidationError, match="reslt"):
        StepResult(ok=True, observation="x", status="done", reslt="y")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        TrialStarted(trial=2, first_step=5, lessons=[], workspace="gone")  # type: ignore[arg-type]
    # what is stored is what was given: defaults not given are not written
    assert RunStarted(resumed=True, identity={}).data() == {"resumed": True, "identity": {}}


def test_the_schema_names_every_kind_and_the_cli_prints_it(tmp_path: Path) -> None:
    schema = event_schema()
    kinds = [definition["properties"]["kind"] for definition in schema["$defs"].values()]
    named = {k for kind in kinds for k in [*kind.get("enum", []), kind.get("const")] if k}
    assert named == KINDS and len(KINDS) >= 40
    printed = subprocess.run(
        [sys.executable, "-m", "autonoma", "schema", "events"],
        capture_output=True,
        text=True,
        env={"AUTONOMA_HOME": str(tmp_path), "PATH": ""},
        check=True,
    )
    assert json.loads(printed.stdout) == schema
