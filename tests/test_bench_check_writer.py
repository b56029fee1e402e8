"""The check-writer benchmark tells a right check from a wrong one: a check written at the
start that the reference solution passes counts as right, one it fails as wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autonoma.llm import ScriptedModel
from autonoma.tools.sandbox import make_sandbox
from autonoma.tools.settings import SandboxSettings
from bench.check_writer import summarise, write_and_try
from bench.everyday_goals import BY_NAME

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

RIGHT = (
    "got = open('code.txt').read().strip()\n"
    "expected = open('vault/secret.txt').read().strip()\n"
    "assert got == expected, f'code.txt holds {got!r}, expected {expected!r}'"
)
WRONG = RIGHT.replace("vault/secret.txt", "clue.txt")  # the 1.5B writer's, 2026-11-26


async def test_a_check_the_reference_fails_is_counted_wrong(tmp_path: Path) -> None:
    sandbox = make_sandbox(SandboxSettings())
    rows = []
    for n, code in enumerate([RIGHT, WRONG]):
        check = {"goal": 1, "what": "code.txt holds the access code", "kind": "code", "code": code}
        model = ScriptedModel([{"checks": [check]}])
        rows.append(await write_and_try(model, sandbox, BY_NAME["two_hops"], tmp_path / str(n)))
    assert [r["all_right"] for r in rows] == [True, False]
    assert "AssertionError" in rows[1]["checks"][0]["output"]
    summary = summarise(rows)
    assert summary["goals_with_a_wrong_code_check"] == 1 and summary["code_checks_right"] == 1
