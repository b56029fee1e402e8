"""Budget limits: each one is exhausted exactly at its limit, and what is left is described."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from autonoma.runtime.budget import (
    BudgetLimits,
    BudgetSpent,
    SharedBudget,
    describe_left,
    exhausted,
)

NO_LIMITS: dict[str, Any] = {
    "max_steps": None,
    "max_tokens": None,
    "max_usd": None,
    "max_seconds": None,
}


def limits(**values: Any) -> BudgetLimits:
    return BudgetLimits(**{**NO_LIMITS, **values})


@pytest.mark.parametrize(
    ("limit", "at_limit", "just_below", "message"),
    [
        (
            {"max_steps": 5},
            BudgetSpent(steps=5),
            BudgetSpent(steps=4),
            "step limit reached (5 of 5 steps)",
        ),
        (
            {"max_tokens": 1000},
            BudgetSpent(prompt_tokens=700, completion_tokens=300),
            BudgetSpent(prompt_tokens=700, completion_tokens=299),
            "token limit reached (1000 of 1000 tokens)",
        ),
        (
            {"max_usd": 0.5},
            BudgetSpent(usd=0.5),
            BudgetSpent(usd=0.4999),
            "cost limit reached ($0.5000 of $0.5000)",
        ),
        (
            {"max_seconds": 600},
            BudgetSpent(seconds=600),
            BudgetSpent(seconds=599.9),
            "time limit reached (600s of 600s)",
        ),
    ],
    ids=["steps", "tokens", "usd", "seconds"],
)
def test_each_limit_is_exhausted_at_its_boundary(
    limit: dict[str, Any], at_limit: BudgetSpent, just_below: BudgetSpent, message: str
) -> None:
    budget = limits(**limit)
    assert exhausted(budget, at_limit) == message
    assert exhausted(budget, just_below) is None


def test_over_the_limit_is_exhausted_too() -> None:
    assert exhausted(limits(max_steps=3), BudgetSpent(steps=7)) == (
        "step limit reached (7 of 3 steps)"
    )
    assert exhausted(limits(max_tokens=10), BudgetSpent(prompt_tokens=50)) == (
        "token limit reached (50 of 10 tokens)"
    )


def test_tokens_count_prompt_and_completion() -> None:
    spent = BudgetSpent(prompt_tokens=40, completion_tokens=2)
    assert spent.tokens == 42
    assert exhausted(limits(max_tokens=42), spent) is not None
    assert exhausted(limits(max_tokens=43), spent) is None


def test_no_limits_are_never_exhausted() -> None:
    huge = BudgetSpent(steps=10**6, prompt_tokens=10**9, usd=10**6, seconds=10**7)
    assert exhausted(limits(), huge) is None


def test_the_first_exhausted_limit_is_reported() -> None:
    budget = limits(max_steps=2, max_tokens=10)
    assert exhausted(budget, BudgetSpent(steps=2, prompt_tokens=10)) == (
        "step limit reached (2 of 2 steps)"
    )
    assert exhausted(budget, BudgetSpent(steps=1, prompt_tokens=10)) == (
        "token limit reached (10 of 10 tokens)"
    )


def test_default_limit_is_thirty_steps() -> None:
    default = BudgetLimits()
    assert exhausted(default, BudgetSpent(steps=29)) is None
    assert exhausted(default, BudgetSpent(steps=30)) == "step limit reached (30 of 30 steps)"


@pytest.mark.parametrize(
    "bad",
    [{"max_steps": 0}, {"max_tokens": 0}, {"max_usd": -0.01}, {"max_seconds": 0}],
)
def test_nonsense_limits_are_rejected(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BudgetLimits(**bad)


def test_describe_left_lists_every_limit() -> None:
    budget = BudgetLimits(max_steps=10, max_tokens=5000, max_usd=1.0, max_seconds=600)
    spent = BudgetSpent(steps=3, prompt_tokens=1000, completion_tokens=500, usd=0.25, seconds=90)
    assert describe_left(budget, spent) == "7 steps, 3500 tokens, $0.7500, 8.5 minutes left"


def test_describe_left_never_goes_below_zero_for_tokens_money_and_time() -> None:
    budget = limits(max_tokens=100, max_usd=0.1, max_seconds=60)
    spent = BudgetSpent(prompt_tokens=500, usd=2.0, seconds=600)
    assert describe_left(budget, spent) == "0 tokens, $0.0000, 0.0 minutes left"


def test_describe_left_only_mentions_set_limits() -> None:
    assert describe_left(limits(max_steps=4), BudgetSpent(steps=1)) == "3 steps left"
    assert describe_left(limits(), BudgetSpent(steps=100)) == "no limits"


def test_steps_under_way_count_against_the_limit_until_they_end() -> None:
    shared = SharedBudget(BudgetLimits(max_steps=2), BudgetSpent(steps=1))
    assert shared.begin_step() is None  # the last step, now under way
    assert shared.begin_step() == "step limit reached (1 of 2 steps, 1 more under way)"
    shared.spent.count_step()
    shared.end_step()
    assert shared.exhausted() == "step limit reached (2 of 2 steps)"
    shared.end_step()  # a step that ended twice does not free a step
    assert shared.begin_step() is not None
