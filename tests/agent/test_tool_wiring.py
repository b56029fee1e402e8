"""A run with the default tool settings: the code commands run in the bubblewrap sandbox, the
calculator answers, and the web commands are guarded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from tests.agent.helpers import IDENTITY


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_default_tools_work_in_a_run(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            act(
                "execute_python",
                code="open('squares.txt', 'w').write(str([i * i for i in range(5)]))",
            ),
            act("calculator", expression="17 * 23"),
            act("http_request", method="GET", url="http://169.254.169.254/latest/meta-data/"),
            act("task_complete", reason="squares.txt is written"),
        ]
    )
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(checks=False, model="scripted", continuous=True, memory=False)
    run, _ = await create_run(
        store, model, "Write squares.txt", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed"
    assert (tmp_path / "ws" / "squares.txt").read_text() == "[0, 1, 4, 9, 16]"
    code, calc, http, _ = store.steps(run.id)
    assert code.ok and "exit code 0" in (code.observation or "")
    assert calc.observation == "17 * 23 = 391"
    assert not http.ok and "169.254.169.254" in (http.observation or "")
    assert not http.untrusted  # refused before anything was fetched: nothing came in
