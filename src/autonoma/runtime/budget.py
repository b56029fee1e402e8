"""Limits on steps, tokens, money and time, and what is left of them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class BudgetLimits(BaseModel):
    """What a run may spend; unset means no limit."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_steps: int | None = Field(30, ge=1)
    """Steps, at most."""
    max_tokens: int | None = Field(None, ge=1)
    """Prompt and completion tokens together, at most (memory's model calls included)."""
    max_usd: float | None = Field(None, ge=0)
    """US dollars at the model's prices, at most."""
    max_seconds: float | None = Field(None, gt=0)
    """Seconds of wall clock, at most; a step in progress is cut at the limit."""


class BudgetSpent(BaseModel):
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0
    seconds: float = 0.0
    _feeds: BudgetSpent | None = PrivateAttr(None)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def feed(self, total: BudgetSpent) -> BudgetSpent:
        """From now on, every step and charge counted here is counted in `total` too (a task's
        run drawing on the budget of the run it serves). Returns self."""
        self._feeds = total
        return self

    def charge(self, prompt_tokens: int, completion_tokens: int, usd: float) -> None:
        """Count one model call (a step's, or memory's: rating, reflecting, summarising)."""
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.usd += usd
        if self._feeds is not None:
            self._feeds.charge(prompt_tokens, completion_tokens, usd)

    def count_step(self) -> None:
        self.steps += 1
        if self._feeds is not None:
            self._feeds.count_step()

    def plus(self, other: BudgetSpent) -> BudgetSpent:
        """Both added up, except time: runs that serve another run overlap it in time."""
        return BudgetSpent(
            steps=self.steps + other.steps,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            usd=self.usd + other.usd,
            seconds=self.seconds,
        )


@dataclass
class SharedBudget:
    """The budget of a run whose tasks run at once, each in its own run: every task's spending
    is fed into `spent`, and time is the run's own wall clock."""

    limits: BudgetLimits
    spent: BudgetSpent
    _started: float = field(default_factory=time.monotonic)
    _base_seconds: float = 0.0
    _under_way: int = 0  # steps begun and not yet counted

    def __post_init__(self) -> None:
        self._base_seconds = self.spent.seconds

    def tick(self) -> None:
        self.spent.seconds = self._base_seconds + time.monotonic() - self._started

    def exhausted(self) -> str | None:
        self.tick()
        return exhausted(self.limits, self.spent, self._under_way)

    def begin_step(self) -> str | None:
        """Why no step may begin now, or None, and then the step is under way until
        `end_step`: tasks stepping at once cannot together overshoot the step limit (two
        tasks that each saw 15 of 16 steps spent went on to 17)."""
        why = self.exhausted()
        if why is None:
            self._under_way += 1
        return why

    def end_step(self) -> None:
        self._under_way = max(0, self._under_way - 1)


def exhausted(limits: BudgetLimits, spent: BudgetSpent, under_way: int = 0) -> str | None:
    """Why the budget is spent, or None; `under_way` steps are begun and not yet counted.
    Checked before every model call, so a run overshoots a limit other than steps by at most
    the calls in flight."""
    if limits.max_steps is not None and spent.steps + under_way >= limits.max_steps:
        more = f", {under_way} more under way" if under_way else ""
        return f"step limit reached ({spent.steps} of {limits.max_steps} steps{more})"
    if limits.max_tokens is not None and spent.tokens >= limits.max_tokens:
        return f"token limit reached ({spent.tokens} of {limits.max_tokens} tokens)"
    if limits.max_usd is not None and spent.usd >= limits.max_usd:
        return f"cost limit reached (${spent.usd:.4f} of ${limits.max_usd:.4f})"
    if limits.max_seconds is not None and spent.seconds >= limits.max_seconds:
        return f"time limit reached ({spent.seconds:.0f}s of {limits.max_seconds:.0f}s)"
    return None


def describe_left(limits: BudgetLimits, spent: BudgetSpent) -> str:
    """One line for the prompt: what is left of each limit."""
    parts = []
    if limits.max_steps is not None:
        parts.append(f"{limits.max_steps - spent.steps} steps")
    if limits.max_tokens is not None:
        parts.append(f"{max(0, limits.max_tokens - spent.tokens)} tokens")
    if limits.max_usd is not None:
        parts.append(f"${max(0.0, limits.max_usd - spent.usd):.4f}")
    if limits.max_seconds is not None:
        parts.append(f"{max(0.0, limits.max_seconds - spent.seconds) / 60:.1f} minutes")
    return ", ".join(parts) + " left" if parts else "no limits"
