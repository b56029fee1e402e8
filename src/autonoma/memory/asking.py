"""Memory's own model calls (ratings, reflections, summaries): one user message, its cost
charged to the run's budget whatever the outcome."""

from __future__ import annotations

from typing import Any

from autonoma.errors import ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.llm.types import ModelResponse
from autonoma.runtime.budget import BudgetSpent


async def ask(
    model: Model, prompt: str, spent: BudgetSpent, **options: Any
) -> ModelResponse | OutputInvalid | ModelRefused:
    """The answer, or the error that left it unusable after the model layer's re-asks. A model
    that cannot be reached raises."""
    try:
        response = await model.request([{"role": "user", "content": prompt}], **options)
    except (OutputInvalid, ModelRefused) as error:
        spent.charge(error.prompt_tokens, error.completion_tokens, error.cost_usd)
        return error
    spent.charge(response.usage.prompt_tokens, response.usage.completion_tokens, response.cost_usd)
    return response
