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


# a number as written: 1,250 or 1_250 or 3.50 (not part of a word such as "v2" or "mp3")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,_]*(?:\.\d+)?(?![\w]|\.\d)")
# a name: a word with a capital after its first letter (ACME, McDonald, iPhone), or any
# capitalised word that does not begin a sentence (Tokyo, Alice)
_NAME = re.compile(r"\b\w*[a-z0-9]*[A-Z]\w*\b")


def as_the_person_wrote(goal: str, written: str) -> str:
    """`written` (a goal the model wrote) with the file names, quoted strings, names and
    numbers of the person's `goal` spelled as the person spelled them: the 1.5B model turned
    `tokyo.txt` into `Tokyo.txt`, and the completion check then refused the right file; a
    model writes 1,250 as 1250 and 3.5 as 3.50, ACME as Acme."""
    exact = set(named_files([goal]))
    exact |= {next(part for part in found if part) for found in _QUOTED.findall(goal)}
    names = _names(goal)
    exact |= names
    for first, second in _name_pairs(goal, names):
        # a name and its neighbour run together or hyphenated (ACME corp as Acme-Corp)
        joined = rf"(?<![\w./-]){re.escape(first)}[-_ ]?{re.escape(second)}(?![\w/-]|\.\w)"
        written = re.sub(joined, _literally(f"{first} {second}"), written, flags=re.IGNORECASE)
    for word in sorted(exact, key=len, reverse=True):
        # a function, so a backslash in the word is not read as a group reference
        # a whole word, and not a part of a file name (Tokyo in tokyo.txt)
        pattern = rf"(?<![\w./-]){re.escape(word)}(?![\w/-]|\.\w)"
        written = re.sub(pattern, _literally(word), written, flags=re.IGNORECASE)
    return _NUMBER.sub(_numbers_as_in(goal), written)


def _names(goal: str) -> set[str]:
    starts = {m.end() for m in re.finditer(r"(?:^|[.!?:;]\s+|\n)", goal)}
    return {
        m.group()
        for m in _NAME.finditer(goal)
        if m.start() not in starts or not m.group()[1:].islower()
    }


def _name_pairs(goal: str, names: set[str]) -> list[tuple[str, str]]:
    """Two words the goal writes side by side, one of them a name: "ACME corp"."""
    pairs = re.finditer(r"(?=\b(\w+) (\w+)\b)", goal)
    return [(m[1], m[2]) for m in pairs if m[1] in names or m[2] in names]


def _numbers_as_in(goal: str) -> Callable[[re.Match[str]], str]:
    """A number the model wrote, spelled as the goal spelled the same value (only the goal's
    numbers with a separator or a decimal point: those are the ones respelled)."""
    spelled: dict[float, str] = {}
    for found in _NUMBER.findall(goal):
        if any(mark in found for mark in ",._"):
            spelled.setdefault(_value(found), found)
    return lambda match: spelled.get(_value(match.group()), match.group())


def _value(number: str) -> float:
    if "," in number and not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number):
        return float("nan")  # "1,2,3": a list, not a number
    return float(number.replace(",", "").replace("_", ""))


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
