"""Acceptance checks: the goals turned into checks before any work, and run when the agent
claims it is done.

A model judging its own finished work calls a file's line count success (docs/benchmarks.md:
9 of 10 failures of the reflection benchmark were wrong answers claimed complete). So at the
start of a run, before its first step, the model writes the checks its goals imply: for what a
program can check, a short Python program run in the sandbox against the workspace (the
workspace read-only, the workspace as the run found it readable through `before(path)`);
for what it cannot, a criterion the model judges (agent/judge.py), marked as judged. Written
first, they cannot be fitted to a wrong result; a check that passes on the workspace as it was
before the run began cannot tell done from not done, and is sent back to be written again.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import re
import tempfile
from collections.abc import Collection, Container, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from autonoma.agent import check_guards as guard
from autonoma.agent import check_harness
from autonoma.agent.check_forms import (
    CodeForm,
    FileForm,
    Form,
    FormError,
    FormNoFunction,
    FunctionForm,
    adds_input_text,
    at_odds,
    characters_of_text,
    extreme_of_text,
    leaves_out_inputs,
    made_up,
    points_elsewhere,
    typed_by_hand,
    typed_value,
)
from autonoma.agent.check_types import Check, CheckKind, CheckResult
from autonoma.agent.completion import deliverables, input_files, named_files
from autonoma.agent.found import file_heads
from autonoma.agent.judge import Judge
from autonoma.agent.judge_worked import write_texts
from autonoma.agent.pysource import mend_json_slips, read_as_found, read_bare_files
from autonoma.agent.stated_case import (
    against_case,
    case_checks,
    computes_recased,
    recases_input,
)
from autonoma.agent.stated_formats import format_checks
from autonoma.agent.stated_lines import line_checks
from autonoma.errors import ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.llm.types import Usage
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.events import ChecksEdited, ChecksWritten
from autonoma.runtime.store import EventRecord
from autonoma.templating import render
from autonoma.tools import Workspace, WorkspaceError
from autonoma.tools.sandbox import Sandbox, SandboxError, SandboxResult

HARNESS = Path(check_harness.__file__).read_text(encoding="utf-8")
INPUT_BYTES = 20_000  # of an input file, to find text a check adds that it already holds
TOLERATED_NOTE = "passes once the blank lines at the files' ends are set aside"
BY_LINE_NOTE = "passes when the texts it takes with before() go through their lines"
START_INSIDE = "/start"  # where a bubblewrap check sees the workspace as the run found it
# Errors a code check may fail with before the work: what it reads is not there yet, or it
# does not hold what it must. Anything else (NameError, KeyError, SyntaxError) is the check's
# own bug.
MEANINGFUL_FAILURES = ("AssertionError", "FileNotFoundError", "ModuleNotFoundError", "ImportError")


class _Written(BaseModel):
    checks: list[Form] = Field(min_length=1, max_length=6)


class _WrittenNoFunction(BaseModel):
    checks: list[FormNoFunction] = Field(min_length=1, max_length=6)


def made_checks(
    forms: Sequence[Form],
    goals: int,
    *,
    said: Sequence[str] = (),
    inputs: Sequence[str] = (),
    told: set[str] | None = None,
    typed: list[Check] | None = None,
    held: Mapping[str, str] | None = None,
) -> tuple[list[Check], list[str]]:
    """The written forms made into checks, and why each that could not be was sent back.
    `said`: the task and goals, whose own values may be typed; `inputs`: the workspace's
    files they name, from which any other value is to be computed. `told`: the values
    already sent back as typed by hand (added to here); one typed again is kept as meant:
    in an everyday run the writer typed iso_dates' and reverse_lines' right lines three
    rounds running, was sent back each time, and the task judged instead passed wrong work.
    `typed`: the checks of every form with a typed value, sent back or not, are added here.
    A check kept with a typed value is marked `typed`: failing at task_complete, it is
    contested by the task worked out again (acceptance.py).
    `held`: the inputs' texts, by name."""
    checks, problems = [], []
    odds = at_odds(forms)
    for index, form in enumerate(forms):
        by_hand = False
        try:
            if index in odds:
                raise FormError(odds[index])
            code = form.program()
            if isinstance(form, FileForm) and (why := made_up(form, said, inputs)):
                raise FormError(why)
            if isinstance(form, FileForm) and (why := leaves_out_inputs(form, said, inputs)):
                raise FormError(why)
            if isinstance(form, FileForm) and against_case(form.expected, said):
                raise FormError(
                    f"has expected {form.expected.strip()[:60]!r}, not in the letter case the "
                    "task asks for: compute it, or write it as the task says"
                )
            if isinstance(form, FileForm) and (
                why := recases_input(form.expected, said, held or {})
            ):
                raise FormError(why)
            if isinstance(form, FileForm) and (why := typed_by_hand(form, said, inputs)):
                by_hand = True
                if typed is not None:
                    typed.append(
                        Check(goal=min(form.goal, goals), what=form.what, code=code, typed=True)
                    )
                key = f"{form.file}\0{form.expected.strip()}"
                if told is None or key not in told:
                    if told is not None:
                        told.add(key)
                    raise FormError(why)
            if isinstance(form, FunctionForm) and said and not _asks_for_a_module(said):
                # the 1.5B writer's form for "the time in Tokyo", a function of its own
                raise FormError(
                    "is a function form, but the task asks for no Python function in a .py "
                    'file: write it as a "code" check, a whole program that asserts it'
                )
        except FormError as error:
            problems.append(f"the check {form.what!r} {error}")
            continue
        kind: CheckKind = "judged" if form.kind == "judged" else "code"
        checks.append(
            Check(goal=min(form.goal, goals), what=form.what, kind=kind, code=code, typed=by_hand)
        )
    return checks, problems


