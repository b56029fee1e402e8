"""Model spec strings: the documented grammar, and clear errors for everything else."""

from __future__ import annotations

import pytest

from autonoma.errors import ModelSpecError
from autonoma.llm import parse_model_spec


@pytest.mark.parametrize(
    ("text", "provider", "target", "url", "options"),
    [
        ("local:qwen2.5-coder-1.5b", "local", "qwen2.5-coder-1.5b", None, {}),
        (
            "local:smollm2-135m?slots=4&context=2048",
            "local",
            "smollm2-135m",
            None,
            {"slots": "4", "context": "2048"},
        ),
        ("local:/models/my model.gguf", "local", "/models/my model.gguf", None, {}),
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None, {}),
        (
            "openai:llama3@http://127.0.0.1:11434/v1",
            "openai",
            "llama3",
            "http://127.0.0.1:11434/v1",
            {},
        ),
        (
            "openai:m@https://openrouter.ai/api/v1?structured=text&tools=schema",
            "openai",
            "m",
            "https://openrouter.ai/api/v1",
            {"structured": "text", "tools": "schema"},
        ),
    ],
)
def test_valid_specs(text, provider, target, url, options):
    spec = parse_model_spec(text)
    assert (spec.provider, spec.target, spec.base_url, spec.options) == (
        provider,
        target,
        url,
        options,
    )
    assert parse_model_spec(str(spec)) == spec


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gpt-4o", "unknown provider"),
        ("ollama:llama3", "unknown provider"),
        ("local:", "no model named"),
        ("local:llama-70b", "neither a registry model nor a .gguf path"),
        ("openai:", "no model named"),
        ("openai:m@localhost:8080", "not an http(s) URL"),
        ("local:smollm2-135m?slots=zero", "positive integer"),
        ("local:smollm2-135m?gpu=1", "option 'gpu' is not known"),
        ("openai:m?structured=xml", "structured must be one of"),
    ],
)
def test_bad_specs_say_what_is_valid(text, says):
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec(text)
    message = str(caught.value)
    assert says in message
    if "provider" in says or "no model" in says or "neither" in says:
        assert "local:smollm2-135m" in message and "openai:MODEL@http" in message
