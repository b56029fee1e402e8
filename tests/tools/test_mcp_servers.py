"""Real third-party MCP servers from PyPI (mcp-server-time, mcp-server-git, installed as test
dependencies) over stdio, configured as their READMEs show (`mcpServers`), driven through the
CLI by a scripted model: each tool's risk follows its MCP annotations, `{workspace}` reaches
the server, and a continuous run keeps using read-only tools after their outside content."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from autonoma.errors import ConfigError
from autonoma.testing import act
from autonoma.tools import Risk
from autonoma.tools.mcp import (
    McpError,
    McpTools,
    argument_notes,
    from_environment,
    in_workspace,
    tool_risk,
    wrap_tools,
)
from autonoma.tools.settings import McpServer, ToolSettings
from tests.cli_helpers import cli, scripted, spec
from tests.fake_openai import FakeOpenAI

pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone=UTC"]}
GIT = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", "{workspace}"]}


def settings_file(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A workspace that is a git repository with one commit and one staged change."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.email", "t@example.org")
    git(workspace, "config", "user.name", "T")
    (workspace / "notes.txt").write_text("first\n")
    git(workspace, "add", "notes.txt")
    git(workspace, "commit", "-q", "-m", "the first note")
    (workspace / "notes.txt").write_text("first\nsecond\n")
    git(workspace, "add", "notes.txt")
    return workspace


def test_tools_lists_each_servers_tools_with_the_risk_their_annotations_give(
    home: Path, tmp_path: Path, repository: Path
) -> None:
    git = GIT | {"tools": {"git_add": {"risk": "read"}, "git_reset": {"enabled": False}}}
    path = settings_file(tmp_path, {"time": TIME, "git": git})
    result = cli(
        home, "tools", "--tool-settings", str(path), "--workspace", str(repository), "--json"
    )
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["tools"]}
    now = rows["time__get_current_time"]
    assert (now["risk"], now["risk_from"]) == ("read", "MCP annotation readOnlyHint")
    assert "Arguments: timezone «" in now["line"]  # the IANA hint reaches the prompt line
    assert rows["git__git_status"]["risk"] == "read"
    assert rows["git__git_commit"]["risk"] == "write"  # acts, not destructive, closed world
    assert "git__git_reset" not in rows  # disabled, and said so
    assert (
        "MCP server 'git': tool 'git_reset' left out: disabled in your settings"
        in (json.loads(result.stdout)["left_out"])
    )
    assert rows["git__git_add"]["risk_from"] == "your setting for the tool"
    assert rows["write_file"]["risk_from"] == "built-in" and rows["write_file"]["undoable"]
    table = cli(home, "tools", "--tool-settings", str(path), "--workspace", str(repository))
    assert "time__get_current_time" in table.stdout and "readOnlyHint" in table.stdout


def test_a_continuous_run_keeps_reading_after_outside_content_and_is_refused_a_reset(
    home: Path, server: FakeOpenAI, tmp_path: Path, repository: Path
) -> None:
    server.responder = scripted(
        [
            act("git__git_status", repo_path="."),  # outside content from here on
            act("git__git_log", repo_path=".", max_count=5),
            act("time__get_current_time", timezone="Asia/Tokyo"),
            act("git__git_reset", repo_path="."),  # destructive: needs a person
            act("write_file", path="status.txt", text="staged: notes.txt"),  # undoable
            act("task_complete", reason="status written"),
        ]
    )
    path = settings_file(tmp_path, {"time": TIME, "git": GIT})
    result = cli(
        home,
        "run",
        "Write the repository's status to status.txt",
        "--model",
        spec(server),
        "--workspace",
        str(repository),
        "--tool-settings",
        str(path),
        "--continuous",
        "--no-checks",
        "--json",
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["files"] == ["notes.txt", "status.txt"]  # not the repository's insides
    steps = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)["steps"]
    status, log, clock, reset, write = steps[:5]
    assert status["status"] == "done" and "notes.txt" in status["observation"]  # cwd: workspace
    assert log["status"] == "done" and "the first note" in log["observation"]
    assert clock["status"] == "done" and "Asia/Tokyo" in clock["observation"]
    assert reset["status"] == "denied"
    said = reset["observation"]
    assert "git__git_reset was not run" in said and "the person did not" not in said
    assert "git__git_status" in said and "write_file" in said  # what still runs
    assert "git__git_commit" not in said.partition("without a person:")[2]
    assert write["status"] == "done" and (repository / "status.txt").exists()
    assert "notes.txt" in git(repository, "diff", "--cached", "--name-only")  # not reset
    events = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)["events"]
    answered = [e["data"] for e in events if e["kind"] == "approval_answered"]
    assert answered and answered[0]["by"] == "policy"


def test_the_readme_form_in_toml_and_its_mistakes_are_one_line(home: Path, tmp_path: Path) -> None:
    good = tmp_path / "tools.toml"
    good.write_text(
        '[mcpServers.time]\ncommand = "python"\nargs = ["-m", "mcp_server_time"]\n'
        'env = { TZ = "UTC" }\n'
    )
    settings = ToolSettings.model_validate(
        {"mcpServers": {"time": {"command": "python", "args": ["-m", "mcp_server_time"]}}}
    )
    assert settings.mcp[0].command == ["python", "-m", "mcp_server_time"]
    for text, said in [
        ('{"mcpServers": {"time": {"command": "x", "argz": []}}}', "mcpServers.time.argz"),
        ('{"mcpServers": {"time": {"command": "x", "args": "-m"}}}', "args is a list"),
        ('{"mcpServers": {"t": {"type": "sse", "url": "http://h/sse"}}}', "'sse' is not one"),
        ('{"mcpServers": {"t": {}}}', "give either a command or a url"),
        ('{"mcpServers": ["time"]}', "mcpServers is a table"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        result = cli(home, "tools", "--tool-settings", str(bad))
        assert result.returncode == 2, text
        assert said in result.stderr, result.stderr
        assert "validation error" not in result.stderr and "pydantic" not in result.stderr


def test_workspace_and_variables_are_filled_in_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = McpServer.model_validate(
        {
            "name": "g",
            "command": "srv",
            "args": ["--root", "{workspace}/repo"],
            "env": {"K": "${KEY}"},
        }
    )
    placed = in_workspace(server, tmp_path)
    assert placed.command == ["srv", "--root", f"{tmp_path}/repo"]
    assert placed.cwd == str(tmp_path)  # stdio servers start in the workspace
    assert in_workspace(server.model_copy(update={"cwd": "/srv"}), tmp_path).cwd == "/srv"
    monkeypatch.setenv("KEY", "s3cret")
    assert from_environment("Bearer ${KEY}") == from_environment("Bearer ${env:KEY}")
    assert from_environment("Bearer ${KEY}") == "Bearer s3cret"
    monkeypatch.delenv("KEY")
    with pytest.raises(ConfigError, match="KEY is not set"):
        from_environment("${KEY}")
    assert server.env == {"K": "${KEY}"}  # what is stored keeps the name, never the key


async def test_an_unset_variable_is_said_as_such_not_as_a_server_to_make_optional() -> None:
    server = McpServer.model_validate(
        {"name": "tickets", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "${NO_SUCH_KEY}"}}
    )
    with pytest.raises(McpError) as raised:
        async with McpTools([server]):
            pass
    said = str(raised.value)
    assert "the MCP settings use ${NO_SUCH_KEY}, but NO_SUCH_KEY is not set" in said
    assert "optional" not in said and "Mend the tool settings" in said


def listed(name: str, **fields: Any) -> mcp_types.Tool:
    return mcp_types.Tool(name=name, input_schema={"type": "object", "properties": {}}, **fields)


def test_annotations_decide_risk_unless_the_person_said_otherwise() -> None:
    hints = mcp_types.ToolAnnotations
    tools = [
        listed("look", annotations=hints(read_only_hint=True)),
        listed("fetch", annotations=hints(read_only_hint=False)),  # open world when unsaid
        listed("save", annotations=hints(destructive_hint=False, open_world_hint=False)),
        listed("wipe", annotations=hints(open_world_hint=False)),  # destructive when unsaid
        listed("plain"),
        listed("hidden", annotations=hints(read_only_hint=True)),
        listed("later", execution=mcp_types.ToolExecution(task_support="required")),
    ]
    server = McpServer(
        name="s", url="http://x/", risk=Risk.WRITE, tools={"hidden": {"enabled": False}}
    )
    skipped: list[str] = []
    connection: Any = type("C", (), {"server": server})()
    risks = {t.name: t.risk for t in wrap_tools(connection, tools, skipped)}
    assert risks == {
        "s__look": Risk.READ,
        "s__fetch": Risk.NETWORK,
        "s__save": Risk.WRITE,
        "s__wipe": Risk.EXECUTE,
        "s__plain": Risk.WRITE,  # the server's risk
    }
    assert len(skipped) == 1 and "MCP task" in skipped[0]
    connection.server = McpServer(name="s", url="http://x/", risk=Risk.WRITE, annotations=False)
    assert {t.risk for t in wrap_tools(connection, tools[:5], [])} == {Risk.WRITE}
    connection.server = McpServer(name="s", url="http://x/", tools={"look": {"risk": "execute"}})
    assert wrap_tools(connection, tools[:1], [])[0].risk is Risk.EXECUTE
    # where each came from, said as it is: a risk the person set, or the default
    assert tool_risk(server, tools[4])[1] == "no MCP annotations: the server's risk"
    unset = McpServer(name="s", url="http://x/")
    assert tool_risk(unset, tools[4]) == (
        Risk.EXECUTE, "no MCP annotations: the server's risk (the default)"
    )  # fmt: skip
    off = McpServer(name="s", url="http://x/", annotations=False)
    assert tool_risk(off, tools[0])[1] == "annotations = false: the server's risk (the default)"


def test_argument_notes_share_the_limit_and_drop_no_argument_silently() -> None:
    # convert_time's target_timezone, the argument naming Asia/Tokyo, was left out whole
    schema = {
        "properties": {
            "a": {"description": "«" + "x" * 100 + "»"},
            "b": {"description": "«" + "y" * 250 + "»"},
            "c": {"type": "string"},
        }
    }
    notes = argument_notes(schema)
    assert notes.startswith(" Arguments: a «" + "x" * 100 + "»; b «yyy")
    assert notes.endswith("y…».") and len(notes) <= 300 + len(" Arguments: .")
    many = {"properties": {f"arg{n}": {"description": "«" + "z" * 90 + "»"} for n in range(9)}}
    said = argument_notes(many)
    assert "arg0 «zz" in said and said.endswith("; also arg6, arg7, arg8.")
    assert argument_notes({"properties": {}}) == ""


def test_a_server_that_fails_to_start_ends_the_run_failed_and_resume_mends_it(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    server.responder = scripted(
        [
            act("time__get_current_time", timezone="Asia/Tokyo"),
            act("write_file", path="tokyo.txt", text="the time in Tokyo"),
            act("task_complete", reason="written"),
        ]
    )
    broken = settings_file(
        tmp_path, {"time": {"command": sys.executable, "args": ["-c", "print('banner')"]}}
    )
    result = cli(
        home,
        "run",
        "Write the time in Tokyo to tokyo.txt",
        "--model",
        spec(server),
        "--tool-settings",
        str(broken),
        "--continuous",
        "--no-checks",
        "--json",
        timeout=120,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    ended = json.loads(result.stdout)  # a script has a status to read
    assert ended["status"] == "failed" and "MCP server 'time' is unavailable" in ended["reason"]
    assert "text that is not MCP on its stdout ('banner')" in ended["reason"]
    listed = json.loads(cli(home, "runs", "--json").stdout)
    assert [(r["id"], r["status"]) for r in listed] == [(ended["run_id"], "failed")]
    banner_first = "print('hello from a banner'); import runpy; runpy.run_module('mcp_server_time', run_name='__main__')"
    mended = settings_file(
        tmp_path, {"time": {"command": sys.executable, "args": ["-c", banner_first]}}
    )
    again = cli(
        home, "resume", ended["run_id"], "--tool-settings", str(mended), "--json", timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr and "hello from a banner" not in again.stderr
    assert "hello from a banner" in (home / "logs" / "autonoma.log").read_text()  # in the log
    assert json.loads(again.stdout)["status"] == "completed"
    stored = json.loads(cli(home, "show", ended["run_id"], "--json").stdout)
    assert (
        stored["steps"][0]["status"] == "done" and "Asia/Tokyo" in stored["steps"][0]["observation"]
    )
