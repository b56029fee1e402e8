"""The forms an acceptance check is written in, each made into the Python program that runs.

Asked for whole programs, the 1.5B writer left 10 of 36 everyday goals without a usable code
check and wrote wrong ones for others (docs/benchmarks.md): a program that read only the
inputs, asserted nothing, counted characters for words, or compared a file's text with a list
of its lines. Most checks are one of a few shapes: a file the work makes holds these lines,
words, this number, this text or this JSON; a function returns these values; a file is gone.
In those forms the writer fills in only the file, the shape and a Python expression of the
expected value (or the calls and their results), and the program around them, which reads the
right file and compares like with like, is built here. A free program (`code`) and a judged
criterion stay for the rest.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, Tag

from autonoma.agent.completion import named_files
from autonoma.agent.pysource import mend_json_slips
from autonoma.agent.stated_formats import sentences

Holds = Literal["lines", "words", "number", "text", "json"]

# what an `expected` expression may use without importing it
PRELUDE = "import csv, json, math, os, re, statistics\n"


class FormError(ValueError):
    """A form that cannot be made into a program; the message is written for the writer."""


class _Form(BaseModel):
    goal: int = Field(0, ge=0, description="the goal it checks, 1-based; 0 for the whole task")
    what: str = Field(min_length=1, max_length=200, description="what it checks, in one line")


class FileForm(_Form):
    """A file the work leaves holds the expected lines, words, number, text or JSON."""

    kind: Literal["file"]
    file: str = Field(min_length=1, max_length=200, description="the file the work leaves")
    holds: Holds = Field(description="how its content is compared with the expected value")
    expected: str = Field(
        min_length=1,
        max_length=600,
        description="a Python expression of the expected value, computed from the input files",
    )

    def program(self) -> str:
        expected = _expression(self.expected, "expected")
        if self.holds in ("lines", "words") and _unordered(expected):
            # mend2_1129, dedupe_lines: set(open('emails.txt').read().split()) for the lines
            # "without duplicates, in original order": no order of the file's could pass
            raise FormError(
                f"has expected {self.expected.strip()[:80]!r}, a set, which has no order, "
                f"compared with {self.holds} in order: use a list (list(dict.fromkeys(items)) "
                "keeps the first of each, in order)"
            )
        name = repr(self.file)
        holds = self.holds
        if holds == "json" and _not_json(self.file):
            # people_csv (suite_0acdcd7): rows typed for people.csv, to be read by json.load,
            # which no CSV can pass; a table or text file holds lines, a row or a value each
            holds = "lines"
        # a row given as a list is a line of its fields: people_csv's writer typed
        # (['name', 'age'], ['Ana', '31'], ...), and each row was compared as "['Ana', '31']"
        sep = {".csv": ",", ".tsv": "\t"}.get(PurePosixPath(self.file).suffix.lower(), " ")
        body = _COMPARE[holds].format(
            file=name, expected=expected, label=_braced(self.file), sep=repr(sep)
        )
        return PRELUDE + body

    def value_program(self) -> str:
        """The program that prints the expected value, as text, on the workspace at start."""
        expected = _expression(self.expected, "expected")
        return PRELUDE + (
            f"expected = {expected}\n"
            "print(expected if isinstance(expected, str) else repr(expected), end='')"
        )


_TEXT_FILES = {".csv", ".tsv", ".txt", ".md", ".log", ".ini", ".cfg", ".yaml", ".yml", ".html"}


def _not_json(file: str) -> bool:
    """A file whose name says it holds something other than JSON."""
    return PurePosixPath(file).suffix.lower() in _TEXT_FILES


def _unordered(expression: str) -> bool:
    """Whether an expected value is a set (a set display, comprehension, or set() call)."""
    try:
        node = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return False
    return _a_set(node)


def _a_set(node: ast.expr) -> bool:
    """A set, or a set made a list, a tuple or a joined text, whose order is the hash's: the
    1.5B writer expected `list(set(before('emails.txt').split()))` for dedupe_lines' lines "in
    the original order", and the right work failed it for ten steps (suite_1202)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in ("set", "frozenset"):
            return True
        if node.func.id in ("list", "tuple") and len(node.args) == 1:
            return _a_set(node.args[0])
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
    ):
        return _a_set(node.args[0])
    if isinstance(node, ast.List | ast.Tuple) and len(node.elts) == 1:
        only = node.elts[0]
        return isinstance(only, ast.Starred) and _a_set(only.value)
    return isinstance(node, ast.Set | ast.SetComp)


