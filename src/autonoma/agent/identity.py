"""Who the agent is: a name, a role and up to five goals, made from a free-text goal."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from autonoma.agent.completion import named_files
from autonoma.errors import ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.templating import render
from autonoma.tools import ToolRegistry

# A task up to this long is its own one goal, in the person's words: the 1.5B model split
# "Count the lines of poem.txt and write the number alone to count.txt" into "Count the lines
# of poem.txt" and "Write the number of lines to count.txt", losing "alone", and its checks
# then tested poem.txt. Longer tasks are split into the model's goals.
ONE_GOAL_CHARS = 300


class AgentIdentity(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    role: str = Field(min_length=1, max_length=300)
    goals: list[str] = Field(min_length=1, max_length=5)


class _Draft(BaseModel):
    """What the model is asked for (bounded so a small model cannot ramble forever)."""

    name: str = Field(min_length=1, max_length=40)
    description: str = Field(min_length=1, max_length=200)
    goals: list[str] = Field(min_length=1, max_length=5)


def _clean_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "", name.replace(" ", ""))[:40]
    return cleaned or "AutonomaGPT"


def fallback_identity(goal: str) -> AgentIdentity:
    return AgentIdentity(
        name="AutonomaGPT",
        role="an autonomous agent that pursues the goal it is given",
        goals=[goal[:300]],
    )


@dataclass(frozen=True)
class GeneratedIdentity:
    """An identity the model made, or the fallback and why; and what asking cost."""

    identity: AgentIdentity
    fallback_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"|'([^'\n]{1,80})'|`([^`\n]{1,80})`")


def as_the_person_wrote(goal: str, written: str) -> str:
    """`written` (a goal the model wrote) with the file names and quoted strings of the
    person's `goal` spelled as the person spelled them: the 1.5B model turned `tokyo.txt`
    into `Tokyo.txt`, and the completion check then refused the right file."""
    exact = set(named_files([goal]))
    exact |= {next(part for part in found if part) for found in _QUOTED.findall(goal)}
    for word in sorted(exact, key=len, reverse=True):
        # a function, so a backslash in the word is not read as a group reference
        written = re.sub(re.escape(word), _literally(word), written, flags=re.IGNORECASE)
    return written


def _literally(word: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: word


async def generate_identity(
    model: Model, goal: str, tools: ToolRegistry, *, seed: int | None = None
) -> GeneratedIdentity:
    """Ask the model for an identity whose goals fit `tools`, the commands the agent will have
    (a short task stays its own one goal: ONE_GOAL_CHARS). If its answer is unusable, fall
    back to a plain identity whose only goal is the person's goal, and say why. A model that
    cannot be reached raises: there is no point starting a run it cannot serve."""
    messages = [
        {"role": "system", "content": render("autonoma.agent", "identity.j2", tools=list(tools))},
        {"role": "user", "content": f"Task: {goal}\nAnswer:"},
    ]
    try:
        response = await model.request(
            messages, output=_Draft, max_tokens=400, temperature=0.2, seed=seed
        )
    except (OutputInvalid, ModelRefused) as error:
        return GeneratedIdentity(
            fallback_identity(goal),
            f"identity generation failed ({error}); using the goal as is",
            error.prompt_tokens,
            error.completion_tokens,
            error.cost_usd,
        )
    draft: _Draft = response.data
    goals = [g.strip()[:300] for g in draft.goals if g.strip()] or [goal[:300]]
    if len(goal.strip()) <= ONE_GOAL_CHARS:
        goals = [goal.strip()]
    goals = [as_the_person_wrote(goal, g) for g in goals]
    return GeneratedIdentity(
        AgentIdentity(name=_clean_name(draft.name), role=draft.description.strip(), goals=goals),
        None,
        response.usage.prompt_tokens,
        response.usage.completion_tokens,
        response.cost_usd,
    )
