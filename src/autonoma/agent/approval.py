"""Asking a person before a risky command runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from autonoma.tools import Risk


@dataclass(frozen=True)
class ApprovalRequest:
    step: int
    command: str
    arguments: dict[str, Any]
    risk: Risk
    speak: str
    reason: str = ""  # why a person is asked when the run is continuous (outside content)
    callable: tuple[str, ...] = ()  # the commands that would run now without a person


@dataclass(frozen=True)
class Decision:
    """yes (for this and the next `times - 1` commands), no, or feedback that the agent gets
    as its next observation instead of running the command. `by`: a person decided, or the
    policy did because no one could be asked."""

    kind: Literal["yes", "no", "feedback"]
    times: int = 1
    feedback: str = ""
    by: Literal["person", "policy"] = "person"


class Approver(Protocol):
    async def __call__(self, request: ApprovalRequest) -> Decision: ...


class Asker(Protocol):
    """An approver that can also put a question to the person (`ask_person`)."""

    async def ask(self, question: str) -> str | None: ...


class RefuseWithoutTerminal:
    """Used when nobody can answer (standard input is not a terminal and the run is not
    continuous): the command is refused with a reason, never a hang."""

    async def __call__(self, request: ApprovalRequest) -> Decision:
        if request.reason:
            why = f"{request.reason}, so {request.command} needs a person's approval"
            rerun = ""
        else:
            why = f"{request.command} needs a person's approval ({request.risk} risk)"
            rerun = "; the person can rerun with --continuous"
        return Decision(
            kind="feedback",
            feedback=(
                f"{request.command} was not run: {why}, and no one is at a terminal to give "
                f"it. {still_callable(request.callable)}, or finish with task_complete{rerun}."
            ),
            by="policy",
        )


def still_callable(names: tuple[str, ...], shown: int = 24) -> str:
    """The sentence naming what may still be used (the model was told only "read" before,
    and could not know which commands that meant)."""
    if not names:
        return "No command runs without a person now"
    listed = ", ".join(names[:shown])
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"Commands that run without a person: {listed}{more}. Use them"
