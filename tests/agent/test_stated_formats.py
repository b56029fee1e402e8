"""The date and time formats a task states, held by checks made without the model: which
formats are read from a task, which file each applies to, what the programs accept in the real
sandbox, and a run that wrote a time in the wrong shape refused although the task judged alone
would have passed it."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autonoma.agent.checks import CheckRunner
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.stated_formats import format_checks, stated_formats, zone_named
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import EventRecord, RunStore
from autonoma.testing import act
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
TIME_TASK = "Write the current time in Tokyo (HH:MM, 24-hour) to tokyo.txt"
TRAIN_TASK = "Write when the last train leaves (HH:MM, 24-hour) to train.txt"
ISO_TASK = (
    "dates.txt holds dates as month/day/year. Write them as year-month-day with two-digit "
    "months and days (like 2024-03-14), one per line in the same order, to iso.txt."
)


def names(text: str) -> list[str]:
    return [f.name for f in stated_formats(text)]


def test_formats_are_read_by_name_and_by_example() -> None:
    assert names(TIME_TASK) == ["as HH:MM"]
    assert names("log the time as hh:mm:ss in log.txt") == ["as HH:MM:SS"]
    assert names("dates as YYYY-MM-DD, or DD/MM/YYYY, or MM.DD.YYYY") == [
        "as YYYY-MM-DD",
        "as DD/MM/YYYY",
        "as MM.DD.YYYY",
    ]
    assert names(ISO_TASK) == ["like 2024-03-14"]
    assert names("the time e.g. 07:30 in t.txt") == ["like 07:30"]
    # a named format wins over an example of the same kind; 12-hour times are not guessed at
    assert names("as YYYY-MM-DD (like 2024-3-1)") == ["as YYYY-MM-DD"]
    assert names("the time as HH:MM with AM/PM") == []
    assert names("write 2024-03-14 and 10:30 to f.txt") == []  # values, not formats
    assert names("the file YYYY-MM-DD.log") == []


def test_a_current_time_or_date_is_read_with_its_place() -> None:
    assert zone_named(TIME_TASK) == "Asia/Tokyo"
    assert zone_named("the time in new york as HH:MM") == "America/New_York"
    assert zone_named("today's date in UTC as YYYY-MM-DD") == "UTC"
    assert zone_named("the time in Tokyo when it is noon in Paris") is None  # two places
    assert zone_named("the time of the meeting") is None
    (check,) = format_checks(TIME_TASK, set())
    assert check.what == "tokyo.txt holds the current time in Asia/Tokyo, written as HH:MM"
    (check,) = format_checks("Write today's date in London as DD/MM/YYYY to day.txt", set())
    assert check.what == "day.txt holds the current date in Europe/London, written as DD/MM/YYYY"
    # no place, or a time that is not now: the shape alone
    (check,) = format_checks("Write the current time as HH:MM to now.txt", set())
    assert check.what == "now.txt holds the time written as HH:MM"
    (check,) = format_checks(TRAIN_TASK, set())
    assert check.what == "train.txt holds the time written as HH:MM"


def test_a_format_applies_to_the_one_file_its_sentence_writes() -> None:
    (check,) = format_checks(TRAIN_TASK, set())
    assert check.kind == "code" and check.what.startswith("train.txt ")
    (check,) = format_checks(ISO_TASK, {"dates.txt"})
    assert check.what.startswith("iso.txt holds the date written like 2024-03-14")
    # a file named alone is changed in place; two new files: which holds the time is unsaid
    (check,) = format_checks("Rewrite the dates in dates.txt as YYYY-MM-DD.", {"dates.txt"})
    assert check.what.startswith("dates.txt ")
    assert format_checks("Write the time (HH:MM) to a1.txt and the weather to b1.txt", set()) == []
    assert format_checks("Write a script clock.py printing the time as HH:MM", set()) == []
    assert format_checks("What is the time as HH:MM?", set()) == []  # no file: the answer's
    two = format_checks("Start with now.txt. Write the time as HH:MM to later.txt.", set())
    assert [c.what.split()[0] for c in two] == ["later.txt"]


@pytest.fixture
def runner(tmp_path: Path) -> CheckRunner:
    root, start = tmp_path / "ws", tmp_path / "start"
    root.mkdir()
    start.mkdir()
    return CheckRunner(BubblewrapSandbox(SandboxSettings()), Workspace(root), start)


@needs_bwrap
async def test_the_time_check_holds_the_file_to_the_shape_in_the_sandbox(
    runner: CheckRunner,
) -> None:
    (check,) = format_checks(TRAIN_TASK, set())
    for right in ["09:04", "09:04\n", "23:59", "It leaves at 00:00.\n", "2026-11-28T09:04"]:
        assert await runner.passes_with(check, {"train.txt": right}), right
    for wrong in ["'09:04'\n", '"09:04"', "09:04:27", "9:04", "24:10", "09:61", "nine", ""]:
        assert not await runner.passes_with(check, {"train.txt": wrong}), wrong
    assert not (await runner.run(check)).passed  # not written yet: it fails before the work
    (runner.workspace.root / "train.txt").write_text("'09:04:27'\n")
    result = await runner.run(check)
    assert not result.passed and "train.txt holds '09:04:27', which is not written as HH:MM" in (
        result.output
    )
    (runner.workspace.root / "train.txt").write_text("'09:04'\n")
    result = await runner.run(check)
    assert "in quotes: write the value itself" in result.output


@needs_bwrap
async def test_the_current_time_is_held_to_the_clock_of_its_place(runner: CheckRunner) -> None:
    (check,) = format_checks(TIME_TASK, set())
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    for right in [now, now - timedelta(minutes=3)]:
        assert await runner.passes_with(check, {"tokyo.txt": f"{right:%H:%M}\n"}), right
    guessed, utc = now + timedelta(hours=7), datetime.now(ZoneInfo("UTC"))
    rounded = now - timedelta(minutes=10)  # CI wrote '16:30' at 16:40
    for wrong in [f"{guessed:%H:%M}", f"{utc:%H:%M}", f"{now:%H:%M:%S}", f"{rounded:%H:%M}"]:
        assert not await runner.passes_with(check, {"tokyo.txt": wrong}), wrong
    (runner.workspace.root / "tokyo.txt").write_text(f"{guessed:%H:%M}")
    result = await runner.run(check)
    assert f"tokyo.txt holds {guessed:%H:%M}, but the time in Asia/Tokyo when it was written" in (
        result.output
    )


@needs_bwrap
async def test_the_current_time_is_held_to_when_its_file_was_written(runner: CheckRunner) -> None:
    # a check run long after the work (a resumed run, a last look) holds the value to the
    # clock when it was written, not to the check's own clock: right stays right, and a
    # window from the check's clock wide enough for slow runs would let a guess through
    (check,) = format_checks(TIME_TASK, set())
    hour_ago = datetime.now(ZoneInfo("Asia/Tokyo")) - timedelta(hours=1)
    target = runner.workspace.root / "tokyo.txt"
    target.write_text(f"{hour_ago:%H:%M}\n")
    os.utime(target, (hour_ago.timestamp(), hour_ago.timestamp()))
    assert (await runner.run(check)).passed
    target.write_text(f"{hour_ago:%H:%M}\n")  # the same hour-old time written now
    assert not (await runner.run(check)).passed


@needs_bwrap
async def test_the_date_check_holds_every_date_of_its_separator(runner: CheckRunner) -> None:
    (check,) = format_checks(ISO_TASK, {"dates.txt"})
    right = "2024-03-14\n2023-12-01\n2025-07-04\n"
    assert await runner.passes_with(check, {"iso.txt": right})
    # '2024-14-03': month 14, written in the example's digits (the writer typed it, mend2_1129)
    for wrong in ["2024-03-14\n2025-7-4\n", "25-7/-/2\n", "03/14/2024\n", "2024-03-14-1\n",
                  "2024-14-03\n"]:  # fmt: skip
        assert not await runner.passes_with(check, {"iso.txt": wrong}), wrong
    (named,) = format_checks("Write the dates of dates.txt as DD/MM/YYYY to eu.txt", {"dates.txt"})
    assert await runner.passes_with(named, {"eu.txt": "14/03/2024, 01/12/2023"})
    # a kept column in another shape is not this format's; a month 13 is no date
    assert await runner.passes_with(named, {"eu.txt": "2024-03-14,14/03/2024\n"})
    assert not await runner.passes_with(named, {"eu.txt": "03/14/2024\n"})


@needs_bwrap
async def test_a_wrong_time_is_refused_where_the_judge_would_pass_it(tmp_path: Path) -> None:
    # no usable check written (three answers that are no JSON): the task is judged, and the
    # stated format and the clock are held by a program besides, which refuses what the
    # judge passes
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    store = RunStore(tmp_path / "runs.db")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = ScriptedModel(
        [
            *["no json here"] * 3,
            act("write_file", path="tokyo.txt", text=f"'{now:%H:%M:%S}'\n"),
            act("task_complete", reason="tokyo.txt holds the time"),
            {"passed": True, "why": "it is the time in Tokyo"},  # the judge, fooled
            act("write_file", path="tokyo.txt", text=f"{now:%H:%M}\n"),
            {"passed": True, "why": "a time in Tokyo"},
        ]
    )
    settings = RunSettings(
        model="scripted",
        limits=BudgetLimits(max_steps=6),
        continuous=True,
        memory=False,
        tools={"groups": []},
    )
    identity = AgentIdentity(name="ClockGPT", role="an AI that tells the time", goals=[TIME_TASK])
    run, _ = await create_run(
        store, model, TIME_TASK, settings, workspace=workspace, identity=identity
    )
    events: list[EventRecord] = []
    outcome = await run_agent(store, model, run, listeners=[events.append])
    assert outcome.status == "completed" and model.remaining == 0, outcome.reason
    (written,) = [e.data for e in events if e.kind == "checks_written"]
    assert written["fallback"] is True
    assert [c["kind"] for c in written["checks"]] == ["judged", "code"]
    steps = store.steps(run.id)
    assert not steps[1].ok
    assert f"tokyo.txt holds '{now:%H:%M:%S}', which is not written as HH:MM" in (
        steps[1].observation or ""
    )
    assert len(steps) == 3 and steps[2].ok  # every check passes after it: the run is done
