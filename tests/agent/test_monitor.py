"""The Monitor over hand-built steps, and over the steps of a real looping run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autonoma.agent.monitor import Detection, Monitor, MonitorSettings
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.runtime.store import RunStore, StepRecord, StepStatus
from autonoma.testing import act
from tests.agent.helpers import start

QUIET = {"periodic_every": 0, "stall_steps": 0, "no_action_steps": 0, "burn_window": 0}


def step(
    n: int,
    command: str = "read_file",
    observation: str = "same",
    *,
    status: StepStatus = "done",
    ok: bool = True,
    plan: str = "look around",
    **arguments: Any,
) -> StepRecord:
    return StepRecord(
        run_id="r",
        n=n,
        status=status,
        thoughts={"text": "", "reasoning": "", "plan": plan, "criticism": "", "speak": ""},
        command=command,
        arguments=arguments or {"path": "a.txt"},
        observation=observation,
        ok=ok,
        started_at=0.0,
    )


def feed(monitor: Monitor, steps: list[StepRecord], **kwargs: Any) -> list[list[Detection]]:
    """Check after each step, as the loop will; the detections found at each."""
    return [monitor.check(steps[: i + 1], **kwargs) for i in range(len(steps))]


def kinds(found: list[Detection]) -> list[str]:
    return [d.kind for d in found]


def test_repeat_is_caught_exactly_at_the_count() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    found = feed(monitor, [step(n) for n in range(1, 5)])
    assert found[:2] == [[], []]
    assert kinds(found[2]) == ["repeat"] and found[2][0].steps == [1, 2, 3]
    assert "read_file" in found[2][0].evidence
    assert found[3] == []  # not re-reported at the next step


def test_repeat_refires_after_another_count() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    found = feed(monitor, [step(n) for n in range(1, 7)])
    assert [kinds(f) for f in found] == [[], [], ["repeat"], [], [], ["repeat"]]
    assert found[5][0].steps == [1, 2, 3, 4, 5, 6]


def test_same_command_with_different_observations_is_no_repeat() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    found = feed(monitor, [step(n, observation=f"line {n}") for n in range(1, 6)])
    assert all(f == [] for f in found)


def test_two_step_cycle() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    steps = [step(1, "read_file", "A"), step(2, "list_files", "B")]
    steps += [step(3, "read_file", "A"), step(4, "list_files", "B")]
    found = feed(monitor, steps)
    assert found[:3] == [[], [], []]
    assert kinds(found[3]) == ["cycle"] and found[3][0].steps == [1, 2, 3, 4]
    assert "cycle of 2 steps" in found[3][0].evidence


def test_three_step_cycle() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    names = ["read_file", "list_files", "search_files"]
    steps = [step(n, names[(n - 1) % 3], f"obs {names[(n - 1) % 3]}") for n in range(1, 7)]
    found = feed(monitor, steps)
    assert all(f == [] for f in found[:5])
    assert kinds(found[5]) == ["cycle"] and found[5][0].steps == [1, 2, 3, 4, 5, 6]
    assert "cycle of 3 steps" in found[5][0].evidence


def test_a_cycle_with_a_changing_observation_is_no_cycle() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    steps = [step(1, "read_file", "A"), step(2, "list_files", "B")]
    steps += [step(3, "read_file", "A2"), step(4, "list_files", "B")]
    assert all(f == [] for f in feed(monitor, steps))


def test_reading_seen_content_stalls_and_a_write_resets() -> None:
    settings = MonitorSettings(**{**QUIET, "stall_steps": 4, "repeat_count": 0})
    monitor = Monitor(settings)
    # the first read is new content (progress); then reads of what was already seen
    steps = [step(1, observation="x")]
    steps += [step(n, observation="x", path=f"f{n}") for n in range(2, 5)]
    steps.append(step(5, "list_files", "x", directory="."))
    found = feed(monitor, steps)
    assert all(f == [] for f in found[:4])
    assert kinds(found[4]) == ["stalled"] and found[4][0].steps == [2, 3, 4, 5]
    # a write changes something: the count starts over
    steps.append(step(6, "write_file", "wrote b.txt", path="b.txt", text="hi"))
    steps += [step(n, observation="x", path=f"g{n}") for n in range(7, 11)]
    found = feed(monitor, steps)[5:]
    assert [kinds(f) for f in found] == [[], [], [], [], ["stalled"]]
    assert found[-1][0].steps == [7, 8, 9, 10]


def test_failed_and_invalid_steps_change_nothing() -> None:
    monitor = Monitor(MonitorSettings(**{**QUIET, "stall_steps": 3, "repeat_count": 0}))
    steps = [
        step(1, "write_file", "error: no space", ok=False, path="a"),
        step(2, "", "not valid JSON", status="invalid", ok=False),
        step(3, "read_file", "missing", ok=False),
    ]
    found = feed(monitor, steps)
    assert kinds(found[2]) == ["stalled"]


def test_a_new_file_in_the_listing_is_progress() -> None:
    monitor = Monitor(MonitorSettings(**{**QUIET, "stall_steps": 3, "repeat_count": 0}))
    steps = [step(n, "execute_shell", "boom", ok=False, code=str(n)) for n in range(1, 4)]
    listing = {1: ["a"], 2: ["a", "b"], 3: ["a", "b"]}
    assert all(f == [] for f in feed(monitor, steps, files=listing))
    monitor = Monitor(MonitorSettings(**{**QUIET, "stall_steps": 3, "repeat_count": 0}))
    found = feed(monitor, steps, files=lambda n: ["a"])
    assert kinds(found[2]) == ["stalled"]


def test_plans_that_announce_work_without_action() -> None:
    settings = MonitorSettings(**{**QUIET, "no_action_steps": 3})
    plan = "write the report to report.md, then finish"
    steps = [step(n, "read_file", f"new {n}", plan=plan, path=f"{n}") for n in range(1, 4)]
    found = feed(Monitor(settings), steps)
    assert found[:2] == [[], []]
    assert kinds(found[2]) == ["no_action"] and found[2][0].steps == [1, 2, 3]
    # the same reads with a plan that only means to look are not no_action
    looking = [s.model_copy(update={"thoughts": {"plan": "look at the files"}}) for s in steps]
    assert all(f == [] for f in feed(Monitor(settings), looking))
    # an action in between resets it
    acted = [*steps[:2], step(3, "write_file", "ok", plan=plan, path="r.md", text="x")]
    assert all(f == [] for f in feed(Monitor(settings), acted))


def test_budget_burn() -> None:
    settings = MonitorSettings(**{**QUIET, "burn_window": 3, "repeat_count": 0})
    limits = BudgetLimits(max_steps=10)
    steps = [step(n, observation="x", path=str(n)) for n in range(1, 9)]
    monitor = Monitor(settings)
    found = [
        monitor.check(steps[:n], limits=limits, spent=BudgetSpent(steps=n)) for n in range(1, 9)
    ]
    # idle from step 2; at step 5 half the steps are spent and the last 4 changed nothing
    assert [kinds(f) for f in found] == [[], [], [], [], ["budget_burn"], [], [], ["budget_burn"]]
    assert "50% of the steps budget" in found[4][0].evidence
    # with progress measured and good enough, no burn
    monitor = Monitor(settings)
    assert monitor.check(steps[:6], limits=limits, spent=BudgetSpent(steps=6), progress=0.5) == []
    monitor = Monitor(settings)
    found6 = monitor.check(steps[:6], limits=limits, spent=BudgetSpent(steps=6), progress=0.2)
    assert kinds(found6) == ["budget_burn"] and "progress is 20%" in found6[0].evidence
    # tokens count too
    monitor = Monitor(settings)
    spent = BudgetSpent(steps=4, prompt_tokens=900)
    found4 = monitor.check(steps[:4], limits=BudgetLimits(max_tokens=1000), spent=spent)
    assert kinds(found4) == ["budget_burn"] and "tokens" in found4[0].evidence


def test_periodic_every_n() -> None:
    monitor = Monitor(MonitorSettings(periodic_every=3, stall_steps=0))
    steps = [step(n, observation=f"o{n}") for n in range(1, 8)]
    found = feed(monitor, steps)
    assert [kinds(f) for f in found] == [[], [], ["periodic"], [], [], ["periodic"], []]
    assert found[5][0].steps == [4, 5, 6]


def test_no_duplicates_across_calls() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    steps = [step(n) for n in range(1, 4)]
    assert kinds(monitor.check(steps)) == ["repeat"]
    assert monitor.check(steps) == []
    assert monitor.check(steps) == []


def test_a_running_step_is_not_read_yet() -> None:
    monitor = Monitor(MonitorSettings(**QUIET))
    steps = [step(1), step(2), step(3, status="running")]
    assert monitor.check(steps) == []
    steps[2] = step(3)
    assert kinds(monitor.check(steps)) == ["repeat"]


def test_a_resumed_monitor_does_not_refire() -> None:
    steps = [step(n) for n in range(1, 4)]
    first = Monitor(MonitorSettings(**QUIET))
    assert kinds(first.check(steps)) == ["repeat"]
    resumed = Monitor(MonitorSettings(**{**QUIET, "stall_steps": 1}), after=3)
    assert resumed.check(steps) == []
    steps += [step(4, "write_file", "ok", path="b"), step(5, "list_files", "same")]
    assert resumed.check(steps[:4]) == []
    # it knows what was seen before the stop: reading "same" again changes nothing
    found = resumed.check(steps)
    assert kinds(found) == ["stalled"] and found[0].steps == [5]


async def test_a_looping_scripted_run_is_caught_within_the_count(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel([act("list_files", directory=".") for _ in range(3)])
    run, _ = await start(store, model, tmp_path, limits=BudgetLimits(max_steps=3))
    steps = store.steps(run.id)
    assert len(steps) == 3
    monitor = Monitor()
    first = next(s.n for s in steps if any(d.kind == "repeat" for d in monitor.check(steps[: s.n])))
    assert first == MonitorSettings().repeat_count


async def test_a_two_step_cycle_in_a_scripted_run_is_caught(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    pair = [act("list_files", directory="."), act("read_file", path="notes.txt")]
    model = ScriptedModel(pair * 3)
    run, _ = await start(store, model, tmp_path, limits=BudgetLimits(max_steps=6))
    steps = store.steps(run.id)
    monitor = Monitor(MonitorSettings(periodic_every=0))
    found = [monitor.check(steps[:n]) for n in range(1, len(steps) + 1)]
    cycles = [(n, d) for n, f in enumerate(found, 1) for d in f if d.kind == "cycle"]
    assert [(n, d.steps) for n, d in cycles] == [(4, [1, 2, 3, 4])]
