"""What the model sees at a run's next step (the fixed instructions first, for the prompt
cache, then the steps, then what changes), what long-term memory keeps of the steps as
they age out of it, and the answer's schema and temperature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autonoma.agent.action import action_schema
from autonoma.agent.checks import checks_block
from autonoma.agent.code_actions import NOT_IN_PROGRAMS, functions, listed, program_schema
from autonoma.agent.completion import misnamed, unmet_deliverables
from autonoma.agent.hindsight import worst_to_best
from autonoma.agent.in_view import in_view, readable, with_readable
from autonoma.agent.loop_services import LoopServices
from autonoma.agent.monitor import REFUSED_REPEAT, worn_out
from autonoma.agent.run_state import RunState
from autonoma.memory.context import (
    Assembled,
    Recollection,
    RollingSummary,
    assemble,
    fence,
    repeat_note,
    repeats,
)
from autonoma.memory.importance import HeuristicRater, ImportanceRater
from autonoma.runtime.budget import describe_left
from autonoma.runtime.events import MemorySaved, Reflected, Reflecting, SummaryUpdated
from autonoma.runtime.store import StepRecord
from autonoma.templating import render
from autonoma.tools import Tool


async def prepare(loop: LoopServices, state: RunState) -> Assembled:
    """The next prompt. Steps that aged out of the verbatim window are folded into the
    rolling summary and saved to long-term memory, `summary_batch` at a time."""
    run, identity, steps = state.run, state.identity, state.steps
    recalled = await recollection(loop, state)
    if recalled is not None and recalled.outside:
        why = "it recalled memories made from outside content"
        await loop.mark_outside(state, state.next_n, why)
    assembled = assemble_prompt(loop, state, steps, state.summary, recalled)
    if len(assembled.aged) < loop.config.summary_batch:
        return assembled
    aged = assembled.aged
    if loop.summariser is not None:
        state.summary = await loop.summariser.update(
            state.summary,
            aged,
            who=f"{identity.name}, {identity.role}",
            goals=identity.goals,
            spent=state.spent,
        )
        summary = SummaryUpdated(upto=state.summary.upto, text=state.summary.text)
        await loop.emit(run.id, summary)
    unsaved = [s for s in aged if s.n > state.saved_upto]
    if loop.memory is not None and unsaved:
        await save(loop, state, unsaved)
    return assemble_prompt(loop, state, steps, state.summary, recalled)


async def recollection(loop: LoopServices, state: RunState) -> Recollection | None:
    """What long-term memory holds for the current task, recalled again only after the run
    stored something (a fold's steps, a reflection, a note): between folds the prompt keeps
    the same recollection before its steps, so the prompt cache reuses it."""
    if loop.memory is None:
        return None
    if state.recalled is not None and state.recalled[0] == loop.memory.stores:
        return state.recalled[1]
    recalled = await loop.memory.recollection(state.run.goal)
    state.recalled = (loop.memory.stores, recalled)
    return recalled


async def save_the_rest(loop: LoopServices, state: RunState, status: str) -> None:
    """At the end of a run, the steps not yet in long-term memory go there. With the
    budget spent they are rated by the heuristic, which costs no model call."""
    if loop.memory is None or status not in ("completed", "budget_exhausted"):
        return
    rest = [s for s in state.steps if s.n > state.saved_upto]
    if not rest:
        return
    rater = HeuristicRater() if status == "budget_exhausted" else None
    await save(loop, state, rest, rater=rater)


async def save(
    loop: LoopServices,
    state: RunState,
    steps: list[StepRecord],
    rater: ImportanceRater | None = None,
) -> None:
    """Steps into long-term memory, and a reflection on them when one is due."""
    assert loop.memory is not None
    run_id, spent = state.run.id, state.spent
    records = await loop.memory.save_steps(steps, spent, rater=rater)
    state.saved_upto = steps[-1].n
    await loop.emit(run_id, MemorySaved(upto=state.saved_upto, records=records))
    if rater is None and loop.memory.reflection_due():
        await loop.emit(run_id, Reflecting())
        outcome = await loop.memory.reflect(spent)
        await loop.emit(
            run_id,
            Reflected(
                questions=outcome.questions,
                reflections=[
                    {"id": r.id, "text": r.text, "evidence": r.evidence}
                    for r in outcome.reflections
                ],
                problems=outcome.problems,
            ),
        )


def system_prompt(loop: LoopServices, state: RunState) -> str:
    """The run's fixed instructions. Nothing in it changes from step to step, so a prompt
    cache keeps it (what changes is in `closing`); and what every run shares (the commands,
    the answer's form) comes before what is this run's (who, the task, the goals, the
    files found), so a run's first step starts from the cache an earlier run left."""
    code = loop.config.actions == "code"
    every, own = listed(functions(in_programs(state)), state.run.goal) if code else ([], [])
    return render(
        "autonoma.agent",
        "system_code.j2" if code else "system.j2",
        identity=state.identity,
        task=state.run.goal,
        tools=state.offered,
        functions=every,
        task_functions=own,
        approval=not loop.config.continuous,
        code=code,
        outside=state.outside_from is not None,
        found=fence(state.found, f"{state.run.id}:found") if state.found else "",
    )


def assemble_prompt(
    loop: LoopServices,
    state: RunState,
    steps: list[StepRecord],
    summary: RollingSummary | None = None,
    recalled: Recollection | None = None,
) -> Assembled:
    """What the model sees at the next step: the fixed system prompt and checks, the steps
    so far inside the context budget, then what changes each step (what memory recalls,
    the workspace, the budget left, a repeat) and the request with the goals restated."""
    head = checks_block(state.acceptance.checks) if state.acceptance else ""
    system = system_prompt(loop, state)

    def assembled(closing_text: str) -> Assembled:
        return assemble(
            system,
            steps,
            closing_text,
            loop.limits,
            loop.count,
            head=head,
            summary=summary,
            recalled=recalled,
        )

    def final() -> Assembled:
        """The checks' status said by reference to the latest step whose result says it,
        if that result is in view word for word; else said whole."""
        now = state.checks
        said = [s.n for s in steps if now.detail and now.detail in f"{s.observation}{s.checks}"]
        if said:
            brief = assembled(closing(loop, state, steps, now.by_reference(said[-1])))
            if now.detail in "\n\n".join(_texts(brief)):
                return brief
        return assembled(closing(loop, state, steps, now.text))

    if loop.config.actions == "code":  # a program reads files as it likes
        state.in_view = None
        return final()
    # what the prompt shows whole before its closing says so, then held to the final prompt
    state.in_view = in_view(state.workspace, _texts(assembled("")))
    prompt = final()
    if state.in_view:
        shown = in_view(state.workspace, _texts(prompt)) or []
        state.in_view = [name for name in state.in_view if name in shown]
    return prompt


def _texts(assembled: Assembled) -> list[str]:
    """The prompt's parts after the fixed instructions: the files found at the start, shown
    there, may be read once, so the model has them among its latest steps (further back in a
    long prompt, the 1.5B model works from them less well)."""
    return [str(m["content"]) for m in assembled.messages if m["role"] != "system"]


def closing(
    loop: LoopServices, state: RunState, steps: list[StepRecord], checks_now: str = ""
) -> str:
    """The request at the end of the prompt, with what changes from step to step (the
    checks' status as `checks_now` says it)."""
    run, identity, config = state.run, state.identity, loop.config
    files = state.workspace.visible_files()
    found = loop.found_at_start(state)
    listing = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
    texts = [run.goal, *identity.goals]
    missing = [] if state.acceptance else unmet_deliverables(state.workspace, texts, found)
    last = steps[-1] if steps else None
    earlier = repeats(steps).get(last.n) if last else None
    return render(
        "autonoma.agent",
        "next_step.j2",
        first=not steps,
        goals=identity.goals,
        files=listing,
        missing=missing,
        misnamed=misnamed(files, texts, found),
        code=config.actions == "code",
        budget_left=describe_left(config.limits, state.budget.spent),
        repeated=repeat_note(last.n, earlier) if last and earlier else "",
        withheld=withheld(loop, state, steps),
        checks_now=checks_now,
        checks_pass=state.checks.passing,
        in_view=state.in_view or [],
        all_in_view=readable(state.workspace, state.in_view) == [],
        lessons=state.recent_lessons(config.lessons),
        hindsight=[a.describe() for a in worst_to_best(state.attempts)],
    )


def temperature(loop: LoopServices, steps: Sequence[StepRecord]) -> float:
    """Hotter after a step that repeated an earlier one or was refused as a repeat, so
    the next answer is a new one rather than the likeliest again."""
    last = steps[-1] if steps else None
    repeated = last is not None and (
        last.n in repeats(steps) or (last.observation or "").startswith(REFUSED_REPEAT)
    )
    base = loop.config.temperature
    return max(base, loop.config.repeat_temperature) if repeated else base


def schema(loop: LoopServices, state: RunState, left_out: str = "") -> dict[str, Any]:
    """The answer's JSON schema: a program, or one of the offered commands but `left_out`."""
    if loop.config.actions == "code":
        return program_schema()
    tools = [tool for tool in state.offered if tool.name != left_out]
    allowed = readable(state.workspace, state.in_view)
    tools = with_readable(tools, allowed)
    key = (*(tool.name for tool in tools), "|", *(allowed or ()))
    if key not in loop.schemas:
        loop.schemas[key] = action_schema(tools)
    return loop.schemas[key]


def withheld(loop: LoopServices, state: RunState, steps: list[StepRecord]) -> str:
    """The command left out of the next step's schema because the model has worn it out
    (monitor.worn_out). Only JSON actions can be constrained so; a program asking for it
    is refused instead. Never the only command offered."""
    if loop.config.actions == "code":
        return ""
    name = worn_out(steps)
    offered = [tool.name for tool in state.offered]
    return name if name in offered and len(offered) > 1 else ""


def in_programs(state: RunState) -> list[Tool]:
    """The offered commands a code action may call as functions."""
    return [t for t in state.offered if t.name not in NOT_IN_PROGRAMS]
