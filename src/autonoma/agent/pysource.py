"""Python written by a model inside a JSON string, mended where the JSON escaping slipped.

In JSON, "\n" is a newline. A small model writing `text.split('\n')` as a JSON string value
therefore hands over a program whose string literal is cut in two by a real line break, and
Python refuses it ("unterminated string literal"). No line of Python can hold a real line break
inside a one-line string literal, so where the compiler says exactly that, the break is put back
as the two characters the model meant, and nothing else is touched.

A small model also writes prose in single quotes: `task_complete('the sum of sales.csv's
amount column')` (three steps in a row of one everyday run), or a check's words quoted inside
a quoted argument: `task_complete('colors.txt holds 'red', 'green' and 'blue'')`. Where a line
does not compile, an apostrophe between two letters on it is escaped, or the one argument of
`task_complete` or `print` is put in double quotes, if that makes the line whole.

Under a JSON grammar a raw line break cannot be written inside a string at all, and the 1.5B
model then writes the next line's indentation without the break before it: `for line in
f:    parts = line.split('/')    year = parts[2]` (three steps of one everyday run, each a
SyntaxError), or nothing at all: `...date_str[-2:]])dates = read_file(...)`. Where a line
does not compile, a gap of four spaces or more before a name, or a name right after a closing
bracket (outside strings), is taken for a lost line break, if putting it back makes the line
whole.

A header's block is sometimes not indented at all: `with open('colors.txt', 'w') as f:` and
then `f.write('red\\n')` at the header's own depth (eleven programs of three_lines in the
everyday runs, each an IndentationError, and fizzbuzz's file written the same way). Where the
compiler expects an indented block, the line it names is indented under its header, and so
is each line straight after it that uses a name the header binds (`as f`, `for line in`),
since those can only mean the block; the first line that does not is left where it was.

A block is also written on its header's line when it is itself a compound statement: `with
open('index.txt', 'w') as f: for path in file_paths: f.write(path + '\\n')` (seven programs of
one folder_index run, each a SyntaxError the model could not see). Python takes a simple
statement after a header's colon, not a compound one; where a line does not compile, it is
broken after a header's colon (outside brackets and strings) that a compound statement's
keyword follows, the rest indented under it, if that makes the line whole.

A clause is written on the line of the statement it follows: `if a: f() elif b: g()`; it is
put on a line of its own at the line's depth. And one line can hold two slips (`text =
f.read() for line in text: if line: g(line)`, six programs of one chained-instructions run): a
statement's keyword right after a closing bracket, outside all brackets, is taken for a lost
line break too, and a mend that leaves the line still broken is kept if one further round of
mends makes it whole.

A call's opening bracket is sometimes left out, the name then a space before its arguments:
`with open 'part3.txt') as f:` (five programs of one combine_parts run, each a SyntaxError the
model wrote again); and a keyword is joined to the next name by a dot: `with.open(...)`. Where
the compiler calls a `)` unmatched, the bracket is put back after a name that a space and an
argument follow; where a line does not compile, a dot after a keyword becomes a space; each
only if that makes the line whole. A keyword glued to the function it calls (`for s
inopen('part2.txt')`) is parted where the glued word is defined nowhere in the program.

The JSON around the program slips in too: a program ending in `write_file(...)}` carries the
object's closing brace. A closing bracket the compiler calls unmatched, followed by nothing but
closing brackets to the program's end, is dropped, and so is a brace that ends a line inside
the program, where that makes the line whole.
"""

from __future__ import annotations

import ast
import builtins
import io
import itertools
import keyword
import re
import tokenize
from collections.abc import Collection, Iterable, Iterator

UNTERMINATED = ("unterminated string literal", "unterminated f-string", "EOL while scanning")


