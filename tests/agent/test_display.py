"""What the person approving a command sees is exactly what would run: no hidden characters."""

from __future__ import annotations

import unicodedata

import pytest

from autonoma.agent.display import command_line, neutralise


def hidden(text: str) -> list[str]:
    """Every control, format, surrogate, private-use or unassigned character left in text."""
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c).startswith("C")]


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x1b", "\\x1b"),  # ESC, starts ANSI sequences
        ("\r", "\\x0d"),  # carriage return: overwrites what was shown
        ("\n", "\\x0a"),
        ("\x00", "\\x00"),
        ("\x7f", "\\x7f"),  # DEL
        ("\x9b", "\\x9b"),  # C1 CSI: an ANSI sequence in one character
        ("\u202e", "\\u202e"),  # RIGHT-TO-LEFT OVERRIDE
        ("\u2066", "\\u2066"),  # LEFT-TO-RIGHT ISOLATE
        ("\u200b", "\\u200b"),  # ZERO WIDTH SPACE
        ("\u200d", "\\u200d"),  # ZERO WIDTH JOINER
        ("\ufeff", "\\ufeff"),  # BOM / zero-width no-break space
        ("\ud800", "\\ud800"),  # lone surrogate
        ("\ue000", "\\ue000"),  # private use
    ],
)
def test_neutralise_makes_each_hidden_character_visible(char: str, shown: str) -> None:
    out = neutralise(f"a{char}b")
    assert out == f"a{shown}b"
    assert hidden(out) == []


def test_ansi_clear_line_in_an_argument_is_visible() -> None:
    out = command_line("write_file", {"path": "a.txt", "text": "\x1b[2Khidden\rshown"})
    assert hidden(out) == []
    assert "\x1b" not in out
    assert "\r" not in out
    # JSON already escapes C0 controls; either way the person sees an escape, not an effect
    assert out == 'write_file(path="a.txt", text="\\u001b[2Khidden\\rshown")'


def test_ansi_and_carriage_return_in_the_command_name_are_visible() -> None:
    out = command_line("\x1b[2K\rread_file", {"path": "a.txt"})
    assert hidden(out) == []
    assert out == '\\x1b[2K\\x0dread_file(path="a.txt")'


def test_bidi_override_and_zero_width_space_are_visible() -> None:
    out = command_line(
        "delete_file",
        {"path": "report\u202etxt.exe", "note": "zero\u200bwidth", "sneaky\u200bkey": 1},
    )
    assert hidden(out) == []
    assert "\u202e" not in out
    assert "\u200b" not in out
    assert out == (
        'delete_file(path="report\\u202etxt.exe", note="zero\\u200bwidth", sneaky\\u200bkey=1)'
    )


def test_c1_controls_that_json_keeps_are_still_escaped() -> None:
    # json.dumps(ensure_ascii=False) leaves DEL and C1 controls raw; neutralise must catch them.
    out = command_line("write_file", {"text": "a\x9b2Kb\x7f\x85c"})
    assert hidden(out) == []
    assert out == 'write_file(text="a\\x9b2Kb\\x7f\\x85c")'


def test_no_hidden_character_survives_any_of_them_together() -> None:
    nasty = "".join(
        chr(c)
        for c in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200B, 0x200E, 0x202A, 0x202E, 0x2069]
    )
    out = command_line(f"tool{nasty}", {f"key{nasty}": nasty, "list": [nasty], "n": {"k": nasty}})
    assert hidden(out) == []


def test_ordinary_unicode_is_kept() -> None:
    out = command_line(
        "write_file", {"path": "café/日本.md", "text": "naïve résumé 🙂 — Ελληνικά עברית"}
    )
    assert out == 'write_file(path="café/日本.md", text="naïve résumé 🙂 — Ελληνικά עברית")'
    assert neutralise("é 日本 🙂") == "é 日本 🙂"


def test_arguments_are_shown_literally_as_json() -> None:
    out = command_line(
        "search_files", {"pattern": "*.md", "text": 'say "hi"', "limit": 3, "flags": [True, None]}
    )
    assert out == 'search_files(pattern="*.md", text="say \\"hi\\"", limit=3, flags=[true, null])'
    assert command_line("list_files", {}) == "list_files()"
