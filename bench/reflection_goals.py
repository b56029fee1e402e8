"""Small goals that invite loops, for bench/reflection_loops.py.

Each goal seeds a workspace (`setup`), decides success from the workspace alone (`check`) and
has a hand-written reference solution (`solve`). tests/test_bench_reflection_loops.py shows
every checker failing on the fresh workspace and passing after `solve`, and every file a goal
names existing after it (the agent's completion check refuses task_complete otherwise, so a
goal cannot name a file that is not there, or one it asks to delete).

The traps: a file named without its extension, data spread over files, a folder to list
first, an answer two files away, exact content to produce, counting, sorting, a sum, editing
in place. Every goal can be done with the core file commands (read_file, write_file,
append_file, list_files, delete_file, task_complete) and names every file it wants written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Files = dict[str, str | None]  # None: the file is deleted


def normalise(text: str) -> str:
    """Content as compared: outer blank space and trailing spaces on each line dropped."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def read(workspace: Path, name: str) -> str | None:
    path = workspace / name
    return normalise(path.read_text(errors="replace")) if path.is_file() else None


def holds(name: str, expected: str) -> Callable[[Path], bool]:
    """The file holds exactly `expected` (normalised)."""
    return lambda workspace: read(workspace, name) == normalise(expected)


def holds_number(name: str, expected: float) -> Callable[[Path], bool]:
    """The file holds one number equal to `expected` ("100", "100.0")."""

    def check(workspace: Path) -> bool:
        try:
            return float(read(workspace, name) or "") == expected
        except ValueError:
            return False

    return check


def holds_json(name: str, expected: object) -> Callable[[Path], bool]:
    def check(workspace: Path) -> bool:
        try:
            return bool(json.loads(read(workspace, name) or "") == expected)
        except ValueError:
            return False

    return check


@dataclass(frozen=True)
class ReflectionGoal:
    name: str
    goal: str
    files: Files  # the workspace at the start
    checker: Callable[[Path], bool]
    answer: Files  # what the reference solution writes

    def setup(self, workspace: Path) -> None:
        write(workspace, self.files)

    def check(self, workspace: Path) -> bool:
        return self.checker(workspace)

    def solve(self, workspace: Path) -> None:
        write(workspace, self.answer)


def write(workspace: Path, files: Files) -> None:
    for name, text in files.items():
        path = workspace / name
        if text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


POEM = (
    "The fog comes\non little cat feet.\nIt sits looking\nover harbor and city\n"
    "on silent haunches\nand then moves on.\n"
)
CONFIG = {"name": "shop", "port": 8080, "debug": True, "workers": 4}

GOALS = [
    ReflectionGoal(
        "similar_name",
        "Read the file called notes and write its first line, in capital letters, to title.txt.",
        {"notes.md": "shopping list\nmilk\neggs\n"},
        holds("title.txt", "SHOPPING LIST"),
        {"title.txt": "SHOPPING LIST\n"},
    ),
    ReflectionGoal(
        "combine_parts",
        "Join the lines of part1.txt, part2.txt and part3.txt, in that order, into full.txt.",
        {"part1.txt": "alpha\n", "part2.txt": "beta\ngamma\n", "part3.txt": "delta\n"},
        holds("full.txt", "alpha\nbeta\ngamma\ndelta"),
        {"full.txt": "alpha\nbeta\ngamma\ndelta\n"},
    ),
    ReflectionGoal(
        "replace_word",
        "In greeting.txt, replace the word World with Autonoma and change nothing else.",
        {"greeting.txt": "Hello, World!\nHave a nice day.\n"},
        holds("greeting.txt", "Hello, Autonoma!\nHave a nice day."),
        {"greeting.txt": "Hello, Autonoma!\nHave a nice day.\n"},
    ),
    ReflectionGoal(
        "count_lines",
        "Count the lines of poem.txt and write the number alone to count.txt.",
        {"poem.txt": POEM},
        holds_number("count.txt", 6),
        {"count.txt": "6\n"},
    ),
    ReflectionGoal(
        "count_words",
        "Count the words in quote.txt and write the number alone to words.txt.",
        {"quote.txt": "Simple is better than complex, and flat is better than nested.\n"},
        holds_number("words.txt", 11),
        {"words.txt": "11\n"},
    ),
    ReflectionGoal(
        "list_first",
        "The reports folder holds one report. Copy its text exactly to latest.txt.",
        {"reports/2024-q3-final.txt": "Revenue rose 4% in the third quarter.\n"},
        holds("latest.txt", "Revenue rose 4% in the third quarter."),
        {"latest.txt": "Revenue rose 4% in the third quarter.\n"},
    ),
    ReflectionGoal(
        "two_hops",
        "start.txt says where the access code is. Write the code alone to code.txt.",
        {
            "start.txt": "The access code is written in clue.txt.\n",
            "clue.txt": "Not here either: see vault/secret.txt.\n",
            "vault/secret.txt": "8142\n",
        },
        holds("code.txt", "8142"),
        {"code.txt": "8142\n"},
    ),
    ReflectionGoal(
        "fix_typo",
        "readme.txt misspells one word as recieve. Correct it in readme.txt, nothing else.",
        {"readme.txt": "Install the tool.\nYou will recieve a key by mail.\nKeep it safe.\n"},
        holds("readme.txt", "Install the tool.\nYou will receive a key by mail.\nKeep it safe."),
        {"readme.txt": "Install the tool.\nYou will receive a key by mail.\nKeep it safe.\n"},
    ),
    ReflectionGoal(
        "sort_lines",
        "Write the lines of names.txt sorted alphabetically, one per line, to sorted.txt.",
        {"names.txt": "Mira\nAnton\nZoe\nBeatrice\nKarl\n"},
        holds("sorted.txt", "Anton\nBeatrice\nKarl\nMira\nZoe"),
        {"sorted.txt": "Anton\nBeatrice\nKarl\nMira\nZoe\n"},
    ),
    ReflectionGoal(
        "csv_sum",
        "Add up the amount column of sales.csv and write the total alone to total.txt.",
        {"sales.csv": "item,amount\npens,12\npaper,30\nink,7\nstapler,51\n"},
        holds_number("total.txt", 100),
        {"total.txt": "100\n"},
    ),
    ReflectionGoal(
        "json_config",
        "In config.json, set debug to false and keep every other setting as it is.",
        {"config.json": json.dumps(CONFIG, indent=2) + "\n"},
        holds_json("config.json", CONFIG | {"debug": False}),
        {"config.json": json.dumps(CONFIG | {"debug": False}, indent=2) + "\n"},
    ),
    ReflectionGoal(
        "write_append",
        "Write the line 'started' to log.txt, then append the line 'finished' to log.txt.",
        {},
        holds("log.txt", "started\nfinished"),
        {"log.txt": "started\nfinished\n"},
    ),
    ReflectionGoal(
        "three_lines",
        "Write exactly 3 lines to colors.txt: red, green and blue, one per line.",
        {"palette.txt": "Colours we use: red, green, blue, and sometimes black.\n"},
        holds("colors.txt", "red\ngreen\nblue"),
        {"colors.txt": "red\ngreen\nblue\n"},
    ),
    ReflectionGoal(
        "highest_score",
        "scores.txt lists a score for each player. Write the best player's name alone to best.txt.",
        {"scores.txt": "ana: 17\nben: 23\ncleo: 9\ndev: 21\n"},
        holds("best.txt", "ben"),
        {"best.txt": "ben\n"},
    ),
]

BY_NAME = {goal.name: goal for goal in GOALS}