def _texts(workspace: Workspace, names: Sequence[str]) -> dict[str, str]:
    """The named files' texts as the writer found them (cut at INPUT_BYTES)."""
    found = {}
    for name in names:
        try:
            found[name] = workspace.read(name, INPUT_BYTES).text()
        except (OSError, WorkspaceError):
            continue
    return found


def stated_checks(task: str, there: Container[str]) -> list[Check]:
    """Programs of ours for what the task's words state of a new file: its date or time
    format, its line count, its letter case (`there`: the workspace's files at the start)."""
    return [*format_checks(task, there), *line_checks(task, there), *case_checks(task, there)]


def files_read(form: Form, there: Collection[str]) -> Form:
    """The form with each workspace file it names bare read (pysource.read_bare_files), and
    the files its expected value opens read as the run found them (pysource.read_as_found)."""
    if isinstance(form, FileForm):
        expected = read_as_found(read_bare_files(form.expected, there), there)
        return form.model_copy(update={"expected": expected})
    if isinstance(form, CodeForm):
        return form.model_copy(update={"code": read_bare_files(form.code, there)})
    return form


def _typed_text(expected: str) -> str | None:
    """A file's text as a typed value gives it (a list's items one a line), or None when the
    value is computed."""
    value = typed_value(expected)
    if isinstance(value, list | tuple):
        return "".join(f"{item}\n" for item in value)
    return f"{value}\n" if isinstance(value, str | int | float) else None


def _printed_value(printed: str) -> object:
    """A value as FileForm.value_program printed it: a list's or tuple's repr read back, any
    other text as it is."""
    if printed.startswith(("[", "(")):
        try:
            return ast.literal_eval(printed)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            pass
    return printed


def _asks_for_a_module(said: Sequence[str]) -> bool:
    return any(name.endswith(".py") for name in named_files(said))


@dataclass
class Written:
    """What writing the checks gave: the checks kept, those sent back (and why), the tokens."""

    checks: list[Check] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    error: str = ""


def checks_block(checks: Sequence[Check]) -> str:
    """The checks as the step prompt shows them (fixed for the run: the prompt's head). What
    each checks, not its code: a 1.5B model read the code's failure message as the state of
    the workspace ("three lines, but they are empty") and undid finished work."""
    lines = ["Acceptance checks task_complete runs (written from your goals before the work):"]
    lines += [f"{n}. {check.what}" for n, check in enumerate(checks, 1)]
    # said here, in the run's fixed head, not in each step's closing, where no cache holds it
    lines.append("task_complete is refused while one of them fails.")
    return "\n".join(lines)