_LISTS_FILES = re.compile(r"\b(listdir|scandir|walk|glob|iterdir)\b")


def points_elsewhere(form: FileForm, value: str, there: Sequence[str]) -> str:
    """Why a file form's expected value, one short line computed from a file, is a pointer
    to another of the workspace's files rather than the answer, or "". For "start.txt says
    where the access code is" the 1.5B writer expected clue.txt's text, 'Not here either:
    see vault/secret.txt.', and the run finished on that pointer. A value from a listing of
    files names files by design, and is left alone."""
    line = value.strip()
    if "\n" in line or len(line) > 200 or _LISTS_FILES.search(form.expected):
        return ""
    named = [
        name
        for name in there
        if name not in form.expected
        and name != form.file
        and re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-]|\.\w)", line)
    ]
    if not named:
        return ""
    return (
        f"expects {form.file} to hold {line[:80]!r}, which points at {named[0]}: that text "
        "is a step on the way, not the answer. Follow it, and compute the expected value "
        f"from open({named[0]!r})"
    )


def typed_by_hand(form: FileForm, texts: Sequence[str], inputs: Sequence[str]) -> str:
    """Why a file form's expected value, a literal, was typed by hand where the input files
    hold it (`inputs`: those of the workspace the texts name), or "". The 1.5B writer typed
    'cleo' for the best score's player (ben), 'Bob' for a name the file holds as bob, and
    'Shopping list' where the goal wanted it in capitals. A value the task itself states
    ('red, green and blue') is the person's, and kept."""
    source = form.expected.strip()
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        value = source if _PLAIN_WORDS.fullmatch(source) else _one_value_a_line(source)
        if value is None:
            return ""  # an expression: it computes what it reads
    if not inputs:
        return ""
    said = set(re.findall(r"\w+", " ".join(texts).lower()))
    if set(re.findall(r"\w+", str(value).lower())) <= said:
        return ""
    source_file = inputs[0]
    how = f"before({source_file!r})" if source_file == form.file else f"open({source_file!r})"
    return (
        f"has expected {source[:60]!r}, typed by hand, where {source_file} holds the input: "
        f"compute it from {how} with Python, since a value typed by hand is often wrong"
    )


def adds_input_text(form: FileForm, inputs: Mapping[str, str]) -> str:
    """Why a file form's expected value, computed from an input, has text added to it by hand
    that the inputs already hold, or "". For "In greeting.txt, replace the word World with
    Autonoma and change nothing else" the 1.5B writer expected
    `before('greeting.txt').replace('World', 'Autonoma') + '\\nHave a nice day.\\n'`: the
    file's own second line once more. The run wrote it twice to pass, and ended completed on
    wrong work. A header the input lacks ('name,score\\n' + before('scores.csv')) is the
    task's, and stays."""
    try:
        tree = ast.parse(mend_json_slips(form.expected.strip()), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    held = [_plain_text(text) for text in inputs.values()]
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add):
            continue
        for literal, other in ((node.left, node.right), (node.right, node.left)):
            if not isinstance(literal, ast.Constant) or not isinstance(literal.value, str):
                continue
            if isinstance(other, ast.Constant):
                continue  # two literals: typed_by_hand's to read
            text = _plain_text(literal.value)
            if len(text) >= 8 and re.search(r"[^\W\d_]", text) and any(text in h for h in held):
                return (
                    f"adds {literal.value[:60]!r} by hand to a value computed from the input, "
                    "which already holds that text: compute the whole expected value from "
                    "the input, with nothing typed after it"
                )
    return ""


def _plain_text(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines())


