"""A scripted town's answers, shared by the town's tests: every persona the same day."""

from __future__ import annotations

import json
from typing import Any

from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message

DAY_PLAN = {
    "plan": [{"at": "07:00", "do": "wake up"}, {"at": "07:00", "do": "have breakfast"},
             {"at": "08:00", "do": "read a book"}, {"at": "18:00", "do": "have dinner"},
             {"at": "20:00", "do": "read by the fire"}],
    "bed": "22:00",
}  # fmt: skip


def townsfolk(messages: list[Message], request: CompletionRequest) -> dict[str, Any]:
    """Every persona the same day: up at their lifestyle's hour, breakfast at 7, reading, dinner, reading, asleep at its bed time; every
    place the first kitchen it knows (or the first place), the ratings all 4."""
    return answer_to(request.plan.schema or {})


def served_townsfolk(body: dict[str, Any]) -> dict[str, Any]:
    """The same answers from an OpenAI-compatible server (tests/fake_openai.py)."""
    return {"content": json.dumps(answer_to(body["response_format"]["json_schema"]["schema"]))}


def answer_to(schema: dict[str, Any]) -> dict[str, Any]:
    wanted = next(iter(schema.get("properties", {})))
    if wanted == "plan":
        return DAY_PLAN
    if wanted == "actions":
        kitchen = first_kitchen(schema["properties"]["actions"]["items"])
        return {"actions": [{"action": "making toast", "minutes": 10, **kitchen},
                            {"action": "eating toast", "minutes": 10, **kitchen}],
                **first_kitchen(schema)}  # a reaction's place, where one is asked  # fmt: skip
    if wanted == "place":
        return first_kitchen(schema)
    if wanted == "ratings":
        return {"ratings": [4] * schema["properties"]["ratings"]["minItems"]}
    if wanted == "decision":
        return {"decision": "continue", "reaction": "", "minutes": 5}
    raise AssertionError(f"unexpected request for {wanted}")


def first_kitchen(schema: dict[str, Any]) -> dict[str, str]:
    """A place under `schema`: the first kitchen the persona knows, or its first place
    (nothing where the schema asks for no place)."""
    place = schema["properties"].get("place")
    if place is None:
        return {}
    places = place["enum"]
    return {"place": next((p for p in places if p.endswith(": kitchen")), places[0])}
