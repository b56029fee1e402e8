"""Model spec strings: one string that says which model, where, and how.

    spec     := provider ":" target [ "?" option ( "&" option )* ]
    provider := "local" | "openai"
    local    := NAME              a registry model, e.g. local:qwen2.5-coder-1.5b
              | PATH ".gguf"      any GGUF file,    e.g. local:/models/m.gguf
    openai   := MODEL [ "@" URL ] e.g. openai:gpt-4o-mini, openai:llama3@http://127.0.0.1:11434/v1
    option   := KEY "=" VALUE
      local:  context=TOKENS  slots=N  threads=N
      openai: structured=json_schema|text   tools=native|schema

Without "@URL", openai: honours OPENAI_BASE_URL and OPENAI_API_KEY, so any OpenAI-compatible
server works without code changes. `structured=text` is for servers without json_schema
response_format: the schema goes into the prompt and the answer is parsed, repaired and re-asked.
`tools=schema` is for servers without tool calling: a call is asked for as JSON {name, arguments}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from autonoma.errors import ModelSpecError
from autonoma.llm.registry import registry_names

Provider = Literal["local", "openai"]

_OPTIONS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "local": {"context": None, "slots": None, "threads": None},
    "openai": {
        "structured": ("json_schema", "text"),
        "tools": ("native", "schema"),
        "price_in": None,  # USD per million prompt tokens (a model the price table lacks)
        "price_out": None,  # USD per million answer tokens
    },
}
_PRICE_OPTIONS = {"price_in", "price_out"}
_INT_OPTIONS = {"context", "slots", "threads"}


def _valid_forms() -> str:
    names = ", ".join(f"local:{n}" for n in registry_names())
    return (
        f"valid specs: {names}, local:/path/to/model.gguf, openai:MODEL "
        "(uses OPENAI_BASE_URL / OPENAI_API_KEY), openai:MODEL@http://HOST:PORT/v1; "
        "options after '?', e.g. local:smollm2-135m?slots=2, "
        "openai:MODEL@URL?price_in=0.2&price_out=0.6 (USD per million tokens)"
    )


@dataclass(frozen=True)
class ModelSpec:
    provider: Provider
    target: str  # registry name, .gguf path, or remote model id
    base_url: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def is_path(self) -> bool:
        return self.provider == "local" and self.target.endswith(".gguf")

    def __str__(self) -> str:
        text = f"{self.provider}:{self.target}"
        if self.base_url:
            text += f"@{self.base_url}"
        if self.options:
            text += "?" + "&".join(f"{k}={v}" for k, v in self.options.items())
        return text


def _is_price(value: str) -> bool:
    try:
        return 0 <= float(value) < 1e6
    except ValueError:
        return False


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse a spec string; a bad one raises ModelSpecError listing what is valid."""
    text = spec.strip()
    provider, sep, rest = text.partition(":")
    if not sep or provider not in _OPTIONS:
        raise ModelSpecError(f"bad model spec {spec!r}: unknown provider. {_valid_forms()}")
    body, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=False)) if query else {}
    for key, value in options.items():
        allowed = _OPTIONS[provider]
        if key not in allowed:
            raise ModelSpecError(
                f"bad model spec {spec!r}: option {key!r} is not known for {provider}; "
                f"known: {', '.join(allowed) or 'none'}"
            )
        choices = allowed[key]
        if choices is not None and value not in choices:
            raise ModelSpecError(
                f"bad model spec {spec!r}: {key} must be one of {', '.join(choices)}"
            )
        if key in _INT_OPTIONS and not (value.isdigit() and int(value) > 0):
            raise ModelSpecError(f"bad model spec {spec!r}: {key} must be a positive integer")
        if key in _PRICE_OPTIONS and not _is_price(value):
            raise ModelSpecError(
                f"bad model spec {spec!r}: {key} is USD per million tokens, such as 0.15"
            )
    if ("price_in" in options) != ("price_out" in options):
        raise ModelSpecError(f"bad model spec {spec!r}: give both price_in and price_out")
    if provider == "local":
        if not body:
            raise ModelSpecError(f"bad model spec {spec!r}: no model named. {_valid_forms()}")
        if not body.endswith(".gguf") and body not in registry_names():
            raise ModelSpecError(
                f"bad model spec {spec!r}: {body!r} is neither a registry model nor a .gguf "
                f"path. {_valid_forms()}"
            )
        return ModelSpec("local", body, options=options)
    model, at, url = body.partition("@")
    if not model:
        raise ModelSpecError(f"bad model spec {spec!r}: no model named. {_valid_forms()}")
    if at:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError as err:
            raise ModelSpecError(
                f"bad model spec {spec!r}: {url!r} is not a URL ({err}). {_valid_forms()}"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ModelSpecError(
                f"bad model spec {spec!r}: {url!r} is not an http(s) URL. {_valid_forms()}"
            )
    return ModelSpec("openai", model, base_url=url or None, options=options)
