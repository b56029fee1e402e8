"""The whole task judged by working it out again from its inputs: what the model is shown, what
is compared, what the agent is told (never the worked-out text), and when the yes-or-no judge
is asked instead."""

from __future__ import annotations

import shutil
from pathlib import Path

from autonoma.agent.check_types import task_check
from autonoma.agent.judge import Judge
from autonoma.agent.judge_worked import AGAIN_TEMPERATURE, PROGRAMS, inputs_of, unfenced
from autonoma.llm import ScriptedModel
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import Workspace
from autonoma.tools.sandbox import BubblewrapSandbox
from autonoma.tools.settings import SandboxSettings

PEOPLE = (
    "people.txt has lines like 'Ana is 31'. Write people.csv with the header name,age and one "
    "row for each person, in the same order."
)
RIGHT = "name,age\nAna,31\nBen,27\n"


def workspaces(tmp_path: Path, start: dict[str, str], now: dict[str, str]) -> tuple[Path, Path]:
    first, ws = tmp_path / "start", tmp_path / "ws"
    for root, files in ((first, start), (ws, {**start, **now})):
        root.mkdir(parents=True)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    return first, ws


async def judged(
    tmp_path: Path, task: str, start: dict[str, str], now: dict[str, str], answers: list[object]
) -> tuple[bool, str, ScriptedModel]:
    first, ws = workspaces(tmp_path, start, now)
    model = ScriptedModel(answers)
    result = await Judge(model, start=first).judge(
        task_check(task), task, [task], Workspace(ws), BudgetSpent()
    )
    return result.passed, result.output, model


async def test_the_header_alone_fails_without_the_worked_out_text_given_away(
    tmp_path: Path,
) -> None:
    # the 1.5B judge passed people.csv holding its header alone (the everyday suite)
    worked = {"files": [{"name": "people.csv", "text": RIGHT}]}
    passed, said, model = await judged(
        tmp_path, PEOPLE, {"people.txt": "Ana is 31\nBen is 27\n"}, {"people.csv": "name,age\n"},
        [worked],
    )  # fmt: skip
    assert not passed and model.remaining == 0
    assert "people.csv is not what the task, worked out again from its inputs, gives" in said
    assert "in how many lines it has (1 line now)" in said and "Ana,31" not in said
    prompt = model.requests[0].messages[-1].content
    assert "people.txt:\nAna is 31\nBen is 27" in prompt  # the inputs as they were
    # and the file it writes, which two_hops' programs wrote over an input for want of it
    assert "The task writes people.csv, which is not among the files above." in prompt


async def test_the_same_text_reached_apart_passes_whatever_the_line_ends(tmp_path: Path) -> None:
    worked = {"files": [{"name": "people.csv", "text": RIGHT.strip()}, {"name": "people.txt",
              "text": "Ana is 31\nBen is 27"}]}  # fmt: skip
    passed, said, _ = await judged(
        tmp_path, PEOPLE, {"people.txt": "Ana is 31\nBen is 27\n"},
        {"people.csv": "name,age  \r\nAna,31\nBen,27\n\n"}, [worked],
    )  # fmt: skip
    assert passed and said.startswith("judged: people.csv hold what the task")
    wrong_row, _, _ = await judged(
        tmp_path / "b", PEOPLE, {"people.txt": "Ana is 31\nBen is 27\n"},
        {"people.csv": "name,age\nAna,31\nBen,72\n"}, [worked],
    )  # fmt: skip
    assert not wrong_row


async def test_a_file_worked_out_but_not_written_fails(tmp_path: Path) -> None:
    worked = {"files": [{"name": "people.csv", "text": RIGHT}]}
    passed, said, _ = await judged(tmp_path, PEOPLE, {"people.txt": "Ana is 31\n"}, {}, [worked])
    assert not passed and said.startswith("people.csv does not exist")


async def test_instructions_chained_over_files_are_shown_one_hop_on(tmp_path: Path) -> None:
    chain = {
        "step1.txt": "Write the word apple to answer.txt. Then follow step2.txt.",
        "step2.txt": "Append the word banana to answer.txt as a new line. Then follow step3.txt.",
        "step3.txt": "Append cherry as a new line.",
    }
    first, _ = workspaces(tmp_path, chain, {})
    shown = inputs_of("Follow the instructions in step1.txt to the end.", first)
    assert shown is not None and list(shown) == ["step1.txt", "step2.txt", "step3.txt"]
    worked = {"files": [{"name": "answer.txt", "text": "apple\nbanana\ncherry\n"}]}
    passed, said, _ = await judged(
        tmp_path / "run", "Follow the instructions in step1.txt to the end.", chain,
        {"answer.txt": "apple\n"}, [worked],
    )  # fmt: skip
    assert not passed and "differs in how many lines it has (1 line now)" in said


