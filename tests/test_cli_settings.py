"""Run settings from a file (`autonoma run --settings`), options on top, one-line errors from
the settings' own validation, and stored settings of an older shape migrated on resume."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main

from autonoma import RunSettings, RunStore, resume
from autonoma.agent.settings import SETTINGS_VERSION, migrate
from autonoma.cli import app
from autonoma.cli_settings import OPTION_OF, about
from autonoma.testing import ScriptedModel, act
from tests.agent.helpers import IDENTITY
from tests.cli_helpers import HAIKU, cli, one_line_error, scripted, spec
from tests.fake_openai import FakeOpenAI

FILE = """\
continuous = true
seed = 7
checks = false
memory = false
strategy = "loop"

[planning]
task_steps = 4
concurrency = 1

[limits]
max_steps = 5
max_tokens = 50000

[tools]
groups = ["calculator"]

[llm]
idle_timeout_s = 90
"""


def test_a_settings_file_sets_the_run_and_options_given_win(
    home: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "run.toml"
    path.write_text(FILE)
    server.responder = scripted([act("task_complete", reason="done")])
    result = cli(
        home, "run", "Say done", "--settings", str(path), "--model", spec(server),
        "--max-steps", "3", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    stored = json.loads(cli(home, "show", run_id, "--json").stdout)["settings"]
    assert stored["version"] == SETTINGS_VERSION
    assert stored["limits"]["max_steps"] == 3  # the option, over the file's 5
    assert stored["limits"]["max_tokens"] == 50000  # the file's, kept beside it
    assert (stored["seed"], stored["continuous"], stored["memory"]["enabled"]) == (7, True, False)
    assert stored["planning"] | {"task_steps": 4, "concurrency": 1} == stored["planning"]
    assert stored["tools"]["groups"] == ["calculator"]  # not the --tools default
    assert stored["llm"]["idle_timeout_s"] == 90  # a slow server's limit, kept for resume


@pytest.mark.parametrize(
    ("content", "options", "said"),
    [
        ("tasksteps = 3\n", [], r"tasksteps in .*run.toml is not a setting"),
        ("[planning]\ntasksteps = 3\n", [], r"planning.tasksteps in .*run.toml is not a setting"),
        ("[planning]\ntask_steps = 0\n", [], r"planning.task_steps in .*: Input should be greater"),
        ("task_steps = 3\n", [], r"task_steps in .*run.toml is now planning.task_steps"),
        ("planning = 3\n", ["--strategy", "plan", "--task-steps", "2"], r"planning in .*dict"),
        ("embedder = 'x'\n", [], r"embedder in .*run.toml is now memory.embedder"),
        ("[memory]\nimportance = 'x'\n", [], r"memory.importance in .* one of model, heuristic,"),
        ("[memory]\nenabled = true\n", ["--importance", "x"], r"--importance is one of model, "),
        ("[llm]\nidle_timeout = 3\n", [], r"llm.idle_timeout in .*run.toml is not a setting"),
        ('strategy = "graph"\n', [], r"strategy in .*run.toml is one of loop, plan, not 'graph'"),
        ('strategy = "loop"\n', ["--strategy", "x"], r"--strategy is one of loop, plan, not 'x'"),
        ("[limits]\nmax_steps = 0\n", [], r"limits.max_steps in .*: Input should be greater"),
        ("[tools]\nsurprise = 1\n", [], r"tools.surprise in .*run.toml is not a setting"),
        (
            '[tools]\ngroups = ["calculator"]\n',
            ["--tools", "code,wbe"],
            r"^error: --tools is one of calculator, code, web, person, not 'wbe' \(see",
        ),
        (
            '[tools]\ngroups = ["code", "wbe"]\n',
            [],
            r"tools\.groups\.1 in .*run.toml is one of calculator, code, web, person, not 'wbe'",
        ),
        (
            "version = 9\n",
            [],
            r"^error: version in \S+: these settings were stored by a newer autonoma \(version 9",
        ),
        ("= nonsense", [], r"cannot read the run settings"),
    ],
)
def test_bad_settings_are_one_line(
    home: Path, tmp_path: Path, content: str, options: list[str], said: str
) -> None:
    path = tmp_path / "run.toml"
    path.write_text(content)
    result = cli(home, "run", "x", "--settings", str(path), *options)
    error = one_line_error(result)
    assert re.search(said, error), error
    assert len(result.stderr.strip().splitlines()) == 1  # one line, not click's usage and box
    assert error.endswith("(see autonoma run --help)")


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--planner", "tot"], "--planner is for a planned run: add --strategy plan"),
        (["--create-tasks"], "--create-tasks is for a planned run"),
        (["--strategy", "plan", "--tot-rate", "vote"], "for the ToT planner: add --planner tot"),
        (["--strategy", "plan", "--pddl-domain", "blocks"], "add --planner pddl"),
        (["--trials", "2"], "--trials counts the trials of --self-reflect"),
        (["--memory-of", "x", "--no-memory"], "which --no-memory turns off"),
        (["--tools", "none,web"], "--tools none means no groups: give it alone"),
        (["--strategy", "plan", "--ray-address", "auto"], "add --executor ray"),
        (["--tools", "code", "--allow-host", "10.0.0.1"], "--tools leaves out web"),
        (["--goal", "a"] * 6, "at most five goals: --goal was given 6 times"),
        (
            ["--strategy", "plan", "--planner", "pddl", "--pddl-domain", "nosuch"],
            "--pddl-domain takes one of blocksworld, or a .pddl file",
        ),
        (
            [
                "--strategy",
                "plan",
                "--planner",
                "pddl",
                "--pddl-domain",
                __file__.replace(".py", ".pddl"),
            ],
            "cannot read the PDDL domain",
        ),
    ],
)
def test_options_that_would_do_nothing_are_refused_with_the_reason(
    home: Path, options: list[str], said: str
) -> None:
    result = cli(home, "run", "x", "--model", "openai:m@http://127.0.0.1:9/v1", *options)
    assert result.returncode in (1, 2) and said in one_line_error(result), result.stderr
    assert not (home / "runs.db").exists() or "x" not in cli(home, "runs").stdout


def test_a_newer_shape_is_refused_and_the_oldest_is_migrated() -> None:
    with pytest.raises(ValueError, match="newer autonoma"):
        migrate({"version": SETTINGS_VERSION + 1})
    assert migrate({"model": "x"}) == {
        "model": "x", "actions": "json", "version": 3, "memory": {}, "planning": {}
    }  # fmt: skip
    two = {"version": 2, "model": "x", "memory": False, "memory_agent": "r1", "embedder": "lexical",
           "strategy": "plan", "task_steps": 4, "planner": "tot", "actions": "code"}  # fmt: skip
    three = RunSettings.stored(two)
    assert (three.memory.enabled, three.memory.agent, three.memory.embedder) == (
        False,
        "r1",
        "lexical",
    )
    assert (three.strategy, three.planning.task_steps, three.planning.planner) == ("plan", 4, "tot")
    assert three.version == SETTINGS_VERSION and three.actions == "code"


def flat(settings: RunSettings) -> dict[str, object]:
    """Settings as version 2 stored them: memory's and planning's at the top level."""
    data = settings.model_dump()
    memory, planning = data.pop("memory"), data.pop("planning")
    data |= {"memory": memory["enabled"], "memory_agent": memory["agent"]}
    data |= {"importance": memory["importance"], "embedder": memory["embedder"]} | planning
    return data | {"version": 2}


@pytest.mark.parametrize("shape", [1, 2])
async def test_a_run_stored_in_an_old_shape_resumes(tmp_path: Path, shape: int) -> None:
    # settings as runs stored them before `version` and `actions` existed (1), or before
    # memory's and planning's settings were nested (2)
    old = flat(RunSettings(model="scripted", continuous=True, checks=False, memory=False))
    if shape == 1:
        del old["version"], old["actions"]
    store = RunStore(tmp_path / "runs.db")
    run = store.create_run(
        goal="Write hi to hi.txt",
        identity=IDENTITY.model_dump(),
        settings=old,
        workspace=str(tmp_path / "ws"),
        model="scripted",
    )
    (tmp_path / "ws").mkdir()
    model = ScriptedModel(
        [act("write_file", path="hi.txt", text="hi"), act("task_complete", reason="written")]
    )
    outcome = await resume(run.id, store=store, model=model)
    model.assert_complete()
    assert outcome.status == "completed", outcome.reason
    stored = RunSettings.stored(store.get_run(run.id).settings)
    assert stored.actions == "json" and stored.version == SETTINGS_VERSION


def test_defaults_come_from_the_user_config_and_the_environment(
    home: Path, tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.responder = scripted(
        [act("write_file", path="haiku.txt", text=HAIKU), act("task_complete", reason="done")]
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'model = "{spec(server)}"\ncontinuous = true\nchecks = false\n')
    monkeypatch.setenv("AUTONOMA_CONFIG", str(config))
    quiet = cli(home, "run", "Write a haiku", "--quiet")  # no --model: the config's
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stdout.splitlines()
    assert lines[0].startswith("run ") and "Write a haiku" in lines[0]
    assert (
        lines[1].startswith('step 1: write_file(path="haiku.txt"') and "→ wrote 3 lines" in lines[1]
    )
    assert lines[2].startswith("step 2: task_complete(") and lines[3].startswith("completed")
    assert "thoughts" not in quiet.stdout and "reasoning" not in quiet.stdout
    monkeypatch.setenv("AUTONOMA_MODEL", "openai:m@http://[::1/v1")  # the variable wins
    assert "is not a URL" in one_line_error(cli(home, "run", "Write a haiku"))
    config.write_text("modell = 1\n")
    assert f"modell in {config} is not a setting" in one_line_error(cli(home, "run", "x"))


def test_help_shows_flags_as_typed_and_the_version(home: Path) -> None:
    shown = cli(home, "run", "--help").stdout
    [json_line] = [line for line in shown.splitlines() if "--json " in line]
    assert "<bool>" not in json_line  # `--json true` then failed
    for command in ([], ["run"], ["resume"], ["runs", "prune"]):  # --help itself is a flag
        assert "<bool>" not in cli(home, *command, "--help").stdout, command
    assert "Usage: autonoma run [OPTIONS] GOAL" in shown and "<list[str]>" not in shown
    delete = cli(home, "runs", "delete", "--help").stdout
    assert "Usage: autonoma runs delete [OPTIONS] RUN_IDS..." in delete
    assert "<list[str]>" not in delete and "TEXT..." in delete
    assert "AUTONOMA_MODEL" in shown
    version = cli(home, "--version")
    assert version.returncode == 0 and version.stdout.startswith("autonoma ")


def test_an_option_that_sets_a_setting_says_what_its_docstring_says(home: Path) -> None:
    """--help, the exported schema and docs/library.md read one text: the field's docstring.
    Bounds come from the settings' own validation, in the one-line form."""
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    helps = {param.name: param.help for param in command.params}
    for path, option in OPTION_OF.items():
        if option != "max_minutes":  # minutes here, the setting's seconds there
            assert helps[option] == about(path), option
    assert "openai:MODEL[@URL]" in cli(home, "run", "--help").stdout  # not taken as markup
    for options, said in [
        (["--max-steps", "0"], "--max-steps: Input should be greater than or equal to 1"),
        (["--self-reflect", "--trials", "9"], "--trials: Input should be less than or equal to 5"),
        (["--max-minutes", "0"], "--max-minutes: Input should be greater than 0"),
    ]:
        assert said in one_line_error(cli(home, "run", "x", *options))
