"""Tool retrieval: the core plus the k most relevant tools, embedded once, in registry order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from autonoma.errors import ModelError
from autonoma.llm import ScriptedModel
from autonoma.memory.embeddings import LexicalEmbedder, MiniLMEmbedder, Vectors
from autonoma.tools import CORE_TOOLS, Tool, ToolContext, ToolRegistry, Workspace
from autonoma.tools.retrieval import (
    CORE_NAMES,
    FIND_TOOLS,
    ToolRetriever,
    imagine_tool,
    name_words,
    needs_retrieval,
    step_query,
    tool_text,
)
from autonoma.tools.settings import RetrievalSettings


class NoArgs(BaseModel):
    pass


def make(name: str, description: str) -> Tool:
    return Tool(name, description, NoArgs, lambda: None, wants_context=False)


DOMAIN = [
    make("weather_forecast", "Get the weather forecast for a city: rain, wind, temperature."),
    make("send_email", "Send an email message to a recipient address."),
    make("stock_quote", "Look up the latest price of a stock ticker on the exchange."),
    make("translate_text", "Translate text from one language into another language."),
    make("calendar_add_event", "Add an event to the calendar at a date and time."),
    make("unit_convert", "Convert a quantity between units: miles, kilometres, pounds."),
    make("currency_convert", "Convert an amount of money between currencies at today's rate."),
    make("recipe_search", "Find cooking recipes by ingredient or dish name."),
]


class Counting:
    """The lexical embedder (deterministic, word overlap), recording every batch it gets."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = LexicalEmbedder()
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return await self.inner.embed(texts)


def test_retrieval_starts_past_the_threshold() -> None:
    settings = RetrievalSettings(threshold=30, k=8)
    assert not needs_retrieval(30, settings)
    assert needs_retrieval(31, settings)


def test_a_tool_is_found_by_its_names_words_and_description() -> None:
    assert name_words("calendar_create_event") == "calendar create event"
    assert name_words("github.listIssues") == "github list Issues"
    assert name_words("mcp__fs--read") == "mcp fs read"
    assert tool_text(DOMAIN[0]).startswith("weather forecast: Get the weather forecast")


async def test_select_offers_the_core_and_the_k_most_relevant_in_registry_order() -> None:
    registry = ToolRegistry([*DOMAIN[:4], *CORE_TOOLS, *DOMAIN[4:]])
    retriever = ToolRetriever(registry, Counting(), k=2)
    chosen = await retriever.select("miles to kilometres, and the weather forecast")
    names = [t.name for t in chosen]
    assert names == ["weather_forecast", *(t.name for t in CORE_TOOLS), "unit_convert"]
    ranked = await retriever.rank("miles to kilometres, and the weather forecast")
    assert {r.tool.name for r in ranked[:2]} == {"weather_forecast", "unit_convert"}
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert not {r.tool.name for r in ranked} & set(CORE_NAMES)  # the core is never ranked


async def test_each_tool_is_embedded_once_and_a_tool_added_later_alone() -> None:
    registry = ToolRegistry([*CORE_TOOLS, *DOMAIN[:6]])
    embedder = Counting()
    retriever = ToolRetriever(registry, embedder, k=3)
    await retriever.select("rain tomorrow?")
    assert embedder.calls == [[tool_text(t) for t in DOMAIN[:6]], ["rain tomorrow?"]]
    await retriever.select("send an email")
    assert embedder.calls[2:] == [["send an email"]]
    assert retriever.embedded == 6

    registry.add(DOMAIN[6])  # say, an MCP server connected
    chosen = await retriever.select("how many euros is 20 dollars in currencies")
    assert embedder.calls[3:] == [
        [tool_text(DOMAIN[6])],
        ["how many euros is 20 dollars in currencies"],
    ]
    assert "currency_convert" in [t.name for t in chosen]


async def test_a_tool_replaced_with_another_description_is_embedded_again() -> None:
    tools = [*DOMAIN[:3]]
    embedder = Counting()
    retriever = ToolRetriever(tools, embedder, k=1)
    assert [t.name for t in await retriever.select("recipes with leeks")] != ["stock_quote"]
    tools[2] = make("stock_quote", "Find cooking recipes with leeks and potatoes.")
    assert [t.name for t in await retriever.select("recipes with leeks")] == ["stock_quote"]
    assert embedder.calls[2] == [tool_text(tools[2])]


async def test_fewer_tools_than_k_are_all_offered() -> None:
    retriever = ToolRetriever([*CORE_TOOLS, *DOMAIN[:3]], Counting(), k=8)
    assert await retriever.select("anything") == [*CORE_TOOLS, *DOMAIN[:3]]
    assert await ToolRetriever(CORE_TOOLS, Counting()).select("anything") == CORE_TOOLS


async def test_core_names_the_registry_lacks_are_ignored_and_the_core_can_be_chosen() -> None:
    retriever = ToolRetriever(DOMAIN, Counting(), k=1, core=["send_email", "no_such_tool"])
    chosen = await retriever.select("what is the weather forecast")
    assert [t.name for t in chosen] == ["weather_forecast", "send_email"]


async def test_include_adds_named_tools_on_top_of_k() -> None:
    retriever = ToolRetriever(DOMAIN, Counting(), k=1, core=())
    chosen = await retriever.select("weather forecast", include=["recipe_search", "nope"])
    assert [t.name for t in chosen] == ["weather_forecast", "recipe_search"]


