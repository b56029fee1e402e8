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


@dataclass(frozen=True)
class Decision:
    """yes (for this and the next `times - 1` commands), no, or feedback that the agent gets
    as its next observation instead of running the command."""

    kind: Literal["yes", "no", "feedback"]
    times: int = 1
    feedback: str = ""


class Approver(Protocol):
    async def __call__(self, request: ApprovalRequest) -> Decision: ...


class RefuseWithoutTerminal:
    """Used when nobody can answer (standard input is not a terminal and the run is not
    continuous): the command is refused with a reason, never a hang."""

    async def __call__(self, request: ApprovalRequest) -> Decision:
        return Decision(
            kind="feedback",
            feedback=(
                f"{request.command} needs a person's approval ({request.risk} risk), but no one "
                "is at a terminal to give it, so it was not run. Use commands that only read, "
                "or finish with task_complete; the person can rerun with --continuous."
            ),
        )
