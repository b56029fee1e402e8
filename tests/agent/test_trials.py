"""Reflection verdicts weighed against the checks: new trials from a clean state with the
lessons kept, escalation when nothing checkable moves, and replanning a planned run's graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autonoma.agent.hindsight import run_attempt, worst_to_best
from autonoma.agent.progress import Progress, check_progress
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.trials import TrialWorkspace, choose_course
from autonoma.errors import ModelUnavailable
from autonoma.llm import ScriptedModel
from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore, StepRecord
from autonoma.testing import act
from autonoma.tools import Workspace
from tests.agent.helpers import (
    FAN,
    IDENTITY,
    PLUMS_FROM_MEMORY,
    Planet,
    fruit_steps,
    settings_with,
    write_then_finish,
)
from tests.agent.helpers import start_planned as start

GOAL = "Write the answer to answer.txt"


def reflection(verdict: str, instead: str = "Write answer.txt with write_file now.") -> dict:
    return {"went_wrong": "I kept reading a file that is not there.", "instead": instead,
            "verdict": verdict}  # fmt: skip


def everything(model: ScriptedModel, request: int) -> str:
    return "\n".join(m.content for m in model.requests[request].messages)


# -- the choice ---------------------------------------------------------------------------

NOTHING = Progress(["answer.txt does not exist yet"], met=0, named=1)
HALF = Progress(["a.txt holds 1 line", "b.txt does not exist yet"], met=1, named=2)
DONE = Progress(["answer.txt holds 1 line"], met=1, named=1)


@pytest.mark.parametrize(
    ("verdict", "progress", "start", "caught", "left", "replan", "course"),
    [
        ("new_trial", NOTHING, 0.0, 1, 1, False, "new_trial"),
        ("new_trial", HALF, 0.0, 1, 1, False, "continue"),  # checked progress is kept
        ("new_trial", NOTHING, 0.0, 1, 0, False, "continue"),  # no trials left
        ("new_trial", DONE, 0.0, 1, 1, False, "continue"),  # the checks pass
        ("continue", NOTHING, 0.0, 1, 1, False, "continue"),
        ("continue", NOTHING, 0.0, 2, 1, False, "new_trial"),  # escalated: caught twice
        ("continue", HALF, 0.0, 2, 1, False, "continue"),
        ("continue", HALF, 0.5, 2, 1, False, "new_trial"),  # nothing gained since the start
        ("replan", NOTHING, 0.0, 1, 1, True, "replan"),
        ("replan", NOTHING, 0.0, 1, 1, False, "continue"),  # a run on its own
    ],
)
def test_the_checks_weigh_before_the_verdict(
    verdict: Any,
    progress: Progress,
    start: float,
    caught: int,
    left: int,
    replan: bool,
    course: str,
) -> None:
    choice = choose_course(
        verdict,
        progress,
        start_score=start,
        detections=caught,
        trials_left=left,
        can_replan=replan,
    )
    assert choice.course == course, choice.why


def test_progress_is_what_the_workspace_and_the_code_runs_show(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    (tmp_path / "alpha.txt").write_text("one\ntwo\n")
    (tmp_path / "empty.txt").write_text("")

    def ran(n: int, ok: bool, out: str) -> StepRecord:
        return StepRecord(run_id="r", n=n, status="done", thoughts={}, command="execute_shell",
                          arguments={}, observation=out, ok=ok, started_at=0.0)  # fmt: skip

    progress = check_progress(workspace, ["Fill alpha.txt, beta.txt and empty.txt"])
    assert progress.facts == [
        "alpha.txt holds 2 lines",
        "beta.txt does not exist yet",
        "empty.txt is empty",
    ]
    assert (progress.met, progress.named, progress.code_ok) == (1, 3, None)
    assert progress.score == pytest.approx(1 / 3) and not progress.complete

    failed = check_progress(
        workspace, ["alpha.txt"], [ran(1, True, "ok"), ran(2, False, "1 failed")]
    )
    assert failed.code_ok is False and failed.score == 0.5
    assert "the latest code run (step 2, execute_shell) failed: 1 failed" in failed.facts
    passed = check_progress(
        workspace, ["alpha.txt"], [ran(1, False, "x"), ran(2, True, "3 passed")]
    )
    assert passed.complete
    assert not check_progress(workspace, ["nothing named"]).complete  # nothing to check


def test_a_trial_workspace_is_put_back_and_the_abandoned_one_kept(tmp_path: Path) -> None:
    root, keep = tmp_path / "ws", tmp_path / "trials" / "r1"
    root.mkdir()
    (root / "given.txt").write_text("from the person")
    trials = TrialWorkspace(root, keep)
    assert trials.snapshot()
    (root / "given.txt").write_text("overwritten")
    (root / "sub").mkdir()
    (root / "sub" / "junk.txt").write_text("junk")
    archive = trials.restore(1)
    assert archive == keep / "trial-1"
    assert sorted(p.name for p in root.iterdir()) == ["given.txt"]
    assert (root / "given.txt").read_text() == "from the person"
    assert (archive / "given.txt").read_text() == "overwritten"
    assert (archive / "sub" / "junk.txt").read_text() == "junk"
    assert trials.restore(1) == keep / "trial-1.1"  # never over an earlier archive


# -- in the loop --------------------------------------------------------------------------


async def begin(tmp_path: Path, model: ScriptedModel, **settings: Any) -> tuple[RunStore, Any]:
    store = RunStore(tmp_path / "runs.db")
    options = RunSettings(
        checks=False, model="scripted", continuous=True, memory=False, self_reflect=True
    )
    options = settings_with(options, **settings)
    run, _ = await create_run(store, model, GOAL, options, workspace=tmp_path / "ws",
                              identity=IDENTITY)  # fmt: skip
    return store, run


async def test_a_new_trial_starts_clean_and_keeps_the_lessons(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            act("write_file", path="scratch.txt", text="a wrong start"),
            *[act("read_file", path="missing.txt")] * 3,
            reflection("new_trial"),  # asked after step 4, when the repeat is caught
            act("write_file", path="answer.txt", text="42"),
            act("task_complete", reason="answer.txt holds the answer"),
        ]
    )
    store, run = await begin(tmp_path, model)
    (tmp_path / "ws" / "given.txt").write_text("the person's file")
    events: list[Any] = []
    outcome = await run_agent(store, model, run, listeners=[events.append])

    assert outcome.status == "completed", outcome.reason
    assert [s.n for s in store.steps(run.id)] == [1, 2, 3, 4, 5, 6]  # numbering goes on
    kinds = [e.kind for e in events]
    assert kinds.index("trial_ended") < kinds.index("trial_started") < kinds.index("run_finished")
    ended = next(e for e in events if e.kind == "trial_ended")
    assert ended.step == 4 and ended.data["trial"] == 1
    assert ended.data["checks"] == ["answer.txt does not exist yet"] and ended.data["score"] == 0
    begun = next(e for e in events if e.kind == "trial_started")
    assert begun.data["trial"] == 2 and begun.data["first_step"] == 5
    assert begun.data["workspace"] == "restored"

    # the workspace is as the run began, and the abandoned trial's is kept aside
    ws = tmp_path / "ws"
    assert sorted(p.name for p in ws.iterdir()) == ["answer.txt", "given.txt"]
    assert (Path(begun.data["archive"]) / "scratch.txt").read_text() == "a wrong start"

    # trial 2's first prompt: no step of trial 1, but its lesson and its hindsight
    first = everything(model, 5)
    assert "Nothing has been done yet" in first
    assert "missing.txt" not in first.replace("I kept reading a file that is not there.", "")
    assert "scratch.txt" not in first
    assert "Instead: Write answer.txt with write_file now." in first
    assert "Earlier attempts at this task, worst first" in first
    assert "trial 1: abandoned at step 4" in first and "answer.txt does not exist yet" in first


async def test_caught_twice_with_nothing_checked_starts_a_new_trial(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            *[act("read_file", path="missing.txt")] * 3,
            reflection("continue"),  # caught once: go on with the lesson
            act("list_files"),
            act("read_file", path="other.txt"),
            reflection("continue"),  # 5 steps without action: caught again, a new trial
            act("write_file", path="answer.txt", text="42"),
            act("task_complete", reason="done"),
        ]
    )
    store, run = await begin(tmp_path, model)
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed", outcome.reason
    reflected = [e for e in store.events(run.id) if e.kind == "self_reflection"]
    assert [(e.step, e.data["course"]) for e in reflected] == [(3, "continue"), (5, "new_trial")]
    assert "caught in this trial" in reflected[1].data["why"]
    (begun,) = [e for e in store.events(run.id) if e.kind == "trial_started"]
    assert begun.data["first_step"] == 6


async def test_checked_progress_is_not_thrown_away(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            act("write_file", path="answer.txt", text="41"),
            *[act("read_file", path="answer.txt")] * 3,
            reflection("new_trial", "Correct answer.txt to 42 and finish."),
            act("write_file", path="answer.txt", text="42"),
            act("task_complete", reason="done"),
        ]
    )
    store, run = await begin(tmp_path, model)
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed"
    (event,) = [e for e in store.events(run.id) if e.kind == "self_reflection"]
    assert event.data["verdict"] == "new_trial" and event.data["course"] == "continue"
    assert "answer.txt holds 1 line" in event.data["checks"]
    assert not [e for e in store.events(run.id) if e.kind.startswith("trial_")]
    # the reflection prompt showed the checks as facts
    assert "What the checks show" in everything(model, 4)


async def test_the_last_trial_is_not_followed_by_another(tmp_path: Path) -> None:
    loop = [act("read_file", path="missing.txt")] * 3
    finish = [act("write_file", path="answer.txt", text="42"), act("task_complete", reason="ok")]
    model = ScriptedModel([*loop, reflection("new_trial"), *loop, reflection("new_trial"), *finish])
    store, run = await begin(tmp_path, model, limits=BudgetLimits(max_steps=20))
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed", outcome.reason
    courses = [e.data["course"] for e in store.events(run.id) if e.kind == "self_reflection"]
    assert courses == ["new_trial", "continue"]  # trials=2: one new trial at most
    assert [e.kind for e in store.events(run.id)].count("trial_started") == 1


async def test_a_resumed_run_stays_in_its_trial(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            *[act("read_file", path="missing.txt")] * 3,
            reflection("new_trial"),
            ModelUnavailable("scripted", "it went away"),  # the run stops, resumable
        ]
    )
    store, run = await begin(tmp_path, model)
    assert (await run_agent(store, model, run)).status == "failed"
    again = ScriptedModel(
        [act("write_file", path="answer.txt", text="42"), act("task_complete", reason="done")]
    )
    outcome = await run_agent(store, again, store.get_run(run.id))
    assert outcome.status == "completed"
    assert [s.n for s in store.steps(run.id)] == [1, 2, 3, 4, 5]
    prompt = everything(again, 0)
    assert "Nothing has been done yet" in prompt and "missing.txt" not in prompt
    assert "trial 1: abandoned at step 3" in prompt and "Instead: Write answer.txt" in prompt


# -- in a planned run ---------------------------------------------------------------------


class Reflecting(Planet):
    """A Planet that also answers self-reflection requests, in order."""

    def __init__(self, *args: Any, reflections: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reflections = reflections

    def __call__(self, messages: list[Message], request: CompletionRequest) -> Any:
        if "went_wrong" in (request.plan.schema or {}).get("properties", {}):
            return self.reflections.pop(0)
        return super().__call__(messages, request)


async def test_a_task_that_finds_the_plan_off_is_replanned_not_retried(tmp_path: Path) -> None:
    revision = PLUMS_FROM_MEMORY
    lesson = {
        "went_wrong": "There are no plum notes to read; reading again will not help.",
        "instead": "Write the plum notes from what is known instead of looking for them.",
        "verdict": "replan",
    }
    steps = fruit_steps() | {
        # the same observation each time (a listing would change as other tasks write)
        "t3": [act("read_file", path="plum-notes.txt")],
        "t6": write_then_finish("plums.txt", "plums are sweet\n"),
    }
    planet = Reflecting([FAN], steps, replans=[revision], reflections=[lesson])
    store, outcome, events = await start(
        tmp_path, ScriptedModel(planet), task_retries=1, self_reflect=True, task_steps=6
    )
    assert outcome.status == "completed", outcome.reason
    tasks = {t["id"]: t for t in store.tasks(outcome.run_id)}
    assert set(tasks) == {"t1", "t2", "t4", "t5", "t6"}
    assert planet.taken["t3"] == 3  # caught at its third step, and not tried again
    replanning = next(e for e in events if e.kind == "replanning")
    assert replanning.data["task"] == "t3" and "PlanOff" in replanning.data["error"]
    assert replanning.data["lesson"].startswith("There are no plum notes")
    assert "Write the plum notes from what is known" in planet.planner_prompts[-1]
    (t3,) = [c for c in store.children(outcome.run_id) if c.task_id == "t3"]
    assert t3.status == "failed" and t3.reason.startswith("the plan is off")


def test_hindsight_orders_attempts_worst_first_the_person_above_the_checks(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path / "runs.db")
    runs = []
    for score, rating, said in ((0.5, None, ""), (1.0, 2, "too long"), (0.0, None, "")):
        run = store.create_run(goal="g", identity={}, settings={}, workspace=str(tmp_path),
                               model="m")  # fmt: skip
        store.set_status(run.id, "failed", "step limit reached")
        store.add_event(run.id, "run_finished", {"status": "failed", "reason": "step limit",
                        "score": score, "checks": [f"{score:.0%}"]})  # fmt: skip
        if said:
            store.add_event(run.id, "approval_answered", {"decision": "feedback",
                            "feedback": said}, 2)  # fmt: skip
        if rating is not None:
            store.add_event(run.id, "rated", {"score": rating, "comment": ""})
        runs.append(store.get_run(run.id))
    attempts = [run_attempt(f"attempt {i}", r, store.events(r.id)) for i, r in enumerate(runs, 1)]
    ordered = worst_to_best(attempts)
    # rated 2 of 5 ranks 0.25: below the unrated attempt whose checks passed half
    assert [a.label for a in ordered] == ["attempt 3", "attempt 2", "attempt 1"]
    assert ordered[1].describe() == (
        "attempt 2: failed: step limit reached. the person rated it 2 of 5. "
        'checks (100% passed): 100%. the person said: "too long"'
    )


def follows_its_lessons(messages: list[Message], request: CompletionRequest) -> Any:
    """A model that keeps listing files until a lesson in its prompt tells it what to do: so
    what it does next depends on the reflection alone."""
    if "went_wrong" in (request.plan.schema or {}).get("properties", {}):
        return reflection("continue", "Write answer.txt with write_file now.")
    prompt = "\n".join(m.content for m in messages)
    if "Instead: Write answer.txt" not in prompt:
        return act("list_files")
    if 'write_file {"path": "answer.txt"' in prompt:
        return act("task_complete", reason="answer.txt written")
    return act("write_file", path="answer.txt", text="42")


@pytest.mark.parametrize("reflect", [False, True])
async def test_a_reflection_changes_the_next_command(tmp_path: Path, reflect: bool) -> None:
    model = ScriptedModel(follows_its_lessons)
    store, run = await begin(
        tmp_path, model, self_reflect=reflect, limits=BudgetLimits(max_steps=8)
    )
    outcome = await run_agent(store, model, run)
    commands = [s.command for s in store.steps(run.id)]
    if not reflect:  # nothing tells it otherwise: it loops to the end of its budget
        assert outcome.status == "budget_exhausted" and "write_file" not in commands
        return
    assert outcome.status == "completed"
    assert commands == ["list_files"] * 3 + ["write_file", "task_complete"]