async def test_several_query_texts_each_bring_their_closest_tool() -> None:
    retriever = ToolRetriever(DOMAIN, Counting(), k=2, core=())
    query = ["Plan my trip to Oslo", "the weather forecast", "email the itinerary to Ann"]
    chosen = await retriever.select(query)
    assert [t.name for t in chosen] == ["weather_forecast", "send_email"]


def test_step_query_joins_the_task_the_hint_and_the_latest_thoughts() -> None:
    thoughts = {"text": "I should check the forecast", "plan": "- email Ann", "speak": "x"}
    assert step_query("Plan my trip", thoughts, hint="weather(city): Get the weather.") == (
        "Plan my trip\nweather(city): Get the weather.\nI should check the forecast\n- email Ann"
    )
    assert step_query("task") == "task"
    assert step_query(" task ", {"text": "task", "plan": "", "speak": "x"}) == "task"
    assert step_query("task", {"plan": ["not", "text"]}, hint=" ") == "task"


async def test_imagine_tool_asks_the_model_greedily_for_the_command_it_would_wish_for() -> None:
    model = ScriptedModel(["send_email(to, body): Send an email to an address."])
    response = await imagine_tool(model, "Write to Jane that the contract is signed")
    assert response.text == "send_email(to, body): Send an email to an address."
    (request,) = model.requests
    prompt = request.messages[-1].content or ""
    assert prompt.startswith('A person asked their assistant: "Write to Jane that the contract')
    assert "one function the assistant should call" in prompt
    assert request.max_tokens == 48


async def test_with_no_query_text_the_registry_order_decides() -> None:
    retriever = ToolRetriever(DOMAIN, Counting(), k=2, core=())
    assert await retriever.select(["", "  "]) == DOMAIN[:2]
    assert [r.score for r in await retriever.rank("")] == [0.0] * len(DOMAIN)


async def test_ties_keep_registry_order() -> None:
    twins = [make(f"tool_{i}", "Same words for every one.") for i in range(5)]
    retriever = ToolRetriever(twins, Counting(), k=3, core=())
    ranked = await retriever.rank("tool same words")
    assert [r.tool.name for r in ranked] == [t.name for t in twins]


async def test_from_settings_takes_k() -> None:
    retriever = ToolRetriever.from_settings(DOMAIN, Counting(), RetrievalSettings(k=3))
    assert retriever.k == 3
    assert len(await retriever.select("weather")) == 3
    with pytest.raises(ValueError, match="k must be at least 1"):
        ToolRetriever(DOMAIN, Counting(), k=0)


class Broken:
    name = "broken"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts) + 1, 4), dtype=np.float32)


async def test_an_embedder_giving_the_wrong_shape_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="broken returned vectors of shape"):
        await ToolRetriever(DOMAIN, Broken()).select("weather")


async def test_find_tools_searches_in_the_models_words_and_what_it_finds_stays_offered(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry([*CORE_TOOLS, *DOMAIN])
    retriever = ToolRetriever(registry, Counting(), k=1)
    finder = retriever.find_tools(shown=2)
    registry.add(finder)
    assert finder.name == FIND_TOOLS and FIND_TOOLS in CORE_NAMES
    assert finder.signature() == "find_tools(need: string)"

    before = await retriever.select("translate this text into French")
    assert FIND_TOOLS in [t.name for t in before]  # always offered, never ranked
    assert "recipe_search" not in [t.name for t in before]
    assert FIND_TOOLS not in [r.tool.name for r in await retriever.rank("find tools")]

    context = ToolContext(Workspace(tmp_path))
    result = await finder.run(context, {"need": "cooking recipes"})
    assert result.ok
    lines = result.output.splitlines()
    assert lines[0] == "commands for 'cooking recipes', usable from your next answer:"
    assert lines[1] == "- recipe_search(): Find cooking recipes by ingredient or dish name."
    assert len(lines) == 3
    assert retriever.found[0] == "recipe_search"

    after = [t.name for t in await retriever.select("translate this text into French")]
    assert {"recipe_search", "translate_text", *retriever.found} <= set(after)

    await finder.run(context, {"need": "stock ticker price"})
    await finder.run(context, {"need": "send an email message"})
    assert retriever.found[0] == "send_email"
    assert len(retriever.found) == 2  # the latest, as many as one search shows (more than k)


async def test_find_tools_with_nothing_to_find_says_so(tmp_path: Path) -> None:
    registry = ToolRegistry(CORE_TOOLS)
    finder = ToolRetriever(registry, Counting()).find_tools()
    result = await finder.run(ToolContext(Workspace(tmp_path)), {"need": "anything"})
    assert result.output == "no other commands exist: use the ones listed"


@pytest.mark.e2e
async def test_minilm_finds_the_right_tool_for_requests_that_share_no_words_with_it() -> None:
    tools = [
        *DOMAIN,
        make("flight_search", "Search for airline flights between two airports on a date."),
        make("restaurant_book", "Reserve a table at a restaurant for a party."),
        make("timer_start", "Start a countdown timer that rings after a duration."),
        make("news_headlines", "Fetch the top news headlines for a topic."),
    ]
    retriever = ToolRetriever([*CORE_TOOLS, *tools], MiniLMEmbedder(), k=2)
    for request, right in [
        ("Should I bring an umbrella to Lisbon tomorrow?", "weather_forecast"),
        ("How much is Apple trading at right now?", "stock_quote"),
        ("Let Maria know by mail that I'm running late", "send_email"),
        ("Ring me in 15 minutes so I don't burn the pasta", "timer_start"),
        ("What is 'good morning' in Japanese?", "translate_text"),
    ]:
        names = [t.name for t in await retriever.select(request)]
        assert right in names, (request, names)
        assert len(names) == len(CORE_TOOLS) + 2
