"""Code actions (CodeAct, smolagents' CodeAgent): each step the model writes a short Python
program instead of one JSON command. The program runs in the sandbox (tools/bridge.py) with
every tool a function that the host runs through the same policy as a JSON command; what it
prints comes back as the step's result. The workspace is read-only to the program, so every
change it makes goes through a tool, where approval applies: a workspace file it opens for
writing with open() is handed to write_file (append_file) when closed, as the 1.5B model
writes files that way whatever the prompt says.

Policy, before the program runs: the tools it names that are not read-only are found in its
source; if any needs the person's approval (approval mode, or outside content in the context),
the whole program is shown and approved once. A risky tool the program reaches without naming
it (through getattr, say) is refused when called.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Sequence
from typing import Any

from autonoma.agent.action import Action, Thoughts, thoughts_schema
from autonoma.agent.pysource import mend_json_slips
from autonoma.tools import Tool
from autonoma.tools.bridge import ProgramResult, tool_functions

PROGRAM = "python"  # the command a code step is stored under; its argument is "code"
# Tools a program has no use for: it is Python already (run code, do arithmetic), and reads
# the workspace itself: `read_file` in a program is HELPERS' (the text alone, without the
# size line the tool puts first for a model reading it), and so is `list_files` (a list: the
# 1.5B model sorted the tool's text, one character a line, in folder_index, mend_1129).
NOT_IN_PROGRAMS = frozenset(
    {"execute_python", "execute_python_file", "calculator", "read_file", "list_files"}
)
HELPERS = """
# what the 1.5B model uses without importing (json_config: json.dump, NameError, ten steps)
import csv, json, math, os, re, statistics


def read_file(path: str) -> str:
    \"\"\"The text of a workspace file, exactly.\"\"\"
    with open(path, encoding="utf-8") as file:
        return file.read()


def list_files(directory: str = ".") -> list:
    \"\"\"The paths of the files under a workspace directory, as a sorted list of str
    relative to the workspace: list_files('notes') gives ['notes/a.md', 'notes/b.md'].\"\"\"
    import os as _os

    directory = "." if directory is None else directory
    if not isinstance(directory, str) or not _os.path.isdir(directory):
        raise ToolError(f"{directory} is not a directory in the workspace")
    found = []
    for top, dirs, files in _os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _UNLISTED]
        found += [_os.path.normpath(_os.path.join(top, f)) for f in files if not f.startswith(".")]
    return sorted(found)


_UNLISTED = {"__pycache__", "node_modules", "venv"}


def save_functions(path: str, *functions) -> str:
    \"\"\"Write functions this program defines to a .py file as source, with the program's
    imports and what they use of it: save_functions('slug.py', slugify).

    A function a program defines is gone when the program ends; a module keeps it.
    \"\"\"
    import ast as _ast, linecache as _lines, re as _re, textwrap as _textwrap

    # the functions earlier programs defined (carried_functions) come first, so that this
    # program's own def of a name is the one kept
    text = globals().get("_carried_source", "") + "".join(_lines.getlines("program.py"))
    tree = _ast.parse(text)
    kinds = (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)
    top = {}  # the program's top-level names: their def, class or assignment
    for node in tree.body:
        if isinstance(node, kinds):
            top[node.name] = node
        elif isinstance(node, _ast.Assign):
            top.update((t.id, node) for t in node.targets if isinstance(t, _ast.Name))
    wanted, sources = [], []
    for f in functions:
        if not isinstance(f, str):
            wanted.append(getattr(f, "__name__", repr(f)))
        elif f.isidentifier():
            wanted.append(f)
        else:  # the function's source given as text (palindrome_function, ten programs)
            named = _re.findall(r"^\\s*(?:async\\s+)?def\\s+(\\w+)\\s*\\(", f, _re.M)
            if named and all(isinstance(top.get(n), kinds) for n in named):
                wanted += named  # defined in this program too: its own def is saved
            else:
                try:
                    _ast.parse(f)
                except SyntaxError as error:
                    raise ToolError(
                        f"save_functions: the source given as text does not compile ({error}); "
                        "define the function with def in the program and pass it: "
                        "save_functions('slug.py', slugify)"
                    ) from None
                sources.append(_textwrap.dedent(f).strip())
    if not wanted and not sources:
        raise ToolError("save_functions(path, function, ...): name a function to save")
    for name in wanted:
        if not isinstance(top.get(name), kinds):
            raise ToolError(
                f"save_functions: {name} is not defined with def at this program's top level; "
                "define it there, then pass it"
            )
    kept, todo = set(), list(wanted)
    while todo:  # what the saved functions use of the program, in turn
        name = todo.pop()
        if name not in kept:
            kept.add(name)
            todo += [n.id for n in _ast.walk(top[name]) if isinstance(n, _ast.Name) and n.id in top]
    saved = {id(top[name]) for name in kept}
    lines = text.splitlines()
    parts = [_ast.get_source_segment(text, n) for n in tree.body
             if isinstance(n, (_ast.Import, _ast.ImportFrom))]
    for node in tree.body:
        if id(node) in saved:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            parts.append("\\n".join(lines[first - 1 : node.end_lineno]))
    write = globals().get("write_file")
    if write is None:
        raise ToolError(f"{path}: this run has no write_file, so files cannot be written")
    return write(path, "\\n\\n\\n".join(p for p in [*parts, *sources] if p) + "\\n")


