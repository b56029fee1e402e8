"""Mending what JSON escaping did to a model's Python: line breaks in literals, a stray brace."""

from __future__ import annotations

import pytest

from autonoma.agent.pysource import mend_json_slips, read_as_found, read_bare_files


def test_a_line_break_inside_a_literal_is_written_back_as_an_escape() -> None:
    broken = "lines = open('a.txt').read().split('\n')\nprint('\n'.join(lines))"
    mended = mend_json_slips(broken)
    assert mended == "lines = open('a.txt').read().split('\\n')\nprint('\\n'.join(lines))"
    compile(mended, "program.py", "exec")


def test_an_f_string_and_two_breaks_in_one_literal() -> None:
    mended = mend_json_slips("x = 1\nprint(f'{x}\n\nend')")
    assert mended == "x = 1\nprint(f'{x}\\n\\nend')"


def test_good_code_and_other_errors_are_left_alone() -> None:
    good = 'text = """two\nlines"""\nprint(text)'
    assert mend_json_slips(good) == good
    other = "print((1)\nx = 2"
    assert mend_json_slips(other) == other
    assert mend_json_slips("s = 'never closed") == "s = 'never closed"


def test_the_json_objects_closing_brace_at_the_programs_end_is_dropped() -> None:
    program = "lines = sorted(open('a.txt').read().split('\n'))\nwrite_file('b.txt', lines)}"
    assert mend_json_slips(program) == (
        "lines = sorted(open('a.txt').read().split('\\n'))\nwrite_file('b.txt', lines)"
    )
    assert mend_json_slips("print(1)}}\n") == "print(1)"
    inside = "x = [1, 2]]\nprint(x)"  # unmatched, but not the program's end: left for the model
    assert mend_json_slips(inside) == inside


def test_an_apostrophe_in_prose_inside_single_quotes_is_escaped() -> None:
    # an everyday run wrote this three steps in a row, each a SyntaxError
    said = "task_complete('total.txt holds the sum of sales.csv's amount column')"
    assert mend_json_slips(f"total = 3\n{said}") == (
        "total = 3\ntask_complete('total.txt holds the sum of sales.csv\\'s amount column')"
    )
    assert mend_json_slips("print('Bob's and Ann's')") == "print('Bob\\'s and Ann\\'s')"
    # one escape where one is enough; the rest of the line is not touched
    assert mend_json_slips("print('don't' + 'x'if 1 else'y')") == (
        "print('don\\'t' + 'x'if 1 else'y')"
    )
    # and a line break cut into another literal: both mended
    mended = mend_json_slips("print('it's here')\nx = 'a\nb'")
    assert mended == "print('it\\'s here')\nx = 'a\\nb'"
    compile(mended, "program.py", "exec")
    # only where it makes the line compile; code with no apostrophe in prose is left alone
    assert mend_json_slips("x = d['key'] +") == "x = d['key'] +"


def test_a_finishing_reason_quoting_words_in_single_quotes_is_put_in_double_quotes() -> None:
    said = "task_complete('colors.txt holds the lines 'red', 'green', and 'blue' one per line')"
    assert mend_json_slips(f"x = 1\n{said}") == (
        "x = 1\ntask_complete(\"colors.txt holds the lines 'red', 'green', and 'blue' one per line\")"
    )
    # two texts of another call are not made one
    two = "write_file('c.txt', 'holds 'red' and 'blue'')"
    assert mend_json_slips(two) == two


def test_line_breaks_a_json_grammar_took_are_put_back() -> None:
    # three steps of one everyday run (iso_dates, 2026-11-28): the indentation was written,
    # the break before it was not
    run_together = (
        "with open('iso.txt', 'w') as out:    for line in open('dates.txt'):        "
        "parts = line.split('/')        year = parts[2]"
    )
    assert mend_json_slips(run_together) == (
        "with open('iso.txt', 'w') as out:\n    for line in open('dates.txt'):\n"
        "        parts = line.split('/')\n        year = parts[2]"
    )
    # no gap at all after a closing bracket, one space between statements
    glued = "def day(d):    return d[-2:]dates = read_file('dates.txt').split('\\n')"
    assert mend_json_slips(glued) == (
        "def day(d):\n    return d[-2:]\ndates = read_file('dates.txt').split('\\n')"
    )
    spaced = "with open('s.csv') as f: rows = f.readlines() total = len(rows)"
    assert (
        mend_json_slips(spaced)
        == "with open('s.csv') as f: rows = f.readlines()\ntotal = len(rows)"
    )
    # four spaces between statements at the top level: a break, not an indentation
    assert mend_json_slips("x = 'a    b'    y = 2") == "x = 'a    b'\ny = 2"


