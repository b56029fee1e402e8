"""The program that runs one acceptance check in the sandbox: the check's code comes on stdin,
the workspace is the working directory, the workspace as the run found it is readable through
`before(path)`. It stands alone (`python -I -c <this file's text>`): it imports nothing of
autonoma.

A file's final newline is not its content: a check written as `read().split('\\n')` fails
on "red\\ngreen\\nblue\\n" although the file holds exactly the three words asked for (seen in
3 of 6 planned runs of the 1.5B model, after the prompt had said to compare lines). Nor is a
blank line before the first: reverse_lines' run wrote the four lines reversed after one (its
`split('\\n')` of a text ending in a newline, reversed), and its check held the run out for
ten steps while the suite's checker and the judge (`_plain`) set such lines aside. So a check
that fails its assert is run again with the workspace's text files read without the blank
lines at their ends, then with exactly one final newline; if either passes, the check passes,
and says so on stderr. `AUTONOMA_NEWLINE_TOLERANT=0` turns this off, for checks that are
about line endings.

A file's text is not its characters when a check goes through it: the 1.5B model wrote
`sorted(before('names.txt'), key=str.lower)` for "the lines of names.txt sorted, ignoring
case", which sorts letters, so the right work failed the check for eight steps. An open file
goes through its lines; so a check that went through a `before()` text and failed its assert is
run again with `before()` texts going through their lines; if that passes, the check passes,
and says so on stderr.
"""

import ast
import builtins
import io
import os
import sys
from collections.abc import Callable
from typing import Any

_open = builtins.open
TOLERATED = "autonoma: it passes once the blank lines at the files' ends are set aside"
BY_LINE = "autonoma: it passes when before()'s texts go through their lines, as open files do"
NEVER = "autonoma: the check can never pass: "
GAP = "autonoma: how they differ: "


class NotThereBefore(Exception):
    """before(path) of a file the workspace did not hold: such a check can never pass."""


class _Text(str):
    """A `before()` text that notes when a check goes through it character by character."""

    gone_through = False

    def __iter__(self) -> Any:
        _Text.gone_through = True
        return super().__iter__()


class _Lines(str):
    """A `before()` text that goes through its lines, as an open file does."""

    def __iter__(self) -> Any:
        return iter(self.splitlines())


_kind_of_text: type[str] = _Text


def before(path: str) -> str:
    """The text of a workspace file as it was before the work began."""
    full = os.path.join(os.environ["AUTONOMA_START"], path)
    if not os.path.isfile(full):
        raise NotThereBefore(
            f"before({path!r}): {path} was not in the workspace before the work; "
            "read a file the work makes with open()"
        )
    with _open(full, encoding="utf-8") as f:
        return _kind_of_text(f.read())


def _ending_as(ending: str) -> Callable[..., Any]:
    """`open` that reads a workspace text file without the blank lines at its ends, with
    `ending` after its last line."""
    here = os.path.realpath(os.getcwd())

    def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = _open(file, mode, *args, **kwargs)
        if set(mode) & set("bwax+") or not isinstance(file, (str, os.PathLike)):
            return handle
        if not os.path.realpath(file).startswith(here + os.sep):
            return handle
        with handle:
            text = handle.read()
        return io.StringIO(text.strip("\r\n") + ending)

    return opened


def _run(source: str, ending: str | None = None, by_line: bool = False) -> None:
    global _kind_of_text
    if ending is not None:
        builtins.open = io.open = _ending_as(ending)
    _kind_of_text = _Lines if by_line else _Text
    try:
        exec(compile(source, "check.py", "exec"), {"__name__": "__main__", "before": before})
    finally:
        builtins.open = io.open = _open
        _kind_of_text = _Text


def _of_letters(source: str, error: AssertionError) -> bool:
    """Whether a side of the failed `assert a == b` is a list of single characters."""
    sides = _compared(source, error)
    return sides is not None and any(
        isinstance(value, list | tuple)
        and len(value) > 1
        and all(isinstance(v, str) and len(v) == 1 for v in value)
        for value, _ in sides[:2]
    )


def never_equal(source: str, error: AssertionError) -> str:
    """Why the assert that failed can never hold, or "": it says two values of kinds that are
    never equal are equal (a file's text against a list of its lines: seen in 2 of 12 checks
    the 1.5B model wrote)."""
    sides = _compared(source, error)
    if sides is None:
        return ""
    (left, _), (right, _), line = sides
    kinds = {_kind(left), _kind(right)}
    if len(kinds) == 2 and "other" not in kinds:
        return f"line {line} compares a {_kind(left)} with a {_kind(right)}"
    return ""


