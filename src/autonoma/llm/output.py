"""What the caller asked for, as a schema to constrain decoding and a check of what came back.

Parsing is the AutoGPT weakness: here every structured answer goes through one path that
extracts JSON from text (code fences, prose around it, single quotes, a cut-off tail),
validates it against the schema, and reports a precise problem that a re-ask can quote.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import json_repair
from jsonschema import Draft202012Validator
from jsonschema import exceptions as jsonschema_exceptions
from pydantic import BaseModel, ValidationError

from autonoma.errors import SchemaUnsupported
from autonoma.llm.types import OutputSpec, ToolCall, Tools


class OutputProblem(Exception):
    """The answer is not what was asked for; the message is written for the model to read."""


MAX_JSON_CHARS = 1_000_000  # an answer longer than this is not parsed
MAX_JSON_DEPTH = 64  # nor one nested deeper (no schema of ours comes near)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a model's text answer, repaired where it can be.

    Handles code fences, prose before or after, single quotes, trailing commas and a
    truncated tail (closing what was left open). Raises OutputProblem when there is none.
    """
    if len(text) > MAX_JSON_CHARS:
        raise OutputProblem(
            f"the answer is {len(text)} characters long; at most {MAX_JSON_CHARS} are read"
        )
    candidate = text.strip()
    fenced = _FENCE.search(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    try:
        return _shallow(json.loads(candidate))
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise _too_deep() from None
    start = min((i for i in (candidate.find("{"), candidate.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise OutputProblem("the answer contains no JSON object")
    try:
        repaired = json_repair.loads(candidate[start:])
    except (RecursionError, ValueError):  # json_repair turns a RecursionError into this
        raise OutputProblem(
            "the answer's JSON could not be read, even after repair (nested too deep?)"
        ) from None
    if repaired in ("", None):
        raise OutputProblem("the answer's JSON could not be read, even after repair")
    return _shallow(repaired)


def _too_deep() -> OutputProblem:
    return OutputProblem(f"the answer's JSON is nested more than {MAX_JSON_DEPTH} levels deep")


def _shallow(value: Any) -> Any:
    """`value` if it is nested at most MAX_JSON_DEPTH levels (so that validating it cannot
    exhaust the stack), else OutputProblem. Walked without recursion."""
    level = [value]
    for _ in range(MAX_JSON_DEPTH + 1):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return value
    raise _too_deep()


def _tool_union_schema(tools: Tools) -> dict[str, Any]:
    """One schema for "call one of these tools": {"name": <const>, "arguments": {...}}."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": spec.name}, "arguments": spec.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for spec in tools.specs
        ]
    }


def _check_schema(schema: Mapping[str, Any]) -> Draft202012Validator:
    """A validator for the schema, checked against the metaschema once per distinct schema
    (the agent sends the same action schema every step; checking it took ~11 ms)."""
    return _checked(json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=256)
def _checked(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema_exceptions.SchemaError as err:
        raise SchemaUnsupported(
            f"the output schema is not valid JSON Schema: {err.message}"
        ) from err
    return Draft202012Validator(schema)


def _first_error(validator: Draft202012Validator, value: Any) -> str | None:
    error = jsonschema_exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"at {where}: {error.message}"


@dataclass(frozen=True)
class OutputPlan:
    """The requested output, normalised: plain text, a JSON schema, or tools."""

    kind: Literal["text", "json", "tools"]
    schema: dict[str, Any] | None = None
    model_cls: type[BaseModel] | None = None
    tools: Tools | None = None
    _validator: Draft202012Validator | None = None

    @classmethod
    def of(cls, output: OutputSpec) -> OutputPlan:
        if output is None:
            return cls(kind="text")
        if isinstance(output, Tools):
            for spec in output.specs:  # a bad tool schema fails now, not after the answer
                _check_schema(spec.parameters)
            return cls(kind="tools", schema=_tool_union_schema(output), tools=output)
        if isinstance(output, type) and issubclass(output, BaseModel):
            schema = output.model_json_schema()
            return cls(kind="json", schema=schema, model_cls=output)
        if isinstance(output, Mapping):
            schema = dict(output)
            return cls(kind="json", schema=schema, _validator=_check_schema(schema))
        raise SchemaUnsupported(
            f"output must be None, a pydantic model class, a JSON Schema dict or Tools, "
            f"not {type(output).__name__}"
        )

    def parse_json(self, value: Any) -> Any:
        """Validate a decoded JSON value against the schema; return the data to hand back."""
        if self.model_cls is not None:
            try:
                return self.model_cls.model_validate(value)
            except ValidationError as err:
                raise OutputProblem(_pydantic_problem(err)) from err
        assert self._validator is not None
        problem = _first_error(self._validator, value)
        if problem:
            raise OutputProblem(f"the JSON does not match the schema {problem}")
        return value

    def parse_tool_call(self, name: str, arguments: Any, call_id: str) -> ToolCall:
        """Validate one call against its tool's parameters."""
        assert self.tools is not None
        spec = self.tools.get(name)
        if spec is None:
            known = ", ".join(s.name for s in self.tools.specs)
            raise OutputProblem(f"there is no tool named {name!r}; the tools are: {known}")
        if isinstance(arguments, str):
            arguments = extract_json(arguments) if arguments.strip() else {}
        if not isinstance(arguments, dict):
            raise OutputProblem(f"the arguments of {name} must be a JSON object")
        problem = _first_error(Draft202012Validator(spec.parameters), arguments)
        if problem:
            raise OutputProblem(f"the arguments of {name} do not match its schema {problem}")
        return ToolCall(id=call_id, name=name, arguments=arguments)

    def parse_tool_json(self, value: Any) -> ToolCall:
        """A tool call written as JSON {"name": ..., "arguments": {...}} (schema-mode tools)."""
        if not isinstance(value, dict) or "name" not in value:
            raise OutputProblem(
                'the answer must be a JSON object {"name": ..., "arguments": {...}}'
            )
        return self.parse_tool_call(str(value["name"]), value.get("arguments", {}), "call_0")


def _pydantic_problem(err: ValidationError) -> str:
    parts = []
    for item in err.errors()[:5]:
        where = "/".join(str(p) for p in item["loc"]) or "(top level)"
        parts.append(f"at {where}: {item['msg']}")
    return "the JSON does not match the schema " + "; ".join(parts)
