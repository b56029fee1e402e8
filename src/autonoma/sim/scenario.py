"""Scenarios, as the paper seeds its town: statements whispered to personas as the sim
begins (Isabella plans a Valentine's Day party, Sam runs for mayor), the facts to ask every
persona about later (does it know of the party, of the candidacy), and an event with a time
and a place (the party at Hobbs Cafe). From a stored sim, `measure` gives the paper's
figures: how far each fact spread (the share of personas whose interview answer shows they
know it, at the start and now), how dense the town's web of acquaintance grew, and who came
to the event."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from autonoma.errors import AutonomaError
from autonoma.sim.clock import GameClock
from autonoma.sim.persona import Persona
from autonoma.sim.world import World, WorldFileError, spec_from_file

SHIPPED_SCENARIOS = ("valentine",)

Text = Annotated[str, Field(min_length=1, max_length=1000)]


class Whisper(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    persona: Text
    statement: Text


class Fact(BaseModel):
    """A fact whose spread is measured: the question every persona is asked, and the words
    (all of them, case aside) an answer that knows it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(min_length=1, max_length=60)]
    question: Text
    knows: list[Annotated[str, Field(min_length=1, max_length=60)]] = Field(min_length=1)


class Event(BaseModel):
    """A seeded event: where (a sector or arena) and from when to when (game times as `sim
    run --until` reads them: "day 2 17:00")."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(min_length=1, max_length=60)]
    place: Text
    starts: Text
    ends: Text


class ScenarioSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Text
    world: str = ""  # the shipped town it is written for, if any
    whispers: list[Whisper] = []
    facts: list[Fact] = []
    events: list[Event] = []


def load_scenario(given: str) -> ScenarioSpec:
    """A shipped scenario by name, or a scenario file (YAML or JSON)."""
    if given in SHIPPED_SCENARIOS:
        folder = resources.files("autonoma.sim").joinpath("scenarios")
        return spec_from_file(ScenarioSpec, Path(str(folder.joinpath(f"{given}.yaml"))), "scenario")
    path = Path(given)
    if not path.exists():
        names = ", ".join(SHIPPED_SCENARIOS)
        raise WorldFileError(f"no scenario {given!r}: name one of {names} or a file")
    return spec_from_file(ScenarioSpec, path, "scenario")


def check_scenario(
    scenario: ScenarioSpec, world: World, personas: Sequence[Persona], clock: GameClock
) -> None:
    """WorldFileError naming the first entry that does not fit the sim."""
    names = {p.name.lower() for p in personas}
    for whisper in scenario.whispers:
        if " ".join(whisper.persona.split()).lower() not in names:
            raise WorldFileError(
                f"scenario {scenario.name!r}: no persona {whisper.persona!r} in this town"
            )
    for event in scenario.events:
        try:
            world.resolve(event.place)
            starts, ends = clock.parse(event.starts), clock.parse(event.ends)
        except AutonomaError as error:  # a place not on the map, a time the clock cannot read
            said = f"scenario {scenario.name!r}: event {event.name!r}: {error}"
            raise WorldFileError(said) from None
        if ends <= starts:
            raise WorldFileError(f"scenario {scenario.name!r}: event {event.name!r} ends first")


@dataclass(frozen=True)
class Spread:
    fact: str
    knew_at_start: list[str]
    knows_now: list[str]
    asked: int


def density(knows: dict[str, set[str]]) -> float:
    """The paper's network density, 2|E| / (|V| (|V| - 1)), an edge between two personas who
    each know the other."""
    graph = nx.Graph()
    graph.add_nodes_from(knows)
    graph.add_edges_from(
        (a, b) for a, known in knows.items() for b in known if a < b and a in knows.get(b, ())
    )
    return float(nx.density(graph))


def acquaintances(texts: Sequence[str], personas: Sequence[Persona], who: Persona) -> set[str]:
    """The other personas named in `who`'s memories."""
    return {p.name for p in personas if p is not who and any(p.name in t for t in texts)}


def spread_json(spread: Spread, total: int) -> dict[str, Any]:
    return {
        "fact": spread.fact,
        "asked": spread.asked,
        "knew_at_start": spread.knew_at_start,
        "knows_now": spread.knows_now,
        "share_at_start": round(len(spread.knew_at_start) / total, 3),
        "share_now": round(len(spread.knows_now) / total, 3),
    }
