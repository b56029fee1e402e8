"""The letter case a task states for a new file's text ("in capital letters", "in lowercase"),
held by a check made here rather than by the model.

"The file called notes holds a shopping list. Write its first line, in capital letters, to
title.txt": the 1.5B check writer typed 'Shopping list' as the expected text three rounds
running, the typed value was kept for want of a computed one, and the model bent its right
'SHOPPING LIST' toward it until its steps ran out (code_1128b). A value typed against the case
the task states is sent back every time (`against_case`), and the case itself is held by a
program. Where the task states no case, a typed value that changes the case of its input's
lines is sent back every time too (`recases_input`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Container, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Literal

from autonoma.agent.check_types import Check
from autonoma.agent.completion import named_files
from autonoma.agent.stated_formats import TEXT_SUFFIXES, sentences

Case = Literal["upper", "lower"]
_WORDS = re.compile(r"[^\W\d_][\w ,.'!?-]*")  # plain words, as a form's expected may be
_UPPER = re.compile(
    r"\b(?:in\s+(?:all\s+)?(?:capital\s+letters|capitals|upper\s*-?\s*case|block\s+letters)"
    r"|all\s+caps|(?:upper\s*-?\s*case|capitali[sz]ed)\s+(?:letters|text|words))\b",
    re.IGNORECASE,
)
_LOWER = re.compile(
    r"\b(?:in\s+(?:all\s+)?(?:small\s+letters|lower\s*-?\s*case)"
    r"|(?:lower\s*-?\s*case)\s+(?:letters|text|words))\b",
    re.IGNORECASE,
)


def stated_case(text: str) -> Case | None:
    """The case one text asks for, or None (none, or both)."""
    upper, lower = bool(_UPPER.search(text)), bool(_LOWER.search(text))
    return "upper" if upper and not lower else "lower" if lower and not upper else None


def against_case(expected: str, said: Sequence[str]) -> bool:
    """Whether an expected value typed as a literal has letters of the other case than the one
    the texts state (an expression computes its case, and is left to its program)."""
    try:
        value = ast.literal_eval(expected.strip())
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        value = expected.strip() if _WORDS.fullmatch(expected.strip()) else None
    if value is None:
        return False
    value = str(value)
    case = next((c for c in map(stated_case, said) if c), None)
    if case == "upper":
        return value != value.upper()
    if case == "lower":
        return value != value.lower()
    return False


def recases_input(expected: str, said: Sequence[str], inputs: Mapping[str, str]) -> str:
    """Why an expected value typed as a literal was sent back for changing the letter case of
    its input's lines where the task states no case, or "". For "Sort the lines of names.txt
    alphabetically, ignoring upper and lower case" the 1.5B writer typed ['Alice', 'Bob',
    'Carol', ...] for names.txt's Alice, bob, carol: typed twice, it was kept, and no sorted
    file of the names as they are could pass (code_1129_rest). Never kept."""
    try:
        value = ast.literal_eval(expected.strip())
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        value = expected.strip() if _WORDS.fullmatch(expected.strip()) else None
    recased = _recased(value, said, inputs)
    if recased is None:
        return ""
    item, line = recased
    return (
        f"has {item!r} typed by hand where the input holds {line!r}: the task asks for no "
        "change of letter case, so compute the expected value from the input with Python, "
        "which keeps each line as it is"
    )


def computes_recased(value: object, said: Sequence[str], inputs: Mapping[str, str]) -> str:
    """The same for an expected value a check computes (`value`, as the check's program
    computed it on the workspace at the start). The 1.5B writer's check for the same task
    computed `sorted(line.lower() ...)`, was kept, and held right work out until the steps ran
    out (mend2_1129). Never kept."""
    recased = _recased(value, said, inputs)
    if recased is None:
        return ""
    item, line = recased
    return (
        f"computes {item!r} where the input holds {line!r}: the task asks for no change of "
        "letter case, so keep each line as it is (to sort ignoring case, "
        "sorted(lines, key=str.lower) compares in lowercase and keeps the lines unchanged)"
    )


def _recased(
    value: object, said: Sequence[str], inputs: Mapping[str, str]
) -> tuple[str, str] | None:
    """An item of `value` that is a line of the inputs in another letter case, with that
    line, where the task states no case and does not spell the item itself."""
    if any(map(stated_case, said)) or not inputs:
        return None
    items = _items(value)
    if not items:
        return None
    held = {line.strip() for text in inputs.values() for line in text.splitlines() if line.strip()}
    by_fold = {line.casefold(): line for line in held}
    stated = " ".join(said)
    for item in items:
        if item in stated:
            continue  # the person's own spelling ("replace bob with Bob")
        line = by_fold.get(item.casefold())
        if item not in held and line is not None and re.search(r"[^\W\d_]", item):
            return item, line
    return None


def _items(value: object) -> list[str]:
    """The lines a typed value stands for: a list's or tuple's strings, a text's lines."""
    if isinstance(value, list | tuple):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    return []


def case_checks(task: str, there: Container[str]) -> list[Check]:
    """A code check for each sentence of the task that states a case, on the one new text
    file it names; `there`: the workspace's files at the start."""
    checks: dict[str, Check] = {}
    for sentence in sentences(task):
        case = stated_case(sentence)
        if case is None:
            continue
        named = named_files([sentence])
        targets = [n for n in named if n not in there and PurePosixPath(n).suffix in TEXT_SUFFIXES]
        if len(targets) != 1:
            continue
        (target,) = targets
        checks.setdefault(target, _check(target, case))
    return list(checks.values())


def _check(file: str, case: Case) -> Check:
    label = file.replace("{", "{{").replace("}", "}}")
    word = "capital" if case == "upper" else "small"
    code = "\n".join(
        [
            f"text = open({file!r}, encoding='utf-8').read()",
            f"assert text.strip(), '{label} is empty'",
            f"assert text == text.{case}(), f'{label} holds {{text.strip()[:60]!r}}, not all in "
            f"{word} letters as the task asks'",
        ]
    )
    return Check(goal=0, what=f"{file} is written in {word} letters, as the task says", code=code)
