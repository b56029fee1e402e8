"""The built-in file tools, the `@tool` decorator, Tool.run's error handling and the registry."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from autonoma.errors import ConfigError
from autonoma.tools import (
    CORE_TOOLS,
    FILE_TOOLS,
    Risk,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    Workspace,
    WorkspaceError,
    tool,
)
from autonoma.tools.files import (
    MAX_LISTED,
    MAX_READ_BYTES,
    append_file,
    delete_file,
    list_files,
    read_file,
    search_files,
    task_complete,
    write_file,
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("SECRET password=hunter2\n", encoding="utf-8")
    return directory


@pytest.fixture
def ws(tmp_path: Path, outside: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


@pytest.fixture
def ctx(ws: Workspace) -> ToolContext:
    return ToolContext(workspace=ws)


def snapshot(directory: Path) -> set[str]:
    """Every path under a directory (symlinks not followed), to prove nothing was created."""
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*")}


def workspace_error(ws: Workspace, path: str) -> str:
    with pytest.raises(WorkspaceError) as info:
        ws.resolve(path)
    return f"error: WorkspaceError: {info.value}"


# -- the built-in tools ----------------------------------------------------------------------


async def test_write_then_read_back(ctx: ToolContext, ws: Workspace) -> None:
    text = "first line\nsecond line é 日本\n"
    written = await write_file.run(ctx, {"path": "notes/today.md", "text": text})
    assert written == ToolResult(True, "wrote 2 lines, 28 characters to notes/today.md")
    assert (ws.root / "notes" / "today.md").read_text(encoding="utf-8") == text

    read = await read_file.run(ctx, {"path": "notes/today.md"})
    assert read == ToolResult(True, f"notes/today.md (2 lines, 28 characters):\n{text}")


async def test_a_python_file_that_does_not_compile_is_said_to_be_written_so(
    ctx: ToolContext, ws: Workspace
) -> None:
    """mend_1129: pal.py written from source inside a quoted string, its quotes cut, so the
    file held `normalized_text = .join(...)`; the run learnt it only from a check."""
    broken = "def is_palindrome(text):\n    t = .join(c for c in text)\n"
    written = await write_file.run(ctx, {"path": "pal.py", "text": broken})
    assert written.ok and (ws.root / "pal.py").read_text() == broken  # written all the same
    assert written.output.endswith("to pal.py, which is not valid Python: invalid syntax at line 2")
    good = await write_file.run(ctx, {"path": "pal.py", "text": "def f():\n    return 1\n"})
    assert good.output == "wrote 2 lines, 22 characters to pal.py"
    prose = await write_file.run(ctx, {"path": "notes.txt", "text": "def ( not python"})
    assert "Python" not in prose.output
    appended = await append_file.run(ctx, {"path": "pal.py", "text": "def (:\n"})
    assert appended.output.endswith("which is not valid Python: invalid syntax at line 3")


async def test_write_replaces_previous_content(ctx: ToolContext, ws: Workspace) -> None:
    await write_file.run(ctx, {"path": "a.txt", "text": "a long first version"})
    await write_file.run(ctx, {"path": "a.txt", "text": "short"})
    assert (ws.root / "a.txt").read_text(encoding="utf-8") == "short"


async def test_read_missing_file_fails_with_a_hint(ctx: ToolContext) -> None:
    result = await read_file.run(ctx, {"path": "nope.txt"})
    assert not result.ok
    assert result.output == (
        "error: FileNotFoundError: nope.txt is not a file in the workspace "
        "(list_files shows what is)"
    )


async def test_a_missing_file_names_the_files_it_may_have_meant(
    ctx: ToolContext, ws: Workspace
) -> None:
    for name in ("notes.md", "notes.txt", "docs/report.txt", "other.csv"):
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("x\n")
    meant = {
        "notes": "did you mean notes.md or notes.txt?",
        "notes.txtt": "did you mean notes.txt or notes.md?",
        "docs/report": "did you mean docs/report.txt?",
        "report.txt": "did you mean docs/report.txt?",
    }
    for path, hint in meant.items():
        result = await read_file.run(ctx, {"path": path})
        assert result.output.endswith(f"{path} is not a file in the workspace; {hint}"), path
    deleted = await delete_file.run(ctx, {"path": "other"})
    assert deleted.output.endswith("did you mean other.csv?")
    unrelated = await read_file.run(ctx, {"path": "budget.xlsx"})
    assert unrelated.output.endswith("(list_files shows what is)")
    assert (await read_file.run(ctx, {"path": "docs"})).output.endswith(
        "docs is a directory; list_files shows its files"
    )


async def test_read_of_a_directory_fails(ctx: ToolContext, ws: Workspace) -> None:
    (ws.root / "sub").mkdir()
    result = await read_file.run(ctx, {"path": "sub"})
    assert not result.ok
    assert "sub is a directory" in result.output


async def test_read_is_cut_after_max_bytes(ctx: ToolContext, ws: Workspace) -> None:
    limit = MAX_READ_BYTES
    (ws.root / "exact.txt").write_bytes(b"a" * limit)
    (ws.root / "big.txt").write_bytes(b"a" * limit + b"TAIL")

    exact = await read_file.run(ctx, {"path": "exact.txt"})
    assert exact.ok
    assert exact.output == f"exact.txt (1 line, {limit} characters):\n" + "a" * limit

    big = await read_file.run(ctx, {"path": "big.txt"})
    assert big.ok
    assert "TAIL" not in big.output
    assert big.output == f"big.txt (first {limit} of {limit + 4} bytes):\n" + "a" * limit


async def test_read_of_invalid_utf8_is_replaced_not_an_error(
    ctx: ToolContext, ws: Workspace
) -> None:
    (ws.root / "bin.dat").write_bytes(b"ok\xff\xfeok")
    result = await read_file.run(ctx, {"path": "bin.dat"})
    assert result == ToolResult(True, "bin.dat (1 line, 6 characters):\nok\ufffd\ufffdok")


async def test_append_creates_then_appends(ctx: ToolContext, ws: Workspace) -> None:
    first = await append_file.run(ctx, {"path": "log/run.log", "text": "one\n"})
    assert first == ToolResult(
        True, "appended 1 line, 4 characters to log/run.log; it now holds 1 line, 4 characters"
    )
    second = await append_file.run(ctx, {"path": "log/run.log", "text": "two\n"})
    assert second.output.endswith("it now holds 2 lines, 8 characters")
    assert (ws.root / "log" / "run.log").read_text(encoding="utf-8") == "one\ntwo\n"


async def test_append_adds_whole_lines_even_to_an_unfinished_last_line(
    ctx: ToolContext, ws: Workspace
) -> None:
    # raw appends ran the 1.5B model's lines together: "Autumn HaikuAutumn Haiku..."
    (ws.root / "haiku.txt").write_text("Crisp leaves", encoding="utf-8")
    await append_file.run(ctx, {"path": "haiku.txt", "text": "fall on the path"})
    result = await append_file.run(ctx, {"path": "haiku.txt", "text": "autumn wind"})
    assert result.output.endswith("it now holds 3 lines, 42 characters")
    text = (ws.root / "haiku.txt").read_text(encoding="utf-8")
    assert text == "Crisp leaves\nfall on the path\nautumn wind\n"
    await append_file.run(ctx, {"path": "empty.txt", "text": ""})
    assert (ws.root / "empty.txt").read_bytes() == b""
    # a newline the text begins with says "on a new line": no blank lines between parts
    for text in ("\npart one", "\npart two\n", "\n\nnew section"):
        await append_file.run(ctx, {"path": "parts.txt", "text": text})
    assert (ws.root / "parts.txt").read_text() == "part one\npart two\n\nnew section\n"


async def test_delete_removes_the_file(ctx: ToolContext, ws: Workspace) -> None:
    (ws.root / "gone.txt").write_text("x", encoding="utf-8")
    result = await delete_file.run(ctx, {"path": "gone.txt"})
    assert result == ToolResult(True, "deleted gone.txt")
    assert not (ws.root / "gone.txt").exists()


async def test_delete_of_missing_file_or_directory_fails(ctx: ToolContext, ws: Workspace) -> None:
    missing = await delete_file.run(ctx, {"path": "missing.txt"})
    assert not missing.ok
    assert "missing.txt is not a file in the workspace" in missing.output

    (ws.root / "keep").mkdir()
    directory = await delete_file.run(ctx, {"path": "keep"})
    assert not directory.ok
    assert (ws.root / "keep").is_dir()

    root = await delete_file.run(ctx, {"path": "."})
    assert not root.ok
    assert ws.root.is_dir()


async def test_list_files_lists_sorted_relative_regular_files(
    ctx: ToolContext, ws: Workspace, outside: Path
) -> None:
    for name in ["b.txt", "a/z.txt", "a/b/c.txt"]:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text(name, encoding="utf-8")
    os.symlink(outside / "secret.txt", ws.root / "leak.txt")

    everything = await list_files.run(ctx, {})
    assert everything == ToolResult(True, "a/b/c.txt\na/z.txt\nb.txt")

    sub = await list_files.run(ctx, {"directory": "a/b"})
    assert sub == ToolResult(True, "a/b/c.txt")


async def test_list_files_of_empty_and_missing_directories(ctx: ToolContext, ws: Workspace) -> None:
    assert await list_files.run(ctx, {}) == ToolResult(True, "no files in .")

    (ws.root / "f.txt").write_text("x", encoding="utf-8")
    not_dir = await list_files.run(ctx, {"directory": "f.txt"})
    assert not not_dir.ok
    assert "f.txt is not a directory in the workspace" in not_dir.output

    missing = await list_files.run(ctx, {"directory": "nowhere"})
    assert not missing.ok
    assert "nowhere is not a directory" in missing.output


async def test_list_files_caps_the_listing(ctx: ToolContext, ws: Workspace) -> None:
    total = MAX_LISTED + 5
    for i in range(total):
        (ws.root / f"f{i:04d}.txt").write_text("", encoding="utf-8")
    result = await list_files.run(ctx, {})
    assert result.ok
    lines = result.output.splitlines()
    assert lines[:MAX_LISTED] == [f"f{i:04d}.txt" for i in range(MAX_LISTED)]
    assert lines[MAX_LISTED:] == ["[5 more not shown]"]


@pytest.fixture
def corpus(ws: Workspace) -> Workspace:
    for name, body in {
        "README.md": "# Title\nSee the Plan below.\n",
        "notes/plan.md": "step one\nthe PLAN is simple\n",
        "notes/todo.txt": "buy milk\nplan the trip\n",
        "src/main.py": "print('hello')\n",
    }.items():
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text(body, encoding="utf-8")
    return ws


async def test_search_by_name_glob(ctx: ToolContext, corpus: Workspace) -> None:
    by_extension = await search_files.run(ctx, {"pattern": "*.md"})
    assert by_extension == ToolResult(True, "README.md\nnotes/plan.md")

    by_folder = await search_files.run(ctx, {"pattern": "notes/*"})
    assert by_folder == ToolResult(True, "notes/plan.md\nnotes/todo.txt")

    by_basename = await search_files.run(ctx, {"pattern": "todo.txt"})
    assert by_basename == ToolResult(True, "notes/todo.txt")


async def test_search_text_is_case_insensitive_with_line_numbers(
    ctx: ToolContext, corpus: Workspace
) -> None:
    everywhere = await search_files.run(ctx, {"text": "plan"})
    assert everywhere.ok
    assert everywhere.output.splitlines() == [
        "README.md:2: See the Plan below.",
        "notes/plan.md:2: the PLAN is simple",
        "notes/todo.txt:2: plan the trip",
    ]

    only_txt = await search_files.run(ctx, {"pattern": "*.txt", "text": "PLAN"})
    assert only_txt == ToolResult(True, "notes/todo.txt:2: plan the trip")


async def test_search_without_matches(ctx: ToolContext, corpus: Workspace) -> None:
    assert await search_files.run(ctx, {"text": "absent"}) == ToolResult(True, "no matches")
    assert await search_files.run(ctx, {"pattern": "*.rs"}) == ToolResult(True, "no matches")


async def test_search_does_not_read_through_symlinks(
    ctx: ToolContext, ws: Workspace, outside: Path
) -> None:
    os.symlink(outside / "secret.txt", ws.root / "leak.txt")
    os.symlink(outside, ws.root / "leakdir")
    result = await search_files.run(ctx, {"text": "hunter2"})
    assert result == ToolResult(True, "no matches")


async def test_task_complete_is_final(ctx: ToolContext) -> None:
    result = await task_complete.run(ctx, {"reason": "report.md written; see its summary"})
    assert result == ToolResult(
        True, "task complete: report.md written; see its summary", final=True
    )
    assert not task_complete.wants_context


async def test_other_tools_are_not_final(ctx: ToolContext) -> None:
    result = await write_file.run(ctx, {"path": "a.txt", "text": "x"})
    assert result.ok
    assert not result.final


def test_builtin_risks() -> None:
    risks = {t.name: t.risk for t in CORE_TOOLS}
    assert risks == {
        "read_file": Risk.READ,
        "write_file": Risk.WRITE,
        "append_file": Risk.WRITE,
        "delete_file": Risk.WRITE,
        "list_files": Risk.READ,
        "search_files": Risk.READ,
        "task_complete": Risk.READ,
    }
    assert [t.name for t in FILE_TOOLS] == [t.name for t in CORE_TOOLS if t is not task_complete]


# -- escapes through the tools ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("the_tool", "arguments"),
    [
        (write_file, {"path": "../escaped.txt", "text": "x"}),
        (write_file, {"path": "a/../../escaped.txt", "text": "x"}),
        (append_file, {"path": "../escaped.txt", "text": "x"}),
        (read_file, {"path": "../outside/secret.txt"}),
        (delete_file, {"path": "../outside/secret.txt"}),
        (list_files, {"directory": ".."}),
    ],
    ids=lambda v: v.name if isinstance(v, Tool) else None,
)
async def test_parent_escapes_fail_and_touch_nothing(
    ctx: ToolContext, ws: Workspace, tmp_path: Path, the_tool: Tool, arguments: dict[str, Any]
) -> None:
    before = snapshot(tmp_path)
    result = await the_tool.run(ctx, arguments)
    assert not result.ok
    path = arguments.get("path", arguments.get("directory"))
    assert isinstance(path, str)
    assert result.output == workspace_error(ws, path)
    assert "outside the workspace" in result.output
    assert snapshot(tmp_path) == before
    assert (tmp_path / "outside" / "secret.txt").read_text(encoding="utf-8").startswith("SECRET")


@pytest.mark.parametrize("the_tool", [write_file, append_file, read_file, delete_file])
async def test_absolute_paths_fail(ctx: ToolContext, ws: Workspace, the_tool: Tool) -> None:
    arguments: dict[str, Any] = {"path": "/etc/passwd"}
    if the_tool in (write_file, append_file):
        arguments["text"] = "x"
    result = await the_tool.run(ctx, arguments)
    assert not result.ok
    assert result.output == workspace_error(ws, "/etc/passwd")
    assert "absolute" in result.output


async def test_writes_through_symlinks_pointing_outside_fail(
    ctx: ToolContext, ws: Workspace, outside: Path
) -> None:
    os.symlink(outside, ws.root / "out")
    os.symlink(outside / "secret.txt", ws.root / "secret-link.txt")
    os.symlink(outside / "planted.txt", ws.root / "dangling.txt")
    os.symlink("/", ws.root / "rootfs")
    before = snapshot(outside)

    attempts = [
        (write_file, {"path": "out/new.txt", "text": "x"}),
        (write_file, {"path": "secret-link.txt", "text": "overwritten"}),
        (write_file, {"path": "dangling.txt", "text": "planted"}),
        (append_file, {"path": "secret-link.txt", "text": "appended"}),
        (append_file, {"path": "dangling.txt", "text": "planted"}),
        (delete_file, {"path": "secret-link.txt"}),
        (delete_file, {"path": "out/secret.txt"}),
        (read_file, {"path": "secret-link.txt"}),
        (read_file, {"path": "rootfs/etc/passwd"}),
        (list_files, {"directory": "out"}),
    ]
    for the_tool, arguments in attempts:
        result = await the_tool.run(ctx, arguments)
        path = arguments.get("path", arguments.get("directory"))
        assert isinstance(path, str)
        assert not result.ok, (the_tool.name, arguments)
        assert result.output.startswith("error: WorkspaceError: "), result.output
        assert "symbolic link" in result.output

    assert snapshot(outside) == before
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "SECRET password=hunter2\n"


# -- Tool.run: bad arguments, exceptions, timeouts, return values ------------------------------


async def test_missing_argument_is_reported(ctx: ToolContext) -> None:
    result = await write_file.run(ctx, {"path": "a.txt"})
    assert not result.ok
    assert result.output == "error: invalid arguments for write_file: text: Field required"


async def test_an_empty_text_is_one_short_line_not_a_validation_dump(ctx: ToolContext) -> None:
    """The 1.5B model read pydantic's four-line dump with its web address as "the file does
    not exist" and wrote the empty file three more times."""
    result = await write_file.run(ctx, {"path": "total.txt", "text": ""})
    assert result.output == (
        "error: invalid arguments for write_file: text: it is empty; give the whole text in "
        "this same call (work it out first)"
    )


