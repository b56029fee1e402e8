"""Checks of how many lines a task says a file holds, made here rather than by the model.

"Write a haiku about autumn to haiku.txt": with code actions, the 1.5B check writer put its
three-line check in a form that could not be made, kept only the judged "the haiku is about
autumn", and the judge passed four lines (bench/agent_demo.py, 2026-11-28). A haiku has three
lines whatever its words, so a program can hold the file to that. The count is stated by a
verse form's name (haiku 3, limerick 5, sonnet 14) or in so many words ("exactly 3 lines",
"three lines"), and held for the one file the same sentence says to write; blank lines at
either end and between stanzas are not counted."""

from __future__ import annotations

import re
from collections.abc import Container
from pathlib import PurePosixPath

from autonoma.agent.check_types import Check
from autonoma.agent.completion import named_files
from autonoma.agent.stated_formats import TEXT_SUFFIXES, sentences

FORMS = {"haiku": 3, "limerick": 5, "sonnet": 14}
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_WORDS |= {"eight": 8, "nine": 9, "ten": 10}
_FORM = re.compile(rf"\b(an?|one)\s+({'|'.join(FORMS)})\b(?!\s*-)", re.IGNORECASE)
# "3 lines", "three short lines", not "one per line" nor "the first 3 lines of poem.txt"
_COUNT = re.compile(
    rf"\b(\d{{1,2}}|{'|'.join(_WORDS)})(?:-|\s+)(?:(?!per\b|a\b|each\b|every\b)\w+\s+)?lines?\b"
    r"(?!\s+(?:of|from|in)\s+\S+\.\w)",
    re.IGNORECASE,
)


def stated_line_count(sentence: str) -> int | None:
    """The number of lines one sentence says its file holds, or None. "the first 3 lines of
    poem.txt" counts another file's lines; two counts in one sentence say nothing sure."""
    counts = {FORMS[m.group(2).lower()] for m in _FORM.finditer(sentence)}
    for match in _COUNT.finditer(sentence):
        said = match.group(1).lower()
        counts.add(int(said) if said.isdigit() else _WORDS[said])
    return counts.pop() if len(counts) == 1 else None


def line_checks(task: str, there: Container[str]) -> list[Check]:
    """A code check for each sentence of the task that states how many lines the one new file
    it names holds; `there`: the workspace's files at the start, whose counts a sentence may
    state as they are ("poem.txt has 4 lines. Add a fifth")."""
    checks: dict[str, Check] = {}
    for sentence in sentences(task):
        count = stated_line_count(sentence)
        if not count:
            continue
        named = named_files([sentence])
        targets = [n for n in named if n not in there and PurePosixPath(n).suffix in TEXT_SUFFIXES]
        if len(targets) != 1:
            continue
        (target,) = targets
        checks.setdefault(target, _check(target, count))
    return list(checks.values())


def _check(file: str, count: int) -> Check:
    label = file.replace("{", "{{").replace("}", "}}")
    code = "\n".join(
        [
            f"text = open({file!r}, encoding='utf-8').read()",
            "lines = [line for line in text.splitlines() if line.strip()]",
            f"assert len(lines) == {count}, f'{label} holds {{len(lines)}} lines that are not "
            f"blank; the task asks for {count}'",
        ]
    )
    plural = "s" if count != 1 else ""
    return Check(goal=0, what=f"{file} holds {count} line{plural}, as the task says", code=code)