def _compared(
    source: str, error: AssertionError
) -> tuple[tuple[Any, str], tuple[Any, str], int] | None:
    """The two sides of the failed `assert a == b`, each as (value, source text), evaluated
    again where the assert stood, and its line; None for any other assert."""
    frame = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "check.py":
            frame, line = trace.tb_frame, trace.tb_lineno
        trace = trace.tb_next
    if frame is None:
        return None
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Assert) and node.lineno == line):
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        if not isinstance(test.ops[0], ast.Eq):
            return None
        try:
            where = frame.f_globals, frame.f_locals
            left, right = (
                eval(compile(ast.Expression(side), "check.py", "eval"), *where)
                for side in (test.left, test.comparators[0])
            )
        except Exception:
            return None
        return (left, ast.unparse(test.left)), (right, ast.unparse(test.comparators[0])), line
    return None


def how_they_differ(source: str, error: AssertionError) -> str:
    """What sets the two sides of a failed `assert got == expected` apart, when both are
    lines and the difference has a name, or "". The 1.5B model was shown
    "holds the lines ['notes/apples.md', ...], expected ['apples.md', ...]" for eight steps
    and never stripped the folder (folder_index, mend2_1129); a named difference says what
    to change."""
    sides = _compared(source, error)
    if sides is None:
        return ""
    (left, left_name), (right, right_name), _ = sides
    got, expected = _lines(left), _lines(right)
    if got is None or expected is None or got == expected:
        return ""
    named = (name if name.isidentifier() else default
             for name, default in ((left_name, "got"), (right_name, "expected")))  # fmt: skip
    return _gap(got, expected, *named)


def _lines(value: object) -> list[str] | None:
    if isinstance(value, str):
        return value.splitlines() if "\n" in value.strip() else None
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def _gap(got: list[str], expected: list[str], got_name: str, expected_name: str) -> str:
    pairs = list(zip(got, expected, strict=False))
    same_length = len(got) == len(expected)
    first = next(((g, e) for g, e in pairs if g != e), None)
    shown = f"{got_name} has {first[0]!r} where {expected_name} has {first[1]!r}" if first else ""
    base = os.path.basename
    if same_length and all(g == e or ("/" in g and base(g) == e) for g, e in pairs):
        return f"{shown}: a folder before each name; os.path.basename(path) gives the name alone"
    if same_length and all(g == e or ("/" in e and base(e) == g) for g, e in pairs):
        return f"{shown}: {expected_name} has the folder before each name"
    if sorted(got) == sorted(expected):
        return f"the same lines in another order; {shown}"
    if [g.casefold() for g in got] == [e.casefold() for e in expected]:
        return f"the same lines but for the letters' case; {shown}"
    if [g.strip() for g in got] == [e.strip() for e in expected]:
        return f"the same lines but for spaces at their ends; {shown}"
    if [g for g in got if g.strip()] == [e for e in expected if e.strip()]:
        blanks = sum(1 for g in got if not g.strip()) - sum(1 for e in expected if not e.strip())
        more = f"{abs(blanks)} blank line{'s' if abs(blanks) != 1 else ''}"
        return f"{got_name} has {more} {'more' if blanks > 0 else 'fewer'}, the rest the same"
    if same_length and all(g.startswith(e) for g, e in pairs):
        return f"{shown}: each line holds more than the line expected"
    if same_length and all(e.startswith(g) for g, e in pairs):
        return f"{shown}: each line holds less than the line expected"
    if same_length:
        differing = sum(1 for g, e in pairs if g != e)
        return f"{shown}; {differing} of {len(got)} lines differ"
    missing = [e for e in expected if e not in got]
    extra = [g for g in got if g not in expected]
    said = [f"{len(got)} lines where {len(expected)} are expected"]
    said += [f"missing {_few(missing)}"] if missing else []
    said += [f"not expected {_few(extra)}"] if extra else []
    return "; ".join(said)


def _few(items: list[str]) -> str:
    more = f" and {len(items) - 3} more" if len(items) > 3 else ""
    return ", ".join(repr(item) for item in items[:3]) + more


def _kind(value: object) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool | int | float):
        return "number"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "other"


def main() -> None:
    sys.path.insert(0, os.getcwd())  # -I left it out; a check imports the module it tests
    source = sys.stdin.read()
    try:
        _run(source)
    except AssertionError as error:
        tolerant = os.environ.get("AUTONOMA_NEWLINE_TOLERANT") != "0"
        endings = ("", "\n") if tolerant else ()
        again: list[tuple[str | None, bool]] = [(ending, False) for ending in endings]
        if _Text.gone_through:
            again += [(None, True)] + [(ending, True) for ending in endings]
        of_lines = None  # how the check fails with before()'s texts going through their lines
        for ending, by_line in again:
            try:
                _run(source, ending, by_line)
            except AssertionError as failed:
                if by_line and ending is None:
                    of_lines = failed
                continue
            except Exception:
                continue
            print(BY_LINE if by_line else TOLERATED, file=sys.stderr)
            sys.exit(0)
        if of_lines is not None and _of_letters(source, error):
            error = of_lines  # what failed is said of the lines the check meant, not letters
        why = never_equal(source, error)
        if why:
            print(f"{NEVER}{why}", file=sys.stderr)
        gap = "" if why else how_they_differ(source, error)
        if gap:
            print(f"{GAP}{gap}", file=sys.stderr)
        raise error from None


if __name__ == "__main__":
    main()
