"""BabyAGI-style task creation and prioritisation after a task finishes."""

from __future__ import annotations

from typing import Any

from autonoma.llm import ScriptedModel
from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.planning.creation import Creation, PriorityChange, TaskCreator
from autonoma.planning.dedup import Deduplicator
from autonoma.planning.graph import TaskGraph
from autonoma.runtime.budget import BudgetSpent
from tests.planning.answers import Answers, graph, planned, task

GOAL = "Write a short guide to the planets Mars and Venus in planets.md"


def plan() -> TaskGraph:
    return graph(
        task(
            "t1",
            "Write three facts about Mars to mars.txt",
            status="done",
            outputs=["mars.txt"],
            result="mars.txt written: red, two moons, thin air",
        ),
        task("t2", "Write three facts about Venus to venus.txt", outputs=["venus.txt"]),
        task(
            "t3",
            "Combine mars.txt and venus.txt into planets.md",
            ["t1", "t2"],
            inputs=["mars.txt", "venus.txt"],
            outputs=["planets.md"],
        ),
    )


async def create(
    answers: Answers | list[Any], g: TaskGraph, **settings: Any
) -> tuple[Creation, TaskCreator, BudgetSpent]:
    model = answers.model() if isinstance(answers, Answers) else ScriptedModel(answers)
    creator = TaskCreator(model, **settings)
    spent = BudgetSpent()
    creation = await creator.create(GOAL, g, g.get("t1"), spent, files=["notes.md"])
    return creation, creator, spent


async def test_new_tasks_are_added_and_pending_tasks_reprioritised() -> None:
    g = plan()
    answer = {
        "tasks": [
            planned(
                "n1",
                "Check the Mars facts in mars.txt against NASA's fact sheet",
                ["t1"],
                inputs=["mars.txt"],
                outputs=["mars_checked.md"],
                value=6,
                effort=2,
            )
        ],
        "priorities": [
            {"id": "t2", "value": 8, "effort": 3},
            {"id": "t3", "value": 5, "effort": 5},  # as it was: not a change
        ],
    }
    answers = Answers([answer])
    creation, _, spent = await create(answers, g)

    assert creation.answered
    assert creation.added_ids == ["n1"]
    assert g.ids() == ["t1", "t2", "t3", "n1"]
    new = g.get("n1")
    assert new.status == "pending" and new.dep == ["t1"] and (new.value, new.effort) == (6, 2)
    assert creation.reprioritised == [PriorityChange("t2", 5, 5, 8, 3)]
    assert (g.get("t2").value, g.get("t2").effort) == (8, 3)
    assert creation.dropped == [] and creation.merged == [] and creation.renamed == []
    assert g.problems() == []
    assert spent.prompt_tokens > 0 and spent.completion_tokens > 0

    (prompt,) = answers.planning
    assert f"Goal: {GOAL}" in prompt
    assert "Task t1 has just finished: Write three facts about Mars to mars.txt" in prompt
    assert "Its result: mars.txt written: red, two moons, thin air" in prompt
    assert "- t2 (value 5, effort 5, produces venus.txt): Write three facts about Venus" in prompt
    assert "- t3 (value 5, effort 5, after t1, t2, produces planets.md): Combine" in prompt
    assert "at most 3, and none if nothing is missing" in prompt
    assert "Files in the workspace: notes.md." in prompt


async def test_done_tasks_are_shown_to_the_model_by_description() -> None:
    g = plan()
    g.tasks.insert(0, task("t0", "Collect sources on both planets", status="done"))
    answers = Answers([{"tasks": [], "priorities": []}])
    creation, _, _ = await create(answers, g)
    assert not creation.changed
    assert (
        "Tasks finished before it:\n- t0: Collect sources on both planets" in (answers.planning[0])
    )


async def test_clashing_ids_are_renamed_and_references_follow_the_rename() -> None:
    g = plan()
    answer = {
        "tasks": [
            planned("t2", "Draw a diagram of the orbits of Mars and Venus", outputs=["orbits.svg"]),
            planned("t2", "Write a glossary of planet terms", outputs=["glossary.md"]),
            planned("n3", "Put orbits.svg into the guide", ["t2"], inputs=["orbits.svg"]),
        ],
        "priorities": [],
    }
    creation, _, _ = await create(Answers([answer]), g)
    assert creation.added_ids == ["t2-2", "t2-3", "n3"]
    assert creation.renamed == [("t2", "t2-2"), ("t2", "t2-3")]
    assert g.get("t2").task == "Write three facts about Venus to venus.txt"  # untouched
    assert g.get("t2-2").task.startswith("Draw a diagram")
    assert g.get("n3").dep == ["t2-2"]  # the answer's own t2, renamed
    assert g.problems() == []


async def test_invalid_proposals_are_dropped_with_the_reason_and_the_rest_added() -> None:
    g = plan()
    g.tasks.append(task("t4", "Find photos of Venus", status="failed", result="no access"))
    answer = {
        "tasks": [
            planned("n1", "Summarise the moons", ["t9"]),
            planned("n2", "Proofread the guide", inputs=["draft.md"]),
            planned("n3", "Pick a title", ["n4"]),
            planned("n4", "Pick a subtitle", ["n3"]),
            planned("n5", "Caption the Venus photos", ["t4"]),
            planned("n6", "Index the guide", ["n1"]),
            planned("n7", "Add a Mars timeline to timeline.md", outputs=["timeline.md"]),
            planned("bad id!", "Spell-check everything"),
        ],
        "priorities": [],
    }
    creation, _, _ = await create(Answers([answer]), g, max_new=10, max_total=30)
    assert creation.added_ids == ["n7"]
    reasons = {d.id: d.reason for d in creation.dropped}
    assert reasons == {
        "n1": "task n1 depends on 't9', which is not a task",
        "n2": "task n2 needs input 'draft.md', which no task produces",
        "n3": "the tasks form a cycle: n3 -> n4 -> n3",
        "n4": "the tasks form a cycle: n3 -> n4 -> n3",
        "n5": "task n5 waits for t4, which is failed",
        "n6": "it waits for n1, which was not added",
        "bad id!": "task id 'bad id!' must be letters, digits, - or _",
    }
    assert g.ids() == ["t1", "t2", "t3", "t4", "n7"]
    assert g.problems() == []