def made_up(form: FileForm, texts: Sequence[str], inputs: Sequence[str]) -> str:
    """Why a file form's expected value is a text of the writer's own, or "": a literal of
    three words or more that neither the task states nor any input file could give (there is
    none). For "Write a haiku about autumn to haiku.txt" the 1.5B writer expected a haiku of
    its own, word for word, in both of CI's seeded runs (2026-11-28): no other haiku could
    pass, and both runs spent their steps on it; here one expected "autumn", "snowflakes
    fall", "peaceful", and the run wrote them under its haiku until its steps ran out. A
    short fact stays ("Paris", "New Delhi"); a list of three named things is judged instead.
    Never kept, however often it is written."""
    if inputs:
        return ""  # a value the inputs hold is typed_by_hand's to ask about
    source = mend_json_slips(form.expected.strip())
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return ""  # an expression, or words typed_by_hand reads
    said = set(re.findall(r"[^\W\d_]+", " ".join(texts).lower()))
    own = set(re.findall(r"[^\W\d_]+", str(value).lower())) - said
    if len(own) < 3:
        return ""
    return (
        f"has expected {source[:60]!r}, a text of your own: the work writes its own words, "
        "which no check can know before it. Check what the task fixes (how many lines, a "
        'word the file must hold) with a "code" check, and judge the rest'
    )


def extreme_of_text(form: FileForm, value: str, said: Sequence[str] = ()) -> str:
    """Why a file form's expected value, the max() or min() of texts with no key= (the
    alphabetically last or first), was sent back, or "". For "Write the name of the hottest
    city alone to hottest.txt" the 1.5B writer computed `max(row['city'] for row in ...)`,
    Oslo, not the city of the highest temperature (code_head_1129)."""
    try:
        tree = ast.parse(mend_json_slips(form.expected.strip()), mode="eval")
    except SyntaxError:
        return ""
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("max", "min")
        and not any(k.arg == "key" for k in node.keywords)
    ]
    text = value.strip()
    if not calls or not re.search(r"[^\W\d_]", text) or _is_number(text):
        return ""
    if re.search(r"alphabet|lexicograph", " ".join(said), re.IGNORECASE):
        return ""  # the first or last name in alphabetical order is what is asked
    name = calls[0].func.id  # type: ignore[attr-defined]
    return (
        f"takes {name}() of texts ({text[:40]!r}, first or last in alphabetical order), not of "
        f"numbers: to pick the row with the {'largest' if name == 'max' else 'smallest'} "
        f"number, give {name}() the rows and a key, as in {name}(rows, key=lambda r: "
        "float(r['temp']))['city']"
    )


