"""The game clock: step n is `start` plus n times `step_seconds` of game time (10 seconds a
step by default, as in the paper), and game times as people write them ("day 2 08:00")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from autonoma.errors import ConfigError

DEFAULT_START = datetime(2023, 2, 13, 7, 0)  # the paper's first morning, a Monday
_DAY = re.compile(r"^day\s+(\d+)(?:\s+(\d{1,2}):(\d{2}))?$", re.IGNORECASE)


@dataclass(frozen=True)
class GameClock:
    start: datetime = DEFAULT_START
    step_seconds: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.step_seconds <= 3600:
            raise ConfigError("a step is 1 to 3600 game seconds")

    def at(self, step: int) -> datetime:
        return self.start + timedelta(seconds=step * self.step_seconds)

    def step_of(self, when: datetime) -> int:
        """The first step at or after the game time `when`."""
        seconds = (when - self.start).total_seconds()
        return max(0, -(-int(seconds) // self.step_seconds))

    def day(self, step: int) -> int:
        """The game day of a step, counted from 1 on the start's date."""
        return (self.at(step).date() - self.start.date()).days + 1

    def describe(self, step: int) -> str:
        """`day 1, Monday February 13, 07:00`."""
        when = self.at(step)
        return f"day {self.day(step)}, {when:%A %B} {when.day}, {when:%H:%M}"

    def parse(self, text: str) -> datetime:
        """A game time: `day N HH:MM` (day 1 is the start's date), or `YYYY-MM-DD HH:MM`."""
        said = " ".join(text.split())
        found = _DAY.match(said)
        if found:
            day, hour, minute = int(found[1]), int(found[2] or 0), int(found[3] or 0)
            if day < 1 or hour > 23 or minute > 59:
                raise ConfigError(f"{text!r} is not a game time: days count from 1, HH:MM")
            midnight = datetime.combine(self.start.date(), datetime.min.time())
            return midnight + timedelta(days=day - 1, hours=hour, minutes=minute)
        try:
            return datetime.fromisoformat(said)
        except ValueError:
            raise ConfigError(
                f"{text!r} is not a game time: write 'day 2 08:00' or '2023-02-14 08:00'"
            ) from None