async def test_without_inputs_or_files_to_compare_the_judge_answers_yes_or_no(
    tmp_path: Path,
) -> None:
    haiku = "Write a haiku about autumn to haiku.txt"
    passed, said, model = await judged(
        tmp_path, haiku, {}, {"haiku.txt": "leaves fall\nred and gold\nwind\n"},
        [{"why": "a haiku about autumn", "passed": True}],
    )  # fmt: skip
    assert passed and said == "judged: a haiku about autumn" and len(model.requests) == 1


TWO_HOPS = "start.txt says where the access code is. Write the code alone to code.txt."
HOPS = {
    "start.txt": "The access code is written in clue.txt.\n",
    "clue.txt": "Not here either: see vault/secret.txt.\n",
    "vault/secret.txt": "8142\n",
}


async def test_a_task_with_inputs_worked_out_to_nothing_is_not_passed_on_a_yes(
    tmp_path: Path,
) -> None:
    # two_hops ended `completed` on clue.txt's pointer: the working out gave nothing to compare
    # (it rewrote the inputs), and the yes-or-no judge said yes
    first, ws = workspaces(tmp_path, HOPS, {"code.txt": "Not here either: see vault/secret.txt.\n"})
    inputs_only = {"files": [{"name": "clue.txt", "text": "8142"}]}
    yes = {"why": "code.txt holds the code", "passed": True}
    model = ScriptedModel([inputs_only, yes])
    judge = Judge(model, start=first)
    result = await judge.judge(
        task_check(TWO_HOPS), TWO_HOPS, [TWO_HOPS], Workspace(ws), BudgetSpent()
    )
    assert not result.passed and model.remaining == 1  # the yes was never asked for
    assert result.output.startswith("judged: not confirmed")
    assert "(start.txt, clue.txt, vault/secret.txt)" in result.output
    assert "that code.txt follows from them all" in result.output
    # asked again at the next claim, the same inputs are not worked out again
    (ws / "code.txt").write_text("8142\n")
    again = await judge.judge(
        task_check(TWO_HOPS), TWO_HOPS, [TWO_HOPS], Workspace(ws), BudgetSpent()
    )
    assert not again.passed and model.remaining == 1 and len(model.requests) == 1
    assert judge.worked_files() == [{"clue.txt": "8142"}]  # what it gave, for reading over


async def test_a_model_answer_unusable_for_working_out_is_not_confirmation(
    tmp_path: Path,
) -> None:
    passed, said, model = await judged(
        tmp_path, PEOPLE, {"people.txt": "Ana is 31\n"}, {"people.csv": "name,age\nAna,31\n"},
        ["not json at all"] * 5 + [{"why": "fine", "passed": True}],
    )  # fmt: skip
    assert not passed and "not confirmed" in said and "people.csv follows" in said
    # every call asked for the task worked out; none for a yes or no
    assert model.requests and all(
        "Do the task yourself" in r.messages[0].content for r in model.requests
    )


async def test_a_check_of_the_writers_is_judged_yes_or_no(tmp_path: Path) -> None:
    first, ws = workspaces(tmp_path, {"people.txt": "Ana is 31\n"}, {"people.csv": RIGHT})
    model = ScriptedModel([{"why": "the header is there", "passed": True}])
    own = task_check(PEOPLE).model_copy(update={"what": "people.csv starts with name,age"})
    result = await Judge(model, start=first).judge(
        own, PEOPLE, [PEOPLE], Workspace(ws), BudgetSpent()
    )
    assert result.passed and len(model.requests) == 1


def test_inputs_too_long_to_show_whole_are_not_worked_from(tmp_path: Path) -> None:
    first, _ = workspaces(tmp_path, {"big.txt": "x" * 7000}, {})
    assert inputs_of("Count the lines of big.txt into n.txt", first) is None
    assert inputs_of("Write a haiku to haiku.txt", first) is None
    shutil.rmtree(first)
    assert inputs_of("Count the lines of big.txt into n.txt", first) is None


