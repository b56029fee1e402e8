"""Everyday goals with checkers, for bench/everyday.py: the 14 loop-inviting goals of
bench/reflection_goals.py and 22 more of the kind a new user tries first.

The new ones: ordering lines (ignoring case, reversed, without duplicates), totalling and
filtering columns of a table, reading JSON, counting, dates, editing in place, renaming, a
folder's index, instructions chained over files, and small functions with a given behaviour
(the checker imports the module and compares each result's repr, so a number returned as a
string fails). Each checker reads only the workspace (running a module the agent wrote is
reading it); tests/test_bench_everyday.py shows each failing on the start and passing on the
reference solution.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.reflection_goals import GOALS as LOOP_GOALS
from bench.reflection_goals import ReflectionGoal as Goal
from bench.reflection_goals import holds, holds_number, read

Check = Callable[[Path], bool]


def absent(name: str) -> Check:
    return lambda workspace: not (workspace / name).exists()


def both(*checks: Check) -> Check:
    return lambda workspace: all(check(workspace) for check in checks)


def behaves(module: str, function: str, cases: Sequence[tuple[tuple[Any, ...], Any]]) -> Check:
    """The module's function, called with each case's arguments in a fresh interpreter (10 s
    at most), returns a value whose repr is the expected one's."""
    program = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('m', {module!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        f"f = getattr(m, {function!r})\n"
        "cases = json.loads(sys.stdin.read())\n"
        "print(json.dumps([repr(f(*args)) for args in cases]))\n"
    )

    def check(workspace: Path) -> bool:
        if not (workspace / module).is_file():
            return False
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", program],
                input=json.dumps([list(args) for args, _ in cases]),
                capture_output=True,
                text=True,
                cwd=workspace,
                timeout=10,
            )
            got = json.loads(done.stdout) if done.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError):
            return False
        return got == [repr(expected) for _, expected in cases]

    return check


def files_hold(expected: dict[str, str]) -> Check:
    return both(*(holds(name, text) for name, text in expected.items()))


SLUGIFY = """import re


def slugify(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
"""
PARSE_NUMBERS = """import re


def parse_numbers(text):
    return [int(n) for n in re.findall(r"-?\\d+", text)]
"""
FIZZBUZZ = """def fizzbuzz(n):
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)
"""
PALINDROME = """def is_palindrome(text):
    kept = [c.lower() for c in text if c.isalnum()]
    return kept == kept[::-1]
"""
MEDIAN = """def median(numbers):
    ordered = sorted(numbers)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
"""

USERS = [
    {"name": "Ana", "email": "ana@example.com", "active": True},
    {"name": "Ben", "email": "ben@example.com", "active": False},
    {"name": "Cleo", "email": "cleo@example.com", "active": True},
    {"name": "Dev", "email": "dev@example.com", "active": False},
]

