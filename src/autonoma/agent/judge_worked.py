"""The task judged by doing it again: the model works out, from the files as they were before
the work, what the files the task writes must hold, and a program compares that with what the
work left. Two answers reached apart that agree are evidence; a yes or no is not.

Asked "does the work meet the criterion?", the 1.5B judge passed two wrong results in three
(bench/judge.py, docs/benchmarks.md): people.csv holding its header alone, answer.txt holding
the first of three chained words, a count it never counted. A task whose files give its
answer (it names input files the run found) has one right content for the files it writes, so
the judge is asked for that content instead, and a wrong guess of it ends the run unfinished,
not completed on wrong work. The worked-out text is not shown to the agent: copied, the judge's
mistake would be the run's. A task with no input (a haiku) is judged as before; one with inputs
whose working out gives nothing to compare is not passed on a yes (`unconfirmed`).

Where a sandbox is at hand the model works the task out as a program, run on a copy of the
inputs, and what the program writes is the worked-out content (`work_out_by_program`): typing
the answer, the 1.5B judge miscounted and missorted what its own programs get right (it refused
count_lines' right `6` and sort_ignore_case's right order, runs that then ended unfinished).
Typed text remains the fallback when the program fails or writes nothing.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from autonoma.agent.check_types import Check, CheckResult
from autonoma.agent.completion import input_files, named_files
from autonoma.agent.open_ended import open_ended
from autonoma.agent.pysource import mend_json_slips
from autonoma.errors import ModelError
from autonoma.llm import Model
from autonoma.memory.asking import ask
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render
from autonoma.tools import Workspace, WorkspaceError
from autonoma.tools.sandbox import Sandbox, SandboxError

JUDGED = "judged: "  # how a judgement of the model's begins (the judge's, or its worked out)
INPUT_CHARS = 6000  # of the inputs together: past that, the task is judged as before
FILE_CHARS = 3000
HOPS = 4  # files named by files the task names, and so on
FOLDER_FILES = 10  # of a folder the task names


class _File(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=FILE_CHARS)


class WorkedOut(BaseModel):
    files: list[_File] = Field(min_length=1, max_length=5)


def inputs_of(task: str, start: Path | None) -> dict[str, str] | None:
    """The files the task names that the run found, with those they name in turn (chained
    instructions, a few hops on), as they were before the work; None when there are none,
    they are too long to show whole, or the task leaves its wording to the writer (a summary
    of them: many texts are right, and the judge's own would be the only one passed)."""
    if start is None or not start.is_dir() or open_ended(task):
        return None
    found, names = {}, [*named_files([task]), *by_stem(task, start), *folder_files(task, start)]
    for hop in range(HOPS + 1):
        for name in names:
            if name in found:
                continue
            try:
                read = Workspace(start).read(name, INPUT_CHARS + 1)
            except (OSError, WorkspaceError):
                continue
            found[name] = read.text()
        if hop == 0 and not found:
            return None
        names = named_files(found.values())
    if sum(len(t) for t in found.values()) > INPUT_CHARS:
        return None
    return found


def by_stem(task: str, start: Path) -> list[str]:
    """The top-level files the task names as a file by their name without its suffix ("Read
    the file called notes": notes.md; with no input found, the yes-or-no judge passed a
    lowercase title for one "in capital letters"). Only where the words say it is a file
    ("called", "named", "file"): "Write the names Alice, bob and carol" names no names.txt."""
    found, named = [], set(named_files([task]))
    for path in sorted(p for p in start.iterdir() if p.is_file() and not p.name.startswith(".")):
        stem = re.escape(path.stem)
        said = rf"(?:\b(?:called|named|file)\s+['\"]?{stem}\b|\b{stem}['\"]?\s+file\b)"
        if path.name not in named and re.search(said, task, re.IGNORECASE):
            found.append(path.name)
    return found


def folder_files(task: str, start: Path) -> list[str]:
    """The files, FOLDER_FILES at most, of each top-level folder the task names as a word
    ("The reports folder holds one report. Copy its text exactly to latest.txt": with no
    file named, the yes-or-no judge passed "This is a sample report." as the copy)."""
    found: list[str] = []
    for folder in sorted(p for p in start.iterdir() if p.is_dir() and not p.is_symlink()):
        if folder.name.startswith(".") or not re.search(
            rf"(?<![\w./-]){re.escape(folder.name)}(?![\w/-])", task, re.IGNORECASE
        ):
            continue
        files = sorted(
            f for f in folder.rglob("*")
            if f.is_file() and not f.is_symlink() and not f.name.startswith(".")
        )  # fmt: skip
        found += [f.relative_to(start).as_posix() for f in files[:FOLDER_FILES]]
    return found


async def work_out(
    model: Model, task: str, inputs: dict[str, str], spent: BudgetSpent
) -> WorkedOut | None:
    """What the files the task writes must hold, worked out by the model from `inputs`;
    None when it gave no usable answer."""
    prompt = render(
        "autonoma.agent",
        "judge_worked.j2",
        task=task,
        files=[f"{name}:\n{text}" for name, text in inputs.items()],
        writes=writes(task, inputs),
    )
    answer = await ask(model, prompt, spent, output=WorkedOut, max_tokens=700, temperature=0.0)
    return None if isinstance(answer, ModelError) else answer.data


class _Program(BaseModel):
    code: str = Field(min_length=1, max_length=3000)


PROGRAMS = 3  # programs asked for at most: each told why the one before did not do
AGAIN_TEMPERATURE = 0.6  # of a program asked for again


async def work_out_by_program(
    model: Model, sandbox: Sandbox, task: str, inputs: dict[str, str], spent: BudgetSpent
) -> WorkedOut | None:
    """What the files the task writes must hold, as a program the model writes makes them
    from a copy of `inputs` in the sandbox: the files it wrote or changed that the task or its
    inputs name. Asked PROGRAMS times at most, each time told why the one before did not do;
    None when none did."""
    files = [f"{name}:\n{text}" for name, text in inputs.items()]
    failed = ""
    for attempt in range(PROGRAMS):
        prompt = render(
            "autonoma.agent",
            "judge_worked_program.j2",
            task=task,
            files=files,
            writes=writes(task, inputs),
            failed=failed,
        )
        # asked again, at temperature 0 the 1.5B judge wrote the same failing program three
        # times over, told each time why it failed (order_value, reverse_lines)
        heat = 0.0 if attempt == 0 else AGAIN_TEMPERATURE
        answer = await ask(model, prompt, spent, output=_Program, max_tokens=400, temperature=heat)
        if isinstance(answer, ModelError):
            return None
        code = mend_json_slips(unfenced(answer.data.code))
        made, failed = await _run_program(sandbox, code, task, inputs)
        if made:
            return WorkedOut(files=made[:5])
    return None


def unfenced(code: str) -> str:
    """The program without a Markdown fence or a first line naming its language: the 1.5B
    judge began csv_sum's program with a line `python` (a NameError)."""
    lines = code.strip("\n").split("\n")
    if lines and lines[0].strip().strip("`").strip().lower() in ("", "python", "py", "python3"):
        lines = lines[1:]
    if lines and lines[-1].strip() == "```":
        lines = lines[:-1]
    return "\n".join(lines)


async def _run_program(
    sandbox: Sandbox, code: str, task: str, inputs: dict[str, str]
) -> tuple[list[_File], str]:
    """The files the program made that the task or its inputs name, or why there are none."""
    with tempfile.TemporaryDirectory(prefix="autonoma-worked-") as folder:
        root = Path(folder)
        await asyncio.to_thread(write_texts, root, inputs)
        try:
            result = await sandbox.run([sandbox.python, "-I", "-"], workspace=root, stdin=code)
        except SandboxError as error:
            return [], f"it could not run: {error}"
        if not result.ok:
            why = result.stopped or result.stderr.strip()[-400:] or f"exit {result.exit_code}"
            return [], f"it failed: {why}"
        made = await asyncio.to_thread(_written, root, inputs)
    # an input counts only where the task works in place (the 1.5B judge's program wrote
    # start.txt's text over clue.txt for "write the code alone to code.txt")
    in_place, known = _in_place(task, inputs), _known(task, inputs)
    named = [f for f in made if known(f.name) and (in_place or f.name not in inputs)]
    empty = [f.name for f in named if not f.text.strip()]
    if empty:  # reverse_lines: reversed.txt left empty, the lines written to "txt.spets"
        return [], f"it left {', '.join(empty)} empty"
    if named:
        return named, ""
    wrote = ", ".join(f.name for f in made) or "no file"
    return [], f"it wrote {wrote}, not a file the task writes or changes"


def write_texts(root: Path, files: dict[str, str]) -> None:
    """Each text written under `root` at its relative path, folders made as needed."""
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _written(root: Path, inputs: dict[str, str]) -> list[_File]:
    """The text files under `root` that are not `inputs` as they were: what a program made."""
    made = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        name = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if inputs.get(name) != text and len(text) <= FILE_CHARS:
            made.append(_File(name=name, text=text))
    return made


def compared(
    worked: WorkedOut, check: Check, task: str, workspace: Workspace, inputs: dict[str, str]
) -> CheckResult | None:
    """The task's check from the worked-out files against the workspace now; None when they
    name no file the work was to write or change (judge as before). A file they name that is
    not an input and that neither the task nor an input names is the model's own invention
    and is set aside: the 1.5B judge named apples.md, a file of the folder the task lists, as
    one the task writes, and the run deleted notes/apples.md to please it."""
    now: dict[str, str | None] = {}
    for name in {f.name.strip().removeprefix("./") for f in worked.files}:
        try:
            now[name] = workspace.read(name, FILE_CHARS * 4).text()
        except FileNotFoundError:
            now[name] = None
        except (OSError, WorkspaceError) as error:
            return CheckResult(check, False, f"{name} cannot be read: {error}")
    in_place, known = _in_place(task, inputs), _known(task, inputs)
    made = {}
    for file in worked.files:
        name = file.name.strip().removeprefix("./")
        if name in inputs and not _changes(inputs[name], file.text, now[name], in_place):
            continue
        if not known(name):
            continue  # the judge's own file: folder_index's "apples.md", of notes/ (read)
        made[name] = file.text
    if not made:
        return None
    for name, expected in made.items():
        got = now[name]
        if got is None:
            return CheckResult(check, False, f"{name} does not exist, and the task writes it")
        if not _same(_plain(got), _plain(expected)):
            return CheckResult(check, False, _differs(name, got, expected))
    return CheckResult(
        check,
        True,
        f"{JUDGED}{', '.join(made)} hold what the task, worked out again from its inputs, gives",
    )


def writes(task: str, inputs: dict[str, str]) -> list[str]:
    """The files the task names that are not among its inputs: those it writes (two_hops'
    programs wrote start.txt's pointer over clue.txt, told only which file not to write)."""
    return [n for n in named_files([task]) if n not in inputs]


def unconfirmed(task: str, inputs: dict[str, str]) -> str:
    """Why a task with inputs is not passed when working it out again gave nothing to compare:
    its files give one right answer, and a yes or no is no evidence of it (two_hops ended
    `completed` on clue.txt's pointer, not the code it points to, the programs and the typed
    answer having given nothing and the yes-or-no judge a yes). The inputs are named, every one,
    for the agent to read again."""
    new = writes(task, inputs)
    made = f"{', '.join(new)} follows" if new else "the work follows"
    return (
        f"{JUDGED}not confirmed: the task could not be worked out again from its inputs "
        f"({', '.join(inputs)}), and a result that follows from files is passed only when it "
        f"agrees with them worked out. Read every one of them again and check that {made} "
        "from them all, exactly as asked"
    )


def _in_place(task: str, inputs: dict[str, str]) -> bool:
    """Whether the task writes no new file: every file it names is an input."""
    return all(n in inputs for n in named_files([task]))


def _known(task: str, inputs: dict[str, str]) -> Callable[[str], bool]:
    """Whether a file is an input, or one the task or an input names (also by its name without
    its suffix): not a file the judge made up."""
    names = {*inputs, *named_files([task, *inputs.values()])}
    return lambda name: name in names or bool(input_files([task], [name]))


def _changes(before_text: str, worked: str, now: str | None, in_place: bool) -> bool:
    """Whether an input file is one the task changes, to be compared: the work changed it, or
    the task writes no new file (it works in place) and the worked-out text differs from it.
    An input the work left as it was, of a task that writes a new file, is read, not written
    (the 1.5B judge rewrote poem.txt while working out the count of its lines)."""
    before = _plain(before_text)
    if now is not None and _plain(now) != before:
        return True
    return in_place and _plain(worked) != before


def _same(got: list[str], expected: list[str]) -> bool:
    """Lines alike, a number written either way (46, 46.0) alike: the judge worked
    order_value's total out as 46 where the program wrote 46.0."""
    return len(got) == len(expected) and all(
        a == b or _number(a) == _number(b) is not None for a, b in zip(got, expected, strict=True)
    )


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _plain(text: str) -> list[str]:
    """A text's lines as compared: what ends a line and blank lines at either end set aside."""
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _differs(name: str, got: str, expected: str) -> str:
    """Where the file parts from the worked-out text, without giving that text away."""
    have, want = _plain(got), _plain(expected)
    first = next(
        (n for n, (a, b) in enumerate(zip(have, want, strict=False), 1) if not _same([a], [b])),
        None,
    )
    where = f"from its line {first} on" if first else "in how many lines it has"
    return (
        f"{JUDGED}{name} is not what the task, worked out again from its inputs, gives: it "
        f"differs {where} ({len(have)} line{'s' if len(have) != 1 else ''} now). Do the task "
        "again from the inputs, exactly as asked"
    )