async def test_an_input_the_task_only_reads_is_not_compared_however_it_is_worked_out(
    tmp_path: Path,
) -> None:
    # the 1.5B judge rewrote poem.txt while working out the count of its lines
    task = "Count the lines of poem.txt and write the number alone to count.txt."
    poem = "a\nb\nc\n"
    worked = {"files": [{"name": "poem.txt", "text": "a b c"}, {"name": "count.txt", "text": "3"}]}
    passed, _, _ = await judged(tmp_path, task, {"poem.txt": poem}, {"count.txt": "3\n"}, [worked])
    assert passed
    # in place: the work left shout.txt as it was, and the task changes it
    shout = "Make every line of shout.txt uppercase, in place."
    worked = {"files": [{"name": "shout.txt", "text": "HEY\nYOU\n"}]}
    passed, said, _ = await judged(tmp_path / "b", shout, {"shout.txt": "hey\nyou\n"}, {}, [worked])
    assert not passed and "shout.txt is not what the task" in said
    passed, _, _ = await judged(
        tmp_path / "c", shout, {"shout.txt": "hey\nyou\n"}, {"shout.txt": "HEY\nYOU"}, [worked]
    )
    assert passed


async def test_the_files_of_a_folder_the_task_names_are_its_inputs(tmp_path: Path) -> None:
    # list_first (code_1128): no file named, so the yes-or-no judge passed "This is a sample
    # report." as the copy of the one report
    task = "The reports folder holds one report. Copy its text exactly to latest.txt."
    report = {"reports/2024-q3-final.txt": "Revenue rose 4% in the third quarter.\n"}
    # reportsold/ is named nowhere but inside a longer word, other/ not at all
    first, _ = workspaces(tmp_path, {**report, "reportsold/x.txt": "no", "other/y.txt": "no"}, {})
    shown = inputs_of(task, first)
    assert shown == {"reports/2024-q3-final.txt": "Revenue rose 4% in the third quarter.\n"}
    worked = {"files": [{"name": "latest.txt", "text": "Revenue rose 4% in the third quarter."}]}
    passed, said, model = await judged(
        tmp_path / "run", task, report, {"latest.txt": "This is a sample report.\n"}, [worked]
    )
    assert not passed and "latest.txt is not what the task" in said
    assert "reports/2024-q3-final.txt:\nRevenue rose" in model.requests[0].messages[-1].content
    # a task naming no file and no folder has no inputs
    assert inputs_of("Write a poem to poem.txt", first) is None


async def test_a_file_the_judge_makes_up_is_set_aside(tmp_path: Path) -> None:
    """code_1129_rest, folder_index: the judge named apples.md (notes/apples.md, an input) as a
    file the task writes; "apples.md does not exist, and the task writes it" failed right work,
    and the run deleted notes/apples.md to please it. Files the task or its inputs name are
    still compared, and so is a name the task gives without its suffix."""
    task = "Write the names of the files in the notes folder, sorted, one per line, to index.txt."
    notes = {"notes/pears.md": "p\n", "notes/apples.md": "a\n"}
    made_up = {"files": [{"name": "apples.md", "text": "a"},
                         {"name": "index.txt", "text": "apples.md\npears.md"}]}  # fmt: skip
    passed, said, _ = await judged(
        tmp_path, task, notes, {"index.txt": "apples.md\npears.md\n"}, [made_up]
    )
    assert (
        passed
        and said == "judged: index.txt hold what the task, worked out again from its inputs, gives"
    )
    passed, said, _ = await judged(
        tmp_path / "b", task, notes, {"index.txt": "pears.md\napples.md\n"}, [made_up]
    )
    assert not passed and "index.txt is not what the task" in said
    # named by an input (a chained instruction), and by the task without its suffix
    chain = {"step1.txt": "Write the word apple to answer.txt."}
    worked = {"files": [{"name": "answer.txt", "text": "apple"}]}
    passed, said, _ = await judged(
        tmp_path / "c", "Follow step1.txt.", chain, {"answer.txt": "pear\n"}, [worked]
    )
    assert not passed and "answer.txt is not what the task" in said
    task = "Copy the first line of todo.txt to the file called notes."
    worked = {"files": [{"name": "notes.md", "text": "buy milk"}]}
    passed, said, _ = await judged(
        tmp_path / "d", task, {"todo.txt": "buy milk\nwalk\n"}, {"notes.md": "walk\n"}, [worked]
    )
    assert not passed and "notes.md is not what the task" in said


