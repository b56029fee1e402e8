"""What a person sets for the tools: the sandbox's limits, the web's guard, MCP servers, and
when to retrieve tools instead of offering them all. Stored with a run's settings."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from autonoma.tools.base import Risk


class SandboxSettings(BaseModel):
    """Where model-written code runs, and its limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Literal["bwrap", "docker", "unsafe"] = "bwrap"
    """bwrap: bubblewrap namespaces. unsafe: a plain child process with rlimits only, on the
    person's explicit say-so (recorded in the run, shown in red)."""
    cpu_s: int = Field(10, ge=1)
    """CPU seconds a program may use."""
    memory_mb: int = Field(512, ge=16)
    """Its address space, in MB."""
    file_mb: int = Field(50, ge=1)
    """The largest file it may write, in MB."""
    processes: int = Field(64, ge=1)
    """Processes it may run at once."""
    wall_s: float = Field(30, gt=0)
    """Seconds of wall clock before the whole sandbox is killed."""
    output_chars: int = Field(20_000, ge=100)
    """Characters of stdout and of stderr, each, that the model sees."""
    python: str | None = None
    """The interpreter inside the sandbox; by default the one found on the host."""


class WebSettings(BaseModel):
    """The web tools: which search, and the egress guard's limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    search: Literal["ddgs", "searxng"] = "ddgs"
    """The search engine web_search asks."""
    searxng_url: str | None = None
    """A SearXNG instance's address, for search = "searxng"."""
    allow: list[str] = Field(default_factory=list)
    """Hosts, addresses or networks the egress guard lets through although they are
    loopback, private or link-local ("127.0.0.1", "localhost", "10.0.0.0/8")."""
    max_bytes: int = Field(5_000_000, ge=1_000)
    """A response body's bytes, at most."""
    timeout_s: float = Field(20, gt=0)
    """Seconds one request may take."""
    max_redirects: int = Field(5, ge=0)
    """Redirects followed, each checked by the guard."""
    search_results: int = Field(8, ge=1, le=50)
    """Results web_search gives."""
    output_chars: int = Field(20_000, ge=200)
    """Characters of an http_request body that the model sees."""
    chunk_chars: int = Field(4_000, ge=500)
    """browse_website reads a page in chunks of this many characters, one model call each."""
    max_chunks: int = Field(4, ge=1)
    """Chunks browse_website reads at most: those sharing most words with the question."""
    max_links: int = Field(20, ge=0)
    """Links browse_website lists."""


class McpToolSettings(BaseModel):
    """The person's word on one tool of a server, above what the server's annotations say."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    risk: Risk | None = None
    """The tool's risk; unset: from its annotations, else the server's `risk`."""
    enabled: bool = True
    """False: never offered to the model."""


def _server_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,31}", name):
        raise ValueError(
            f"{name!r} is not a server name: a letter, then at most 31 letters, digits, - or _ "
            "(it begins the names of the server's tools)"
        )
    return name


class McpServer(BaseModel):
    """One MCP server: a command to start (stdio) or a URL (streamable HTTP).

    Also read in the form every MCP server's README shows (`command` as a string with
    `args`, and a `type`), which `ToolSettings` takes under `mcpServers`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: Annotated[str, AfterValidator(_server_name)]
    """The prefix of its tools' names."""
    command: list[str] | None = None
    """The command that starts a stdio server; `{workspace}` in it becomes the run's
    workspace."""
    url: str | None = None
    """A streamable HTTP server's address."""
    env: dict[str, str] = Field(default_factory=dict)
    """Its environment; `${VAR}` is autonoma's VAR, read at start."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Headers of HTTP requests; `${VAR}` as in env."""
    cwd: str | None = None
    """A stdio server's working directory; by default the run's workspace."""
    risk: Risk = Risk.EXECUTE
    """The risk of a tool whose annotations do not say (or when `annotations` is false)."""
    annotations: bool = True
    """Take each tool's risk from its MCP annotations (readOnlyHint, destructiveHint,
    openWorldHint): they are the server's claims, so trust them only from a server you
    trust."""
    tools: dict[str, McpToolSettings] = Field(default_factory=dict)
    """The person's word on single tools, by the server's tool name."""
    timeout_s: float = Field(60, gt=0)
    """Seconds one tool call may take."""
    start_timeout_s: float = Field(30, gt=0)
    """Seconds for starting or reaching it and listing its tools."""
    optional: bool = False
    """A server that cannot be started or reached stops the run with an McpError naming
    it; an optional one is left out with a warning instead, and the run goes on."""

    @model_validator(mode="before")
    @classmethod
    def _readme_form(cls, data: Any) -> Any:
        """`command = "uvx"` with `args = [...]`, and `type`, as the servers' READMEs write."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        approved = data.pop("autoApprove", [])  # Cline's and Roo's keys
        if approved:
            raise PydanticCustomError(
                "mcp_auto_approve",
                'autoApprove is another client\'s; here give those tools risk = "read" under '
                "tools (docs/mcp.md), knowing they then run unasked after outside content",
                {},
            )
        kind = data.pop("type", None)
        if kind is not None and kind not in _TRANSPORTS:
            raise PydanticCustomError(
                "mcp_transport",
                "type {kind} is not one autonoma speaks (stdio, or http for streamable HTTP)",
                {"kind": repr(kind)},
            )
        command, args = data.get("command"), data.pop("args", None)
        if isinstance(command, str):
            command = [command]
        if args is not None:
            if command is None or not isinstance(args, list):
                raise PydanticCustomError(
                    "mcp_args", "args is a list of strings, given with a command", {}
                )
            command = [*command, *args]
        if command is not None:
            data["command"] = command
        return data

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise PydanticCustomError("mcp_transport", "give either a command or a url", {})
        return self


# what a server's table takes, in either form (its name is the table's key): the READMEs'
# keys first, then the rest of McpServer's
_README_KEYS = ("command", "args", "env", "url", "headers", "type")
SERVER_KEYS = (
    *_README_KEYS,
    *(f for f in McpServer.model_fields if f not in (*_README_KEYS, "name")),
    "disabled",
)


def named_twice(servers: list[McpServer]) -> str | None:
    """The first name two of `servers` share, if any: their tools' names would clash."""
    names = [s.name for s in servers]
    return next((n for n in sorted(set(names)) if names.count(n) > 1), None)


