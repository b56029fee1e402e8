"""Lanes: a model's requests kept to their own cached prefix (a llama.cpp slot each, OpenAI's
prompt_cache_key), and the server's own timings and cache figures in the usage."""

from __future__ import annotations

from dataclasses import replace

from autonoma.llm import LLMSettings, OpenAICompatModel, ScriptedModel
from autonoma.llm.base import SIDE_LANE
from autonoma.llm.openai_compat import DEFAULT_BASE_URL
from autonoma.llm.slots import SlotMap
from tests.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": "hi"}]


def test_the_side_lane_keeps_the_last_slot_and_agent_lanes_the_others() -> None:
    slots = SlotMap(3)
    with slots.serving("run:a") as a, slots.serving(SIDE_LANE) as side:
        assert (a, side) == (0, 2)
    with slots.serving("run:b") as b:
        assert b == 1  # a new loop takes the least recently used agent slot
    with slots.serving("run:a") as again:
        assert again == 0  # a lane keeps its slot
    with slots.serving("run:c") as c:
        assert c == 1  # slot 0 was used more recently than slot 1


def test_a_busy_slot_is_not_waited_for() -> None:
    slots = SlotMap(2)
    with slots.serving("run:a") as first, slots.serving("run:a") as second:
        assert first == 0 and second == 1  # the free one, not a wait behind the first
        with slots.serving(SIDE_LANE) as third:
            assert third is None  # all busy: llama.cpp chooses
    with slots.serving(None) as none:
        assert none is None
    assert SlotMap(1)._busy == [0]
    with SlotMap(1).serving("run:a") as only:
        assert only is None


async def test_a_lane_view_marks_requests_and_shares_the_rest() -> None:
    scripted = ScriptedModel(["one", "two"])
    side = scripted.in_lane(SIDE_LANE)
    assert side.in_lane("run:x").lane == "run:x"  # type: ignore[attr-defined]
    assert side.context_window == scripted.context_window
    assert (await side.request(MESSAGES)).text == "one"
    assert side.remaining == 1  # the scripted model's own attribute, through the view
    assert len(scripted.requests) == 1


async def test_the_lane_reaches_the_server_as_the_provider_names_it(
    fake_openai: FakeOpenAI, fast_settings: LLMSettings
) -> None:
    slotted = OpenAICompatModel(
        "m",
        base_url=fake_openai.base_url,
        settings=fast_settings,
        lane_body=lambda lane: {"id_slot": 1 if lane == SIDE_LANE else 0},
    )
    await slotted.in_lane(SIDE_LANE).request(MESSAGES)
    await slotted.request(MESSAGES)
    assert fake_openai.requests[0]["id_slot"] == 1
    assert "id_slot" not in fake_openai.requests[1]
    plain = OpenAICompatModel("m", base_url=fake_openai.base_url, settings=fast_settings)
    await plain.in_lane("run:a").request(MESSAGES)  # an unknown server gets no unknown field
    assert set(fake_openai.requests[2]) == {
        "model",
        "messages",
        "max_tokens",
        "stream",
        "stream_options",
    }
    openai = OpenAICompatModel("gpt-4o-mini", base_url=DEFAULT_BASE_URL, api_key="k")
    request = replace(openai._plan_call(MESSAGES, None, None, None, None), lane="run:a")
    assert openai._arguments(request)["extra_body"] == {"prompt_cache_key": "run:a"}


async def test_usage_carries_the_cached_tokens_and_the_server_timings(
    fake_openai: FakeOpenAI, fast_settings: LLMSettings
) -> None:
    fake_openai.push(
        {
            "content": "hi",
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 40,
                "total_tokens": 940,
                "prompt_tokens_details": {"cached_tokens": 850},
            },
            "timings": {"prompt_ms": 1250.0, "predicted_ms": 2800.5, "cache_n": 850},
        }
    )
    model = OpenAICompatModel("m", base_url=fake_openai.base_url, settings=fast_settings)
    usage = (await model.request(MESSAGES)).usage
    assert (usage.prompt_tokens, usage.cached_tokens) == (900, 850)
    assert (usage.prompt_seconds, usage.generation_seconds) == (1.25, 2.8005)
    assert (await model.request(MESSAGES)).usage.prompt_seconds == 0.0  # none given
