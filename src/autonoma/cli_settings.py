"""Run settings from the command line: a settings file (`--settings`, TOML or JSON in the shape
of `RunSettings`), then each option the person gave on top of it, validated once by the
settings themselves. An invalid value is one line naming the option (or the file's key)."""

from __future__ import annotations

import copy
import json
import os
import re
import tomllib
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import platformdirs
import typer
from pydantic import ValidationError
from rich.markup import escape

from autonoma.agent.settings import MEMORY_WAS, PLANNING_WAS, RunSettings
from autonoma.runtime.inputs import InputFileError, read_input
from autonoma.tools.settings import TOOL_GROUPS, ToolSettings

# the CLI's options that set a run setting, and where each sits in `RunSettings`
FIELD_OF = {
    "model": "model", "continuous": "continuous", "seed": "seed", "strategy": "strategy",
    "subagents": "subagents", "self_reflect": "self_reflect", "trials": "trials",
    "checks": "checks", "actions": "actions",
    "memory": "memory.enabled", "memory_agent": "memory.agent",
    "importance": "memory.importance", "embedder": "memory.embedder",
    "concurrency": "planning.concurrency", "task_steps": "planning.task_steps",
    "create_tasks": "planning.create_tasks", "replans": "planning.replans",
    "executor": "planning.executor", "ray_address": "planning.ray_address",
    "planner": "planning.planner", "pddl_domain": "planning.pddl_domain",
    "tot_rate": "planning.tot_rate", "tot_search": "planning.tot_search",
}  # fmt: skip
SAME_NAME = tuple(name for name in FIELD_OF if name != "memory_agent")  # run's parameters
# settings of version 2's top level that are nested now, and where
MOVED = {old: f"memory.{new}" for old, new in MEMORY_WAS.items()} | {
    name: f"planning.{name}" for name in PLANNING_WAS
}
# the option (its parameter) that holds each field's value
OPTION_OF = (
    {
        "limits.max_steps": "max_steps",
        "limits.max_tokens": "max_tokens",
        "limits.max_usd": "budget_usd",
        "limits.max_seconds": "max_minutes",
    }
    | {path: name for name, path in FIELD_OF.items()}
    | {"memory.agent": "memory_of", "tools.groups": "tools"}
)


def about(path: str) -> str:
    """A run setting's documentation (its field docstring, `planning.concurrency`), as an
    option's help: --help, the exported schema and docs read the same text."""
    model: Any = RunSettings
    *tables, name = path.split(".")
    for table in tables:
        model = model.model_fields[table].annotation
    description = model.model_fields[name].description
    assert description, f"the setting {path} has no docstring"
    return escape(" ".join(description.split()))  # [@URL] is text, not rich's markup


def read_settings_file(path: Path, what: str) -> dict[str, Any]:
    """A TOML (by its suffix) or JSON file's table, or one clear line saying why not."""
    try:
        text = read_input(path, what)
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except InputFileError as error:
        raise typer.BadParameter(str(error)) from None
    except (ValueError, RecursionError) as error:
        raise typer.BadParameter(f"cannot read {what} {path}: {error}") from None
    if not isinstance(data, dict):
        raise typer.BadParameter(f"{what} in {path} must be a table of settings")
    return data


def user_config() -> Path:
    """The person's own defaults for every run: the run settings file format, in the user's
    config directory (AUTONOMA_CONFIG names another file)."""
    named = os.environ.get("AUTONOMA_CONFIG")
    return (
        Path(named) if named else Path(platformdirs.user_config_dir("autonoma")) / "settings.toml"
    )


def user_defaults() -> dict[str, Any]:
    """The user config file's settings, or none if there is no such file; a `--settings`
    file and the options given are laid over them."""
    path = user_config()
    if not path.exists():
        return {}
    return read_settings_file(path, "the user settings")


def given(context: typer.Context) -> set[str]:
    """The options of the command that the person gave (or set by their variables)."""
    unset = ("DEFAULT", "DEFAULT_MAP")
    return {
        name
        for name in context.params
        if (source := context.get_parameter_source(name)) is not None and source.name not in unset
    }


def run_settings(
    base: dict[str, Any],
    path: Path | None,
    options: dict[str, Any],
    chosen: set[str],
    tools: ToolSettings,
) -> RunSettings:
    """The file's settings (`base`, read from `path`) with the `chosen` of `options` on top,
    and the tools as built from both (`tool_settings_from`)."""
    data = copy.deepcopy(base)  # the nested tables are filled in below
    if isinstance(data.get("memory"), bool):  # `memory = false`, short for its `enabled`
        data["memory"] = {"enabled": data["memory"]}
    for name, value in options.items():
        if name in chosen and name in FIELD_OF:
            *tables, key = FIELD_OF[name].split(".")
            into = data
            for table in tables:
                into = into.setdefault(table, {})
            if isinstance(into, dict):  # else the file's value is refused below
                into[key] = value
    data["limits"] = {**base.get("limits", {}), **options.get("limits", {})}
    data["tools"] = tools.model_dump()
    try:
        return RunSettings.model_validate(data)
    except ValidationError as error:
        raise typer.BadParameter(one_line(error, path, chosen)) from None


