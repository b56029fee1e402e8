"""With more tools than the threshold, each step offers the core and the relevant few."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools
from autonoma.llm import ScriptedModel
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import EventRecord, RunStore
from autonoma.testing import act
from autonoma.tools import ToolRegistry, tool
from autonoma.tools.files import CORE_TOOLS
from autonoma.tools.settings import RetrievalSettings, ToolSettings
from tests.agent.helpers import IDENTITY

TOPICS = [
    "stock prices", "train timetables", "recipe ingredients", "song lyrics", "flight delays",
    "parcel tracking", "currency rates", "football scores", "movie showtimes", "tide tables",
    "pollen counts", "hotel rooms", "library loans", "bus routes", "air quality",
    "exam results", "parking spaces", "gym classes", "lottery numbers", "ferry crossings",
    "ski conditions", "concert tickets", "tax brackets", "dentist appointments", "wine ratings",
    "bike rentals", "museum hours", "power outages", "election results", "job listings",
    "weather forecasts",
]  # fmt: skip


def lookup_tool(topic: str) -> Any:
    def lookup(query: str) -> str:
        return f"{topic} for {query}: all fine"

    lookup.__doc__ = f"Look up {topic}.\n\nArgs:\n    query: what to look up"
    return tool(name=f"{topic.replace(' ', '_')}_lookup")(lookup)


async def test_each_step_offers_the_core_and_the_tools_closest_to_the_task(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry([*CORE_TOOLS, *(lookup_tool(t) for t in TOPICS)])
    assert len(registry) > 30
    model = ScriptedModel(
        [
            "get_forecast(city): the weather forecast for a city",  # the imagined command
            act("weather_forecasts_lookup", query="Paris"),
            act("write_file", path="weather.txt", text="fine"),
            act("task_complete", reason="weather.txt holds the forecast"),
        ]
    )
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        tools=ToolSettings(retrieval=RetrievalSettings(threshold=30, k=3)),
    )
    run, _ = await create_run(
        store,
        model,
        "Find the weather forecasts for Paris and save them to weather.txt",
        settings,
        workspace=tmp_path / "ws",
        identity=IDENTITY,
    )
    events: list[EventRecord] = []
    outcome = await run_agent(
        store, model, run, tools=registry, listeners=[events.append], embedder=LexicalEmbedder()
    )
    assert outcome.status == "completed"
    hint, first = model.requests[0], model.requests[1]
    assert "Find the weather forecasts for Paris" in hint.messages[0].content
    (imagined,) = [e for e in events if e.kind == "tools_hint"]
    assert imagined.data["hint"].startswith("get_forecast(city)")
    assert store.get_run(run.id).spent.steps == 3 and store.get_run(run.id).spent.tokens > 0
    offered = [
        c["properties"]["name"]["const"] for c in first.schema["properties"]["command"]["anyOf"]
    ]
    core = default_tools().names
    assert offered[: len(core)] == core  # always on, in registry order
    assert offered[-1] == "find_tools"  # the model can search for what is not offered
    extra = offered[len(core) : -1]
    assert len(extra) == 3 and "weather_forecasts_lookup" in extra
    system = first.messages[0].content
    assert "weather_forecasts_lookup(query: string)" in system
    assert "lottery_numbers_lookup" not in system
    shown = [e for e in events if e.kind == "tools_offered"]
    assert shown and shown[0].data["tools"] == offered
    # the command used last stays on offer at the next step
    second = model.requests[2].schema["properties"]["command"]["anyOf"]
    assert "weather_forecasts_lookup" in [c["properties"]["name"]["const"] for c in second]


async def test_below_the_threshold_every_tool_is_offered(tmp_path: Path) -> None:
    registry = ToolRegistry([*CORE_TOOLS, *(lookup_tool(t) for t in TOPICS[:5])])
    model = ScriptedModel([act("task_complete", reason="nothing to do")])
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(checks=False, model="scripted", continuous=True, memory=False)
    run, _ = await create_run(
        store, model, "Nothing", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    await run_agent(store, model, run, tools=registry, embedder=LexicalEmbedder())
    names = [
        c["properties"]["name"]["const"]
        for c in model.requests[0].schema["properties"]["command"]["anyOf"]
    ]
    assert names == registry.names


async def test_the_hint_is_asked_once_a_run_and_a_failed_hint_is_no_failure(
    tmp_path: Path,
) -> None:
    from autonoma.errors import ModelUnavailable

    registry = ToolRegistry([*CORE_TOOLS, *(lookup_tool(t) for t in TOPICS)])
    model = ScriptedModel(
        [ModelUnavailable("fake", "the model is down"), act("find_tools", need="tide times")]
    )
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        limits=BudgetLimits(max_steps=1),
        tools=ToolSettings(retrieval=RetrievalSettings(threshold=30, k=3)),
    )
    run, _ = await create_run(
        store, model, "Plan a boat trip", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    outcome = await run_agent(store, model, run, tools=registry, embedder=LexicalEmbedder())
    assert outcome.status == "budget_exhausted"
    (hint,) = [e for e in store.events(run.id) if e.kind == "tools_hint"]
    assert hint.data["hint"] == "" and "down" in hint.data["error"]
    found = store.steps(run.id)[0].observation or ""
    assert "tide_tables_lookup(query: string)" in found

    # resumed with more steps: the hint is not asked again
    more = RunSettings.model_validate(run.settings | {"limits": {"max_steps": 5}})
    store.set_settings(run.id, more.model_dump())
    again = ScriptedModel([act("task_complete", reason="done")])
    resumed = await run_agent(
        store, again, store.get_run(run.id), tools=registry, embedder=LexicalEmbedder()
    )
    assert resumed.status == "completed" and len(again.requests) == 1
    assert [e.kind for e in store.events(run.id)].count("tools_hint") == 1