_joins_noted = []


def _join_lines(parts):
    # '\\n'.join(...) in the program, made this (mend_joins): lines that kept their break
    # (readlines(), whole files read) are joined with one break, not two
    parts = list(parts)
    kept = sum(isinstance(p, str) and p.endswith("\\n") for p in parts)
    if all(isinstance(p, str) for p in parts) and kept >= max(2, len(parts) - 1):
        parts = [p[:-1] if p.endswith("\\n") else p for p in parts]
        if not _joins_noted:
            _joins_noted.append(True)
            print(
                "note: '\\\\n'.join() was given lines that still end in their line break "
                "(readlines() keeps it), so each was joined with one break, not two; "
                "open(name).read().splitlines() reads lines without their breaks"
            )
    return "\\n".join(parts)


import builtins as _builtins, io as _io_text, os as _os_path


class _HandedOver(_io_text.StringIO):
    # a workspace file opened for writing: its text goes to write_file (append_file) on close;
    # opened with '+', it begins as the file's text and is written whole if it changed
    def __init__(self, path, append, start=None):
        super().__init__(start or "")
        self._path, self._append, self._failed, self._start = path, append, False, start
        if append and start is not None:
            self.seek(0, 2)

    def __exit__(self, kind, value, trace):
        # the block failed: its file is not written (it was about to be emptied)
        self._failed = kind is not None
        return super().__exit__(kind, value, trace)

    def close(self):
        if self.closed:
            return
        text = self.getvalue()
        super().close()
        if self._failed or (self._start is not None and text == self._start):
            return
        name = "append_file" if self._append and self._start is None else "write_file"
        function = globals().get(name)
        if function is None:
            raise ToolError(f"{self._path}: this run has no {name}, so files cannot be written")
        function(self._path, text)


def _plain_name(name):
    return "".join(c for c in name.lower() if c not in "-_ ")


def _near_name(path):
    # the one file of the folder whose name differs only in '-', '_', spaces or case: the
    # 1.5B model wrote reports/2024_q3_final.txt for reports/2024-q3-final.txt in nine of
    # list_first's ten programs, told each time which file it meant (suite_1202)
    folder, name = _os_path.path.split(path)
    try:
        names = _os_path.listdir(folder or ".")
    except OSError:
        return None
    near = [n for n in names if _plain_name(n) == _plain_name(name) and n != name]
    return _os_path.path.join(folder, near[0]) if len(near) == 1 else None


def _open(file, mode="r", *args, **kwargs):
    if not isinstance(file, (str, _os_path.PathLike)):
        return _builtins.open(file, mode, *args, **kwargs)
    path = _os_path.fspath(file)
    inside = _os_path.path.abspath(path).startswith(_os_path.getcwd() + _os_path.sep)
    if not set(mode) & set("wax+"):
        try:
            return _builtins.open(file, mode, *args, **kwargs)
        except FileNotFoundError:
            near = _near_name(path) if inside else None
            if near is None:
                raise
            print(f"note: there is no {path}; read {near}, whose name differs only in "
                  "'-', '_', spaces or case: write its name as it is")
            return _builtins.open(near, mode, *args, **kwargs)
    if not inside:
        return _builtins.open(file, mode, *args, **kwargs)
    if "b" in mode:
        raise ToolError(
            f"open({path!r}, {mode!r}): a program writes workspace files as text only "
            "(mode 'w', 'a', 'r+'), handed to write_file when closed"
        )
    relative = _os_path.path.relpath(path)
    if "+" not in mode:
        return _HandedOver(relative, "a" in mode)
    # fix_typo (suite_1202): open('readme.txt', 'r+') refused in nine programs running
    start = ""
    if "w" not in mode:
        try:
            with _builtins.open(file, encoding="utf-8") as found:
                start = found.read()
        except FileNotFoundError:
            if "r" in mode:
                raise
    return _HandedOver(relative, "a" in mode, start)


