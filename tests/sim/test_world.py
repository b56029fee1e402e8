"""The town's world: the shipped towns, world files checked with one line naming the bad
entry, places by address, and object states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autonoma.sim import Place, World, WorldFileError, load_world, shipped_world
from autonoma.sim.world import SHIPPED


def town(**changes: object) -> dict[str, object]:
    """A small valid world as a file holds it, with `changes` laid over its top level."""
    data: dict[str, object] = {
        "name": "Test town",
        "size": [12, 8],
        "sectors": [
            {
                "name": "Lin house",
                "area": [0, 0, 6, 5],
                "doors": [[2, 4]],
                "arenas": [
                    {
                        "name": "kitchen",
                        "area": [1, 1, 4, 3],
                        "objects": [{"name": "stove", "at": [1, 1]}],
                    }
                ],
            },
            {
                "name": "park",
                "area": [7, 0, 5, 8],
                "walls": False,
                "arenas": [{"name": "lawn", "area": [7, 0, 5, 8]}],
            },
        ],
    }
    return data | changes


def write(tmp_path: Path, data: object, name: str = "town.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_towns_load_with_every_arena_reachable(name: str) -> None:
    world = shipped_world(name)  # unreachable arenas would have raised
    assert world.render().count("\n") == world.height - 1
    objects = [o for arenas in world.tree().values() for os in arenas.values() for o in os]
    assert len(objects) == len(world.states) or len(objects) > len(set(objects))


def test_the_small_town_has_five_sectors_and_the_big_one_a_whole_town() -> None:
    assert len(shipped_world("small_town").tree()) >= 5
    sectors = " ".join(shipped_world("the_ville").tree()).lower()
    for kind in ("house", "cafe", "college", "market", "pub", "park", "dorm", "apartment"):
        assert kind in sectors, kind
    homes = [s for s in shipped_world("the_ville").tree() if "house" in s or "apartment" in s]
    assert len(homes) >= 11


def test_a_place_is_known_by_its_address_and_where_it_is() -> None:
    world = shipped_world("small_town")
    assert world.place_at((2, 2)) == Place("Lin family house", "kitchen", "stove")
    assert world.place_at((2, 2)).address == "Lin family house: kitchen: stove"
    assert world.place_at((4, 3)) == Place("Lin family house", "kitchen")
    assert world.place_at((0, 0)) == Place()  # the street
    assert not world.walkable((1, 1))  # a wall
    assert world.walkable((5, 8))  # a door
    assert world.resolve("lin family house:KITCHEN :  stove") == "Lin family house: kitchen: stove"
    assert world.tiles_of("Lin family house: kitchen: stove") == [(2, 2)]
    assert len(world.tiles_of("Hobbs Cafe: cafe")) == 8 * 4


def test_object_states_change_in_words_and_bad_names_are_one_line() -> None:
    world = shipped_world("small_town")
    assert world.states["Hobbs Cafe: kitchen: oven"] == "idle"
    assert world.set_state("hobbs cafe: kitchen: oven", "  burning \n hot ") == (
        "Hobbs Cafe: kitchen: oven"
    )
    assert world.states["Hobbs Cafe: kitchen: oven"] == "burning hot"
    with pytest.raises(WorldFileError, match=r"no place 'Hobbs Cafe: kitchen: ovn' in Willow "
                       r"Lane; did you mean 'Hobbs Cafe: kitchen: oven'"):  # fmt: skip
        world.set_state("Hobbs Cafe: kitchen: ovn", "off")
    with pytest.raises(WorldFileError, match="is not an object, so it has no state"):
        world.set_state("Hobbs Cafe: kitchen", "closed")
    with pytest.raises(WorldFileError, match="a state is a few words"):
        world.set_state("Hobbs Cafe: kitchen: oven", "  ")


def test_yaml_and_json_world_files_load(tmp_path: Path) -> None:
    from_json = load_world(write(tmp_path, town()))
    yaml_path = tmp_path / "town.yaml"
    yaml_path.write_text(
        "name: Test town\nsize: [12, 8]\nsectors:\n"
        "  - {name: park, area: [7, 0, 5, 8], walls: false,\n"
        "     arenas: [{name: lawn, area: [7, 0, 5, 8], objects: [{name: bench, at: [8, 1]}]}]}\n",
        encoding="utf-8",
    )
    from_yaml = load_world(yaml_path)
    assert isinstance(from_json, World) and from_json.tree()["Lin house"] == {"kitchen": ["stove"]}
    assert from_yaml.states == {"park: lawn: bench": "idle"}


def sector(n: int, **changes: object) -> dict[str, object]:
    sectors = town()["sectors"]
    assert isinstance(sectors, list)
    return sectors[n] | changes  # type: ignore[no-any-return]


def kitchen(**changes: object) -> dict[str, object]:
    return {"name": "kitchen", "area": [1, 1, 4, 3]} | changes


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (town(sectors=[sector(0, arenas=[kitchen(objects=[{"name": "stove", "at": [9, 9]}])])]),
         "object 'Lin house: kitchen: stove' at [9, 9] is not inside its arena [1, 1, 4, 3]"),
        (town(sectors=[sector(0, arenas=[kitchen(area=[0, 0, 4, 3])])]),
         "arena 'Lin house: kitchen' [0, 0, 4, 3] is not inside its walls ([1, 1, 4, 3])"),
        (town(sectors=[sector(0), sector(1, area=[5, 0, 5, 8])]),
         "sector 'park' overlaps sector 'Lin house'"),
        (town(sectors=[sector(0, doors=[])]), "sector 'Lin house' has walls and no door"),
        (town(sectors=[sector(0, doors=[[2, 2]])]), "door [2, 2] is not on its edge"),
        (town(sectors=[sector(0, area=[0, 0, 20, 5])]), "is not inside the map [12, 8]"),
        (town(sectors=[sector(0, arenas=[kitchen(), kitchen(area=[1, 1, 1, 1])])]),
         "two arenas of 'Lin house' are named 'kitchen'"),
        (town(sectors=[sector(0, arenas=[kitchen(colour="red")])]),
         "town.json: sector 'Lin house' > arena 'kitchen' > colour is not a world file key"),
        (town(sectors=[sector(0, arenas=[kitchen(objects=[{"name": "a: b", "at": [1, 1]}])])]),
         "> object 'a: b' > name a name is a few words without ':'"),
        (town(sectors=[sector(0, arenas=[kitchen(area=[1, 1, 4])])]),
         "> arena 'kitchen' > area an area is [x, y, width, height]"),
        (town(size=[12]), "size"),
        ({"name": "x", "size": [4, 4]}, "sectors is missing"),
        # the door opens onto the fountain: the kitchen cannot be reached from the park
        (town(blocked=[[1, 4, 3, 2]], sectors=[sector(0, doors=[[2, 4]]), sector(1)]),
         "arena 'park: lawn' cannot be reached from 'Lin house: kitchen': add a door"),
    ],
)  # fmt: skip
def test_a_bad_world_file_is_one_line_naming_the_entry(
    tmp_path: Path, data: object, said: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(WorldFileError) as raised:
        load_world(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert said in message


def test_files_that_are_not_world_files_are_one_line(tmp_path: Path) -> None:
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(WorldFileError, match=r"^cannot read .*bad.yaml: "):
        load_world(bad_yaml)
    with pytest.raises(WorldFileError, match="must hold a table with name, size and sectors"):
        load_world(write(tmp_path, [1, 2]))
    with pytest.raises(WorldFileError, match="cannot read the world file"):
        load_world(tmp_path / "missing.yaml")
    with pytest.raises(WorldFileError, match="no shipped world 'nowhere': there are small_town"):
        shipped_world("nowhere")
