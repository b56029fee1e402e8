"""Tasks whose wording is the writer's are judged by their criterion, not worked out again and
compared word for word (which no summary but the judge's own would pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autonoma.agent.check_types import task_check
from autonoma.agent.judge import Judge
from autonoma.agent.judge_worked import inputs_of
from autonoma.agent.open_ended import open_ended
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Workspace

SUMMARY = "Summarise report.txt in two sentences to summary.txt."


@pytest.mark.parametrize(
    ("task", "open_"),
    [
        (SUMMARY, True),
        ("Write a haiku about autumn to haiku.txt", True),
        ("Write a letter to Bob about notes.txt in bob.txt", True),
        ("Explain what main.py does in explain.md", True),
        ("Suggest three names for the cat described in cat.txt, one per line, to names.txt", True),
        # one right text: a file's name or a word used otherwise is no sign
        ("Write the total of sales.csv to summary.txt.", False),
        ("Write the first letter of each line of a.txt to b.txt", False),
        ("Read ideas.txt and write the count of ideas to n.txt", False),
        ("Count the lines of the poem in poem.txt and write the number to n.txt", False),
        ("Copy the summary line of report.txt to s.txt", False),
        ("Copy poem.txt to poem_copy.txt", False),
    ],
)
def test_a_task_leaving_its_wording_to_the_writer_is_told_apart(task: str, open_: bool) -> None:
    assert open_ended(task) is open_


async def test_a_summary_of_an_input_is_judged_by_its_criterion(tmp_path: Path) -> None:
    first, ws = tmp_path / "start", tmp_path / "ws"
    for root in (first, ws):
        root.mkdir()
        (root / "report.txt").write_text("Sales rose 4%. Costs fell. The team grew to 12.\n")
    (ws / "summary.txt").write_text("Sales rose and costs fell.\nThe team grew.\n")
    assert inputs_of(SUMMARY, first) is None  # nothing to work out again
    model = ScriptedModel([{"why": "two sentences that sum it up", "passed": True}])
    result = await Judge(model, start=first).judge(
        task_check(SUMMARY), SUMMARY, [SUMMARY], Workspace(ws), BudgetSpent()
    )
    assert result.passed and len(model.requests) == 1
    prompt = model.requests[0].messages[0].content
    assert "Sales rose 4%" in prompt and "Sales rose and costs fell." in prompt
