"""--self-reflect --trials from the command line: a loop is reflected on, the trial ends, the
next starts from the workspace as the run began, and the person sees it happen."""

from __future__ import annotations

import json
from pathlib import Path

from autonoma.testing import act
from tests.cli_helpers import cli, scripted, spec
from tests.fake_openai import FakeOpenAI


def test_a_loop_ends_the_trial_and_the_next_one_finishes(home: Path, server: FakeOpenAI) -> None:
    reflection = {
        "went_wrong": "I read a file that does not exist, three times.",
        "instead": "Write answer.txt with write_file.",
        "verdict": "new_trial",
    }
    server.responder = scripted(
        [
            act("write_file", path="draft.txt", text="half an idea"),
            *[act("read_file", path="missing.txt")] * 3,
            reflection,
            act("write_file", path="answer.txt", text="42"),
            act("task_complete", reason="answer.txt holds 42"),
        ]
    )
    result = cli(
        home, "run", "Write the answer to answer.txt", "--model", spec(server), "--continuous",
        "--no-memory", "--self-reflect", "--trials", "2", "--name", "AnswerGPT", "--json",
        "--no-checks",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["files"] == ["answer.txt"]  # draft.txt went with the abandoned trial
    assert "self-reflection: I read a file that does not exist" in result.stderr
    assert "→ new_trial" in result.stderr
    assert "trial 1 ended at step 4" in result.stderr
    assert "trial 2 begins: workspace restored as the run began" in result.stderr

    shown = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)
    assert shown["settings"]["trials"] == 2 and shown["settings"]["self_reflect"]
    started = next(e for e in shown["events"] if e["kind"] == "trial_started")
    assert (Path(started["data"]["archive"]) / "draft.txt").read_text() == "half an idea"

    bad = cli(home, "run", "x", "--model", spec(server), "--trials", "9")
    assert bad.returncode == 2 and "--trials" in bad.stderr
