"""A scripted town's answers, shared by the town's tests: every persona the same day."""

from __future__ import annotations

import json
from typing import Any

from autonoma.llm.base import CompletionRequest
from autonoma.llm.types import Message
from autonoma.sim.plan import HOUR_LABELS

HOURS = ["sleeping"] * 7 + ["having breakfast"] + ["reading a book"] * 14 + ["sleeping"] * 2


def townsfolk(messages: list[Message], request: CompletionRequest) -> dict[str, Any]:
    """Every persona the same day: asleep until 7, breakfast, reading, asleep from 22; every
    place the first kitchen it knows (or the first place), the ratings all 4."""
    return answer_to(request.plan.schema or {})


def served_townsfolk(body: dict[str, Any]) -> dict[str, Any]:
    """The same answers from an OpenAI-compatible server (tests/fake_openai.py)."""
    return {"content": json.dumps(answer_to(body["response_format"]["json_schema"]["schema"]))}


def answer_to(schema: dict[str, Any]) -> dict[str, Any]:
    wanted = next(iter(schema.get("properties", {})))
    if wanted == "plan":
        return {"plan": ["wake up at 7:00 am", "breakfast at 7:00 am", "read at 8:00 am",
                         "dinner at 6:00 pm", "sleep at 10:00 pm"]}  # fmt: skip
    if wanted == "00:00":  # the hours, each under its label
        return dict(zip(HOUR_LABELS, HOURS, strict=True))
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