async def test_extra_argument_is_reported(ctx: ToolContext, ws: Workspace) -> None:
    result = await write_file.run(ctx, {"path": "a.txt", "text": "x", "mode": "w"})
    assert not result.ok
    assert result.output.startswith("error: invalid arguments for write_file:")
    assert "mode" in result.output
    assert "Extra inputs are not permitted" in result.output
    assert not (ws.root / "a.txt").exists()


async def test_wrong_argument_type_is_reported(ctx: ToolContext, ws: Workspace) -> None:
    result = await write_file.run(ctx, {"path": "a.txt", "text": 42})
    assert not result.ok
    assert result.output.startswith("error: invalid arguments for write_file:")
    assert "text" in result.output
    assert "valid string" in result.output
    assert not (ws.root / "a.txt").exists()


async def test_write_file_needs_the_content_in_the_same_command(
    ctx: ToolContext, ws: Workspace
) -> None:
    assert write_file.args_model.model_json_schema()["properties"]["text"]["minLength"] == 1
    result = await write_file.run(ctx, {"path": "a.txt", "text": ""})
    assert not result.ok and "text: it is empty; give the whole text" in result.output
    assert not (ws.root / "a.txt").exists()


async def test_an_exception_becomes_a_failed_result_verbatim(ctx: ToolContext) -> None:
    @tool()
    def explode(context: ToolContext, what: str) -> str:
        """Fail on purpose."""
        raise ValueError(f"cannot handle {what!r}: the disk is on fire")

    result = await explode.run(ctx, {"what": "x"})
    assert result == ToolResult(False, "error: ValueError: cannot handle 'x': the disk is on fire")


