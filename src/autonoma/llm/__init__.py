"""One async interface to every model. See `Model.request` and `open_model`."""

from autonoma.llm.base import Capabilities, Model
from autonoma.llm.embedded import EmbeddedModel
from autonoma.llm.factory import open_model
from autonoma.llm.openai_compat import OpenAICompatModel
from autonoma.llm.pricing import Price
from autonoma.llm.ratelimit import RateLimiter
from autonoma.llm.registry import REGISTRY, ModelStore
from autonoma.llm.scripted import ScriptedModel, Truncated
from autonoma.llm.settings import LLMSettings
from autonoma.llm.spec import ModelSpec, parse_model_spec
from autonoma.llm.types import (
    Message,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Tools,
    ToolSpec,
    Usage,
    UsageTotals,
)

__all__ = [
    "REGISTRY",
    "Capabilities",
    "EmbeddedModel",
    "LLMSettings",
    "Message",
    "Model",
    "ModelResponse",
    "ModelSpec",
    "ModelStore",
    "OpenAICompatModel",
    "Price",
    "RateLimiter",
    "ScriptedModel",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolSpec",
    "Tools",
    "Truncated",
    "Usage",
    "UsageTotals",
    "open_model",
    "parse_model_spec",
]
