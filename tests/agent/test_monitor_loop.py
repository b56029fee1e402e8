"""The agent loop stores what the Monitor detects as events, shows them live, and a resumed
run does not report old evidence again."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from autonoma.agent.session import RunSettings, create_run, run_agent
from autonoma.cli_view import LiveView
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from tests.agent.test_loop import IDENTITY, act


async def test_a_repeated_command_is_detected_stored_and_shown(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel([act("list_files")] * 4)
    settings = RunSettings(
        model="scripted", continuous=True, memory=False, limits=BudgetLimits(max_steps=4)
    )
    run, _ = await create_run(
        store, model, "Tidy up", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    screen = io.StringIO()
    view = LiveView(Console(file=screen, width=200, color_system=None))
    await run_agent(store, model, run, listeners=[view])
    found = [e for e in store.events(run.id) if e.kind == "monitor"]
    repeat = next(e for e in found if e.data["detection"] == "repeat")
    assert repeat.step == 3 and repeat.data["steps"] == [1, 2, 3]
    assert "monitor: repeat:" in screen.getvalue()

    # resumed with more steps: the old evidence is not reported again
    store.set_settings(
        run.id, settings.model_copy(update={"limits": BudgetLimits(max_steps=5)}).model_dump()
    )
    again = ScriptedModel([act("write_file", path="a.txt", text="x")])
    await run_agent(store, again, store.get_run(run.id))
    after = [e for e in store.events(run.id) if e.kind == "monitor"]
    assert after[: len(found)] == found
    assert all(max(e.data["steps"]) == 5 for e in after[len(found) :])  # only new evidence