def test_gaps_that_are_python_are_left_alone() -> None:
    for good in [
        "def slugify(t):    return t.lower()\nprint(slugify('A'))",  # a one-line body
        "x = 1    # a comment",
        "y = [f(x)for x in z]\nw = f(x)if y else z",
        "print('a    b')",
    ]:
        assert mend_json_slips(good) == good
    # nothing it can make whole: unchanged
    assert mend_json_slips("x = (1,\n     2)    y = 3") == "x = (1,\n     2)    y = 3"
    assert mend_json_slips("x = 1    y z = 2") == "x = 1    y z = 2"


def test_a_block_left_at_its_headers_depth_is_indented_under_it() -> None:
    # three_lines, eleven programs in the everyday runs: an IndentationError each
    program = (
        "with open('colors.txt', 'w') as f:\nf.write('red\\n')\nf.write('green\\n')\nprint('done')"
    )
    assert mend_json_slips(program) == (
        "with open('colors.txt', 'w') as f:\n    f.write('red\\n')\n    f.write('green\\n')\n"
        "print('done')"
    )
    # a loop's names bind its block; the first line using none of them is left after it
    loop = "total = 0\nfor line, n in pairs:\ntotal += n\nprint(line)\nprint(total)"
    assert mend_json_slips(loop) == (
        "total = 0\nfor line, n in pairs:\n    total += n\n    print(line)\nprint(total)"
    )
    # a header binding nothing: its one line, as the compiler asks
    assert mend_json_slips("if x:\ny = 1\nz = 2") == "if x:\n    y = 1\nz = 2"
    # nested: the inner header's block too
    nested = "def f(a):\nfor b in a:\nprint(b)"
    mended = mend_json_slips(nested)
    compile(mended, "program.py", "exec")
    assert mended.splitlines()[-1].startswith("        print")


def test_a_header_at_the_end_or_with_an_empty_block_is_left_for_the_model() -> None:
    assert mend_json_slips("x = 1\nfor a in b:") == "x = 1\nfor a in b:"
    assert mend_json_slips("if x:\n\n") == "if x:\n\n"


@pytest.mark.parametrize(
    ("code", "mended"),
    [
        ("len(quote.txt.split())", "len(open('quote.txt').read().split())"),
        ("len(open(quote.txt).read().split())", "len(open('quote.txt').read().split())"),
        ("before(quote.txt)", "before('quote.txt')"),
        ("reports/2024-q3-final.txt", "open('reports/2024-q3-final.txt').read()"),  # list_first
        ("open(reports/2024-q3-final.txt)", "open('reports/2024-q3-final.txt')"),
        ("a / b", "a / b"),
        ("x = data.json", "x = data.json"),  # not a file of the workspace: left to fail
        ("print('quote.txt')", "print('quote.txt')"),  # a string already
        ("len(quote.txt.split(", "len(quote.txt.split("),  # does not parse: left alone
    ],
)
def test_a_file_named_bare_is_read(code: str, mended: str) -> None:
    assert read_bare_files(code, ["quote.txt", "reports/2024-q3-final.txt"]) == mended


@pytest.mark.parametrize(
    ("code", "mended"),
    [
        ("open('draft.txt').read()", "before('draft.txt')"),
        ("len(open('draft.txt', 'r').read().split())", "len(before('draft.txt').split())"),
        ("open('draft.txt', encoding='utf-8').readlines()", "before('draft.txt').splitlines(True)"),
        # written, or a file the run did not find, or not read whole: left as it is
        ("open('draft.txt', 'w').read()", "open('draft.txt', 'w').read()"),
        ("open('final.txt').read()", "open('final.txt').read()"),
        ("open('draft.txt').readline()", "open('draft.txt').readline()"),
        ("open('draft.txt').read(", "open('draft.txt').read("),  # does not parse
    ],
)
def test_an_input_read_for_an_expected_value_is_read_as_found(code: str, mended: str) -> None:
    assert read_as_found(code, ["draft.txt"]) == mended


def test_a_compound_statement_on_its_headers_line_is_put_under_it() -> None:
    # folder_index, seven programs of one everyday run
    code = (
        "file_paths = ['b.md', 'a.md']\nfile_paths.sort()\n"
        "with open(out, 'w') as f: for path in file_paths: f.write(path + '\\n')\n"
        "print('done')"
    )
    mended = mend_json_slips(code)
    assert mended == (
        "file_paths = ['b.md', 'a.md']\nfile_paths.sort()\n"
        "with open(out, 'w') as f:\n    for path in file_paths: f.write(path + '\\n')\n"
        "print('done')"
    )
    nested = "for row in rows: if row: for x in row: print(x)"
    assert mend_json_slips(nested) == (
        "for row in rows:\n    if row:\n        for x in row: print(x)"
    )
    # a colon inside brackets or a string is not a header's, and good code is left alone
    for fine in ("d = {'a': 1}\nfor k in d: print(k)", "x = y[1:]\nif x: print('a: for')"):
        assert mend_json_slips(fine) == fine
    hopeless = "with open(out) as f: for: pass"
    assert mend_json_slips(hopeless) == hopeless