async def test_an_async_exception_becomes_a_failed_result_verbatim(ctx: ToolContext) -> None:
    @tool()
    async def explode_later() -> str:
        """Fail on purpose, asynchronously."""
        raise RuntimeError("remote said no")

    result = await explode_later.run(ctx, {})
    assert result == ToolResult(False, "error: RuntimeError: remote said no")


async def test_an_async_tool_past_its_timeout_fails(ctx: ToolContext) -> None:
    never = asyncio.Event()

    @tool(timeout_s=0.01)
    async def hang() -> str:
        """Wait for an event that is never set."""
        # the inner limit only keeps a broken timeout from hanging the suite
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(never.wait(), 30)
        return "unreachable"

    result = await hang.run(ctx, {})
    assert result == ToolResult(False, "error: hang timed out after 0.01s")


async def test_a_sync_tool_past_its_timeout_fails(ctx: ToolContext) -> None:
    release = threading.Event()

    @tool(timeout_s=0.01)
    def block() -> str:
        """Block until released."""
        release.wait(30)  # the guard only keeps a broken timeout from hanging the suite
        return "unreachable"

    try:
        result = await block.run(ctx, {})
    finally:
        release.set()  # let the worker thread finish
    assert not result.ok
    assert result.output == "error: block timed out after 0.01s"


