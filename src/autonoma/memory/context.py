"""The short-term context: what the model sees at each step, kept inside a token budget.

The system prompt first, then one-line summaries of older steps, then the most recent steps
verbatim (the model's own answer and what came of it), then the request for the next command.
Recent steps are added newest first until the budget is spent; what does not fit is summarised,
and if even the summaries do not fit, the oldest are left out with a count.
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


def _answer_json(step: StepRecord) -> str:
    return json.dumps(
        {"thoughts": step.thoughts, "command": {"name": step.command, "args": step.arguments}},
        ensure_ascii=False,
    )


def _observation(step: StepRecord, limit: int, repeats: int | None = None) -> str:
    if step.status == "invalid":
        return f"Your answer could not be used: {step.observation}"
    text = step.observation or "(no result recorded)"
    if len(text) > limit:
        text = text[:limit] + f"\n[cut: {len(text) - limit} more characters]"
    said = f"Result of {step.command}: {text}"
    if repeats is not None:
        said += (
            f"\n(You ran this same command at step {repeats} and got the same result. "
            "Repeating it will not help: choose a different command.)"
        )
    return said


def _repeated(steps: Sequence[StepRecord]) -> dict[int, int]:
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
    args = json.dumps(step.arguments, ensure_ascii=False)
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
    used = count(system_prompt) + count(closing)
    recent: list[dict[str, Any]] = []
    repeats = _repeated(steps)
    cut = len(steps)
    for index in range(len(steps) - 1, -1, -1):
        if len(steps) - index > limits.max_recent_steps:
            break
        step = steps[index]
        pair = [
            {"role": "assistant", "content": _answer_json(step)},
            {
                "role": "user",
                "content": _observation(step, limits.observation_chars, repeats.get(step.n)),
            },
        ]
        cost = sum(count(m["content"]) for m in pair)
        if used + cost > limits.max_tokens * 3 // 4:  # keep a quarter for the summary
            break
        recent = pair + recent
        used += cost
        cut = index
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    older = list(steps[:cut])
    if older:
        lines = [summary_line(s) for s in older]
        omitted = 0
        while True:
            summary = render(
                "autonoma.memory", "summary.j2", count=len(older), omitted=omitted, lines=lines
            )
            if not lines or used + count(summary) <= limits.max_tokens:
                break
            lines.pop(0)
            omitted += 1
        messages.append({"role": "user", "content": summary})
    elif recent:  # the conversation starts with the person, as chat templates expect
        messages.append({"role": "user", "content": "Your steps so far follow."})
    messages += recent
    if messages[-1]["role"] == "user":  # one user turn: the last result, then the request
        messages[-1] = {"role": "user", "content": f"{messages[-1]['content']}\n\n{closing}"}
    else:
        messages.append({"role": "user", "content": closing})
    return messages
