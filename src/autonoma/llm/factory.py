"""Turn a model spec string into a ready `Model`."""

from __future__ import annotations

from pathlib import Path

from autonoma.llm.base import Capabilities, Model
from autonoma.llm.embedded import EmbeddedModel
from autonoma.llm.openai_compat import OpenAICompatModel
from autonoma.llm.pricing import Price
from autonoma.llm.ratelimit import RateLimiter
from autonoma.llm.registry import ModelStore, Progress, lookup
from autonoma.llm.settings import LLMSettings
from autonoma.llm.spec import ModelSpec, parse_model_spec
from autonoma.redact import redact


def open_model(
    spec: str | ModelSpec,
    settings: LLMSettings | None = None,
    *,
    limiter: RateLimiter | None = None,
    progress: Progress | None = None,
) -> Model:
    """The model a spec names. A registry model is fetched here if missing and allowed
    (`settings.auto_pull`); the embedded server itself starts on the first request."""
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    settings = settings or LLMSettings()
    opts = parsed.options
    if parsed.provider == "local":
        kept = ModelStore(settings.cache_dir).cache_dir / "prompt-states"
        if parsed.is_path:
            path = Path(parsed.target).expanduser()
            context = int(opts["context"]) if "context" in opts else None
        else:
            store = ModelStore(settings.cache_dir)
            path = store.ensure(parsed.target, pull=settings.auto_pull, progress=progress)
            context = int(opts.get("context", 0)) or min(
                settings.local_context, lookup(parsed.target).context
            )
        return EmbeddedModel(
            path,
            name=str(parsed),
            settings=settings,
            context=context,
            slots=int(opts["slots"]) if "slots" in opts else None,
            threads=int(opts["threads"]) if "threads" in opts else None,
            keep_prompts_in=kept if settings.local_keep_prompts else None,
        )
    capabilities = Capabilities(
        json_schema=opts.get("structured", "json_schema") == "json_schema",
        native_tools=opts.get("tools", "native") == "native",
    )
    price = (
        Price(input_per_mtok=float(opts["price_in"]), output_per_mtok=float(opts["price_out"]))
        if "price_in" in opts
        else None
    )
    return OpenAICompatModel(
        parsed.target,
        base_url=parsed.base_url,
        settings=settings,
        capabilities=capabilities,
        limiter=limiter,
        name=redact(str(parsed)),
        price=price,
    )
