"""`autonoma runs`: live runs told from those whose process is gone, filters, and `delete` /
`prune` removing runs with their own workspaces (never one the person named)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from autonoma.runtime.store import RunStore
from tests.agent.helpers import IDENTITY
from tests.cli_helpers import cli, one_line_error


def stored(home: Path, run_id: str, status: str, workspace: Path, age_s: float = 0) -> None:
    store = RunStore(home / "runs.db")
    store.create_run(
        goal=f"goal of {run_id}",
        identity=IDENTITY.model_dump(),
        settings={},
        workspace=str(workspace),
        model="scripted",
        run_id=run_id,
    )
    if status != "running":
        store.set_status(run_id, status, "ended")  # type: ignore[arg-type]
    store.close()
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "out.txt").write_text("x")
    with sqlite3.connect(home / "runs.db") as db:
        db.execute("UPDATE runs SET created_at = ? WHERE id = ?", (time.time() - age_s, run_id))


def test_runs_are_listed_filtered_deleted_and_pruned(home: Path, tmp_path: Path) -> None:
    empty = cli(home, "runs")
    assert "no runs yet" in empty.stdout and "autonoma run" in empty.stdout
    own = home / "workspaces"
    stored(home, "old", "completed", own / "old", age_s=3 * 86400)
    stored(home, "killed", "running", own / "killed")  # no lease: its process is gone
    named = tmp_path / "project"
    stored(home, "mine", "failed", named)

    listed = {r["id"]: r for r in json.loads(cli(home, "runs", "--json").stdout)}
    assert listed["killed"]["driven"] is False and listed["old"]["driven"] is None
    assert "no driver: resume it" in cli(home, "runs").stdout
    only = json.loads(cli(home, "runs", "--status", "failed", "--json").stdout)
    assert [r["id"] for r in only] == ["mine"]
    assert "--status is one of" in one_line_error(cli(home, "runs", "--status", "gone"))
    none_stopped = cli(home, "runs", "--status", "stopped").stdout
    assert "no runs with status stopped" in none_stopped and "no runs yet" not in none_stopped

    unasked = cli(home, "runs", "delete", "mine")  # no terminal to ask, no --yes
    assert unasked.returncode == 1 and "give --yes" in unasked.stderr
    assert named.exists() and "mine" in cli(home, "runs", "--json").stdout
    deleted = cli(home, "runs", "delete", "mine", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert f"keep   {named} (a workspace you named: kept)" in deleted.stderr
    assert (named / "out.txt").exists()  # the person's folder stays
    assert deleted.stdout.strip() == "removed 1 run"
    assert "mine" not in cli(home, "runs", "--json").stdout

    assert "--older-than takes an age" in one_line_error(
        cli(home, "runs", "prune", "--older-than", "3x", "--yes")
    )
    pruned = cli(home, "runs", "prune", "--older-than", "1d", "--yes")
    assert pruned.returncode == 0, pruned.stderr
    assert f"remove its workspace {own / 'old'}" in pruned.stderr
    assert not (own / "old").exists() and (own / "killed").exists()  # running: not pruned
    assert [r["id"] for r in json.loads(cli(home, "runs", "--json").stdout)] == ["killed"]
    assert "no run to prune" in cli(home, "runs", "prune", "--older-than", "1d").stdout