def mend_json_slips(code: str, most: int = 50) -> str:
    """`code` with each line break that cuts a one-line string literal written back as `\\n`
    and a stray closing bracket at its end dropped; `code` unchanged when it compiles, or fails
    for another reason."""
    for _ in range(most):
        try:
            compile(code, "program.py", "exec")
            return code
        except SyntaxError as error:
            message, line = error.msg or "", error.lineno or 0
            lines = code.split("\n")
            ending = code.rstrip().split("\n")
            at = (error.offset or 1) - 1
            rest = ending[-1][at:]
            if message.startswith("unmatched ')'") and (mended := _open_call(lines, line)):
                code = mended
                continue
            if (mended := _keyword_dot(lines, line)) is not None:
                code = mended
                continue
            if (mended := _glued_keyword(lines, line)) is not None:
                code = mended
                continue
            if message.startswith("unmatched '") and line == len(ending) and _closers(rest):
                code = "\n".join([*ending[:-1], ending[-1][:at] + rest[1:]])
                continue
            if message.startswith("unmatched '") and (mended := _stray_closer(lines, line, at)):
                code = mended
                continue
            if (mended := _escape_apostrophes(lines, line)) is not None:
                code = mended
                continue
            if (mended := _restore_line_breaks(lines, line)) is not None:
                code = mended
                continue
            if (mended := _compound_after_colon(lines, line)) is not None:
                code = mended
                continue
            if (mended := _clause_after_statement(lines, line)) is not None:
                code = mended
                continue
            if (
                message.startswith("expected an indented block")
                and (mended := _indent_block(lines, line)) is not None
            ):
                code = mended
                continue
            if not message.startswith(UNTERMINATED) or not 0 < line < len(lines):
                return code
            lines[line - 1 : line + 1] = [lines[line - 1] + "\\n" + lines[line]]
            code = "\n".join(lines)
    return code


def _stray_closer(lines: list[str], line: int, at: int) -> str | None:
    """The program without the unmatched closing brace that ends line `line` (column `at`),
    if it then compiles up to past that line: `write_file('best.txt', name)}` inside a loop,
    the JSON object's brace on a line that is not the last (three of highest_score's programs
    in suite_1202, each a SyntaxError)."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    # a `)` or `]` is left for the model: it may be a call's or a list's, not the JSON's
    if not (0 <= at < len(text)) or text[at] != "}" or text[at + 1 :].strip():
        return None
    return _first_whole(lines, line, [text[:at].rstrip() or text[:at]])


def _escape_apostrophes(lines: list[str], line: int) -> str | None:
    """The program with an apostrophe between letters on line `line` escaped (each alone,
    from the left, then all), if the program then compiles up to past that line; else None."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    spots = [m.start() for m in _APOSTROPHE.finditer(text)]
    tries = [text[:at] + "\\" + text[at:] for at in spots]
    if len(spots) > 1:
        tries.append(_APOSTROPHE.sub(r"\\'", text))
    call = _QUOTED_ARGUMENT.fullmatch(text)
    if call and '"' not in call["body"]:  # task_complete('holds 'red', 'green' and 'blue'')
        tries.append(f'{call["head"]}"{call["body"]}"{call["tail"]}')
    return _first_whole(lines, line, tries)


def _open_call(lines: list[str], line: int) -> str | None:
    """The program with a call's left-out opening bracket put back on line `line` (after the
    first name, from the left, that a space and an argument follow and after which the
    program compiles up to past that line: `open 'a.txt')`); else None."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    tries = [
        text[: m.end(1)] + "(" + text[m.end() :]
        for m in _SPACED_NAME.finditer(text)
        if not keyword.iskeyword(m[1])
    ]
    return _first_whole(lines, line, tries)


def _keyword_dot(lines: list[str], line: int) -> str | None:
    """The program with each keyword joined by a dot to the name after it on line `line`
    (`with.open(...)`, outside strings) parted by a space, if it then compiles up to past
    that line."""
    if (found := _line_tokens(lines, line)) is None:
        return None
    text, tokens = found
    dots = [
        dot.start[1]
        for word, dot, name in zip(tokens, tokens[1:], tokens[2:], strict=False)
        if word.type == tokenize.NAME
        and keyword.iskeyword(word.string)
        and dot.string == "."
        and word.end == dot.start
        and dot.end == name.start
        and name.type == tokenize.NAME
    ]
    if not dots:
        return None
    parted = "".join(" " if n in dots else c for n, c in enumerate(text))
    return _first_whole(lines, line, [parted])


# keywords that come before a call in an expression or a statement, longest first so that
# `notin` is not read as `not` + `in`
_BEFORE_CALLS = sorted(
    ("in", "not", "and", "or", "is", "if", "else", "for", "return", "yield", "await", "assert"),
    key=len,
    reverse=True,
)
_CALLED = frozenset(dir(builtins)) | {
    "read_file",
    "write_file",
    "append_file",
    "list_files",
    "task_complete",
}


def _glued_keyword(lines: list[str], line: int) -> str | None:
    """The program with a keyword glued to the function it calls parted by a space on line
    `line` (`for line inopen('part2.txt')`: four programs of one combine_parts run, each a
    SyntaxError the 1.5B model wrote again), where the glued word is called, is defined
    nowhere in the program, and is a keyword and a builtin or tool function run together; if
    the program then compiles up to past that line."""
    if (found := _line_tokens(lines, line)) is None:
        return None
    text, tokens = found
    defined = set(re.findall(r"\b(?:def|class)\s+(\w+)|(\w+)\s*=(?!=)", "\n".join(lines)))
    names = {n for pair in defined for n in pair if n}
    spots = []
    for word, after in itertools.pairwise(tokens):
        if word.type != tokenize.NAME or after.string != "(" or word.string in names:
            continue
        if word.string in _CALLED or keyword.iskeyword(word.string):
            continue
        head = next((k for k in _BEFORE_CALLS if word.string.startswith(k)), None)
        if head and word.string[len(head) :] in _CALLED:
            spots.append(word.start[1] + len(head))
    if not spots:
        return None
    parted = "".join(" " + c if n in spots else c for n, c in enumerate(text))
    return _first_whole(lines, line, [parted])


def _line_tokens(lines: list[str], line: int) -> tuple[str, list[tokenize.TokenInfo]] | None:
    """Line `line`'s text and its tokens; None when there is no such line or it cannot be
    tokenized on its own."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    try:
        return text, list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None