async def test_return_values_become_results(ctx: ToolContext) -> None:
    @tool()
    def nothing() -> None:
        """Return nothing."""

    @tool()
    def number() -> int:
        """Return a number."""
        return 42

    @tool()
    async def custom() -> ToolResult:
        """Return a ready result."""
        return ToolResult(True, "fetched", untrusted=True)

    assert await nothing.run(ctx, {}) == ToolResult(True, "")
    assert await number.run(ctx, {}) == ToolResult(True, "42")
    assert await custom.run(ctx, {}) == ToolResult(True, "fetched", untrusted=True)


async def test_context_is_passed_only_to_tools_that_ask(ctx: ToolContext) -> None:
    seen: list[Any] = []

    @tool()
    def with_context(context: ToolContext, value: int) -> str:
        """Record the context."""
        seen.append(context)
        return str(value * 2)

    @tool()
    def without_context(value: int) -> str:
        """No context here."""
        return str(value + 1)

    assert with_context.wants_context
    assert not without_context.wants_context
    assert await with_context.run(ctx, {"value": 4}) == ToolResult(True, "8")
    assert seen == [ctx]
    assert await without_context.run(ctx, {"value": 4}) == ToolResult(True, "5")


# -- the @tool decorator ----------------------------------------------------------------------


def test_schema_comes_from_type_hints_and_docstring() -> None:
    @tool(risk=Risk.NETWORK, timeout_s=3)
    def fetch(
        context: ToolContext,
        url: str,
        retries: int = 2,
        headers: list[str] | None = None,
        verbose: bool = False,
    ) -> str:
        """Fetch a page
        from the web.

        Args:
            url: the address to fetch
            retries (int): how many times to try again
            headers: extra request headers
        """
        return url

    assert fetch.name == "fetch"
    assert fetch.risk is Risk.NETWORK
    assert fetch.timeout_s == 3
    assert fetch.wants_context

    spec = fetch.spec()
    assert spec.name == "fetch"
    assert spec.description == "Fetch a page from the web."
    params = spec.parameters
    assert "title" not in params
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert params["required"] == ["url"]
    props = params["properties"]
    assert list(props) == ["url", "retries", "headers", "verbose"]
    assert "context" not in props
    assert props["url"]["type"] == "string"
    assert props["url"]["description"] == "the address to fetch"
    assert props["retries"]["type"] == "integer"
    assert props["retries"]["default"] == 2
    assert props["retries"]["description"] == "how many times to try again"
    assert props["headers"]["description"] == "extra request headers"
    assert {"type": "array", "items": {"type": "string"}} in props["headers"]["anyOf"]
    assert props["verbose"]["type"] == "boolean"
    assert "description" not in props["verbose"]  # no Args: line for it


