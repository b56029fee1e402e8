"""A persona's day as it stands: its broad plan, the schedule's blocks, the actions of
the block under way, and the action it is doing with where. Stored with the sim's state at
every step, so a resumed sim goes on with the same day."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SLEEPING = "sleeping"
PLANNED, REACTION, TALK = "planned", "reaction", "talk"


@dataclass(frozen=True)
class Block:
    """A stretch of the schedule: from `start` (minutes after midnight) for `minutes`."""

    start: int
    minutes: int
    activity: str

    @property
    def end(self) -> int:
        return self.start + self.minutes

    @property
    def asleep(self) -> bool:
        return self.activity.strip().lower().startswith(SLEEPING)


@dataclass(frozen=True)
class Action:
    """One 5-to-15-minute action of a block, and the place it happens once chosen; a
    reaction to what the persona perceived, or a conversation, is an action of its own kind."""

    start: int
    minutes: int
    description: str
    place: str = ""
    kind: str = PLANNED  # PLANNED, REACTION or TALK

    @property
    def end(self) -> int:
        return self.start + self.minutes


@dataclass
class Schedule:
    day: str = ""  # the game date the plan is for (ISO), "" before the first plan
    plan: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)  # the current block's
    block: int = -1  # the current block's index
    action: Action | None = None  # what the persona is doing, with its place

    def block_at(self, minute: int) -> int:
        """The index of the block under way at `minute` of the day (-1: none)."""
        for n, block in enumerate(self.blocks):
            if block.start <= minute < block.end:
                return n
        return -1

    def action_at(self, minute: int) -> Action | None:
        return next((a for a in self.actions if a.start <= minute < a.end), None)

    def to_json(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies every field, a third of a step's cost
        return {
            "day": self.day,
            "plan": list(self.plan),
            "blocks": [_block_json(b) for b in self.blocks],
            "actions": [_action_json(a) for a in self.actions],
            "block": self.block,
            "action": None if self.action is None else _action_json(self.action),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Schedule:
        if not data:
            return cls()
        action = data.get("action")
        return cls(
            data["day"],
            list(data["plan"]),
            [Block(**b) for b in data["blocks"]],
            [Action(**a) for a in data["actions"]],
            data["block"],
            Action(**action) if action else None,
        )


def _block_json(block: Block) -> dict[str, Any]:
    return {"start": block.start, "minutes": block.minutes, "activity": block.activity}


def _action_json(action: Action) -> dict[str, Any]:
    return {
        "start": action.start,
        "minutes": action.minutes,
        "description": action.description,
        "place": action.place,
        "kind": action.kind,
    }
