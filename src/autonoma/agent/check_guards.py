"""Static guards against acceptance checks that cannot tell right work from wrong: a check
that reads no file the task makes, names files neither the task nor the workspace holds,
compares with the "before" of a file that did not exist, writes or removes files, or asserts
nothing. Each says why a check is sent back, or "" (agent/checks.py asks for another)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from autonoma.agent.check_types import Check
from autonoma.agent.completion import deliverables, named_files
from autonoma.tools import Workspace

_NOT_SOUGHT = {"utf-8", "utf8", "ascii", "latin-1"}


def sought_strings(code: str, files: Sequence[str]) -> list[str]:
    """The words a check's code looks for: its string constants that hold a letter or digit,
    save the files it names, encodings, and what only its messages say."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    said = _message_nodes(tree)
    sought: list[str] = []
    for node in ast.walk(tree):
        if id(node) in said or not isinstance(node, ast.Constant):
            continue
        value = node.value
        if (
            isinstance(value, str)
            and sum(ch.isalnum() for ch in value) >= 2
            and value.lower() not in _NOT_SOUGHT
            and not any(name in value or value in name for name in files)
            and value not in sought
        ):
            sought.append(value)
    return sought[:20]


def reads_no_result(check: Check, texts: Sequence[str], workspace: Workspace) -> str:
    """A code check that names none of the files the work must make (those the task, goals
    or check name that are not there yet) checks only the inputs: it fails before the work
    and after it alike. The 1.5B writer checked poem.txt's text against a line count, and a
    title's length in haiku.txt, not title.txt."""
    made = [d.name for d in deliverables(workspace, [*texts, check.what]) if d.lines is None]
    if not made or any(mentions(check.code, name) for name in made) or _absence(check.code):
        return ""
    return (
        f"reads none of the files the work must make ({', '.join(made)}), only what is there "
        "before it, so it can never pass: check what the work leaves in them"
    )


def _absence(code: str) -> bool:
    """Whether the program asserts that a path is gone (`assert not os.path.exists(...)`):
    the result of a removal or a move, which no file the work makes holds."""
    for node in ast.walk(ast.parse(code)):
        test = node.test if isinstance(node, ast.Assert) else None
        if (
            isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and isinstance(test.operand, ast.Call)
            and getattr(test.operand.func, "attr", "") in ("exists", "isfile", "isdir")
        ):
            return True
    return False


def foreign_files(check: Check, texts: Sequence[str], workspace: Workspace) -> str:
    """A check about a file that neither the task nor the workspace names is another task's
    (the 1.5B writer, asked to count ERROR lines, gave back its prompt's example check "the
    haiku in haiku.txt is about autumn", which then kept the run from finishing)."""
    said = [check.what, *(strings(check.code) if check.kind == "code" else [])]
    known = {Path(name).name.lower() for name in [*named_files(texts), *workspace.files()]}
    foreign = [name for name in named_files(said) if Path(name).name.lower() not in known]
    if not foreign:
        return ""
    return (
        f"is about {foreign[0]}, which neither the task nor the workspace names: check the "
        "files this task reads and makes"
    )


def strings(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def before_of_the_new(check: Check, workspace: Workspace) -> str:
    """A check that compares a file with before() of a file the workspace does not hold yet
    can never pass (the 1.5B writer compared reversed lines with before('reversed.txt'))."""
    asked = [
        node.args[0].value
        for node in ast.walk(ast.parse(check.code))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "before"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]
    if not asked:
        return ""
    present = set(workspace.files())
    new = [name for name in asked if name not in present]
    if not new:
        return ""
    return (
        f"reads before({new[0]!r}), but {new[0]} is not in the workspace before the work: "
        "before() is for files the work changes; read what it makes with open()"
    )


_WRITING_METHODS = {"write_text", "write_bytes", "unlink", "mkdir", "touch"}  # of a Path
_WRITING_FUNCTIONS = {"remove", "unlink", "rename", "replace", "makedirs", "mkdir", "rmtree"}


def writes(code: str) -> str:
    """What a check's program writes or removes (a file opened to write, a path written,
    os.remove...), as it names it; "" if it only reads. The 1.5B writer's check of the time
    in Tokyo wrote the time it computed into tokyo.txt."""
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == "open":
            modes = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "mode")]
            for mode in modes:
                if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                    return ast.unparse(node.args[0]) if node.args else "a file"
        elif isinstance(func, ast.Attribute) and (
            name in _WRITING_METHODS
            or (name in _WRITING_FUNCTIONS and isinstance(func.value, ast.Name)
                and func.value.id in ("os", "shutil"))
        ):  # fmt: skip
            return f"through {ast.unparse(node)}"
    return ""


def plain(what: str) -> str:
    """A criterion as compared with another: lower case, single spaces."""
    return " ".join(what.lower().split())


def asserts(code: str) -> bool:
    """Whether the program can fail on purpose: an assert or a raise."""
    return any(isinstance(n, ast.Assert | ast.Raise) for n in ast.walk(ast.parse(code)))


def mentions(code: str, name: str) -> bool:
    """Whether the code uses the file: its name in a string the code works with (not only in
    an assertion's message or an f-string: "title.txt has 3 lines" read haiku.txt), or, for
    a module, an import of it."""
    module = name.removesuffix(".py").replace("/", ".") if name.endswith(".py") else None
    return any(name in text or text == module for text in used_strings(code))


def used_strings(code: str) -> set[str]:
    """The string constants and imported module names of a program, leaving out what only
    its messages say (assertion messages, f-strings) and values it compares for equality
    (`assert first_line == 'title.txt'` reads no title.txt: the 1.5B writer wrote that)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    said = _message_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and all(
            isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
        ):
            said.update(
                id(n) for n in [node.left, *node.comparators] if isinstance(n, ast.Constant)
            )
    used: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in said:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            used.add(node.value)
        elif isinstance(node, ast.Import):
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            used.add(node.module)
    return used


def _message_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes only a program's messages hold: assertion messages, f-strings."""
    said: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            said.update(id(n) for n in ast.walk(node.msg))
        elif isinstance(node, ast.JoinedStr):
            said.update(id(n) for n in ast.walk(node))
    return said
