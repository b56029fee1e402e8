"""Making model and web text safe to show a person who must approve it."""

from __future__ import annotations

import json
import unicodedata
from typing import Any


def neutralise(text: str) -> str:
    """Replace every control, format and unassigned character (ANSI escapes, carriage returns,
    bidi overrides, zero-width characters) with a visible escape, so what is shown is what
    would run."""
    out = []
    for char in text:
        if unicodedata.category(char).startswith("C"):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def neutralise_lines(text: str) -> str:
    """`neutralise` each line, keeping the line breaks (for multi-line views such as a tree)."""
    return "\n".join(neutralise(line) for line in text.splitlines())


def command_line(command: str, arguments: dict[str, Any]) -> str:
    """`write_file(path="a.txt", text="...")`, literally, with every control neutralised; a
    code step's program as its lines."""
    if command == "python" and list(arguments) == ["code"]:
        return "python:\n" + neutralise_lines(str(arguments["code"]))
    args = ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in arguments.items()
    )
    return neutralise(f"{command}({args})")
