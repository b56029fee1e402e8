"""Executors run a schedule of jobs with dependencies: locally on asyncio, or on Ray."""

from autonoma.runtime.executor.base import (
    Executor,
    Job,
    JobChange,
    JobFinal,
    JobInterrupted,
    JobStatus,
    OnChange,
    Schedule,
    Work,
)
from autonoma.runtime.executor.local import LocalExecutor

__all__ = [
    "Executor",
    "Job",
    "JobChange",
    "JobFinal",
    "JobInterrupted",
    "JobStatus",
    "LocalExecutor",
    "OnChange",
    "Schedule",
    "Work",
]
