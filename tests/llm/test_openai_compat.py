"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 that misbehaves."""

from __future__ import annotations

import json
import socket

import pytest
from pydantic import BaseModel

from autonoma.errors import (
    ModelRefused,
    ModelRequestRejected,
    ModelUnavailable,
    OutputInvalid,
    OutputTruncated,
    RateLimited,
    SchemaUnsupported,
)
from autonoma.llm import (
    Capabilities,
    LLMSettings,
    OpenAICompatModel,
    Price,
    StreamDone,
    TextDelta,
    Tools,
    ToolSpec,
    UsageTotals,
)
from tests.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": "hi"}]


class Command(BaseModel):
    command: str
    path: str


WRITE_FILE = ToolSpec(
    name="write_file",
    description="Write text to a file",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        "required": ["path", "text"],
    },
)


def model_for(
    server: FakeOpenAI, settings: LLMSettings, *, structured: bool = True, native: bool = True
) -> OpenAICompatModel:
    return OpenAICompatModel(
        "gpt-4o-mini",
        base_url=server.base_url,
        api_key="test",
        settings=settings,
        capabilities=Capabilities(json_schema=structured, native_tools=native),
    )


async def test_plain_text_with_usage_cost_and_latency(fake_openai, fast_settings):
    fake_openai.push({"content": "Hello there"})
    model = model_for(fake_openai, fast_settings)
    response = await model.request(MESSAGES, max_tokens=20, temperature=0.1, stop=["\n\n"])
    assert response.text == "Hello there"
    assert response.usage.prompt_tokens == 11 and response.usage.completion_tokens == 7
    assert response.cost_usd == pytest.approx((11 * 0.15 + 7 * 0.60) / 1e6)
    assert response.latency_s > 0
    assert response.model == "gpt-4o-mini"
    sent = fake_openai.requests[0]
    assert sent["max_tokens"] == 20 and sent["temperature"] == 0.1 and sent["stop"] == ["\n\n"]
    totals = UsageTotals()
    totals.add(response)
    totals.add(response)
    assert totals.usage.total_tokens == 36 and totals.cost_usd == pytest.approx(
        2 * response.cost_usd
    )


async def test_price_overrides_from_settings(fake_openai, fast_settings):
    settings = fast_settings.model_copy(
        update={"prices": {"gpt-4o-mini": Price(input_per_mtok=1e6, output_per_mtok=0)}}
    )
    response = await model_for(fake_openai, settings).request(MESSAGES)
    assert response.cost_usd == pytest.approx(11.0)


async def test_429_with_retry_after_is_honoured_then_succeeds(fake_openai, fast_settings):
    fake_openai.push({"status": 429, "retry_after": "0.2"}, {"content": "ok"})
    response = await model_for(fake_openai, fast_settings).request(MESSAGES)
    assert response.text == "ok"
    assert len(fake_openai.requests) == 2


async def test_retry_after_beyond_the_cap_fails_fast(fake_openai, fast_settings):
    fake_openai.push({"status": 429, "retry_after": "3600"})
    with pytest.raises(RateLimited, match="3600s"):
        await model_for(fake_openai, fast_settings).request(MESSAGES)
    assert len(fake_openai.requests) == 1


async def test_5xx_is_retried_then_model_unavailable_names_the_endpoint(fake_openai, fast_settings):
    fake_openai.default = {"status": 500}
    with pytest.raises(ModelUnavailable) as caught:
        await model_for(fake_openai, fast_settings).request(MESSAGES)
    assert fake_openai.base_url in str(caught.value)
    assert "HTTP 500" in str(caught.value)
    assert len(fake_openai.requests) == fast_settings.max_attempts


async def test_the_sdk_does_not_retry_underneath(fake_openai, fast_settings):
    fake_openai.default = {"status": 503}
    settings = fast_settings.model_copy(update={"max_attempts": 1})
    with pytest.raises(ModelUnavailable):
        await model_for(fake_openai, settings).request(MESSAGES)
    assert len(fake_openai.requests) == 1


