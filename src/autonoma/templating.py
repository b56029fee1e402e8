"""Prompt templates (Jinja2), kept as files in a `prompts/` folder beside the code using them."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2


@cache
def _environment(package: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "prompts"),
        autoescape=False,  # prompts are plain text, not HTML
        undefined=jinja2.StrictUndefined,
    )


def render(package: str, name: str, **values: Any) -> str:
    """Render `prompts/<name>` of `package` (e.g. "autonoma.agent")."""
    return _environment(package).get_template(name).render(**values).strip()
