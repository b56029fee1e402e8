"""What a person sees of a run: each step live, approval prompts, and stored runs.

Model and tool text is printed as plain text (never as rich markup) after neutralising
control characters, so nothing the model writes can restyle or hide what is shown.
"""

from __future__ import annotations

import asyncio
from typing import Any

import click
from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from autonoma.agent.approval import ApprovalRequest, Decision
from autonoma.agent.checks import Check, checks_from_text, checks_to_text
from autonoma.agent.display import command_line, neutralise, neutralise_lines
from autonoma.memory.reflection import ReflectionTree
from autonoma.runtime.budget import BudgetSpent
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
    text = " ".join(neutralise(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def identity_panel(run: RunRecord) -> Panel:
    identity = run.identity
    body = Text()
    body.append(f"{identity['name']}", style="bold")
    body.append(f": {neutralise(identity['role'])}\n")
    for index, goal in enumerate(identity["goals"], 1):
        body.append(f"  {index}. {neutralise(goal)}\n")
    body.append(f"model {run.model} · workspace {run.workspace}", style="dim")
    return Panel(body, title=f"run {run.id}", title_align="left")


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

    def __call__(self, event: EventRecord) -> None:
        data = event.data
        label = self._labels.get(event.run_id)
        if event.kind == "thinking":
            self._stop_spinner()
            who = f"{label} · " if label else ""
            self._status = self.console.status(f"{who}step {event.step}: thinking…")
            self._status.start()
            return
        self._stop_spinner()
        if label is not None and event.kind in ("run_started", "run_finished"):
            return  # a task's run: its task's changes say the same
        if event.kind == "code_unsafe":
            self.console.print(Text(f"WARNING: {data.get('message', '')}", "bold red"))
        elif event.kind == "monitor" and data.get("detection") != "periodic":
            who = f"{label} · " if label else ""
            said = f"{who}monitor: {data.get('detection')}: {short(data.get('evidence', ''), 200)}"
            self.console.print(Text(said, "bold magenta"))
        elif event.kind == "self_reflection":
            who = f"{label} · " if label else ""
            line = f"{who}self-reflection: {short(data.get('lesson', ''), 300)}"
            if data.get("course"):
                line += f" → {data['course']} ({data.get('why', '')})"
            self.console.print(Text(line, "magenta"))
        elif event.kind == "trial_ended":
            checks = "; ".join(data.get("checks", [])) or "nothing to check"
            line = f"trial {data.get('trial')} ended at step {event.step}: {data.get('why', '')}"
            self.console.print(Text(f"{line}. Checks: {short(checks, 200)}", "bold yellow"))
        elif event.kind == "trial_started":
            where = "restored as the run began" if data.get("workspace") == "restored" else "kept"
            line = f"trial {data.get('trial')} begins: workspace {where}, lessons kept"
            self.console.print(Text(line, "bold yellow"))
        elif event.kind == "mcp_skipped":
            self.console.print(Text(f"MCP: {short(data.get('message', ''), 300)}", "yellow"))
        elif event.kind == "code_refused":
            self.console.print(Text(f"no code execution: {data.get('message', '')}", "yellow"))
        elif event.kind == "planning":
            self._status = self.console.status("planning: breaking the goal into tasks…")
            self._status.start()
        elif event.kind == "planned":
            self.console.print(Text(f"plan ({len(data.get('tasks', []))} tasks):", "bold"))
            self.console.print(Text(neutralise_lines(data.get("tree", ""))))
        elif event.kind == "task_started":
            self._labels[data["run"]] = data["task"]
            attempt = data.get("attempt", 1)
            again = f" (attempt {attempt})" if attempt > 1 else ""
            self.console.print(Text(f"task {data['task']} started{again}", "bold blue"))
        elif event.kind == "replanning":
            self._status = self.console.status(f"task {data.get('task')} failed: replanning…")
            self._status.start()
        elif event.kind == "replanned":
            self.console.print(Text(f"plan revised: {data.get('summary', '')}", "bold magenta"))
            self.console.print(Text(neutralise_lines(data.get("tree", ""))))
        elif event.kind == "replan_failed":
            problems = "; ".join(data.get("problems", []))
            self.console.print(
                Text(f"the plan could not be revised: {short(problems, 300)}", "red")
            )
        elif event.kind == "tasks_created" and (data.get("added") or data.get("merged")):
            added = ", ".join(f"{t['id']} ({short(t['task'], 60)})" for t in data["added"])
            line = f"after {data.get('after')}: new tasks {added or 'none'}"
            if data.get("merged"):
                line += f"; {len(data['merged'])} duplicate(s) merged"
            self.console.print(Text(line, "magenta"))
        elif event.kind == "agent_started":
            self._labels[data["run"]] = data["key"]
            self.console.print(Text(f"sub-agent {data['key']} started", "bold blue"))
        elif event.kind == "agent_messaged":
            self._labels[data["run"]] = data["key"]
            line = f"message to sub-agent {data['key']}: {short(data.get('message', ''), 200)}"
            self.console.print(Text(line, "blue"))
        elif event.kind == "task_changed" and data.get("status") != "running":
            style = TASK_STYLE.get(data.get("status", ""), "")
            line = f"task {data.get('task')} {data.get('status')}"
            if data.get("result"):
                line += f": {short(data['result'], 200)}"
            self.console.print(Text(line, style=style))
        elif event.kind == "run_started" and data.get("resumed"):
            self.console.print("[cyan]resuming[/]")
        elif event.kind == "step_interrupted":
            line = f"step {event.step}: {data.get('command', '')} was interrupted by the crash"
            self.console.print(Text(line, style="yellow"))
        elif event.kind == "step_intent":
            self._print_intent(event.step, data, label)
        elif event.kind == "checks_writing":
            self._status = self.console.status("writing acceptance checks from the goals…")
            self._status.start()
        elif event.kind in ("checks_written", "checks_edited"):
            who = "the person's edit" if event.kind == "checks_edited" else "before the work"
            self.console.print(Text(f"acceptance checks ({who}):", style="bold"))
            for n, check in enumerate(data.get("checks", []), 1):
                self.console.print(Text(f"  {n}. [{check['kind']}] {short(check['what'], 160)}"))
            if data.get("discarded"):
                sent = f"  {len(data['discarded'])} written and sent back (could not fail, broken)"
                self.console.print(Text(sent, style="dim"))
        elif event.kind == "checks_failed":
            line = (
                f"no usable acceptance checks ({short(data.get('error', ''), 200)}); the task "
                "itself will be judged when the agent says it is done"
            )
            self.console.print(Text(line, style="yellow"))
        elif event.kind == "checks_run":
            self._print_checks(data)
        elif event.kind == "step_result":
            style = "green" if data.get("ok") else "red"
            mark = "→" if data.get("ok") else "✗"
            self.console.print(Text(f"  {mark} {short(data.get('observation', ''), 300)}", style))
        elif event.kind == "reflecting":
            self._status = self.console.status("reflecting on what the steps so far show…")
            self._status.start()
        elif event.kind == "reflected":
            for reflection in data.get("reflections", []):
                cited = ", ".join(str(i) for i in reflection.get("evidence", []))
                line = f"  reflection: {short(reflection['text'], 200)} (because of {cited})"
                self.console.print(Text(line, style="magenta"))
        elif event.kind == "summary_updated":
            line = f"  summary of steps 1 to {data.get('upto')} updated"
            self.console.print(Text(line, style="dim"))
        elif event.kind == "outside_entered":
            at = f"step {event.step}" if event.step else "the start"
            line = f"  outside content from {at}: {data.get('why', '')}"
            self.console.print(Text(short(line, 300), style="yellow"))
        elif event.kind == "workspace_changed":
            line = f"  changed: {short(', '.join(data.get('changes', [])), 300)}"
            self.console.print(Text(line, style="dim"))
        elif event.kind == "step_invalid":
            line = f"step {event.step}: unusable answer: {short(data.get('error', ''), 300)}"
            self.console.print(Text(line, style="red"))

    def _print_checks(self, data: dict[str, Any]) -> None:
        results = data.get("results", [])
        if data.get("passed"):
            self.console.print(Text(f"  ✓ all {len(results)} acceptance checks pass", "green"))
            return
        failed = [(n, r) for n, r in enumerate(results, 1) if not r.get("passed")]
        line = f"  ✗ {len(failed)} of {len(results)} acceptance checks fail"
        self.console.print(Text(line, style="red"))
        for n, result in failed:
            said = short(f"{result.get('what', '')}: {result.get('output', '')}", 240)
            self.console.print(Text(f"    {n}. {said}", style="red"))

    def _print_intent(self, step: int | None, data: dict[str, Any], label: str | None) -> None:
        thoughts = data.get("thoughts", {})
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
            self.console.input, "[y]es / [n]o / y N (approve N in a row) / or type feedback: "
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
                self.console.input, "use them? [y]es / [e]dit / [n]o checks: "
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


def runs_table(runs: list[RunRecord], totals: list[BudgetSpent]) -> Table:
    """The runs with what each spent, its tasks' runs included."""
    table = Table(title="runs")
    for column in ("id", "agent", "status", "steps", "tokens", "goal"):
        table.add_column(column)
    for run, spent in zip(runs, totals, strict=True):
        style = STATUS_STYLE.get(run.status, "")
        table.add_row(
            run.id,
            Text(neutralise(run.identity.get("name", ""))),
            Text(run.status, style=style),
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
            Text(short(step.observation or "", 80), style="green" if step.ok else "red"),
            f"{step.prompt_tokens} ({step.cached_tokens})",
            f"{step.prompt_seconds:.1f}+{step.generation_seconds:.1f}",
        )
    return table


def checks_view(events: list[EventRecord]) -> Table | None:
    """The run's acceptance checks, each with its latest result (None without checks)."""
    checks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    edited = False
    for event in events:
        if event.kind in ("checks_written", "checks_edited"):
            checks, results = list(event.data.get("checks", [])), []
            edited = event.kind == "checks_edited"
        elif event.kind == "checks_run" or (
            event.kind == "run_finished" and "acceptance" in event.data
        ):
            data = event.data.get("acceptance", event.data)
            results = list(data.get("results", []))
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
