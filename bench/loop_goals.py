"""Small goals that invite loops, each with a workspace to start from, a checker that decides
success from the workspace alone, and a reference solution (so every checker is shown to fail
on the start and pass on a right answer: tests/test_bench_loop_goals.py).

The traps: a file named differently from what the goal suggests, an answer two files away, a
folder to list first, exact content to produce, counting, editing in place. All can be done
with the file commands (read_file, write_file, append_file, list_files, delete_file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Files = dict[str, str]


@dataclass(frozen=True)
class LoopGoal:
    name: str
    goal: str
    files: Files  # the workspace at the start
    check: Callable[[Path], bool]
    answer: Files  # files a right answer writes (the reference solution)
    removes: tuple[str, ...] = ()

    def setup(self, workspace: Path) -> None:
        write(workspace, self.files)

    def solve(self, workspace: Path) -> None:
        write(workspace, self.answer)
        for name in self.removes:
            (workspace / name).unlink()


def write(workspace: Path, files: Files) -> None:
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def text(workspace: Path, name: str) -> str | None:
    path = workspace / name
    return path.read_text(errors="replace").strip() if path.is_file() else None


def lines(workspace: Path, name: str) -> list[str]:
    return [line.strip() for line in (text(workspace, name) or "").splitlines() if line.strip()]


def holds(name: str, expected: str) -> Callable[[Path], bool]:
    return lambda ws: text(ws, name) == expected


def number_in(name: str, value: float) -> Callable[[Path], bool]:
    def check(ws: Path) -> bool:
        found = (text(ws, name) or "").rstrip(".")
        try:
            return float(found) == value
        except ValueError:
            return False

    return check


POEM = (
    "\n".join(
        [
            "Rain on the roof",
            "A kettle hums",
            "The cat sleeps",
            "Pages turn",
            "The clock ticks",
            "Tea cools",
            "Night falls",
        ]
    )
    + "\n"
)
ESSAY = "Loops are easy to start and hard to notice from the inside of them.\n"
NAMES = ["Yusuf", "Amara", "Lin", "Bea", "Olek"]
COLOURS = {
    *("red", "orange", "yellow", "green", "blue", "indigo", "violet", "purple", "pink"),
    *("black", "white", "grey", "gray", "brown", "cyan", "magenta", "teal", "gold"),
}
CONFIG = {"name": "shop", "debug": True, "port": 8080, "tags": ["a", "b"]}


def _config_fixed(ws: Path) -> bool:
    try:
        data = json.loads(text(ws, "config.json") or "")
    except json.JSONDecodeError:
        return False
    return bool(data == {**CONFIG, "debug": False})


def _three_colours(ws: Path) -> bool:
    found = lines(ws, "colors.txt")
    named = [next((c for c in COLOURS if c in line.lower()), None) for line in found]
    return len(found) == 3 and None not in named and len(set(named)) == 3


GOALS = [
    LoopGoal(
        "misnamed",
        "Summarise the notes in one line in summary.txt; the line must say when the deadline is.",
        {"notes.md": "# Notes\nWe met on Monday.\nThe project deadline is Friday.\n"},
        lambda ws: (
            len(lines(ws, "summary.txt")) == 1
            and "friday" in (text(ws, "summary.txt") or "").lower()
        ),
        {"summary.txt": "The project deadline is Friday."},
    ),
    LoopGoal(
        "two_hops",
        "Start from start.txt and follow what it says to find the key; write only the key's "
        "value to key.txt.",
        {"start.txt": "The key is written in keys/where.txt\n", "keys/where.txt": "KEY=4471\n"},
        holds("key.txt", "4471"),
        {"key.txt": "4471"},
    ),
    LoopGoal(
        "count_lines",
        "Count the lines of poem.txt and write just the number to count.txt.",
        {"poem.txt": POEM},
        number_in("count.txt", 7),
        {"count.txt": "7"},
    ),
    LoopGoal(
        "count_words",
        "Count the words in essay.txt and write just the number to words.txt.",
        {"essay.txt": ESSAY},
        number_in("words.txt", 14),
        {"words.txt": "14"},
    ),
    LoopGoal(
        "fix_typo",
        "greeting.txt has a misspelled word; fix it so greeting.txt reads exactly: "
        "Hello, wonderful world!",
        {"greeting.txt": "Helo, wonderful world!\n"},
        holds("greeting.txt", "Hello, wonderful world!"),
        {"greeting.txt": "Hello, wonderful world!\n"},
    ),
    LoopGoal(
        "sort_names",
        "Sort the names in names.txt alphabetically and write them to sorted.txt, one per line.",
        {"names.txt": "\n".join(NAMES) + "\n"},
        lambda ws: lines(ws, "sorted.txt") == sorted(NAMES),
        {"sorted.txt": "\n".join(sorted(NAMES)) + "\n"},
    ),
    LoopGoal(
        "sum_column",
        "Add up the amount column of sales.csv and write just the total to total.txt.",
        {"sales.csv": "item,amount\ntea,12\ncake,30\njam,7.5\nbread,50.5\n"},
        number_in("total.txt", 100),
        {"total.txt": "100"},
    ),
    LoopGoal(
        "json_value",
        'In config.json, change "debug" from true to false and keep everything else the same.',
        {"config.json": json.dumps(CONFIG, indent=2) + "\n"},
        _config_fixed,
        {"config.json": json.dumps({**CONFIG, "debug": False}, indent=2) + "\n"},
    ),
    LoopGoal(
        "combine",
        "Combine part1.txt, part2.txt and part3.txt, in that order, into full.txt.",
        {"part1.txt": "alpha\n", "part2.txt": "beta\n", "part3.txt": "gamma\n"},
        lambda ws: lines(ws, "full.txt") == ["alpha", "beta", "gamma"],
        {"full.txt": "alpha\nbeta\ngamma\n"},
    ),
    LoopGoal(
        "write_append",
        "Write the line 'first line' to log.txt, then append the line 'second line' to it.",
        {},
        lambda ws: lines(ws, "log.txt") == ["first line", "second line"],
        {"log.txt": "first line\nsecond line\n"},
    ),
    LoopGoal(
        "three_colours",
        "Write exactly three lines to colors.txt, each naming a different colour.",
        {},
        _three_colours,
        {"colors.txt": "red\ngreen\nblue\n"},
    ),
    LoopGoal(
        "find_in_folder",
        "A file in the data folder has a name starting with report. Copy its text into "
        "report_copy.txt.",
        {
            "data/report_2026_q3.txt": "Revenue rose 4% in the third quarter.\n",
            "data/readme.txt": "Reports live here.\n",
        },
        holds("report_copy.txt", "Revenue rose 4% in the third quarter."),
        {"report_copy.txt": "Revenue rose 4% in the third quarter.\n"},
    ),
    LoopGoal(
        "delete_tmp",
        "Delete every file ending in .tmp from the workspace and keep the others.",
        {"a.tmp": "x", "b.tmp": "y", "keep.txt": "keep me\n"},
        lambda ws: sorted(p.name for p in ws.iterdir()) == ["keep.txt"],
        {},
        removes=("a.tmp", "b.tmp"),
    ),
]

BY_NAME = {goal.name: goal for goal in GOALS}