def characters_of_text(form: FileForm, value: object) -> str:
    """Why a file form's expected lines or words, as its program computes them, are the
    single characters of a text, or "": `sorted()` or `list()` of a file's text takes it a
    character at a time. For sort_ignore_case the 1.5B writer's check expected ['', '', 'A',
    'D', 'F', 'a', ...] of names.txt, no file could pass it, and the run, right from its first
    step, ran out of its ten (suite_1202)."""
    if form.holds not in ("lines", "words") or not isinstance(value, list | tuple):
        return ""
    if len(value) < 4 or not all(isinstance(item, str) and len(item) <= 1 for item in value):
        return ""
    if not any(not item.strip() for item in value):
        return ""  # list('hello'), one letter a line, is asked for at times: no break in it
    shown = ", ".join(repr(item) for item in value[:6])
    return (
        f"has expected {form.expected.strip()[:60]!r}, which gives single characters ({shown}, "
        f"...), not {form.holds}: sorted() or list() of a text takes it a character at a time. "
        "Split the text first: sorted(text.splitlines(), key=str.lower)"
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def leaves_out_inputs(form: FileForm, texts: Sequence[str], inputs: Sequence[str]) -> str:
    """Why a file form's expected value, computed from some of the input files a sentence
    names beside the form's file, leaves out others that sentence names, or "". For "Join the
    lines of part1.txt, part2.txt and part3.txt, in that order, into full.txt" the 1.5B
    writer computed part1 and part2 alone; the run wrote the same three lines, its check
    passed, and it ended completed on wrong work (combine_parts, code_full_1129). Never kept."""
    source = form.expected
    if _LISTS_FILES.search(source):
        return ""  # a listing reads files by design
    # ' part2.txt' counts as read: a name mistyped is check_guards.foreign_files' to say
    read = [n for n in inputs if re.search(rf"""['"]\s*{re.escape(n)}\s*['"]""", source)]
    if not read:
        return ""  # typed, or read some other way: typed_by_hand's and the probe's to ask
    for sentence in (s for text in texts for s in sentences(text)):
        named = named_files([sentence])
        if form.file not in named:
            continue
        left_out = [n for n in named if n in inputs and n != form.file and n not in read]
        if left_out:
            return (
                f"computes {form.file} from {_and(read)} but not from {_and(left_out)}, which "
                f'the task names with it ("{sentence.strip()[:120]}"): compute the expected '
                "value from every file the task names for it"
            )
    return ""


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class Call(BaseModel):
    args: str = Field(max_length=300, description="the call's arguments, as Python: 'a', 2")
    returns: str = Field(min_length=1, max_length=300, description="the value it must return")


class FunctionForm(_Form):
    """A function in a module the work writes returns the given values."""

    kind: Literal["function"]
    module: str = Field(min_length=1, max_length=200, description="the .py file it is in")
    function: str = Field(min_length=1, max_length=100)
    calls: list[Call] = Field(min_length=1, max_length=6)

    def program(self) -> str:
        module = self.module.strip().removesuffix(".py").replace("/", ".")
        if not all(part.isidentifier() for part in module.split(".")):
            raise FormError(f"has module {self.module!r}, which is not a Python file's name")
        function = self.function.strip().split("(")[0]
        if not function.isidentifier():
            raise FormError(f"has function {self.function!r}, which is not a Python name")
        lines = [f"from {module} import {function}", _SAME]
        for call in self.calls:
            args = call.args.strip()
            try:
                ast.parse(f"f({args})", mode="eval")
            except SyntaxError:
                raise FormError(f"has the arguments {args!r}, which are not Python") from None
            returns = _expression(call.returns, "returns")
            shown = _braced(f"{function}({args})")
            lines += [
                f"got, expected = {function}({args}), {returns}",
                f"assert same(got, expected), f'{shown} returned {{got!r}}, expected "
                "{expected!r}'",
            ]
        return "\n".join(lines)


class GoneForm(_Form):
    """A file or folder the work must remove (or move away) is gone."""

    kind: Literal["gone"]
    file: str = Field(min_length=1, max_length=200)

    def program(self) -> str:
        return (
            "import os\n"
            f"assert not os.path.exists({self.file!r}), '{_braced(self.file)} is still there'"
        )


class CodeForm(_Form):
    """Anything else a program can decide: a whole Python program that asserts it."""

    kind: Literal["code"] = "code"
    code: str = Field(min_length=1, max_length=2000)

    def program(self) -> str:
        return self.code


class JudgedForm(_Form):
    """What no program can decide (whether a text is polite): the criterion, judged."""

    kind: Literal["judged"]

    def program(self) -> str:
        return ""


def at_odds(forms: Sequence[_Form]) -> dict[int, str]:
    """Why each file form that another contradicts cannot pass, by the index of the form: two
    say what one file holds whole, as values typed out, and the values differ. For "Write the
    line 'started' to log.txt, then append the line 'finished'" the 1.5B writer expected
    log.txt to be 'started' in one check and 'finished' in another; the run wrote both lines
    at its second step and spent the other eight on checks no file could pass."""
    whole: dict[str, list[tuple[int, FileForm, object]]] = {}
    for index, form in enumerate(forms):
        if isinstance(form, FileForm) and (value := typed_value(form.expected)) is not None:
            whole.setdefault(form.file, []).append((index, form, value))
    odds = {}
    for file, said in whole.items():
        for index, _, value in said:
            other = next(((f, v) for _, f, v in said if v != value), None)
            if other is not None:
                odds[index] = (
                    f"expects {file} to hold {str(value)[:60]!r} whole, and the check "
                    f"{other[0].what!r} expects it to hold {str(other[1])[:60]!r}: no file holds "
                    f"both. If {file} holds several values, check them in one check (holds: "
                    "lines, expected: a list of the lines in order)"
                )
    return odds


def typed_value(expected: str) -> object:
    """The value an expected expression types out (a literal, or plain words), else None."""
    source = mend_json_slips(expected.strip())
    try:
        value: object = ast.literal_eval(source)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return source if _PLAIN_WORDS.fullmatch(source) else None
    return value.strip() if isinstance(value, str) else value


def _kind(value: Any) -> str:
    """A check's form; one without a kind is a program, as checks were before forms."""
    kind = value.get("kind", "code") if isinstance(value, dict) else getattr(value, "kind", "")
    return str(kind)


Form = Annotated[
    Annotated[FileForm, Tag("file")]
    | Annotated[FunctionForm, Tag("function")]
    | Annotated[GoneForm, Tag("gone")]
    | Annotated[CodeForm, Tag("code")]
    | Annotated[JudgedForm, Tag("judged")],
    Discriminator(_kind),
]
# the forms where the task asks for no Python function: under a grammar the writer cannot
# choose a function form (order_value's writer wrote one three rounds running, and the run
# fell back to the task judged, which refused the right total)
FormNoFunction = Annotated[
    Annotated[FileForm, Tag("file")]
    | Annotated[GoneForm, Tag("gone")]
    | Annotated[CodeForm, Tag("code")]
    | Annotated[JudgedForm, Tag("judged")],
    Discriminator(_kind),
]
CODE_FORMS = ("file", "function", "gone", "code")


def _expression(text: str, field: str) -> str:
    """The Python expression of a value, parenthesised: as written, with a line break that
    cuts a string literal written back as `\\n` (JSON's `\\n` read as a line break), or, when
    it is plain words and no expression (`Shopping list`), those words as a text."""
    source = _commas_between_texts(mend_json_slips(text.strip()))
    try:
        tree = ast.parse(source, mode="eval")
        if isinstance(tree.body, ast.Name) and "_" in tree.body.id.strip("_"):
            # mend_1129, dedupe_lines: `unique_lines`, kept as the text 'unique_lines', held
            # the run to a file no work could make
            raise FormError(
                f"has {field} {source!r}, a variable's name, which the check does not have: "
                "it runs alone, so write the expression that computes the value (or the "
                "text in quotes)"
            )
        if isinstance(tree.body, ast.Name) and tree.body.id not in _KNOWN_NAMES:
            return repr(source)  # a word (Cairo), not a name the program has
        if _truth(tree.body):
            raise FormError(
                f"has {field} {source[:80]!r}, a comparison, which is True or False, not the "
                f"value itself: write the {field} value, or the expression that computes it"
            )
    except SyntaxError as error:
        if _PLAIN_WORDS.fullmatch(source):
            return repr(source)
        if (lines := _one_value_a_line(source)) is not None:
            return repr(lines)
        raise FormError(
            f"has {field} {source[:80]!r}, which is not one Python expression ({error.msg}): "
            "write the value, or the expression that computes it, alone"
        ) from None
    return f"({source})"


_CASTS = {"str", "int", "float", "bool"}


def _commas_between_texts(source: str) -> str:
    """`('alpha' 'beta' 'gamma')` with the commas put in. Python joins texts written side by
    side into one; in a value typed by a small model that is a list missing its commas (the
    1.5B writer's expected lines for combine_parts, ('alpha' 'beta' 'gamma' 'delta'), became
    'alphabetagammadelta', and no work could pass the check)."""
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT)  # a NEWLINE parts lines
        ]
    except (tokenize.TokenError, SyntaxError):
        return source
    lines = source.splitlines(keepends=True)
    for first, then in reversed(list(pairwise(tokens))):
        if first.type == tokenize.STRING and then.type == tokenize.STRING:
            row, column = first.end
            lines[row - 1] = f"{lines[row - 1][:column]},{lines[row - 1][column:]}"
    return "".join(lines)


