"""Documented options of run, resume, runs, graph and export that no other test drives from
the command line, each run as the README shows it and its documented effect checked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autonoma.testing import act
from tests.cli_helpers import cli, scripted, spec
from tests.fake_openai import FakeOpenAI

QUIET = ("--no-checks", "--no-memory", "--continuous", "--json")
GIVEN = ("--name", "ListGPT", "--role", "an AI that lists files", "--goal", "List the files")


def test_max_tokens_stops_a_run_and_resume_allows_that_many_more(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted([act("list_files")])  # the fake server charges 18 a request
    first = cli(home, "run", "List forever", "--model", spec(server), "--max-tokens", "50", *QUIET)
    assert first.returncode == 3, first.stderr
    stopped = json.loads(first.stdout)
    spent = stopped["totals"]["tokens"]
    assert stopped["reason"] == f"token limit reached ({spent} of 50 tokens)"
    assert 50 <= spent < 50 + 18  # checked before every model call

    more = cli(home, "resume", stopped["run_id"], "--max-tokens", "36", "--json")
    again = json.loads(more.stdout)
    assert again["status"] == "budget_exhausted"
    assert again["reason"].endswith(f"of {spent + 36} tokens)")  # 36 more than it had spent
    assert spent + 36 <= again["totals"]["tokens"] < spent + 36 + 18


def test_max_minutes_cuts_a_hung_model_call_and_resume_allows_that_many_more(
    home: Path, server: FakeOpenAI
) -> None:
    # a model that takes 40 s an answer: a 3-second limit ends the run at its limit, as
    # budget_exhausted, not after the call's retries as failed
    server.responder = scripted([act("list_files")])
    server.latency_s = 40
    first = cli(
        home, "run", "List forever", "--model", spec(server), "--max-minutes", "0.05", *GIVEN,
        *QUIET, timeout=90,
    )  # fmt: skip
    assert first.returncode == 3, first.stderr
    stopped = json.loads(first.stdout)
    assert stopped["status"] == "budget_exhausted"
    assert stopped["reason"].startswith("time limit reached (") and "of 3s)" in stopped["reason"]

    more = cli(home, "resume", stopped["run_id"], "--max-minutes", "0.05", "--json", timeout=90)
    again = json.loads(more.stdout)
    assert again["status"] == "budget_exhausted"
    allowed = round(stopped["totals"]["seconds"] + 3)  # three more seconds than it had run
    assert f"of {allowed}s)" in again["reason"], (again["reason"], stopped["totals"])


def test_runs_limit_lists_the_newest_runs(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted([act("task_complete", reason="done")])
    ids = [
        json.loads(cli(home, "run", goal, "--model", spec(server), *QUIET).stdout)["run_id"]
        for goal in ("First goal", "Second goal")
    ]
    newest = json.loads(cli(home, "runs", "--limit", "1", "--json").stdout)
    assert [r["id"] for r in newest] == ids[1:]
    assert len(json.loads(cli(home, "runs", "--limit", "5", "--json").stdout)) == 2
    assert "--limit" in cli(home, "runs", "--limit", "0").stderr


def test_options_given_on_the_command_line_are_the_run_s_settings(
    home: Path, server: FakeOpenAI
) -> None:
    # each lands where docs/library.md puts it (the same keys a --settings file takes), so a
    # resumed run keeps it: none is silently dropped
    server.responder = scripted([{"tasks": []}])  # no plan: the run fails at once
    result = cli(
        home, "run", "Plan nothing", "--model", spec(server), *GIVEN, "--strategy", "plan",
        "--planner", "tot", "--tot-search", "dfs", "--tot-rate", "vote", "--concurrency", "2",
        "--replans", "0", "--task-steps", "4", "--subagents", "--actions", "code",
        "--trust-outside", "--max-tokens", "900", "--max-minutes", "2", *QUIET,
    )  # fmt: skip
    run_id = json.loads(result.stdout)["run_id"]
    settings = json.loads(cli(home, "show", run_id, "--json").stdout)["settings"]
    given = {"planner": "tot", "tot_search": "dfs", "tot_rate": "vote", "concurrency": 2}
    given |= {"replans": 0, "task_steps": 4}
    assert {key: settings["planning"][key] for key in given} == given
    assert settings["subagents"] is True and settings["actions"] == "code"
    assert settings["tools"]["approve_after_untrusted"] is False  # --trust-outside
    assert settings["limits"]["max_tokens"] == 900 and settings["limits"]["max_seconds"] == 120


def test_trust_outside_lets_a_continuous_run_make_requests_after_outside_content(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    # files the run did not write are outside content: without a person, a request that
    # leaves the machine is refused after them, unless the person trusts outside content
    steps = [
        act("http_request", method="GET", url=f"{server.base_url}/models"),
        act("task_complete", reason="asked"),
    ]
    observed = {}
    for trust in ([], ["--trust-outside"]):
        server.responder = scripted(steps)
        workspace = tmp_path / f"ws{len(trust)}"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("the person's notes\n")
        result = cli(
            home, "run", "Ask the server for its models", "--model", spec(server),
            "--workspace", str(workspace), "--tools", "web", "--allow-host", "127.0.0.1",
            *trust, *QUIET,
        )  # fmt: skip
        run_id = json.loads(result.stdout)["run_id"]
        shown = json.loads(cli(home, "show", run_id, "--json").stdout)
        observed[bool(trust)] = shown["steps"][0]["observation"]
    assert "outside content was in the context from the run's start" in observed[False]
    assert "outside content" not in observed[True] and "404" in observed[True], observed[True]


def test_resume_approve_asks_again_and_resume_continuous_stops_asking(
    home: Path, server: FakeOpenAI
) -> None:
    # with no one at a terminal, asking is refusing: a write is denied in approval mode
    write = act("write_file", path="haiku.txt", text="autumn\n")
    server.responder = scripted([act("list_files"), write])
    first = cli(home, "run", "Write a haiku", "--model", spec(server), "--max-steps", "1", *QUIET)
    run_id = json.loads(first.stdout)["run_id"]

    asked = cli(home, "resume", run_id, "--approve", "--max-steps", "1", "--json")
    assert json.loads(asked.stdout)["files"] == []
    steps = json.loads(cli(home, "show", run_id, "--json").stdout)["steps"]
    assert steps[-1]["status"] == "denied" and "--continuous" in steps[-1]["observation"]

    going = cli(home, "resume", run_id, "--continuous", "--max-steps", "1", "--json")
    assert json.loads(going.stdout)["files"] == ["haiku.txt"]


def test_verbose_shows_library_log_lines_in_the_live_view_s_style(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted([act("task_complete", reason="done")])
    said = {}
    for verbose in ([], ["-v"]):
        result = cli(home, *verbose, "run", "Finish", "--model", spec(server), *QUIET)
        assert result.returncode == 0, result.stderr
        said[bool(verbose)] = result.stderr
    asked = f'HTTP Request: POST {server.base_url}/chat/completions "HTTP/1.1 200 OK"'
    assert re.search(rf"^info httpx\w*: {re.escape(asked)}$", said[True], re.MULTILINE)
    assert "httpx" not in said[False]
    assert "Traceback" not in said[True]


def test_shell_completion_prints_a_script_and_completes_commands_and_options(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # typer takes the shell from the process tree (shellingham), which under make is sh;
    # its own switch for tests makes the shell the option's value instead
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    script = cli(home, "--show-completion", "bash")
    assert script.returncode == 0
    assert "complete -o default -F _autonoma_completion autonoma" in script.stdout

    def completes(words: str) -> list[str]:
        env = os.environ | {
            "_AUTONOMA_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
        done = subprocess.run(
            [sys.executable, "-m", "autonoma"], capture_output=True, text=True, env=env,
            timeout=60, check=True,
        )  # fmt: skip
        return done.stdout.split()

    assert completes("autonoma ru") == ["run", "runs"]
    assert completes("autonoma run --strat") == ["--strategy"]
    assert completes("autonoma runs pr") == ["prune"]


def test_a_tool_settings_file_s_groups_choose_the_tools_unless_tools_is_given(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    # docs/tools.md's example: the --tools default used to overwrite the file's groups
    path = tmp_path / "tools.toml"
    path.write_text('groups = ["calculator"]\n[sandbox]\ncpu_s = 20\n', encoding="utf-8")
    server.responder = scripted([act("task_complete", reason="done")])

    def stored(*options: str) -> dict[str, object]:
        ran = cli(home, "run", "Add", "--model", spec(server), "--tool-settings", str(path),
                  *options, *QUIET)  # fmt: skip
        run_id = json.loads(ran.stdout)["run_id"]
        tools: dict[str, object] = json.loads(cli(home, "show", run_id, "--json").stdout)[
            "settings"
        ]["tools"]
        return tools

    from_file = stored()
    assert from_file["groups"] == ["calculator"]
    assert from_file["sandbox"]["cpu_s"] == 20  # type: ignore[index]
    prompt = server.requests[-1]["messages"][0]["content"]
    assert "calculator(" in prompt and "execute_python" not in prompt
    # the option wins over the file; each group once, in the order they are offered
    assert stored("--tools", "web,code,web")["groups"] == ["code", "web"]


def test_resume_settings_lays_a_file_over_the_stored_settings(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    # a resumed run's model timeouts could not be changed: the file's keys replace only those
    server.responder = scripted([act("list_files")])
    first = cli(home, "run", "List", "--model", spec(server), "--max-steps", "1",
                "--seed", "7", *QUIET)  # fmt: skip
    run_id = json.loads(first.stdout)["run_id"]
    path = tmp_path / "slow.toml"
    path.write_text("[llm]\nfirst_byte_timeout_s = 300\n", encoding="utf-8")
    more = cli(home, "resume", run_id, "--settings", str(path), "--max-steps", "1", "--json")
    assert json.loads(more.stdout)["status"] == "budget_exhausted", more.stderr
    settings = json.loads(cli(home, "show", run_id, "--json").stdout)["settings"]
    assert settings["llm"]["first_byte_timeout_s"] == 300
    assert settings["llm"]["connect_timeout_s"] == 10  # the rest of the table kept
    assert settings["seed"] == 7 and settings["limits"]["max_steps"] == 2

    path.write_text("[llm]\nfirst_byte_timeout = 300\n", encoding="utf-8")
    bad = cli(home, "resume", run_id, "--settings", str(path))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "llm.first_byte_timeout" in bad.stderr and str(path) in bad.stderr


def test_max_minutes_bounds_the_naming_of_the_agent_too(home: Path, server: FakeOpenAI) -> None:
    # with no --name the model names the agent first: a hung model ran 28 s into a 3-second
    # limit there, and the run ended failed with no id
    server.responder = scripted([act("list_files")])
    server.latency_s = 40
    ran = cli(home, "run", "List forever", "--model", spec(server), "--max-minutes", "0.05",
              *QUIET, timeout=60)  # fmt: skip
    ended = json.loads(ran.stdout)
    assert ended["status"] == "budget_exhausted" and ended["run_id"], ended
    assert ended["reason"].startswith("time limit reached (")
    assert "no identity within the run's time limit (3s)" in ran.stderr
