"""A dead or hung model server is found quickly; a slow one is never cut. Answers are streamed
(docs/llm.md): the server must begin within `first_byte_timeout_s` and then say something at
least every `idle_timeout_s`; the whole answer has no limit. Short limits here stand for the
defaults (12 s and 45 s); the figures with the defaults are in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from autonoma.errors import ModelUnavailable
from autonoma.llm import LLMSettings, OpenAICompatModel
from tests.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": "hi"}]
LIMITS = LLMSettings(first_byte_timeout_s=0.5, idle_timeout_s=0.5, connect_timeout_s=1,
                     backoff_base_s=0.01, backoff_max_s=0.02)  # fmt: skip


def model_of(server: FakeOpenAI) -> OpenAICompatModel:
    return OpenAICompatModel("m", base_url=server.base_url, api_key="k", settings=LIMITS)


async def test_a_server_that_never_begins_is_given_up_after_the_first_byte_limit(
    fake_openai: FakeOpenAI,
) -> None:
    """Tried twice (`timeout_attempts`), not `max_attempts` (4) times: a hung server rarely
    recovers at once."""
    fake_openai.default = {"stall": 60}
    with pytest.raises(ModelUnavailable, match="no answer began within 0.5s, after 2 attempts"):
        await model_of(fake_openai).request(MESSAGES)
    assert len(fake_openai.requests) == 2


async def test_a_server_that_hangs_once_is_asked_again(fake_openai: FakeOpenAI) -> None:
    fake_openai.push({"stall": 60}, {"content": "back again"})
    answer = await model_of(fake_openai).request(MESSAGES)
    assert answer.text == "back again" and len(fake_openai.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_that_goes_silent_mid_answer_is_given_up(
    fake_openai: FakeOpenAI, stream: bool
) -> None:
    """Silent inside an answer for the whole idle limit: not asked again."""
    fake_openai.default = {"content": "never seen", "silence": 60}
    model = model_of(fake_openai)
    with pytest.raises(ModelUnavailable, match="nothing came for 0.5s|stream broke off"):
        if stream:
            async for _ in model.stream(MESSAGES):
                pass
        else:
            await model.request(MESSAGES)
    assert len(fake_openai.requests) == 1


async def test_a_slow_answer_is_never_cut_however_long_it_takes(fake_openai: FakeOpenAI) -> None:
    """Two seconds of answer, four times both limits: each chunk comes within the idle limit."""
    text = "slow but steady " * 2
    fake_openai.default = {"content": text, "pause": 0.2}
    answer = await model_of(fake_openai).request(MESSAGES)
    assert answer.text == text and len(fake_openai.requests) == 1


async def test_keep_alives_while_a_long_prompt_is_read_keep_the_answer_alive(
    fake_openai: FakeOpenAI,
) -> None:
    """llama.cpp sends an SSE comment every 30 s while it reads a long prompt."""
    fake_openai.default = {"content": "after a long prompt", "keepalive": [8, 0.25]}
    answer = await model_of(fake_openai).request(MESSAGES)
    assert answer.text == "after a long prompt" and len(fake_openai.requests) == 1


async def test_a_server_that_answers_whole_is_still_read(fake_openai: FakeOpenAI) -> None:
    """Asked to stream, some servers answer with one JSON body: that is an answer too."""
    body = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, '
    body += b'"finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}'
    fake_openai.default = {"raw": body, "headers": {"content-type": "application/json"}}
    answer = await model_of(fake_openai).request(MESSAGES)
    assert answer.text == "whole" and answer.usage.prompt_tokens == 3
