"""Everyday goals with the default embedded model: goals met, how the others failed, tokens per
goal met, seconds per step and the prompt cache's share, the run's own checks against the
suite's checker.

Each goal of bench/everyday_goals.py gets a fresh workspace and the whole path a person takes
with `autonoma run GOAL --continuous`: the identity made from the goal, the default tools and
memory, 10 steps at most. The checker decides success from the workspace alone.

Every chat request the run makes is recorded as the server answered it (usage and llama.cpp's
own timings), by wrapping the OpenAI SDK's `create`, so that figures are taken the same way
from any version of autonoma (the `before` figures were taken from the commit before issue
17 with this script). A step's seconds run from its `thinking` event to the next step's (the
last to `run_finished`): the model's answer, the command, and memory's work before the next
prompt.

Failure kinds: `claimed` (the run says completed, the checker says no), `loop` (the monitor
caught a repeat, cycle or stall and the run did not finish), `budget` (the steps ran out
otherwise), `incomplete` (the run stopped with its own checks failing), `error` (the model
failed or the run raised).

    python bench/everyday.py --label after [--actions json|code] [--goals a,b]
        [--max-steps 10] [--seed 0] [--model qwen2.5-coder-1.5b] [--fresh-model]

`--fresh-model` opens the model anew for each goal, as each `autonoma run` does: the server
starts, restores the prompt caches an earlier process kept (docs/llm.md) and saves its own
at the end. Without it one server serves every goal and its caches stay in memory.
    python bench/everyday.py --costs-of bench/results/everyday_before.json
    python bench/everyday.py --label before_part --from bench/results/everyday_before.json \
        --goals a,b
    python bench/everyday.py --label suite_now --newest-of OLDER.json NEWER.json

What each thought costs: every thought the steps wrote is counted with the model's own
tokenizer (`thought_tokens` in the summary: mean tokens a step, per field, and their share of
the steps' completion tokens); `--costs-of` adds the same to an earlier result file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai.resources.chat.completions as chat

from autonoma.agent.session import create_run, run_agent
from autonoma.agent.settings import RunSettings
from autonoma.llm import Model, open_model
from autonoma.llm.openai_compat import OpenAICompatModel
from autonoma.runtime.budget import BudgetLimits
from autonoma.runtime.store import RunStore
from bench.common import write_result
from bench.everyday_goals import GOALS, Goal, goals_named

LOOP_KINDS = {"repeat", "cycle", "stalled"}
_requests: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "requests", default=None
)


def _purpose(args: dict[str, Any]) -> str:
    """ "step" for the agent's own answer (its schema has a command or code), else "other"
    (identity, memory's ratings and summaries, reflections, checks)."""
    schema = (args.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    keys = set(schema.get("properties", {}))
    if "command" in keys or "code" in keys:
        return "step"
    extra = args.get("extra_body") or {}
    return "step" if extra.get("autonoma_purpose") == "step" else "other"


def instrument() -> None:
    """Record every chat request's usage and server timings into the current goal's list:
    from each whole answer where autonoma streams every answer (since issue 23), else from the
    SDK's `create` of a whole, unstreamed answer (the versions before)."""
    if hasattr(OpenAICompatModel, "_whole_answer"):
        complete = OpenAICompatModel._complete

        async def streamed(self: Any, request: Any) -> Any:
            started = time.monotonic()
            raw = await complete(self, request)
            usage = raw.usage
            _record(
                self._arguments(request),
                usage.prompt_tokens if usage else 0,
                usage.completion_tokens if usage else 0,
                usage.cached_tokens if usage else 0,
                {
                    "prompt_ms": usage.prompt_seconds * 1000 if usage else None,
                    "predicted_ms": usage.generation_seconds * 1000 if usage else None,
                },
                started,
            )
            return raw

        OpenAICompatModel._complete = streamed  # type: ignore[method-assign]
        return
    original = chat.AsyncCompletions.create

    async def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        response = await original(self, *args, **kwargs)
        if not kwargs.get("stream"):
            usage = response.usage
            details = getattr(usage, "prompt_tokens_details", None)
            _record(
                kwargs,
                usage.prompt_tokens if usage else 0,
                usage.completion_tokens if usage else 0,
                getattr(details, "cached_tokens", 0) or 0,
                (response.model_extra or {}).get("timings") or {},
                started,
            )
        return response

    chat.AsyncCompletions.create = create  # type: ignore[method-assign]


def _record(
    args: dict[str, Any],
    prompt: int,
    completion: int,
    cached: int,
    timings: dict[str, Any],
    started: float,
) -> None:
    sink = _requests.get()
    if sink is not None:
        sink.append(
            {
                "purpose": _purpose(args),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cached_tokens": cached,
                "prompt_ms": timings.get("prompt_ms"),
                "predicted_ms": timings.get("predicted_ms"),
                "wall_s": round(time.monotonic() - started, 3),
                "at": time.time(),
            }
        )


def repeats(steps: list[Any]) -> int:
    """Steps whose command, arguments and result are those of an earlier step of the run."""
    seen: set[str] = set()
    count = 0
    for step in steps:
        key = json.dumps([step.command, step.arguments, step.observation], sort_keys=True)
        count += key in seen
        seen.add(key)
    return count


def step_seconds(events: list[Any]) -> list[float]:
    marks = [e.at for e in events if e.kind == "thinking"]
    ends = [e.at for e in events if e.kind == "run_finished"]
    if not marks:
        return []
    marks.append(ends[-1] if ends else marks[-1])
    return [round(b - a, 2) for a, b in itertools.pairwise(marks)]


def own_checks(events: list[Any]) -> dict[str, Any] | None:
    """The run's own acceptance checks at its end, if this version of autonoma has them."""
    for event in reversed(events):
        if event.kind == "run_finished" and "acceptance" in event.data:
            return dict(event.data["acceptance"])
    return None


def written_checks(events: list[Any]) -> dict[str, Any] | None:
    """The checks the run wrote before the work (with their code) and those it discarded."""
    for event in events:
        if event.kind == "checks_written":
            keep = ("checks", "discarded", "fallback")
            return {k: event.data[k] for k in keep if k in event.data}
    return None


def failure_kind(row: dict[str, Any]) -> str | None:
    if row["success"]:
        return None
    if row["status"] == "completed":
        return "claimed"
    if row["status"] in ("failed", "error"):
        return "error"
    if row["status"] == "incomplete":
        return "incomplete"
    if any(d in LOOP_KINDS for d in row["detections"]):
        return "loop"
    return "budget"


async def run_goal(
    model: Model, spec: str, goal: Goal, args: argparse.Namespace, root: Path
) -> dict[str, Any]:
    workspace = root / goal.name
    workspace.mkdir(parents=True)
    goal.setup(workspace)
    store = RunStore(root / "runs.db")
    extra = {} if args.actions is None else {"actions": args.actions}
    settings = RunSettings(
        model=spec,
        limits=BudgetLimits(max_steps=args.max_steps),
        continuous=True,
        seed=args.seed,
        **extra,
    )
    requests: list[dict[str, Any]] = []
    token = _requests.set(requests)
    started, load = time.monotonic(), os.getloadavg()[0]
    row: dict[str, Any] = {"goal": goal.name, "load_before": round(load, 2)}
    try:
        run, _ = await create_run(store, model, goal.goal, settings, workspace=workspace)
        outcome = await run_agent(store, model, run)
        row |= {"run_id": run.id, "status": outcome.status, "reason": outcome.reason}
        row["steps"] = outcome.spent.steps
        events, steps = store.events(run.id), store.steps(run.id)
    except Exception as error:  # a crash is a result too
        row |= {"status": "error", "reason": repr(error), "steps": 0}
        row["traceback"] = traceback.format_exc()[-2000:]
        events, steps = [], []
    finally:
        _requests.reset(token)
    row["success"] = goal.check(workspace)
    row["seconds"] = round(time.monotonic() - started, 1)
    row["load_after"] = round(os.getloadavg()[0], 2)
    row["detections"] = [e.data["detection"] for e in events if e.kind == "monitor"]
    row["repeats"] = repeats(steps)
    row["step_seconds"] = step_seconds(events)
    row["requests"] = requests
    row["tokens"] = sum(r["prompt_tokens"] + r["completion_tokens"] for r in requests)
    row["commands"] = [f"{s.command} {json.dumps(s.arguments)}"[:160] for s in steps]
    row["thoughts"] = [s.thoughts for s in steps]
    # what each step saw, and each verdict of the checks: to read a failure without its store
    row["observations"] = [(s.observation or "")[:400] for s in steps]
    row["verdicts"] = [
        {"step": e.step, "passed": e.data.get("passed"), "results": e.data.get("results", [])}
        for e in events
        if e.kind == "checks_run"
    ]
    row["own_checks"] = own_checks(events)
    row["written_checks"] = written_checks(events)
    row["failure"] = failure_kind(row)
    return row


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    met = [r for r in rows if r["success"]]
    seconds = [s for r in rows for s in r["step_seconds"]]
    steps = [q for r in rows for q in r["requests"] if q["purpose"] == "step"]
    after_first = [
        q for r in rows for q in [x for x in r["requests"] if x["purpose"] == "step"][1:]
    ]
    tokens = sum(r["tokens"] for r in rows)
    judged = [r for r in rows if r["own_checks"] is not None]
    agree = [r for r in judged if bool(r["own_checks"].get("passed")) == r["success"]]
    kinds: dict[str, int] = {}
    for row in rows:
        if row["failure"]:
            kinds[row["failure"]] = kinds.get(row["failure"], 0) + 1

    def share(requests: list[dict[str, Any]]) -> float | None:
        prompt = sum(q["prompt_tokens"] for q in requests)
        return round(sum(q["cached_tokens"] for q in requests) / prompt, 3) if prompt else None

    return {
        "goals": len(rows),
        "met": len(met),
        "failures": kinds,
        "completed_but_checker_fails": sum(
            r["status"] == "completed" and not r["success"] for r in rows
        ),
        "tokens": tokens,
        "tokens_per_goal_met": round(tokens / len(met)) if met else None,
        "steps": sum(r["steps"] for r in rows),
        "steps_lost_to_repeats": sum(r["repeats"] for r in rows),
        "step_seconds_median": statistics.median(seconds) if seconds else None,
        "step_seconds_p90": percentile(seconds, 0.9),
        "step_request_seconds_median": statistics.median(q["wall_s"] for q in steps)
        if steps
        else None,
        "step_prompt_ms_median": statistics.median(q["prompt_ms"] or 0 for q in steps)
        if steps
        else None,
        "step_generation_ms_median": statistics.median(q["predicted_ms"] or 0 for q in steps)
        if steps
        else None,
        "step_prompt_tokens_median": statistics.median(q["prompt_tokens"] for q in steps)
        if steps
        else None,
        "cached_share_steps": share(steps),
        "cached_share_steps_after_first": share(after_first),
        "cached_share_all_requests": share([q for r in rows for q in r["requests"]]),
        "own_checks_judged": len(judged),
        "own_checks_agree_with_checker": len(agree),
        "load_before_mean": round(statistics.mean(r["load_before"] for r in rows), 2),
    }


async def thought_costs(model: Model, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean tokens a step of each thought field, and the thoughts' share of the steps'
    completion tokens (the model's own tokenizer)."""
    fields: dict[str, list[int]] = {}
    for row in rows:
        for thoughts in row["thoughts"]:
            for field, text in thoughts.items():
                tokens = len(await model.tokenize(text)) if text else 0  # type: ignore[attr-defined]
                fields.setdefault(field, []).append(tokens)
    steps = [q for r in rows for q in r["requests"] if q["purpose"] == "step"]
    completion = sum(q["completion_tokens"] for q in steps)
    thought_total = sum(sum(v) for v in fields.values())
    return {
        "mean_tokens_a_step": {f: round(statistics.mean(v), 1) for f, v in fields.items() if v},
        "share_of_step_completion_tokens": round(thought_total / completion, 3)
        if completion
        else None,
        "step_completion_tokens_mean": round(completion / len(steps), 1) if steps else None,
    }


async def add_costs(path: Path, spec: str) -> None:
    result = json.loads(path.read_text())
    model = open_model(spec)
    try:
        result["summary"]["thought_tokens"] = await thought_costs(model, result["runs"])
    finally:
        await model.aclose()
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["summary"]["thought_tokens"], indent=2))


def part_of(path: Path, goals: list[str]) -> dict[str, Any]:
    """An earlier result cut down to some of its goals, summarised again: the same goals
    side by side when a later run covers only part of the suite."""
    earlier = json.loads(path.read_text())
    rows = [r for r in earlier["runs"] if r["goal"] in goals]
    part = {
        k: v for k, v in earlier.items() if k not in ("summary", "runs", "benchmark", "command")
    }
    return part | {"part_of": path.name, "summary": summarise(rows), "runs": rows}


def newest_of(paths: list[Path], goals: list[str]) -> dict[str, Any]:
    """Each goal's run from the last of `paths` that ran it, summarised together: the suite
    as it stands when its parts were run at different commits (each row says which file)."""
    chosen: dict[str, dict[str, Any]] = {}
    for path in paths:
        earlier = json.loads(path.read_text())
        for row in earlier["runs"]:
            if row["goal"] in goals:
                chosen[row["goal"]] = row | {"from": path.name}
    rows = [chosen[g] for g in goals if g in chosen]
    missing = [g for g in goals if g not in chosen]
    return {
        "newest_of": [p.name for p in paths],
        "missing": missing,
        "summary": summarise(rows),
        "runs": rows,
    }


def model_default_actions(spec: str) -> str:
    """The action form a run takes when --actions is not given: the model's own default
    where this version of autonoma has one, JSON before that."""
    try:
        from autonoma.llm.registry import default_actions
    except ImportError:
        return "json"
    return default_actions(spec)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--label", help="names the result file")
    parser.add_argument("--costs-of", type=Path, help="add thought costs to a result file")
    parser.add_argument(
        "--from", dest="source", type=Path, help="no runs: the --goals of an earlier result file"
    )
    parser.add_argument(
        "--newest-of", nargs="+", type=Path, help="no runs: each goal's run from the last file"
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--goals", default=",".join(g.name for g in GOALS))
    parser.add_argument("--actions", choices=["json", "code"], default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh-model", action="store_true", help="a new server each goal")
    args = parser.parse_args()
    spec = f"local:{args.model}"
    if args.costs_of:
        await add_costs(args.costs_of, spec)
        return
    if not args.label:
        parser.error("--label is required")
    try:
        goals = goals_named(args.goals)
    except ValueError as error:
        parser.error(str(error))
    if args.source:
        write_result(f"everyday_{args.label}", part_of(args.source, [g.name for g in goals]))
        return
    if args.newest_of:
        combined = newest_of(args.newest_of, [g.name for g in goals])
        write_result(f"everyday_{args.label}", combined)
        return
    instrument()
    result: dict[str, Any] = {
        "label": args.label,
        "model": spec,
        "max_steps": args.max_steps,
        "seed": args.seed,
        "actions": args.actions or model_default_actions(spec),
        "fresh_model": args.fresh_model,
    }
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="autonoma-everyday-") as tmp:
        os.environ["AUTONOMA_HOME"] = tmp  # memory and trials beside the bench's own store
        model = open_model(spec)
        try:
            for goal in goals:
                if args.fresh_model:
                    await model.aclose()
                    model = open_model(spec)
                row = await run_goal(model, spec, goal, args, Path(tmp))
                rows.append(row)
                print(
                    goal.name,
                    "met" if row["success"] else f"NOT met ({row['failure']})",
                    row["status"],
                    f"{row['steps']} steps, {row['seconds']} s",
                    file=sys.stderr,
                )
                result["summary"] = summarise(rows)
                result["runs"] = rows
                write_result(f"everyday_{args.label}", result)
            result["summary"]["thought_tokens"] = await thought_costs(model, rows)
            write_result(f"everyday_{args.label}", result)
        finally:
            await model.aclose()


if __name__ == "__main__":
    asyncio.run(main())
