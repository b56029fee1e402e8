"""Every third-party module the package imports comes from a distribution pyproject.toml
declares (in the core dependencies or an extra), so no install works only by the luck of
another package's dependencies."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "autonoma"

# Modules our code needs at run time but does not import itself; declared all the same, since
# otherwise only a dependency's dependency brings them in, and an install without them fails.
RUN_TIME = {
    # trafilatura imports justext, which imports lxml.html.clean: since lxml 5.2 a stub
    # that re-exports lxml_html_clean or raises ImportError
    "lxml_html_clean": "web",
}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> dict[str, set[str]]:
    """Each declared distribution (normalised name) and the groups declaring it: "core" or
    the extra's name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"core": project["dependencies"], **project["optional-dependencies"]}
    out: dict[str, set[str]] = {}
    for group, requirements in groups.items():
        for requirement in requirements:
            match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
            assert match, f"cannot read the requirement {requirement!r} in {group}"
            out.setdefault(normalised(match.group()), set()).add(group)
    return out


def imported_modules() -> dict[str, set[str]]:
    """Each top-level module imported anywhere in src/autonoma and the files importing it."""
    out: dict[str, set[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                out.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return out


def test_every_imported_module_comes_from_a_declared_distribution() -> None:
    distributions = importlib.metadata.packages_distributions()
    known = declared()
    third_party = {
        module: files
        for module, files in imported_modules().items()
        if module not in sys.stdlib_module_names and module != "autonoma"
    }
    assert "pydantic" in third_party  # the scan sees imports at all

    undeclared = []
    for module, files in sorted(third_party.items()):
        # not installed here: the module's own name is the best guess at its distribution
        providers = distributions.get(module) or [module]
        if not any(normalised(provider) in known for provider in providers):
            undeclared.append(f"{module} (from {', '.join(providers)}; in {', '.join(files)})")
    assert not undeclared, (
        "imported but not declared in pyproject.toml; add each distribution to the "
        "dependencies or to the extra its code needs: " + "; ".join(undeclared)
    )


def test_modules_loaded_on_our_behalf_are_declared_in_their_extra() -> None:
    known = declared()
    for module, extra in RUN_TIME.items():
        assert extra in known.get(normalised(module), set()), f"{module} is not in [{extra}]"


def test_trafilatura_loads_lxml_html_clean() -> None:
    """Why the web extra declares lxml_html_clean; drop it there when this stops holding."""
    pytest.importorskip("trafilatura")
    check = "import sys, trafilatura; print('lxml_html_clean' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "True"
