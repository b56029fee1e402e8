"""Settings of the LLM layer: timeouts, retries, re-asks, rate limits, prices, local runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from autonoma.llm.pricing import Price


class LLMSettings(BaseModel):
    """Everything the LLM layer can be told. Defaults suit a laptop and a hosted API alike."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(
        120.0,
        gt=0,
        description="seconds to wait for a reply that is not streamed (the embedded server's "
        "tokenizer and prompt states); chat answers are limited by the two below",
    )
    connect_timeout_s: float = Field(10.0, gt=0)
    first_byte_timeout_s: float = Field(
        12.0,
        gt=0,
        description="seconds for a server to begin its answer; answers are streamed, so a "
        "live server begins at once and a hung one is found by this limit",
    )
    idle_timeout_s: float = Field(
        40.0,
        gt=0,
        description="seconds of silence allowed inside an answer (llama.cpp sends a keep-alive "
        "every 30 s while it reads a long prompt); the whole answer has no time limit",
    )
    max_attempts: int = Field(
        4, ge=1, description="tries per request on 429, 5xx and lost connections"
    )
    timeout_attempts: int = Field(
        2,
        ge=1,
        description="tries, of max_attempts, when a server does not begin an answer in time "
        "(one that hung rarely recovers at once); one that falls silent inside an answer for "
        "idle_timeout_s is not asked again. So a hung server is found in under a minute",
    )
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(20.0, ge=0)
    max_retry_after_s: float = Field(
        60.0, ge=0, description="a longer Retry-After fails fast instead of waiting"
    )
    max_reasks: int = Field(2, ge=0, description="re-asks after invalid or truncated output")
    max_tokens: int = Field(1024, ge=1, description="answer length when the caller gives none")
    max_tokens_cap: int = Field(
        4096, ge=1, description="a truncated answer may be re-asked up to this"
    )
    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)
    prices: dict[str, Price] = Field(
        default_factory=dict, description="USD per million tokens, by model id; overrides the table"
    )
    cache_dir: Path | None = Field(None, description="where models are kept; default: user cache")
    context_window: int = Field(
        8192, ge=256, description="context tokens of a served model, for prompt budgets"
    )
    local_context: int = Field(
        8192, ge=256, description="context tokens per slot of the embedded model"
    )
    local_slots: int = Field(2, ge=1, description="parallel requests the embedded model serves")
    local_keep_prompts: bool = Field(
        True,
        description="keep the embedded model's prompt caches on disk between runs, so a run's "
        "first step reuses the instructions an earlier run computed (about 35 MB a slot "
        "for a 1,200-token prompt of the 1.5B model)",
    )
    local_threads: int | None = Field(None, ge=1, description="CPU threads; default: all cores")
    local_generation_threads: int | None = Field(
        None, ge=1, description="CPU threads while generating; default: local_threads"
    )
    local_sampling: dict[str, float] = Field(
        default_factory=lambda: {"dry_multiplier": 0.8, "repeat_penalty": 1.1},
        description="llama.cpp sampler settings; the defaults stop small models looping "
        "inside a constrained string until the token limit (measured in docs/benchmarks.md)",
    )
    local_speculative: Literal["none", "ngram-simple", "ngram-map-k", "ngram-mod"] = Field(
        "none",
        description="self-speculative decoding of the embedded model: draft tokens from n-grams "
        "already in the context, verified in one batch (no draft model)",
    )
    local_ngram: tuple[int, int] = Field(
        (12, 48), description="with ngram speculation: tokens matched, tokens drafted"
    )
    auto_pull: bool = Field(True, description="fetch a registry model on first use if missing")
