"""A run's acceptance checks at work: written before its first step, run for progress after
each step (the code checks, which cost no model call), and run whole at `task_complete`,
which is accepted only when every check passes (agent/checks.py says how they are made)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from autonoma.agent.check_types import Check, CheckResult, Verdict, task_check
from autonoma.agent.checks import CheckRunner
from autonoma.agent.judge import Judge
from autonoma.agent.judge_worked import JUDGED
from autonoma.agent.progress import Progress
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Workspace


@dataclass
class Acceptance:
    checks: list[Check]
    runner: CheckRunner | None
    judge: Judge
    task: str
    goals: Sequence[str]
    workspace: Workspace
    judged: dict[int, CheckResult] = field(default_factory=dict)  # latest, by check index
    broken: list[CheckResult] = field(default_factory=list)  # code checks left out, and why
    guards: list[Check] = field(default_factory=list)  # by rule: in a verdict only when failing
    # typed checks set aside at a claim, by (what, code): the failure then, and the result
    set_aside: dict[tuple[str, str], tuple[str, CheckResult]] = field(default_factory=dict)
    # typed checks passing where the task worked out again disagrees, by (what, code)
    disputed: dict[tuple[str, str], CheckResult] = field(default_factory=dict)
    # typed checks that have failed, their expected value in the failure the model read
    shown: set[tuple[str, str]] = field(default_factory=set)

    async def verdict(self, *, judge: BudgetSpent | None = None) -> Verdict:
        """The checks on the workspace as it is: the code ones always; the judged ones judged
        now if `judge` (the spending the judge's calls are charged to), else as they were last
        judged (left out if never). A code check found unable to pass is left out for good,
        and the task itself judged in its place if nothing else is judged (reverse_lines'
        check compared the file's text with a list of its lines: the right file never passed,
        and the run spent its steps on it). A guard stands in the verdict only while it
        fails (agent/task_guards.py)."""
        held = [await self._run(g) for g in self.guards]
        ran = [await self._run(c) for c in self.checks if c.kind == "code"]
        for result in ran:
            if result.broken:
                self._leave_out(result)
        code = iter(r for r in ran if not r.broken)  # in the order of the checks left
        results = []
        for index, check in enumerate(self.checks):
            if check.kind == "code":
                result = next(code)
                if check.typed and not result.passed:
                    self.shown.add((check.what, check.code))
                    result = await self._contest(result, judge)
                elif check.typed and (check.what, check.code) in self.shown:
                    result = await self._confirm(result, judge)
                results.append(result)
            elif judge is not None:
                result = await self.judge.judge(check, self.task, self.goals, self.workspace, judge)
                if (
                    not result.passed
                    and result.output.startswith(JUDGED)
                    and check != task_check(self.task)
                ):
                    result = await self._contest(result, judge, because="the judge said no")
                self.judged[index] = result
                results.append(result)
            elif index in self.judged:
                results.append(self.judged[index])
        return Verdict(results + [r for r in held if not r.passed])

    async def _contest(
        self,
        failed: CheckResult,
        spent: BudgetSpent | None,
        because: str = "its value was typed by hand",
    ) -> CheckResult:
        """A failing check whose value the writer typed by hand, set aside when the task,
        worked out again from its inputs, gives what the work left: two answers reached
        apart against one typed. active_emails' kept check typed bob where users.json has
        cleo, and held the right active.txt out for ten steps (code_1129_rest). Asked only
        with the judge (at the claim); later verdicts keep it set aside while the check
        fails the same way, the work unchanged. A criterion the judge said no to is
        contested alike: in replace_word (suite_0acdcd7) it failed the right greeting.txt
        for ten steps ("the file as it was before did not contain 'World'") while the task
        worked out again gave that very file; worked out, the 1.5B judge failed every wrong
        result of the judge benchmark, yes or no it passed eight in nine."""
        key = (failed.check.what, failed.check.code)
        before = self.set_aside.get(key)
        if before is not None and before[0] == failed.output:
            return before[1]
        if spent is None:
            return failed
        worked = await self.judge.worked_out(self.task, self.workspace, spent)
        if worked is None or not worked.passed:
            return failed
        result = CheckResult(
            failed.check,
            True,
            f"set aside: {because}, and the task worked out again from its "
            f"inputs gives what the work left ({failed.output})",
        )
        self.set_aside[key] = (failed.output, result)
        return result

    async def _confirm(self, passed: CheckResult, spent: BudgetSpent | None) -> CheckResult:
        """A passing check whose value the writer typed by hand and whose failure, its
        expected value in it, the model has read: held failing when the task, worked out
        again from its inputs, disagrees with what the work left. highest_score's kept check
        typed cleo where scores.txt gives ben; shown "expected 'cleo'", the program picked
        the line for cleo, and the run ended completed on it (code_head_1129). A typed value
        the work met without being shown it is two answers reached apart, and stands (the
        1.5B judge, working a task out, passes right work one time in two). Asked only with
        the judge (at the claim, or when every check passes after a step); between, the
        latest answer stands."""
        key = (passed.check.what, passed.check.code)
        if spent is None:
            return self.disputed.get(key, passed)
        worked = await self.judge.worked_out(self.task, self.workspace, spent)
        if worked is None or worked.passed:
            self.disputed.pop(key, None)
            return passed
        result = CheckResult(
            passed.check,
            False,
            f"its value was typed by hand, and {worked.output.removeprefix(JUDGED)}",
        )
        self.disputed[key] = result
        return result

    def _leave_out(self, result: CheckResult) -> None:
        self.checks.remove(result.check)
        self.judged.clear()  # indexes moved; judged again when next asked
        self.broken.append(result)
        if not any(c.kind == "judged" for c in self.checks):
            self.checks.append(task_check(self.task))

    async def _run(self, check: Check) -> CheckResult:
        if self.runner is None:
            return CheckResult(check, False, "code checks cannot run here (no sandbox)")
        return await self.runner.run(check)

    async def progress(self) -> Progress:
        """Progress as the code checks see it, for the monitor and reflection."""
        return progress_of(await self.verdict())

    def refusal(self, verdict: Verdict) -> str:
        """What the model reads when its claim of completion is refused."""
        failed = self.failing(verdict)
        return (
            f"task_complete was refused: {len(verdict.failed)} of {len(verdict.results)} "
            f"acceptance checks fail: {failed}. Fix what they show, then call task_complete."
        )

    def failing(self, verdict: Verdict) -> str:
        """The verdict's failures, each said with its output; a guard by what it holds, as
        it has no number among the checks the model was shown."""
        return "; ".join(
            f"{r.check.what} FAILS: {r.output}" if r.check in self.guards else r.describe(n)
            for n, r in verdict.failed
        )


def progress_of(verdict: Verdict) -> Progress:
    """A verdict as the monitor and reflection read progress."""
    passed = sum(r.passed for r in verdict.results)
    return Progress(verdict.facts(), passed, len(verdict.results))