async def test_a_proposal_may_come_before_the_one_it_depends_on() -> None:
    g = plan()
    answer = {
        "tasks": [
            planned("n2", "Add the table to the guide", ["n1"], inputs=["table.md"]),
            planned("n1", "Tabulate sizes of both planets", outputs=["table.md"]),
        ],
        "priorities": [],
    }
    creation, _, _ = await create(Answers([answer]), g)
    assert creation.added_ids == ["n1", "n2"]  # in the order they could join
    assert g.problems() == []


async def test_new_tasks_per_round_and_tasks_in_all_are_capped() -> None:
    three = {
        "tasks": [
            planned("n1", "Add a Mars timeline", outputs=["a.md"]),
            planned("n2", "Add a Venus timeline", outputs=["b.md"]),
            planned("n3", "Add a comparison table", ["n2"], outputs=["c.md"]),
        ],
        "priorities": [],
    }
    g = plan()
    creation, _, _ = await create(Answers([three]), g, max_new=2)
    assert creation.added_ids == ["n1", "n2"]
    assert [(d.id, d.reason) for d in creation.dropped] == [
        ("n3", "at most 2 new tasks are added a round")
    ]

    g = plan()
    answers = Answers([three])
    creation, _, _ = await create(answers, g, max_total=4)
    assert creation.added_ids == ["n1"]
    assert {d.id: d.reason for d in creation.dropped} == {
        "n2": "the plan may hold at most 4 tasks",
        "n3": "it waits for n2, which was not added",
    }
    assert "at most 1, and none if nothing is missing" in answers.planning[0]

    g = plan()
    answers = Answers([{"tasks": [], "priorities": [{"id": "t3", "value": 9, "effort": 1}]}])
    creation, _, _ = await create(answers, g, max_total=3)
    assert "the plan is full: propose no new tasks" in answers.planning[0]
    assert creation.reprioritised_ids == ["t3"]  # priorities still apply when full


async def test_priorities_for_tasks_that_are_not_pending_are_ignored() -> None:
    g = plan()
    g.get("t2").status = "running"
    answer = {
        "tasks": [],
        "priorities": [
            {"id": "t1", "value": 1, "effort": 9},
            {"id": "t2", "value": 1, "effort": 9},
            {"id": "zz", "value": 1, "effort": 9},
            {"id": "t3", "value": 7, "effort": 2},
        ],
    }
    creation, _, _ = await create(Answers([answer]), g)
    assert creation.reprioritised_ids == ["t3"]
    assert (g.get("t1").value, g.get("t2").value, g.get("t3").value) == (5, 5, 7)


async def test_an_unusable_answer_adds_nothing_is_counted_and_charged() -> None:
    g = plan()
    before = g.model_dump()
    creation, creator, spent = await create(["not json", "still not", "nope"], g)
    assert creation == Creation(answered=False)
    assert creator.failures == 1
    assert g.model_dump() == before
    assert spent.prompt_tokens > 0


async def test_with_a_deduplicator_duplicates_merge_and_dependents_follow() -> None:
    g = plan()
    answer = {
        "tasks": [
            # the same as pending t2, in other words: merged into t2
            planned("n1", "List three facts about Venus in venus.txt", outputs=["venus.txt"]),
            # waits for the merged proposal: so it waits for t2
            planned("n2", "Check the Venus facts", ["n1"], inputs=["venus.txt"]),
            # unrelated: added without a model check
            planned("n3", "Draw the orbits of both planets", outputs=["orbits.svg"]),
            # close in wording to t1, but the model says it is other work: added
            planned("n4", "Write three myths about Mars to myths.txt", outputs=["myths.txt"]),
            # the same as n3 in this very answer: merged into n3
            planned("n5", "Draw the orbits of both planets", outputs=["orbits2.svg"]),
        ],
        "priorities": [],
    }
    answers = Answers(
        [answer],
        verdicts={
            "List three facts about Venus in venus.txt": True,
            "Write three myths about Mars to myths.txt": False,
            "Draw the orbits of both planets": True,
        },
    )
    model = answers.model()
    dedup = Deduplicator(LexicalEmbedder(), model, threshold=0.6)
    creator = TaskCreator(model, deduplicator=dedup, max_new=5)
    spent = BudgetSpent()
    creation = await creator.create(GOAL, g, g.get("t1"), spent)

    assert [(m.id, m.into) for m in creation.merged] == [("n1", "t2"), ("n5", "n3")]
    assert creation.added_ids == ["n2", "n3", "n4"]
    assert g.get("n2").dep == ["t2"]
    assert g.problems() == []
    checked = {p.split("Task B, proposed: ")[1].split("\n")[0] for p in answers.checked}
    assert checked == {
        "List three facts about Venus in venus.txt",
        "Write three myths about Mars to myths.txt",
        "Draw the orbits of both planets",
    }
    assert "Task A, already in the plan: Write three facts about Mars to mars.txt" in "".join(
        answers.checked
    )
