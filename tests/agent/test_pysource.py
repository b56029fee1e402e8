"""Mending the line breaks JSON escaping put inside a model's string literals."""

from __future__ import annotations

from autonoma.agent.pysource import mend_newlines


def test_a_line_break_inside_a_literal_is_written_back_as_an_escape() -> None:
    broken = "lines = open('a.txt').read().split('\n')\nprint('\n'.join(lines))"
    mended = mend_newlines(broken)
    assert mended == "lines = open('a.txt').read().split('\\n')\nprint('\\n'.join(lines))"
    compile(mended, "program.py", "exec")


def test_an_f_string_and_two_breaks_in_one_literal() -> None:
    mended = mend_newlines("x = 1\nprint(f'{x}\n\nend')")
    assert mended == "x = 1\nprint(f'{x}\\n\\nend')"


def test_good_code_and_other_errors_are_left_alone() -> None:
    good = 'text = """two\nlines"""\nprint(text)'
    assert mend_newlines(good) == good
    other = "print((1)\nx = 2"
    assert mend_newlines(other) == other
    assert mend_newlines("s = 'never closed") == "s = 'never closed"
