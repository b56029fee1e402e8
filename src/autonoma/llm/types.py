"""Data that crosses the LLM layer's boundary: messages, output specs, responses, usage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One chat message, in the OpenAI chat format."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name:
            out["name"] = self.name
        return out


MessagesLike: TypeAlias = Sequence[Message | Mapping[str, Any]]


def as_messages(messages: MessagesLike) -> list[Message]:
    """Accept `Message` objects or plain `{"role", "content"}` dicts."""
    return [m if isinstance(m, Message) else Message.model_validate(dict(m)) for m in messages]


class ToolSpec(BaseModel):
    """A command the model may call: a name, what it does, and a JSON Schema for its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Tools:
    """Ask the model to call one of these tools (exactly one unless `parallel`)."""

    specs: tuple[ToolSpec, ...]
    parallel: bool = False

    def __init__(self, specs: Sequence[ToolSpec], parallel: bool = False) -> None:
        if not specs:
            raise ValueError("Tools needs at least one ToolSpec")
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique, got {names}")
        object.__setattr__(self, "specs", tuple(specs))
        object.__setattr__(self, "parallel", parallel)

    def get(self, name: str) -> ToolSpec | None:
        return next((s for s in self.specs if s.name == name), None)


# What `Model.request(output=...)` accepts: None for plain text, a pydantic model class,
# a JSON Schema dict, or a set of tools.
OutputSpec: TypeAlias = type[BaseModel] | Mapping[str, Any] | Tools | None


class ToolCall(BaseModel):
    """A validated call of one tool."""

    id: str
    name: str
    arguments: dict[str, Any]


class Usage(BaseModel):
    """Token counts of one or more requests. `estimated` when counted locally, not by the server.
    `cached_tokens`: of the prompt tokens, those the server took from its prompt cache. The
    seconds are the server's own figures (llama.cpp's `timings`), 0 when it gives none."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    prompt_seconds: float = 0.0
    generation_seconds: float = 0.0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            prompt_seconds=self.prompt_seconds + other.prompt_seconds,
            generation_seconds=self.generation_seconds + other.generation_seconds,
            estimated=self.estimated or other.estimated,
        )


FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "refusal", "other"]


class ModelResponse(BaseModel):
    """What `Model.request` returns. `data` is the validated object when a schema was asked for:
    a pydantic instance for a model class, a dict for a JSON Schema."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    data: Any = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    model: str = ""
    finish_reason: FinishReason = "stop"
    attempts: int = 1


@dataclass(frozen=True)
class TextDelta:
    """A piece of text as the model produces it."""

    text: str


@dataclass(frozen=True)
class StreamDone:
    """The last item of a stream: the whole response, validated like `request`'s."""

    response: ModelResponse


StreamEvent: TypeAlias = TextDelta | StreamDone


@dataclass
class UsageTotals:
    """Running totals for a run (or any scope): add every response to it."""

    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def add(self, response: ModelResponse) -> None:
        self.requests += response.attempts
        self.usage = self.usage + response.usage
        self.cost_usd += response.cost_usd
        self.latency_s += response.latency_s