NEW_GOALS = [
    Goal(
        "sort_ignore_case",
        "Sort the lines of names.txt alphabetically, ignoring upper and lower case, and write "
        "them to sorted.txt, one per line.",
        {"names.txt": "bob\nAlice\ncarol\nDave\neve\nFrank\n"},
        holds("sorted.txt", "Alice\nbob\ncarol\nDave\neve\nFrank"),
        {"sorted.txt": "Alice\nbob\ncarol\nDave\neve\nFrank\n"},
    ),
    Goal(
        "reverse_lines",
        "Write the lines of steps.txt in reverse order, one per line, to reversed.txt.",
        {"steps.txt": "unpack\nassemble\ntest\npaint\n"},
        holds("reversed.txt", "paint\ntest\nassemble\nunpack"),
        {"reversed.txt": "paint\ntest\nassemble\nunpack\n"},
    ),
    Goal(
        "dedupe_lines",
        "Write the lines of emails.txt to unique.txt without duplicates, keeping the first "
        "occurrence of each line and the original order.",
        {"emails.txt": "a@x.org\nb@x.org\na@x.org\nc@x.org\nb@x.org\nd@x.org\n"},
        holds("unique.txt", "a@x.org\nb@x.org\nc@x.org\nd@x.org"),
        {"unique.txt": "a@x.org\nb@x.org\nc@x.org\nd@x.org\n"},
    ),
    Goal(
        "category_total",
        "expenses.csv lists expenses with a category and an amount. Write the total amount of "
        "the food category alone to food.txt.",
        {
            "expenses.csv": "date,category,amount\n2024-05-01,food,12.50\n2024-05-01,travel,40\n"
            "2024-05-02,food,7.25\n2024-05-03,books,18\n2024-05-04,food,20.25\n"
        },
        holds_number("food.txt", 40.0),
        {"food.txt": "40.0\n"},
    ),
    Goal(
        "order_value",
        "orders.csv has a quantity and a price column. Write the total value of all orders "
        "(the sum of quantity times price) alone to value.txt.",
        {"orders.csv": "item,quantity,price\npen,3,2\nnotebook,2,5\nbag,1,30\n"},
        holds_number("value.txt", 46),
        {"value.txt": "46\n"},
    ),
    Goal(
        "hottest_city",
        "temps.csv gives a temperature for each city. Write the name of the hottest city alone "
        "to hottest.txt.",
        {"temps.csv": "city,temp\nOslo,12\nCairo,35\nLima,19\nDelhi,33\n"},
        holds("hottest.txt", "Cairo"),
        {"hottest.txt": "Cairo\n"},
    ),
    Goal(
        "active_emails",
        "users.json holds a list of users. Write the emails of the users whose active field is "
        "true to active.txt, one per line, in the order they appear.",
        {"users.json": json.dumps(USERS, indent=2) + "\n"},
        holds("active.txt", "ana@example.com\ncleo@example.com"),
        {"active.txt": "ana@example.com\ncleo@example.com\n"},
    ),
    Goal(
        "count_errors",
        "Count the lines of app.log that contain ERROR and write the number alone to errors.txt.",
        {
            "app.log": "INFO start\nERROR disk full\nINFO retry\nWARN slow\nERROR disk full\n"
            "INFO done\nERROR timeout\n"
        },
        holds_number("errors.txt", 3),
        {"errors.txt": "3\n"},
    ),
    Goal(
        "average",
        "Write the average of the numbers in numbers.txt (one per line), rounded to two "
        "decimals, alone to average.txt.",
        {"numbers.txt": "4\n8\n15\n16\n23\n42\n"},
        holds_number("average.txt", 18.0),
        {"average.txt": "18.00\n"},
    ),
    Goal(
        "low_stock",
        "inventory.txt lists items with their count. Write the lines of items with a count "
        "below 5 to reorder.txt, in the same order and form.",
        {"inventory.txt": "pens 12\ntape 3\nstaples 40\nglue 1\nfolders 5\n"},
        holds("reorder.txt", "tape 3\nglue 1"),
        {"reorder.txt": "tape 3\nglue 1\n"},
    ),
    Goal(
        "iso_dates",
        "dates.txt holds dates as month/day/year. Write them as year-month-day with two-digit "
        "months and days (like 2024-03-14), one per line in the same order, to iso.txt.",
        {"dates.txt": "03/14/2024\n12/01/2023\n7/4/2025\n"},
        holds("iso.txt", "2024-03-14\n2023-12-01\n2025-07-04"),
        {"iso.txt": "2024-03-14\n2023-12-01\n2025-07-04\n"},
    ),
    Goal(
        "uppercase_in_place",
        "Make every line of shout.txt uppercase, in place.",
        {"shout.txt": "quiet please\nthe library is open\n"},
        holds("shout.txt", "QUIET PLEASE\nTHE LIBRARY IS OPEN"),
        {"shout.txt": "QUIET PLEASE\nTHE LIBRARY IS OPEN\n"},
    ),
    Goal(
        "add_header",
        "scores.csv has no header. Add the line name,score as its first line and keep the "
        "rest as it is.",
        {"scores.csv": "ana,17\nben,23\n"},
        holds("scores.csv", "name,score\nana,17\nben,23"),
        {"scores.csv": "name,score\nana,17\nben,23\n"},
    ),
    Goal(
        "rename_file",
        "Rename draft.txt to final.txt: final.txt must hold the same text, and draft.txt must "
        "be gone.",
        {"draft.txt": "Meeting moved to Friday.\n"},
        both(holds("final.txt", "Meeting moved to Friday."), absent("draft.txt")),
        {"final.txt": "Meeting moved to Friday.\n", "draft.txt": None},
    ),
    Goal(
        "folder_index",
        "Write the names of the files in the notes folder, sorted, one per line, to index.txt.",
        {"notes/pears.md": "ripe\n", "notes/apples.md": "red\n", "notes/figs.md": "dry\n"},
        holds("index.txt", "apples.md\nfigs.md\npears.md"),
        {"index.txt": "apples.md\nfigs.md\npears.md\n"},
    ),
    Goal(
        "chained_instructions",
        "Follow the instructions in step1.txt to the end.",
        {
            "step1.txt": "Write the word apple to answer.txt. Then follow step2.txt.\n",
            "step2.txt": "Append the word banana to answer.txt as a new line. "
            "Then follow step3.txt.\n",
            "step3.txt": "Append the word cherry to answer.txt as a new line. That is all.\n",
        },
        holds("answer.txt", "apple\nbanana\ncherry"),
        {"answer.txt": "apple\nbanana\ncherry\n"},
    ),
    Goal(
        "people_csv",
        "people.txt has lines like 'Ana is 31'. Write people.csv with the header name,age and "
        "one row for each person, in the same order.",
        {"people.txt": "Ana is 31\nBen is 27\nCleo is 45\n"},
        holds("people.csv", "name,age\nAna,31\nBen,27\nCleo,45"),
        {"people.csv": "name,age\nAna,31\nBen,27\nCleo,45\n"},
    ),
    Goal(
        "slugify_function",
        "Write a Python function slugify(title) in slug.py that lowercases the title and "
        "replaces each run of characters that are not letters or digits with one hyphen, with "
        "no hyphen at either end. slugify('Hello, World!') is 'hello-world'.",
        {},
        behaves(
            "slug.py",
            "slugify",
            [
                (("Hello, World!",), "hello-world"),
                (("  Autonoma: 2 agents  ",), "autonoma-2-agents"),
                (("a--b",), "a-b"),
            ],
        ),
        {"slug.py": SLUGIFY},
    ),
    Goal(
        "parse_numbers_function",
        "Write a Python function parse_numbers(text) in nums.py that returns the whole numbers "
        "in the text as a list of int values, in order. parse_numbers('3 cats, 12 dogs') is "
        "[3, 12].",
        {},
        behaves(
            "nums.py",
            "parse_numbers",
            [
                (("3 cats, 12 dogs",), [3, 12]),
                (("none",), []),
                (("7 and 70 and 700",), [7, 70, 700]),
            ],
        ),
        {"nums.py": PARSE_NUMBERS},
    ),
    Goal(
        "fizzbuzz_function",
        "Write a Python function fizzbuzz(n) in fizz.py that returns 'Fizz' for multiples of "
        "3, 'Buzz' for multiples of 5, 'FizzBuzz' for multiples of both, and otherwise the "
        "number as a string.",
        {},
        behaves(
            "fizz.py",
            "fizzbuzz",
            [((3,), "Fizz"), ((10,), "Buzz"), ((30,), "FizzBuzz"), ((7,), "7")],
        ),
        {"fizz.py": FIZZBUZZ},
    ),
    Goal(
        "palindrome_function",
        "Write a Python function is_palindrome(text) in pal.py that returns True when the text "
        "reads the same backwards, ignoring case, spaces and punctuation, and False otherwise.",
        {},
        behaves(
            "pal.py",
            "is_palindrome",
            [
                (("Never odd or even",), True),
                (("A man, a plan, a canal: Panama",), True),
                (("autonoma",), False),
            ],
        ),
        {"pal.py": PALINDROME},
    ),
    Goal(
        "median_function",
        "Write a Python function median(numbers) in stats.py that returns the median of a "
        "list of numbers: the middle value once sorted, or the mean of the two middle values "
        "for an even count.",
        {},
        behaves(
            "stats.py",
            "median",
            [(([3, 1, 2],), 2), (([4, 1, 3, 2],), 2.5), (([5],), 5)],
        ),
        {"stats.py": MEDIAN},
    ),
]

GOALS: list[Goal] = [*LOOP_GOALS, *NEW_GOALS]
BY_NAME = {goal.name: goal for goal in GOALS}


def goals_named(names: str) -> list[Goal]:
    """The goals a comma-separated --goals names; ValueError naming the unknown ones."""
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in BY_NAME]
    if unknown:
        raise ValueError(f"no goal {', '.join(unknown)}; the goals are: {', '.join(BY_NAME)}")
    return [BY_NAME[name] for name in wanted]


__all__ = ["BY_NAME", "GOALS", "Goal", "goals_named", "read"]