open = _open


# A program empties a file and then appends to it: write_file refuses an empty text (the
# schema asks a JSON command for the content in the same call), so here the emptying waits
# for the program's first append to that file, which then writes it whole. combine_parts
# spent six of ten programs on `write_file('full.txt', '')` refused (suite_0acdcd7).
_emptied = []

if "write_file" in globals() and "append_file" in globals():
    _write_tool, _append_tool, _read_text = write_file, append_file, read_file

    def _named(path):  # './full.txt' and 'full.txt' are one file
        return _os_path.path.normpath(path) if isinstance(path, str) else path

    def write_file(path, text):
        name = _named(path)
        if name in _emptied:
            _emptied.remove(name)
        if text == "" and isinstance(path, str):
            _emptied.append(name)
            return f"{path} is emptied when this program appends to it"
        return _write_tool(path, text)

    def append_file(path, text):
        name = _named(path)
        if name not in _emptied or text == "":
            return _append_tool(path, text)
        _emptied.remove(name)
        # whole lines, as Workspace.append(on_new_line=True) begins an empty file with them
        lines = text[1:] if text.startswith("\\n") else text
        return _write_tool(path, lines if lines.endswith("\\n") else lines + "\\n")

    def read_file(path):
        return "" if _named(path) in _emptied else _read_text(path)

    def _empty_the_rest():
        # emptied and never appended to: the tool is asked for the empty file, and its
        # answer (a refusal) is what the program printed last
        for path in list(_emptied):
            try:
                _write_tool(path, "")
            except ToolError as error:
                print(f"write_file({path!r}, ''): {error}")

    import atexit as _atexit

    _atexit.register(_empty_the_rest)
