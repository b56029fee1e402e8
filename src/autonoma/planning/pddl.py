"""LLM+P: for a goal in a domain with a PDDL domain file, the model writes the PDDL *problem*
(objects, initial state, goal), `pyperplan` parses and solves it, and the plan (a list of ground
actions) becomes a task graph: a chain where each action waits for the one before. A problem
the parser rejects, or one with no plan, goes back to the model with the exact error.

Blocksworld ships as a worked example: `PddlDomain.load("blocksworld")`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError
from autonoma.llm import Model
from autonoma.planning.decompose import PlanInvalid, ask_with_repairs
from autonoma.planning.graph import Task, TaskGraph
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.inputs import read_input
from autonoma.templating import render


class PddlUnavailable(AutonomaError):
    """pyperplan is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "the LLM+P planner needs pyperplan; install the extra: pip install 'autonoma[planning]'"
        )


class PddlPlanFailed(PlanInvalid):
    """The model's PDDL problems never parsed into one the classical planner could solve."""

    def __init__(self, domain: str, problems: Sequence[str], attempts: int) -> None:
        listed = "; ".join(problems)
        AutonomaError.__init__(
            self,
            f"the model wrote no solvable PDDL problem for the domain {domain!r} in "
            f"{attempts} attempt(s); last problems: {listed}. Check that the goal belongs to "
            "this domain, or try a larger model or the decompose planner.",
        )
        self.domain = domain
        self.problems = list(problems)
        self.attempts = attempts


@dataclass(frozen=True)
class PddlDomain:
    """A PDDL domain: its name (as in `(define (domain NAME)`) and its text."""

    name: str
    text: str

    @classmethod
    def load(cls, name: str) -> PddlDomain:
        """A domain shipped in `autonoma/planning/domains/<name>.pddl` (e.g. "blocksworld")."""
        source = resources.files("autonoma.planning").joinpath("domains", f"{name}.pddl")
        if not source.is_file():
            raise AutonomaError(
                f"no shipped PDDL domain {name!r}: --pddl-domain takes one of "
                f"{', '.join(shipped_domains())}, or a .pddl file"
            )
        return cls.parse(source.read_text(encoding="utf-8"))

    @classmethod
    def from_file(cls, path: str | Path) -> PddlDomain:
        """A domain from a .pddl file, read with a size limit (one line if it cannot be)."""
        return cls.parse(read_input(Path(path), "the PDDL domain"))

    @classmethod
    def parse(cls, text: str) -> PddlDomain:
        """Checked by pyperplan's parser; AutonomaError if it is not a valid domain."""
        if not text.strip():
            raise AutonomaError("the PDDL domain is empty: it needs a (define (domain ...)) form")
        try:
            domain = _parse_domain(text)
        except PddlUnavailable:
            raise
        except Exception as error:  # pyperplan raises ParseError, SemanticError, ValueError...
            raise AutonomaError(f"the PDDL domain does not parse: {_said(error)}") from error
        return cls(name=str(domain.name), text=text)


class ProblemAnswer(BaseModel):
    """The model's answer: one PDDL problem for the domain."""

    problem: str = Field(min_length=1, max_length=12000)


@dataclass(frozen=True)
class Solution:
    """What the classical planner made of a problem: the ground actions in order, or the
    problems that stop it (a parse error, an unknown predicate, no plan)."""

    actions: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def shipped_domains() -> list[str]:
    """The names of the PDDL domains autonoma ships (planning/domains/)."""
    folder = resources.files("autonoma.planning").joinpath("domains")
    return sorted(
        e.name.removesuffix(".pddl") for e in folder.iterdir() if e.name.endswith(".pddl")
    )


def _said(error: BaseException) -> str:
    """One line for a parser's error, without the quotes its message may be wrapped in (a
    bare `AttributeError: 'NoneType' object...` from deep in the parser says nothing)."""
    text = " ".join(str(error).split()).strip("'\"") or "no message"
    if isinstance(error, AttributeError | TypeError | IndexError | KeyError | StopIteration):
        return f"it is not a PDDL domain pyperplan can read ({type(error).__name__}: {text})"[:400]
    return f"{type(error).__name__}: {text}"[:400]


def _parser(domain_text: str) -> Any:
    try:
        from pyperplan.pddl.parser import Parser
    except ImportError as error:  # pragma: no cover - the extra is installed in development
        raise PddlUnavailable() from error
    parser = Parser(None)
    parser.domInput = domain_text
    return parser


def _parse_domain(domain_text: str) -> Any:
    return _parser(domain_text).parse_domain(read_from_file=False)


