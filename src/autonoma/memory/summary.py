"""The rolling summary of older steps: as steps age out of the verbatim window, the model
folds them into a running summary (a few steps a call), so the prompt stays flat in size."""

from __future__ import annotations

from collections.abc import Sequence

from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.context import RollingSummary, step_text, summary_line
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import StepRecord
from autonoma.templating import render


class Summariser:
    def __init__(self, model: Model, *, words: int = 250, observation_chars: int = 600) -> None:
        self.model = model
        self.words = words
        self.observation_chars = observation_chars  # of each step shown to the summariser

    async def update(
        self,
        previous: RollingSummary | None,
        steps: Sequence[StepRecord],
        *,
        who: str,
        goals: Sequence[str],
        spent: BudgetSpent,
    ) -> RollingSummary:
        """The summary extended to the last of `steps`. An empty or refused answer keeps the
        previous summary and appends the steps' one-line summaries, so nothing is dropped."""
        upto = steps[-1].n
        prompt = render(
            "autonoma.memory",
            "summary_update.j2",
            who=who,
            goals=list(goals),
            previous=previous,
            steps="\n\n".join(step_text(s, self.observation_chars) for s in steps),
            upto=upto,
            words=self.words,
        )
        answer = await ask(
            self.model, prompt, spent, max_tokens=int(self.words * 1.6) + 16, temperature=0.2
        )
        text = answer.text.strip() if isinstance(answer, ModelResponse) else ""
        if not text:
            lines = [previous.text] if previous else []
            text = "\n".join(lines + [summary_line(s) for s in steps])
        return RollingSummary(upto=upto, text=text)