async def test_other_4xx_is_not_retried(fake_openai, fast_settings):
    fake_openai.push({"status": 401, "message": "bad key"})
    with pytest.raises(ModelRequestRejected, match="401.*bad key"):
        await model_for(fake_openai, fast_settings).request(MESSAGES)
    assert len(fake_openai.requests) == 1


async def test_a_schema_the_server_rejects_is_an_error_at_request_time(fake_openai, fast_settings):
    fake_openai.push({"status": 400, "message": "response_format json_schema is not supported"})
    with pytest.raises(SchemaUnsupported):
        await model_for(fake_openai, fast_settings).request(MESSAGES, output=Command)


async def test_invalid_json_schema_is_refused_before_any_call(fake_openai, fast_settings):
    with pytest.raises(SchemaUnsupported, match="not valid JSON Schema"):
        await model_for(fake_openai, fast_settings).request(MESSAGES, output={"type": "nope"})
    assert fake_openai.requests == []


async def test_a_stalled_connection_times_out_and_is_reported(fake_openai, fast_settings):
    fake_openai.default = {"stall": 30}
    settings = fast_settings.model_copy(update={"first_byte_timeout_s": 0.3, "max_attempts": 2})
    with pytest.raises(ModelUnavailable, match="no answer began within 0.3s"):
        await model_for(fake_openai, settings).request(MESSAGES)
    assert len(fake_openai.requests) == 2


async def test_an_unreachable_server_is_a_clear_error(fast_settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        model = OpenAICompatModel(
            "m", base_url=f"http://127.0.0.1:{port}/v1", settings=fast_settings
        )
        with pytest.raises(ModelUnavailable, match="cannot connect"):
            await model.request(MESSAGES)


async def test_json_schema_is_sent_as_response_format(fake_openai, fast_settings):
    fake_openai.push({"content": '{"command": "read", "path": "a.txt"}'})
    response = await model_for(fake_openai, fast_settings).request(MESSAGES, output=Command)
    assert response.data == Command(command="read", path="a.txt")
    sent = fake_openai.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["command", "path"]


async def test_json_in_code_fences_with_prose_is_parsed(fake_openai, fast_settings):
    fake_openai.push(
        {"content": 'Sure! Here it is:\n```json\n{"command": "read", "path": "a.txt"}\n```\nBye'}
    )
    model = model_for(fake_openai, fast_settings, structured=False)
    response = await model.request(MESSAGES, output=Command)
    assert response.data.path == "a.txt"
    system = fake_openai.requests[0]["messages"][0]
    assert system["role"] == "system" and '"required": ["command", "path"]' in system["content"]


async def test_single_quotes_and_truncated_json_are_repaired(fake_openai, fast_settings):
    fake_openai.push({"content": "{'command': 'read', 'path': 'notes.md"})
    model = model_for(fake_openai, fast_settings, structured=False)
    response = await model.request(MESSAGES, output=Command)
    assert response.data == Command(command="read", path="notes.md")


async def test_an_answer_cut_at_the_token_limit_is_reasked_with_more_room(
    fake_openai, fast_settings
):
    fake_openai.push(
        {"content": '{"command": "read", "pa', "finish_reason": "length"},
        {"content": '{"command": "read", "path": "b"}'},
    )
    response = await model_for(fake_openai, fast_settings).request(
        MESSAGES, output=Command, max_tokens=50
    )
    assert response.data.path == "b"
    assert response.attempts == 2
    assert [r["max_tokens"] for r in fake_openai.requests] == [50, 100]


async def test_an_answer_always_cut_off_raises_truncated(fake_openai, fast_settings):
    fake_openai.default = {"content": '{"command": "read", "path": "b"}', "finish_reason": "length"}
    with pytest.raises(OutputTruncated):
        await model_for(fake_openai, fast_settings).request(MESSAGES, output=Command)
    assert len(fake_openai.requests) == fast_settings.max_reasks + 1


async def test_wrong_schema_is_reasked_quoting_the_error(fake_openai, fast_settings):
    fake_openai.push(
        {"content": '{"command": "read"}'},
        {"content": '{"command": "read", "path": "c"}'},
    )
    model = model_for(fake_openai, fast_settings, structured=False)
    response = await model.request(MESSAGES, output=Command)
    assert response.data.path == "c" and response.attempts == 2
    reask = fake_openai.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"command": "read"}'}
    assert "path" in reask[-1]["content"] and "Field required" in reask[-1]["content"]


