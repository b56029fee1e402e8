"""The tool retrieval benchmark's parts work on a small scale: the catalogue, the registries,
the recall table and the prompt sizes (with the lexical embedder and a character count)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from autonoma.memory.embeddings import LexicalEmbedder
from autonoma.tools import CORE_TOOLS
from autonoma.tools.settings import RetrievalSettings
from bench.tool_retrieval import (
    REQUESTS,
    char_count,
    generate_tools,
    overlap,
    plot,
    prompt_sizes,
    ranks,
    recall_table,
    registry_for,
    smallest_k,
)


def test_the_catalogue_holds_500_distinct_tools_and_200_labelled_requests() -> None:
    domains = generate_tools()
    tools = [t for block in domains.values() for t in block]
    assert len(tools) == 500
    assert len({t.name for t in tools}) == 500
    assert len({t.description for t in tools}) == 500
    assert all(t.spec().parameters["type"] == "object" for t in tools)
    names = {t.name for t in tools}
    assert len(REQUESTS) == 200 and len({r for r, _ in REQUESTS}) == 200
    assert {right for _, right in REQUESTS} <= names
    share = overlap(REQUESTS, {t.name: t for t in tools})
    assert share["requests_sharing_no_word"] > 0.3  # the requests are not the descriptions


def test_a_registry_grows_a_domain_at_a_time_and_holds_the_right_tool() -> None:
    domains = generate_tools()
    for n in (5, 50, 500):
        tools = registry_for("email_send", n, domains, random.Random(1))
        assert len(tools) == n == len({t.name for t in tools})
        assert "email_send" in {t.name for t in tools}
    fifty = registry_for("email_send", 50, domains, random.Random(1))
    assert fifty == registry_for("email_send", 50, domains, random.Random(1))
    assert {t.name for t in domains["email"]} <= {t.name for t in fifty}


def test_smallest_k() -> None:
    assert smallest_k([0] * 95 + [9] * 5, 0.95) == 1
    assert smallest_k([0] * 94 + [9] * 6, 0.95) == 10
    assert smallest_k([0, 1, 2, 3], 0.95) == 4


async def test_recall_and_prompt_size_on_a_small_scale(tmp_path: Path) -> None:
    domains = generate_tools()
    requests = REQUESTS[:6]
    settings = RetrievalSettings(threshold=30, k=3)
    positions = await ranks(LexicalEmbedder(), domains, requests, [10, 60])
    assert all(0 <= p < n for n, pos in positions.items() for p in pos)
    table = recall_table(positions, settings)
    assert [row["tools"] for row in table] == [10, 60]
    assert table[0]["offered"] == 1.0  # 17 tools are under the threshold: all offered
    assert table[1]["recall"]["30"] >= table[1]["recall"]["1"]

    sizes = await prompt_sizes(
        LexicalEmbedder(), domains, requests[:2], [10, 60], char_count, [3, 5]
    )
    assert [row["all"]["offered"] for row in sizes] == [len(CORE_TOOLS) + 10, len(CORE_TOOLS) + 60]
    assert sizes[1]["retrieval"]["3"]["offered"] == len(CORE_TOOLS) + 1 + 3  # and find_tools
    big = sizes[1]
    assert big["all"]["unconstrained"] > big["all"]["constrained"]
    assert big["all"]["constrained"] > big["retrieval"]["5"]["constrained"]
    assert big["retrieval"]["5"]["constrained"] > big["retrieval"]["3"]["constrained"]
    assert big["retrieval"]["3"]["unconstrained"] < big["all"]["unconstrained"] / 3

    pytest.importorskip("matplotlib")
    data = {
        "settings": settings.model_dump(),
        "requests": len(requests),
        "recall": {"request": table, "request_lexical": table},
        "prompt": {"unit": "characters", "per_count": sizes},
    }
    out = plot(json.loads(json.dumps(data)), tmp_path / "tool_retrieval.svg")
    assert out.read_text().startswith("<?xml")
