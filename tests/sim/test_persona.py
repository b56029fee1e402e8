"""Persona files: read, checked against the town with one line naming the bad entry, placed
at free tiles of their homes, knowing their homes and the places they name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autonoma.sim import WorldFileError, load_personas, shipped_world
from autonoma.sim.persona import shipped_personas

WORLD = shipped_world("small_town")


def persona(**changes: object) -> dict[str, object]:
    return {
        "name": "Mei Lin",
        "age": 44,
        "innate": "curious, patient, warm",
        "learned": "Mei Lin teaches philosophy at Oak Hill College.",
        "currently": "Mei Lin is writing a book about friendship.",
        "lifestyle": "Mei Lin wakes at 7am and goes to bed at 11pm.",
        "home": "Lin family house: bedroom",
        "knows": ["Oak Hill College"],
        "memories": "Mei Lin is married to John Lin; Mei Lin  likes tea ;; Mei Lin knows Isabella",
    } | changes


def folder(tmp_path: Path, *people: dict[str, object]) -> Path:
    for n, person in enumerate(people):
        (tmp_path / f"p{n}.yaml").write_text(yaml.safe_dump(person), encoding="utf-8")
    return tmp_path


def test_a_persona_is_read_and_placed_at_home(tmp_path: Path) -> None:
    mei, john = load_personas(
        folder(tmp_path, persona(), persona(name="John Lin", knows=[])), WORLD
    )
    assert mei.spec.seed_memories() == [
        "Mei Lin is married to John Lin",
        "Mei Lin likes tea",
        "Mei Lin knows Isabella",
    ]
    assert mei.home == "Lin family house: bedroom" and WORLD.place_at(mei.tile).arena == "bedroom"
    assert john.tile != mei.tile  # two in one bedroom, never on one tile
    assert mei.spatial.objects("Lin family house", "kitchen") == [
        "stove", "kitchen sink", "refrigerator",
    ]  # fmt: skip
    assert mei.spatial.arenas("Oak Hill College") == ["classroom", "library"]
    assert not john.spatial.knows("Oak Hill College") and not mei.spatial.knows("Hobbs Cafe")
    assert mei.spec.identity().startswith("Name: Mei Lin\nAge: 44\nInnate traits: curious")


@pytest.mark.parametrize(
    ("people", "said"),
    [
        ([persona(home="Lin family house: bedrom")],
         "p0.yaml: no place 'Lin family house: bedrom' in Willow Lane; did you mean "
         "'Lin family house: bedroom'"),
        ([persona(home="Lin family house")], "home 'Lin family house' is not an arena"),
        ([persona(knows=["Town Hall"])], "p0.yaml: no place 'Town Hall'"),
        ([persona(), persona(name="mei lin")], "p1.yaml: mei lin is also the name in"),
        ([persona(age=0)], "p0.yaml: age Input should be greater than or equal to 1"),
        ([persona(hobby="chess")], "p0.yaml: hobby is not a persona file key"),
        ([{k: v for k, v in persona().items() if k != "memories"}], "memories is missing"),
        ([persona(innate="  ")], "p0.yaml: innate is empty"),
    ],
)  # fmt: skip
def test_a_bad_persona_file_is_one_line_naming_the_entry(
    tmp_path: Path, people: list[dict[str, object]], said: str
) -> None:
    with pytest.raises(WorldFileError) as raised:
        load_personas(folder(tmp_path, *people), WORLD)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_home_too_small_for_its_people_is_said(tmp_path: Path) -> None:
    world = shipped_world("small_town")
    people = [persona(name=f"Person {n}", home="Hobbs Cafe: kitchen") for n in range(17)]
    with pytest.raises(WorldFileError, match="has no free tile left for Person "):
        load_personas(folder(tmp_path, *people), world)


def test_a_folder_without_persona_files_is_said(tmp_path: Path) -> None:
    with pytest.raises(WorldFileError, match="holds no persona file"):
        load_personas(tmp_path, WORLD)
    with pytest.raises(WorldFileError, match="no folder of persona files"):
        load_personas(tmp_path / "missing", WORLD)
    (tmp_path / "bad.yaml").write_text("- a list\n", encoding="utf-8")
    with pytest.raises(WorldFileError, match="must hold a table"):
        load_personas(tmp_path, WORLD)


@pytest.mark.parametrize(("town", "count"), [("small_town", 3), ("the_ville", 25)])
def test_the_shipped_personas_live_in_their_towns(town: str, count: int) -> None:
    world = shipped_world(town)
    people = shipped_personas(town, world)
    assert len(people) == count
    assert len({p.tile for p in people}) == count
    names = {p.name for p in people}
    for person in people:
        memories = person.spec.seed_memories()
        assert len(memories) >= 8
        others = {n for n in names - {person.name} if any(n in m for m in memories)}
        assert others, f"{person.name} remembers no one of the town"
