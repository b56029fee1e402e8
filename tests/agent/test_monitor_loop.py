"""The agent loop stores what the Monitor detects as events, shows them live, and a resumed
run does not report old evidence again."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.cli_view import LiveView
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from tests.agent.helpers import IDENTITY


async def test_a_repeated_command_is_detected_stored_and_shown(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel([act("list_files")] * 4)
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        limits=BudgetLimits(max_steps=4),
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


async def test_a_detected_loop_is_reflected_on_and_the_lesson_stays_in_view(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path / "runs.db")
    reflection = {
        "went_wrong": "I listed the files three times and learnt nothing new.",
        "instead": "Write tidy.txt with write_file now.",
        "verdict": "continue",
    }
    model = ScriptedModel(
        [
            *[act("list_files")] * 3,
            reflection,  # asked right after step 3, when the repeat is detected
            act("write_file", path="tidy.txt", text="done"),
            act("task_complete", reason="tidy.txt is written"),
        ]
    )
    settings = RunSettings(
        checks=False, model="scripted", continuous=True, memory=False, self_reflect=True
    )
    run, _ = await create_run(
        store,
        model,
        "Tidy up into tidy.txt",
        settings,
        workspace=tmp_path / "ws",
        identity=IDENTITY,
    )
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed"
    asked = model.requests[3].messages[-1].content
    assert "repeat" in asked and "Example 1" in asked and "Step 3: list_files" in asked
    (event,) = [e for e in store.events(run.id) if e.kind == "self_reflection"]
    assert event.step == 3 and event.data["verdict"] == "continue"
    lesson = "I listed the files three times and learnt nothing new. Instead: Write tidy.txt"
    assert event.data["lesson"].startswith(lesson)
    after = "\n".join(m.content for m in model.requests[4].messages)
    assert "Lessons from your self-reflections" in after and lesson in after
    assert lesson not in "\n".join(m.content for m in model.requests[2].messages)
    assert store.get_run(run.id).spent.tokens > 0