def _truth(node: ast.expr) -> bool:
    """Whether an expression is a test, not a value: the 1.5B writer's expected for "replace
    World with Autonoma in greeting.txt" was `open('greeting.txt').read().strip() == 'Hello,
    Autonoma!...'`, so the check wanted greeting.txt to hold 'False' and no work could pass."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CASTS:
        return len(node.args) == 1 and not node.keywords and _truth(node.args[0])
    if isinstance(node, ast.BoolOp):  # `a or b` may be a value; `a == b or c == d` is not
        return all(_truth(value) for value in node.values)
    return isinstance(node, ast.Compare) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    )


def _one_value_a_line(source: str) -> str | list[list[str]] | None:
    """`'red'` / `'green'` / `'blue'` on three lines (the 1.5B writer's expected value for
    "write red, green and blue, one per line", sent back three rounds running as not one
    expression): the values as the text of their lines. Rows, a list a line (`['name',
    'age']` / `['Ana', '31']`: people_csv's expected, sent back three rounds in a run that
    then held nothing to its rows), as a list of rows, which the comparison joins as the
    file's kind says. None unless every line is a literal or plain words, or every line a
    row of them."""
    values: list[str] = []
    rows: list[list[str]] = []
    for line in filter(None, (line.strip().rstrip(",") for line in source.splitlines())):
        try:
            value = ast.literal_eval(line)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            if not _PLAIN_WORDS.fullmatch(line):
                return None
            value = line
        if isinstance(value, list | tuple) and value and all(map(_scalar, value)):
            rows.append([str(item) for item in value])
        elif _scalar(value):
            values.append(str(value))
        else:
            return None
    if values and rows:
        return None
    if len(rows) > 1:
        return rows
    return "\n".join(values) if len(values) > 1 else None


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


_KNOWN_NAMES = {*dir(builtins), "csv", "json", "math", "os", "re", "statistics", "before"}
# words, numbers and everyday punctuation, but nothing of Python's own syntax
_PLAIN_WORDS = re.compile(r"[\w ,.;:!?%-]+")


def _braced(text: str) -> str:
    """Text safe inside the f-string of a message: braces doubled, quotes made plain."""
    return text.replace("{", "{{").replace("}", "}}").replace("\\", "/").replace("'", '"')


_SAME = (
    "def same(got, expected):\n"
    "    number = (int, float)\n"
    "    if isinstance(got, bool) or isinstance(expected, bool):\n"
    "        return type(got) is type(expected) and got == expected\n"
    "    if isinstance(got, number) and isinstance(expected, number):\n"
    "        return abs(got - expected) <= 1e-9 * max(1.0, abs(expected))\n"
    "    return type(got) is type(expected) and got == expected"
)

# Each compares like with like: lines with lines (a text expected is split into its lines, a
# list's items made text; what ends a line is set aside, what begins it is content: a run
# wrote " green" and " blue" and its check passed them), a number read as one, whatever the
# file's final newline.
_COMPARE: dict[str, str] = {
    "lines": (
        "expected = {expected}\n"
        "expected = expected.splitlines() if isinstance(expected, str) else list(expected)\n"
        "expected = [{sep}.join(map(str, item)) if isinstance(item, (list, tuple)) else item\n"
        "            for item in expected]\n"
        "expected = [str(item).rstrip() for item in expected]\n"
        "got = [line.rstrip() for line in open({file}, encoding='utf-8').read().splitlines()]\n"
        "assert got == expected, f'{label} holds the lines {{got}}, expected {{expected}}'"
    ),
    "words": (
        "expected = {expected}\n"
        "if not isinstance(expected, str):\n"
        "    expected = ' '.join(str(item) for item in expected)\n"
        "expected = expected.split()\n"
        "got = open({file}, encoding='utf-8').read().split()\n"
        "assert got == expected, f'{label} holds the words {{got}}, expected {{expected}}'"
    ),
    "number": (
        "expected = float({expected})\n"
        "text = open({file}, encoding='utf-8').read().strip()\n"
        "try:\n"
        "    got = float(text)\n"
        "except ValueError:\n"
        "    raise AssertionError(f'{label} holds {{text!r}}, not a number alone; expected "
        "{{expected:g}}') from None\n"
        "decimals = len(text.partition('.')[2])\n"
        "close = abs(got - expected) <= 1e-9 * max(1.0, abs(expected))\n"
        "rounded = decimals >= 2 and round(expected, decimals) == got\n"
        "assert close or rounded, f'{label} holds {{text}}, expected {{expected:g}}'"
    ),
    "text": (  # a list of lines typed for a text: its lines (iso_dates' str(['2024-03-14', ...]))
        "expected = {expected}\n"
        "if isinstance(expected, (list, tuple)):\n"
        "    expected = '\\n'.join(str(item) for item in expected)\n"
        "expected = str(expected).strip()\n"
        "got = open({file}, encoding='utf-8').read().strip()\n"
        "assert got == expected, f'{label} holds {{got!r}}, expected {{expected!r}}'"
    ),
    "json": (
        "expected = {expected}\n"
        "got = json.load(open({file}, encoding='utf-8'))\n"
        "assert got == expected, f'{label} holds {{got}}, expected {{expected}}'"
    ),
}


__all__ = [
    "CODE_FORMS",
    "Call",
    "CodeForm",
    "FileForm",
    "Form",
    "FormError",
    "FunctionForm",
    "GoneForm",
    "JudgedForm",
    "at_odds",
    "points_elsewhere",
    "typed_by_hand",
]
