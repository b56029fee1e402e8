"""The local executor: every ready job at once on asyncio, up to a concurrency limit."""

from __future__ import annotations

import asyncio
import contextlib

from autonoma.runtime.executor.base import (
    FINISHED,
    JobChange,
    JobFinal,
    JobInterrupted,
    OnChange,
    Schedule,
    Work,
)


class LocalExecutor:
    """Runs jobs as asyncio tasks in this process. A failed attempt is retried up to the job's
    `retries`; a job that fails for good skips its dependents (and theirs) and nothing else.
    Cancelling `run` cancels the running jobs, which are marked cancelled."""

    def __init__(self, concurrency: int = 4) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency

    async def run(self, schedule: Schedule, work: Work, on_change: OnChange | None = None) -> None:
        async def changed(change: JobChange) -> None:
            if on_change is not None:
                await on_change(change)

        running: dict[asyncio.Task[object], str] = {}
        try:
            while True:
                await self._skip_blocked(schedule, changed)
                if schedule.halted is None:
                    for job in schedule.ready()[: self.concurrency - len(running)]:
                        schedule.status[job.id] = "running"
                        schedule.attempts[job.id] = attempt = schedule.attempts.get(job.id, 0) + 1
                        await changed(JobChange(job.id, "running", attempt))
                        task = asyncio.create_task(work(job, schedule.inputs(job), attempt))
                        running[task] = job.id
                if not running:
                    return
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    await self._settle(schedule, running.pop(task), task, changed)
        except asyncio.CancelledError:
            for task in running:
                task.cancel()
            for task, job_id in running.items():
                with contextlib.suppress(BaseException):
                    await task
                schedule.status[job_id] = "cancelled"
                await changed(JobChange(job_id, "cancelled", schedule.attempts[job_id]))
            raise

    @staticmethod
    async def _settle(
        schedule: Schedule, job_id: str, task: asyncio.Task[object], changed: OnChange
    ) -> None:
        attempt = schedule.attempts[job_id]
        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if error is None:
            schedule.status[job_id] = "done"
            schedule.results[job_id] = task.result()
            schedule.errors.pop(job_id, None)
            await changed(JobChange(job_id, "done", attempt, result=task.result()))
            return
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if isinstance(error, JobInterrupted):
            schedule.status[job_id] = "pending"
            schedule.attempts[job_id] = attempt - 1  # the same attempt continues later
            await changed(JobChange(job_id, "pending", attempt, error=str(error), interrupted=True))
            return
        schedule.errors[job_id] = message
        if attempt <= schedule.jobs[job_id].retries and not isinstance(error, JobFinal):
            schedule.status[job_id] = "pending"  # ready again at once: its deps are done
            await changed(JobChange(job_id, "pending", attempt, error=message))
            return
        schedule.status[job_id] = "failed"
        await changed(JobChange(job_id, "failed", attempt, error=message))

    @staticmethod
    async def _skip_blocked(schedule: Schedule, changed: OnChange) -> None:
        """Failure spreads to dependents only, transitively."""
        while blocked := schedule.blocked():
            for job_id in blocked:
                job = schedule.jobs[job_id]
                cause = next(d for d in job.deps if schedule.status[d] in FINISHED - {"done"})
                schedule.status[job_id] = "skipped"
                schedule.errors[job_id] = f"skipped: {cause} {schedule.status[cause]}"
                await changed(
                    JobChange(
                        job_id,
                        "skipped",
                        schedule.attempts.get(job_id, 0),
                        error=schedule.errors[job_id],
                    )
                )