async def test_output_still_invalid_after_reasks_raises_with_the_raw_output(
    fake_openai, fast_settings
):
    fake_openai.default = {"content": "I would rather write a poem."}
    with pytest.raises(OutputInvalid) as caught:
        await model_for(fake_openai, fast_settings).request(MESSAGES, output=Command)
    assert caught.value.raw == "I would rather write a poem."
    assert caught.value.attempts == fast_settings.max_reasks + 1


async def test_json_schema_dict_output_validates_with_jsonschema(fake_openai, fast_settings):
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
        "required": ["n"],
    }
    fake_openai.push({"content": '{"n": 0}'}, {"content": '{"n": 3}'})
    response = await model_for(fake_openai, fast_settings).request(MESSAGES, output=schema)
    assert response.data == {"n": 3}
    assert "minimum" in fake_openai.requests[1]["messages"][-1]["content"]


async def test_native_tool_calls_are_validated(fake_openai, fast_settings):
    fake_openai.push(
        {"tool_calls": [{"name": "write_file", "arguments": '{"path": "a.txt"}'}]},
        {"tool_calls": [{"name": "write_file", "arguments": '{"path": "a.txt", "text": "hi"}'}]},
    )
    response = await model_for(fake_openai, fast_settings).request(
        MESSAGES, output=Tools([WRITE_FILE])
    )
    (call,) = response.tool_calls
    assert call.name == "write_file" and call.arguments == {"path": "a.txt", "text": "hi"}
    sent = fake_openai.requests[0]
    assert sent["tool_choice"] == "required"
    assert sent["tools"][0]["function"]["name"] == "write_file"


async def test_tools_without_native_calling_use_a_schema_union(fake_openai, fast_settings):
    fake_openai.push(
        {"content": json.dumps({"name": "write_file", "arguments": {"path": "x", "text": "y"}})}
    )
    model = model_for(fake_openai, fast_settings, native=False)
    response = await model.request(MESSAGES, output=Tools([WRITE_FILE]))
    assert response.tool_calls[0].arguments == {"path": "x", "text": "y"}
    schema = fake_openai.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["anyOf"][0]["properties"]["name"] == {"const": "write_file"}


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        ({"refusal": "I can't help with that"}, "refusal"),
        ({"content": "", "finish_reason": "content_filter"}, "content filter"),
        ({"content": ""}, "empty answer"),
    ],
)
async def test_refusal_filter_and_empty_are_reported_not_retried(
    fake_openai, fast_settings, behaviour, kind
):
    fake_openai.default = behaviour
    with pytest.raises(ModelRefused) as caught:
        await model_for(fake_openai, fast_settings).request(MESSAGES, output=Command)
    assert caught.value.kind == kind
    assert len(fake_openai.requests) == 1


async def test_streaming_yields_deltas_then_the_validated_response(fake_openai, fast_settings):
    fake_openai.push({"content": '{"command": "list", "path": "."}'})
    events = [
        e async for e in model_for(fake_openai, fast_settings).stream(MESSAGES, output=Command)
    ]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert "".join(deltas) == done.response.text
    assert done.response.data == Command(command="list", path=".")
    assert done.response.usage.completion_tokens == 7
    assert fake_openai.requests[0]["stream"] is True


async def test_a_sampling_seed_is_sent_and_omitted_when_unset(fake_openai, fast_settings):
    fake_openai.push({"content": "one"}, {"content": "two"})
    model = model_for(fake_openai, fast_settings)
    await model.request(MESSAGES, max_tokens=5, seed=7)
    await model.request(MESSAGES, max_tokens=5)
    first, second = fake_openai.requests
    assert first["seed"] == 7 and "seed" not in second
