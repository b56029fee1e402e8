"""Watching a run for loops and stalls after each step, reflecting on what is caught, and
choosing what to do next: go on with a lesson, start the task again as a new trial (the
lessons kept, the abandoned trial shown as hindsight), or hand a planned task's plan back
(docs/reflection.md)."""

from __future__ import annotations

import asyncio

from autonoma.agent.hindsight import trial_attempts
from autonoma.agent.loop_context import save
from autonoma.agent.loop_services import LoopServices
from autonoma.agent.monitor import Monitor
from autonoma.agent.progress import Progress
from autonoma.agent.run_state import RunState
from autonoma.agent.self_reflection import SelfReflection, SelfReflector
from autonoma.agent.trials import Choice, choose_course
from autonoma.memory.importance import HeuristicRater
from autonoma.runtime.events import (
    MonitorDetected,
    SelfReflected,
    SelfReflectionFailed,
    TrialEnded,
    TrialStarted,
)


async def watch(loop: LoopServices, state: RunState, monitor: Monitor) -> Choice | None:
    """Check the newest step for loops and stalls; each detection is stored as an event
    with its evidence (the steps involved). With self-reflection on, the first one is
    reflected on, its lesson kept in view, and what to do next chosen from the checks and
    the reflection's verdict."""
    run, steps, spent = state.run, state.steps, state.spent
    n = steps[-1].n
    files = {n: await asyncio.to_thread(state.workspace.files)}
    progress = await loop.progress(state, steps)
    found = monitor.check(
        steps,
        limits=loop.config.limits,
        spent=state.budget.spent,
        files=files,
        progress=progress.score if progress.checks else None,  # burn is judged by checks
    )
    for detection in found:
        event = MonitorDetected(
            detection=detection.kind, steps=detection.steps, evidence=detection.evidence
        )
        await loop.emit(run.id, event, n)
    if not found or not loop.config.self_reflect:
        return None
    detection = found[0]
    state.caught += detection.kind != "periodic"
    who = f"{state.identity.name}, {state.identity.role}"
    reflection = await SelfReflector(loop.side_model).reflect(
        who, run.goal, steps, detection, spent, checks=progress.facts
    )
    if reflection is None:
        await loop.emit(run.id, SelfReflectionFailed(detection=detection.kind), n)
        return None
    choice = choose(loop, state, reflection, progress)
    lesson = reflection.lesson
    if reflection.verdict == "replan" and choice.course == "continue":
        lesson += " Make a new plan."
    state.lessons.append(lesson)
    await loop.emit(
        run.id,
        SelfReflected(
            detection=detection.kind,
            lesson=lesson,
            verdict=reflection.verdict,
            course=choice.course,
            why=choice.why,
            checks=progress.facts,
        ),
        n,
    )
    if loop.memory is not None:
        await loop.memory.remember(f"Self-reflection at step {n}: {lesson}", spent)
    return choice


def choose(
    loop: LoopServices, state: RunState, reflection: SelfReflection, progress: Progress
) -> Choice:
    # a task of a planned run can hand its plan back; a run on its own replans in its steps
    return choose_course(
        reflection.verdict,
        progress,
        start_score=state.start_score,
        detections=state.caught,
        trials_left=loop.config.trials - state.trial,
        can_replan=bool(state.run.task_id),
        escalate_after=loop.config.escalate_after,
    )


async def new_trial(loop: LoopServices, state: RunState, why: str) -> None:
    """End the trial and start the task again with a clean context (and, for a run that
    owns its workspace, the workspace as the run began), the lessons kept in view and the
    abandoned trial shown as hindsight."""
    run, steps = state.run, state.steps
    n = steps[-1].n
    progress = await loop.progress(state, steps)
    await loop.emit(
        run.id,
        TrialEnded(
            trial=state.trial,
            why=why,
            lesson=state.lessons[-1] if state.lessons else "",
            checks=progress.facts,
            score=progress.score,
        ),
        n,
    )
    unsaved = [s for s in steps if s.n > state.saved_upto]
    if loop.memory is not None and unsaved:  # what the trial saw is not forgotten
        await save(loop, state, unsaved, rater=HeuristicRater())
    archive = None
    if loop.trials_restore(run):
        archive = await asyncio.to_thread(loop.trial_workspace(run).restore, state.trial)
    state.attempts = trial_attempts(await asyncio.to_thread(loop.store.events, run.id))
    state.trial, state.first_step, state.summary, state.caught = state.trial + 1, n + 1, None, 0
    state.start_score = (await loop.progress(state, [])).score
    steps.clear()
    await loop.emit(
        run.id,
        TrialStarted(
            trial=state.trial,
            first_step=state.first_step,
            lessons=state.recent_lessons(loop.config.lessons),
            workspace="restored" if archive is not None else "kept",
            archive=str(archive) if archive is not None else None,
            start_score=state.start_score,
        ),
    )
