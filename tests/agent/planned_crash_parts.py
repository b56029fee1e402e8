"""Helpers shared by tests (moved out of test modules: a test module is never imported
by another)."""

from __future__ import annotations

import re
from typing import Any

from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.testing import act
from autonoma.tools import Risk, tool

PLAN = {
    "tasks": [
        {"id": "t1", "task": "Write apples.txt", "outputs": ["apples.txt"], "value": 9},
        {"id": "t2", "task": "Slowly write pears.txt", "outputs": ["pears.txt"]},
        {"id": "t3", "task": "Join them in fruit.md", "inputs": ["apples.txt", "pears.txt"],
         "outputs": ["fruit.md"]},
    ]
}  # fmt: skip


def answer(messages: list[Message], request: CompletionRequest) -> Any:
    if "tasks" in (request.plan.schema or {}).get("properties", {}):
        return PLAN
    task = re.search(r"now doing task (\w+)", messages[0].content)
    assert task, messages[0].content
    said = "\n".join(m.content for m in messages)
    scripts = {
        "t1": [act("write_file", path="apples.txt", text="crisp\n")],
        "t2": [act("slow_write", text="soft\n")],
        "t3": [act("write_file", path="fruit.md", text="crisp and soft\n")],
    }
    done = {"t1": "apples.txt", "t2": "pears.txt", "t3": "fruit.md"}[task.group(1)]
    if f"to {done}" in said or "interrupted" in said:
        return act("task_complete", reason=f"{done} written")
    return scripts[task.group(1)][0]


@tool(risk=Risk.WRITE, timeout_s=120)
def slow_write(context: Any, text: str) -> str:
    """Write pears.txt, slowly: waits until task t1 is recorded done, then for a kill."""
    (context.workspace.root / "pears.txt").write_text(text)
    import sqlite3
    import time

    db = sqlite3.connect(context.workspace.root.parent / "runs.db")
    while not any(
        '"status": "done"' in row[0] for row in db.execute("SELECT data FROM tasks WHERE id = 't1'")
    ):
        time.sleep(0.05)
    print("TOOL STARTED", flush=True)
    time.sleep(60)
    return "wrote pears.txt"
