"""What a person sees of a run: each step live, approval prompts, and stored runs.

Model and tool text is printed as plain text (never as rich markup) after neutralising
control characters, so nothing the model writes can restyle or hide what is shown.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, assert_never

import click
from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.agent.check_types import Check
from autonoma.agent.checks import checks_from_text, checks_to_text
from autonoma.agent.display import command_line, neutralise, neutralise_lines
from autonoma.memory.reflection import ReflectionTree
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.events import (
    AgentStarted,
    ApprovalAnswered,
    ApprovalAsked,
    CheckLeftOut,
    ChecksEdited,
    ChecksFailed,
    ChecksRun,
    ChecksWriting,
    ChecksWritten,
    MemorySaved,
    MonitorDetected,
    Notice,
    OutsideEntered,
    Planned,
    Planning,
    Rated,
    Reflected,
    Reflecting,
    ReplanAsked,
    ReplanFailed,
    Replanned,
    Replanning,
    RunFinished,
    RunStarted,
    SelfReflected,
    SelfReflectionFailed,
    StepIntent,
    StepInterrupted,
    StepInvalid,
    StepResult,
    SummaryUpdated,
    TaskChanged,
    TasksCreated,
    TaskStarted,
    Thinking,
    ToolsHint,
    ToolsOffered,
    TrialEnded,
    TrialStarted,
    Undone,
    Unrecognised,
    WorkspaceChanged,
)
from autonoma.runtime.store import EventRecord, RunRecord, StepRecord

TASK_STYLE = {"done": "green", "failed": "red", "skipped": "dim", "pending": "yellow"}

STATUS_STYLE = {
    "completed": "green",
    "incomplete": "yellow",
    "running": "cyan",
    "budget_exhausted": "yellow",
    "stopped": "yellow",
    "failed": "red",
}


def step_figures(data: dict[str, Any]) -> str:
    """A step's answer as the server measured it: "prompt 912 (850 cached) 1.2 s, answer 6.1 s"."""
    said = f"prompt {data.get('prompt_tokens', 0)} ({data.get('cached_tokens', 0)} cached)"
    prompt_s, answer_s = data.get("prompt_seconds", 0), data.get("generation_seconds", 0)
    if prompt_s or answer_s:
        said += f" {prompt_s:.1f} s, answer {answer_s:.1f} s"
    return said


def short(text: str, limit: int) -> str:
    """One line of at most `limit` characters: the text's lines joined with spaces, each
    control character made visible (a line break is a break, not `\x0a`)."""
    text = " ".join(" ".join(neutralise(line).split()) for line in text.splitlines())
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def some_lines(text: str, lines: int, width: int = 160, indent: str = "") -> str:
    """The text's first `lines` lines (blank ones dropped), each made safe and cut to
    `width`, the others counted: a multi-line result (JSON, a git log, a file) as lines."""
    kept = [line.rstrip().expandtabs(4) for line in text.splitlines() if line.strip()]
    shown = [neutralise(line)[:width] for line in kept[:lines]]
    if len(kept) > lines:
        shown.append(f"… {len(kept) - lines} more lines")
    return "\n".join(indent + line for line in shown).removeprefix(indent)


def identity_panel(run: RunRecord) -> Panel:
    identity = run.identity
    body = Text()
    body.append(f"{identity['name']}", style="bold")
    body.append(f": {neutralise(identity['role'])}\n")
    for index, goal in enumerate(identity["goals"], 1):
        body.append(f"  {index}. {neutralise(goal)}\n")
    body.append(f"model {run.model} · workspace {run.workspace}", style="dim")
    return Panel(body, title=f"run {run.id}", title_align="left")


