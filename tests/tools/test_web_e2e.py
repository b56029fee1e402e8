"""browse_website on the real embedded model (SmolLM2-135M): it reads a local page and
answers a question from it, in one model call constrained to the answer schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from autonoma.llm import open_model
from autonoma.llm.registry import ModelStore
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import ToolContext, Workspace
from autonoma.tools.egress import EgressGuard
from autonoma.tools.settings import WebSettings
from autonoma.tools.web import browse_website
from tests.tools.web_server import WebServer

pytestmark = pytest.mark.e2e

PAGE = """<!doctype html>
<html><head><title>Kestrel Point lighthouse</title></head>
<body>
<nav><a href="/">Home</a> <a href="/visit">Visiting</a></nav>
<article>
<h1>Kestrel Point lighthouse</h1>
<p>The lighthouse on Kestrel Point is painted green. The harbour board chose the green
paint in 1931.</p>
<p>The tower stands 31 metres tall.</p>
</article>
</body></html>"""


@pytest.fixture(scope="module")
def smollm_path() -> Path:
    return ModelStore().ensure("smollm2-135m")


async def test_browse_answers_from_a_local_page_with_the_real_model(
    smollm_path: Path, tmp_path: Path
) -> None:
    model = open_model("local:smollm2-135m?slots=1&context=2048")
    spent = BudgetSpent()
    with WebServer() as server:
        url = server.page("/lighthouse", PAGE)
        guard = EgressGuard(WebSettings(allow=["127.0.0.1"]))
        context = ToolContext(Workspace(tmp_path / "ws"), egress=guard, model=model, spent=spent)
        try:
            result = await browse_website.run(
                context, {"url": url, "question": "What colour is the lighthouse painted?"}
            )
        finally:
            await model.aclose()
    assert result.ok and result.untrusted, result.output
    answer = result.output.split("\n\nLinks on the page")[0]
    assert answer.startswith(f"Answer from {url}:\n")
    assert "green" in answer.lower(), result.output
    assert f"- Visiting: {server.url('/visit')}" in result.output
    assert spent.prompt_tokens > 0 and spent.completion_tokens > 0
