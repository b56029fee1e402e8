"""The acceptance checks inside a run: written from the goals before the work (or read back),
run after the steps so the model can work to them, and the judge of every claim of
completion (docs/agent.md)."""

from __future__ import annotations

import asyncio

from autonoma.agent.acceptance import Acceptance
from autonoma.agent.check_types import Check, Verdict, task_check
from autonoma.agent.checks import (
    CheckRunner,
    CheckWriter,
    content_print,
    stated_checks,
    stored_checks,
)
from autonoma.agent.completion import unmet_deliverables
from autonoma.agent.judge import Judge
from autonoma.agent.judge_worked import inputs_of
from autonoma.agent.loop_services import LoopServices
from autonoma.agent.run_state import ChecksNow, RunState
from autonoma.agent.task_guards import task_guards
from autonoma.runtime.events import (
    ApprovalAnswered,
    CheckLeftOut,
    ChecksEdited,
    ChecksFailed,
    ChecksRun,
    ChecksWriting,
    ChecksWritten,
)
from autonoma.runtime.store import StepRecord
from autonoma.tools import Risk, ToolResult


async def accept_with(loop: LoopServices, state: RunState, *, fresh: bool) -> None:
    """The run's acceptance checks: those stored, or, at its start, written now from the
    goals (before any work), shown, and for a person in approval mode open to edits."""
    state.acceptance = None
    if not loop.config.checks:
        return
    run, workspace, spent = state.run, state.workspace, state.spent
    checks = stored_checks(await asyncio.to_thread(loop.store.events, run.id))
    start = loop.trial_workspace(run).start
    runner = CheckRunner(loop.sandbox, workspace, start) if loop.sandbox else None
    # what the task's words hold the work to, with the files it found known to say so
    guards = task_guards(run.goal, loop.found_at_start(state)) if runner and start.is_dir() else []
    if checks is None and fresh and not state.checks_asked:
        await loop.emit(run.id, ChecksWriting())
        judge = Judge(loop.side_model)
        written = await CheckWriter(loop.side_model, runner, judge=judge).write(
            run.goal, state.identity.goals, workspace, spent
        )
        spent.charge(written.usage.prompt_tokens, written.usage.completion_tokens, written.cost_usd)
        state.checks_asked = True
        fallback = not written.checks
        if fallback:
            await loop.emit(run.id, ChecksFailed(error=written.error, discarded=written.discarded))
        checks = written.checks or [task_check(run.goal)]
        # criteria of the writer's alone: the task is judged too, worked out again from its
        # inputs if it has any (add_header's "the first row is name,score" passed 'name,score'
        # appended as the last line)
        whole = task_check(run.goal)
        judged_only = whole not in checks and all(c.kind == "judged" for c in checks)
        if judged_only and (await asyncio.to_thread(inputs_of, run.goal, start)) is not None:
            checks.append(whole)
        if runner is not None:  # the formats and line counts the task states, held by our programs
            there = set(await asyncio.to_thread(workspace.files))
            checks += [c for c in stated_checks(run.goal, there) if c not in checks]
        acceptance = Acceptance(
            checks, runner, Judge(loop.side_model), run.goal, state.identity.goals, workspace
        )
        state.start_score = (await acceptance.progress()).score  # 0: each check fails now
        await loop.emit(
            run.id,
            ChecksWritten(
                checks=[c.model_dump() for c in checks],
                discarded=written.discarded,
                tokens=written.usage.total_tokens,
                start_score=state.start_score,
                guards=[g.model_dump() for g in guards],
                **{"fallback": True} if fallback else {},
            ),
        )
        checks = await review_checks(loop, run.id, checks)
    if not checks:
        return
    judge = Judge(loop.side_model, loop.found_at_start(state), start, loop.sandbox)
    state.acceptance = Acceptance(
        checks, runner, judge, run.goal, state.identity.goals, workspace, guards=guards
    )
    state.left_out = 0
    # the workspace as the checks found it: the judge is asked about it no more (at a
    # run's start the writer's guard has found no judged check met on it)
    state.judged_no.add(await asyncio.to_thread(content_print, workspace))


