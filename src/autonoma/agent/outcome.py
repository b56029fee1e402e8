"""How a run ended: what `run`, `resume` and `autonoma run --json` report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunStatus


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    status: RunStatus
    reason: str
    workspace: str
    files: list[str]
    spent: BudgetSpent

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "workspace": self.workspace,
            "files": self.files,
            "totals": self.spent.model_dump() | {"tokens": self.spent.tokens},
        }
