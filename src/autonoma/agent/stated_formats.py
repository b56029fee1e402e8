"""Checks of the date and time formats a task states, made here rather than by the model.

"Write the current time in Tokyo (HH:MM, 24-hour) to tokyo.txt": the 1.5B writer put the time
in a function form, no program check was made, the task was judged, and the judge passed a
file holding `'09:04:27'` (quoted, with seconds; CI on 2026-11-28). Whatever the value, its
shape is stated in the task, so a program can hold the file to it: every token written with
the format's separator has the format's shape (two-digit hours 00-23 for HH, months 01-12 for
MM...), at least one is there, and a one-value text file does not hold it in quotes. A format
is stated by name (HH:MM, YYYY-MM-DD, DD/MM/YYYY...) or by example ("like 2024-03-14").
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Container, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from autonoma.agent.check_types import Check
from autonoma.agent.completion import named_files

# what each letter group of a named format may hold
_FIELDS = {
    "YYYY": r"\d{4}",
    "MM": r"(?:0[1-9]|1[0-2])",
    "DD": r"(?:0[1-9]|[12]\d|3[01])",
    "HH": r"(?:[01]\d|2[0-3])",
    "mm": r"[0-5]\d",
    "SS": r"[0-5]\d",
}
_NAMED = re.compile(
    r"(?<![\w/.:-])(YYYY([-/.])MM\2DD|DD([-/.])MM\3YYYY|MM([-/.])DD\4YYYY|HH:MM(?::SS)?)"
    r"(?![\w/:-]|\.\w)",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(
    r"\b(?:like|e\.g\.,?|such as|for example,?|for instance,?|as in)\s+[(\"']?"
    r"(\d{1,4}([-/.])\d{1,2}\2\d{1,4}|\d{1,2}:\d{2}(?::\d{2})?)(?![\w/:-]|\.\w)",
    re.IGNORECASE,
)
_TWELVE_HOUR = re.compile(r"\b(12-hour|12 hour|am/pm|a\.m\.|p\.m\.)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_NOW = re.compile(r"\b(current|now|today|today's|at the moment|at present)\b", re.IGNORECASE)
_REGIONS = ("Africa", "America", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
_UTC = re.compile(r"\b(UTC|GMT)\b")
# how long before its file was written a current time may have been read: the step that reads
# the clock and the one that writes take a minute or two; a guess ten minutes off is wrong
# (CI, 2026-11-28: '16:30' written at 16:40 in Tokyo passed a window of 20 minutes from the check)
WRITTEN_MINUTES = 5
# files whose text a format check can read; a program's source holds format strings of its own
TEXT_SUFFIXES = {"", ".txt", ".csv", ".tsv", ".md", ".log", ".json"}


@dataclass(frozen=True)
class StatedFormat:
    name: str  # as the task says it: "as HH:MM", "as YYYY-MM-DD", "like 2024-03-14"
    shape: str  # the regular expression a value in the format matches whole
    separator: str
    strftime: str = ""  # a named format's, to write the current value in it

    @property
    def kind(self) -> str:
        return "time" if self.separator == ":" else "date"


def _named(text: str) -> StatedFormat:
    upper = text.upper()
    separator = ":" if ":" in upper else re.sub(r"[A-Z]", "", upper)[0]
    groups = upper.split(separator)
    if separator == ":":
        groups = ["HH", "mm", "SS"][: len(groups)]  # MM after HH is minutes
    shape = re.escape(separator).join(_FIELDS[g] for g in groups)
    codes = {"YYYY": "%Y", "MM": "%m", "DD": "%d", "HH": "%H", "mm": "%M", "SS": "%S"}
    written = separator.join(codes[g] for g in groups)
    return StatedFormat(f"as {upper}", shape, separator, written)


def _example(text: str, separator: str) -> StatedFormat:
    """The format an example shows: the digits of each of its fields, and what each field may
    hold where the example reads as a date or time in one or two orders of its fields (like
    2024-03-14 is year-month-day, so '2024-14-03' is not written like it: the 1.5B writer
    typed that for iso_dates, mend2_1129)."""
    groups = text.split(separator)
    widths = [len(group) for group in groups]
    orders = (
        [["HH", "mm", "SS"][: len(groups)]]
        if separator == ":"
        else [["YYYY", "MM", "DD"]] if widths == [4, 2, 2]
        else [["DD", "MM", "YYYY"], ["MM", "DD", "YYYY"]] if widths == [2, 2, 4]
        else []
    )  # fmt: skip
    fits = [
        order
        for order in orders
        if all(re.fullmatch(_FIELDS[f], g) for f, g in zip(order, groups, strict=True))
        and (len(widths) == len(order))
    ]
    if not fits or (separator == ":" and widths[0] != 2):
        shape = re.escape(separator).join(rf"\d{{{w}}}" for w in widths)
    else:
        shapes = [re.escape(separator).join(_FIELDS[f] for f in order) for order in fits]
        shape = shapes[0] if len(shapes) == 1 else "(?:" + "|".join(shapes) + ")"
    return StatedFormat(f"like {text}", shape, separator)


def stated_formats(text: str) -> list[StatedFormat]:
    """The date and time formats the text states, by name or by example, in order."""
    found: dict[str, StatedFormat] = {}
    twelve_hour = bool(_TWELVE_HOUR.search(text))
    for match in _NAMED.finditer(text):
        form = _named(match.group(1))
        if not (form.kind == "time" and twelve_hour):
            found.setdefault(form.name, form)
    for match in _EXAMPLE.finditer(text):
        value = match.group(1)
        separator = match.group(2) or ":"
        form = _example(value, separator)
        named_already = any(f.separator == form.separator for f in found.values())
        if not (form.kind == "time" and twelve_hour) and not named_already:
            found.setdefault(form.name, form)
    return list(found.values())


@cache
def _places() -> dict[str, str]:
    """Each time zone's place as a person writes it ("new york"), with the zone."""
    zones = sorted(z for z in zoneinfo.available_timezones() if z.split("/")[0] in _REGIONS)
    places: dict[str, str] = {}
    for zone in zones:
        places.setdefault(zone.rsplit("/", 1)[-1].replace("_", " ").lower(), zone)
    return places


