"""The judge of the `judged` acceptance checks: what a program cannot decide, the model
judges from the files the goals name (agent/checks.py writes the checks and runs the code
ones)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Container, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from autonoma.agent.check_types import Check, CheckResult, task_check
from autonoma.agent.completion import deliverables, named_files
from autonoma.agent.judge_worked import (
    JUDGED,
    WorkedOut,
    compared,
    inputs_of,
    unconfirmed,
    work_out,
    work_out_by_program,
)
from autonoma.errors import ModelError
from autonoma.llm import Model
from autonoma.memory.asking import ask
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render
from autonoma.tools import Workspace, WorkspaceError
from autonoma.tools.files import text_size
from autonoma.tools.sandbox import Sandbox

JUDGED_BYTES = 200_000  # of a named file shown to the judge (its start, and its size)


class _Judgement(BaseModel):
    # the reason before the verdict: under a grammar the model writes the fields in this
    # order, so the verdict follows from what it wrote rather than leading it
    why: str = Field(max_length=300)
    passed: bool


class Judge:
    """Judges the `judged` checks from the files the goals name, at task_complete: each as
    it is now, as it was before the work if the work changed it (`start`: the workspace as
    the run found it), and the files those name in turn (instructions chained over files).
    With a `sandbox`, a task with inputs is worked out again as a program run there too."""

    def __init__(
        self,
        model: Model,
        found: Container[str] = (),
        start: Path | None = None,
        sandbox: Sandbox | None = None,
    ):
        self.model = model
        self.found = found  # files the run found: gone, they were moved or cleaned up
        self.start = start
        self.sandbox = sandbox
        # the task worked out, by way, task and inputs: asked again at every claim, the model
        # answered the same at temperature 0 for 7 s a claim (count_words, code_full_1129)
        self._worked: dict[tuple[object, ...], WorkedOut | None] = {}
        self._inputs: dict[str, dict[str, str] | None] = {}  # by task: the start never changes

    async def judge(
        self,
        check: Check,
        task: str,
        goals: Sequence[str],
        workspace: Workspace,
        spent: BudgetSpent,
    ) -> CheckResult:
        # a 1.5B judge called a haiku "about autumn" before haiku.txt existed: the files the
        # criterion names must be there
        named = deliverables(workspace, [check.what])
        missing = [d.name for d in named if d.lines is None and d.name not in self.found]
        if missing:
            return CheckResult(check, False, f"{', '.join(missing)} does not exist")
        # the whole task, with inputs that give its answer: worked out again and compared
        if check == task_check(task):
            worked = await self.worked_out(task, workspace, spent)
            if worked is not None:
                return worked
            inputs = await self._inputs_of(task)
            if inputs:
                return CheckResult(check, False, unconfirmed(task, inputs))
        prompt = render(
            "autonoma.agent",
            "judge_check.j2",
            criterion=check.what,
            task=task,
            # a judge cannot know the time: it passed "01:30" for the time in Tokyo at 07:58
            now=datetime.now(UTC).strftime("%A %Y-%m-%d %H:%M"),
            # the files it judges first
            files=_contents(workspace, [check.what, task, *goals], self.start),
        )
        answer = await ask(
            self.model, prompt, spent, output=_Judgement, max_tokens=200, temperature=0.0
        )
        if isinstance(answer, ModelError):
            return CheckResult(check, False, f"the judge gave no usable answer: {answer}")
        judgement: _Judgement = answer.data
        return CheckResult(check, judgement.passed, f"{JUDGED}{judgement.why}")

    def worked_files(self) -> list[dict[str, str]]:
        """The answers worked out so far, each its files' texts by name (for reading a
        judgement over)."""
        return [{f.name: f.text for f in w.files} for w in self._worked.values() if w]

    async def worked_out(
        self, task: str, workspace: Workspace, spent: BudgetSpent
    ) -> CheckResult | None:
        """The whole task worked out again from its inputs and compared with the work; None
        when it has no inputs or no working out names a file to compare. Worked out by a
        program where there is a sandbox, and typed by the model where the program's answer
        is not the work's: work that agrees with either passes. Each is right where the other
        is wrong about as often (judge benchmark: the program miscopied people.csv and left
        iso.txt's dates unconverted, both typed right; typed, it missummed csv_sum and
        miscounted count_lines, both programs right), and a wrong result must match one of
        them exactly to pass."""
        inputs = await self._inputs_of(task)
        if not inputs:
            return None
        check, key = task_check(task), (task, tuple(sorted(inputs.items())))
        ways = [self._typed]
        if self.sandbox is not None:
            ways.insert(0, self._by_program)
        results = []
        for way in ways:
            worked = await self._once((way.__name__, *key), way, task, inputs, spent)
            result = None if worked is None else compared(worked, check, task, workspace, inputs)
            if result is not None and result.passed:
                return result
            results.append(result)
        return next((r for r in results if r is not None), None)

    async def _inputs_of(self, task: str) -> dict[str, str] | None:
        if task not in self._inputs:
            self._inputs[task] = await asyncio.to_thread(inputs_of, task, self.start)
        return self._inputs[task]

    async def _once(
        self,
        key: tuple[object, ...],
        way: Callable[[str, dict[str, str], BudgetSpent], Awaitable[WorkedOut | None]],
        task: str,
        inputs: dict[str, str],
        spent: BudgetSpent,
    ) -> WorkedOut | None:
        # nothing worked out is kept too: from the same inputs the model gives the same
        # nothing, for three programs or a typed answer, at every claim
        if key not in self._worked:
            self._worked[key] = await way(task, inputs, spent)
        return self._worked[key]

    async def _by_program(
        self, task: str, inputs: dict[str, str], spent: BudgetSpent
    ) -> WorkedOut | None:
        assert self.sandbox is not None
        return await work_out_by_program(self.model, self.sandbox, task, inputs, spent)

    async def _typed(
        self, task: str, inputs: dict[str, str], spent: BudgetSpent
    ) -> WorkedOut | None:
        return await work_out(self.model, task, inputs, spent)


def _contents(
    workspace: Workspace, texts: Sequence[str], start: Path | None = None, limit: int = 3000
) -> list[str]:
    """The files the task and goals name, as they are now, for the judge (each cut); a file
    the work changed also as it was before; then the files those name (one hop: the 1.5B
    judge passed "The access code is written in clue.txt." as the code start.txt points to,
    never having seen clue.txt)."""
    shown: list[str] = []
    names = named_files(texts)
    texts_now: list[str] = []
    for name in names:
        try:
            found = workspace.read(name, JUDGED_BYTES)
        except FileNotFoundError:
            shown.append(f"{name}: does not exist")
            continue
        except (OSError, WorkspaceError):
            continue
        text = found.text()
        texts_now.append(text[:limit])
        size = f"{found.size} bytes" if found.cut else text_size(text)
        shown.append(f"{name} ({size}):\n{_cut(text, limit, found.size, found.cut)}")
        old = _before(start, name)
        if old is not None and old != text:
            shown.append(f"{name} as it was before the work:\n{_cut(old, limit)}")
    for name in [n for n in named_files(texts_now) if n not in names][:3]:
        try:
            text = workspace.read(name, JUDGED_BYTES).text()
        except (OSError, WorkspaceError):
            continue  # named but not there: nothing to show
        shown.append(f"{name}, which a file above names ({text_size(text)}):\n{_cut(text, limit)}")
    return shown


def _cut(text: str, limit: int, size: int = 0, cut: bool = False) -> str:
    if len(text) > limit:
        return f"{text[:limit]}\n[... {len(text) - limit} more characters]"
    if cut:
        return f"{text}\n[... {size - len(text.encode())} more bytes]"
    return text


def _before(start: Path | None, name: str) -> str | None:
    """A file's text as the run found it; None if it was not there (or no start is kept).
    Read through the workspace jail, so a name with ../ or a link leads nowhere."""
    if start is None:
        return None
    try:
        found = Workspace(start).read(name, JUDGED_BYTES)
    except (OSError, WorkspaceError):
        return None
    return None if found.cut else found.text()
