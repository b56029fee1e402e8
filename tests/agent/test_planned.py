"""The planned strategy with ScriptedModel: a real store, real workspace, real local executor."""

from __future__ import annotations

import shutil
from collections import Counter
from itertools import groupby
from pathlib import Path

import pytest

from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import run_agent
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.testing import act
from tests.agent.helpers import FAN, PLUMS_FROM_MEMORY, Planet, fruit_steps, task, write_then_finish
from tests.agent.helpers import start_planned as start

IDENTITY = AgentIdentity(
    name="FruitGPT", role="an agent that keeps fruit notes", goals=["fruit.md"]
)


async def test_fan_out_fan_in_and_a_failing_branch(tmp_path: Path) -> None:
    planet = Planet([FAN], fruit_steps())
    store, outcome, events = await start(tmp_path, ScriptedModel(planet), replans=0)

    tasks = {t["id"]: t for t in store.tasks(outcome.run_id)}
    assert {k: t["status"] for k, t in tasks.items()} == {
        "t1": "done",
        "t2": "done",
        "t3": "failed",
        "t4": "done",
        "t5": "skipped",
    }
    assert outcome.status == "failed"
    assert "1 task(s) failed: t3" in outcome.reason
    assert tasks["t3"]["attempts"] == 2  # one retry
    assert tasks["t5"]["result"] == "skipped: t3 failed"
    assert tasks["t4"]["result"] == "fruit.md combines both"
    ws = tmp_path / "ws"
    assert (ws / "fruit.md").read_text().startswith("# Apples")
    assert not (ws / "plums.md").exists()

    # the independent tasks ran together: all three started, t2 (highest value per effort)
    # first, before any finished
    changes = [(e.data["task"], e.data["status"]) for e in events if e.kind == "task_changed"]
    assert changes[:3] == [("t2", "running"), ("t1", "running"), ("t3", "running")]
    # the fan-in task waited for both inputs and was told what they produced
    assert planet.order.index("t4") > max(
        i for i, t in enumerate(planet.order) if t in ("t1", "t2")
    )
    assert "t1: apples.txt written" in planet.prompts["t4"][0]
    assert "Files from earlier tasks: apples.txt, pears.txt" in planet.prompts["t4"][0]
    # the retry saw why the first attempt failed
    retry = planet.prompts["t3"][-1]
    assert "Earlier attempts at this task, worst first" in retry
    assert "attempt 1: budget_exhausted: step limit reached" in retry
    assert "checks (0% passed): plums.txt does not exist yet" in retry

    # every task's run is stored under the planned run, one per attempt
    children = store.children(outcome.run_id)
    assert Counter(c.task_id for c in children) == {"t1": 1, "t2": 1, "t3": 2, "t4": 1}
    assert store.list_runs() == [store.get_run(outcome.run_id)]
    # the budget is the run's: every task's steps count
    assert outcome.spent.steps == sum(len(store.steps(c.id)) for c in children)
    kinds = [e.kind for e in events if e.run_id == outcome.run_id]
    assert kinds[:3] == ["run_started", "planning", "planned"]
    assert kinds.count("task_changed") >= 10


async def test_a_plan_with_a_cycle_is_sent_back_with_the_problem(tmp_path: Path) -> None:
    cyclic = {
        "tasks": [
            task("a", "Write notes on apples", ["b"], outputs=["apples.txt"]),
            task("b", "Write notes on pears", ["a"], outputs=["pears.txt"]),
        ]
    }
    fixed = {"tasks": [task("a", "Write notes on apples", outputs=["apples.txt"])]}
    planet = Planet([cyclic, fixed], {"a": write_then_finish("apples.txt", "crisp\n")})
    model = ScriptedModel(planet)
    _, outcome, events = await start(tmp_path, model)
    assert outcome.status == "completed"
    repair = model.requests[1].messages[-1].content
    assert "the tasks form a cycle: a -> b -> a" in repair or "b -> a -> b" in repair
    planned = next(e for e in events if e.kind == "planned")
    assert planned.data["repairs"] == 1


async def test_a_plan_that_stays_invalid_fails_the_run_with_the_last_problems(
    tmp_path: Path,
) -> None:
    broken = {"tasks": [task("a", "Summarise", inputs=["nowhere.txt"])]}
    planet = Planet([broken, broken, broken], {})
    store, outcome, _ = await start(tmp_path, ScriptedModel(planet))
    assert outcome.status == "failed"
    assert "no valid plan in 3 attempt(s)" in outcome.reason
    assert "task a needs input 'nowhere.txt', which no task produces" in outcome.reason
    assert store.tasks(outcome.run_id) == []


