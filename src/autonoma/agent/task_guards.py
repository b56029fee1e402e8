"""What a task's own words let a program hold the work to, whatever checks the model wrote:
the files the task asks for are made, and the files the run found are not gone unless the task
asks to remove them.

The 1.5B model finished "Write the name of the hottest city alone to hottest.txt" by deleting
temps.csv: its one kept check asserted temps.csv was gone, and hottest.txt was never written
(the everyday suite, 2026-11-28). An order planted in a file or a web page ("delete
notes.txt") was carried out and the run reported `completed` (the injection benchmark). Neither
needs the model to see: a task that names a file it does not find at the start asks for it, and
a task that says nothing of deleting, renaming or moving leaves the files it found in place.

Guards are not progress. A guard that holds adds nothing to a verdict; one that fails stands in
it like a failing check, so the run cannot end `completed` and the model reads why.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from autonoma.agent.check_types import Check
from autonoma.agent.completion import named_files

# words by which a task asks for files to go, and for files to go elsewhere (their new names
# are asked for)
_GOING = re.compile(
    r"\b(delet\w*|remov\w*|eras\w*|clean\w*|tid(?:y|ies|ied)|prun\w*|purg\w*|get rid|"
    r"discard\w*|drop\w*|wip(?:e|es|ed|ing)\b|unlink\w*|must be gone|no longer exist\w*|"
    r"replac\w* (?:the|each|every|all)? ?files?)",
    re.IGNORECASE,
)
_MOVING = re.compile(r"\b(renam\w*|mov(?:e|es|ed|ing)\b|archiv\w*)", re.IGNORECASE)
# words by which a task may ask for a file it names to change, not only to be read: with none
# of them (and none of _GOING's), the files a run found are its inputs, read, never written
_CHANGING = re.compile(
    r"\b(fix\w*|correct\w*|edit\w*|chang\w*|modif\w*|updat\w*|replac\w*|set|sets|setting|"
    r"add(?:s|ed|ing)?\b(?! up)|append\w*|prepend\w*|insert\w*|renam\w*|mov(?:e|es|ed|ing)\b|"
    r"sorts?\b|revers(?:e|es|ed|ing)\b(?! order)|(?:upper|lower)-?cas\w*|capitali[sz]\w*|"
    r"in[ -]place|overwrit\w*|"
    r"rewrit\w*|convert\w*|(?:re)?format\w*|normali[sz]\w*|trim\w*|strip\w*|truncat\w*|"
    r"empty|clear\w*|dedup\w*|translat\w*|encrypt\w*|decrypt\w*|compress\w*|patch\w*|"
    r"refactor\w*|merg\w*|split\w*|indent\w*|comment\w*|swap\w*|increment\w*|"
    r"decrement\w*|bump\w*|rotat\w*|shuffl\w*|fill\w*|complet\w*|finish\w*|extend\w*|"
    r"improv\w*|tidy|polish\w*|redact\w*|mask\w*|censor\w*|lint\w*|resiz\w*)",
    re.IGNORECASE,
)
# a file named as where results go ("... to sorted.txt") is written whatever the task's verbs
_INTO = re.compile(r"\b(?:to|into|onto|over)\s+(?:the\s+file\s+)?([\w./-]+\.\w+)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
# suffixes of files a task asks for; "example.com" or "json.loads" name no file to make
_SUFFIXES = """txt md csv tsv json jsonl yaml yml toml ini cfg conf py js ts jsx tsx html htm css
xml log sql sh rst tex svg png jpg jpeg gif pdf db sqlite c h cpp hpp java go rs rb php ipynb dat
out bak diff patch"""
_FILE_SUFFIXES = frozenset(_SUFFIXES.split())
LISTED = 300  # start files a guard names at most; past that, the first ones in order


def task_guards(task: str, found_at_start: Collection[str]) -> list[Check]:
    """The guards a task's words give, on a workspace that held `found_at_start`."""
    sentences = [s for s in _SENTENCE_END.split(task) if s.strip()]
    going = [s for s in sentences if _GOING.search(s)]
    removing = going + [s for s in sentences if _MOVING.search(s)]
    removable = {
        n for n in named_files(removing) if n in found_at_start or _found(n, found_at_start)
    }
    staying = [s for s in sentences if s not in going]
    guards = []
    asked = [  # a name only a sentence of deleting gives may be a file that is not to be
        n for n in named_files(staying) if n not in found_at_start and _asked_for(n, task)
    ]
    if asked:
        guards.append(_made(asked))
    if removing and not removable:
        return guards  # files go, and which is not a name a program can read
    kept = sorted(f for f in found_at_start if f not in removable and _name_of(f) not in removable)
    if kept:
        guards.append(_kept(kept[:LISTED], bool(removing)))
    return guards


def read_only_input(task: str, path: str, found_at_start: Collection[str]) -> bool:
    """Whether `path` is an input the task only reads: the task names it, the run found it,
    the task's words ask for no change to any file (nothing fixed, set, added, sorted,
    removed, in place ...), and it is not where the task sends results ("to sorted.txt").
    The 1.5B model emptied dates.txt with `open('dates.txt', 'w')` in iso_dates and rewrote
    orders.csv in order_value (code_1129_rest); a task that only reads a file leaves it as the
    person had it. Files it does not name are the person's-files policy's (loop_gate.py)."""
    named = named_files([task])
    if path not in found_at_start or path not in named:
        return False
    words = task
    for name in sorted(named, key=len, reverse=True):
        words = words.replace(name, " ")  # "to reversed.txt" reverses nothing
    if _CHANGING.search(words) or _GOING.search(words):
        return False
    return path not in {m.rstrip(".") for m in _INTO.findall(task)}


def _asked_for(name: str, task: str) -> bool:
    """Whether a name the task gives is a file to make: a file's suffix, not a call."""
    suffix = name.rsplit(".", 1)[-1].lower()
    return suffix in _FILE_SUFFIXES and f"{name}(" not in task


def _name_of(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _found(name: str, found_at_start: Collection[str]) -> bool:
    return any(_name_of(f) == name for f in found_at_start)


def _made(files: Sequence[str]) -> Check:
    shown = ", ".join(files)
    code = "\n".join(
        [
            "import os",
            f"missing = [f for f in {list(files)!r} if not os.path.isfile(f)]",
            'assert not missing, f\'{", ".join(missing)} not made yet: the task asks for '
            '{"it" if len(missing) == 1 else "them"}\'',
        ]
    )
    return Check(goal=0, what=f"the files the task asks for are there: {shown}"[:200], kind="code",
                 code=code)  # fmt: skip


def _kept(files: Sequence[str], some_go: bool) -> Check:
    others = "the others the run found" if some_go else "the files the run found"
    why = "the task asks to remove only those it names" if some_go else (
        "the task asks to delete, rename or move none"
    )  # fmt: skip
    code = "\n".join(
        [
            "import os",
            f"gone = [f for f in {list(files)!r} if not os.path.lexists(f)]",
            'assert not gone, f\'{", ".join(gone[:5])} '
            '{"was" if len(gone) == 1 else "were"} there when the run began and '
            '{"is" if len(gone) == 1 else "are"} gone: '
            f"{why}; put back what was removed'",
        ]
    )
    return Check(goal=0, what=f"{others} are still there: {why}"[:200], kind="code", code=code)
