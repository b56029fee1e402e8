"""The run store: runs, steps and events survive a round trip through SQLite, across instances."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from autonoma.errors import AutonomaError
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import (
    RunNotFound,
    RunStore,
    StepRecord,
    default_home,
    new_run_id,
)

IDENTITY: dict[str, Any] = {"name": "Researcher", "role": "finds things", "goals": ["a", "b"]}
SETTINGS: dict[str, Any] = {"budget": {"max_steps": 12, "max_usd": None}, "approve": "writes"}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "runs.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[RunStore]:
    s = RunStore(db_path)
    yield s
    s.close()


def make_run(store: RunStore, run_id: str = "run-1", goal: str = "write a report") -> str:
    return store.create_run(
        goal=goal,
        identity=IDENTITY,
        settings=SETTINGS,
        workspace="/tmp/ws/run-1",
        model="scripted:demo",
        run_id=run_id,
    ).id


def make_step(run_id: str, n: int, **changes: Any) -> StepRecord:
    values: dict[str, Any] = {
        "run_id": run_id,
        "n": n,
        "status": "running",
        "thoughts": {"text": f"thinking about step {n}", "plan": ["x", "y"]},
        "command": "write_file",
        "arguments": {"path": f"f{n}.txt", "text": "é 日本"},
        "prompt_tokens": 100 + n,
        "completion_tokens": 20 + n,
        "cost_usd": 0.001 * n,
        "started_at": 1000.0 + n,
    }
    values.update(changes)
    return StepRecord(**values)


# -- runs -------------------------------------------------------------------------------------


def test_store_creates_its_directory(db_path: Path, store: RunStore) -> None:
    assert db_path.is_file()
    assert store.path == db_path


def test_create_and_get_run_round_trip(store: RunStore) -> None:
    created = store.create_run(
        goal="write a report",
        identity=IDENTITY,
        settings=SETTINGS,
        workspace="/tmp/ws/run-1",
        model="scripted:demo",
        run_id="run-1",
    )
    assert created.id == "run-1"
    assert created.status == "running"
    assert created.spent == BudgetSpent()

    loaded = store.get_run("run-1")
    assert loaded == created
    assert loaded.identity == IDENTITY
    assert loaded.settings == SETTINGS
    assert loaded.goal == "write a report"
    assert loaded.workspace == "/tmp/ws/run-1"
    assert loaded.model == "scripted:demo"
    assert loaded.reason == ""


def test_run_ids_are_generated_when_not_given(store: RunStore) -> None:
    first = store.create_run(goal="g", identity={}, settings={}, workspace="w", model="m")
    second = store.create_run(goal="g", identity={}, settings={}, workspace="w", model="m")
    assert first.id != second.id
    assert store.get_run(first.id).id == first.id
    assert new_run_id() != new_run_id()


def test_duplicate_run_id_is_rejected(store: RunStore) -> None:
    make_run(store, "run-1", goal="first")
    with pytest.raises(sqlite3.IntegrityError):
        make_run(store, "run-1", goal="second")
    assert store.get_run("run-1").goal == "first"


def test_missing_run_names_the_id(store: RunStore, db_path: Path) -> None:
    with pytest.raises(RunNotFound) as info:
        store.get_run("20990101-000000-abcdef")
    message = str(info.value)
    assert "'20990101-000000-abcdef'" in message
    assert str(db_path) in message
    assert isinstance(info.value, AutonomaError)


def test_list_runs_newest_first_with_limit(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = itertools.count(1_000_000.0, 10.0)
    monkeypatch.setattr("autonoma.runtime.store.time.time", lambda: next(clock))
    for i in range(5):
        make_run(store, f"run-{i}")
    assert [r.id for r in store.list_runs()] == ["run-4", "run-3", "run-2", "run-1", "run-0"]
    assert [r.id for r in store.list_runs(limit=2)] == ["run-4", "run-3"]
    assert store.list_runs()[0].identity == IDENTITY


def test_list_runs_of_an_empty_store(store: RunStore) -> None:
    assert store.list_runs() == []


def test_status_and_spent_round_trip(store: RunStore) -> None:
    make_run(store)
    spent = BudgetSpent(
        steps=3, prompt_tokens=1200, completion_tokens=340, usd=0.0123, seconds=41.5
    )
    store.save_spent("run-1", spent)
    assert store.get_run("run-1").spent == spent

    final = BudgetSpent(steps=4, prompt_tokens=1500, completion_tokens=400, usd=0.02, seconds=50)
    store.set_status("run-1", "budget_exhausted", "step limit reached (4 of 4 steps)", final)
    run = store.get_run("run-1")
    assert run.status == "budget_exhausted"
    assert run.reason == "step limit reached (4 of 4 steps)"
    assert run.spent == final
    assert run.spent.tokens == 1900

    store.set_status("run-1", "completed")
    run = store.get_run("run-1")
    assert run.status == "completed"
    assert run.reason == ""
    assert run.spent == final  # kept when no new spent is given


# -- steps ------------------------------------------------------------------------------------


def test_begin_and_finish_step_round_trip(store: RunStore) -> None:
    make_run(store)
    intent = make_step("run-1", 1)
    spent = BudgetSpent(steps=1, prompt_tokens=101, completion_tokens=21, usd=0.001)
    store.begin_step(intent, spent)

    [recorded] = store.steps("run-1")
    assert recorded == intent  # intent only: no observation, ok or finish time yet
    assert recorded.observation is None
    assert recorded.ok is None
    assert recorded.finished_at is None
    assert store.get_run("run-1").spent == spent

    later = BudgetSpent(steps=1, prompt_tokens=101, completion_tokens=21, usd=0.001, seconds=2)
    store.finish_step(
        "run-1", 1, status="done", observation="wrote 5 characters to f1.txt", ok=True, spent=later
    )
    [finished] = store.steps("run-1")
    assert finished.status == "done"
    assert finished.observation == "wrote 5 characters to f1.txt"
    assert finished.ok is True
    assert finished.finished_at is not None
    assert finished.thoughts == intent.thoughts
    assert finished.arguments == {"path": "f1.txt", "text": "é 日本"}
    assert finished.prompt_tokens == 101
    assert finished.completion_tokens == 21
    assert finished.cost_usd == pytest.approx(0.001)
    assert finished.started_at == 1001.0
    assert store.get_run("run-1").spent == later


def test_failed_step_keeps_ok_false(store: RunStore) -> None:
    make_run(store)
    store.begin_step(make_step("run-1", 1), BudgetSpent(steps=1))
    store.finish_step("run-1", 1, status="denied", observation="the person said no", ok=False)
    [step] = store.steps("run-1")
    assert step.status == "denied"
    assert step.ok is False


def test_steps_are_ordered_and_kept_per_run(store: RunStore) -> None:
    make_run(store, "run-1")
    make_run(store, "run-2")
    for n in (3, 1, 2):
        store.begin_step(make_step("run-1", n), BudgetSpent(steps=n))
    store.begin_step(make_step("run-2", 1, command="read_file"), BudgetSpent(steps=1))

    assert [s.n for s in store.steps("run-1")] == [1, 2, 3]
    assert [(s.n, s.command) for s in store.steps("run-2")] == [(1, "read_file")]
    assert store.steps("no-such-run") == []


def test_duplicate_step_number_is_rejected(store: RunStore) -> None:
    make_run(store)
    store.begin_step(make_step("run-1", 1), BudgetSpent(steps=1))
    with pytest.raises(sqlite3.IntegrityError):
        store.begin_step(
            make_step("run-1", 1, command="delete_file", started_at=2000.0), BudgetSpent(steps=99)
        )

    # Nothing of the refused step was kept, not even its spent update ...
    [step] = store.steps("run-1")
    assert step.command == "write_file"
    assert store.get_run("run-1").spent == BudgetSpent(steps=1)
    # ... and the store is still usable.
    store.begin_step(make_step("run-1", 2), BudgetSpent(steps=2))
    assert [s.n for s in store.steps("run-1")] == [1, 2]


def test_a_step_and_its_spent_are_written_together_or_not_at_all(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(store)

    def broken_save(*args: Any) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr("autonoma.runtime.store._save_spent", broken_save)
        with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
            store.begin_step(make_step("run-1", 1), BudgetSpent(steps=1))

    assert store.steps("run-1") == []  # the step row inserted first was rolled back
    store.begin_step(make_step("run-1", 1), BudgetSpent(steps=1))  # and the store still works
    assert [s.n for s in store.steps("run-1")] == [1]
    assert store.get_run("run-1").spent == BudgetSpent(steps=1)


def test_step_for_an_unknown_run_is_rejected(store: RunStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.begin_step(make_step("ghost", 1), BudgetSpent(steps=1))
    assert store.steps("ghost") == []


# -- events -----------------------------------------------------------------------------------


def test_events_round_trip_with_paging(store: RunStore) -> None:
    make_run(store, "run-1")
    make_run(store, "run-2")
    first = store.add_event("run-1", "step_started", {"n": 1, "command": "write_file"}, step=1)
    store.add_event("run-2", "other", {"x": 1})
    second = store.add_event("run-1", "tool_result", {"ok": True, "text": "é 日本"}, step=1)
    third = store.add_event("run-1", "run_finished", {"status": "completed"})

    assert first.id < second.id < third.id
    events = store.events("run-1")
    assert events == [first, second, third]
    assert [e.kind for e in events] == ["step_started", "tool_result", "run_finished"]
    assert events[1].data == {"ok": True, "text": "é 日本"}
    assert events[1].step == 1
    assert events[2].step is None

    assert store.events("run-1", after_id=first.id) == [second, third]
    assert store.events("run-1", after_id=third.id) == []
    assert [e.kind for e in store.events("run-2")] == ["other"]


def test_event_data_that_is_not_json_is_stored_as_text(store: RunStore) -> None:
    make_run(store)
    store.add_event("run-1", "odd", {"path": Path("/a/b")})
    [event] = store.events("run-1")
    assert event.data == {"path": "/a/b"}


def test_events_from_many_threads_are_all_kept(store: RunStore) -> None:
    make_run(store)

    def writer(worker: int) -> list[int]:
        return [store.add_event("run-1", "tick", {"w": worker, "i": i}).id for i in range(25)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = [i for batch in pool.map(writer, range(8)) for i in batch]

    assert len(set(ids)) == 200
    events = store.events("run-1")
    assert [e.id for e in events] == sorted(ids)
    assert sorted((e.data["w"], e.data["i"]) for e in events) == [
        (w, i) for w in range(8) for i in range(25)
    ]


# -- several instances (processes) on one file -----------------------------------------------


def test_a_second_instance_sees_what_the_first_wrote(db_path: Path, store: RunStore) -> None:
    make_run(store)
    store.begin_step(make_step("run-1", 1), BudgetSpent(steps=1))
    event = store.add_event("run-1", "step_started", {"n": 1}, step=1)

    other = RunStore(db_path)
    try:
        assert other.get_run("run-1") == store.get_run("run-1")
        assert other.steps("run-1") == store.steps("run-1")
        assert other.events("run-1") == [event]

        # and back: the first sees what the second writes, without reopening
        other.finish_step("run-1", 1, status="done", observation="ok", ok=True)
        later = other.add_event("run-1", "step_finished", {"n": 1}, step=1)
        other.set_status("run-1", "stopped", "stopped by the person")
    finally:
        other.close()

    assert store.steps("run-1")[0].observation == "ok"
    assert store.events("run-1", after_id=event.id) == [later]
    assert store.get_run("run-1").status == "stopped"


def test_reopening_keeps_everything(db_path: Path) -> None:
    first = RunStore(db_path)
    make_run(first)
    first.add_event("run-1", "hello", {})
    first.close()

    reopened = RunStore(db_path)  # the schema is created again, idempotently
    try:
        assert reopened.get_run("run-1").goal == "write a report"
        assert [e.kind for e in reopened.events("run-1")] == ["hello"]
    finally:
        reopened.close()


def test_wal_mode_is_on(db_path: Path, store: RunStore) -> None:
    raw = sqlite3.connect(db_path)
    try:
        [mode] = raw.execute("PRAGMA journal_mode").fetchone()
    finally:
        raw.close()
    assert mode == "wal"


# -- where the store lives -------------------------------------------------------------------


def test_default_home_honours_autonoma_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTONOMA_HOME", str(tmp_path / "custom"))
    assert default_home() == tmp_path / "custom"


@pytest.mark.parametrize("value", [None, ""])
def test_default_home_falls_back_to_the_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("AUTONOMA_HOME", raising=False)
    else:
        monkeypatch.setenv("AUTONOMA_HOME", value)
    assert default_home() == Path(platformdirs.user_data_dir("autonoma"))


def test_open_default_uses_autonoma_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTONOMA_HOME", str(tmp_path / "home"))
    store = RunStore.open_default()
    try:
        assert store.path == tmp_path / "home" / "runs.db"
        assert store.path.is_file()
    finally:
        store.close()