async def test_the_shared_budget_halts_the_graph_and_resume_keeps_finished_tasks(
    tmp_path: Path,
) -> None:
    chain = {
        "tasks": [
            task("t1", "Write notes on apples", outputs=["apples.txt"]),
            task("t2", "Write notes on pears", ["t1"], outputs=["pears.txt"]),
        ]
    }
    steps = {
        "t1": write_then_finish("apples.txt", "crisp\n"),
        "t2": write_then_finish("pears.txt", "soft\n"),
    }
    planet = Planet([chain], steps)
    store, outcome, _ = await start(
        tmp_path, ScriptedModel(planet), limits=BudgetLimits(max_steps=3)
    )
    assert outcome.status == "budget_exhausted"
    assert "step limit reached (3 of 3 steps)" in outcome.reason
    tasks = {t["id"]: t["status"] for t in store.tasks(outcome.run_id)}
    assert tasks == {"t1": "done", "t2": "pending"}  # cut off, not failed

    # resumed with a larger budget: t1 is kept, t2 continues its own run
    run = store.get_run(outcome.run_id)
    settings = run.settings | {"limits": BudgetLimits(max_steps=10).model_dump()}
    store.set_settings(run.id, settings)
    resumed = await run_agent(store, ScriptedModel(planet), store.get_run(run.id))
    assert resumed.status == "completed"
    assert planet.taken["t1"] == 2  # not run again
    assert resumed.spent.steps == 4


async def test_tasks_stepping_at_once_do_not_overshoot_the_step_limit(tmp_path: Path) -> None:
    # three tasks side by side, none ever done: each sees steps left before it asks the model
    side_by_side = {
        "tasks": [
            task("t1", "Write notes on apples", outputs=["apples.txt"]),
            task("t2", "Write notes on pears", outputs=["pears.txt"]),
            task("t3", "Write notes on plums", outputs=["plums.txt"]),
        ]
    }
    steps = {t: [act("list_files")] for t in ("t1", "t2", "t3")}
    for limit in (4, 5):
        planet = Planet([side_by_side], steps)
        _, outcome, _ = await start(
            tmp_path / str(limit),
            ScriptedModel(planet),
            limits=BudgetLimits(max_steps=limit),
            concurrency=3,
            task_steps=10,
        )
        assert outcome.status == "budget_exhausted"
        assert outcome.spent.steps == limit, outcome.reason
        assert sum(planet.taken.values()) == limit
        assert f"step limit reached ({limit} of {limit} steps)" in outcome.reason


# the rest of FAN revised after t3 (plums) failed: plum notes from memory instead


async def test_replanning_after_a_failure_keeps_finished_work(tmp_path: Path) -> None:
    revision = PLUMS_FROM_MEMORY
    steps = fruit_steps() | {"t6": write_then_finish("plums.txt", "plums are sweet\n")}
    planet = Planet([FAN], steps, replans=[revision])
    # one task at a time: run side by side, t3 could fail before t1 had finished (seen in CI)
    store, outcome, events = await start(
        tmp_path, ScriptedModel(planet), task_retries=0, concurrency=1
    )
    assert outcome.status == "completed", outcome.reason
    tasks = {t["id"]: t for t in store.tasks(outcome.run_id)}
    assert set(tasks) == {"t1", "t2", "t4", "t5", "t6"}  # the failed t3 was replaced by t6
    assert all(t["status"] == "done" for t in tasks.values())
    # the model saw the failure and the results kept
    prompt = planet.planner_prompts[-1]
    assert "t3" in prompt and "step limit reached" in prompt
    assert "apples.txt written" in prompt
    # finished tasks were not run again
    assert planet.taken["t1"] == 2 and planet.taken["t2"] == 2
    assert (tmp_path / "ws" / "plums.md").exists()
    replanned = next(e for e in events if e.kind == "replanned")
    assert replanned.data["after"] == "t3"
    assert "t6" in replanned.data["tree"] and "t3" not in replanned.data["tree"]


async def test_task_creation_adds_work_and_merges_a_rephrased_duplicate(tmp_path: Path) -> None:
    plan = {"tasks": [task("t1", "Write notes on apples", outputs=["apples.txt"])]}
    creation = {
        "tasks": [
            task("n1", "Notes on apples: write them", outputs=["apple-notes.txt"]),
            task("n2", "Write notes on cherries", outputs=["cherries.txt"]),
        ],
        "priorities": [],
    }
    steps = {
        "t1": write_then_finish("apples.txt", "crisp\n"),
        "n2": write_then_finish("cherries.txt", "red\n"),
    }
    planet = Planet([plan], steps, creations=[creation])
    store, outcome, events = await start(
        tmp_path, ScriptedModel(planet), create_tasks=True, embedder="lexical"
    )
    assert outcome.status == "completed", outcome.reason
    assert [t["id"] for t in store.tasks(outcome.run_id)] == ["t1", "n2"]
    created = next(e for e in events if e.kind == "tasks_created")
    assert created.data["merged"] == [{"task": "Notes on apples: write them", "into": "t1"}]
    assert [t["id"] for t in created.data["added"]] == ["n2"]
    assert (tmp_path / "ws" / "cherries.txt").read_text() == "red\n"


BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
NUMBERS_THEN_COLORS = {
    "tasks": [
        task("t1", "Write the numbers 1 to 3 into numbers.txt", outputs=["numbers.txt"]),
        # it may change numbers.txt: a task whose words change no file only reads those it
        # finds (agent/task_guards.read_only_input), and these tests need one that spoils
        task(
            "t2",
            "Write red and blue into colors.txt and update numbers.txt",
            ["t1"],
            outputs=["colors.txt"],
        ),
    ]
}
NUMBERS_AND_COLORS_CHECKS = {
    "numbers 1 to 3": [
        {
            "what": "numbers.txt holds 1, 2, 3",
            "code": "assert open('numbers.txt').read().split() == ['1', '2', '3'], 'not 1 to 3'",
        }
    ],
    "red and blue": [
        {
            "what": "colors.txt holds red, blue",
            "code": "assert open('colors.txt').read().split() == ['red', 'blue'], 'not red, blue'",
        }
    ],
}
# t2 spoils t1's file before doing its own: the embedded model's retry of one task appended
# to the other task's file, and the run said "all 2 tasks done" (each task's checks had
# passed when it finished)
SPOILS_NUMBERS = [
    act("append_file", path="numbers.txt", text="red\n"),
    act("write_file", path="colors.txt", text="red\nblue\n"),
]


@BWRAP
async def test_a_task_undone_by_later_work_is_done_again_told_why(tmp_path: Path) -> None:
    numbers = act("write_file", path="numbers.txt", text="1\n2\n3\n")
    steps = {"t1": [numbers, numbers], "t2": SPOILS_NUMBERS}
    planet = Planet([NUMBERS_THEN_COLORS], steps, checks=NUMBERS_AND_COLORS_CHECKS)
    store, outcome, events = await start(tmp_path, ScriptedModel(planet), checks=True, replans=0)

    assert (outcome.status, outcome.reason) == ("completed", "all 2 tasks done")
    assert (tmp_path / "ws" / "numbers.txt").read_text() == "1\n2\n3\n"
    assert [t for t, _ in groupby(planet.order)] == ["t1", "t2", "t1"]  # not t2 again
    told = planet.prompts["t1"][-1]
    assert "its finished work was undone by a later task: task t1's check" in told
    assert "'numbers.txt holds 1, 2, 3' passed when it finished and fails now" in told
    reopened = [e.data for e in events if e.kind == "task_changed" and e.data["task"] == "t1"]
    assert [e["status"] for e in reopened] == ["running", "done", "pending", "running", "done"]
    assert [c.task_id for c in store.children(outcome.run_id)] == ["t1", "t2", "t1"]


@BWRAP
async def test_work_undone_again_leaves_the_run_incomplete_naming_the_check(
    tmp_path: Path,
) -> None:
    numbers = act("write_file", path="numbers.txt", text="1\n2\n3\n")
    spoils_colors = act("append_file", path="colors.txt", text="green\n")
    steps = {"t1": [numbers, spoils_colors, numbers], "t2": SPOILS_NUMBERS}
    planet = Planet([NUMBERS_THEN_COLORS], steps, checks=NUMBERS_AND_COLORS_CHECKS)
    store, outcome, _ = await start(tmp_path, ScriptedModel(planet), checks=True, replans=0)

    assert {t["id"]: t["status"] for t in store.tasks(outcome.run_id)} == {
        "t1": "done",
        "t2": "done",
    }
    assert outcome.status == "incomplete"
    assert "all 2 tasks done, but later work undid earlier work" in outcome.reason
    assert "task t2's check 'colors.txt holds red, blue' passed when it finished" in outcome.reason
    assert "fails now: AssertionError: not red, blue" in outcome.reason
    assert "t1's check" not in outcome.reason  # its second run mended it


@BWRAP
async def test_tasks_whose_checks_still_pass_complete_the_run(tmp_path: Path) -> None:
    numbers = act("write_file", path="numbers.txt", text="1\n2\n3\n")
    steps = {"t1": [numbers], "t2": [act("write_file", path="colors.txt", text="red\nblue\n")]}
    planet = Planet([NUMBERS_THEN_COLORS], steps, checks=NUMBERS_AND_COLORS_CHECKS)
    _, outcome, _ = await start(tmp_path, ScriptedModel(planet), checks=True)
    assert (outcome.status, outcome.reason) == ("completed", "all 2 tasks done")
    assert planet.order == ["t1", "t2"]
