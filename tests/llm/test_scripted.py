"""ScriptedModel goes through the same output path as a real provider."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from autonoma.errors import ModelError, OutputInvalid
from autonoma.llm import Message, ScriptedModel, ToolCall, Tools, ToolSpec, Truncated


class Plan(BaseModel):
    steps: list[str]


async def test_answers_in_order_and_records_requests():
    model = ScriptedModel(["first", Plan(steps=["a"])])
    assert (await model.request([Message(role="user", content="1")])).text == "first"
    response = await model.request([{"role": "user", "content": "2"}], output=Plan)
    assert response.data == Plan(steps=["a"])
    assert [r.messages[-1].content for r in model.requests] == ["1", "2"]
    assert model.requests[1].mode == "json_schema" and model.requests[1].schema is not None
    assert response.usage.estimated


async def test_invalid_answers_are_reasked_like_a_real_provider():
    model = ScriptedModel(['{"steps": "not a list"}', '{"steps": ["ok"]}'])
    response = await model.request([{"role": "user", "content": "plan"}], output=Plan)
    assert response.data.steps == ["ok"] and response.attempts == 2
    assert "valid list" in model.requests[1].messages[-1].content


async def test_invalid_to_the_end_raises_output_invalid():
    model = ScriptedModel(["nope"] * 3)
    with pytest.raises(OutputInvalid):
        await model.request([{"role": "user", "content": "plan"}], output=Plan)


async def test_truncated_answers_get_more_room():
    model = ScriptedModel([Truncated('{"steps": ["a'), '{"steps": ["a"]}'])
    response = await model.request([{"role": "user", "content": "x"}], output=Plan, max_tokens=10)
    assert response.data.steps == ["a"]
    assert [r.max_tokens for r in model.requests] == [10, 20]


async def test_unconstrained_mode_puts_the_schema_in_the_prompt():
    model = ScriptedModel(['{"steps": []}'], constrained=False)
    await model.request([{"role": "user", "content": "x"}], output=Plan)
    assert model.requests[0].messages[0].role == "system"
    assert '"steps"' in model.requests[0].messages[0].content


async def test_tool_calls_functions_and_exceptions():
    spec = ToolSpec(
        name="finish", parameters={"type": "object", "properties": {"why": {"type": "string"}}}
    )
    model = ScriptedModel(
        lambda messages, request: ToolCall(
            id="1", name="finish", arguments={"why": messages[-1].content}
        )
    )
    response = await model.request([{"role": "user", "content": "done"}], output=Tools([spec]))
    assert response.tool_calls[0].arguments == {"why": "done"}
    failing = ScriptedModel([TimeoutError("boom")])
    with pytest.raises(TimeoutError):
        await failing.request([{"role": "user", "content": "x"}])


async def test_running_out_of_answers_is_a_clear_error():
    model = ScriptedModel([])
    with pytest.raises(ModelError, match="ran out of answers"):
        await model.request([{"role": "user", "content": "x"}])