class QuietView:
    """`--quiet`: one line per step (its command and the start of its result), the tasks of
    a plan as they end, warnings, and nothing else."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._intent: dict[tuple[str, int | None], str] = {}
        self._labels: dict[str, str] = {}

    def __call__(self, record: EventRecord) -> None:
        event, key = record.event, (record.run_id, record.step)
        who = f"{self._labels[record.run_id]} · " if record.run_id in self._labels else ""
        match event:
            case StepIntent(command=command, arguments=arguments):
                self._intent[key] = command_line(command, arguments)
            case StepResult(ok=ok, observation=observation):
                said = f"{who}step {record.step}: {short(self._intent.pop(key, '?'), 70)}"
                mark = "→" if ok else "✗"
                self.console.print(Text(f"{said} {mark} {short(observation, 90)}"), highlight=False)
            case TaskStarted(task=task, run=run) | AgentStarted(key=task, run=run):
                self._labels[run] = task
            case TaskChanged(task=task, status=status) if status != "running":
                self.console.print(Text(f"task {task} {status}", TASK_STYLE.get(status, "")))
            case Notice(message=message):
                self.console.print(Text(short(message, 600), "yellow"))  # whole warnings
            case _:
                pass


class LiveView:
    """Prints each step as its events arrive; a spinner while the model thinks."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None
        self._labels: dict[str, str] = {}  # a task's run id to the task's id

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, record: EventRecord) -> None:
        label = self._labels.get(record.run_id)
        who = f"{label} · " if label else ""
        event = record.event
        if isinstance(event, Thinking):
            self._spin(f"{who}step {record.step}: thinking…")
            return
        self._stop_spinner()
        if label is not None and isinstance(event, RunStarted | RunFinished):
            return  # a task's run: its task's changes say the same
        say = self.console.print
        match event:
            case Notice(kind="code_unsafe", message=message):
                say(Text(f"WARNING: {message}", "bold red"))
            case Notice(kind="code_refused", message=message):
                say(Text(f"no code execution: {message}", "yellow"))
            case Notice(kind="price_unknown", message=message):
                say(Text(f"WARNING: {message}", "yellow"))
            case Notice(message=message):  # mcp_skipped
                say(Text(f"MCP: {short(message, 300)}", "yellow"))
            case MonitorDetected(detection=detection, evidence=evidence):
                if detection != "periodic":
                    said = f"{who}monitor: {detection}: {short(evidence, 200)}"
                    say(Text(said, "bold magenta"))
            case SelfReflected(lesson=lesson, course=course, why=why):
                line = f"{who}self-reflection: {short(lesson, 300)}"
                say(Text(line + (f" → {course} ({why})" if course else ""), "magenta"))
            case TrialEnded(trial=trial, why=why, checks=checks):
                facts = "; ".join(checks) or "nothing to check"
                line = f"trial {trial} ended at step {record.step}: {why}"
                say(Text(f"{line}. Checks: {short(facts, 200)}", "bold yellow"))
            case TrialStarted(trial=trial, workspace=kept):
                where = "restored as the run began" if kept == "restored" else "kept"
                say(Text(f"trial {trial} begins: workspace {where}, lessons kept", "bold yellow"))
            case Planning():
                self._spin("planning: breaking the goal into tasks…")
            case Planned(tasks=tasks, tree=tree):
                say(Text(f"plan ({len(tasks)} tasks):", "bold"))
                say(Text(neutralise_lines(tree)))
            case TaskStarted(task=task, run=run, attempt=attempt):
                self._labels[run] = task
                again = f" (attempt {attempt})" if attempt > 1 else ""
                say(Text(f"task {task} started{again}", "bold blue"))
            case TaskChanged(task=task, status=status, result=result):
                if status != "running":
                    line = f"task {task} {status}" + (f": {short(result, 200)}" if result else "")
                    say(Text(line, style=TASK_STYLE.get(status, "")))
            case Replanning(task=task):
                self._spin(f"task {task} failed: replanning…")
            case Replanned(summary=summary, tree=tree):
                say(Text(f"plan revised: {summary}", "bold magenta"))
                say(Text(neutralise_lines(tree)))
            case ReplanFailed(problems=problems):
                said = short("; ".join(problems), 300)
                say(Text(f"the plan could not be revised: {said}", "red"))
            case TasksCreated(after=after, added=added, merged=merged):
                if added or merged:
                    new = ", ".join(f"{t['id']} ({short(t['task'], 60)})" for t in added)
                    line = f"after {after}: new tasks {new or 'none'}"
                    if merged:
                        line += f"; {len(merged)} duplicate(s) merged"
                    say(Text(line, "magenta"))
            case AgentStarted(key=key, run=run):
                self._labels[run] = key
                say(Text(f"sub-agent {key} started", "bold blue"))
            case RunStarted(resumed=resumed):
                if resumed:
                    say("[cyan]resuming[/]")
            case StepInterrupted(command=command):
                line = f"step {record.step}: {command} was interrupted by the crash"
                say(Text(line, style="yellow"))
            case StepIntent():
                self._print_intent(record.step, event, label)
            case ChecksWriting():
                self._spin("writing acceptance checks from the goals…")
            case ChecksWritten(checks=checks, discarded=discarded, guards=guards):
                self._print_written("before the work", checks, discarded, guards)
            case ChecksEdited(checks=checks):
                self._print_written("the person's edit", checks, [])
            case ChecksFailed(error=error):
                line = (
                    f"no usable acceptance checks ({short(error, 200)}); the task itself will "
                    "be judged when the agent says it is done"
                )
                say(Text(line, style="yellow"))
            case ChecksRun():
                self._print_checks(event)
            case CheckLeftOut(what=what, why=why):
                line = f"  acceptance check left out, it can never pass ({why}): {short(what, 160)}"
                say(Text(line, style="yellow"))
            case StepResult(ok=ok, observation=observation, checks=checks):
                mark, style = ("→", "green") if ok else ("✗", "red")
                # a failure's lines whole: a refusal names the commands that can still run
                width = 160 if ok else 800
                say(Text(f"  {mark} {some_lines(observation, 8, width, '    ')}", style))
                if checks:
                    say(Text(f"  {short(checks, 300)}", "dim"))
            case Reflecting():
                self._spin("reflecting on what the steps so far show…")
            case Reflected(reflections=reflections):
                for reflection in reflections:
                    cited = ", ".join(str(i) for i in reflection.get("evidence", []))
                    line = f"  reflection: {short(reflection['text'], 200)} (because of {cited})"
                    say(Text(line, style="magenta"))
            case SummaryUpdated(upto=upto):
                say(Text(f"  summary of steps 1 to {upto} updated", style="dim"))
            case OutsideEntered(why=why):
                at = f"step {record.step}" if record.step else "the start"
                say(Text(short(f"  outside content from {at}: {why}", 300), style="yellow"))
            case WorkspaceChanged(changes=changes):
                say(Text(f"  changed: {short(', '.join(changes), 300)}", style="dim"))
            case StepInvalid(error=error):
                line = f"step {record.step}: unusable answer: {short(error, 300)}"
                say(Text(line, style="red"))
            case (
                RunFinished()  # the command prints the outcome
                | Undone()
                | Rated()
                | ToolsOffered()
                | ToolsHint()
                | ApprovalAsked()  # the approver asks
                | ApprovalAnswered()
                | MemorySaved()
                | SelfReflectionFailed()
                | ReplanAsked()
                | Unrecognised()
            ):
                pass
            case _:
                assert_never(event)

    def _spin(self, what: str) -> None:
        self._status = self.console.status(what)
        self._status.start()

    def _print_written(
        self,
        whose: str,
        checks: list[dict[str, Any]],
        sent: list[str],
        guards: list[dict[str, Any]] | None = None,
    ) -> None:
        self.console.print(Text(f"acceptance checks ({whose}):", style="bold"))
        for n, check in enumerate(checks, 1):
            self.console.print(Text(f"  {n}. [{check['kind']}] {short(check['what'], 160)}"))
        for guard in guards or []:
            self.console.print(Text(f"  · [guard] {short(guard['what'], 160)}", style="dim"))
        if sent:
            said = f"  {len(sent)} written and sent back (could not fail, broken)"
            self.console.print(Text(said, style="dim"))

    def _print_checks(self, run: ChecksRun) -> None:
        results = run.results
        if run.passed:
            self.console.print(Text(f"  ✓ all {len(results)} acceptance checks pass", "green"))
            return
        failed = [(n, r) for n, r in enumerate(results, 1) if not r.get("passed")]
        line = f"  ✗ {len(failed)} of {len(results)} acceptance checks fail"
        self.console.print(Text(line, style="red"))
        for n, result in failed:
            said = short(f"{result.get('what', '')}: {result.get('output', '')}", 240)
            self.console.print(Text(f"    {n}. {said}", style="red"))

    def _print_intent(self, step: int | None, intent: StepIntent, label: str | None) -> None:
        data = intent.model_dump()
        thoughts = intent.thoughts
        header = Text(f"{label} · step {step}" if label else f"step {step}", style="bold cyan")
        header.append(f"  {data.get('tokens', 0)} tokens · ${data.get('usd', 0.0):.4f}", "dim")
        if data.get("prompt_tokens"):
            header.append(f" · {step_figures(data)}", "dim")
        self.console.print(header)
        for label in ("text", "reasoning", "plan", "criticism"):
            if thoughts.get(label):
                self.console.print(Text(f"  {label}: {short(thoughts[label], 200)}", "dim"))
        if thoughts.get("speak"):
            self.console.print(Text(f"  says: {short(thoughts['speak'], 200)}"))
        command = command_line(data.get("command", ""), data.get("arguments", {}))
        if data.get("command") == "python":  # a program: its lines, as written
            lines = command.splitlines()[1:]
            for line in lines[:20]:
                self.console.print(Text(f"  | {line}", style="bold"))
            if len(lines) > 20:
                self.console.print(Text(f"  | ... {len(lines) - 20} more lines", style="dim"))
            return
        self.console.print(Text(f"  $ {short(command, 300)}", style="bold"))


