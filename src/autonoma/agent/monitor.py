"""The Monitor: notices, from a run's stored steps, that the agent is looping or stuck.

Pure and deterministic: it reads `StepRecord`s (and, if given, the workspace's file listing
after each step and the budget) and returns `Detection`s with their evidence. It keeps a little
state so that it is cheap to call after every step and reports each detection once: only
detections whose evidence ends at the newest step are reported, and a step is looked at once.
docs/reflection.md describes every detection and setting.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

from autonoma.agent.action import Action
from autonoma.runtime.budget import BudgetLimits, BudgetSpent
from autonoma.runtime.store import StepRecord

DetectionKind = Literal["repeat", "cycle", "stalled", "no_action", "budget_burn", "periodic"]

Files = Mapping[int, Collection[str]] | Callable[[int], Collection[str] | None]
"""The workspace's file listing after step n (a mapping, or a callable returning None when
unknown)."""

ACTING_COMMANDS = (
    "write_file",
    "append_file",
    "delete_file",
    "execute_python",
    "execute_python_file",
    "execute_shell",
    "task_complete",
    "remember",
    "start_agent",
    "message_agent",
    "delete_agent",
)
WORK_WORDS = (
    "write",
    "create",
    "save",
    "run",
    "execute",
    "append",
    "delete",
    "implement",
    "fix",
    "build",
    "test",
    "finish",
    "complete",
    "produce",
    "generate",
    "edit",
    "update",
)


class MonitorSettings(BaseModel):
    """Counts and stretches, in steps. A value of 0 turns that detection off."""

    repeat_count: int = Field(3, ge=0)
    """The same command, arguments and observation this many times in a row is a repeat."""
    cycle_periods: list[int] = Field(default_factory=lambda: [2, 3])
    """Cycle lengths looked for (a period of 1 is a repeat)."""
    cycle_repeats: int = Field(2, ge=0)
    """How many times the whole cycle must occur in a row (A,B,A,B is period 2, 2 repeats)."""
    stall_steps: int = Field(6, ge=0)
    """This many steps in a row that change nothing is stalled."""
    no_action_steps: int = Field(5, ge=0)
    """This many steps in a row that do not act while the plan announces work is no_action."""
    burn_share: float = Field(0.5, ge=0, le=1)
    """Budget burn fires once this share of any limited budget (steps, tokens, money, time)
    is spent..."""
    burn_window: int = Field(5, ge=0)
    """...and none of the last this-many steps changed anything (or `progress` is below half
    the spent share)."""
    periodic_every: int = Field(10, ge=0)
    """A periodic self-check at every step number divisible by this."""
    acting_commands: list[str] = Field(default_factory=lambda: list(ACTING_COMMANDS))
    """Commands that change something when they succeed."""
    work_words: list[str] = Field(default_factory=lambda: list(WORK_WORDS))
    """Words in a plan that announce work (matched as whole words, any case)."""


class Detection(BaseModel):
    """One finding: its kind, the step numbers that are its evidence, and one line."""

    kind: DetectionKind
    steps: list[int]
    evidence: str


@dataclass(frozen=True)
class _Seen:
    """What the Monitor keeps of one step."""

    n: int
    key: str  # command + arguments + observation + status
    label: str  # command(arguments), short
    changed: bool
    acting: bool
    announces_work: bool


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _label(step: StepRecord) -> str:
    if step.status == "invalid":
        return "an invalid answer"
    args = json.dumps(step.arguments, sort_keys=True, ensure_ascii=False)
    if len(args) > 60:
        args = args[:57] + "..."
    return f"{step.command}({args})"


def _lookup(files: Files, n: int) -> frozenset[str] | None:
    listing = files.get(n) if isinstance(files, Mapping) else files(n)
    return None if listing is None else frozenset(listing)


def _span(steps: list[int]) -> str:
    return f"steps {steps[0]}-{steps[-1]}" if len(steps) > 1 else f"step {steps[0]}"


class Monitor:
    """Call `check` after every finished step with the run's steps so far.

    A Monitor rebuilt for a resumed run is given `after`, the newest step already checked
    before the run stopped: it reads the earlier steps (to know what was seen) but reports
    nothing whose evidence ends at or before `after`.
    """

    def __init__(self, settings: MonitorSettings | None = None, *, after: int = 0) -> None:
        self.settings = settings or MonitorSettings()
        self._acting = frozenset(self.settings.acting_commands)
        words = "|".join(re.escape(w) for w in self.settings.work_words)
        self._work = re.compile(rf"\b(?:{words})\w*\b", re.IGNORECASE) if words else None
        self._seen: list[_Seen] = []
        self._observations: set[str] = set()
        self._last_files: frozenset[str] | None = None
        self._checked = after
        self._burn_from: int | None = None  # the step budget burn last fired at

    def check(
        self,
        steps: Sequence[StepRecord],
        *,
        limits: BudgetLimits | None = None,
        spent: BudgetSpent | None = None,
        files: Files | None = None,
        progress: float | None = None,
    ) -> list[Detection]:
        """New detections at the newest finished step, or [] if no step is new.

        `steps` are the run's steps in order (all of them, or at least every step not given
        before). `progress` is an optional checked share of the goal met (0..1), for example
        deliverables that exist out of those required.
        """
        for step in steps:
            if step.status == "running":
                break
            if self._seen and step.n <= self._seen[-1].n:
                continue
            self._seen.append(self._read(step, files))
        if not self._seen or self._seen[-1].n <= self._checked:
            return []
        self._checked = self._seen[-1].n
        found: list[Detection] = []
        for detect in (self._repeat, self._cycles, self._stalled, self._no_action):
            found.extend(detect())
        found.extend(self._budget_burn(limits, spent, progress))
        found.extend(self._periodic())
        return found

    # reading a step

    def _read(self, step: StepRecord, files: Files | None) -> _Seen:
        observation = step.observation or ""
        if observation.startswith(REFUSED_REPEAT) and self._seen:
            return replace(self._seen[-1], n=step.n, changed=False)  # the repeat it refused
        key = _digest(
            "\x00".join(
                [
                    step.status,
                    step.command,
                    json.dumps(step.arguments, sort_keys=True, default=str),
                    observation,
                ]
            )
        )
        succeeded = step.status == "done" and step.ok is True
        acting = step.status != "invalid" and step.command in self._acting
        changed = False
        if succeeded:
            seen = _digest(observation)
            changed = step.command in self._acting or seen not in self._observations
            self._observations.add(seen)
        if files is not None:
            listing = _lookup(files, step.n)
            if listing is not None:
                if self._last_files is not None and listing != self._last_files:
                    changed = True
                self._last_files = listing
        plan = str(step.thoughts.get("plan") or "")
        announces = bool(self._work and plan.strip() and self._work.search(plan))
        return _Seen(step.n, key, _label(step), changed, acting, announces)

    # detections; each looks at the trailing steps only

    def _repeat(self) -> list[Detection]:
        count = self.settings.repeat_count
        if count < 2:
            return []
        last = self._seen[-1]
        run = 1
        for earlier in reversed(self._seen[:-1]):
            if earlier.key != last.key:
                break
            run += 1
        if run < count or run % count:
            return []
        steps = [s.n for s in self._seen[-run:]]
        return [
            Detection(
                kind="repeat",
                steps=steps,
                evidence=f"{last.label} {run} times in a row with the same observation "
                f"({_span(steps)})",
            )
        ]

    def _cycles(self) -> list[Detection]:
        found = []
        repeats = self.settings.cycle_repeats
        if repeats < 2:
            return []
        keys = [s.key for s in self._seen]
        for period in sorted(set(self.settings.cycle_periods)):
            if period < 2 or len(keys) < period * repeats:
                continue
            block = keys[-period:]
            if any(
                period % p == 0 and block == block[-p:] * (period // p) for p in range(1, period)
            ):
                continue  # really a shorter period (or a repeat)
            span = period
            while span < len(keys) and keys[-span - 1] == keys[-span - 1 + period]:
                span += 1
            if span < period * repeats or span % (period * repeats):
                continue
            steps = [s.n for s in self._seen[-span:]]
            labels = ", ".join(s.label for s in self._seen[-period:])
            found.append(
                Detection(
                    kind="cycle",
                    steps=steps,
                    evidence=f"a cycle of {period} steps ({labels}) {span // period} times "
                    f"in a row with the same observations ({_span(steps)})",
                )
            )
        return found

    def _idle_run(self) -> int:
        run = 0
        for seen in reversed(self._seen):
            if seen.changed:
                break
            run += 1
        return run

    def _stalled(self) -> list[Detection]:
        stretch = self.settings.stall_steps
        run = self._idle_run()
        if stretch < 1 or run < stretch or run % stretch:
            return []
        steps = [s.n for s in self._seen[-run:]]
        return [
            Detection(
                kind="stalled",
                steps=steps,
                evidence=f"{run} steps in a row changed nothing: no successful write or "
                f"command, no new observation, no new file ({_span(steps)})",
            )
        ]

    def _no_action(self) -> list[Detection]:
        stretch = self.settings.no_action_steps
        if stretch < 1:
            return []
        run = 0
        for seen in reversed(self._seen):
            if seen.acting:
                break
            run += 1
        if run < stretch or run % stretch:
            return []
        tail = self._seen[-run:]
        if not any(s.announces_work for s in tail):
            return []
        steps = [s.n for s in tail]
        return [
            Detection(
                kind="no_action",
                steps=steps,
                evidence=f"the plan announces work but {run} steps in a row only read, "
                f"listed or answered invalidly ({_span(steps)})",
            )
        ]

    def _budget_burn(
        self, limits: BudgetLimits | None, spent: BudgetSpent | None, progress: float | None
    ) -> list[Detection]:
        window = self.settings.burn_window
        if limits is None or spent is None or window < 1:
            return []
        shares = []
        if limits.max_steps:
            shares.append(("steps", spent.steps / limits.max_steps))
        if limits.max_tokens:
            shares.append(("tokens", spent.tokens / limits.max_tokens))
        if limits.max_usd:
            shares.append(("money", spent.usd / limits.max_usd))
        if limits.max_seconds:
            shares.append(("time", spent.seconds / limits.max_seconds))
        if not shares:
            return []
        what, share = max(shares, key=lambda item: item[1])
        idle = self._idle_run()
        behind = idle >= window if progress is None else progress < share / 2
        newest = self._seen[-1].n
        if share < self.settings.burn_share or not behind:
            self._burn_from = None
            return []
        if self._burn_from is not None and newest - self._burn_from < window:
            return []
        self._burn_from = newest
        steps = [s.n for s in self._seen[-min(max(idle, 1), len(self._seen)) :]]
        measure = (
            f"none of the last {idle} steps changed anything"
            if progress is None
            else f"progress is {progress:.0%}"
        )
        return [
            Detection(
                kind="budget_burn",
                steps=steps,
                evidence=f"{share:.0%} of the {what} budget spent and {measure}",
            )
        ]

    def _periodic(self) -> list[Detection]:
        every = self.settings.periodic_every
        newest = self._seen[-1]
        if every < 1 or newest.n % every:
            return []
        steps = [s.n for s in self._seen if s.n > newest.n - every]
        return [
            Detection(
                kind="periodic", steps=steps, evidence=f"periodic self-check at step {newest.n}"
            )
        ]


def third_in_a_row(steps: Sequence[StepRecord], action: Action) -> str:
    """Why `action` is refused without running ("" if it is not): the steps just before it
    all ask for the same command with the same arguments, and the last two of them that ran
    got the same result, so running it again would learn nothing. It stays refused for as
    long as the model keeps asking."""
    streak = []
    for step in reversed([s for s in steps if s.status != "invalid"]):
        if (step.command, step.arguments) != (action.command, action.arguments):
            break
        streak.append(step)
    ran = [s for s in streak if not (s.observation or "").startswith(REFUSED_REPEAT)]
    if len(ran) < 2 or ran[0].observation != ran[1].observation:
        return ""
    return (
        f"{REFUSED_REPEAT} {action.command} with the same arguments in a row: steps "
        f"{ran[1].n} and {ran[0].n} ran it and got the same result, shown above, so it was not "
        "run again. Use that result and choose a different command."
    )


def worn_out(steps: Sequence[StepRecord]) -> str:
    """The command of the newest step if it and the step before were both refused as the same
    repeat ("" if not). The next step's schema leaves it out: told in words, the 1.5B model
    asked for the same read seven times more. Not after one refusal: the command itself may
    be the right next one with other arguments (a reflection's "read notes.md instead")."""
    ran = [s for s in steps if s.status != "invalid"]
    if len(ran) < 2:
        return ""
    last, before = ran[-1], ran[-2]
    refused = all((s.observation or "").startswith(REFUSED_REPEAT) for s in (last, before))
    same = (last.command, last.arguments) == (before.command, before.arguments)
    return last.command if refused and same else ""


REFUSED_REPEAT = "refused: this is the third"
"""How a step refused as a third repeat begins: for the monitor it is the repeat it refused."""
