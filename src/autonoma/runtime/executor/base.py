"""What every executor shares: jobs with dependencies, and the schedule they move through.

An executor knows nothing of what a job does. It is handed a `Schedule` (jobs, their
dependencies and priorities, what is already done) and a `Work` function, and it runs every
job whose dependencies are done, highest priority first, up to its concurrency. The planning
layer above gives jobs their meaning and may change the schedule while it runs: add jobs,
drop pending ones, re-prioritise, or halt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

JobStatus = Literal["pending", "running", "done", "failed", "skipped", "cancelled"]
FINISHED: frozenset[JobStatus] = frozenset({"done", "failed", "skipped", "cancelled"})


@dataclass(frozen=True)
class Job:
    id: str
    deps: tuple[str, ...] = ()
    priority: float = 1.0  # higher runs first among ready jobs
    retries: int = 0  # further attempts after a failure


@dataclass(frozen=True)
class JobChange:
    """One state change of one job, handed to the executor's listener before it goes on."""

    job: str
    status: JobStatus
    attempt: int
    result: Any = None
    error: str = ""
    interrupted: bool = False  # back to pending to continue the same attempt later


class JobInterrupted(Exception):
    """Raised by work whose attempt was cut off (the run's budget ran out): the job goes back
    to pending with the same attempt, to continue when the run does."""


class JobFinal(Exception):
    """Raised by work whose attempt showed that trying the job again is pointless (its task
    needs a new plan): the job fails at once, whatever retries it has left."""


Work = Callable[[Job, Mapping[str, Any], int], Coroutine[Any, Any, Any]]
"""Runs one attempt of a job given its dependencies' results (by job id) and the attempt
number (1 first); returns the job's result or raises to fail the attempt."""

OnChange = Callable[[JobChange], Awaitable[None]]


class Executor(Protocol):
    async def run(self, schedule: Schedule, work: Work, on_change: OnChange | None = None) -> None:
        """Run the schedule until no job can start and none is running, or it is halted."""
        ...


@dataclass
class Schedule:
    """The jobs of one run and where each stands. Mutated by the executor as jobs move, and
    by the layer above between changes (it is only touched from the event loop's thread)."""

    jobs: dict[str, Job] = field(default_factory=dict)
    status: dict[str, JobStatus] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    halted: str | None = None  # why no further job may start

    @classmethod
    def of(cls, jobs: Iterable[Job], done: Mapping[str, Any] | None = None) -> Schedule:
        """A schedule of `jobs`; those in `done` (id to result) are finished already."""
        schedule = cls()
        for job in jobs:
            schedule.add(job, check=False)
        for job_id, result in (done or {}).items():
            if job_id in schedule.jobs:
                schedule.status[job_id] = "done"
                schedule.results[job_id] = result
        schedule.check()
        return schedule

    def add(self, job: Job, *, check: bool = True) -> None:
        """A new pending job. Its dependencies must be in the schedule."""
        if job.id in self.jobs:
            raise ValueError(f"job {job.id!r} is already in the schedule")
        self.jobs[job.id] = job
        self.status[job.id] = "pending"
        self.attempts.setdefault(job.id, 0)
        if check:
            self.check()

    def replace(self, job: Job) -> None:
        """New dependencies or priority for a job that has not started."""
        if self.status.get(job.id) != "pending":
            raise ValueError(f"job {job.id!r} is not pending, so it cannot be changed")
        self.jobs[job.id] = job
        self.check()

    def revise(self, jobs: Iterable[Job]) -> None:
        """A revised plan for what has not run: done and running jobs stay as they are; every
        other job not in `jobs` is removed; those in `jobs` are added, or replaced and made
        pending again with their attempts back to 0 (a revised task is a new task)."""
        revised = {job.id: job for job in jobs}
        for job_id in [j for j in self.jobs if j not in revised]:
            if self.status[job_id] not in ("done", "running"):
                del self.jobs[job_id], self.status[job_id]
                self.errors.pop(job_id, None)
        for job in revised.values():
            if self.status.get(job.id) in ("done", "running"):
                continue
            self.jobs[job.id] = job
            self.status[job.id] = "pending"
            self.attempts[job.id] = 0
            self.errors.pop(job.id, None)
        self.check()

    def drop(self, job_id: str) -> None:
        """Remove a job that has not started (no remaining job may depend on it)."""
        if self.status.get(job_id) != "pending":
            raise ValueError(f"job {job_id!r} is not pending, so it cannot be dropped")
        needed = [j.id for j in self.jobs.values() if job_id in j.deps]
        if needed:
            raise ValueError(f"job {job_id!r} cannot be dropped: {', '.join(needed)} depend on it")
        del self.jobs[job_id], self.status[job_id]

    def halt(self, reason: str) -> None:
        self.halted = reason

    def check(self) -> None:
        for job in self.jobs.values():
            unknown = [d for d in job.deps if d not in self.jobs]
            if unknown:
                raise ValueError(f"job {job.id!r} depends on unknown job(s) {unknown}")

    def ready(self) -> list[Job]:
        """Pending jobs whose dependencies are all done, highest priority first (ties in the
        order the jobs were added)."""
        ready = [
            job
            for job in self.jobs.values()
            if self.status[job.id] == "pending" and all(self.status[d] == "done" for d in job.deps)
        ]
        return sorted(ready, key=lambda job: -job.priority)

    def blocked(self) -> list[str]:
        """Pending jobs that can never run: a dependency failed, was skipped or cancelled."""
        return [
            job.id
            for job in self.jobs.values()
            if self.status[job.id] == "pending"
            and any(self.status[d] in ("failed", "skipped", "cancelled") for d in job.deps)
        ]

    def inputs(self, job: Job) -> dict[str, Any]:
        return {d: self.results.get(d) for d in job.deps}

    def count(self, status: JobStatus) -> int:
        return sum(1 for s in self.status.values() if s == status)

    @property
    def complete(self) -> bool:
        return all(s == "done" for s in self.status.values())
