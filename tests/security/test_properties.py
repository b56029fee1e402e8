"""Property-based attacks (Hypothesis): random and hostile paths against the workspace's file
commands, random model answers against the action parser and the agent loop, and random
model specs against the CLI. Whatever comes in: a clear refusal or a result, never another
exception, and nothing outside the workspace touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autonoma.agent.action import action_schema, parse_action
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.errors import AutonomaError, ModelError
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from autonoma.tools import Workspace

# pieces hostile paths are made of: climbs, roots, links' usual targets, separators, NULs
PIECES = st.sampled_from(
    ["..", ".", "/", "//", "outside", "secret.txt", "ws", "~", "\x00", "\\", "link", "a", "..."]
)
PATHS = st.one_of(
    st.lists(PIECES, min_size=1, max_size=6).map("/".join),
    st.lists(PIECES, min_size=1, max_size=6).map("".join),
    st.text(max_size=300),
)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
        if not p.is_symlink()
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=PATHS,
    data=st.binary(max_size=64),
    action=st.sampled_from(["read", "write", "append", "delete"]),
)
def test_no_path_reaches_outside_the_workspace(path: str, data: bytes, action: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        (top / "outside").mkdir()
        (top / "outside" / "secret.txt").write_bytes(b"secret")
        workspace = Workspace(top / "ws")
        (top / "ws" / "a").write_bytes(b"inside")
        (top / "ws" / "link").symlink_to(top / "outside")
        before = _tree(top / "outside")
        try:
            if action == "read":
                read = workspace.read(path, 1000)
                assert b"secret" not in read.data
            elif action == "write":
                workspace.write(path, data)
            elif action == "append":
                workspace.append(path, data, 1000)
            else:
                workspace.delete(path)
        except (AutonomaError, OSError, ValueError):
            pass  # refused, with a reason
        assert _tree(top / "outside") == before
        assert sorted(p.name for p in top.iterdir()) == ["outside", "ws"]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
ANSWERS = st.one_of(
    st.text(max_size=400),
    JSONISH.map(json.dumps),
    st.builds(
        lambda name, args: json.dumps(
            {"thoughts": {"text": "t", "plan": "p"}, "command": {"name": name, "args": args}}
        ),
        st.sampled_from(["write_file", "read_file", "delete_file", "nope", "", "task_complete"]),
        st.dictionaries(st.sampled_from(["path", "text", "reason", "x"]), JSONISH, max_size=3),
    ),
)


@settings(max_examples=200, deadline=None)
@given(answer=ANSWERS)
async def test_any_model_answer_is_an_action_or_one_model_error(answer: str) -> None:
    schema = action_schema(default_tools())
    model = ScriptedModel([answer] * 3, constrained=False)
    try:
        response = await model.request([{"role": "user", "content": "go"}], schema)
    except ModelError:
        return
    action = parse_action(response.data)
    assert isinstance(action.command, str)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers=st.lists(ANSWERS, min_size=1, max_size=4))
async def test_a_run_fed_random_answers_ends_with_a_status_and_stays_inside(
    answers: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        (top / "outside").mkdir()
        (top / "outside" / "secret.txt").write_text("secret")
        store = RunStore(top / "runs.db")
        model = ScriptedModel(answers * 3, constrained=False)
        run_settings = RunSettings(model="scripted", checks=False, continuous=True, memory=False,
                                   limits=BudgetLimits(max_steps=3))  # fmt: skip
        identity = AgentIdentity(name="FuzzGPT", role="r", goals=["g"])
        run, _ = await create_run(
            store, model, "g", run_settings, workspace=top / "ws", identity=identity
        )
        outcome = await run_agent(store, model, run)
        assert outcome.status in ("completed", "budget_exhausted", "failed", "incomplete")
        assert store.get_run(run.id).status == outcome.status  # never left running
        beside = {"changes"}  # the run's change journal, autonoma's own, beside its store
        found = [p.name for p in top.iterdir() if not p.name.startswith("runs.db")]
        assert sorted(set(found) - beside) == ["outside", "ws"]
        assert (top / "outside" / "secret.txt").read_text() == "secret"


@settings(max_examples=12, deadline=None)
@given(spec=st.one_of(st.text(min_size=1, max_size=80), st.builds(
    lambda s: f"openai:m@{s}", st.text(max_size=60)), st.builds(lambda s: f"local:{s}", st.text(max_size=40))))  # fmt: skip
def test_any_model_spec_is_one_line_not_a_traceback(spec: str) -> None:
    if "\x00" in spec or spec.startswith("-"):
        spec = "x" + spec.replace("\x00", "")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "AUTONOMA_HOME": home, "AUTONOMA_CACHE_DIR": str(Path(home) / "c")}
        env["AUTONOMA_EMBEDDER"] = "lexical"
        env.pop("OPENAI_API_KEY", None)
        ran = subprocess.run(
            [sys.executable, "-m", "autonoma", "run", "g", "--model", spec, "--continuous",
             "--max-steps", "1", "--no-checks", "--no-memory"],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
    assert "Traceback" not in ran.stderr + ran.stdout
    assert ran.returncode != 0 or "run " in ran.stdout
