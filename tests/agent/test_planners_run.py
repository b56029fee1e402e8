"""The planned strategy with the searching planners: --planner pddl runs the chain pyperplan
found, task by task; --planner tot plans with the best-rated of several plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from autonoma.agent.session import create_run, make_planner, run_agent
from autonoma.agent.settings import PlanningSettings, RunSettings
from autonoma.errors import ConfigError
from autonoma.llm import ScriptedModel
from autonoma.planning.decompose import Decomposer
from autonoma.planning.tot import ToTDecomposer
from autonoma.runtime.store import RunStore
from autonoma.testing import act
from tests.agent.helpers import IDENTITY

pytest.importorskip("pyperplan")
from tests.planning.helpers import GOAL, PROBLEM


async def test_a_pddl_planned_run_does_the_solvers_actions_in_order(tmp_path: Path) -> None:
    steps = [act("task_complete", reason=f"action {n} done") for n in range(1, 7)]
    model = ScriptedModel([{"problem": PROBLEM}, *steps])
    store = RunStore(tmp_path / "runs.db")
    settings = RunSettings(
        checks=False,
        model="scripted",
        continuous=True,
        memory=False,
        strategy="plan",
        planning=PlanningSettings(planner="pddl"),
    )
    run, _ = await create_run(
        store, model, GOAL, settings, workspace=tmp_path / "ws", identity=IDENTITY
    )
    outcome = await run_agent(store, model, run)
    assert outcome.status == "completed", outcome.reason
    tasks = store.tasks(run.id)
    assert [t["status"] for t in tasks] == ["done"] * 6
    assert "(unstack c a)" in tasks[0]["task"] and "(stack a b)" in tasks[-1]["task"]
    assert [t["dep"] for t in tasks[1:]] == [[t["id"]] for t in tasks[:-1]]


def test_the_planner_setting_chooses_the_planner(tmp_path: Path) -> None:
    model = ScriptedModel([])
    assert type(make_planner(model, RunSettings(checks=False, model="scripted"))) is Decomposer
    tot = make_planner(
        model,
        RunSettings(
            checks=False, model="scripted", planning=PlanningSettings(planner="tot", tot_k=4)
        ),
    )
    assert isinstance(tot, ToTDecomposer) and tot.k == 4
    domain = str(tmp_path / "x.pddl")
    missing = RunSettings(
        checks=False,
        model="scripted",
        planning=PlanningSettings(planner="pddl", pddl_domain=domain),
    )
    with pytest.raises(ConfigError, match="cannot read the PDDL domain"):
        make_planner(model, missing)
