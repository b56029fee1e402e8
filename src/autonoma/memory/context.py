"""The short-term context: what the model sees at each step, kept inside a token budget.

Two messages: the system prompt, then one user message holding a one-line summary of each
older step, the most recent steps verbatim (the command with its arguments, and its result),
and the request for the next command. Recent steps are added newest first until the budget is
spent; what does not fit is summarised, and if even the summaries do not fit, the oldest are
left out with a count.

The model's earlier thoughts are stored and shown to people, but not fed back: small models
copy their previous answer when it is in the context, thoughts and command alike, and loop
(docs/benchmarks.md has the measurement). Steps are written as a transcript inside a user
message rather than as assistant turns for the same reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from autonoma.runtime.store import StepRecord
from autonoma.templating import render

TokenCounter = Callable[[str], int]


def rough_tokens(text: str) -> int:
    """About four characters a token: safe for budgeting English text and JSON."""
    return len(text) // 4 + 1


@dataclass(frozen=True)
class ContextLimits:
    max_tokens: int = 6000  # for the whole prompt
    max_recent_steps: int = 8  # shown verbatim at most
    observation_chars: int = 2000  # of each verbatim observation


def _arguments(step: StepRecord) -> str:
    return json.dumps(step.arguments, ensure_ascii=False)


def step_text(step: StepRecord, limit: int, repeat_of: int | None = None) -> str:
    """One step, verbatim: its command and arguments, then its result (cut at `limit`)."""
    if step.status == "invalid":
        return f"Step {step.n}: your answer could not be used: {step.observation}"
    text = step.observation or "(no result recorded)"
    if len(text) > limit:
        text = text[:limit] + f"\n[cut: {len(text) - limit} more characters]"
    said = f"Step {step.n}: {step.command} {_arguments(step)}\nResult: {text}"
    if repeat_of is not None:
        said += (
            f"\n(The same command gave the same result at step {repeat_of}. "
            "Repeating it will not help: choose a different command.)"
        )
    return said


def _repeats(steps: Sequence[StepRecord]) -> dict[int, int]:
    """For each step that repeats an earlier one exactly (command, arguments and result),
    the number of the earlier step. Small models loop; seeing the repeat helps them stop."""
    seen: dict[str, int] = {}
    repeats: dict[int, int] = {}
    for step in steps:
        if step.status == "invalid":
            continue
        key = json.dumps([step.command, step.arguments, step.observation], sort_keys=True)
        if key in seen:
            repeats[step.n] = seen[key]
        seen[key] = step.n
    return repeats


def summary_line(step: StepRecord) -> str:
    if step.status == "invalid":
        return f"step {step.n}: invalid answer"
    args = _arguments(step)
    if len(args) > 80:
        args = args[:77] + "..."
    outcome = (step.observation or "").splitlines()[0][:100] if step.observation else step.status
    flag = "" if step.ok else " (failed)"
    return f"step {step.n}: {step.command} {args} -> {outcome}{flag}"


def build_context(
    system_prompt: str,
    steps: Sequence[StepRecord],
    closing: str,
    limits: ContextLimits = ContextLimits(),
    count: TokenCounter = rough_tokens,
) -> list[dict[str, Any]]:
    """The messages for the next step. `closing` is the request that ends them (what to
    decide now); it is always kept whole."""
    header = "Your latest steps:\n\n"
    used = count(system_prompt) + count(closing) + (count(header) if steps else 0)
    recent: list[str] = []
    repeats = _repeats(steps)
    cut = len(steps)
    for index in range(len(steps) - 1, -1, -1):
        if len(steps) - index > limits.max_recent_steps:
            break
        step = steps[index]
        text = step_text(step, limits.observation_chars, repeats.get(step.n))
        cost = count(text + "\n\n")
        if used + cost > limits.max_tokens * 3 // 4:  # keep a quarter for the summary
            break
        recent.insert(0, text)
        used += cost
        cut = index
    parts: list[str] = []
    older = list(steps[:cut])
    if older:
        lines = [summary_line(s) for s in older]
        omitted = 0
        while True:
            summary = render(
                "autonoma.memory", "summary.j2", count=len(older), omitted=omitted, lines=lines
            )
            if not lines or used + count(summary + "\n\n") <= limits.max_tokens:
                break
            lines.pop(0)
            omitted += 1
        parts.append(summary)
    if recent:
        parts.append(header + "\n\n".join(recent))
    parts.append(closing)
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
