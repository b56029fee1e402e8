"""The generative-agents town: its world (a tile map and a tree of places), paths on it, and
what each persona knows of it. Personas, their cognition, the clock and the viewer build on
these (docs/sim.md)."""

from autonoma.sim.paths import next_step, path_between
from autonoma.sim.persona import Persona, PersonaSpec, load_personas, shipped_personas
from autonoma.sim.spatial import SpatialMemory
from autonoma.sim.world import Place, World, WorldFileError, load_world, shipped_world

__all__ = [
    "Persona",
    "PersonaSpec",
    "Place",
    "SpatialMemory",
    "World",
    "WorldFileError",
    "load_personas",
    "load_world",
    "next_step",
    "path_between",
    "shipped_personas",
    "shipped_world",
]