_TRANSPORTS = ("stdio", "http", "streamable-http", "streamable_http", "streamableHttp")


class RetrievalSettings(BaseModel):
    """When there are many tools, offer only those most relevant to the task."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    threshold: int = Field(30, ge=1)
    """With more tools than this, offer only the k most relevant."""
    k: int = Field(25, ge=1)
    """Tools offered. 25: with the hint, the right tool was offered for 95.5% of 200
    requests among 500 tools (8 gave 88%; "Tool retrieval" in docs/benchmarks.md)."""
    hint: bool = True
    """Ask the model once a task for the command it would wish for, and search with it
    too: one model call a task; at 500 tools, 90.5% -> 95.5%."""


ToolGroup = Literal["calculator", "code", "web", "person"]
TOOL_GROUPS: tuple[ToolGroup, ...] = ("calculator", "code", "web", "person")


class ToolSettings(BaseModel):
    """The tools a run is offered and their settings (`--tool-settings`, or [tools])."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    groups: list[ToolGroup] = Field(default_factory=lambda: list(TOOL_GROUPS))
    """Built-in tool groups offered besides the workspace files and task_complete, which
    are always offered: calculator, code, web, person (all four by default; on the command
    line a comma list, or none)."""
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    """Where model-written code runs, and its limits."""
    web: WebSettings = Field(default_factory=WebSettings)
    """The web tools and the egress guard."""
    mcp: list[McpServer] = Field(default_factory=list)
    """MCP servers whose tools the run is offered (or mcpServers, the READMEs' form)."""
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    """Offering only the most relevant tools when there are many."""
    approve_after_untrusted: bool = True
    """After outside content enters the context, write, execute and network commands need
    a person's approval even in continuous mode; false opts out."""
    trust_workspace: bool = False
    """The files in the workspace when a run starts (or resumes) are the person's, not
    outside content: they no longer mark the run (files others change later still do)."""

    @model_validator(mode="before")
    @classmethod
    def _mcp_servers(cls, data: Any) -> Any:
        """`mcpServers = {name: {command, args, env} or {url, headers}}`, the form MCP servers'
        READMEs and desktop clients use, joins `mcp` (each server named by its key)."""
        if not isinstance(data, dict) or "mcpServers" not in data:
            return data
        data = dict(data)
        servers = data.pop("mcpServers")
        if not isinstance(servers, dict):
            raise PydanticCustomError("mcp_servers", "mcpServers is a table of servers by name", {})
        listed = list(data.get("mcp") or [])
        for name, server in servers.items():
            if not isinstance(server, dict):
                raise PydanticCustomError(
                    "mcp_servers", "is a table (command or url)", {"key": f"mcpServers.{name}"}
                )
            if server.get("disabled") is True:  # the desktop clients' way to turn one off
                continue
            server = {k: v for k, v in server.items() if k != "disabled"}
            try:
                listed.append(McpServer.model_validate({"name": name, **server}))
            except ValidationError as error:
                first = error.errors()[0]
                key = ".".join(str(part) for part in ("mcpServers", name, *first["loc"]))
                said = str(first["msg"]).removeprefix("Value error, ")
                if first["type"] == "extra_forbidden":
                    said = f"is not a key of an MCP server (it takes {', '.join(SERVER_KEYS)})"
                raise PydanticCustomError(
                    "mcp_servers", "{msg}", {"key": key, "msg": said}
                ) from None
        data["mcp"] = listed
        return data

    @model_validator(mode="after")
    def _unique_servers(self) -> ToolSettings:
        twice = named_twice(self.mcp)
        if twice:
            raise PydanticCustomError(
                "mcp_servers", "two MCP servers are named {name}", {"key": "mcp", "name": twice}
            )
        return self