class CheckRunner:
    """Runs code checks in the sandbox against the workspace (read-only), with the workspace
    as the run found it (`start`) readable through `before(path)`."""

    def __init__(self, sandbox: Sandbox, workspace: Workspace, start: Path) -> None:
        self.sandbox = sandbox
        self.workspace = workspace
        self.start = start
        self._seen: dict[str, CheckResult] = {}  # (check, workspace fingerprint) -> result

    async def run(self, check: Check) -> CheckResult:
        key = _key(check, await asyncio.to_thread(fingerprint, self.workspace))
        if key not in self._seen:
            self._seen[key] = await self._run(check)
        return self._seen[key]

    async def passes_with(self, check: Check, files: dict[str, str]) -> bool:
        """Whether the check passes on a copy of the workspace's small files with `files`
        (path -> text) written over them: a probe of what the check accepts."""
        return (await self.probe(check, files)).passed

    async def probe(self, check: Check, files: dict[str, str]) -> CheckResult:
        """The check's result on such a copy."""
        with tempfile.TemporaryDirectory(prefix="autonoma-probe-") as root:
            await asyncio.to_thread(_probe_copy, self.workspace, Path(root), files)
            return await self._run(check, Path(root))

    async def _run(self, check: Check, root: Path | None = None) -> CheckResult:
        tolerant = not _ABOUT_ENDINGS.search(f"{check.what}\n{check.code}")
        try:
            result = await self._harness(check.code, root or self.workspace.root, tolerant)
        except SandboxError as error:
            return CheckResult(check, False, f"the check could not run: {error}")
        if result.ok:
            notes = {check_harness.TOLERATED: TOLERATED_NOTE, check_harness.BY_LINE: BY_LINE_NOTE}
            said = [note for line, note in notes.items() if line in result.stderr]
            return CheckResult(check, True, said[0] if said else "")
        told = result.stopped or _tail(result.stderr) or f"exit code {result.exit_code}"
        broken, gap = (
            next(
                (line.removeprefix(said) for line in result.stderr.splitlines()
                 if line.startswith(said)),
                "",
            )
            for said in (check_harness.NEVER, check_harness.GAP)
        )  # fmt: skip
        return CheckResult(check, False, f"{told} ({gap})" if gap else told, broken)

    async def printed(self, program: str) -> str | None:
        """What a program prints run like a check on the workspace, or None if it fails."""
        try:
            result = await self._harness(program, self.workspace.root, tolerant=False)
        except SandboxError:
            return None
        return result.stdout if result.ok and not result.stdout_truncated else None

    async def _harness(self, code: str, root: Path, tolerant: bool) -> SandboxResult:
        """`code` run by the check harness in the sandbox on `root`, read-only, with the
        workspace as the run found it readable through `before(path)`."""
        inside = self.sandbox.isolated
        return await self.sandbox.run(
            [self.sandbox.python, "-I", "-c", HARNESS],
            workspace=root,
            stdin=code,
            writable=False,
            env={
                "AUTONOMA_START": START_INSIDE if inside else str(self.start),
                "AUTONOMA_NEWLINE_TOLERANT": "1" if tolerant else "0",
            },
            binds=[(self.start, START_INSIDE)] if inside and self.start.is_dir() else [],
        )

    async def run_all(self, checks: Sequence[Check]) -> list[CheckResult]:
        return [await self.run(c) for c in checks if c.kind == "code"]


PROBE_FILES = 500  # a workspace larger than this is probed with the files a check names
PROBE_BYTES = 20_000_000


def _probe_copy(workspace: Workspace, root: Path, files: dict[str, str]) -> None:
    """The workspace's files (or, past PROBE_FILES or PROBE_BYTES, none) copied under
    `root`, then `files` written over them."""
    copied, total = 0, 0
    for entry in workspace.walk():
        st = entry.stat
        if st is None or copied >= PROBE_FILES or total + st.st_size > PROBE_BYTES:
            continue
        try:
            data = workspace.read(entry.path, PROBE_BYTES).data
        except (OSError, WorkspaceError):
            continue
        target = root / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        copied, total = copied + 1, total + len(data)
    write_texts(root, files)


# a check about line endings themselves is run as written (check_harness.py)
_ABOUT_ENDINGS = re.compile(
    r"newline|new line|line break|line ending|trailing|endswith|ends? with", re.IGNORECASE
)


def fingerprint(workspace: Workspace) -> str:
    """Names, sizes and modification times of the workspace's files: what a check can see
    changing. Cheap enough to take every step."""
    digest = hashlib.sha256()
    for entry in workspace.walk():
        st = entry.stat
        size, mtime = (st.st_size, st.st_mtime_ns) if st else (-1, -1)
        digest.update(f"{entry.path}\0{size}\0{mtime}\0".encode())
    return digest.hexdigest()


