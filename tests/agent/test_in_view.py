"""A file the prompt already shows whole, as it is now, is not offered to read_file again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autonoma.agent.in_view import MOST_FILES, in_view, readable, with_readable
from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from autonoma.tools import Workspace
from autonoma.tools.files import CORE_TOOLS
from tests.agent.helpers import IDENTITY

POEM = "The fog comes\non little cat feet.\nIt sits looking\nover harbor and city\n"


def workspace(tmp_path: Path, files: dict[str, str]) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return Workspace(root)


def test_a_file_shown_whole_is_in_view_and_one_shown_in_part_or_changed_is_not(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"poem.txt": POEM, "notes.txt": "buy milk and eggs\nand bread\n"})
    # shown indented, as the files found at the start are; notes.txt only its first line
    prompt = "You found:\npoem.txt:\n    " + POEM.replace("\n", "\n    ") + "\nbuy milk and eggs"
    assert in_view(ws, ["system text", prompt]) == ["poem.txt"]
    (ws.root / "poem.txt").write_text(POEM + "Then moves on.\n")  # changed since shown
    assert in_view(ws, ["system text", prompt]) == []


def test_a_short_text_stays_readable_as_it_may_be_in_the_prompt_by_chance(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"count.txt": "6\n"})
    assert in_view(ws, ["step 2: wrote 6 lines\n6\n"]) == []


def test_a_big_workspace_keeps_every_file_readable(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {f"f{n}.txt": POEM for n in range(MOST_FILES + 1)})
    assert in_view(ws, [POEM]) is None
    assert readable(ws, None) is None


def test_read_file_is_held_to_the_files_not_in_view_or_left_out(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"poem.txt": POEM, "other.txt": "x"})
    tools = list(CORE_TOOLS)
    allowed = readable(ws, ["poem.txt"])
    assert allowed == ["other.txt"]
    narrowed = {t.name: t for t in with_readable(tools, allowed)}
    assert narrowed["read_file"].spec().parameters["properties"]["path"]["enum"] == ["other.txt"]
    # the narrowed tool is for the schema; the tool itself is left as it was
    assert (
        "enum"
        not in next(t for t in tools if t.name == "read_file")
        .spec()
        .parameters["properties"]["path"]
    )
    assert "read_file" not in {t.name for t in with_readable(tools, [])}
    assert with_readable(tools, None) == tools


def commands(request: Any) -> dict[str, Any]:
    return {
        c["properties"]["name"]["const"]: c["properties"]["args"]
        for c in request.schema["properties"]["command"]["anyOf"]
    }


async def test_a_run_is_not_offered_to_read_again_what_it_was_shown(tmp_path: Path) -> None:
    # suite_1128: 120 of 299 steps repeated an earlier one, most a re-read of a shown input
    root = tmp_path / "ws"
    root.mkdir()
    (root / "poem.txt").write_text(POEM)
    model = ScriptedModel(
        [
            act("read_file", path="poem.txt"),
            act("write_file", path="count.txt", text="4"),
            act("write_file", path="notes.txt", text="a line long enough to count"),
            act("task_complete", reason="count.txt holds 4"),
        ]
    )
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(checks=False, model="scripted", continuous=True, memory=False)
    run, _ = await create_run(
        store, model, "Count the lines of poem.txt into count.txt", settings,
        workspace=root, identity=IDENTITY,
    )  # fmt: skip
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed"
    first, second, third, fourth = model.requests[:4]
    # found at the start, shown in the fixed instructions: it may be read once
    assert "enum" not in commands(first)["read_file"]["properties"]["path"]
    # read, its text is among the steps: the only file, so nothing to read
    assert "read_file" not in commands(second)
    assert "Every file is shown whole above as it is now" in second.messages[-1].content
    # count.txt is new and short: readable, poem.txt still not
    assert commands(third)["read_file"]["properties"]["path"]["enum"] == ["count.txt"]
    assert "Shown whole above as they are now: poem.txt;" in third.messages[-1].content
    # a text in a step's arguments is not a file's text shown: notes.txt stays readable
    assert commands(fourth)["read_file"]["properties"]["path"]["enum"] == [
        "count.txt",
        "notes.txt",
    ]


async def test_code_actions_are_not_narrowed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "poem.txt").write_text(POEM)
    model = ScriptedModel([{"thoughts": {"text": "t", "plan": "p"}, "code": "task_complete('ok')"}])
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(
        checks=False, model="scripted", continuous=True, memory=False, actions="code"
    )
    run, _ = await create_run(store, model, "Say ok", settings, workspace=root, identity=IDENTITY)
    await run_agent(store, model, run)
    assert "shown whole above" not in model.requests[0].messages[-1].content
