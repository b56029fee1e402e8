"""Moving on the grid: shortest paths through doors, one tile a step, never onto a tile
another persona stands on; and what a persona learns of the town by seeing it."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from autonoma.sim import SpatialMemory, next_step, path_between, shipped_world

WORLD = shipped_world("small_town")


def test_a_path_in_the_open_is_as_short_as_the_grid_allows() -> None:
    path = path_between(WORLD, (0, 9), [(10, 9)])
    assert path is not None and path[0] == (0, 9) and path[-1] == (10, 9)
    assert len(path) == 11
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in pairwise(path))


def test_a_path_into_a_house_goes_through_its_door() -> None:
    path = path_between(WORLD, (14, 10), WORLD.tiles_of("Lin family house: kitchen: stove"))
    assert path is not None and path[-1] == (2, 2)
    assert (5, 8) in path  # the Lin house's only door
    assert all(WORLD.walkable(tile) for tile in path)


def test_the_nearest_free_tile_of_a_place_is_the_goal() -> None:
    kitchen = WORLD.tiles_of("Lin family house: kitchen")
    path = path_between(WORLD, (5, 9), kitchen)
    assert path is not None and path[-1] in kitchen and len(path) == 6  # door, then up
    taken = path[-1]
    around = path_between(WORLD, (5, 9), kitchen, occupied={taken})
    assert around is not None and around[-1] in kitchen and around[-1] != taken


def test_a_persona_in_the_doorway_makes_the_other_wait() -> None:
    # the door is the only way in: with someone standing in it, the next step is to wait
    stove = WORLD.tiles_of("Lin family house: kitchen: stove")
    assert next_step(WORLD, (5, 10), stove, occupied={(5, 8)}) == (5, 10)
    assert path_between(WORLD, (5, 9), stove, occupied={(5, 8)}) is None
    assert next_step(WORLD, (5, 9), stove) == (5, 8)
    assert next_step(WORLD, (2, 2), stove) == (2, 2)  # there already


@settings(max_examples=60, deadline=None)
@given(
    start=st.tuples(st.integers(0, 31), st.integers(0, 19)),
    goal=st.tuples(st.integers(0, 31), st.integers(0, 19)),
    others=st.sets(st.tuples(st.integers(0, 31), st.integers(0, 19)), max_size=40),
)
def test_a_step_is_one_tile_onto_a_free_walkable_tile(
    start: tuple[int, int], goal: tuple[int, int], others: set[tuple[int, int]]
) -> None:
    if not WORLD.walkable(start):
        return
    occupied = others - {start}
    after = next_step(WORLD, start, [goal], occupied)
    assert after == start or (
        abs(after[0] - start[0]) + abs(after[1] - start[1]) == 1
        and WORLD.walkable(after)
        and after not in occupied
    )
    path = path_between(WORLD, start, [goal], occupied)
    if path is not None:
        assert not set(path[1:]) & occupied and path[-1] == goal


def test_a_persona_learns_the_places_it_sees_and_no_others() -> None:
    memory = SpatialMemory()
    new = memory.see(WORLD, (3, 3), radius=2)  # in the Lin kitchen
    assert "Lin family house: kitchen: stove" in new
    assert memory.knows("Lin family house: kitchen") and not memory.knows("Hobbs Cafe")
    assert memory.sectors() == ["Lin family house"]
    assert memory.see(WORLD, (3, 3), radius=2) == []  # nothing new the second time
    memory.see(WORLD, (25, 9), radius=4)  # outside the cafe's door
    assert memory.arenas("Hobbs Cafe") == ["cafe"]
    assert memory.objects("Hobbs Cafe", "cafe") == ["window table", "corner table"]  # in view
    assert "Hobbs Cafe: cafe (" in memory.describe()
    assert SpatialMemory.from_json(memory.to_json()) == memory