class ConsoleApprover:
    """Asks at the terminal: y, n, y N (this and the next N-1 commands), or free text that
    the agent receives as feedback instead of the command running."""

    def __init__(self, console: Console) -> None:
        self.console = console

    async def __call__(self, request: ApprovalRequest) -> Decision:
        shown = command_line(request.command, request.arguments)
        self.console.print(
            Text(f"\nApprove this {request.risk} command?\n  {shown}", style="bold yellow")
        )
        if request.reason:
            self.console.print(Text(f"  asked because {request.reason}", style="yellow"))
        answer = await asyncio.to_thread(
            self.console.input,
            Text("[y]es / [n]o / y N (approve N in a row) / or type feedback: "),
        )
        return parse_answer(answer)

    async def review_checks(self, checks: list[Check]) -> list[Check]:
        """The acceptance checks the model wrote, shown before the work: kept, dropped, or
        edited in $EDITOR (the header-and-code format of `checks_to_text`)."""
        self.console.print(Text("\nAcceptance checks, written before the work:", style="bold"))
        for n, check in enumerate(checks, 1):
            self.console.print(Text(f"  {n}. {neutralise(check.label())}"))
            for line in check.code.strip().splitlines():
                self.console.print(Text(f"       {neutralise(line)}", style="dim"))
        while True:
            answer = await asyncio.to_thread(
                self.console.input, Text("use them? [y]es / [e]dit / [n]o checks: ")
            )
            choice = answer.strip().lower()
            if choice in ("", "y", "yes"):
                return checks
            if choice in ("n", "no"):
                return []
            if choice in ("e", "edit"):
                edited = await asyncio.to_thread(
                    click.edit, checks_to_text(checks), extension=".py"
                )
                if edited is None:  # closed without saving
                    return checks
                try:
                    return checks_from_text(edited)
                except ValueError as error:
                    self.console.print(Text(f"  not used: {error}", style="red"))

    async def ask(self, question: str) -> str | None:
        """The agent's question (`ask_person`), answered at the terminal."""
        self.console.print(Text(f"\nThe agent asks: {neutralise(question)}", style="bold cyan"))
        answer = await asyncio.to_thread(self.console.input, "your answer: ")
        return answer.strip() or None


