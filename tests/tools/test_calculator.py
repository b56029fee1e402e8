"""The calculator evaluates arithmetic exactly and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autonoma.tools import ToolContext, Workspace
from autonoma.tools.calculator import calculator, evaluate


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(17 * 23) / 4", 97.75),
        ("2^10", 1024),
        ("7 // 2 + 7 % 2", 4),
        ("round(sqrt(2) * pi, 6)", 4.442883),
        ("max(3, 4) - abs(-2)", 2),
        ("10**30 + 1", 10**30 + 1),  # exact integers, not floats
    ],
)
def test_arithmetic(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("__import__('os').system('id')", "not defined"),
        ("(1).__class__", "not available"),
        ("open('/etc/passwd')", "not defined"),
        ("'a' * 3", "not arithmetic"),
        ("9 ** 9 ** 9", "9 ** 387420489"),  # a power too large to compute is refused
        ("1 / 0", "division by zero"),
        ("x + 1", "'x' is not defined"),
        ("2 +", "cannot evaluate"),
        ("1" * 1001, "longer than 1,000"),
    ],
)
def test_anything_else_is_a_clear_error(expression: str, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        evaluate(expression)


async def test_the_tool_answers_and_fails_as_an_observation(tmp_path: Path) -> None:
    context = ToolContext(Workspace(tmp_path))
    result = await calculator.run(context, {"expression": "2 ** 0.5"})
    assert result.ok and result.output == "2 ** 0.5 = 1.4142135623731"
    huge = await calculator.run(context, {"expression": "7 ** 100000"})
    assert huge.ok and huge.output == "7 ** 100000 = an integer of about 84509 digits"
    bad = await calculator.run(context, {"expression": "import os"})
    assert not bad.ok and bad.output.startswith("error: ValueError: cannot evaluate")