_SPACED_NAME = re.compile(r"\b([A-Za-z_]\w*)[ \t]+(?=['\"\w])")


def _indent_block(lines: list[str], line: int) -> str | None:
    """The program with line `line`, left at its header's depth or less, indented under the
    header with the lines after it at that same depth that use a name the header binds; None
    when the line is not left so (a header with an empty block, or one at the program's end)."""
    if not 1 < line <= len(lines) or not lines[line - 1].strip():
        return None
    header = next((n for n in range(line - 2, -1, -1) if lines[n].strip()), None)
    if header is None or not lines[header].rstrip().endswith(":"):
        return None
    depth, left = _depth(lines[header]), _depth(lines[line - 1])
    if left > depth:
        return None
    bound = _BINDS.findall(lines[header])
    names = {n for group in bound for n in re.findall(r"\w+", "".join(group))}
    end = line
    while end < len(lines) and _depth(lines[end]) == left and lines[end].strip() and names:
        if not any(re.search(rf"\b{re.escape(n)}\b", lines[end]) for n in names):
            break
        end += 1
    inside = " " * (depth + 4)
    block = [inside + text.lstrip(" \t") for text in lines[line - 1 : end]]
    return "\n".join([*lines[: line - 1], *block, *lines[end:]])


_COMPOUND = {"for", "if", "with", "while", "try", "async"}


def _compound_after_colon(lines: list[str], line: int) -> str | None:
    """The program with line `line` broken after a header's colon that a compound
    statement's keyword follows (`with ... as f: for x in y: f.write(x)`), the rest indented
    under the header, if the program then compiles up to past those lines; else None."""
    if (found := _line_tokens(lines, line)) is None:
        return None
    text, tokens = found
    own, cuts = _depth(text), []
    for token, after, depth in _pairs_at_depth(tokens):
        if (
            depth == 0
            and token.string == ":"
            and after.type == tokenize.NAME
            and after.string in _COMPOUND
        ):
            cuts.append((token.end[1], after.start[1]))
    if not cuts:
        return None
    pieces = [text[: cuts[0][0]]]
    for n, (_, start) in enumerate(cuts):
        end = cuts[n + 1][0] if n + 1 < len(cuts) else len(text)
        pieces.append(" " * (own + 4 * (n + 1)) + text[start:end])
    return _first_whole(lines, line, ["\n".join(pieces)])


_CLAUSES = {"elif", "else", "except", "finally"}


def _clause_after_statement(lines: list[str], line: int) -> str | None:
    """The program with line `line` broken before an `elif`, `else`, `except` or `finally`
    that follows a statement on a header's line (`if a: f() elif b: g()`, seen in the
    chained-instructions runs), the clause at the line's own depth, if the program then
    compiles up to past those lines; else None."""
    if (found := _line_tokens(lines, line)) is None:
        return None
    text, tokens = found
    cuts = []
    for previous, token, depth in _pairs_at_depth(tokens):
        clause = token.type == tokenize.NAME and token.string in _CLAUSES
        if depth == 0 and clause and previous.string != ":" and previous.start[0] == 1:
            cuts.append(token.start[1])
    if not cuts:
        return None
    own = " " * _depth(text)
    starts = [0, *cuts]
    pieces = [text[a:b].rstrip() for a, b in zip(starts, [*cuts, len(text)], strict=True)]
    return _first_whole(lines, line, ["\n".join([pieces[0], *(own + p for p in pieces[1:])])])