"""
HELPER_TOOLS = {"save_functions": "write_file"}  # a helper that calls a tool, and the tool
WRITE_MODES = frozenset("wax+")
CODE_CHARS = 3000
_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_UNPACKED = re.compile(r"ValueError: (?:too many|not enough) values to unpack")
_SPLIT_AT_SPACES = re.compile(r"\.split\(\s*\)\s*\[")
_NOT_A_NUMBER = re.compile(
    r"ValueError: (?:could not convert string to float|invalid literal for int\(\) with base "
    r"\d+): '([^\W\d][\w ]*)'"
)
_SOURCE_IN_QUOTES = re.compile(r"""(?:['"]|\\n)\s*(?:def|class) \w+\s*[(:]""")
_NEWLINE_JOIN = re.compile(r"""(['"])\\n\1\.join\(""")
_SET_OF = re.compile(r"(?<![\w.])set\(\s*\w")  # set(lines), not set() nor a method's .set(
CALL_LINES = 8  # tool calls listed in a step's result, at most


def program_schema() -> dict[str, Any]:
    """The answer of a code step: the same thoughts as a JSON step, then the program."""
    return {
        "type": "object",
        "properties": {
            "thoughts": thoughts_schema(),
            "code": {"type": "string", "minLength": 1, "maxLength": CODE_CHARS},
        },
        "required": ["thoughts", "code"],
        "additionalProperties": False,
    }


def parse_program(data: dict[str, Any]) -> Action:
    return Action(
        thoughts=Thoughts.model_validate(data["thoughts"]),
        command=PROGRAM,
        arguments={"code": mend_json_slips(str(data["code"]))},
    )


def mend_joins(code: str) -> str:
    """The program as run: each `'\\n'.join(` made `_join_lines(`, which joins lines that
    kept their break with one break, not two (and says so). Lines read with readlines()
    keep their break, and the 1.5B model joined them with another: sort_ignore_case,
    reverse_lines and dedupe_lines ran out of steps so, and reverse_lines again with a note
    explaining it after every such write (code_1129_rest, mend_1129). Line numbers stay."""
    return _NEWLINE_JOIN.sub("_join_lines(", code)


def functions(tools: Sequence[Tool]) -> dict[str, tuple[str, str]]:
    """Each function a program has, helpers first: python name -> (the tool it calls, "" for
    a helper that calls none; one line for the prompt: signature and the first sentence of
    the description). A helper that writes is left out where writing is not offered."""
    found: dict[str, tuple[str, str]] = {}
    offered = {t.name for t in tools}
    for node in ast.parse(HELPERS + tool_functions(tools)).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        ret = node.body[-1]
        call = ret.value if isinstance(ret, ast.Return) else None
        tool = HELPER_TOOLS.get(node.name, "")
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
            tool = str(call.args[0].value)
        if node.name in HELPER_TOOLS and tool not in offered:
            continue  # a helper that writes is not listed to a run that cannot write
        params = re.sub(r"\s*=\s*DEFAULT", "=None", ast.unparse(node.args))
        doc = (ast.get_docstring(node) or "").split("\n\n")[0]
        doc = " ".join(doc.split())
        found[node.name] = (tool, f"{node.name}({params}): {doc}")
    return found


_ASKS_FOR_CODE = re.compile(r"\b(functions?|modules?|python|classes|class|def)\b|\.py\b", re.I)


def listed(names: dict[str, tuple[str, str]], task: str) -> tuple[list[str], list[str]]:
    """The prompt's lines for a program's functions: those every run has, and those of this
    task alone, said in the run's own part of the prompt so that every run's instructions
    begin alike for the prompt cache (listed third among the functions, save_functions made
    a run asking for Python share 150 tokens with the run before, not 750). save_functions
    only where the task asks for Python: listed for "In config.json, set debug to false", it
    was called with the settings dict to save them, in six of json_config's ten steps
    (code_head_1129)."""
    every = [line for name, (_, line) in names.items() if name != "save_functions"]
    own = [line for name, (_, line) in names.items() if name == "save_functions"]
    return every, own if _ASKS_FOR_CODE.search(task) else []


def named_tools(code: str, names: dict[str, tuple[str, str]]) -> set[str]:
    """The tools a program names (by its function names), as far as its source shows; an
    open() for writing names write_file and append_file, which its file is handed to."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    used = _names_used(tree)
    if any(_opens_to_write(n) for n in ast.walk(tree)):
        used |= {"write_file", "append_file"}
    return {names[n][0] for n in used if n in names and names[n][0]}


def _opens_to_write(node: ast.AST) -> bool:
    """A call of open() whose mode writes, or cannot be read from the source."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id != "open":
        return False
    modes = [k.value for k in node.keywords if k.arg == "mode"] + node.args[1:2]
    if not modes:
        return False
    mode = modes[0]
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & WRITE_MODES)
    return True


def report(result: ProgramResult, limit: int, code: str = "", not_found: str = "") -> str:
    """What the model reads after its program: the exit, what it printed, the error's end,
    the tool calls it made, and notes on slips seen before: a name not defined, a header read
    as a number, a file not found (`not_found`: what the workspace says of its name), source
    in quotes, doubled line breaks, functions kept nowhere."""
    box = result.sandbox
    lines = [f"exit code {box.exit_code}" + (f"; {box.stopped}" if box.stopped else "")]
    printed = box.stdout.rstrip()
    lines.append(f"printed:\n{printed}" if printed else "printed nothing")
    if box.stderr.strip():
        lines.append("error:\n" + _last_lines(box.stderr, 12))
        missing = _UNDEFINED.findall(box.stderr)
        if missing and missing[-1] in sys.stdlib_module_names:
            lines.append(f"note: {missing[-1]!r} is a module: import {missing[-1]} first.")
        elif missing:  # the 1.5B model used names its earlier programs set, and made up functions
            lines.append(
                f"note: {missing[-1]!r} is not defined in this program. Each program starts "
                "afresh: nothing is kept from earlier ones but the functions they defined "
                "with def, so set or read again what it needs; the functions it has are "
                "those listed at the start and those."
            )
        if not_found:  # list_first: reports/2024-q3-finale.txt, 2023-q3-finale.txt, ...
            lines.append(f"note: {not_found}")
        word = _NOT_A_NUMBER.findall(box.stderr)
        if word:  # csv_sum: ten steps of float('amount') on the header of sales.csv
            lines.append(
                f"note: {word[-1]!r} is a word, not a number: a table's first line is often "
                "its header, the names of its columns. Skip it, or read the rows with "
                "csv.DictReader(open(name)), which takes the first line as the names."
            )
        if "IndexError" in box.stderr and _SPLIT_AT_SPACES.search(code):
            lines.append(  # iso_dates: ten programs of '03/14/2024'.split()[2]
                "note: split() with nothing between its brackets splits at spaces only, so "
                "'03/14/2024'.split() is ['03/14/2024'], one piece: name the separator, as in "
                "split('/') or split(',')."
            )
        if _UNPACKED.search(box.stderr):
            lines.append(  # highest_score: `for name, score in lines` in four programs
                "note: unpacking takes the items of what it is given, and a line of a file is "
                "a text, whose items are its characters: split each line into its parts "
                "first, as in `name, score = line.strip().split(':')`."
            )
    if result.calls:
        shown = [_call_line(c.name, c.arguments, c.result.ok, c.result.output)
                 for c in result.calls[:CALL_LINES]]  # fmt: skip
        more = len(result.calls) - CALL_LINES
        lines.append("tool calls: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else ""))
    broken = "SyntaxError" in box.stderr or any(
        "not valid Python" in c.result.output for c in result.calls if c.result.ok
    )
    if broken and _SOURCE_IN_QUOTES.search(code):
        lines.append(  # slugify: f.write('def slugify(t): ... replace(r'[^a-z]', '-')')
            "note: this program holds Python source inside a quoted string, and the "
            "source's own quotes end that string. Write the function as code in the "
            "program instead, and keep it with save_functions('module.py', name)."
        )
    doubled = doubled_breaks(result, code)
    if doubled:  # code_1129_rest: three goals lost their steps to '\n'.join(f.readlines())
        lines.append(
            f"note: a blank line follows each line of {doubled}: lines from readlines() keep "
            "their line break, so '\\n'.join(lines) doubles it. Read lines with "
            "open(name).read().splitlines(), which drops the breaks, then join them with '\\n'."
        )
    overwritten = written_over(result)
    if overwritten:  # people_csv (suite_1202): a row at a time, each write_file over the last
        lines.append(
            f"note: write_file wrote {overwritten} more than once in this program, and each "
            "call replaces the whole file, so only the last text is kept. Build the whole "
            "text first and write it once, or add to the file with append_file."
        )
    spelt = fields_of_characters(result)
    if spelt:  # people_csv (suite_1202): 'Ana,is,31' then 'B,e,n, ,i,s, ,2,7'
        lines.append(
            f"note: {spelt} has rows whose fields are single characters: csv.writer's "
            "writerow() takes a list of fields, and given a text it makes each character a "
            "field. Pass it the row's parts, as in writer.writerow([name, age])."
        )
    if _SET_OF.search(code) and any(c.name == "write_file" and c.result.ok for c in result.calls):
        lines.append(  # dedupe_lines: list(set(lines)) for "keeping the original order", 8 steps
            "note: a set has no order, so lines that went through set() come out in any "
            "order; list(dict.fromkeys(lines)) drops repeats and keeps the first of each in order."
        )
    unsaved = defined_only_here(code, result)
    if unsaved:  # in the everyday suite, 3 of 5 function goals ended so: defined, never saved
        lines.append(
            f"note: {unsaved} was defined in this program only, and no file holds it: "
            "later programs have it, but the task's files do not. To keep it in a .py "
            "file, end the program with "
            f"save_functions('module.py', {unsaved}), which writes its source there."
        )
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n[cut]"


_NOT_FOUND = re.compile(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'")


def missing_path(stderr: str) -> str | None:
    """The path a failed program could not find, if that is how it failed."""
    found = _NOT_FOUND.findall(stderr)
    return found[-1] if found else None


def doubled_breaks(result: ProgramResult, code: str) -> str:
    """The first file a program that reads files wrote whole with a blank line (or more) after
    each of its lines ("a\\n\\nb\\n\\nc"), or "" (prose of its own may space its paragraphs).
    Lines read with readlines() end in their break and the 1.5B model joined them with
    another: the checks said "holds the lines ['paint', '', 'test', '', ...]" and it changed
    everything but the join for ten steps."""
    if "open(" not in code and "read_file(" not in code:
        return ""
    for call in result.calls:
        text = call.arguments.get("text")
        if call.name != "write_file" or not call.result.ok or not isinstance(text, str):
            continue
        # a blank line after each of its lines, or more than one where the program joined
        # files' lines with a break of its own too: combine_parts' 'alpha\n\nbeta\n\ngamma
        # \n\n\ndelta' (suite_1202) got no note, and the model lost its ten steps
        lines = text.strip("\n").split("\n")
        full = [n for n, line in enumerate(lines) if line.strip()]
        if len(full) >= 2 and all(not lines[n + 1].strip() for n in full[:-1]):
            return str(call.arguments.get("path", "the file"))
    return ""


def carried_functions(earlier: Sequence[str], code: str) -> str:
    """What to run before `code`: the functions earlier programs of the run defined with def
    at their top level that `code` uses and does not define, the functions those use in
    turn, and the earlier programs' imports; "" when it uses none. The 1.5B model defines a
    function in one program and saves or calls it in the next: parse_numbers_function and
    slugify_function (suite_1202) spent six of their ten programs on NameErrors so."""
    try:
        program = ast.parse(code)
    except (SyntaxError, ValueError):
        return ""
    used_by = _names_used(program)
    own = {n.name for n in program.body if isinstance(n, _DEFS)}
    defs: dict[str, tuple[str, frozenset[str]]] = {}
    imports: dict[str, None] = {}
    for source in earlier:
        found, imported = _top_level(source)
        defs.update(found)
        imports.update(dict.fromkeys(imported))
    todo, kept = [n for n in used_by if n in defs and n not in own], []
    while todo:
        name = todo.pop()
        if name not in kept:
            kept.append(name)
            todo += [n for n in defs[name][1] if n in defs and n not in own]
    if not kept:
        return ""
    return "\n".join([*imports, *(defs[n][0] for n in sorted(kept))]) + "\n"


@functools.lru_cache(maxsize=256)
def _top_level(source: str) -> tuple[dict[str, tuple[str, frozenset[str]]], tuple[str, ...]]:
    """A program's top-level functions (name: source and the names it uses) and imports,
    as it would run; read once, since every later step of the run asks again."""
    try:
        tree = ast.parse(mend_json_slips(source))
    except (SyntaxError, ValueError):
        return {}, ()
    defs = {
        node.name: (ast.unparse(node), frozenset(_names_used(node)))
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    imports = tuple(ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    return defs, imports


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _names_used(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def carried_helpers(carried: str) -> str:
    """Helpers' source that defines the carried functions in the program, or says why not."""
    if not carried:
        return ""
    return (
        f"\n_carried_source = {carried!r}\n"
        "try:\n"
        "    exec(compile(_carried_source, 'earlier programs', 'exec'))\n"
        "except Exception as _error:\n"
        "    print(f'note: the functions of earlier programs could not be defined again: "
        "{_error}')\n"
    )


def written_over(result: ProgramResult) -> str:
    """The first file a program wrote whole with write_file twice or more, or ""."""
    seen: set[str] = set()
    for call in result.calls:
        path = call.arguments.get("path")
        if call.name != "write_file" or not call.result.ok or not isinstance(path, str):
            continue
        if path in seen:
            return path
        seen.add(path)
    return ""


def fields_of_characters(result: ProgramResult) -> str:
    """The first .csv file a program wrote with a row of four or more fields, each a single
    character (a text given to csv.writer's writerow), or ""."""
    for call in result.calls:
        path, text = call.arguments.get("path"), call.arguments.get("text")
        if call.name not in ("write_file", "append_file") or not isinstance(text, str):
            continue
        if not isinstance(path, str) or not path.lower().endswith(".csv"):
            continue
        for row in text.splitlines():
            fields = row.split(",")
            if len(fields) >= 4 and all(len(f) <= 1 for f in fields):
                return path
    return ""


def defined_only_here(code: str, result: ProgramResult) -> str:
    """The first function a program defines at its top level when it wrote no file at all
    (one that wrote a file used its functions as helpers): the 1.5B model defined slugify in
    its program, printed a call of it and claimed slug.py done."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not defined:
        return ""
    wrote = any(c.name in ("write_file", "append_file") and c.result.ok for c in result.calls)
    return "" if wrote else defined[0]


def _call_line(name: str, arguments: dict[str, Any], ok: bool, output: str) -> str:
    args = ", ".join(f"{k}={_short(repr(v), 30)}" for k, v in arguments.items())
    first = _short(output.strip().splitlines()[0] if output.strip() else "", 160)
    return f"{name}({args}) {'ok' if ok else 'failed'}: {first}"


def _short(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _last_lines(text: str, count: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-count:])
