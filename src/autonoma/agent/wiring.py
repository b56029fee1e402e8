"""A run's tools as its settings make them: the commands offered, the sandbox they run code
in (opened once and handed around), the services they use, and what a person must be told
about them first. Used where a run starts (agent/session.py) and where a task of it runs on a
worker (agent/remote.py)."""

from __future__ import annotations

from autonoma.agent.memory_tools import MEMORY_TOOLS
from autonoma.agent.services import ToolServices
from autonoma.agent.settings import RunSettings
from autonoma.agent.subagents import SUB_AGENT_TOOLS
from autonoma.errors import ConfigError
from autonoma.runtime.events import Notice
from autonoma.tools import CORE_TOOLS, ToolRegistry
from autonoma.tools.calculator import calculator
from autonoma.tools.code import CODE_TOOLS
from autonoma.tools.egress import EgressGuard
from autonoma.tools.person import ask_person
from autonoma.tools.sandbox import Sandbox, SandboxUnavailable, make_sandbox
from autonoma.tools.web import WEB_TOOLS


def default_tools(*, memory: bool = False, subagents: bool = False) -> ToolRegistry:
    return ToolRegistry(
        [*CORE_TOOLS, *(MEMORY_TOOLS if memory else []), *(SUB_AGENT_TOOLS if subagents else [])]
    )


OpenedSandbox = tuple[Sandbox | None, str | None]
"""A run's sandbox or why there is none (`open_sandbox`), opened once and handed around."""


def run_tools(
    settings: RunSettings, *, memory: bool, sandbox: OpenedSandbox | None = None
) -> ToolRegistry:
    """The commands a run offers: files and task_complete, then what its settings add."""
    registry = default_tools(memory=memory, subagents=settings.subagents)
    groups = settings.tools.groups
    if "calculator" in groups:
        registry.add(calculator)
    if "person" in groups and not settings.continuous:  # nobody would answer
        registry.add(ask_person)
    if "code" in groups and (sandbox or open_sandbox(settings))[0] is not None:
        for code_tool in CODE_TOOLS:
            registry.add(code_tool)
    if "web" in groups:
        for web_tool in WEB_TOOLS:
            registry.add(web_tool)
    return registry


def open_sandbox(settings: RunSettings) -> OpenedSandbox:
    """The run's code sandbox, or why there is none (bubblewrap missing: how to install it).
    Without one the code commands are not offered at all."""
    if "code" not in settings.tools.groups:
        return None, None
    try:
        return make_sandbox(settings.tools.sandbox), None
    except SandboxUnavailable as error:
        return None, str(error)


def checks_sandbox(settings: RunSettings, sandbox: OpenedSandbox) -> Sandbox | None:
    """Where the run's acceptance checks and code actions run: its code sandbox, or one
    opened for them when the code commands are not offered; None when none can run here
    (then only judged checks are written). Code actions without one are a ConfigError."""
    if sandbox[0] is not None or not (settings.checks or settings.actions == "code"):
        return sandbox[0]
    try:
        return make_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as error:
        if settings.actions == "code":
            raise ConfigError(f"--actions code runs programs in the sandbox: {error}") from None
        return None


def tool_services(settings: RunSettings, sandbox: OpenedSandbox) -> ToolServices:
    """What the run's tools use besides the workspace: the sandbox, the web's egress guard."""
    egress = EgressGuard(settings.tools.web) if "web" in settings.tools.groups else None
    return ToolServices(sandbox=sandbox[0], egress=egress)


def tool_notices(settings: RunSettings, opened: OpenedSandbox | None = None) -> list[Notice]:
    """What a person must know about the run's tools before it starts, as events: code that
    will run unconfined, or code commands left out because no sandbox can run here."""
    sandbox, problem = opened or open_sandbox(settings)
    if problem is not None:
        return [Notice(kind="code_refused", message=problem)]
    if sandbox is not None and not sandbox.isolated:
        unconfined = (
            "code runs WITHOUT a sandbox (--unsafe-code): it can read and change whatever "
            "this user can, limited only by rlimits"
        )
        return [Notice(kind="code_unsafe", message=unconfined)]
    return []