def test_a_calls_left_out_bracket_and_a_keyword_dotted_to_a_name_are_put_right() -> None:
    # combine_parts: five programs with this line, each refused as a SyntaxError
    broken = "with open 'part3.txt') as f: lines3 = f.readlines()\nprint(len lines3))"
    assert mend_json_slips(broken) == (
        "with open('part3.txt') as f: lines3 = f.readlines()\nprint(len(lines3))"
    )
    assert mend_json_slips("with.open('in.txt') as f: n = 1") == "with open('in.txt') as f: n = 1"
    assert mend_json_slips("for.line in f.readlines(): pass") == "for line in f.readlines(): pass"
    # a dot after a keyword inside a string, or between names, is not touched
    for whole in ["open('data/in.txt')", "x = os.path.join('a', 'b')", "print('for.each')"]:
        assert mend_json_slips(whole) == whole
    # an unmatched bracket no left-out opening explains is left for the model to see
    assert mend_json_slips("x = (1 + 2))\ny = 3") == "x = (1 + 2))\ny = 3"


def test_two_slips_on_one_line_are_both_mended() -> None:
    # chained_instructions, six programs of one everyday run, each a SyntaxError
    code = (
        "with open('step1.txt') as f: text = f.read() "
        "for line in text.split('\\n'): if line: print(line)"
    )
    assert mend_json_slips(code) == (
        "with open('step1.txt') as f: text = f.read()\n"
        "for line in text.split('\\n'):\n    if line: print(line)"
    )
    # a generator's `for`, a conditional expression's `if`: inside brackets, or compiling
    for fine in ("total = sum(len(x) for x in rows)", "y = f(x) if x else g(x)"):
        assert mend_json_slips(fine) == fine


def test_a_clause_after_a_statement_on_a_headers_line_goes_on_its_own_line() -> None:
    code = (
        "for line in lines: if line.startswith('Write'): write_file('a.txt', 'apple') "
        "elif line.startswith('Then'): print(line) else: print('?')"
    )
    assert mend_json_slips(code) == (
        "for line in lines:\n"
        "    if line.startswith('Write'): write_file('a.txt', 'apple')\n"
        "    elif line.startswith('Then'): print(line)\n"
        "    else: print('?')"
    )
    tried = "try: x = int(s) except ValueError: x = 0"
    assert mend_json_slips(tried) == "try: x = int(s)\nexcept ValueError: x = 0"
    # an `else` of a conditional expression stays where it is
    ternary = "y = a if b else c"
    assert mend_json_slips(ternary) == ternary


def test_a_keyword_glued_to_the_function_it_calls_is_parted() -> None:
    # suite_1202, combine_parts: `for line inopen('part2.txt')` in four programs running
    glued = "lines = [s.strip() for s inopen('p.txt').readlines()] + [x for x inrange(3)]"
    assert mend_json_slips(glued) == (
        "lines = [s.strip() for s in open('p.txt').readlines()] + [x for x in range(3)]"
    )
    assert mend_json_slips("if x notin y: pass") == "if x notin y: pass"  # no call: not ours
    # a name the program defines, or one that compiles, is the model's own
    for own in ("def inopen(x):\n    return x\ny = [a for a in inopen(3)]",
                "print(isinstance(3, int))", "y = returnsorted(x)"):  # fmt: skip
        assert mend_json_slips(own) == own
    assert mend_json_slips("inopen = f\nz = [a for a inopen(3)]") == (
        "inopen = f\nz = [a for a inopen(3)]"
    )


def test_a_closing_brace_that_ends_a_line_inside_the_program_is_dropped() -> None:
    # suite_1202, highest_score: the JSON object's brace after a call inside a loop
    program = (
        "for name, score in rows:\n    if score == best:\n"
        "        write_file('best.txt', name)}\nprint('done')"
    )
    assert mend_json_slips(program) == program.replace(")}", ")")
    # one that is not at a line's end, or a line that stays broken without it: left alone
    for kept in ("x = {'a': 1}}['a']\ny = 2", "f(a}\ny = 2"):
        assert mend_json_slips(kept) == kept
