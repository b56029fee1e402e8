"""Security suite, a hostile or broken model server: whatever body it answers with (a proxy's
HTML page, JSON of the wrong shape, bytes that are not UTF-8, JSON nested 200,000 levels, a
gzip body that inflates to gigabytes, a compression autonoma does not read), the call ends
in an unusable answer or one clear ModelError: never another exception, never unbounded
memory."""

from __future__ import annotations

import gzip
import resource
import zlib
from typing import Any

import pytest

from autonoma.errors import ModelError, ModelUnavailable, OutputTruncated
from autonoma.llm import Capabilities, LLMSettings, OpenAICompatModel
from tests.fake_openai import FakeOpenAI

JSON = {"content-type": "application/json"}
MESSAGES = [{"role": "user", "content": "hi"}]
SCHEMA = {"type": "object"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bomb(mib: int) -> bytes:
    """A gzip body of a few MB that inflates to `mib` MiB."""
    pack = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b" " * 2**20
    return b"".join([pack.compress(b"{"), *(pack.compress(chunk) for _ in range(mib)),
                     pack.flush()])  # fmt: skip


BODIES: dict[str, dict[str, Any]] = {
    "html": {
        "raw": b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>",
        "headers": {"content-type": "text/html"},
    },
    "wrong shape": {"raw": b'{"hello": "world"}', "headers": JSON},
    "choices not a list": {"raw": b'{"choices": "x"}', "headers": JSON},
    "message null": {"raw": b'{"choices": [{"message": null}]}', "headers": JSON},
    "a list": {"raw": b"[1, 2, 3]", "headers": JSON},
    "empty": {"raw": b"", "headers": JSON},
    "not utf-8": {"raw": b'{"choices": "\xff\xfe"}', "headers": JSON},
    "deep": {"raw": b"[" * 200_000, "headers": JSON},
    "brotli": {"raw": b"\x0b\x02\x80hi\x03", "headers": JSON | {"content-encoding": "br"}},
}


def _model(fake: FakeOpenAI) -> OpenAICompatModel:
    settings = LLMSettings(timeout_s=10, connect_timeout_s=2, max_attempts=2,
                           backoff_base_s=0.01, backoff_max_s=0.02)  # fmt: skip
    return OpenAICompatModel("m", base_url=fake.base_url, api_key="k", settings=settings,
                             capabilities=Capabilities(json_schema=True))  # fmt: skip


@pytest.mark.parametrize("body", list(BODIES))
@pytest.mark.parametrize("stream", [False, True])
async def test_any_body_is_an_unusable_answer_or_one_model_error(
    fake_openai: FakeOpenAI, body: str, stream: bool
) -> None:
    fake_openai.default = BODIES[body]
    model = _model(fake_openai)
    try:
        if stream:
            async for _ in model.stream(MESSAGES):
                pass
        else:
            await model.request(MESSAGES, output=SCHEMA)
    except ModelError as err:
        assert "Traceback" not in str(err)
    finally:
        await model.aclose()


async def test_an_answer_in_the_model_text_nested_deep_is_re_asked_not_a_crash(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.push({"content": "[" * 200_000}, {"content": "{" * 5000 + "}" * 5000},
                     {"content": '{"ok": true}'})  # fmt: skip
    model = _model(fake_openai)
    try:
        answer = await model.request(MESSAGES, output=SCHEMA)
    finally:
        await model.aclose()
    assert answer.data == {"ok": True}
    assert len(fake_openai.requests) == 3


async def test_a_proxy_page_says_what_is_wrong(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = BODIES["html"]
    model = _model(fake_openai)
    with pytest.raises(ModelUnavailable) as info:
        await model.request(MESSAGES)
    await model.aclose()
    assert "not a chat completion" in str(info.value)
    assert "Welcome to nginx" in str(info.value)
    assert "/v1" in str(info.value)


async def test_a_gzip_bomb_is_stopped_at_the_limit_not_inflated(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = {"raw": _bomb(512), "headers": JSON | {"content-encoding": "gzip"}}
    model = _model(fake_openai)
    peak = _peak_mb()
    with pytest.raises(ModelUnavailable, match="once inflated"):
        await model.request(MESSAGES)
    await model.aclose()
    assert _peak_mb() - peak < 250  # the 512 MiB were never held
    assert len(fake_openai.requests) == 1  # not retried: it would answer the same


async def test_an_honest_gzip_answer_still_reads(fake_openai: FakeOpenAI) -> None:
    body = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"},' \
           b' "finish_reason": "stop"}], "model": "m"}'  # fmt: skip
    fake_openai.default = {"raw": gzip.compress(body),
                           "headers": JSON | {"content-encoding": "gzip"}}  # fmt: skip
    model = _model(fake_openai)
    answer = await model.request(MESSAGES)
    await model.aclose()
    assert answer.text == "fine"


async def test_an_answer_longer_than_its_tokens_allow_is_cut_and_treated_as_cut_off(
    fake_openai: FakeOpenAI,
) -> None:
    """50 MB of answer to a 200-token request: nothing that long is kept, stored or carried
    into the next prompt; a structured answer is re-asked and then one clear error."""
    huge = '{"thoughts": {"text": "' + "ha" * 25_000_000 + '"}}'
    fake_openai.default = {"content": huge}
    model = _model(fake_openai)
    plain = await model.request(MESSAGES, max_tokens=200)
    assert len(plain.text) == 200 * 32 and plain.finish_reason == "length"
    with pytest.raises(OutputTruncated) as info:
        await model.request(MESSAGES, SCHEMA, max_tokens=200)
    await model.aclose()
    # a re-ask of a cut-off answer may ask for more tokens, never past the cap
    assert len(str(info.value)) < 2000
    assert len(info.value.raw) <= LLMSettings().max_tokens_cap * 32
