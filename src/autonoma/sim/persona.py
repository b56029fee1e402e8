"""Personas as their files describe them (docs/sim.md): who they are, where they live, the
places they know from the start, and their seed memories, a paragraph split at semicolons
as in the paper."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from autonoma.sim.schedule import Schedule
from autonoma.sim.spatial import SpatialMemory
from autonoma.sim.world import Tile, World, WorldFileError, spec_from_file

SUFFIXES = (".yaml", ".yml", ".json")


def _words(text: str) -> str:
    said = " ".join(text.split())
    if not said:
        raise ValueError("is empty")
    return said


Words = Annotated[str, Field(max_length=2000), AfterValidator(_words)]


class PersonaSpec(BaseModel):
    """What a persona file holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(max_length=60), AfterValidator(_words)]
    age: int = Field(ge=1, le=120)
    innate: Words  # traits: "friendly, outgoing, hospitable"
    learned: Words  # background
    currently: Words  # what the persona is up to these days
    lifestyle: Words  # when they sleep, wake and eat
    home: str  # the arena where the persona sleeps: "Lin family house: main bedroom"
    knows: list[str] = []  # sectors or arenas known from the start besides home
    memories: Annotated[str, Field(max_length=8000), AfterValidator(_words)]

    def seed_memories(self) -> list[str]:
        """The memories paragraph split at semicolons, each a memory of its own."""
        return [part.strip() for part in self.memories.split(";") if part.strip()]

    def identity(self) -> str:
        """The paper's identity stable set: who the persona is, for every prompt about it."""
        return (
            f"Name: {self.name}\nAge: {self.age}\nInnate traits: {self.innate}\n"
            f"Learned traits: {self.learned}\nCurrently: {self.currently}\n"
            f"Lifestyle: {self.lifestyle}"
        )


@dataclass
class Talk:
    """Whom the persona is talking with and what the two have said (while they talk), and
    when it last finished a conversation with each other persona (game time, ISO): the
    cool-down that keeps a pair from talking again at once."""

    partner: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)  # (speaker, utterance)
    last: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "partner": self.partner,
            "lines": [list(line) for line in self.lines],
            "last": dict(self.last),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Talk:
        if not data:
            return cls()
        lines = [(str(who), str(said)) for who, said in data["lines"]]
        return cls(data["partner"], lines, dict(data["last"]))


@dataclass
class Persona:
    """A persona placed in a world: its spec, where it stands, what it knows of the town,
    what it is doing."""

    spec: PersonaSpec
    home: str  # the home arena's address as the world writes it
    tile: Tile
    spatial: SpatialMemory = field(default_factory=SpatialMemory)
    action: str = "idle"  # what it is doing, in words: "brewing coffee"
    schedule: Schedule = field(default_factory=Schedule)  # its day as planned so far
    talk: Talk = field(default_factory=Talk)

    @property
    def name(self) -> str:
        return self.spec.name


def load_personas(directory: Path | str, world: World) -> list[Persona]:
    """Every persona file in `directory` (sorted by name), placed in `world` at a free tile
    of its home; WorldFileError in one line naming the file and the bad entry."""
    folder = Path(directory)
    if not folder.is_dir():
        raise WorldFileError(f"no folder of persona files at {folder}")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES)
    if not files:
        raise WorldFileError(f"{folder} holds no persona file (.yaml, .yml or .json)")
    specs = [spec_from_file(PersonaSpec, path, "persona") for path in files]
    return place(world, specs, [str(path) for path in files])


def shipped_personas(town: str, world: World) -> list[Persona]:
    """The personas that come with a shipped town."""
    folder = resources.files("autonoma.sim").joinpath("personas", town)
    return load_personas(Path(str(folder)), world)


def place(world: World, specs: list[PersonaSpec], sources: list[str]) -> list[Persona]:
    """Personas at the first free tiles of their homes, knowing their homes' sectors and
    the places their files name."""
    personas: list[Persona] = []
    taken: set[Tile] = set()
    seen: dict[str, str] = {}
    for spec, source in zip(specs, sources, strict=True):
        if spec.name.lower() in seen:
            raise WorldFileError(
                f"{source}: {spec.name} is also the name in {seen[spec.name.lower()]}"
            )
        seen[spec.name.lower()] = source
        try:
            home = world.resolve(spec.home)
            if home.count(": ") != 1:
                raise WorldFileError(f"home '{home}' is not an arena (sector: arena)")
            free = [t for t in world.tiles_of(home) if t not in taken]
            if not free:
                raise WorldFileError(f"home '{home}' has no free tile left for {spec.name}")
            spatial = SpatialMemory()
            for address in (home.split(": ")[0], *spec.knows):
                spatial.learn_all(world, world.resolve(address))
        except WorldFileError as error:
            raise WorldFileError(f"{source}: {error}") from None
        taken.add(free[0])
        personas.append(Persona(spec, home, free[0], spatial))
    return personas
