"""The town's world: a tile map with walls and a tree of places (world, sector, arena,
object), read from a world file (YAML or JSON, docs/sim.md). A place is named by its
address, the paper's "Lin family house: kitchen: stove"; objects have states in words."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeVar

import networkx as nx
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from autonoma.errors import ConfigError
from autonoma.runtime.inputs import InputFileError, read_input

Spec = TypeVar("Spec", bound=BaseModel)
Tile = tuple[int, int]  # (x, y): x to the right, y down, from (0, 0) at the top left
SEPARATOR = ": "
SHIPPED = ("small_town", "the_ville")


def _plain_name(name: str) -> str:
    name = " ".join(name.split())
    if not name or ":" in name:
        raise ValueError("a name is a few words without ':' (which joins the parts of an address)")
    return name


Name = Annotated[str, Field(max_length=60), AfterValidator(_plain_name)]


class WorldFileError(ConfigError):
    """A world file that cannot be read, or that describes an impossible town."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Area(_Spec):
    """A rectangle of tiles: `[x, y, width, height]` in the file."""

    x: int = Field(ge=0)
    y: int = Field(ge=0)
    width: int = Field(ge=1)
    height: int = Field(ge=1)

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            if len(value) != 4:
                raise ValueError("an area is [x, y, width, height]")
            return dict(zip(("x", "y", "width", "height"), value, strict=True))
        return value

    def tiles(self) -> list[Tile]:
        return [
            (x, y)
            for y in range(self.y, self.y + self.height)
            for x in range(self.x, self.x + self.width)
        ]

    def holds(self, tile: Tile) -> bool:
        x, y = tile
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height

    def within(self, other: Area) -> bool:
        return (
            other.x <= self.x
            and other.y <= self.y
            and self.x + self.width <= other.x + other.width
            and self.y + self.height <= other.y + other.height
        )

    def overlaps(self, other: Area) -> bool:
        return not (
            self.x + self.width <= other.x
            or other.x + other.width <= self.x
            or self.y + self.height <= other.y
            or other.y + other.height <= self.y
        )

    def border(self) -> set[Tile]:
        return {
            (x, y)
            for x, y in self.tiles()
            if x in (self.x, self.x + self.width - 1) or y in (self.y, self.y + self.height - 1)
        }

    def __str__(self) -> str:
        return f"[{self.x}, {self.y}, {self.width}, {self.height}]"


class ObjectSpec(_Spec):
    name: Name
    at: Tile
    state: str = Field("idle", min_length=1, max_length=80)


class ArenaSpec(_Spec):
    name: Name
    area: Area
    objects: list[ObjectSpec] = []


class SectorSpec(_Spec):
    name: Name
    area: Area
    # a walled sector (a house) is entered only through its doors, tiles on its border
    walls: bool = True
    doors: list[Tile] = []
    arenas: list[ArenaSpec] = Field(min_length=1)


class WorldSpec(_Spec):
    """What a world file holds (docs/sim.md)."""

    name: Name
    size: tuple[int, int]  # width, height in tiles
    blocked: list[Area] = []  # walls, water, anything no one walks on
    sectors: list[SectorSpec] = Field(min_length=1)

    @field_validator("size")
    @classmethod
    def _size(cls, size: tuple[int, int]) -> tuple[int, int]:
        if not (2 <= size[0] <= 1000 and 2 <= size[1] <= 1000):
            raise ValueError("size is [width, height], each 2 to 1000 tiles")
        return size

    @model_validator(mode="after")
    def _fits(self) -> WorldSpec:
        whole = Area(x=0, y=0, width=self.size[0], height=self.size[1])
        _unique("sector", [s.name for s in self.sectors], self.name)
        for n, sector in enumerate(self.sectors):
            where = f"sector '{sector.name}'"
            if not sector.area.within(whole):
                raise ValueError(f"{where} {sector.area} is not inside the map {list(self.size)}")
            for other in self.sectors[:n]:
                if sector.area.overlaps(other.area):
                    raise ValueError(f"{where} overlaps sector '{other.name}'")
            _fits_sector(sector)
        return self