def parse_answer(answer: str) -> Decision:
    text = answer.strip()
    lowered = text.lower()
    if lowered in ("y", "yes"):
        return Decision(kind="yes")
    if lowered in ("n", "no", ""):
        return Decision(kind="no")
    parts = lowered.split()
    if len(parts) == 2 and parts[0] in ("y", "yes") and parts[1].isdigit() and int(parts[1]) > 0:
        return Decision(kind="yes", times=int(parts[1]))
    return Decision(kind="feedback", feedback=text)


def runs_table(
    runs: list[RunRecord], totals: list[BudgetSpent], driven: list[bool | None] | None = None
) -> Table:
    """The runs with what each spent, its tasks' runs included; a `running` run whose driver
    is gone (`driven` False) says so."""
    table = Table(title="runs")
    for column in ("id", "started", "agent", "model", "status", "steps", "tokens", "goal"):
        table.add_column(column)
    for run, spent, live in zip(runs, totals, driven or [None] * len(runs), strict=True):
        style = STATUS_STYLE.get(run.status, "")
        status = run.status if live is not False else "running, no driver: resume it"
        table.add_row(
            run.id,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at)),
            Text(neutralise(run.identity.get("name", ""))),
            Text(short(run.model, 30)),
            Text(status, style=style if live is not False else "yellow"),
            str(spent.steps),
            str(spent.tokens),
            Text(short(run.goal, 60)),
        )
    return table


