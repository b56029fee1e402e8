"""The whole CLI with the real embedded models (fetched once into the user cache)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from autonoma.agent.settings import DEFAULT_MODEL
from tests.cli_helpers import cli

pytestmark = pytest.mark.e2e

# Python prints its own traceback from the first column; the step view shows a program's
# traceback (a step's result) indented under the step that ran it.
CRASHED = re.compile(r"^Traceback \(most recent call last\):$", re.MULTILINE)


def assert_no_crash(stderr: str) -> None:
    assert not CRASHED.search(stderr), stderr[-3000:]


def autonoma(home: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return cli(home, *args, timeout=timeout, real_cache=True)


def show(home: Path, run_id: str) -> dict[str, Any]:
    shown: dict[str, Any] = json.loads(autonoma(home, "show", run_id, "--json", timeout=60).stdout)
    return shown


def why_not(shown: dict[str, Any], trail: list[Any]) -> dict[str, Any]:
    """What a failed end-to-end run's assertion shows: its goals, the checks it wrote, each
    run of them, and its steps (a seeded run replays only on the same CPU's arithmetic)."""
    events = shown["events"]
    checks = [e["data"] for e in events if e["kind"] in ("checks_written", "checks_edited")]
    verdicts = [e["data"]["results"] for e in events if e["kind"] == "checks_run"]
    left_out = [e["data"] for e in events if e["kind"] == "check_left_out"]
    goals = shown["identity"]["goals"]
    return {"goals": goals, "checks": checks, "left_out": left_out, "runs": verdicts,
            "steps": trail}  # fmt: skip


def test_smollm2_through_the_cli_stores_steps_and_exits_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = autonoma(
        home,
        "run",
        "Write a haiku about autumn to haiku.txt",
        "--model",
        "local:smollm2-135m",
        "--max-steps",
        "3",
        "--continuous",
        "--json",
        timeout=900,
    )
    # completed, out of steps, or its claims refused by the checks
    assert result.returncode in (0, 3, 4), result.stderr
    assert_no_crash(result.stderr)
    outcome = json.loads(result.stdout)
    assert outcome["status"] in ("completed", "budget_exhausted", "incomplete")
    shown = show(home, outcome["run_id"])
    steps = shown["steps"]
    assert 1 <= len(steps) <= 3
    assert [s["n"] for s in steps] == list(range(1, len(steps) + 1))
    assert all(s["status"] in ("done", "invalid") for s in steps)
    assert shown["spent"]["prompt_tokens"] > 0 and shown["identity"]["name"]
    assert outcome["totals"]["steps"] == len(steps)


def test_the_default_model_achieves_the_demo_goal(tmp_path: Path) -> None:
    # Seeded, but a seed replays only where llama.cpp's arithmetic is the same: CI's machine
    # wrote another haiku from seed 0 (2026-11-27) and ended out of steps. bench/agent_demo.py
    # measures the rate over many seeds; this asserts that one of two seeded runs achieves it,
    # and a failure shows each run's goals, checks, verdicts and steps.
    failures = []
    for seed in ("0", "1"):
        home = tmp_path / f"home-{seed}"
        result = autonoma(
            home,
            "run",
            "Write a haiku about autumn to haiku.txt",
            "--continuous",
            "--max-steps",
            "10",
            "--seed",
            seed,
            "--json",
            timeout=1200,
        )
        assert_no_crash(result.stderr)
        outcome = json.loads(result.stdout)
        shown = show(home, outcome["run_id"])
        trail = [
            (s["command"], s["arguments"], (s["observation"] or "")[:80]) for s in shown["steps"]
        ]
        assert shown["model"] == DEFAULT_MODEL
        if outcome["status"] != "completed":
            failures.append((seed, outcome["status"], why_not(shown, trail)))
            continue
        haiku = Path(outcome["workspace"], "haiku.txt").read_text()
        lines = [line for line in haiku.splitlines() if line.strip()]
        assert len(lines) == 3, (haiku, why_not(shown, trail))
        assert all(any(c.isalpha() for c in line) for line in lines)
        return
    raise AssertionError(failures)


def test_the_default_model_carries_out_a_planned_goal(tmp_path: Path) -> None:
    # The planned strategy end to end with the real model: Qwen writes the graph, each task
    # runs in its own loop with the checks it writes, and a task ends when they pass. Whether
    # the 1.5B model finishes every task is a benchmark figure, not a CI fact: of six runs seen,
    # its checks of the second task were wrong in three (a string compared with a list; an
    # exact final newline: both now mended where checks run, docs/agent.md), and in seeds 1
    # and 6 of six more it appended one colour at a time, then "红" over and over. So this
    # asserts the machinery, one task done by its checks, and the whole goal's files when the
    # run says completed. In one CI run a retry of the second task appended to numbers.txt
    # after the first task had passed its checks, and the run said completed: a planned run
    # now runs each finished task's checks again at its end, redoes a task whose work was
    # undone, and ends incomplete if it is undone again.
    home = tmp_path / "home"
    result = autonoma(
        home,
        "run",
        "Write the numbers 1 to 5, one per line, to numbers.txt, and the words red, green and "
        "blue, one per line, to colors.txt",
        "--strategy",
        "plan",
        "--continuous",
        "--max-steps",
        "6",  # 16 steps took 1,018 s of CI's time, 10 took 450 s; what it asserts holds at 6
        "--task-steps",
        "4",
        "--seed",
        "0",
        "--json",
        timeout=1500,
    )
    assert_no_crash(result.stderr)
    outcome = json.loads(result.stdout)
    shown = show(home, outcome["run_id"])
    events = shown["events"]
    planned = next(e for e in events if e["kind"] == "planned")
    assert len(planned["data"]["tasks"]) >= 2, planned["data"]["tree"]
    # a failed task may be replanned: the graph to finish is the latest one
    latest = [e for e in events if e["kind"] in ("planned", "replanned")][-1]
    tasks = {t["id"] for t in latest["data"]["tasks"]}
    started = {e["data"]["task"] for e in events if e["kind"] == "task_started"}
    changes = [e["data"] for e in events if e["kind"] == "task_changed"]
    finished = [c["result"] for c in changes if c["status"] == "done"]
    assert any("check" in why and "pass" in why for why in finished), (
        outcome["reason"],
        planned["data"]["tree"],
    )
    now = {c["task"]: c["status"] for c in changes}  # a task undone by later work is redone
    done = {task for task, status in now.items() if status == "done"}
    assert done <= started
    assert outcome["totals"]["steps"] <= 6
    ends = ("completed", "incomplete", "failed", "budget_exhausted")
    assert outcome["status"] in ends, outcome["reason"]
    if outcome["status"] == "incomplete":  # every task done, and then one undid another's
        assert "passed when it finished and fails now" in outcome["reason"]
        return
    if outcome["status"] != "completed":  # an honest end, saying what was left
        assert outcome["reason"] and not tasks <= done
        return
    assert tasks <= done, latest["data"]["tree"]
    workspace = Path(outcome["workspace"])
    assert workspace.joinpath("numbers.txt").read_text().split() == ["1", "2", "3", "4", "5"]
    assert workspace.joinpath("colors.txt").read_text().split() == ["red", "green", "blue"]


def test_the_default_model_writes_the_time_in_a_city_with_the_time_server(
    tmp_path: Path,
) -> None:
    # The MCP face end to end: the real time server from PyPI, configured as its README shows,
    # the real model choosing its tool. Which steps it takes is the model's; what must hold is
    # an honest end: the tool was offered read-only and reached, and a run that says it is
    # completed left the city's time (as the server gives it) in the file.
    home = tmp_path / "home"
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            {"mcpServers": {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}}}
        )
    )
    result = autonoma(
        home,
        "run",
        "Write the current time in Tokyo (HH:MM, 24-hour) to tokyo.txt",
        "--tool-settings",
        str(tools),
        "--tools",
        "none",
        "--continuous",
        "--max-steps",
        "5",  # what it checks holds at any length; 8 steps took 207 s of CI's 25 minutes
        "--seed",
        "0",
        "--json",
        timeout=1200,
    )
    assert_no_crash(result.stderr)
    outcome = json.loads(result.stdout)
    shown = show(home, outcome["run_id"])
    trail = [(s["command"], s["arguments"], (s["observation"] or "")[:120]) for s in shown["steps"]]
    # whether the 1.5B model asks the server or guesses is a benchmark figure (seed 0 once
    # wrote the UTC time it guessed, docs/benchmarks.md); offering the tool is not
    offered = json.loads(autonoma(home, "tools", "--tool-settings", str(tools), "--tools", "none",
                                  "--json", timeout=120).stdout)  # fmt: skip
    assert {"time__get_current_time", "time__convert_time"} <= {t["name"] for t in offered["tools"]}
    # whatever checks the 1.5B writer wrote (in CI on 2026-11-28 none, and its judge then
    # passed '09:04:27'), the format and the clock the task states are held by a program
    (checks,) = [e["data"] for e in shown["events"] if e["kind"] == "checks_written"]
    assert "tokyo.txt holds the current time in Asia/Tokyo, written as HH:MM" in [
        c["what"] for c in checks["checks"]
    ]
    if outcome["status"] != "completed":
        assert outcome["reason"], trail
        return
    written = Path(outcome["workspace"], "tokyo.txt").read_text()
    assert re.fullmatch(r"\s*\d\d:\d\d\s*", written), (written, trail)
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    near = {(now + timedelta(minutes=d)).strftime("%H:%M") for d in range(-10, 2)}
    assert any(t in written for t in near), (written, trail)
