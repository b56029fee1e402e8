"""Trajectories for fine-tuning: one record per trial, from a real run store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.llm import ScriptedModel
from autonoma.runtime.export import trajectories
from autonoma.runtime.store import RunNotFound, RunStore
from autonoma.testing import act
from tests.agent.helpers import HAIKU, start
from tests.runtime.helpers import IDENTITY, THOUGHTS, add_step, new_run, two_trial_run


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.db")


def assert_chat(messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """System, the task, then assistant and user in turn; the assistant's answers as actions."""
    roles = [m["role"] for m in messages]
    assert roles[:2] == ["system", "user"]
    assert roles[2:] == ["assistant", "user"] * ((len(roles) - 2) // 2)
    actions = [json.loads(m["content"]) for m in messages if m["role"] == "assistant"]
    for action in actions:
        assert set(action) == {"thoughts", "command"} and set(action["command"]) == {"name", "args"}
    return actions


def test_each_trial_is_a_record_split_at_its_first_step(store: RunStore) -> None:
    run_id = two_trial_run(store)
    first, second = trajectories(store, run_id)
    assert (first["trial"], second["trial"]) == (1, 2)
    assert [s["n"] for s in first["steps"]] == [1, 2, 3]
    assert [s["n"] for s in second["steps"]] == [4, 5]
    assert first["steps"][1]["status"] == "invalid"  # kept in steps...
    actions = assert_chat(first["messages"])
    assert [a["command"]["name"] for a in actions] == ["read_file", "write_file"]  # ...not here
    assert actions[0] == {
        "thoughts": THOUGHTS,
        "command": {"name": "read_file", "args": {"path": "notes.txt"}},
    }
    assert first["messages"][3] == {"role": "user", "content": "no such file"}
    assert first["steps"][0] | {"observation": None} == {
        "n": 1,
        "status": "done",
        "thoughts": THOUGHTS,
        "command": "read_file",
        "arguments": {"path": "notes.txt"},
        "observation": None,
        "ok": True,
        "untrusted": False,
        "prompt_tokens": 101,
        "completion_tokens": 11,
    }
    assert "HaikuGPT" in first["messages"][0]["content"]
    assert "Write a haiku" in first["messages"][1]["content"]
    assert "write the file first" not in first["messages"][1]["content"]
    assert "write the file first" in second["messages"][1]["content"]  # the lessons it saw
    second_actions = assert_chat(second["messages"])
    assert [a["command"]["name"] for a in second_actions] == ["write_file", "task_complete"]
    assert second_actions[0]["command"]["args"] == {"path": "haiku.txt", "text": HAIKU}


def test_feedback_and_outcome_of_each_trial(store: RunStore) -> None:
    run_id = two_trial_run(store)
    first, second = trajectories(store, run_id)
    assert first["feedback"] == [
        {"kind": "approval", "step": 3, "decision": "feedback", "comment": "rhyme less"},
        {"kind": "monitor", "step": 3, "detection": "stalled", "evidence": "no files"},
        {
            "kind": "self_reflection",
            "step": 3,
            "detection": "stalled",
            "lesson": "write the file first",
            "verdict": "new_trial",
        },
        {"kind": "checks", "step": 3, "checks": ["no haiku.txt"], "score": 0.0},
    ]
    rating = {"score": 4, "comment": "good, a bit long"}
    assert first["outcome"] == {
        "status": "abandoned",
        "reason": "start again",
        "verdict": "new_trial",
        "lesson": "write the file first",
        "score": 0.0,
        "rating": rating,
    }
    assert second["feedback"] == [{"kind": "rating", **rating}]
    assert second["outcome"] == {
        "status": "completed",
        "reason": "haiku.txt is written",
        "checks": ["haiku.txt exists"],
        "score": 1.0,
        "rating": rating,
    }


def test_a_trial_ended_with_a_verdict_of_its_own_keeps_it(store: RunStore) -> None:
    run_id = new_run(store)
    add_step(store, run_id, 1, "read_file", "no such file", path="a")
    ended = {"trial": 1, "verdict": "new_trial", "lesson": "l", "checks": [], "score": 0.5}
    store.add_event(run_id, "trial_ended", ended)
    store.add_event(run_id, "trial_started", {"trial": 2, "first_step": 2, "lessons": ["l"]})
    first, second = trajectories(store, run_id)
    assert first["outcome"]["verdict"] == "new_trial" and first["outcome"]["score"] == 0.5
    assert second["steps"] == [] and second["outcome"]["status"] == "running"
    assert second["outcome"]["rating"] is None


def test_a_planned_run_exports_its_tasks_runs_after_it(store: RunStore) -> None:
    parent = new_run(store, "Write two haiku")
    store.set_status(parent, "completed", "both written")
    child = new_run(store, "Write the first haiku", parent_id=parent, task_id="t1")
    add_step(store, child, 1, "task_complete", "done", reason="written")
    grandchild = new_run(store, "Count syllables", parent_id=child)
    add_step(store, grandchild, 1, "task_complete", "done", reason="counted")
    store.add_event(parent, "rated", {"score": 5, "comment": ""})
    records = list(trajectories(store, parent))
    assert [(r["run_id"], r["parent_id"], r["task_id"]) for r in records] == [
        (parent, None, None),
        (child, parent, "t1"),
        (grandchild, child, None),
    ]
    assert records[0]["steps"] == [] and records[0]["outcome"]["status"] == "completed"
    assert records[0]["outcome"]["rating"] == {"score": 5, "comment": ""}
    assert records[1]["goal"] == "Write the first haiku"
    assert records[1]["model"] == "scripted" and records[1]["identity"] == IDENTITY
    assert assert_chat(records[1]["messages"])[0]["command"]["name"] == "task_complete"
    assert list(trajectories(store, child)) == records[1:]  # a task's run exports on its own too
    assert records == list(trajectories(store, parent))  # deterministic


def test_an_unknown_run_is_a_clear_error(store: RunStore) -> None:
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        list(trajectories(store, "nope"))


async def test_a_real_run_exports_the_actions_the_model_gave(
    store: RunStore, tmp_path: Path
) -> None:
    async def approver(request: ApprovalRequest) -> Decision:
        if request.step == 1:
            return Decision(kind="feedback", feedback="use five-seven-five syllables")
        return Decision(kind="yes")

    answers = [
        act("write_file", path="haiku.txt", text="too long a first line"),
        act("write_file", path="haiku.txt", text=HAIKU),
        act("task_complete", reason="done"),
    ]
    model = ScriptedModel(answers)
    run, outcome = await start(store, model, tmp_path, continuous=False, approver=approver)
    assert outcome.status == "completed"
    (record,) = trajectories(store, run.id)
    assert assert_chat(record["messages"]) == answers
    assert "five-seven-five" in record["messages"][3]["content"]  # the observation it got
    approvals = [f for f in record["feedback"] if f["kind"] == "approval"]
    assert approvals == [
        {
            "kind": "approval",
            "step": 1,
            "decision": "feedback",
            "comment": "use five-seven-five syllables",
        },
        {"kind": "approval", "step": 2, "decision": "yes", "comment": ""},
    ]
    assert record["outcome"]["status"] == "completed" and record["outcome"]["rating"] is None
    json.dumps(record)  # JSON-able as it is
