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
    it names holds, or which lines (`listed_lines`); `there`: the workspace's files at the
    start, whose counts a sentence may state as they are ("poem.txt has 4 lines. Add a
    fifth")."""
    checks: dict[str, Check] = {}
    written = written_lines(task, there)
    if written:
        target, items = written
        checks[target] = _listed_check(target, items)
    reads = any(n in there for n in named_files([task]))
    for sentence in sentences(task):
        count = stated_line_count(sentence)
        named = named_files([sentence])
        targets = [n for n in named if n not in there and PurePosixPath(n).suffix in TEXT_SUFFIXES]
        if len(targets) != 1:
            continue
        (target,) = targets
        listed = listed_lines(sentence, target, count, reads=reads)
        if listed:
            checks.setdefault(target, _listed_check(target, listed))
        elif count:
            checks.setdefault(target, _check(target, count))
    return list(checks.values())


_ONE_A_LINE = re.compile(
    r",?\s*\b(?:one|each)\s+(?:per|a|to\s+a|on\s+(?:its\s+own|a\s+separate|a))\s+line\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"""(["'])([^"'\n]{1,80})\1""")
_QUOTED_LIST = re.compile(r"""^(?:(["'])[^"'\n]{1,80}\1\s*(?:,\s*(?:and\s+)?|\band\s+|$))+$""")
# a list's items are the lines themselves, not a description of them: "the first and last
# names" or "your three favourite colours" is no list of lines
_DESCRIBED = re.compile(
    r"^(?:the|a|an|each|every|all|your|their|its|his|her|my|our|some|any|no|one|other)\b",
    re.IGNORECASE,
)


def listed_lines(
    sentence: str, target: str, count: int | None, *, reads: bool = False
) -> list[str] | None:
    """The lines a sentence lists for its one new file, in order, or None: quoted items with
    one a line said ("Write 'red', 'green' and 'blue' to colors.txt, one per line") or as
    many as the lines it counts; unquoted ones after the file's name and a colon, as many as
    it counts ("Write exactly 3 lines to colors.txt: red, green and blue, one per line": the
    1.5B judge passed 1, 4 and 9 for them, three lines as the count check asks), where the
    task `reads` no file it found: "Write 3 lines to stats.txt: sum, mean and max" of a file of
    numbers names what to compute, not the lines."""
    one_a_line = bool(_ONE_A_LINE.search(sentence))
    bare = _ONE_A_LINE.sub("", sentence).strip().rstrip(".!")
    quoted = [m.group(2).strip() for m in _QUOTED.finditer(bare)]
    if len(quoted) >= 2 and (one_a_line or count == len(quoted)):
        spans = [m.span() for m in _QUOTED.finditer(bare)]
        run = bare[spans[0][0] : spans[-1][1]]
        if _QUOTED_LIST.match(run) and all(quoted):
            return quoted if count in (None, len(quoted)) else None
    after = re.search(rf"(?<![\w./-]){re.escape(target)}\s*:\s*(.+)$", bare)
    if after is None or count is None or reads:
        return None
    items = [
        i.strip().strip("\"'").strip() for i in re.split(r",\s*(?:and\s+)?|\s+and\s+", after[1])
    ]
    if len(items) != count or count < 2:
        return None
    if any(
        not item
        or len(item.split()) > 4
        or named_files([item])
        or _DESCRIBED.match(item)
        or re.search(r"\w's\b", item)  # "Alice's age": what to find, not a line
        for item in items
    ):
        return None
    return items


# the words a task may hold besides the quoted lines and the file's name, when it says no more
# than "write these lines to this file": "in capital letters", "twice", "before it", "as its
# second line" each change what the file holds, and any word not here leaves the task unread
_PLAIN_WORDS = frozenset(
    """write writes append appends add adds put save store create make then and after that
    afterwards finally first next also the a an line lines new another text word words string
    to into in at end of file called named it its on own separate each one per by with
    containing contains holding saying reads reading exactly only just followed below under
    beneath this which please nothing else same bottom""".split()  # noqa: SIM905
)
_LITERAL = re.compile(r""""([^"\n]{1,80})"|(?<![\w'])'([^'\n]{1,80})'(?![\w'])""")


def written_lines(task: str, there: Container[str]) -> tuple[str, list[str]] | None:
    """The one new file a task writes and the lines its words give it, in order, when the
    task says nothing but to write (and append) quoted lines to it: "Write the line 'started'
    to log.txt, then append the line 'finished' to log.txt" gives log.txt started, finished
    (the 1.5B judge, asked yes or no, passed log.txt holding `started` alone). None for any
    other word: "in capital letters", "twice", "before it" change what the file holds. Two
    or more quoted items are lines only where the task says lines."""
    named = named_files([task])
    if len(named) != 1 or named[0] in there:
        return None
    (target,) = named
    if PurePosixPath(target).suffix not in TEXT_SUFFIXES - {".json"}:
        return None
    items = [(m.group(1) or m.group(2)).strip() for m in _LITERAL.finditer(task)]
    if not items or not all(items):
        return None
    rest = _LITERAL.sub(" ", task)
    rest = re.sub(rf"(?<![\w./-]){re.escape(target)}(?![\w/-])", " ", rest)
    words = re.findall(r"[^\W\d_]+", rest)
    if re.search(r"[^\w\s,.;:!()'-]|\d", rest) or any(w.lower() not in _PLAIN_WORDS for w in words):
        return None
    if len(items) > 1 and not {"line", "lines"} & {w.lower() for w in words}:
        return None  # "Write 'a', 'b' and 'c' to f.txt": one line or three?
    return target, items


def _listed_check(file: str, items: list[str]) -> Check:
    label = file.replace("{", "{{").replace("}", "}}")
    code = "\n".join(
        [
            f"text = open({file!r}, encoding='utf-8').read()",
            "lines = [line.strip() for line in text.splitlines() if line.strip()]",
            f"listed = {items!r}",
            f"assert lines == listed, f'{label} holds the lines {{lines!r}}; the task lists "
            "{listed!r}, one a line, in that order'",
        ]
    )
    what = f"{file} holds the lines the task lists, one a line: {', '.join(items)}"
    return Check(goal=0, what=what[:200], code=code)


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
