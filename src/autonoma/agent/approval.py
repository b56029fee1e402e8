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


@dataclass(frozen=True)
class Decision:
    """yes (for this and the next `times - 1` commands), no, or feedback that the agent gets
    as its next observation instead of running the command."""

    kind: Literal["yes", "no", "feedback"]
    times: int = 1
    feedback: str = ""


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
                f"{why}, but no one is at a terminal to give it, so it was not run. Use "
                f"commands that only read, or finish with task_complete{rerun}."
            ),
        )
