"""The tests' own house rules: a test module is never imported by another (shared helpers
live in conftest.py or a helpers module), so running one test file runs only its tests."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
from pathlib import Path

TESTS = Path(__file__).parent


def imported_test_modules(path: Path) -> list[str]:
    """Modules named test_* that `path` imports, anywhere in it (a subprocess's script
    included: a string that parses as Python with an import is read too)."""
    tree = ast.parse(path.read_text(), str(path))
    names = imported_in(tree, _package_of(path))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "import" in node.value
        ):
            with contextlib.suppress(SyntaxError):
                names += imported_in(ast.parse(node.value))
    return [n for n in names if n.startswith("tests.") and _is_test(n)]


def _package_of(path: Path) -> str:
    """A file's package: tests/agent/x.py is in "tests.agent"; "" outside the tests."""
    try:
        return ".".join(["tests", *path.resolve().parent.relative_to(TESTS.resolve()).parts])
    except ValueError:  # a file outside the tests: only absolute imports are read
        return ""


def imported_in(tree: ast.AST, package: str = "") -> list[str]:
    """The modules an import names, a relative one (`from .test_loop import act`) made
    whole from the importing file's package."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            if not package:
                continue
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            out.append(base)
            if not node.module:  # from . import test_loop
                out += [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
    return out


def _is_test(module: str) -> bool:
    return module.rsplit(".", 1)[-1].startswith("test_")


def test_no_test_module_imports_another() -> None:
    offenders = {
        str(path.relative_to(TESTS)): names
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__) and (names := imported_test_modules(path))
    }
    assert offenders == {}, "move what they share into conftest.py or a helpers module"


def test_the_rule_sees_an_import_of_a_test_module(tmp_path: Path) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text(
        "from tests.agent.test_loop import act\n"
        "SCRIPT = '''\nfrom tests.test_cli import cli\n'''\n"
        "from tests.agent.helpers import IDENTITY\n"
    )
    assert imported_test_modules(bad) == ["tests.agent.test_loop", "tests.test_cli"]


def test_the_rule_sees_a_relative_import_of_a_test_module() -> None:
    """tests/agent/test_monitor.py imported `from .test_loop import act, start`, which the
    rule, reading absolute names only, let through."""
    bad = TESTS / "agent" / "test_relative_probe.py"  # where such a file would be
    tree = ast.parse("from .test_loop import act\nfrom . import test_cli\nfrom .. import x\n")
    names = imported_in(tree, _package_of(bad))
    assert names == [
        "tests.agent.test_loop", "tests.agent", "tests.agent.test_cli", "tests", "tests.x"
    ]  # fmt: skip
    assert [n for n in names if _is_test(n)] == ["tests.agent.test_loop", "tests.agent.test_cli"]