def settings_laid_over(settings: RunSettings, path: Path) -> RunSettings:
    """A stored run's settings with a settings file's keys laid over them, table by table
    (resume --settings: `[llm] first_byte_timeout_s = 300` changes that and nothing else)."""
    data = read_settings_file(path, "the run settings")
    try:
        return RunSettings.model_validate(_laid_over(settings.model_dump(), data))
    except ValidationError as error:
        raise typer.BadParameter(one_line(error, path)) from None


def _laid_over(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    laid = dict(base)
    for key, value in top.items():
        below = laid.get(key)
        both_tables = isinstance(below, dict) and isinstance(value, dict)
        laid[key] = _laid_over(below, value) if both_tables else value  # type: ignore[arg-type]
    return laid


def tool_settings_from(
    path: Path | None,
    groups: str | None,
    allow: list[str],
    unsafe: bool,
    trust_outside: bool,
    trust_workspace: bool = False,
    base: dict[str, Any] | None = None,
    base_path: Path | None = None,
) -> ToolSettings:
    """Tool settings from a file (if given; else `base`, the `tools` of the run settings file
    `base_path`), then the options on top; `groups` (--tools) None keeps the file's groups."""
    data = read_settings_file(path, "the tool settings") if path is not None else dict(base or {})
    if groups is not None:
        data["groups"] = _named_groups(groups)
    try:
        settings = ToolSettings.model_validate(data)
    except ValidationError as error:
        if groups is not None and error.errors()[0]["loc"][:1] == ("groups",):
            said = one_line(error, None, {"tools"}, prefix="tools")  # the option's value
        elif path is not None:  # a key of the tool settings file
            said = one_line(error, path, listed_in="docs/tools.md")
        else:  # of the run settings file's tools
            said = one_line(error, base_path, prefix="tools", listed_in="docs/tools.md")
        raise typer.BadParameter(said) from None
    if groups is not None:  # each once, in the order the groups are offered
        settings.groups = [g for g in TOOL_GROUPS if g in settings.groups]
    settings.web.allow = [*settings.web.allow, *allow]
    if unsafe:
        settings.sandbox.backend = "unsafe"
    if trust_outside:
        settings.approve_after_untrusted = False
    if trust_workspace:
        settings.trust_workspace = True
    return settings


def _named_groups(groups: str) -> list[str]:
    """--tools as a list of group names (`none`: no group); the settings check the names."""
    named = [g.strip() for g in groups.split(",") if g.strip()]
    if "none" in named and len(named) > 1:
        raise typer.BadParameter("--tools none means no groups: give it alone")
    return [g for g in named if g != "none"]


def one_line(
    error: ValidationError,
    path: Path | None,
    chosen: AbstractSet[str] = frozenset(),
    prefix: str = "",
    listed_in: str = "docs/library.md",
) -> str:
    """The first problem of a validation, as a person reads it: the option when an option
    holds the value, else the file's key; a choice lists what may be chosen."""
    first = error.errors()[0]
    context = first.get("ctx") or {}
    inner = context.get("key") if first["type"] == "mcp_servers" else None
    key = ".".join(str(part) for part in (prefix, *first["loc"], inner or "") if part != "")
    param = OPTION_OF.get(re.sub(r"(\.\d+)+$", "", key))  # tools.groups.1 is --tools
    if param is not None and param in chosen:
        where = "--" + param.replace("_", "-")
    elif not key:  # the file as a whole (its message names the key)
        where = str(path) if path is not None else "the settings"
    else:
        where = f"{key} in {path}" if path is not None else key
    if first["type"] == "literal_error":
        choices = re.findall(r"'([^']*)'", str(first.get("ctx", {}).get("expected", "")))
        return f"{where} is one of {', '.join(choices)}, not {first['input']!r}"
    if first["type"] == "extra_forbidden":
        moved = MOVED.get(key)
        if moved is not None and path is not None:  # a file in version 2's shape
            return f"{where} is now {moved} ([{moved.split('.')[0]}] in a settings file)"
        return f"{where} is not a setting ({listed_in} lists them)"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"


# options that only a planned run reads
PLAN_ONLY = ("planner", "tot_rate", "tot_search", "pddl_domain", "create_tasks", "concurrency",
             "task_steps", "replans")  # fmt: skip


def unused_options(settings: RunSettings, chosen: AbstractSet[str]) -> str:
    """Why an option given would do nothing with the others (one line), or "": an option
    silently ignored is a setting the person thinks they made."""
    plan_only = [name for name in PLAN_ONLY if name in chosen]
    if plan_only and settings.strategy != "plan":
        return f"--{plan_only[0].replace('_', '-')} is for a planned run: add --strategy plan"
    if "pddl_domain" in chosen and settings.planning.planner != "pddl":
        return "--pddl-domain is for the PDDL planner: add --planner pddl"
    if ("tot_rate" in chosen or "tot_search" in chosen) and settings.planning.planner != "tot":
        return "--tot-rate and --tot-search are for the ToT planner: add --planner tot"
    if "trials" in chosen and not settings.self_reflect:
        return "--trials counts the trials of --self-reflect: add --self-reflect"
    if "memory_of" in chosen and not settings.memory.enabled:
        return "--memory-of continues an earlier run's memory, which --no-memory turns off"
    if "ray_address" in chosen and settings.planning.executor != "ray":
        return "--ray-address names the cluster of --executor ray: add --executor ray"
    if "allow_hosts" in chosen and "web" not in settings.tools.groups:
        return "--allow-host lets the web tools reach a host, and --tools leaves out web"
    return ""