def solve(domain_text: str, problem_text: str) -> Solution:
    """Parse `problem_text` against the domain and search for a plan (greedy best-first with
    the FF heuristic). Blocking and unbounded in time: `solve_within` runs it in a child
    process with a time limit."""
    parser = _parser(domain_text)
    domain = parser.parse_domain(read_from_file=False)
    try:
        parser.probInput = problem_text
        problem = parser.parse_problem(domain, read_from_file=False)
    except Exception as error:  # pyperplan's errors have no common base
        return Solution(problems=[f"the PDDL problem does not parse: {_said(error)}"])
    known = {name: len(p.signature) for name, p in domain.predicates.items()}
    problems: list[str] = []
    for part, atoms in (("init", problem.initial_state), ("goal", problem.goal)):
        for atom in atoms:
            if atom.name not in known:
                problems.append(
                    f"(:{part}) uses the predicate {atom.name!r}, which the domain does not "
                    f"define (predicates: {', '.join(sorted(known))})"
                )
            elif len(atom.signature) != known[atom.name]:
                problems.append(
                    f"(:{part}) gives {atom.name!r} {len(atom.signature)} argument(s); "
                    f"the domain says {known[atom.name]}"
                )
    if problems:
        return Solution(problems=problems)
    from pyperplan import grounding
    from pyperplan.heuristics.relaxation import hFFHeuristic
    from pyperplan.search import greedy_best_first_search

    try:
        task = grounding.ground(problem)
        plan = greedy_best_first_search(task, hFFHeuristic(task))
    except Exception as error:
        return Solution(problems=[f"the planner could not use the problem: {_said(error)}"])
    if plan is None:
        return Solution(
            problems=[
                "the classical planner found no plan: the goal cannot be reached from the "
                "initial state with the domain's actions. Check that (:init) states every fact "
                "true at the start (and only those) and that (:goal) asks for what is wanted"
            ]
        )
    if not plan:
        return Solution(
            problems=[
                "the goal already holds in the initial state, so there is nothing to do. "
                "(:init) must describe the state now and (:goal) the state wanted"
            ]
        )
    return Solution(actions=[str(op.name) for op in plan])


async def solve_within(domain_text: str, problem_text: str, seconds: float) -> Solution:
    """`solve` in a child process that is killed after `seconds`: a search over a large
    unsolvable problem can run for hours, and a thread cannot be stopped."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "autonoma.planning.pddl",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    given = json.dumps({"domain": domain_text, "problem": problem_text}).encode()
    try:
        out, err = await asyncio.wait_for(process.communicate(given), seconds)
    except TimeoutError:
        process.kill()
        await process.wait()
        return Solution(
            problems=[
                f"the classical planner found no plan within {seconds:g} s: the problem is "
                "probably unsolvable (check that (:init) states every fact true at the start "
                "and (:goal) only what is wanted) or has more objects than the goal needs"
            ]
        )
    if process.returncode != 0:
        if b"No module named 'pyperplan'" in err:
            raise PddlUnavailable()
        said = err.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return Solution(problems=[f"the planner could not use the problem: {said[0][:300]}"])
    found = json.loads(out)
    return Solution(actions=list(found["actions"]), problems=list(found["problems"]))


def _main() -> None:
    """`python -m autonoma.planning.pddl`: {"domain", "problem"} on stdin, the Solution as
    {"actions", "problems"} on stdout."""
    given = json.loads(sys.stdin.read())
    solution = solve(given["domain"], given["problem"])
    json.dump({"actions": solution.actions, "problems": solution.problems}, sys.stdout)


def chain(actions: Sequence[str], goal: str, domain: str) -> TaskGraph:
    """The plan as a task graph: task `a<n>` does action n and waits for `a<n-1>`."""
    count = len(actions)
    tasks = [
        Task(
            id=f"a{n}",
            task=render(
                "autonoma.planning",
                "pddl_task.j2",
                action=action,
                n=n,
                count=count,
                goal=goal[:600],
                domain=domain,
            )[:1000],
            dep=[f"a{n - 1}"] if n > 1 else [],
            value=5,
            effort=1,
        )
        for n, action in enumerate(actions, start=1)
    ]
    return TaskGraph(tasks=tasks)


@dataclass
class PddlPlanner:
    """LLM+P: the model writes the PDDL problem, pyperplan solves it. Same `plan` interface
    as `Decomposer`, so a planned run can use either."""

    model: Model
    domain: PddlDomain
    repairs: int = 2  # times a problem that fails to parse or solve is sent back
    max_tokens: int = 1500
    search_seconds: float = 30.0  # time the classical planner has for one problem
    history: list[list[str]] = field(default_factory=list)  # each attempt's problems
    problem: str = ""  # the PDDL problem that was solved, for the record

    async def plan(
        self,
        goal: str,
        spent: BudgetSpent,
        *,
        who: str = "an autonomous agent",
        goals: Sequence[str] = (),
        tools: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> TaskGraph:
        """A chain of the plan's actions, or PddlPlanFailed with the last problems. Every
        answer's cost is charged to `spent`."""
        prompt = render(
            "autonoma.planning",
            "pddl_problem.j2",
            who=who,
            goal=goal,
            goals=list(goals),
            domain=self.domain.name,
            domain_text=self.domain.text,
        )
        solved: list[Solution] = []

        async def problems_of(answer: ProblemAnswer) -> list[str]:
            solution = await solve_within(self.domain.text, answer.problem, self.search_seconds)
            solved.append(solution)
            return solution.problems

        try:
            answer, _ = await ask_with_repairs(
                self.model,
                prompt,
                ProblemAnswer,
                problems_of,
                spent,
                repairs=self.repairs,
                max_tokens=self.max_tokens,
                repair_template="pddl_repair.j2",
                unusable="the answer was not a PDDL problem",
                history=self.history,
            )
        except PlanInvalid as failed:
            raise PddlPlanFailed(self.domain.name, failed.problems, failed.attempts) from None
        self.problem = answer.problem
        return chain(solved[-1].actions, goal, self.domain.name)


if __name__ == "__main__":
    _main()
