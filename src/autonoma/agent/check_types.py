"""What an acceptance check is, what running or judging one gives, and the verdict of a
run's checks: shared by the writer and runner (agent/checks.py), the judge (agent/judge.py)
and the loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

CheckKind = Literal["code", "judged"]


class Check(BaseModel):
    """One acceptance check. `code`: a Python program that exits without an error exactly
    when the goal is met. `judged`: `what` is a criterion the model judges from the files."""

    goal: int = Field(0, ge=0, description="the goal it checks, 1-based; 0 for the whole task")
    what: str = Field(min_length=1, max_length=200, description="what it checks, in one line")
    kind: CheckKind = "code"
    code: str = Field("", max_length=2000)
    # kept with a value the writer typed by hand, for want of a computed one: when it fails
    # at task_complete, the task worked out again from its inputs is asked (acceptance.py)
    typed: bool = False

    def label(self) -> str:
        return f"[{self.kind}] {self.what}"


def task_check(task: str) -> Check:
    """When no usable check was written: the task itself, judged when completion is claimed,
    rather than a claim taken on trust (the 1.5B writer wrote none for two_hops, and the run
    claimed a wrong access code)."""
    return Check(
        goal=0, what=f"done exactly as asked: {' '.join(task.split())[:170]}", kind="judged"
    )


@dataclass(frozen=True)
class CheckResult:
    check: Check
    passed: bool
    output: str  # why it failed (the end of the traceback, the judge's reason), or ""
    broken: str = ""  # why the check can never pass, whatever the work does (check_harness.py)

    def describe(self, n: int) -> str:
        verdict = "passes" if self.passed else "FAILS"
        said = f": {self.output}" if self.output and not self.passed else ""
        return f"check {n} {self.check.label()} {verdict}{said}"


@dataclass(frozen=True)
class Verdict:
    results: list[CheckResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> list[tuple[int, CheckResult]]:
        return [(n, r) for n, r in enumerate(self.results, 1) if not r.passed]

    def facts(self) -> list[str]:
        return [r.describe(n) for n, r in enumerate(self.results, 1)]

    def to_json(self) -> dict[str, object]:
        return {
            "passed": self.passed,
            "results": [
                {"what": r.check.what, "kind": r.check.kind, "passed": r.passed, "output": r.output}
                for r in self.results
            ],
        }
