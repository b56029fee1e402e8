"""Carrying out a step's action: the gate before a tool (a person's approval, or the policy's
refusal when no one is at a terminal) weighed by what the action can reach and whether
outside content is in the context, then the tool itself or, for a code action, the program
in the sandbox with the tools bridged to it (docs/tools.md)."""

from __future__ import annotations

import posixpath
from pathlib import PurePosixPath
from typing import Any

from autonoma.agent.action import Action
from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.agent.code_actions import (
    HELPERS,
    PROGRAM,
    carried_functions,
    carried_helpers,
    functions,
    mend_joins,
    missing_path,
    named_tools,
    report,
)
from autonoma.agent.completion import named_files
from autonoma.agent.loop_context import in_programs
from autonoma.agent.loop_services import LoopServices
from autonoma.agent.run_state import RunState
from autonoma.agent.task_guards import read_only_input
from autonoma.runtime.events import ApprovalAnswered, ApprovalAsked
from autonoma.tools import Risk, Tool, ToolContext, ToolResult, WorkspaceError
from autonoma.tools.bridge import ProgramResult, run_program
from autonoma.tools.sandbox import SandboxError

_RISK_ORDER = [Risk.READ, Risk.WRITE, Risk.NETWORK, Risk.EXECUTE]


async def act(
    loop: LoopServices, state: RunState, n: int, action: Action
) -> tuple[ToolResult, bool]:
    """The tool's result, and whether the person denied it (then it did not run)."""
    if loop.config.actions == "code" and action.command == PROGRAM:
        return await program(loop, state, n, action)
    tool = loop.tools.get(action.command)
    if tool is None:  # only possible with an unconstrained backend that slipped
        return ToolResult(False, f"error: there is no command {action.command!r}"), False
    kept = read_only_refusal(loop, state, tool, action.arguments)
    if kept:
        return ToolResult(False, kept), False
    reason = untrusted_reason(loop, state)
    guarded = unattended_after_outside(loop, reason)
    theirs = persons_file(loop, state, tool, action.arguments) if guarded else ""
    if theirs:
        reason = f"{reason}, and {theirs} {THEIRS}"
    if tool.risk is not Risk.READ and (needs_person(loop, reason, [tool]) or theirs):
        decision = await approve(loop, state, n, action, tool.risk, reason)
        if decision.kind == "no":
            return ToolResult(False, f"the person refused to run {action.command}"), True
        if decision.kind == "feedback":
            return ToolResult(False, refused(action.command, decision)), True
    state.context.code_writes = not guarded
    return await tool.run(state.context, action.arguments), False


def read_only_refusal(
    loop: LoopServices, state: RunState, tool: Tool, arguments: dict[str, Any]
) -> str:
    """Why a change to a file is refused when the file is an input the task only reads
    (agent/task_guards.read_only_input), or ""."""
    path = arguments.get("path")
    if tool.risk is not Risk.WRITE or not isinstance(path, str):
        return ""
    clean = posixpath.normpath(path)
    # found when it began (its start snapshot, kept when it has checks), or at its (re)start
    # and not written by it: the person's
    found = loop.found_at_start(state) | state.persons
    if not read_only_input(state.run.goal, clean, found):
        return ""
    return (
        f"refused: {clean} is an input of the task, which asks to change none of the files "
        f"the run found, only to read them: leave {clean} as it is, and write the results "
        "to the file the task names"
    )


THEIRS = "is a file of the person's (the run did not write it and the goal does not name it)"


def unattended_after_outside(loop: LoopServices, reason: str) -> bool:
    """Whether outside content is in a continuous run's context: then the person's files that
    the goal does not name are not changed without them, and code sees the workspace
    read-only (a file's injected order to delete secrets.txt ran, undoable, in 3 of 5
    sources of the injection benchmark)."""
    return bool(reason) and loop.config.continuous


def persons_file(loop: LoopServices, state: RunState, tool: Tool, arguments: dict[str, Any]) -> str:
    """The file a change by a file tool would touch when it is the person's: the workspace
    holds it, it was there when the run began (`--trust-workspace` or not) or the run did not
    write it, and the person's goal does not name it ("" if not).
    A goal given by outside content (a sub-agent's or a planned task's after outside content)
    names nothing: its words may be the injection's."""
    path = arguments.get("path")
    own = state.context.own
    if not (tool.risk is Risk.WRITE and tool.undoable) or not isinstance(path, str) or own is None:
        return ""
    clean = posixpath.normpath(path)
    if state.context.workspace.stat(clean) is None:
        return ""
    if clean not in state.persons and own.holds(clean):
        return ""
    words = [] if loop.config.outside_at_start else [state.run.goal]
    named = {PurePosixPath(name).name for name in named_files(words)}
    return "" if PurePosixPath(clean).name in named else clean


