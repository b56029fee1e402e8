"""The program that runs one acceptance check in the sandbox: the check's code comes on stdin,
the workspace is the working directory, the workspace as the run found it is readable through
`before(path)`. It stands alone (`python -I -c <this file's text>`): it imports nothing of
autonoma.

A file's final newline is not its content: a check written as `read().split('\\n')` fails
on "red\\ngreen\\nblue\\n" although the file holds exactly the three words asked for (seen in
3 of 6 planned runs of the 1.5B model, after the prompt had said to compare lines). So a check
that fails its assert is run again with the workspace's text files read without their final
newlines, then with exactly one; if either passes, the check passes, and says so on stderr.
`AUTONOMA_NEWLINE_TOLERANT=0` turns this off, for checks that are about line endings.
"""

import ast
import builtins
import io
import os
import sys
from collections.abc import Callable
from typing import Any

_open = builtins.open
TOLERATED = "autonoma: it passes once the files' final newlines are set aside"
NEVER = "autonoma: the check can never pass: "


class NotThereBefore(Exception):
    """before(path) of a file the workspace did not hold: such a check can never pass."""


def before(path: str) -> str:
    """The text of a workspace file as it was before the work began."""
    full = os.path.join(os.environ["AUTONOMA_START"], path)
    if not os.path.isfile(full):
        raise NotThereBefore(
            f"before({path!r}): {path} was not in the workspace before the work; "
            "read a file the work makes with open()"
        )
    with _open(full, encoding="utf-8") as f:
        return f.read()


def _ending_as(ending: str) -> Callable[..., Any]:
    """`open` that reads a workspace text file with its final newlines made `ending`."""
    here = os.path.realpath(os.getcwd())

    def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = _open(file, mode, *args, **kwargs)
        if set(mode) & set("bwax+") or not isinstance(file, (str, os.PathLike)):
            return handle
        if not os.path.realpath(file).startswith(here + os.sep):
            return handle
        with handle:
            text = handle.read()
        return io.StringIO(text.rstrip("\r\n") + ending)

    return opened


def _run(source: str, ending: str | None = None) -> None:
    if ending is not None:
        builtins.open = io.open = _ending_as(ending)
    try:
        exec(compile(source, "check.py", "exec"), {"__name__": "__main__", "before": before})
    finally:
        builtins.open = io.open = _open


def never_equal(source: str, error: AssertionError) -> str:
    """Why the assert that failed can never hold, or "": it says two values of kinds that are
    never equal are equal (a file's text against a list of its lines: seen in 2 of 12 checks
    the 1.5B model wrote). Both sides are evaluated again where the assert stood."""
    frame = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "check.py":
            frame, line = trace.tb_frame, trace.tb_lineno
        trace = trace.tb_next
    if frame is None:
        return ""
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Assert) and node.lineno == line):
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return ""
        if not isinstance(test.ops[0], ast.Eq):
            return ""
        try:
            where = frame.f_globals, frame.f_locals
            left, right = (
                eval(compile(ast.Expression(side), "check.py", "eval"), *where)
                for side in (test.left, test.comparators[0])
            )
        except Exception:
            return ""
        kinds = {_kind(left), _kind(right)}
        if len(kinds) == 2 and "other" not in kinds:
            return f"line {line} compares a {_kind(left)} with a {_kind(right)}"
    return ""


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
        if os.environ.get("AUTONOMA_NEWLINE_TOLERANT") != "0":
            for ending in ("", "\n"):
                try:
                    _run(source, ending)
                except Exception:
                    continue
                print(TOLERATED, file=sys.stderr)
                sys.exit(0)
        why = never_equal(source, error)
        if why:
            print(f"{NEVER}{why}", file=sys.stderr)
        raise


if __name__ == "__main__":
    main()