def _unique(kind: str, names: list[str], parent: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise ValueError(f"two {kind}s of '{parent}' are named '{name}'")
        seen.add(name.lower())


def _fits_sector(sector: SectorSpec) -> None:
    where = f"sector '{sector.name}'"
    inside = sector.area
    if sector.walls:
        if sector.area.width < 3 or sector.area.height < 3:
            raise ValueError(f"{where} has walls, so it needs at least 3 x 3 tiles")
        inside = Area(
            x=inside.x + 1, y=inside.y + 1, width=inside.width - 2, height=inside.height - 2
        )
        if not sector.doors:
            raise ValueError(f"{where} has walls and no door: add doors: [[x, y]] on its edge")
    border = sector.area.border()
    for door in sector.doors:
        if door not in border:
            raise ValueError(f"{where}'s door {list(door)} is not on its edge {sector.area}")
    _unique("arena", [a.name for a in sector.arenas], sector.name)
    for n, arena in enumerate(sector.arenas):
        place = f"{sector.name}{SEPARATOR}{arena.name}"
        if not arena.area.within(inside):
            said = "inside its walls" if sector.walls else "inside it"
            raise ValueError(f"arena '{place}' {arena.area} is not {said} ({inside})")
        for other in sector.arenas[:n]:
            if arena.area.overlaps(other.area):
                raise ValueError(f"arena '{place}' overlaps arena '{other.name}'")
        _unique("object", [o.name for o in arena.objects], place)
        for thing in arena.objects:
            if not arena.area.holds(thing.at):
                raise ValueError(
                    f"object '{place}{SEPARATOR}{thing.name}' at {list(thing.at)} is not "
                    f"inside its arena {arena.area}"
                )


@dataclass(frozen=True)
class Place:
    """Where a tile is: its sector, arena and object ("" where there is none)."""

    sector: str = ""
    arena: str = ""
    object: str = ""

    @property
    def address(self) -> str:
        return SEPARATOR.join(part for part in (self.sector, self.arena, self.object) if part)


class World:
    """A world file's town, with the state of each object and the walkable tile graph."""

    def __init__(self, spec: WorldSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.width, self.height = spec.size
        self.blocked: set[Tile] = {t for area in spec.blocked for t in area.tiles()}
        self._place: dict[Tile, Place] = {}
        self._tiles: dict[str, list[Tile]] = {}  # an address (lower case) to its tiles
        self._names: dict[str, str] = {}  # an address in lower case to as it is written
        self.states: dict[str, str] = {}  # an object's address to its state
        self._object_tiles: dict[str, Tile | None] = {}  # found once each
        for sector in spec.sectors:
            if sector.walls:
                self.blocked |= sector.area.border() - set(sector.doors)
            self._name(Place(sector.name), sector.area.tiles())
            for arena in sector.arenas:
                self._name(Place(sector.name, arena.name), arena.area.tiles())
                for thing in arena.objects:
                    place = Place(sector.name, arena.name, thing.name)
                    self._name(place, [thing.at])
                    self.states[place.address] = thing.state
        for sector in spec.sectors:
            for tile in sector.area.tiles():
                if tile not in self.blocked:
                    self._place.setdefault(tile, Place(sector.name))
            for arena in sector.arenas:
                for tile in arena.area.tiles():
                    self._place[tile] = Place(sector.name, arena.name)
                for thing in arena.objects:
                    self._place[thing.at] = Place(sector.name, arena.name, thing.name)
        for address, tiles in self._tiles.items():
            if all(t in self.blocked for t in tiles):
                raise WorldFileError(f"{self._names[address]} stands only on blocked tiles")
        self.graph: nx.Graph = nx.grid_2d_graph(self.width, self.height)
        self.graph.remove_nodes_from(self.blocked)
        self._connected()

    def _name(self, place: Place, tiles: list[Tile]) -> None:
        self._tiles[place.address.lower()] = tiles
        self._names[place.address.lower()] = place.address

    def _connected(self) -> None:
        """Every arena reachable from every other: a town whose kitchen has no way in is a
        mistake in its file, better said now than as a persona that never arrives."""
        arenas = [
            (
                f"{s.name}{SEPARATOR}{a.name}",
                next(t for t in a.area.tiles() if t not in self.blocked),
            )
            for s in self.spec.sectors
            for a in s.arenas
            if any(t not in self.blocked for t in a.area.tiles())
        ]
        if not arenas:
            return
        reached = nx.node_connected_component(self.graph, arenas[0][1])
        for address, tile in arenas[1:]:
            if tile not in reached:
                raise WorldFileError(
                    f"arena '{address}' cannot be reached from '{arenas[0][0]}': "
                    "add a door or clear the way"
                )

    def place_at(self, tile: Tile) -> Place:
        """The sector, arena and object at `tile` (empty parts outside them)."""
        return self._place.get(tile, Place())

    def walkable(self, tile: Tile) -> bool:
        return tile in self.graph

    def resolve(self, address: str) -> str:
        """`address` as the world writes it (case and spacing forgiven), or WorldFileError
        naming the nearest places."""
        parts = [part.strip() for part in address.split(":")]
        key = SEPARATOR.join(parts).lower()
        if key in self._names:
            return self._names[key]
        near = difflib.get_close_matches(key, list(self._names), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(self._names[n]) for n in near)}?" if near else ""
        raise WorldFileError(f"no place '{address}' in {self.name}{hint}")

    def tiles_of(self, address: str) -> list[Tile]:
        """The walkable tiles of a sector, arena or object."""
        return [t for t in self._tiles[self.resolve(address).lower()] if t not in self.blocked]

    def object_tile(self, address: str) -> Tile | None:
        """Where an object (by its address as the world writes it) stands, if walkable."""
        if address not in self._object_tiles:
            tiles = self.tiles_of(address)
            self._object_tiles[address] = tiles[0] if tiles else None
        return self._object_tiles[address]

    def set_state(self, address: str, state: str) -> str:
        """Give an object a new state in words ("stove: burning"); its address back."""
        found = self.resolve(address)
        if found not in self.states:
            raise WorldFileError(f"'{found}' is not an object, so it has no state")
        said = " ".join(state.split())
        if not said:
            raise WorldFileError("a state is a few words, such as 'burning'")
        self.states[found] = said[:80]
        return found

    def tree(self) -> dict[str, dict[str, list[str]]]:
        """sector -> arena -> objects, in the file's order."""
        return {
            s.name: {a.name: [o.name for o in a.objects] for a in s.arenas}
            for s in self.spec.sectors
        }

    def render(self, personas: dict[str, Tile] | None = None) -> str:
        """The map in characters: `#` blocked, `.` free, `o` an object, a persona's initial
        where one stands (for a terminal, a test or a log)."""
        at = {tile: name[:1].upper() for name, tile in (personas or {}).items()}
        rows = []
        for y in range(self.height):
            row = []
            for x in range(self.width):
                tile = (x, y)
                if tile in at:
                    row.append(at[tile])
                elif tile in self.blocked:
                    row.append("#")
                elif self.place_at(tile).object:
                    row.append("o")
                else:
                    row.append(".")
            rows.append("".join(row))
        return "\n".join(rows)


def load_world(path: Path | str) -> World:
    """A world from a YAML (.yaml, .yml) or JSON file; WorldFileError in one line naming
    the file and the bad entry."""
    path = Path(path)
    return _world(spec_from_file(WorldSpec, path, "world"), str(path))


def shipped_world(name: str) -> World:
    """One of the towns that come with autonoma (SHIPPED), by name."""
    if name not in SHIPPED:
        raise WorldFileError(f"no shipped world '{name}': there are {', '.join(SHIPPED)}")
    text = resources.files("autonoma.sim").joinpath("worlds", f"{name}.yaml").read_text()
    source = f"the shipped world {name}"
    return _world(spec_from_text(WorldSpec, text, True, source, "world"), source)


def _world(spec: WorldSpec, source: str) -> World:
    try:
        return World(spec)
    except WorldFileError as error:
        raise WorldFileError(f"{source}: {error}") from None


def spec_from_file(model: type[Spec], path: Path, what: str) -> Spec:
    """A world's or a persona's file (YAML by its suffix, else JSON) as `model`."""
    try:
        text = read_input(path, f"the {what} file")
    except InputFileError as error:
        raise WorldFileError(str(error)) from None
    return spec_from_text(model, text, path.suffix.lower() in (".yaml", ".yml"), str(path), what)


def spec_from_text(model: type[Spec], text: str, is_yaml: bool, source: str, what: str) -> Spec:
    """`text` as `model`, or WorldFileError in one line naming `source` and the entry."""
    try:
        # libyaml's loader when PyYAML has it: the Ville took 0.2 s with the Python one
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(text, Loader=loader) if is_yaml else json.loads(text)
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        said = " ".join(str(error).split())
        raise WorldFileError(f"cannot read {source}: {said}"[:300]) from None
    if not isinstance(data, dict):
        needed = [name for name, info in model.model_fields.items() if info.is_required()]
        listed = ", ".join(needed[:-1]) + f" and {needed[-1]}" if len(needed) > 1 else needed[0]
        raise WorldFileError(f"{source} must hold a table with {listed}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise WorldFileError(f"{source}: {first_problem(error, data, what)}") from None


def first_problem(error: ValidationError, data: dict[str, Any], what: str) -> str:
    """The first problem, at the entry a person would look for: `sector 'Cafe' > arena
    'kitchen' > object 'stove' > at` rather than `sectors.2.arenas.0.objects.1.at`."""
    problem = error.errors()[0]
    trail: list[str] = []
    node: Any = data
    loc = list(problem["loc"])
    for n, key in enumerate(loc):
        if isinstance(key, int) and isinstance(node, list) and key < len(node):
            node = node[key]
            kind = str(loc[n - 1]).rstrip("s") if n else "entry"
            named = node.get("name") if isinstance(node, dict) else None
            trail[-1:] = [f"{kind} '{named}'" if named else f"{kind} {key + 1}"]
        elif isinstance(node, dict) and isinstance(key, str):
            node = node.get(key)
            trail.append(key)
        else:
            trail.append(str(key))
    message = str(problem["msg"]).removeprefix("Value error, ")
    if problem["type"] == "extra_forbidden":
        message = f"is not a {what} file key (docs/sim.md lists them)"
    elif problem["type"] == "missing":
        message = "is missing"
    return f"{' > '.join(trail)} {message}" if trail else message
