"""Tool settings from a file and the run command's options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from autonoma.cli import tool_settings_from
from autonoma.tools.settings import ToolSettings


def test_a_toml_file_then_the_options_on_top(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text(
        '[web]\nallow = ["10.0.0.5"]\n[sandbox]\ncpu_s = 3\n'
        '[[mcp]]\nname = "notes"\ncommand = ["python", "notes_server.py"]\n'
    )
    settings = tool_settings_from(path, "web,code", ["127.0.0.1"], True, True)
    assert settings.groups == ["code", "web"]
    assert settings.web.allow == ["10.0.0.5", "127.0.0.1"]
    assert settings.sandbox.cpu_s == 3 and settings.sandbox.backend == "unsafe"
    assert settings.mcp[0].name == "notes" and settings.mcp[0].command == [
        "python",
        "notes_server.py",
    ]
    assert settings.approve_after_untrusted is False


def test_defaults_and_none() -> None:
    settings = tool_settings_from(None, "calculator,code,web,person", [], False, False)
    assert settings.groups == ["calculator", "code", "web", "person"]
    assert settings.sandbox.backend == "bwrap" and settings.approve_after_untrusted
    assert tool_settings_from(None, "none", [], False, False).groups == []
    assert not settings.trust_workspace
    assert tool_settings_from(None, "none", [], False, False, True).trust_workspace


@pytest.mark.parametrize(
    ("content", "suffix", "said"),
    [
        ("{not json", ".json", "cannot read the tool settings"),
        (json.dumps({"mcp": [{"name": "x"}]}), ".json", "give either a command or a url"),
        (json.dumps({"sandbox": {"cpu_s": 0}}), ".json", "greater than or equal to 1"),
        (json.dumps({"surprise": 1}), ".json", r"^surprise in .*tools.json is not a setting"),
        # the README form: the key path, the file, what is wrong, in the person's words
        (json.dumps({"mcpServers": {"t": {}}}), ".json",
         r"^mcpServers\.t in .*tools\.json: give either a command or a url$"),
        (json.dumps({"mcpServers": {"time": {"command": "x", "argz": []}}}), ".json",
         r"^mcpServers\.time\.argz in .*: is not a key of an MCP server \(it takes command, "
         r"args, env, url"),
        (json.dumps({"mcp": [{"name": "1bad", "command": ["x"]}]}), ".json",
         r"^mcp\.0\.name in .*: '1bad' is not a server name: a letter, then"),
        (json.dumps({"mcpServers": {"a": {"command": "x"}}, "mcp": [{"name": "a",
                     "command": ["y"]}]}), ".json", r"^mcp in .*: two MCP servers are named a$"),
        ('[mcpServers.time]\ncommand = "x"\nautoApprove = ["get_time"]\n', ".toml",
         r"^mcpServers\.time in .*: autoApprove is another client's; here give those tools "
         r'risk = "read"'),
    ],
)  # fmt: skip
def test_bad_settings_are_clear_errors(
    tmp_path: Path, content: str, suffix: str, said: str
) -> None:
    path = tmp_path / f"tools{suffix}"
    path.write_text(content)
    with pytest.raises(typer.BadParameter, match=said):
        tool_settings_from(path, "none", [], False, False)


def test_unknown_groups_and_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(
        typer.BadParameter, match="^--tools is one of calculator, .*, not 'browser'$"
    ):
        tool_settings_from(None, "web,browser", [], False, False)
    with pytest.raises(typer.BadParameter, match="cannot read"):
        tool_settings_from(tmp_path / "absent.json", "none", [], False, False)


def test_unsafe_code_is_recorded_and_shown_in_red(tmp_path: Path) -> None:
    from autonoma.testing import act
    from tests.cli_helpers import cli, scripted, spec
    from tests.fake_openai import FakeOpenAI

    home = tmp_path / "home"
    with FakeOpenAI() as server:
        server.responder = scripted(
            [
                {
                    **act("x"),
                    "command": {
                        "name": "execute_shell",
                        "args": {"command": "printf 'hi\\nthere\\n' > hi.txt"},
                    },
                },
                act("task_complete", reason="said hi"),
            ]
        )
        result = cli(
            home, "run", "Say hi in hi.txt", "--model", spec(server), "--unsafe-code",
            "--continuous", "--no-memory", "--name", "HiGPT", "--role", "says hi", "--json",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "WARNING: code runs WITHOUT a sandbox" in result.stderr
    outcome = json.loads(result.stdout)
    assert Path(outcome["workspace"], "hi.txt").read_text() == "hi\nthere\n"
    shown = cli(home, "show", outcome["run_id"])
    assert "code ran WITHOUT a sandbox (--unsafe-code)" in shown.stdout
    stored = json.loads(cli(home, "show", outcome["run_id"], "--json").stdout)
    assert stored["settings"]["tools"]["sandbox"]["backend"] == "unsafe"
    assert [e["kind"] for e in stored["events"]].count("code_unsafe") == 1


def test_without_bubblewrap_code_commands_are_not_offered_and_the_person_is_told() -> None:
    from autonoma.agent.settings import RunSettings
    from autonoma.agent.wiring import run_tools, tool_notices
    from autonoma.tools.settings import SandboxSettings

    settings = RunSettings(
        checks=False, model="scripted", tools=ToolSettings(sandbox=SandboxSettings())
    )
    settings.tools.sandbox.backend = "docker"  # not available in this version: refused
    assert "execute_python" not in run_tools(settings, memory=False).names
    (notice,) = tool_notices(settings)
    assert notice.kind == "code_refused" and "apt-get install bubblewrap" in notice.message


def test_the_desktop_clients_disabled_and_empty_auto_approve_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "cline.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "on": {"command": "a", "disabled": False, "autoApprove": []},
                    "off": {"command": "b", "disabled": True},
                }
            }
        )
    )
    settings = tool_settings_from(path, "none", [], False, False)
    assert [server.name for server in settings.mcp] == ["on"]  # a disabled one is not started
