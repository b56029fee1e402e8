"""The Tool type and the `@tool` decorator that derives a tool's schema from its signature."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, get_type_hints

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from autonoma.llm import Model, ToolSpec
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools.provenance import OwnFiles
from autonoma.tools.workspace import Workspace

if TYPE_CHECKING:  # these modules build on this one
    from autonoma.tools.egress import EgressGuard
    from autonoma.tools.sandbox import Sandbox
    from autonoma.tools.web import SearchProvider


class Risk(StrEnum):
    """What a tool can do; approval and policy decide by it."""

    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"
    NETWORK = "network"


AskPerson = Callable[[str], Awaitable[str | None]]
"""Puts a question to the person and returns the answer (None: no one answered)."""


@dataclass
class ToolContext:
    """What a running tool may use, built per run and handed to every call. Each service is
    typed; one the run does not have is None, and the tool that needs it says so."""

    workspace: Workspace
    _: KW_ONLY
    # which files hold what the run wrote: what the file tools show from others' is marked
    # outside content (None: no run keeps track, and nothing is marked)
    own: OwnFiles | None = None
    model: Model | None = None  # the run's model (browse_website reads pages with it)
    sandbox: Sandbox | None = None  # where code runs
    egress: EgressGuard | None = None  # what the web tools may reach
    search: SearchProvider | None = None  # web search, when not the settings' own
    spent: BudgetSpent | None = None  # what the run has spent: tools' model calls add to it
    ask_person: AskPerson | None = None  # the person at the terminal, when there is one
    # whether code the tools run may change the workspace: not after outside content in a
    # continuous run, when every change goes through the file tools, whose gate sees each
    code_writes: bool = True
    # what the agent layer's own tools (memory, sub-agents) reach the run through: an
    # agent.services.RunServices, typed there (this layer cannot name it)
    run: object | None = None


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced. `final` ends the task (task_complete)."""

    ok: bool
    output: str
    final: bool = False
    # the output came from outside (web, APIs, MCP, files the run did not write): data, not
    # instructions
    untrusted: bool = False


ToolFunction = Callable[..., Any]


@functools.cache
def _model_schema(model: type[BaseModel]) -> str:
    """An arguments model's JSON Schema, as text: pydantic takes about half a millisecond to
    make one, and every agent asks for every tool's at every start and in every prompt."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    return json.dumps(schema)


class RawArguments(BaseModel):
    """The `args_model` of a tool that brings its own JSON Schema (`Tool.parameters`)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class Tool:
    """A command the model may call.

    Its arguments are described either by `args_model` (a pydantic model: the usual case, see
    `@tool`) or, for a tool that arrives with a JSON Schema (an MCP server's), by `parameters`:
    then `spec()` and `signature()` use that schema, `run()` validates the arguments against
    it with jsonschema, and the function receives them as one dict (`function(arguments)`,
    or `function(context, arguments)`), since their names need not be Python identifiers.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    function: ToolFunction
    risk: Risk = Risk.READ
    timeout_s: float = 60.0
    wants_context: bool = True
    parameters: dict[str, Any] | None = field(default=None, hash=False)
    # every effect stays in the workspace, where the run's change journal can put it back
    # (tools/changes.py): after outside content, a continuous run may go on using it
    undoable: bool = False
    # where `risk` came from, as `autonoma tools` shows it ("built-in", "MCP annotations
    # readOnlyHint", "your setting", ...)
    risk_from: str = "built-in"

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: dict[str, Any],
        function: ToolFunction,
        *,
        risk: Risk = Risk.READ,
        timeout_s: float = 60.0,
        wants_context: bool = False,
        risk_from: str = "built-in",
    ) -> Tool:
        """A tool whose arguments are a JSON Schema object. Raises jsonschema's SchemaError
        when `parameters` is not a valid schema."""
        Draft202012Validator.check_schema(parameters)
        return cls(
            name=name,
            description=description,
            args_model=RawArguments,
            function=function,
            risk=risk,
            timeout_s=timeout_s,
            wants_context=wants_context,
            parameters=parameters,
            risk_from=risk_from,
        )

    def _schema(self) -> dict[str, Any]:
        if self.parameters is not None:
            return dict(self.parameters)
        schema: dict[str, Any] = json.loads(_model_schema(self.args_model))  # a fresh copy
        return schema

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self._schema())

    def signature(self) -> str:
        """`write_file(path: string, text: string)`: how the prompt lists the command."""
        props = self._schema().get("properties", {})
        args = ", ".join(f"{n}: {_type_name(p)}" for n, p in props.items())
        return f"{self.name}({args})"

    async def run(self, context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        """Validate and run. Bad arguments, exceptions and timeouts become a failed result
        carrying the error verbatim; they never escape."""
        call: Callable[[], Any]
        if self.parameters is not None:
            problems = _schema_problems(self.parameters, arguments)
            if problems:
                return ToolResult(False, f"error: invalid arguments for {self.name}: {problems}")
            given = dict(arguments)
            if self.wants_context:
                call = lambda: self.function(context, given)  # noqa: E731
            else:
                call = lambda: self.function(given)  # noqa: E731
        else:
            try:
                args = self.args_model.model_validate(arguments)
            except ValidationError as err:
                return ToolResult(
                    False, f"error: invalid arguments for {self.name}: {_problems_of(err)}"
                )
            kwargs = {name: getattr(args, name) for name in type(args).model_fields}
            if self.wants_context:
                call = lambda: self.function(context, **kwargs)  # noqa: E731
            else:
                call = lambda: self.function(**kwargs)  # noqa: E731
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation
            # (Ctrl-C) that lands as the tool finishes, and the run would go on.
            async with asyncio.timeout(self.timeout_s):
                if inspect.iscoroutinefunction(self.function):
                    value = await call()
                else:
                    value = await asyncio.to_thread(call)
        except TimeoutError:
            return ToolResult(False, f"error: {self.name} timed out after {self.timeout_s:g}s")
        except Exception as err:  # a tool failure is an observation, never a crash
            return ToolResult(False, f"error: {type(err).__name__}: {err}")
        if isinstance(value, ToolResult):
            return value
        return ToolResult(True, "" if value is None else str(value))


def _type_name(prop: Any) -> str:
    """A property's JSON type for the prompt: "string", "integer|null", or "any"."""
    kind = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return "|".join(kind)
    return "any"


