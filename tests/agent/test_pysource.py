"""Mending what JSON escaping did to a model's Python: line breaks in literals, a stray brace."""

from __future__ import annotations

from autonoma.agent.pysource import mend_json_slips


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
