"""Progress judged by what can be checked, before the model's own opinion: the files the goals
name (there, and not empty), and whether the latest code run succeeded. A small model judging
its own work is unreliable; these facts decide whether an attempt moved forward."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from autonoma.agent.completion import deliverables
from autonoma.runtime.store import StepRecord
from autonoma.tools import Workspace

CODE_COMMANDS = ("execute_python", "execute_python_file", "execute_shell")


@dataclass(frozen=True)
class Progress:
    facts: list[str] = field(default_factory=list)
    met: int = 0  # files named by the goals that exist and hold something
    named: int = 0  # files named by the goals
    code_ok: bool | None = None  # the latest code run's outcome; None: no code was run

    @property
    def checks(self) -> int:
        return self.named + (self.code_ok is not None)

    @property
    def score(self) -> float:
        """The share of checks that pass, 0 when there is nothing to check."""
        if not self.checks:
            return 0.0
        return (self.met + bool(self.code_ok)) / self.checks

    @property
    def complete(self) -> bool:
        """Every check passes (and there was something to check)."""
        return self.checks > 0 and self.score == 1.0


def check_progress(
    workspace: Workspace, texts: Iterable[str], steps: Sequence[StepRecord] = ()
) -> Progress:
    """What the workspace and the steps show, as facts a person could verify."""
    files = deliverables(workspace, texts)
    facts = [d.describe() for d in files]
    code_ok = None
    runs = [s for s in steps if s.command in CODE_COMMANDS and s.status == "done"]
    if runs:
        ran = runs[-1]
        code_ok = ran.ok
        last_line = ((ran.observation or "").strip().splitlines() or [""])[-1][:160]
        verdict = "succeeded" if ran.ok else "failed"
        facts.append(f"the latest code run (step {ran.n}, {ran.command}) {verdict}: {last_line}")
    refused = sum(1 for s in steps if s.command == "task_complete" and not s.ok)
    if refused:
        facts.append(f"task_complete was refused {refused} time{'s' if refused != 1 else ''}")
    return Progress(facts, sum(d.done for d in files), len(files), code_ok)