async def program(
    loop: LoopServices, state: RunState, n: int, action: Action
) -> tuple[ToolResult, bool]:
    """A code step: the program, approved as a whole if it names a risky tool and needs
    a person, run in the sandbox with the offered tools as functions."""
    if loop.sandbox is None:
        return ToolResult(False, "error: code actions need the sandbox (bubblewrap)"), False
    context = state.context
    code = str(action.arguments.get("code", ""))
    offered = in_programs(state)
    names = functions(offered)
    risks = {t.name: t.risk for t in offered}
    risky = {name for name in named_tools(code, names) if risks[name] is not Risk.READ}
    outside_before = state.outside_from
    if risky:
        reason = untrusted_reason(loop, state)
        if needs_person(loop, reason, [t for t in offered if t.name in risky]):
            worst = max((risks[name] for name in risky), key=_RISK_ORDER.index)
            decision = await approve(loop, state, n, action, worst, reason)
            if decision.kind == "no":
                return ToolResult(False, "the person refused to run the program"), True
            if decision.kind == "feedback":
                return ToolResult(False, refused("the program", decision)), True
    context.code_writes = False  # a program changes the workspace through the tools alone
    # the program can read every file: any the run did not write makes its output outside
    foreign = context.own.foreign(context.workspace.files()) if context.own else []
    flags = {"claimed": False, "untrusted": bool(foreign)}

    async def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = loop.tools.get(name)
        if tool is None:
            return ToolResult(False, f"error: there is no command {name!r}")
        kept = read_only_refusal(loop, state, tool, arguments)
        if kept:
            return ToolResult(False, kept)
        if tool.risk is not Risk.READ:
            if name not in risky:
                return ToolResult(False, f"refused: call {name} by its name in the program")
            reason = untrusted_reason(loop, state)
            theirs = unattended_after_outside(loop, reason) and persons_file(
                loop, state, tool, arguments
            )
            if theirs:
                return ToolResult(
                    False,
                    f"refused: {reason}, and {theirs} {THEIRS}: changing it needs the "
                    "person, and no one is at a terminal; write results to files of your own",
                )
            entered = state.outside_from != outside_before
            if entered and needs_person(loop, untrusted_reason(loop, state), [tool]):
                return ToolResult(
                    False,
                    f"refused: outside content entered during this program, so {name} "
                    "needs the person's approval: call it in a program of its own",
                )
        result = await tool.run(context, arguments)
        if result.untrusted:
            flags["untrusted"] = True
            await loop.mark_outside(state, n, f"{name} brought outside content")
        flags["claimed"] = flags["claimed"] or result.final
        return result

    try:
        earlier = [str(s.arguments.get("code", "")) for s in state.steps if s.command == PROGRAM]
        helpers = HELPERS + carried_helpers(carried_functions(earlier, code))
        ran = await run_program(
            loop.sandbox, context.workspace.root, mend_joins(code), offered, call, helpers=helpers
        )
    except SandboxError as error:
        return ToolResult(False, f"error: the program could not start: {error}"), False
    output = report(ran, loop.config.max_observation_chars, code, _meant(context, ran))
    ok = ran.sandbox.ok
    if flags["claimed"] and not ok:
        output += "\n(task_complete was called, but the program then failed: not checked)"
    final = flags["claimed"] and ok
    return ToolResult(ok, output, final=final, untrusted=flags["untrusted"]), False


def _meant(context: ToolContext, ran: ProgramResult) -> str:
    """The files a program that failed to find one may have meant, said as the workspace
    says it, or "": told only FileNotFoundError, the 1.5B model wrote 2024-q3-finale.txt,
    2023-q3-finale.txt and 2024_q3_final.txt for reports/2024-q3-final.txt (list_first)."""
    missing = None if ran.sandbox.ok else missing_path(ran.sandbox.stderr)
    if missing is None:
        return ""
    try:
        said = str(context.workspace.not_a_file(missing))
    except (OSError, WorkspaceError):
        return ""
    return said if "did you mean" in said else ""


def needs_person(loop: LoopServices, untrusted: str, tools: list[Tool]) -> bool:
    """Whether a person must approve using `tools` (none of them read-only): always
    without --continuous; in a continuous run, after outside content, unless every
    effect of theirs stays in the workspace, where `autonoma undo` can put it back."""
    if not loop.config.continuous:
        return True
    return bool(untrusted) and not all(undoable(loop, t) for t in tools)


def undoable(loop: LoopServices, tool: Tool) -> bool:
    if not tool.undoable:
        return False
    return tool.risk is Risk.WRITE or (loop.sandbox is not None and loop.sandbox.isolated)


def untrusted_reason(loop: LoopServices, state: RunState) -> str:
    """Why the run's context is not the person's alone, or "" when it is (or the guard
    is off)."""
    if state.outside_from is None or not loop.config.approve_after_untrusted:
        return ""
    if state.outside_from == 0 and state.by_found:
        return (
            "outside content was in the context from the run's start: files in the "
            "workspace it did not write (--trust-workspace says they are the person's)"
        )
    if state.outside_from == 0:
        return "outside content was in the context from the run's start"
    return f"outside content entered the context at step {state.outside_from}"


async def approve(
    loop: LoopServices, state: RunState, n: int, action: Action, risk: Risk, reason: str = ""
) -> Decision:
    """The person's answer (or the policy's, with no one at a terminal) to running `action`;
    a "yes" for several times covers the next commands that need one."""
    if state.approved_ahead > 0:
        state.approved_ahead -= 1
        return Decision(kind="yes")
    continuous = loop.config.continuous
    request = ApprovalRequest(
        n,
        action.command,
        action.arguments,
        risk,
        action.thoughts.speak or action.thoughts.text,
        reason,
        callable=tuple(
            t.name
            for t in state.offered
            if t.risk is Risk.READ or (continuous and undoable(loop, t))
        ),
    )
    run_id = state.run.id
    await loop.emit(run_id, ApprovalAsked(command=action.command, risk=str(risk), reason=reason), n)
    decision = await loop.approver(request)
    state.approved_ahead = max(0, decision.times - 1) if decision.kind == "yes" else 0
    answered = ApprovalAnswered(
        decision=decision.kind, times=decision.times, feedback=decision.feedback, by=decision.by
    )
    await loop.emit(run_id, answered, n)
    return decision


def refused(what: str, decision: Decision) -> str:
    """The observation of a command not run: the policy's words as they are, a person's
    feedback as theirs."""
    if decision.by == "policy":
        return decision.feedback
    return f"the person did not run {what} and said: {decision.feedback}"