async def test_a_number_written_either_way_is_the_same_number(tmp_path: Path) -> None:
    """order_value: the program wrote 46.0 where the judge worked out 46 (a right total); a
    wrong total still fails."""
    task = "orders.csv has a quantity and a price column. Write the total value to value.txt."
    orders = {"orders.csv": "item,quantity,price\npen,3,2\nbag,1,40\n"}
    worked = {"files": [{"name": "value.txt", "text": "46"}]}
    for written, right in (
        ("46.0\n", True),
        ("46\n", True),
        ("45.0\n", False),
        ("46 EUR\n", False),
    ):
        passed, said, _ = await judged(
            tmp_path / written.strip(), task, orders, {"value.txt": written}, [worked]
        )
        assert passed is right, (written, said)


async def program_judged(
    tmp_path: Path, task: str, start: dict[str, str], now: dict[str, str], answers: list[object]
) -> tuple[bool, str, ScriptedModel]:
    first, ws = workspaces(tmp_path, start, now)
    model = ScriptedModel(answers)
    judge = Judge(model, start=first, sandbox=BubblewrapSandbox(SandboxSettings()))
    result = await judge.judge(task_check(task), task, [task], Workspace(ws), BudgetSpent())
    return result.passed, result.output, model


COUNT = "Count the lines of poem.txt and write the number alone to count.txt."
POEM = {"poem.txt": "a\nb\nc\nd\ne\nf\n"}
COUNTING = {
    "code": "n = len(open('poem.txt').read().splitlines())\nopen('count.txt', 'w').write(str(n))"
}
SIX = {"files": [{"name": "count.txt", "text": "6"}]}  # typed, asked when the program disagrees


async def test_with_a_sandbox_the_task_is_worked_out_by_a_program_on_a_copy_of_its_inputs(
    tmp_path: Path,
) -> None:
    # code_half_5d48eb5, count_lines: typing the answer, the judge refused the right 6
    passed, said, model = await program_judged(
        tmp_path, COUNT, POEM, {"count.txt": "6\n"}, [COUNTING]
    )
    assert (
        passed and said.startswith("judged: count.txt hold what the task") and model.remaining == 0
    )
    prompt = model.requests[0].messages[-1].content
    assert "poem.txt:\na\nb" in prompt and "Python program" in prompt
    assert "The task writes count.txt, which is not among the files above." in prompt
    passed, said, model = await program_judged(
        tmp_path / "b", COUNT, POEM, {"count.txt": "5\n"}, [COUNTING, SIX]
    )
    assert not passed and "count.txt is not what the task" in said and "6" not in said
    assert model.remaining == 0 and "Python program" not in model.requests[1].messages[0].content


async def test_a_program_that_reaches_outside_its_copy_changes_nothing_there(
    tmp_path: Path,
) -> None:
    # the judge's program runs in the sandbox on a copy: the start and the work stay as they were
    wild = {"code": "import os\nfor f in os.listdir('.'):\n    os.remove(f)\n"
            "open('count.txt', 'w').write('6')"}  # fmt: skip
    passed, _, _ = await program_judged(tmp_path, COUNT, POEM, {"count.txt": "6\n"}, [wild])
    assert passed
    assert (tmp_path / "start" / "poem.txt").read_text() == POEM["poem.txt"]
    assert (tmp_path / "ws" / "poem.txt").read_text() == POEM["poem.txt"]


async def test_a_program_that_fails_is_asked_again_with_why_then_typed_text_is_asked(
    tmp_path: Path,
) -> None:
    typed = SIX
    made_up = {"code": "open('count_poem.txt', 'w').write('6')"}  # a file the task does not name
    failing = [{"code": "open('nothere.txt').read()"}, made_up, {"code": "import pandas"}]
    assert len(failing) == PROGRAMS
    passed, said, model = await program_judged(
        tmp_path, COUNT, POEM, {"count.txt": "6\n"}, [*failing, typed]
    )
    assert passed and model.remaining == 0, said
    again = model.requests[1].messages[-1].content
    assert "did not do: it failed:" in again and "FileNotFoundError" in again
    assert "Python program" not in model.requests[PROGRAMS].messages[-1].content
    # a program's file the task does not name is set aside; the second program is kept
    passed, said, model = await program_judged(
        tmp_path / "b", COUNT, POEM, {"count.txt": "5\n"}, [made_up, COUNTING, SIX]
    )
    assert not passed and "count.txt is not what the task" in said and model.remaining == 0
    assert "it wrote count_poem.txt, not a file the task writes" in (
        model.requests[1].messages[-1].content
    )
    # one that prints and writes nothing, one that does not parse, one that leaves it empty
    passed, _, model = await program_judged(
        tmp_path / "c", COUNT, POEM, {"count.txt": "6\n"},
        [{"code": "print(6)"}, {"code": "open('count.txt', 'w')"}, {"code": "def ("}, typed],
    )  # fmt: skip
    assert passed and model.remaining == 0
    assert "it left count.txt empty" in model.requests[2].messages[-1].content


