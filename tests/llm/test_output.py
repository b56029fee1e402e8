"""JSON extraction and repair, and the output plan's validation."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from autonoma.errors import SchemaUnsupported
from autonoma.llm.output import OutputPlan, OutputProblem, extract_json
from autonoma.llm.types import Tools, ToolSpec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here you go: {"a": 1} -- hope that helps!', {"a": 1}),
        ("{'a': 'single quotes'}", {"a": "single quotes"}),
        ('{"a": [1, 2, {"b": "cut off', {"a": [1, 2, {"b": "cut off"}]}),
        ('{"a": 1,}', {"a": 1}),
        ("[1, 2, 3]", [1, 2, 3]),
    ],
)
def test_extract_json_repairs_what_models_write(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json at all", "just words: yes"])
def test_extract_json_without_json_is_a_problem(text):
    with pytest.raises(OutputProblem, match="no JSON"):
        extract_json(text)


class Point(BaseModel):
    x: int
    y: int


def test_pydantic_plan_validates_and_reports_fields():
    plan = OutputPlan.of(Point)
    assert plan.kind == "json" and plan.schema is not None
    assert plan.parse_json({"x": 1, "y": 2}) == Point(x=1, y=2)
    with pytest.raises(OutputProblem, match=r"at y: Field required"):
        plan.parse_json({"x": 1})


def test_json_schema_plan_reports_the_path_of_the_error():
    plan = OutputPlan.of(
        {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}
    )
    with pytest.raises(OutputProblem, match=r"at items/1: 'two' is not of type 'integer'"):
        plan.parse_json({"items": [1, "two"]})


def test_tool_plan_checks_names_and_arguments():
    spec = ToolSpec(
        name="read_file",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    )
    plan = OutputPlan.of(Tools([spec]))
    call = plan.parse_tool_json({"name": "read_file", "arguments": {"path": "a"}})
    assert call.name == "read_file" and call.arguments == {"path": "a"}
    with pytest.raises(OutputProblem, match="no tool named 'rm'.*read_file"):
        plan.parse_tool_json({"name": "rm", "arguments": {}})
    with pytest.raises(OutputProblem, match="'path' is a required property"):
        plan.parse_tool_call("read_file", "{}", "c1")


def test_bad_schemas_and_specs_fail_at_request_time():
    with pytest.raises(SchemaUnsupported):
        OutputPlan.of({"type": 12})
    with pytest.raises(SchemaUnsupported):
        OutputPlan.of(Tools([ToolSpec(name="t", parameters={"type": "objekt"})]))
    with pytest.raises(SchemaUnsupported, match="not int"):
        OutputPlan.of(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unique"):
        Tools([ToolSpec(name="t"), ToolSpec(name="t")])
