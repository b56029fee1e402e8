"""What one persona knows of the town: the part of the place tree it has seen, grown by
perception. Its actions are chosen only among these places (the reference implementation
fell back to a random place when the model named one that does not exist)."""

from __future__ import annotations

from dataclasses import dataclass, field

from autonoma.sim.world import SEPARATOR, Tile, World


@dataclass
class SpatialMemory:
    """sector -> arena -> objects the persona has seen, in the order it saw them."""

    known: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def learn(self, sector: str, arena: str = "", thing: str = "") -> None:
        """Add a place (a sector, an arena of it, or an object of that)."""
        arenas = self.known.setdefault(sector, {})
        if arena:
            objects = arenas.setdefault(arena, [])
            if thing and thing not in objects:
                objects.append(thing)

    def learn_all(self, world: World, address: str) -> None:
        """Add a sector or an arena with everything in it (a persona's home, its workplace)."""
        parts = address.split(SEPARATOR)
        for sector, arenas in world.tree().items():
            if sector != parts[0]:
                continue
            self.learn(sector)
            for arena, objects in arenas.items():
                if len(parts) == 1 or arena == parts[1]:
                    self.learn(sector, arena)
                    for thing in objects:
                        self.learn(sector, arena, thing)

    def see(self, world: World, at: Tile, radius: int) -> list[str]:
        """Learn every place within `radius` tiles of `at` (a square, as the paper's vision);
        the addresses that were new."""
        seen: list[str] = []
        x0, y0 = at
        for y in range(max(0, y0 - radius), min(world.height, y0 + radius + 1)):
            for x in range(max(0, x0 - radius), min(world.width, x0 + radius + 1)):
                place = world.place_at((x, y))
                if not place.sector or self._has(place.sector, place.arena, place.object):
                    continue
                self.learn(place.sector, place.arena, place.object)
                seen.append(place.address)
        return seen

    def _has(self, sector: str, arena: str, thing: str) -> bool:
        arenas = self.known.get(sector)
        if arenas is None:
            return False
        if not arena:
            return True
        objects = arenas.get(arena)
        return objects is not None and (not thing or thing in objects)

    def knows(self, address: str) -> bool:
        parts = [p.strip() for p in address.split(":")]
        arenas = self.known.get(parts[0])
        if arenas is None:
            return False
        if len(parts) == 1:
            return True
        objects = arenas.get(parts[1])
        if objects is None:
            return False
        return len(parts) == 2 or parts[2] in objects

    def sectors(self) -> list[str]:
        return list(self.known)

    def arenas(self, sector: str) -> list[str]:
        return list(self.known.get(sector, {}))

    def objects(self, sector: str, arena: str) -> list[str]:
        return list(self.known.get(sector, {}).get(arena, []))

    def describe(self) -> str:
        """For a prompt: one line per known arena, `sector: arena (objects)`."""
        lines = []
        for sector, arenas in self.known.items():
            for arena, objects in arenas.items():
                things = f" ({', '.join(objects)})" if objects else ""
                lines.append(f"{sector}{SEPARATOR}{arena}{things}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, dict[str, list[str]]]:
        return {s: {a: list(o) for a, o in arenas.items()} for s, arenas in self.known.items()}

    @classmethod
    def from_json(cls, data: dict[str, dict[str, list[str]]]) -> SpatialMemory:
        return cls({s: {a: list(o) for a, o in arenas.items()} for s, arenas in data.items()})
