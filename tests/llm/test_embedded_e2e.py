"""The real embedded model (SmolLM2-135M in llama.cpp), end to end. Fetched once if missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from autonoma.errors import ModelError, ModelNotFound
from autonoma.llm import (
    EmbeddedModel,
    LLMSettings,
    StreamDone,
    TextDelta,
    Tools,
    open_model,
)
from bench.agent_prompts import AGENT_PROMPTS, AGENT_TOOLS, agent_messages

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    from autonoma.llm import ModelStore

    return ModelStore().ensure("smollm2-135m")


async def test_twenty_agent_prompts_all_give_valid_commands(smollm_path):
    model = open_model("local:smollm2-135m?slots=2&context=2048")
    tools = Tools(AGENT_TOOLS)
    try:
        responses = await asyncio.gather(
            *(
                model.request(agent_messages(p), output=tools, max_tokens=160, temperature=0.2)
                for p in AGENT_PROMPTS[:20]
            )
        )
    finally:
        await model.aclose()
    names = {spec.name for spec in AGENT_TOOLS}
    for response in responses:
        (call,) = response.tool_calls
        assert call.name in names
        assert response.usage.prompt_tokens > 0 and not response.usage.estimated
        assert response.cost_usd == 0.0


async def test_streaming_and_prefix_cache(smollm_path):
    model = EmbeddedModel(smollm_path, settings=LLMSettings(local_context=2048, local_slots=1))
    messages = [
        {"role": "system", "content": "You are a terse assistant. " * 20},
        {"role": "user", "content": "Name a colour."},
    ]
    try:
        events = [e async for e in model.stream(messages, max_tokens=12, temperature=0)]
        again = await model.request(messages, max_tokens=12, temperature=0)
    finally:
        await model.aclose()
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert isinstance(done, StreamDone) and deltas
    assert "".join(deltas) == done.response.text
    assert again.usage.cached_tokens > 0  # the repeated prompt prefix came from the KV cache


async def test_missing_and_corrupt_model_files_are_clear_errors(tmp_path):
    with pytest.raises(ModelNotFound, match="does not exist"):
        await EmbeddedModel(tmp_path / "absent.gguf").request([{"role": "user", "content": "x"}])
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(ModelNotFound, match="not a GGUF"):
        await EmbeddedModel(fake).request([{"role": "user", "content": "x"}])
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 1000)
    with pytest.raises(ModelError, match="could not load"):
        await EmbeddedModel(broken).request([{"role": "user", "content": "x"}])


async def test_token_counts_come_from_the_models_own_tokenizer(smollm_path):
    model = EmbeddedModel(smollm_path, settings=LLMSettings(local_context=2048, local_slots=1))
    messages = [{"role": "user", "content": "Count these tokens, please."}]
    try:
        tokens = await model.tokenize("autumn leaves")
        prompt = await model.render_chat(messages)
        counted = await model.count_prompt_tokens(messages)
        answer = await model.request(messages, max_tokens=1, temperature=0)
    finally:
        await model.aclose()
    assert tokens and all(isinstance(t, int) for t in tokens)
    assert "Count these tokens, please." in prompt and prompt != messages[0]["content"]
    assert counted == answer.usage.prompt_tokens  # the same count the server charges


async def test_prompt_caches_are_kept_from_one_process_to_the_next(smollm_path, tmp_path):
    """Each family of prompts (how they begin) keeps its own state: a new server's first
    request of a family starts from what an earlier server left for that family, whatever
    the slot held last."""
    settings = LLMSettings(local_context=2048, local_slots=1)

    def prompt(kind: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": f"You are a terse assistant who names {kind}. " * 12},
            {"role": "user", "content": f"Name one of the {kind}."},
        ]

    async def served(*kinds: str, keep: Path | None = tmp_path) -> list[int]:
        """Cached tokens of each request, on a new server."""
        model = EmbeddedModel(smollm_path, settings=settings, keep_prompts_in=keep)
        try:
            answers = [await model.request(prompt(k), max_tokens=4, temperature=0) for k in kinds]
        finally:
            await model.aclose()
        return [a.usage.cached_tokens for a in answers]

    cold = await served("colours", "birds")  # nothing kept yet
    assert cold[0] == 0 and cold[1] < 20  # birds shares only "You are a terse ..." in-process
    kept = list(tmp_path.glob("*/*.bin"))
    assert len(kept) == 2 and not list(tmp_path.glob("*/*.part"))
    birds, colours = await served("birds", "colours")  # the slot last held birds; no matter
    assert birds > 100 and colours > 100

    for state in kept:  # torn: the server starts cold, forgets them, and keeps whole ones again
        state.write_bytes(state.read_bytes()[:1000])
    assert await served("colours") == [0]
    assert sorted(p.stat().st_size > 1000 for p in kept) == [False, True]

    await served("colours", keep=tmp_path / "elsewhere")  # another folder: cold, its own state
    await served("colours", keep=None)  # not asked to keep: writes nothing
    assert len(list(tmp_path.rglob("*.bin"))) == 3


async def test_requests_beyond_the_slots_wait_their_turn_without_timing_out(smollm_path):
    """llama.cpp begins no answer for a request waiting for a free slot; queued inside it, a
    request would meet the first-byte limit. More requests than slots wait in autonoma."""
    settings = LLMSettings(local_context=1024, local_slots=1, first_byte_timeout_s=0.5)
    model = EmbeddedModel(smollm_path, settings=settings)
    messages = [{"role": "user", "content": "Tell a long story about a fox."}]
    try:
        answers = await asyncio.gather(
            *(model.request(messages, max_tokens=48, temperature=0) for _ in range(6))
        )
    finally:
        await model.aclose()
    assert all(a.usage.completion_tokens > 0 for a in answers)