async def review_checks(loop: LoopServices, run_id: str, checks: list[Check]) -> list[Check]:
    """In approval mode the person sees the checks and may edit them (stored if changed)."""
    review = getattr(loop.approver, "review_checks", None)
    if review is None or loop.config.continuous:
        return checks
    edited: list[Check] | None = await review(checks)
    if edited is None or edited == checks:
        return checks
    await loop.emit(run_id, ChecksEdited(checks=[c.model_dump() for c in edited]))
    return edited


async def report_left_out(loop: LoopServices, state: RunState, n: int | None = None) -> None:
    """Say so, once each, when a code check was found unable to pass and left out."""
    if state.acceptance is None:
        return
    for result in state.acceptance.broken[state.left_out :]:
        await loop.emit(state.run.id, CheckLeftOut(what=result.check.what, why=result.broken), n)
    state.left_out = len(state.acceptance.broken)


async def checks_status(state: RunState) -> ChecksNow:
    """What the code checks say of the workspace now, for the model: tests it can work to
    (Reflexion's), not only a verdict at task_complete; and whether every one that can run
    passes."""
    acceptance = state.acceptance
    if acceptance is None:
        return ChecksNow()
    verdict = await acceptance.verdict()
    left_out = "".join(
        f"The check '{r.check.what}' was left out: it can never pass ({r.broken}). "
        for r in acceptance.broken
    )
    if all(r.check in acceptance.guards for r in verdict.results):
        # judged checks only (or none left): judged at a claim, once the guards hold
        waiting, ready = await _judged_waiting(state)
        guards = f"Not yet: {acceptance.failing(verdict)}." if verdict.failed else ""
        text = left_out + " ".join(filter(None, [waiting, guards]))
        brief = "The acceptance checks stand as step {n} says."
        return ChecksNow(text, ready and not guards, text, brief)
    if verdict.passed:
        passing = "; ".join(r.check.what for r in verdict.results)
        judged = any(c.kind == "judged" for c in acceptance.checks)
        later = " (the judged ones are judged at task_complete)" if judged else ""
        text = f"{left_out}The acceptance checks pass now{later}: {passing}."
        return ChecksNow(text, True, text, "The acceptance checks pass now, as step {n} says.")
    failing = acceptance.failing(verdict)
    counts = f"{len(verdict.failed)} of {len(verdict.results)}"
    # a refused claim's result holds `failing` word for word too
    brief = f"{left_out}Acceptance checks now: {counts} fail, as step {{n}} says."
    return ChecksNow(
        f"{left_out}Acceptance checks now: {counts} fail: {failing}", False, failing, brief
    )


def told_checks(state: RunState, observation: str) -> str:
    """What a step's record says the checks say after it: their status when it is news,
    changed since a step last said it and not in the step's result already (a refused claim
    says it); "" otherwise."""
    now = state.checks
    if not now.text or now.detail in observation or now.text == state.checks_told:
        return ""
    state.checks_told = now.text
    return now.text


async def _judged_waiting(state: RunState) -> tuple[str, bool]:
    """With only judged checks, nothing ends the run but a claim: say so, and whether the
    files the goals name are there to be judged (the 1.5B model wrote its haiku at step 2
    with one judged check left, never claimed it, rewrote it, deleted it and ran out of
    steps)."""
    assert state.acceptance is not None
    judged = [c.what for c in state.acceptance.checks if c.kind == "judged"]
    if not judged:
        return "", False
    said = f"The acceptance checks are judged when you call task_complete: {'; '.join(judged)}."
    return said, await _goal_files_there(state)


