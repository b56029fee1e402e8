"""USD prices per million tokens, and the cost of a response."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from autonoma.llm.types import Usage


class Price(BaseModel):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    cached_input_per_mtok: float | None = Field(None, ge=0)


# Published list prices (USD per 1M tokens). Longest matching prefix of the model id wins,
# so dated snapshots such as "gpt-4o-mini-2024-07-18" find their family.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.60, cached_input_per_mtok=0.075),
    "gpt-4o": Price(input_per_mtok=2.50, output_per_mtok=10.00, cached_input_per_mtok=1.25),
    "gpt-4.1-nano": Price(input_per_mtok=0.10, output_per_mtok=0.40, cached_input_per_mtok=0.025),
    "gpt-4.1-mini": Price(input_per_mtok=0.40, output_per_mtok=1.60, cached_input_per_mtok=0.10),
    "gpt-4.1": Price(input_per_mtok=2.00, output_per_mtok=8.00, cached_input_per_mtok=0.50),
    "gpt-3.5-turbo": Price(input_per_mtok=0.50, output_per_mtok=1.50),
    "o4-mini": Price(input_per_mtok=1.10, output_per_mtok=4.40, cached_input_per_mtok=0.275),
    "o3": Price(input_per_mtok=2.00, output_per_mtok=8.00, cached_input_per_mtok=0.50),
}

FREE = Price(input_per_mtok=0.0, output_per_mtok=0.0)


def find_price(model_id: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model_id`: an exact override first, then the longest matching prefix."""
    table = {**DEFAULT_PRICES, **(overrides or {})}
    if model_id in table:
        return table[model_id]
    matches = [key for key in table if model_id.startswith(key)]
    return table[max(matches, key=len)] if matches else None


def cost_usd(price: Price, usage: Usage) -> float:
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_rate = (
        price.input_per_mtok
        if price.cached_input_per_mtok is None
        else (price.cached_input_per_mtok)
    )
    return (
        (usage.prompt_tokens - cached) * price.input_per_mtok
        + cached * cached_rate
        + usage.completion_tokens * price.output_per_mtok
    ) / 1_000_000
