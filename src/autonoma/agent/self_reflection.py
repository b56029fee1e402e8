"""Self-reflection on a detected problem, as Reflexion does: the recent trajectory and two
worked examples of (failed trajectory, useful reflection); the model says what went wrong and
what to do differently, and gives a verdict. The lesson is kept in view of the next steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from autonoma.agent.monitor import Detection
from autonoma.llm import Model, ModelResponse
from autonoma.memory.asking import ask
from autonoma.memory.context import step_text
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import StepRecord
from autonoma.templating import render

Verdict = Literal["continue", "replan", "new_trial"]


class SelfReflection(BaseModel):
    # 200 characters each: a lesson is in every later request's closing, after the newest
    # step where no prompt cache holds it, and the 1.5B model wrote up to 320 tokens a
    # reflection, 36 s of generation on this machine (count_words, code_full_1129_first6)
    went_wrong: Annotated[str, Field(min_length=1, max_length=200)]
    instead: Annotated[str, Field(min_length=1, max_length=200)]
    verdict: Verdict = "continue"

    @property
    def lesson(self) -> str:
        return f"{self.went_wrong} Instead: {self.instead}"


class SelfReflector:
    """Asks the model for a self-reflection on the steps a detection points at."""

    def __init__(
        self, model: Model, *, recent: int = 8, observation_chars: int = 300, max_tokens: int = 300
    ) -> None:
        self.model = model
        self.recent = recent
        self.observation_chars = observation_chars
        self.max_tokens = max_tokens

    async def reflect(
        self,
        who: str,
        goal: str,
        steps: Sequence[StepRecord],
        detection: Detection,
        spent: BudgetSpent,
        checks: Sequence[str] = (),
    ) -> SelfReflection | None:
        """The reflection, or None when the model's answer was unusable (charged either way).
        `checks`: what can be verified about the progress (agent/progress.py)."""
        shown = list(steps)[-self.recent :]
        prompt = render(
            "autonoma.agent",
            "self_reflection.j2",
            who=who,
            goal=goal,
            evidence=f"{detection.kind}: {detection.evidence}",
            checks=checks,
            trajectory="\n\n".join(step_text(s, self.observation_chars) for s in shown),
        )
        answer = await ask(
            self.model,
            prompt,
            spent,
            output=SelfReflection,
            max_tokens=self.max_tokens,
            temperature=0,
        )
        if not isinstance(answer, ModelResponse):
            return None
        data = answer.data
        return data if isinstance(data, SelfReflection) else SelfReflection.model_validate(data)
