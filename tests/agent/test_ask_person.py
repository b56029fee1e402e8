"""ask_person: a question answered by the person in approval mode; absent when continuous."""

from __future__ import annotations

from pathlib import Path

from autonoma.agent.approval import ApprovalRequest, Decision, RefuseWithoutTerminal
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.agent.session import create_run
from autonoma.agent.settings import RunSettings
from autonoma.agent.wiring import default_tools, run_tools
from autonoma.llm import ScriptedModel
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from autonoma.tools.settings import ToolSettings
from tests.agent.helpers import IDENTITY


class Person:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        return Decision(kind="yes")

    async def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answer


async def ask_once(tmp_path: Path, approver: object, continuous: bool = False) -> str:
    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel(
        [act("ask_person", question="Which colour?"), act("task_complete", reason="asked")]
    )
    settings = RunSettings(checks=False, model="scripted", memory=False)
    run, _ = await create_run(
        store, model, "Paint", settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    agent = RunLoop(
        model,
        run_tools(settings, memory=False),
        store,
        config=LoopConfig(checks=False, continuous=continuous),
        approver=approver,  # type: ignore[arg-type]
    )
    await agent.run(run.id)
    return store.steps(run.id)[0].observation or ""


async def test_the_person_answers_the_agents_question(tmp_path: Path) -> None:
    person = Person("blue, please")
    assert await ask_once(tmp_path, person) == "the person answered: blue, please"
    assert person.questions == ["Which colour?"]


async def test_no_answer_or_no_one_to_ask_says_so(tmp_path: Path) -> None:
    assert "gave no answer" in await ask_once(tmp_path / "a", Person(None))
    assert "no one can be asked" in await ask_once(tmp_path / "b", RefuseWithoutTerminal())
    # continuous: not asked even if the command slipped through
    assert "no one can be asked" in await ask_once(tmp_path / "c", Person("x"), continuous=True)


def test_continuous_runs_do_not_offer_ask_person() -> None:
    approval = RunSettings(checks=False, model="scripted")
    continuous = RunSettings(checks=False, model="scripted", continuous=True)
    assert "ask_person" in run_tools(approval, memory=False).names
    assert "ask_person" not in run_tools(continuous, memory=False).names
    only_files = RunSettings(checks=False, model="scripted", tools=ToolSettings(groups=[]))
    assert run_tools(only_files, memory=False).names == default_tools().names
