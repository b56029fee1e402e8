"""The source's shape: the import contract (`[tool.importlinter]` in pyproject.toml, run by
`lint-imports` in `make test`) holds only the modules its layers name, so every module and
package directly in autonoma is named and a new one cannot import upward unseen; no module runs
past the house rule's length; and a run's events are written only through the one sink."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import autonoma

ROOT = Path(__file__).parent.parent
PACKAGE = Path(autonoma.__file__).parent
MOST_LINES = 800  # the house rule: a longer module is split by responsibility


def layered_modules() -> set[str]:
    """The modules the layers contract names, optional ones (in parentheses) included."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    return {name.strip("() ") for layer in layers for name in re.split(r"[|:]", layer)}


def top_level_modules() -> set[str]:
    """Each module and package directly in autonoma, by its dotted name."""
    found = {f"autonoma.{path.stem}" for path in PACKAGE.glob("*.py") if path.name != "__init__.py"}
    found |= {f"autonoma.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    return found


def test_every_module_of_autonoma_is_in_a_layer() -> None:
    unplaced = top_level_modules() - layered_modules()
    assert not unplaced, f"name these in [tool.importlinter]'s layers: {sorted(unplaced)}"
    # the listing sees modules and packages alike
    assert {"autonoma.cli_inspect", "autonoma.testing", "autonoma.agent"} <= top_level_modules()


def test_no_module_is_longer_than_the_house_rule() -> None:
    lines = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert lines["agent/checks.py"] > 100  # the count reads the modules themselves
    too_long = {name: n for name, n in lines.items() if n > MOST_LINES}
    assert not too_long, f"split these by responsibility: {too_long}"


def test_events_are_written_only_through_the_sink() -> None:
    """runtime/sink.py stores an event and tells the listeners; the store itself and its copy
    of a remote task's records (agent/remote.py) are storage, not emitters."""
    storage = {"runtime/sink.py", "runtime/store.py", "agent/remote.py"}
    writers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "add_event"
    }
    assert "runtime/sink.py" in writers  # the search finds what it looks for
    assert writers <= storage, f"emit through runtime/sink.py: {sorted(writers - storage)}"