def test_builtin_specs_describe_every_argument() -> None:
    for t in CORE_TOOLS:
        params = t.spec().parameters
        assert "context" not in params["properties"], t.name
        for name, prop in params["properties"].items():
            assert prop.get("description"), f"{t.name}.{name} has no description"
    assert write_file.spec().parameters["properties"]["text"]["description"] == (
        "the whole new content"
    )
    assert list_files.spec().parameters["properties"]["directory"]["default"] == "."


def test_signature_lists_arguments_with_types() -> None:
    assert write_file.signature() == "write_file(path: string, text: string)"
    assert task_complete.signature() == "task_complete(reason: string)"


def test_untyped_parameter_is_rejected() -> None:
    def sloppy(context: ToolContext, path, text: str) -> str:  # type: ignore[no-untyped-def]
        """Missing a type."""
        return text

    with pytest.raises(TypeError, match=r"tool sloppy: parameter path has no type"):
        tool()(sloppy)


def test_name_can_be_overridden() -> None:
    @tool(name="say_hello")
    def hello() -> str:
        """Greet."""
        return "hi"

    assert hello.name == "say_hello"
    assert hello.spec().name == "say_hello"


def test_context_must_be_first_to_be_excluded() -> None:
    # `context` anywhere but first is an ordinary argument the model would have to supply.
    @tool()
    def odd(path: str, context: str) -> str:
        """Odd."""
        return path

    assert not odd.wants_context
    assert set(odd.spec().parameters["properties"]) == {"path", "context"}