def content_print(workspace: Workspace, most: int = 1 << 20) -> str:
    """Names and contents of the workspace's files (size and time for a file over `most`
    bytes): whether a step changed anything, a rewrite with the same text included."""
    digest = hashlib.sha256()
    for entry in workspace.walk():
        st = entry.stat
        if st is not None and st.st_size <= most:
            try:
                data = workspace.read(entry.path, most).data
                digest.update(f"{entry.path}\0".encode() + hashlib.sha256(data).digest())
                continue
            except (OSError, WorkspaceError):
                pass
        size, mtime = (st.st_size, st.st_mtime_ns) if st else (-1, -1)
        digest.update(f"{entry.path}\0{size}\0{mtime}".encode())
    return digest.hexdigest()


def _key(check: Check, print_: str) -> str:
    return hashlib.sha256(f"{check.model_dump_json()}\0{print_}".encode()).hexdigest()


def _tail(stderr: str, limit: int = 400) -> str:
    """A failed check's error as one line: "AssertionError: ... (line 3 of the check)" (not
    "check.py": a retried task's goal quoting it named a file for the work to make), from the
    exception's own line on (its message may span lines: a file's text in an f-string), the
    start kept when it is long, since the error's name comes first."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    raised = [i for i, line in enumerate(lines) if _RAISED.match(line)]
    error = " ".join(line.strip() for line in lines[raised[-1] :]) if raised else lines[-1]
    if len(error) > limit:
        error = error[: limit - 1] + "…"
    at = [m.group(1) for m in map(_CHECK_LINE.search, lines) if m]
    where = f"line {at[-1]} of the check" if at else ""
    frames = [m.groups() for m in map(_FRAME.search, lines) if m]
    if frames and frames[-1][0] != "check.py" and not _LIBRARY.search(frames[-1][0]):
        # the error is in a file the work made (a module the check imports): name it, or the
        # model reads "SyntaxError (line 2 of the check)" as the check's fault
        path, line = frames[-1]
        where = f"in {Path(path).name}, line {line}" + (f", reached from {where}" if at else "")
    return f"{error} ({where})" if where else error


_CHECK_LINE = re.compile(r'File "check\.py", line (\d+)')
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_LIBRARY = re.compile(r"^<|/lib/python|site-packages|/usr/lib/")
# a traceback's last part: the exception's name at the line's start ("json.JSONDecodeError: …")
_RAISED = re.compile(r"(?:\w+\.)*(\w+(?:Error|Exception|Exit|Interrupt))\b")


_NO_FILE = re.compile(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'")
_MISSING_MODULE = re.compile(r"No module named '(\w+)")


def _error_name(output: str) -> str:
    found = _RAISED.match(output)
    return found.group(1) if found else ""


class CheckWriter:
    """Asks the model for the checks and keeps those that fail on the workspace as it is now,
    before any work, for a reason that means something: code checks are run, judged ones
    judged. Problems are quoted back and the checks written again (twice at most: a round
    re-asked shares the first's prompt, so llama.cpp's cache makes it cost a few seconds, and
    the 1.5B writer's second round still broke a check in count_lines); the round that kept
    the most is kept."""

    def __init__(
        self, model: Model, runner: CheckRunner | None, *, judge: Judge | None = None,
        reasks: int = 2,
    ) -> None:  # fmt: skip
        self.model = model
        self.runner = runner
        self.judge = judge
        self.reasks = reasks

    async def write(
        self, task: str, goals: Sequence[str], workspace: Workspace, spent: BudgetSpent
    ) -> Written:
        """The checks; the writer's calls are in `usage` (charge them), the judge's are
        charged to `spent` as they are made."""
        written = Written()
        problems: list[str] = []
        best: list[Check] = []
        coded: set[str] = set()  # what earlier rounds wrote as code
        there = set(workspace.files())  # the inputs a value is computed from, read once
        inputs = input_files([task, *goals], there)
        held = _texts(workspace, inputs)
        told: set[str] = set()  # values said to be typed by hand, once each
        # what the task's own words hold a file to, by programs of ours (loop_checks adds
        # them to the run's checks): a value typed against them is sent back
        stated = stated_checks(task, there)
        typed: list[Check] = []  # their checks, better than the task judged if no other
        for round_ in range(self.reasks + 1):
            prompt = render(
                "autonoma.agent",
                "acceptance_checks.j2",
                task=task,
                goals=goals,
                files=file_heads(workspace),
                code=self.runner is not None,
                problems=problems,
            )
            try:
                response = await self.model.request(
                    [{"role": "user", "content": prompt}],
                    output=_Written if _asks_for_a_module([task, *goals]) else _WrittenNoFunction,
                    max_tokens=900,
                    # hotter when re-asked: at 0.2 the 1.5B writer, told its check failed
                    # with NotADirectoryError on names.txt, wrote the same check three times
                    temperature=0.2 if round_ == 0 else 0.7,
                )
            except (OutputInvalid, ModelRefused) as error:
                written.usage = written.usage + Usage(
                    prompt_tokens=error.prompt_tokens, completion_tokens=error.completion_tokens
                )
                written.cost_usd += error.cost_usd
                written.error = str(error)
                break  # the model layer re-asked already; more would cost without helping
            written.usage = written.usage + response.usage
            written.cost_usd += response.cost_usd
            typed_now: list[Check] = []
            forms = [files_read(form, there) for form in response.data.checks]
            checks, unmade = made_checks(
                forms, len(goals), said=[task, *goals], inputs=inputs,
                told=told, typed=typed_now, held=held,
            )  # fmt: skip
            pointers = await self._pointers(forms, there, [task, *goals], held)
            pointers |= await self._against_stated(forms, stated)
            typed_now = [c for c in typed_now if c.what not in pointers]
            typed = typed_now or typed  # the last round's: two rounds' values may disagree
            pointers |= {
                form.what: why
                for form in forms
                if isinstance(form, FileForm) and (why := adds_input_text(form, held))
            }
            checks = [c for c in checks if c.what not in pointers]
            unmade += [f"the check {what!r} {why}" for what, why in pointers.items()]
            kept, problems = await self._sift(checks, task, goals, workspace, spent, coded)
            problems = unmade + problems
            # what it wrote as code, made into a program or not: a criterion sent back as a
            # function form came back judged, and its judge passed a guessed time in Tokyo
            coded |= {guard.plain(f.what) for f in response.data.checks if f.kind != "judged"}
            written.discarded += problems
            if len(kept) > len(best) or (kept and not problems):
                best = kept
            if not problems:
                break
        if not best and typed:
            # The 1.5B judge passed wrong work for the task judged in their place (1, 4, 9 for
            # red, green and blue; '25-7/-/2' for a date): a value typed wrong ends a run
            # unfinished, while a judge fooled ends it completed wrongly.
            best, _ = await self._sift(typed, task, goals, workspace, spent)
            if best:
                written.discarded.append(
                    "no check computing its value was written, so the checks with values "
                    "typed by hand were kept rather than the task judged"
                )
        written.checks = best[:6]
        if written.checks:
            written.error = ""
        elif not written.error:
            written.error = "no usable check was written: " + "; ".join(written.discarded[-3:])
        return written

    async def _pointers(
        self,
        forms: Sequence[Form],
        there: AbstractSet[str],
        said: Sequence[str] = (),
        held: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Why each file form whose expected value, as its program computes it, points at
        another file or changes its input's letter case was sent back, by its `what`. Every
        time: told once, with "if the text itself is the answer, write the same again", the
        1.5B writer wrote the same again for two_hops, and the run finished on the pointer."""
        if self.runner is None:
            return {}
        found: dict[str, str] = {}
        for form in forms:
            if not isinstance(form, FileForm) or form.holds == "json":
                continue
            try:
                program = form.value_program()
            except FormError:
                continue  # made_checks says why
            value = await self.runner.printed(program)
            why = points_elsewhere(form, value or "", sorted(there))
            if not why and value is not None:
                why = extreme_of_text(form, value, said)
            if not why and value:
                why = characters_of_text(form, _printed_value(value))
            if not why and value and typed_value(form.expected) is None:
                why = computes_recased(_printed_value(value), said, held or {})
            if why:
                found[form.what] = why
        return found

    async def _against_stated(
        self, forms: Sequence[Form], stated: Sequence[Check]
    ) -> dict[str, str]:
        """Why each file form whose typed value fails a check of what the task states of that
        file (its format, line count, letter case) was sent back, by its `what`. Every time,
        and never kept as a typed value: for iso_dates, "like 2024-03-14", the 1.5B writer
        typed '2024-14-03' twice, the check was kept, and no file could pass both it and the
        format's (mend2_1129)."""
        if self.runner is None or not stated:
            return {}
        found: dict[str, str] = {}
        for form in forms:
            if not isinstance(form, FileForm) or form.holds == "json":
                continue
            text = _typed_text(form.expected)
            if text is None:
                continue
            for check in stated:
                if repr(form.file) not in check.code or "getmtime" in check.code:
                    continue  # another file's, or held to the clock when written
                probe = await self.runner.probe(check, {form.file: text})
                if not probe.passed:
                    found[form.what] = (
                        f"has expected {form.expected.strip()[:60]!r}, which fails what the "
                        f"task states of {form.file}: {probe.output or check.what}. Compute "
                        "the value from the input with Python, or write it as the task says"
                    )
                    break
        return found

    async def _sift(
        self,
        checks: Sequence[Check],
        task: str,
        goals: Sequence[str],
        workspace: Workspace,
        spent: BudgetSpent,
        coded: AbstractSet[str] = frozenset(),
    ) -> tuple[list[Check], list[str]]:
        kept, problems = [], []
        for check in checks:
            mended = mend_json_slips(check.code) if check.kind == "code" else ""
            check = check.model_copy(update={"goal": min(check.goal, len(goals)), "code": mended})
            foreign = guard.foreign_files(check, [task, *goals], workspace)
            if foreign:
                problem = foreign
            elif (
                check.kind == "judged"
                and self.runner is not None
                and guard.plain(check.what) in coded
            ):
                # the 1.5B writer's way out of a code check sent back: the same criterion,
                # judged, which its judge then passed on a wrong count
                problem = (
                    "was code in your last checks: a program can decide it, so mend the "
                    "program rather than judge it"
                )
            elif check.kind == "judged":
                problem = await self._judged_problem(check, task, goals, workspace, spent)
            else:  # what can be seen without running it first: its message is the clearer
                problem = self._unrunnable(check)
                problem = problem or guard.reads_no_result(check, [task, *goals], workspace)
                problem = problem or guard.before_of_the_new(check, workspace)
                problem = problem or await self._fails_for_nothing(check, [task, *goals])
                problem = problem or await self._passes_on_junk(check, [task, *goals], workspace)
            if problem:
                problems.append(f"the check {check.what!r} {problem}")
            elif check not in kept:
                kept.append(check)
        return kept, problems

    async def _judged_problem(
        self,
        check: Check,
        task: str,
        goals: Sequence[str],
        workspace: Workspace,
        spent: BudgetSpent,
    ) -> str:
        if self.judge is None:
            return ""
        verdict = await self.judge.judge(check, task, goals, workspace, spent)
        if verdict.passed:
            return "is met already, before any work, so it cannot tell done from not done"
        return ""

    def _unrunnable(self, check: Check) -> str:
        if self.runner is None:
            return "is code, but code cannot run here: write judged checks only"
        if not check.code.strip():
            return "has no code"
        try:
            compile(check.code, "check.py", "exec")
        except SyntaxError as error:
            return f"is not valid Python: {error.msg} (line {error.lineno})"
        if not guard.asserts(check.code):
            return "asserts nothing, so it checks only that its files can be read: add an assert"
        written = guard.writes(check.code)
        if written:
            return (
                f"writes {written}, but a check only reads: the workspace is read-only to it, "
                "so it fails whatever the work does; read the file and assert what it holds"
            )
        return ""

    async def _fails_for_nothing(self, check: Check, texts: Sequence[str]) -> str:
        """Run on the workspace before the work: a check must fail, and for a reason."""
        assert self.runner is not None
        result = await self.runner.run(check)
        if result.passed:
            return (
                "passes on the workspace as it is now, before any work, so it cannot tell "
                "done from not done: check the result the goal asks for"
            )
        if _error_name(result.output) not in MEANINGFUL_FAILURES:
            return f"is broken: before any work it fails with {result.output}"
        absent = _NO_FILE.search(result.output)
        if absent and Path(absent.group(1)).name not in self._made(texts, check):
            # the 1.5B writer read ' part3.txt' for part3.txt: a file no work will make
            name = absent.group(1)
            return (
                f"reads {name!r}, which is not in the workspace and is not a file the task "
                "makes, so it can never pass: read the files as the workspace names them"
            )
        missing = _MISSING_MODULE.search(result.output)
        if missing and not re.search(rf"\b{re.escape(missing.group(1))}\b", " ".join(texts)):
            # the 1.5B writer checked an API's figures with `import requests`: not installed
            # where checks run, no goal makes it, so the check could never pass
            return (
                f"imports {missing.group(1)}, which is not installed where checks run and no "
                "goal asks the work to make: read the workspace's files with the standard "
                "library"
            )
        return ""

    def _made(self, texts: Sequence[str], check: Check) -> set[str]:
        """The names of the files the work must make, as the task, goals and check say."""
        assert self.runner is not None
        found = deliverables(self.runner.workspace, [*texts, check.what])
        return {Path(d.name).name for d in found if d.lines is None}

    async def _passes_on_junk(
        self, check: Check, texts: Sequence[str], workspace: Workspace
    ) -> str:
        """A check must fail when the files the work makes hold the wrong thing: a line of
        junk (a check of existence or of any content passes it), and the words the check
        looks for, quoted and run together (a check that finds them anywhere passes it: in
        CI the 1.5B model appended 'red', 'green' and 'blue' one by one, quotes and all,
        and a one-per-line goal was checked done)."""
        assert self.runner is not None
        made = [
            d.name
            for d in deliverables(workspace, [*texts, check.what])
            if d.lines is None and guard.mentions(check.code, d.name)
        ]
        if not made:
            return ""
        junk = "not the result\n"
        if await self.runner.passes_with(check, dict.fromkeys(made, junk)):
            return (
                f"passes when {made[0]} holds anything (it passed with {junk.strip()!r} in "
                "it): check the content the goal asks for, not only that the file is there"
            )
        sought = guard.sought_strings(check.code, made)
        soup = "".join(f"'{word}'" for word in sought)
        if sought and await self.runner.passes_with(check, dict.fromkeys(made, soup)):
            return (
                f"passes when {made[0]} holds only the words it looks for, quoted and run "
                f"together ({soup[:80]}), so it cannot tell the layout the goal asks for: "
                "compare the file's lines or words with the whole expected list"
            )
        return ""


def checks_to_text(checks: Sequence[Check]) -> str:
    """The checks as a person edits them: a header line a check, its code below."""
    parts = [
        "# Acceptance checks. Each starts with a header line:\n"
        "#   ## check (code|judged) [goal N]: what it checks\n"
        "# A code check's Python follows its header; it passes when it runs without an error.\n"
        "# Delete a check to drop it; leave the file empty to have no checks.\n"
    ]
    for check in checks:
        goal = f" goal {check.goal}" if check.goal else ""
        parts.append(f"## check {check.kind}{goal}: {check.what}\n{check.code.strip()}\n")
    return "\n".join(parts)


_HEADER = re.compile(r"^## check (code|judged)(?: goal (\d+))?: (.+)$")


def checks_from_text(text: str) -> list[Check]:
    """Parse `checks_to_text`'s format back; ValueError naming the line that is wrong."""
    checks: list[Check] = []
    current: dict[str, object] | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            code = "\n".join(body).strip() if current["kind"] == "code" else ""
            checks.append(Check.model_validate({**current, "code": code}))

    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            match = _HEADER.match(line.strip())
            if not match:
                raise ValueError(f"line {number}: not a check header: {line.strip()!r}")
            close()
            kind, goal, what = match.groups()
            current, body = {"kind": kind, "goal": int(goal or 0), "what": what.strip()}, []
        elif current is None:
            if line.strip() and not line.startswith("#"):
                raise ValueError(f"line {number}: text before the first check header")
        else:
            body.append(line)
    close()
    for check in checks:
        if check.kind == "code" and not check.code:
            raise ValueError(f"the code check {check.what!r} has no code")
    return checks


def stored_checks(events: Sequence[EventRecord]) -> list[Check] | None:
    """The run's checks from its events (the latest written or edited), None if none."""
    found = None
    for record in events:
        if isinstance(event := record.event, ChecksWritten | ChecksEdited):
            found = [Check.model_validate(c) for c in event.checks]
    return found


# a check, its result, the verdict and the judge are defined in agent/check_types.py and
# agent/judge.py, and named here too: the checks' whole surface in one import
__all__ = [
    "CheckRunner",
    "CheckWriter",
    "Written",
    "checks_block",
    "checks_from_text",
    "checks_to_text",
    "content_print",
    "fingerprint",
    "stored_checks",
]
