"""`ScriptedModel`: a model that answers from a script, for deterministic tests of logic.

It goes through exactly the same output path as a real provider (parse, repair, validate,
re-ask), so a test of an agent's reaction to a malformed answer is a test of the real path.
It is never a default anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic import BaseModel

from autonoma.errors import ModelError
from autonoma.llm.base import Capabilities, CompletionRequest, Model, RawCompletion
from autonoma.llm.pricing import FREE
from autonoma.llm.settings import LLMSettings
from autonoma.llm.types import FinishReason, Message, ToolCall

Answer: TypeAlias = str | dict[str, Any] | list[Any] | BaseModel | ToolCall | Exception
"""A scripted answer: text as is; a dict, list, model or ToolCall written as JSON; an
exception raised from the request."""

AnswerFunction: TypeAlias = Callable[[list[Message], "CompletionRequest"], Answer]


@dataclass(frozen=True)
class Truncated:
    """An answer cut off at the token limit (finish_reason "length")."""

    text: str


@dataclass(frozen=True)
class RecordedRequest:
    messages: list[Message]
    mode: str
    schema: dict[str, Any] | None
    max_tokens: int
    temperature: float | None = None


class ScriptedModel(Model):
    """Answers from a list, in order, or from a function of the messages. Records every
    request in `requests`. By default it behaves like a backend that constrains decoding
    (no schema instructions are added to the prompt); pass `constrained=False` to get the
    instructions an unconstrained server would see."""

    def __init__(
        self,
        script: Iterable[Answer | Truncated] | AnswerFunction,
        *,
        constrained: bool = True,
        settings: LLMSettings | None = None,
        name: str = "scripted",
    ) -> None:
        super().__init__(
            name,
            model_id=name,
            settings=settings,
            capabilities=Capabilities(json_schema=constrained, native_tools=False),
            price=FREE,
        )
        self._function = script if callable(script) else None
        self._answers: list[Answer | Truncated] = [] if callable(script) else list(script)
        self.requests: list[RecordedRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._answers)

    def assert_complete(self) -> None:
        """Fails when scripted answers were left unused: a run that ended before its script
        did tests less than the script says (the Agents SDK's `assert_complete`)."""
        if self._answers:
            first = self._answers[0]
            shown = repr(first) if isinstance(first, Truncated | Exception) else _as_text(first)
            raise AssertionError(
                f"{len(self._answers)} scripted answer(s) left unused after "
                f"{len(self.requests)} request(s); the next: {shown[:200]}"
            )

    async def _complete(self, request: CompletionRequest) -> RawCompletion:
        self.requests.append(
            RecordedRequest(
                request.messages,
                request.mode,
                request.plan.schema,
                request.max_tokens,
                request.temperature,
            )
        )
        if self._function is not None:
            answer: Answer | Truncated = self._function(request.messages, request)
        elif self._answers:
            answer = self._answers.pop(0)
        else:
            raise ModelError(
                f"ScriptedModel ran out of answers after {len(self.requests) - 1} request(s)"
            )
        if isinstance(answer, Exception):
            raise answer
        finish: FinishReason = "stop"
        if isinstance(answer, Truncated):
            finish, answer = "length", answer.text
        return RawCompletion(text=_as_text(answer), finish_reason=finish, model=self.model_id)


def _as_text(answer: Answer) -> str:
    if isinstance(answer, str):
        return answer
    if isinstance(answer, ToolCall):
        return json.dumps({"name": answer.name, "arguments": answer.arguments})
    if isinstance(answer, BaseModel):
        return answer.model_dump_json()
    if isinstance(answer, Sequence | dict):
        return json.dumps(answer)
    raise TypeError(f"a scripted answer cannot be a {type(answer).__name__}")