def run_report(
    console: Console, run: RunRecord, steps: list[StepRecord], spent: BudgetSpent | None = None
) -> None:
    """`spent`: the run's totals, if they are more than its own (a planned run's tasks)."""
    console.print(identity_panel(run))
    style = STATUS_STYLE.get(run.status, "")
    line = Text(f"{run.status}", style=f"bold {style}")
    if run.reason:
        line.append(f": {neutralise(run.reason)}")
    console.print(line)
    if run.settings.get("tools", {}).get("sandbox", {}).get("backend") == "unsafe":
        console.print(Text("code ran WITHOUT a sandbox (--unsafe-code)", style="bold red"))
    spent = spent or run.spent
    console.print(
        f"{spent.steps} steps · {spent.prompt_tokens} prompt + {spent.completion_tokens} "
        f"completion tokens · ${spent.usd:.4f} · {spent.seconds:.0f}s",
        style="dim",
    )
    if steps:
        console.print(steps_table(steps))


def task_report(console: Console, run: RunRecord, steps: list[StepRecord]) -> None:
    """A run serving another (a task's or a sub-agent's): its status, reason and steps."""
    style = STATUS_STYLE.get(run.status, "")
    task = run.task_id or ""
    who = f"sub-agent {task[6:]}" if task.startswith("agent:") else f"task {task}"
    line = Text(f"{who} · run {run.id} · ", style="bold")
    line.append(run.status, style=style)
    if run.reason:
        line.append(f": {short(run.reason, 200)}")
    console.print(line)
    if steps:
        console.print(steps_table(steps))


def steps_table(steps: list[StepRecord]) -> Table:
    table = Table()
    for column in ("#", "status", "command", "result", "prompt (cached)", "s prompt+answer"):
        table.add_column(column)
    for step in steps:
        table.add_row(
            str(step.n),
            step.status,
            Text(short(command_line(step.command, step.arguments), 60)),
            Text(some_lines(step.observation or "", 4, 80), style="green" if step.ok else "red"),
            f"{step.prompt_tokens} ({step.cached_tokens})",
            f"{step.prompt_seconds:.1f}+{step.generation_seconds:.1f}",
        )
    return table


def checks_view(events: list[EventRecord]) -> Table | None:
    """The run's acceptance checks, each with its latest result (None without checks)."""
    checks: list[dict[str, Any]] = []
    guards: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    edited = False
    for record in events:
        match record.event:
            case ChecksWritten(checks=written, guards=held):
                checks, guards, results, edited = list(written), list(held), [], False
            case ChecksEdited(checks=written):
                checks, results, edited = list(written), [], True
            case ChecksRun(results=latest):
                results = list(latest)
            case RunFinished(acceptance=dict() as acceptance):
                results = list(acceptance.get("results", []))
    if not checks:
        return None
    title = "acceptance checks" + (" (edited by the person)" if edited else "")
    table = Table(title=title)
    for column in ("#", "kind", "checks", "latest result"):
        table.add_column(column)
    verdicts = {r.get("what"): r for r in results}
    for n, check in enumerate(checks, 1):
        found = verdicts.get(check["what"])
        if found is None:
            result = Text("not run", style="dim")
        elif found.get("passed"):
            result = Text("passes", style="green")
        else:
            result = Text(short(f"fails: {found.get('output', '')}", 120), style="red")
        table.add_row(str(n), check["kind"], Text(short(check["what"], 80)), result)
    for guard in guards:  # in a verdict only while failing
        found = verdicts.get(guard["what"])
        if found is None:
            result = Text("holds" if results else "not run", style="green" if results else "dim")
        else:
            result = Text(short(f"fails: {found.get('output', '')}", 120), style="red")
        table.add_row("·", "guard", Text(short(guard["what"], 80)), result)
    return table


def reflections_view(trees: list[ReflectionTree]) -> Tree:
    """Each reflection with its evidence beneath it (and theirs, for reflections on
    reflections), memory ids in brackets."""
    root = Tree(Text("reflections", style="bold magenta"))

    def grow(node: Tree, tree: ReflectionTree) -> None:
        record = tree.record
        style = "magenta" if record.kind == "reflection" else ""
        label = Text(f"[{record.id}] ", style="dim")
        label.append(short(record.text, 160), style=style)
        label.append(f"  ({record.kind}, importance {record.importance})", style="dim")
        branch = node.add(label)
        for child in tree.evidence:
            grow(branch, child)

    for tree in trees:
        grow(root, tree)
    return root