# -- the registry -----------------------------------------------------------------------------


def test_registry_holds_the_core_tools() -> None:
    registry = ToolRegistry(CORE_TOOLS)
    assert len(registry) == len(CORE_TOOLS)
    assert registry.names == [t.name for t in CORE_TOOLS]
    assert list(registry) == CORE_TOOLS
    assert registry.get("write_file") is write_file
    assert registry.get("rm_rf") is None


def test_registry_rejects_duplicate_names() -> None:
    with pytest.raises(ConfigError, match="two tools are named 'read_file'"):
        ToolRegistry([*CORE_TOOLS, read_file])

    registry = ToolRegistry([read_file])

    @tool(name="read_file")
    def impostor(path: str) -> str:
        """Same name, other tool."""
        return path

    with pytest.raises(ConfigError, match="two tools are named 'read_file'"):
        registry.add(impostor)
    assert registry.get("read_file") is read_file
    assert len(registry) == 1


async def test_listings_leave_out_version_control_environments_and_ignored_files(
    ctx: ToolContext, ws: Workspace
) -> None:
    for name, text in {
        ".git/objects/ab/cdef": "blob",
        ".git/hooks/pre-commit": "#!/bin/sh",
        ".venv/lib/site.py": "x = 1",
        "src/__pycache__/m.cpython-311.pyc": "",
        "build/out.o": "",
        "logs/run.log": "",
        "keep.log": "",
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "src/m.py": "x = 1",
        "notes.txt": "n",
    }.items():
        path = ws.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert ws.visible_files() == [".gitignore", "keep.log", "notes.txt", "src/m.py"]
    listed = await list_files.run(ctx, {"directory": "."})
    assert listed.output.splitlines()[:4] == ws.visible_files()
    assert "[6 files in .git, .venv and the like, or ignored by .gitignore]" in listed.output
    read = await read_file.run(ctx, {"path": ".git/hooks/pre-commit"})  # still reachable
    assert read.ok and "#!/bin/sh" in read.output
    found = await search_files.run(ctx, {"pattern": "*"})  # every git object came back
    assert found.output.splitlines()[:4] == ws.visible_files()
    assert "not searched: 6 files in .git, .venv and the like" in found.output
    x = await search_files.run(ctx, {"pattern": "*", "text": "x = 1"})
    assert x.output.splitlines()[0] == "src/m.py:1: x = 1"
    named = await search_files.run(ctx, {"pattern": ".git/hooks/*", "text": "bin"})
    assert named.output == ".git/hooks/pre-commit:1: #!/bin/sh"  # a path pattern reaches it
    (ws.root / ".gitignore").write_text("[")  # a pattern git would refuse: nothing ignored
    assert "build/out.o" in ws.visible_files() and ".venv/lib/site.py" not in ws.visible_files()