def _schema_problems(schema: dict[str, Any], arguments: Any, most: int = 5) -> str:
    """What is wrong with `arguments` under `schema`, one line per problem, or "" if nothing."""
    found = Draft202012Validator(schema).iter_errors(arguments)
    errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
    lines = [
        f"at {'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message}"
        for e in errors[:most]
    ]
    if len(errors) > most:
        lines.append(f"and {len(errors) - most} more")
    return "; ".join(lines)


_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.+)$")


def _docstring_parts(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before "Args:") and per-argument descriptions (Google style)."""
    doc = inspect.cleandoc(doc or "")
    head, _, tail = doc.partition("\nArgs:")
    described: dict[str, str] = {}
    for line in tail.splitlines():
        match = _ARG_LINE.match(line)
        if match:
            described[match.group(1)] = match.group(2).strip()
    return " ".join(head.split()), described


def tool(
    *,
    risk: Risk = Risk.READ,
    timeout_s: float = 60.0,
    name: str | None = None,
    undoable: bool = False,
) -> Callable[[ToolFunction], Tool]:
    """Make a Tool from a function. Its typed parameters become the argument schema, its
    docstring the description (and `Args:` lines each argument's). A first parameter named
    `context` receives the ToolContext and is not part of the schema."""

    def wrap(function: ToolFunction) -> Tool:
        hints = get_type_hints(function, include_extras=True)  # keeps Annotated constraints
        params = list(inspect.signature(function).parameters.values())
        wants_context = bool(params) and params[0].name == "context"
        if wants_context:
            params = params[1:]
        description, arg_docs = _docstring_parts(function.__doc__ or "")
        fields: dict[str, Any] = {}
        for param in params:
            if param.name not in hints:
                raise TypeError(f"tool {function.__name__}: parameter {param.name} has no type")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (
                hints[param.name],
                Field(default, description=arg_docs.get(param.name)),
            )
        args_model = create_model(
            f"{function.__name__}_args",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        return Tool(
            name=name or function.__name__,
            description=description,
            args_model=args_model,
            function=function,
            risk=risk,
            timeout_s=timeout_s,
            wants_context=wants_context,
            undoable=undoable,
        )

    return wrap


def _problems_of(err: ValidationError) -> str:
    """Each problem on one short line, without pydantic's model name and web address: a small
    model reads one line per problem (an empty text said plainly), not a page of dump."""
    lines = []
    for problem in err.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        said = problem["msg"]
        if problem["type"] == "string_too_short" and problem.get("ctx", {}).get("min_length") == 1:
            # the 1.5B model wrote an empty hottest.txt "first" three times, told only the
            # rule's words; an empty text is asked for in the same call as the content
            said = "it is empty; give the whole text in this same call (work it out first)"
        lines.append(f"{where}: {said}")
    return "; ".join(lines)