def test_a_file_the_task_names_without_its_suffix_is_an_input(tmp_path: Path) -> None:
    # similar_name: "the file called notes" is notes.md
    task = "Read the file called notes and write its first line, in capital letters, to title.txt."
    first, _ = workspaces(tmp_path, {"notes.md": "shopping list\nmilk\n", "other.md": "x"}, {})
    assert inputs_of(task, first) == {"notes.md": "shopping list\nmilk\n"}


async def test_a_program_that_overwrites_an_input_of_a_task_writing_a_new_file_is_asked_again(
    tmp_path: Path,
) -> None:
    # two_hops: the judge's program wrote start.txt's text over clue.txt
    task = "start.txt says where the access code is. Write the code alone to code.txt."
    chain = {"start.txt": "The code is in clue.txt.\n", "clue.txt": "8142\n"}
    over = {"code": "open('clue.txt', 'w').write(open('start.txt').read())"}
    right = {"code": "open('code.txt', 'w').write(open('clue.txt').read())"}
    passed, said, model = await program_judged(
        tmp_path, task, chain, {"code.txt": "8142\n"}, [over, right]
    )
    assert passed and model.remaining == 0, said
    assert "it wrote clue.txt, not a file the task writes" in model.requests[1].messages[-1].content


def test_a_fence_or_a_language_line_around_a_program_is_dropped() -> None:
    assert unfenced("python\nimport csv\nprint(1)") == "import csv\nprint(1)"
    assert unfenced("```python\nprint(1)\n```") == "print(1)"
    assert unfenced("print('python')") == "print('python')"


def test_a_word_that_is_also_a_files_stem_does_not_make_it_an_input(tmp_path: Path) -> None:
    first, _ = workspaces(tmp_path, {"names.txt": "bob\n", "notes.md": "x\n"}, {})
    assert inputs_of("Write the names Alice and bob to sorted.txt", first) is None
    assert inputs_of("Copy the notes file to out.txt", first) == {"notes.md": "x\n"}
    assert inputs_of("Read the file named 'names' and sort it to s.txt", first) == {
        "names.txt": "bob\n"
    }


async def test_work_that_agrees_with_the_typed_answer_passes_where_the_program_erred(
    tmp_path: Path,
) -> None:
    # the judge benchmark (2026-12-02): people_csv's program copied people.txt into people.csv,
    # its typed answer was right; iso_dates' program left the dates as they were, typed right
    copying = {"code": "open('people.csv', 'w').write(open('people.txt').read())"}
    typed = {"files": [{"name": "people.csv", "text": RIGHT}]}
    start = {"people.txt": "Ana is 31\nBen is 27\n"}
    passed, said, model = await program_judged(
        tmp_path, PEOPLE, start, {"people.csv": RIGHT}, [copying, typed]
    )
    assert (
        passed and said.startswith("judged: people.csv hold what the task") and not model.remaining
    )
    # the work agrees with neither: the program's difference is said
    passed, said, _ = await program_judged(
        tmp_path / "b", PEOPLE, start, {"people.csv": "name,age\n"}, [copying, typed]
    )
    assert not passed and "people.csv is not what the task" in said
    # the same copy as the program's passes: a mistake the judge shares is not caught
    passed, _, _ = await program_judged(
        tmp_path / "c", PEOPLE, start, {"people.csv": start["people.txt"]}, [copying, typed]
    )
    assert passed


async def test_a_program_asked_again_is_asked_warmer(tmp_path: Path) -> None:
    # at temperature 0 the 1.5B judge wrote the same failing program three times (order_value)
    failing = {"code": "int('quantity')"}
    _, _, model = await program_judged(
        tmp_path, COUNT, POEM, {"count.txt": "6\n"}, [failing, failing, COUNTING]
    )
    assert [r.temperature for r in model.requests] == [0.0, AGAIN_TEMPERATURE, AGAIN_TEMPERATURE]
    assert AGAIN_TEMPERATURE > 0