def zone_named(sentence: str) -> str | None:
    """The one time zone a sentence names by its place (Tokyo, New York) or as UTC, or None:
    none, or two ("from Tokyo to Paris")."""
    words = " ".join(re.findall(r"[a-z]+", sentence.lower()))
    found = {zone for place, zone in _places().items() if f" {place} " in f" {words} "}
    if _UTC.search(sentence):
        found.add("UTC")
    return found.pop() if len(found) == 1 else None


def format_checks(task: str, there: Container[str]) -> list[Check]:
    """A code check for each format the task states and the one file the same sentence says
    to write; `there`: the workspace's files at the start, which a sentence reads rather than
    writes, unless it names no other. The person's task only: the goals are the model's
    words, and one of them saying HH:MM:SS where the task said HH:MM would make two checks
    that cannot both pass. A sentence asking for the current time or date in one place, in a
    named format, has it held to the clock too: the 1.5B judge passed a guessed 16:30 for
    Tokyo at 09:25 there (2026-11-28)."""
    checks: dict[tuple[str, str], Check] = {}
    for sentence in sentences(task):
        formats = stated_formats(sentence)
        if not formats:
            continue
        targets = _written(named_files([sentence]) or named_files([task]), there)
        if len(targets) != 1:
            continue  # none, or which file holds which value is not for a rule to guess
        (target,) = targets
        zone = zone_named(sentence) if _NOW.search(sentence) else None
        for form in formats:
            checks.setdefault((target, form.name), _check(target, form, zone))
    return list(checks.values())


def sentences(text: str) -> list[str]:
    return _SENTENCE_END.split(text)


def _written(named: Sequence[str], there: Container[str]) -> list[str]:
    texts = [n for n in named if PurePosixPath(n).suffix.lower() in TEXT_SUFFIXES]
    new = [n for n in texts if n not in there]
    return new or (texts if len(named) == 1 else [])


def _check(file: str, form: StatedFormat, zone: str | None = None) -> Check:
    sep = re.escape(form.separator)
    counts = "{1,2}" if form.kind == "time" else "{2}"
    token = rf"(?<![\d{sep}])\d+(?:{sep}\d+){counts}(?![\d{sep}])"
    quotable = PurePosixPath(file).suffix.lower() in {"", ".txt", ".md"}
    label = file.replace("{", "{{").replace("}", "}}")
    code = "\n".join(
        [
            "import re",
            f"text = open({file!r}, encoding='utf-8').read()",
            f"tokens = re.findall({token!r}, text)",
            f"wrong = [t for t in tokens if not re.fullmatch({form.shape!r}, t)]",
            f"assert tokens, f'{label} holds no {form.kind} written {form.name}: "
            "it holds {text[:80]!r}'",
            f"assert not wrong, f'{label} holds {{wrong[0]!r}}, which is not written {form.name}'",
        ]
    )
    if quotable:
        code += (
            "\nvalue = text.strip()\n"
            "assert not (len(value) > 1 and value[0] == value[-1] and value[0] in '\\'\"`'), "
            f"f'{label} holds {{value!r}} in quotes: write the value itself'"
        )
    what = f"{file} holds the {form.kind} written {form.name}"
    if zone and form.strftime:
        code += "\n" + _now_lines(file, label, form, zone)
        what = f"{file} holds the current {form.kind} in {zone}, written {form.name}"
    return Check(
        goal=0,
        what=what[:200],
        kind="code",
        code=code,
    )


def _now_lines(file: str, label: str, form: StatedFormat, zone: str) -> str:
    """The check's lines that hold the value to the clock in `zone` when the file was last
    written (its mtime), a few minutes earlier at most: what a later check sees does not widen
    the window, and seconds are not compared."""
    written = form.strftime.removesuffix(":%S")
    return "\n".join(
        [
            "import os",
            "from datetime import datetime, timedelta",
            "from zoneinfo import ZoneInfo",
            f"when = datetime.fromtimestamp(os.path.getmtime({file!r}), ZoneInfo({zone!r}))",
            f"near = {{(when - timedelta(minutes=m)).strftime({written!r}) "
            f"for m in range(-1, {WRITTEN_MINUTES + 1})}}",
            f"said = when.strftime({written!r})",
            "shown = ', '.join(tokens)",
            "assert any(t[: len(said)] in near for t in tokens), "
            f"f'{label} holds {{shown}}, but the {form.kind} in {zone} when it was written "
            "was {said}'",
        ]
    )