async def done_by_checks(
    loop: LoopServices, state: RunState, step: StepRecord, *, changed: bool
) -> bool:
    """Every code check passes after this step and the judged ones, judged now, agree:
    the work is done whether or not the model says so (the 1.5B model, its work done
    and checked, went on to undo it). With judged checks only, the work is judged once a
    step leaves it as it was, or brings it back to what an earlier step left, the files the
    goals name there: the model is looking at its work or going round, not doing more (the
    1.5B model wrote its haiku at step 2, then read it, wrote it again unchanged and recalled
    until its steps ran out; on CI's machine it wrote it, deleted it, wrote it again, appended
    a comma and wrote it again until its steps ran out, never claiming it). The judge is
    asked once about any one contents of the workspace."""
    acceptance = state.acceptance
    if not (loop.config.finish_on_checks and acceptance):
        return False
    if step.command == "task_complete" or step.status != "done":
        return False
    verdict = await acceptance.verdict()
    code = [r for r in verdict.results if r.check.kind == "code"]
    if code and not all(r.passed for r in code):
        return False
    judged = any(c.kind == "judged" for c in acceptance.checks)
    now = await asyncio.to_thread(content_print, state.workspace) if judged or not code else ""
    if not code:
        back = now in state.left_by_steps
        state.left_by_steps.add(now)
        if (changed and not back) or not await _goal_files_there(state):
            return False
    if judged:
        if now in state.judged_no:
            return False
        state.judged_no.add(now)
        verdict = await acceptance.verdict(judge=state.spent)
    elif any(c.typed for c in acceptance.checks):  # a typed value passing is confirmed
        verdict = await acceptance.verdict(judge=state.spent)
    await loop.emit(state.run.id, ChecksRun(**verdict.to_json()), step.n)
    return verdict.passed


async def _goal_files_there(state: RunState) -> bool:
    texts = [state.run.goal, *state.identity.goals]
    return not await asyncio.to_thread(unmet_deliverables, state.workspace, texts)


async def final_checks(state: RunState) -> Verdict | None:
    """The checks on the workspace as the run ends (judged ones as last judged)."""
    if state.acceptance is None:
        return None
    try:
        return await state.acceptance.verdict()
    except Exception:  # a run's end is recorded whatever the checks do
        return None


async def claim(loop: LoopServices, state: RunState, claimed: ToolResult, n: int) -> ToolResult:
    """Accept task_complete only if every acceptance check passes (the judged ones judged
    now); without checks, only if the files the task and goals name exist, not empty."""
    run = state.run
    unrun = await standing_refusals(loop, state)
    if state.acceptance is not None:
        acceptance = state.acceptance
        verdict = await acceptance.verdict(judge=state.spent)
        await report_left_out(loop, state, n)
        await loop.emit(run.id, ChecksRun(**verdict.to_json()), n)
        coded = any(r.check.kind == "code" for r in verdict.results)
        if verdict.passed and (coded or not unrun):  # a program's verdict outweighs a refusal
            return ToolResult(
                True, f"{claimed.output} (all {len(verdict.results)} checks pass)", final=True
            )
        state.refusal = acceptance.refusal(verdict) if not verdict.passed else _unrun_refusal(unrun)
        return ToolResult(False, state.refusal)
    problems = await asyncio.to_thread(
        unmet_deliverables,
        state.workspace,
        [run.goal, *state.identity.goals],
        loop.found_at_start(state),
    )
    if unrun:
        state.refusal = _unrun_refusal(unrun)
        return ToolResult(False, state.refusal)
    if not problems:
        return claimed
    return ToolResult(
        False,
        f"task_complete was refused: {'; '.join(problems)}. "
        "Finish the work the goals ask for first.",
    )


async def standing_refusals(loop: LoopServices, state: RunState) -> list[str]:
    """Commands the policy refused (no one at a terminal to ask) since the last step that
    changed something: a claim of completion after them is not taken on trust (a continuous
    run whose git commit was refused ended `completed`, "committed", with no commit). A
    person's refusal is their decision, made with the run in view, and does not stand; a
    later change made another way (write_file after a refused program) clears them."""
    events = await asyncio.to_thread(loop.store.events, state.run.id)
    by_policy = {
        e.step
        for e in events
        if isinstance(e.event, ApprovalAnswered) and e.event.by == "policy"
        and e.event.decision != "yes"
    }  # fmt: skip
    unrun: list[str] = []
    for step in state.steps:
        if step.status == "denied":
            if step.n in by_policy and step.command not in unrun:
                unrun.append(step.command)
        elif step.ok and step.command not in ("", "task_complete"):
            tool = loop.tools.get(step.command)
            if tool is None or tool.risk is not Risk.READ:  # a program, or a change
                unrun.clear()
    return unrun


def _unrun_refusal(unrun: list[str]) -> str:
    return (
        f"task_complete was refused: {', '.join(unrun)} was not run (refused above) and "
        "nothing has been done since that shows the work done another way. Do it with "
        "commands that can run; a claim turned down three times ends the run incomplete."
    )