def _pairs_at_depth(
    tokens: list[tokenize.TokenInfo],
) -> Iterator[tuple[tokenize.TokenInfo, tokenize.TokenInfo, int]]:
    """Each two neighbouring tokens, with how many brackets are open after the first."""
    depth = 0
    for first, second in itertools.pairwise(tokens):
        if first.type == tokenize.OP and first.string in "([{":
            depth += 1
        elif first.type == tokenize.OP and first.string in ")]}":
            depth -= 1
        yield first, second, depth


def _depth(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


# what a header binds: `with ... as f`, `as (a, b)`, `for name, value in`
_BINDS = re.compile(r"\bas\s+(\w+)|\bfor\s+([\w\s,()]+?)\s+in\b")


_nested = False  # inside `_first_whole`'s one further round of mends


def _first_whole(lines: list[str], line: int, rewrites: Iterable[str]) -> str | None:
    """The program with line `line` replaced by the first of `rewrites` (each one or more
    lines) after which it compiles up to past the rewritten lines, by itself or after one
    further round of mends (a line with two slips: `f.read() for x in y: if x: g(x)` needs a
    line break put back, then a block put under its header); else None."""
    global _nested
    for rewrite in rewrites:
        code = "\n".join([*lines[: line - 1], rewrite, *lines[line:]])
        last = line + rewrite.count("\n")
        try:
            compile(code, "program.py", "exec")
        except SyntaxError as error:
            if (error.lineno or 0) > last:
                return code
            if _nested:
                continue
            _nested = True
            try:
                mended = mend_json_slips(code, most=10)
            finally:
                _nested = False
            if _compiles_past(mended, last + mended.count("\n") - code.count("\n")):
                return mended
            continue
        return code
    return None


def _compiles_past(code: str, line: int) -> bool:
    try:
        compile(code, "program.py", "exec")
    except SyntaxError as error:
        return (error.lineno or 0) > line
    return True


def _restore_line_breaks(lines: list[str], line: int) -> str | None:
    """The program with each lost line break on line `line` put back (`_lost_breaks`),
    indented as far as the gap was wide, or that far beyond the line's own indentation, or
    as far as the line itself, if the program then compiles up to past those lines; else
    None."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    gaps = _lost_breaks(text)
    if not gaps:
        return None
    own = len(text) - len(text.lstrip(" "))
    widths = [end - start if end - start >= 4 else own for start, end in gaps]
    tries = [widths, [own + w if w != own else w for w in widths], [own] * len(gaps)]
    starts = [0, *(end for _, end in gaps)]
    ends = [*(start for start, _ in gaps), len(text)]
    pieces = [text[a:b] for a, b in zip(starts, ends, strict=True)]

    def broken(indents: tuple[int, ...]) -> str:
        rest = zip(indents, pieces[1:], strict=True)
        return pieces[0] + "".join(f"\n{' ' * w}{p}" for w, p in rest)

    return _first_whole(lines, line, map(broken, dict.fromkeys(tuple(t) for t in tries)))


# names that go on an expression after a closing bracket: f(x)if y else z, [f(x)for x in y]
_GOES_ON = {"if", "else", "for", "in", "is", "and", "or", "not", "as", "async", "from"}


def _lost_breaks(text: str) -> list[tuple[int, int]]:
    """Where on a line of Python a line break seems lost before a name: after four spaces or
    more, or right after a closing bracket (`...])dates = ...`). The columns each gap starts
    and ends at; none inside a string, none before a comment."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    skip = {tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.NL}
    gaps = []
    for before, token, depth in _pairs_at_depth(tokens):
        if not (
            token.type == tokenize.NAME
            and before.type not in skip
            and before.end[0] == token.start[0] == 1
        ):
            continue
        closed = before.string in (")", "]", "}")
        goes_on = token.string in _GOES_ON and not (depth == 0 and token.string in _HEADERS)
        if token.start[1] - before.end[1] >= 4 or (closed and not goes_on):
            gaps.append((before.end[1], token.start[1]))
    return gaps


# a statement's keyword after a closing bracket outside all brackets: `f.read() for line in
# text:` holds no comprehension there, so a line break was lost (each mend is kept only if the
# program then compiles, so `x = f(y) if z else w` is never broken: it compiles)
_HEADERS = {"for", "if", "while", "with"}


_APOSTROPHE = re.compile(r"(?<=[^\W\d_])'(?=[^\W\d_])")
# a line that is one call, of a function taking one text, of a single-quoted argument with
# quotes inside it (not write_file('a.txt', 'b'): its two texts would be made one)
_QUOTED_ARGUMENT = re.compile(
    r"(?P<head>\s*(?:task_complete|print)\()'(?P<body>.*)'(?P<tail>\)\s*)"
)


def _closers(text: str) -> bool:
    return bool(text) and set(text) <= set(")]}")


def read_bare_files(code: str, files: Collection[str]) -> str:
    """`code` with each of `files` written as a bare name (`len(quote.txt.split())`, which
    raises NameError: name 'quote') made Python: its text, `open('quote.txt').read()`, or the
    name as a string where it is already opened (`open(quote.txt)`). The 1.5B check writer
    wrote it so for count_words (code_full_1129), and with no check left the run's right
    count was judged against a count the model made in its head. `code` unchanged when it
    names none of `files` bare, or does not parse."""
    return _BareFiles(set(files)).mended(code)


class _FileReads(ast.NodeTransformer):
    """A rewrite of how a program reads some files; `found` once it changed one."""

    def __init__(self, files: set[str]) -> None:
        self.files = files
        self.found = False

    def mended(self, code: str) -> str:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return code
        tree = self.visit(tree)
        return ast.unparse(tree) if self.found else code


class _BareFiles(_FileReads):
    def _name(self, node: ast.AST) -> str | None:
        """The file `node` spells: `quote.txt` (an attribute), `reports/2024-q3.txt` (a
        division and subtractions, spaced by unparse)."""
        if not isinstance(node, ast.Attribute | ast.BinOp):
            return None
        text = ast.unparse(node).replace(" ", "")
        return text if text in self.files else None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        opens = isinstance(node.func, ast.Name) and node.func.id in ("open", "before")
        if opens and node.args and (name := self._name(node.args[0])):
            self.found = True
            node.args[0] = ast.Constant(name)
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        return self._read(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return self._read(node)

    def _read(self, node: ast.Attribute | ast.BinOp) -> ast.AST:
        name = self._name(node)
        if name is None:
            return self.generic_visit(node)
        self.found = True
        opened = ast.Call(ast.Name("open", ast.Load()), [ast.Constant(name)], [])
        return ast.Call(ast.Attribute(opened, "read", ast.Load()), [], [])


def read_as_found(code: str, files: Collection[str]) -> str:
    """`code` with each `open(name).read()` (or `.readlines()`) of `files`, the files the run
    found, made `before(name)`: an expected value is what the inputs as given make. Read now,
    an input the task removes is gone: rename_file's "final.txt holds the same text as
    draft.txt" expected `open('draft.txt').read()`, which raised once draft.txt was renamed, and
    held the right work out for ten steps (part_1202); one the task changes in place is read
    changed. `code` unchanged when it reads none of them so, or does not parse."""
    return _AsFound(set(files)).mended(code)


class _AsFound(_FileReads):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        method = node.func
        if not (
            isinstance(method, ast.Attribute)
            and method.attr in ("read", "readlines")
            and not node.args
            and not node.keywords
            and isinstance(method.value, ast.Call)
        ):
            return node
        name = self._read(method.value)
        if name is None:
            return node
        self.found = True
        text = ast.Call(ast.Name("before", ast.Load()), [ast.Constant(name)], [])
        if method.attr == "read":
            return text
        return ast.Call(ast.Attribute(text, "splitlines", ast.Load()), [ast.Constant(True)], [])

    def _read(self, call: ast.Call) -> str | None:
        """The found file `call` opens for reading text, or None."""
        if not (isinstance(call.func, ast.Name) and call.func.id == "open" and call.args):
            return None
        path = call.args[0]
        if not (isinstance(path, ast.Constant) and path.value in self.files):
            return None
        modes = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "mode")]
        if any(not (isinstance(m, ast.Constant) and m.value in ("r", "rt")) for m in modes):
            return None
        return str(path.value)
