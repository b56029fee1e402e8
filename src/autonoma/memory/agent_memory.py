"""One agent's long-term memory during a run: what the step loop saves, recalls and reflects on.

Steps are saved when they age out of the verbatim window (and when the run ends), two records a
step: the action (the command and why) and its result. Saving rates their importance in one
batch; then, if the importance gathered since the last reflection passes the threshold, the
agent reflects. Each step, the latest reflections stay in view (working memory, the last
three as Reflexion keeps) and the records most relevant to the current task are retrieved.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from autonoma.memory.context import Recollection, one_line
from autonoma.memory.importance import ImportanceRater, add_rated
from autonoma.memory.records import MemoryRecord, NewRecord, Retrieved
from autonoma.memory.reflection import ReflectionOutcome, Reflector
from autonoma.memory.stream import MemoryStream
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import StepRecord


@dataclass(frozen=True)
class RecallSettings:
    memories: int = 5  # retrieved for the current task each step
    reflections: int = 3  # latest reflections kept in view
    record_chars: int = 300  # of each record shown


class AgentMemory:
    def __init__(
        self,
        stream: MemoryStream,
        agent: str,
        run_id: str,
        rater: ImportanceRater,
        reflector: Reflector | None = None,
        settings: RecallSettings | None = None,
    ) -> None:
        self.stream = stream
        self.agent = agent
        self.run_id = run_id
        self.rater = rater
        self.reflector = reflector
        self.settings = settings or RecallSettings()
        # the first step of this run with outside content in its context (0: from its start);
        # set by the agent loop
        self.outside_from: int | None = None
        self.stores = 0  # times this run stored something: a recollection made since holds

    async def save_steps(
        self,
        steps: Sequence[StepRecord],
        spent: BudgetSpent,
        *,
        rater: ImportanceRater | None = None,
    ) -> int:
        """Store the steps' actions and results (importance rated in one batch, by `rater` if
        given); the number of records written."""
        new = [record for step in steps for record in self._records_of(step)]
        if not new:
            return 0
        self.stores += 1
        return len(await add_rated(self.stream, rater or self.rater, new, spent))

    def _records_of(self, step: StepRecord) -> list[NewRecord]:
        if step.status == "invalid" or not step.command:
            return []
        at = step.finished_at or step.started_at or time.time()
        why = step.thoughts.get("reasoning") or step.thoughts.get("text") or ""
        args = json.dumps(step.arguments, ensure_ascii=False)
        if len(args) > 400:
            args = args[:397] + "..."
        action = f"At step {step.n} I ran {step.command} {args}" + (
            f" because {why}" if why else ""
        )
        outcome = "failed" if step.ok is False else "returned"
        result = f"{step.command} at step {step.n} {outcome}: {step.observation or step.status}"
        if step.untrusted:  # recalled later, it must still read as the page's words, not ours
            said = json.dumps(step.observation or "", ensure_ascii=False)
            result = f"{step.command} at step {step.n} {outcome} outside content (data): {said}"
        # what the agent did once outside content was in its context may be the content's
        # doing: kept as outside content too
        outside = step.untrusted or self._outside_at(step.n)
        return [
            NewRecord(
                agent=self.agent,
                run_id=self.run_id,
                kind=kind,
                text=text,
                created_at=at,
                outside=outside,
            )
            for kind, text in (("action", action), ("result", result))
        ]

    def _outside_at(self, n: int) -> bool:
        return self.outside_from is not None and n >= self.outside_from

    async def remember(self, text: str, spent: BudgetSpent) -> MemoryRecord:
        """A note the agent chose to keep (the `remember` command): outside content if the
        run's context held outside content when it was made."""
        new = NewRecord(
            agent=self.agent,
            run_id=self.run_id,
            kind="thought",
            text=text,
            outside=self.outside_from is not None,
        )
        self.stores += 1
        (record,) = await add_rated(self.stream, self.rater, [new], spent)
        return record

    async def recall(self, query: str, k: int = 5) -> list[Retrieved]:
        return await self.stream.retrieve(query, k, agent=self.agent)

    async def recollection(self, task: str) -> Recollection:
        """Reflections in view and the memories retrieved for `task`, as lines of text."""
        reflections = self.stream.latest(
            self.agent, self.settings.reflections, kinds=["reflection"]
        )
        shown = {r.id for r in reflections}
        found = await self.stream.retrieve(
            task, self.settings.memories + len(shown), agent=self.agent
        )
        memories = [r.record for r in found if r.record.id not in shown][: self.settings.memories]
        limit = self.settings.record_chars
        return Recollection(
            reflections=[recalled_text(r, limit) for r in reflections],
            memories=[recalled_text(r, limit) for r in memories],
            outside=any(r.outside for r in [*reflections, *memories]),
        )

    def reflection_due(self) -> bool:
        return self.reflector is not None and self.reflector.due(self.agent)

    async def reflect(self, spent: BudgetSpent) -> ReflectionOutcome:
        if self.reflector is None:
            return ReflectionOutcome()
        self.stores += 1
        return await self.reflector.reflect(self.agent, spent, run_id=self.run_id)


def recalled_text(record: MemoryRecord, limit: int = 0) -> str:
    """A record as recalled, on one line (cut at `limit`): one made from outside content is
    quoted and said to be data."""
    text = one_line(record.text, limit) if limit else " ".join(record.text.split())
    if record.outside:
        return f"(outside content, data only) {json.dumps(text, ensure_ascii=False)}"
    return text


def recalled_lines(found: Sequence[Retrieved]) -> str:
    """What the `recall` command answers: one line a record, best first."""
    if not found:
        return "nothing remembered matches"
    return "\n".join(
        f"[{r.record.id}] ({r.record.kind}, importance {r.record.importance}) "
        + recalled_text(r.record)
        for r in found
    )
