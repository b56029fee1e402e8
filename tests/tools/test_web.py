"""The web tools against a real HTTP server on 127.0.0.1: http_request on a JSON API,
browse_website reading a page with a ScriptedModel, web_search through a fake SearxNG and
an injected ddgs. (The SSRF cases are in tests/security/test_egress.py.)"""

from __future__ import annotations

import gzip
import json
import shutil
import ssl
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from autonoma.errors import ConfigError, ModelRefused
from autonoma.llm import ScriptedModel
from autonoma.llm.types import Message
from autonoma.runtime.budget import BudgetSpent
from autonoma.tools import ToolContext, ToolRegistry, Workspace
from autonoma.tools.base import Risk
from autonoma.tools.egress import EgressGuard
from autonoma.tools.settings import WebSettings
from autonoma.tools.web import (
    WEB_TOOLS,
    DdgsSearch,
    SearchFailed,
    SearchResult,
    SearxngSearch,
    WebError,
    browse_website,
    chunks_of,
    egress_of,
    http_request,
    links_of,
    model_of,
    most_relevant,
    search_of,
    search_provider,
    web_search,
)
from tests.tools.web_server import Seen, WebServer

LIGHTHOUSE = """<!doctype html>
<html><head><title>Kestrel Point</title><base href="/guide/"></head>
<body>
<nav><a href="/">Home</a> <a href="history.html#top">History</a> <a href="mailto:a@b.c">Mail</a></nav>
<article>
<h1>The lighthouse on Kestrel Point</h1>
<p>The lighthouse on Kestrel Point was painted green in 1931 by the harbour board.</p>
<p>It stands 31 metres tall and its lamp can be seen 20 nautical miles out to sea.</p>
<p>Visitors may climb its 142 steps on Saturdays between April and October.</p>
</article>
<footer><a href="https://example.org/visit">Plan a visit</a> <a href="/">Home again</a></footer>
</body></html>"""


@pytest.fixture
def server() -> Iterator[WebServer]:
    with WebServer() as web:
        yield web


def context(
    tmp_path: Path,
    model: ScriptedModel | None = None,
    *,
    spent: BudgetSpent | None = None,
    **settings: Any,
) -> ToolContext:
    settings.setdefault("allow", ["127.0.0.1"])
    guard = EgressGuard(WebSettings(**settings))
    return ToolContext(Workspace(tmp_path / "ws"), egress=guard, model=model, spent=spent)


def prompt_of(messages: Sequence[Message]) -> str:
    return "\n".join(str(m.content) for m in messages)


def test_the_web_tools_are_network_tools_with_typed_arguments() -> None:
    registry = ToolRegistry(WEB_TOOLS)
    assert registry.names == ["web_search", "browse_website", "http_request"]
    assert all(t.risk is Risk.NETWORK for t in WEB_TOOLS)
    schema = http_request.spec().parameters
    assert schema["required"] == ["method", "url"]
    assert "POST" in schema["properties"]["method"]["enum"]
    assert browse_website.spec().parameters["required"] == ["url", "question"]


# -- http_request --------------------------------------------------------------------------


async def test_http_request_calls_a_json_api(tmp_path: Path, server: WebServer) -> None:
    def echo(seen: Seen) -> dict[str, Any]:
        return {
            "method": seen.method,
            "query": seen.query,
            "type": seen.headers.get("content-type"),
            "token": seen.headers.get("x-token"),
            "got": json.loads(seen.body or b"null"),
        }

    url = server.json("/api/items", echo)
    result = await http_request.run(
        context(tmp_path),
        {
            "method": "POST",
            "url": url + "?page=2",
            "headers": {"Content-Type": "application/json", "X-Token": "t0k"},
            "body": json.dumps({"name": "lamp"}),
        },
    )
    assert result.ok and result.untrusted
    head, _, body = result.output.partition("\n\n")
    assert head.startswith("HTTP 200 OK")
    assert "content-type: application/json" in head
    assert json.loads(body) == {
        "method": "POST",
        "query": {"page": ["2"]},
        "type": "application/json",
        "token": "t0k",
        "got": {"name": "lamp"},
    }
    assert server.seen[0].headers["user-agent"].startswith("autonoma/")


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def test_http_request_methods(tmp_path: Path, server: WebServer, method: str) -> None:
    url = server.json("/m", lambda seen: {"method": seen.method})
    result = await http_request.run(context(tmp_path), {"method": method, "url": url})
    assert result.ok and json.loads(result.output.partition("\n\n")[2]) == {"method": method}


async def test_http_request_head_has_no_body(tmp_path: Path, server: WebServer) -> None:
    url = server.page("/h", "<p>x</p>")
    result = await http_request.run(context(tmp_path), {"method": "HEAD", "url": url})
    assert result.ok and result.output.endswith("(empty body)")


async def test_http_request_follows_redirects_and_says_so(
    tmp_path: Path, server: WebServer
) -> None:
    target = server.json("/v2/status", lambda _: {"up": True})
    start = server.redirect("/status", "/v2/status", status=301)
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": start})
    assert result.ok
    assert result.output.startswith(f"HTTP 200 OK from {target} (redirected from {start})")
    assert server.paths() == ["/status", "/v2/status"]


async def test_http_request_error_status_is_a_failed_result_with_the_body(
    tmp_path: Path, server: WebServer
) -> None:
    url = server.json("/missing", lambda _: {"error": "no such item"}, status=404)
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": url})
    assert not result.ok and result.untrusted
    assert result.output.startswith("HTTP 404 Not Found")
    assert '"no such item"' in result.output


async def test_http_request_too_many_redirects(tmp_path: Path, server: WebServer) -> None:
    url = server.redirect("/loop", "/loop")
    result = await http_request.run(
        context(tmp_path, max_redirects=3), {"method": "GET", "url": url}
    )
    assert not result.ok and "redirected more than 3 times" in result.output
    assert len(server.seen) == 4


async def test_http_request_binary_and_long_bodies(tmp_path: Path, server: WebServer) -> None:
    png = server.page("/img", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), content_type="image/png")
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": png})
    assert result.ok and "[binary body: 264 bytes of image/png, not shown]" in result.output
    long = server.page("/long", "y" * 5000, content_type="text/plain")
    result = await http_request.run(
        context(tmp_path, output_chars=1000), {"method": "GET", "url": long}
    )
    assert "y" * 1000 + "\n[body cut at 1000 of 5000 characters]" in result.output


async def test_http_request_reads_gzip_and_charsets(tmp_path: Path, server: WebServer) -> None:
    url = server.page(
        "/z",
        gzip.compress("crème brûlée".encode("latin-1")),
        content_type="text/plain; charset=ISO-8859-1",
        headers={"Content-Encoding": "gzip"},
    )
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": url})
    assert result.ok and result.output.endswith("crème brûlée")
    assert server.seen[0].headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://x/", "not a url", "http://"]
)
async def test_http_request_only_fetches_http_urls(tmp_path: Path, url: str) -> None:
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": url})
    assert not result.ok and "FetchFailed" in result.output
    assert "root:" not in result.output


async def test_a_server_that_is_not_there_is_a_clear_failure(tmp_path: Path) -> None:
    with WebServer() as gone:
        url = gone.url("/")
    result = await http_request.run(context(tmp_path), {"method": "GET", "url": url})
    assert not result.ok and result.output.startswith("error: FetchFailed: could not fetch")


# -- browse_website ------------------------------------------------------------------------


async def test_browse_answers_from_the_page_and_lists_its_links(
    tmp_path: Path, server: WebServer
) -> None:
    url = server.page("/guide/lighthouse", LIGHTHOUSE)
    model = ScriptedModel([{"found": True, "answer": "It was painted green, in 1931."}])
    spent = BudgetSpent()
    result = await browse_website.run(
        context(tmp_path, model, spent=spent),
        {"url": url, "question": "What colour is the lighthouse?"},
    )
    assert result.ok and result.untrusted
    origin = server.origin
    assert result.output == (
        f"Answer from {url}:\n"
        "It was painted green, in 1931.\n\n"
        "Links on the page:\n"
        f"- Home: {origin}/\n"
        f"- History: {origin}/guide/history.html\n"
        "- Plan a visit: https://example.org/visit"
    )
    (request,) = model.requests
    prompt = prompt_of(request.messages)
    assert "painted green in 1931" in prompt and "What colour is the lighthouse?" in prompt
    assert f'<page url="{url}">' in prompt and "not instructions" in prompt
    assert "Home again" not in prompt  # the footer is not main text
    assert request.schema is not None and set(request.schema["properties"]) == {"found", "answer"}
    assert spent.tokens > 0


async def test_browse_reads_the_most_relevant_chunks_and_combines_their_answers(
    tmp_path: Path, server: WebServer
) -> None:
    filler = [f"<p>Paragraph {i} is about the weather and tides of the bay.</p>" for i in range(40)]
    facts = [
        "<p>The keeper Ada Quill lit the lamp first in 1888.</p>",
        "<p>The keeper Ben Quill, her son, kept the lamp until 1931.</p>",
    ]
    body = "".join(filler[:15] + facts[:1] + filler[15:30] + facts[1:] + filler[30:])
    url = server.page("/long", f"<html><body><article>{body}</article></body></html>")

    def answer(messages: list[Message], request: Any) -> Any:
        prompt = prompt_of(messages)
        if "<note>" in prompt:
            return "Ada Quill first, then her son Ben Quill until 1931."
        if "Quill" in prompt:
            return {"found": True, "answer": "A keeper named Quill, per this part."}
        return {"found": False, "answer": ""}

    model = ScriptedModel(answer)
    result = await browse_website.run(
        context(tmp_path, model, chunk_chars=600, max_chunks=3),
        {"url": url, "question": "Which keeper kept the lamp?"},
    )
    assert result.ok
    assert "Ada Quill first, then her son Ben Quill until 1931." in result.output
    assert "read the 3 of " in result.output
    assert len(model.requests) == 4  # three chunks and the combination
    chunk_prompts = [prompt_of(r.messages) for r in model.requests[:3]]
    assert any("Ada Quill" in p for p in chunk_prompts)
    assert any("Ben Quill" in p for p in chunk_prompts)
    combine = prompt_of(model.requests[3].messages)
    assert combine.count("<note>") == 2 and "Which keeper kept the lamp?" in combine


async def test_browse_says_when_the_page_does_not_answer(tmp_path: Path, server: WebServer) -> None:
    url = server.page("/guide/lighthouse", LIGHTHOUSE)
    model = ScriptedModel([{"found": False, "answer": ""}])
    result = await browse_website.run(
        context(tmp_path, model), {"url": url, "question": "Who won the 1998 cup final?"}
    )
    assert result.ok
    assert "The page does not seem to answer this question." in result.output
    assert "Links on the page" in result.output


async def test_browse_survives_a_model_that_gives_no_usable_answer(
    tmp_path: Path, server: WebServer
) -> None:
    url = server.page("/guide/lighthouse", LIGHTHOUSE)
    model = ScriptedModel([ModelRefused("refusal", "no")])
    result = await browse_website.run(context(tmp_path, model), {"url": url, "question": "What?"})
    assert result.ok and "does not seem to answer" in result.output


async def test_browse_plain_text_and_redirects(tmp_path: Path, server: WebServer) -> None:
    target = server.page("/notes.txt", "Opening hours: 9 to 5.", content_type="text/plain")
    start = server.redirect("/notes", "/notes.txt")
    model = ScriptedModel([{"found": True, "answer": "9 to 5"}])
    result = await browse_website.run(
        context(tmp_path, model), {"url": start, "question": "When is it open?"}
    )
    assert result.ok
    assert result.output.startswith(f"Answer from {target} (redirected to {target}):\n9 to 5")
    assert "No links on the page." in result.output


async def test_browse_refuses_what_is_not_a_page(tmp_path: Path, server: WebServer) -> None:
    url = server.page("/img.png", b"\x89PNG\r\n", content_type="image/png")
    model = ScriptedModel([])
    result = await browse_website.run(context(tmp_path, model), {"url": url, "question": "?"})
    assert not result.ok and "is image/png, not a page with text" in result.output
    missing = await browse_website.run(
        context(tmp_path, model), {"url": server.url("/nothing"), "question": "?"}
    )
    assert not missing.ok and "answered HTTP 404 Not Found" in missing.output
    assert model.requests == []


async def test_browse_an_empty_page(tmp_path: Path, server: WebServer) -> None:
    url = server.page("/empty", "<html><body><script>x()</script></body></html>")
    model = ScriptedModel([])
    result = await browse_website.run(context(tmp_path, model), {"url": url, "question": "?"})
    assert result.ok and "The page has no readable text." in result.output
    assert model.requests == []


async def test_the_tools_say_what_the_run_did_not_give_them(tmp_path: Path) -> None:
    bare = ToolContext(Workspace(tmp_path / "ws"))
    with pytest.raises(WebError, match="no egress guard"):
        egress_of(bare)
    with pytest.raises(WebError, match=r"ToolContext.model"):
        model_of(context(tmp_path))
    result = await browse_website.run(context(tmp_path), {"url": "http://x.org/", "question": "?"})
    assert not result.ok and "needs the run's model" in result.output
    result = await http_request.run(bare, {"method": "GET", "url": "http://x.org/"})
    assert not result.ok and "web tools are not set up" in result.output


def test_chunks_are_cut_between_paragraphs_then_words() -> None:
    text = "alpha beta\n\ngamma delta\n" + "word " * 60
    chunks = chunks_of(text, 100)
    assert chunks[0] == "alpha beta\ngamma delta"
    assert all(len(c) <= 100 for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_the_chunks_sharing_most_words_with_the_question_are_read_in_page_order() -> None:
    chunks = ["tides and weather", "the keeper lit the lamp", "more weather", "lamp keeper Quill"]
    assert most_relevant(chunks, "Which keeper lit the lamp?", 2) == [1, 3]
    assert most_relevant(chunks, "anything", 10) == [0, 1, 2, 3]
    assert most_relevant(chunks, "nothing shared", 2) == [0, 1]


def test_links_are_absolute_unique_and_web_only() -> None:
    html = (
        '<a href="b.html">B</a><a href="/c#frag">C</a><a href="/c">C again</a>'
        '<a href="javascript:alert(1)">js</a><a href="mailto:x@y.z">m</a><a>none</a>'
        '<a href="https://other.org/">  Other\n site </a>'
    )
    links, total = links_of(html, "http://h.org/dir/page", 2)
    assert [(link.url, link.text) for link in links] == [
        ("http://h.org/dir/b.html", "B"),
        ("http://h.org/c", "C"),
    ]
    assert total == 3


# -- web_search ----------------------------------------------------------------------------


@pytest.fixture
def searxng(server: WebServer) -> WebServer:
    def results(seen: Seen) -> dict[str, Any]:
        query = seen.query["q"][0]
        return {
            "query": query,
            "results": [
                {
                    "title": f"Result {i} for {query}",
                    "url": f"https://example.org/{i}",
                    "content": f"Snippet {i}",
                    "engine": "fake",
                }
                for i in range(1, 13)
            ]
            + [{"title": "no url"}],
        }

    server.json("/searx/search", results)
    return server


async def test_web_search_through_searxng(tmp_path: Path, searxng: WebServer) -> None:
    # SearxNG on a private address is the person's choice: it passes with nothing allowed
    ctx = context(tmp_path, allow=[], search="searxng", searxng_url=searxng.url("/searx/"))
    result = await web_search.run(ctx, {"query": "lighthouse colours"})
    assert result.ok and result.untrusted
    lines = result.output.splitlines()
    assert lines[0] == "8 results for 'lighthouse colours' (searxng):"
    assert lines[1:4] == [
        "1. Result 1 for lighthouse colours",
        "   https://example.org/1",
        "   Snippet 1",
    ]
    (seen,) = searxng.seen
    assert seen.query == {"q": ["lighthouse colours"], "format": ["json"]}
    # ...while the guard of the run itself still refuses that address
    fetched = await http_request.run(ctx, {"method": "GET", "url": searxng.url("/searx/search")})
    assert not fetched.ok and "EgressRefused" in fetched.output


async def test_searxng_failures_are_clear(tmp_path: Path, server: WebServer) -> None:
    guard = EgressGuard(WebSettings())
    server.page("/forbidden/search", "Forbidden", status=403, content_type="text/plain")
    with pytest.raises(SearchFailed, match=r"403 Forbidden \(is json in search.formats"):
        await SearxngSearch(server.url("/forbidden"), guard).search("q", 5)
    server.page("/html/search", "<html>results</html>")
    with pytest.raises(SearchFailed, match="did not answer with its JSON"):
        await SearxngSearch(server.url("/html"), guard).search("q", 5)
    with WebServer() as gone:
        url = gone.url("/")
    with pytest.raises(SearchFailed, match="could not be reached"):
        await SearxngSearch(url, guard).search("q", 5)


async def test_web_search_maps_ddgs_results(tmp_path: Path) -> None:
    asked: list[tuple[str, int]] = []

    def text(query: str, max_results: int) -> list[dict[str, Any]]:
        asked.append((query, max_results))
        return [
            {"title": "Kestrel Point", "href": "https://kp.example/", "body": "A green light."},
            {"title": "", "href": "https://other.example/", "body": ""},
            {"title": "no link", "href": "", "body": "dropped"},
        ]

    ctx = context(tmp_path, search_results=5)
    ctx.search = DdgsSearch(text)
    result = await web_search.run(ctx, {"query": "kestrel point lighthouse"})
    assert asked == [("kestrel point lighthouse", 5)]
    assert result.ok and result.untrusted
    assert result.output.splitlines() == [
        "2 results for 'kestrel point lighthouse' (ddgs):",
        "1. Kestrel Point",
        "   https://kp.example/",
        "   A green light.",
        "2. https://other.example/",
        "   https://other.example/",
    ]
    results = await DdgsSearch(text).search("q", 1)
    assert results == [
        SearchResult(title="Kestrel Point", url="https://kp.example/", snippet="A green light.")
    ]


async def test_a_ddgs_network_failure_is_a_clear_error(tmp_path: Path) -> None:
    from ddgs.exceptions import DDGSException, TimeoutException

    def offline(query: str, max_results: int) -> list[dict[str, Any]]:
        raise DDGSException("ConnectError: dns error: failed to lookup address information")

    ctx = context(tmp_path)
    ctx.search = DdgsSearch(offline)
    result = await web_search.run(ctx, {"query": "anything"})
    assert not result.ok
    assert "web search (ddgs) failed" in result.output
    assert "check the internet connection" in result.output and "searxng" in result.output

    def slow(query: str, max_results: int) -> list[dict[str, Any]]:
        raise TimeoutException("timed out")

    with pytest.raises(SearchFailed, match="TimeoutException: timed out"):
        await DdgsSearch(slow).search("q", 3)

    def nothing(query: str, max_results: int) -> list[dict[str, Any]]:
        raise DDGSException("No results found.")

    ctx.search = DdgsSearch(nothing)
    result = await web_search.run(ctx, {"query": "zzqx"})
    assert result.ok and result.output == "no results for 'zzqx'"


def test_the_provider_follows_the_settings(tmp_path: Path) -> None:
    assert isinstance(search_provider(EgressGuard(WebSettings())), DdgsSearch)
    guard = EgressGuard(WebSettings(search="searxng", searxng_url="http://10.0.0.5:8888"))
    provider = search_provider(guard)
    assert isinstance(provider, SearxngSearch) and provider.url == "http://10.0.0.5:8888"
    with pytest.raises(ConfigError, match="no searxng_url"):
        search_provider(EgressGuard(WebSettings(search="searxng")))
    ctx = context(tmp_path)
    ctx.search = "not a provider"
    with pytest.raises(WebError, match="not a SearchProvider"):
        search_of(ctx)


# -- HTTPS ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for kestrel.example (made with the openssl command)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    options = "-x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
    name = ["-subj", "/CN=kestrel.example", "-addext", "subjectAltName=DNS:kestrel.example"]
    subprocess.run(
        [openssl, "req", *options.split(), "-keyout", key, "-out", cert, *name],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_https_connects_to_the_checked_address_and_verifies_the_name(
    tmp_path: Path, certificate: tuple[str, str]
) -> None:
    """The guard connects to the address it checked, yet TLS still verifies the certificate
    against the URL's host name (SNI and hostname check), not the address."""

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if host == "kestrel.example" else []

    trusted = ssl.create_default_context(cafile=certificate[0])
    guard = EgressGuard(WebSettings(allow=["127.0.0.1"]), resolver=resolve, ssl_context=trusted)
    ctx = ToolContext(Workspace(tmp_path / "ws"), egress=guard)
    with WebServer(tls=certificate) as server:
        server.json("/api", lambda seen: {"host": seen.headers["host"]})
        named = await http_request.run(
            ctx, {"method": "GET", "url": f"https://kestrel.example:{server.port}/api"}
        )
        by_address = await http_request.run(ctx, {"method": "GET", "url": server.url("/api")})
        untrusted_ca = await http_request.run(
            context(tmp_path), {"method": "GET", "url": server.url("/api")}
        )
    assert named.ok, named.output
    assert json.loads(named.output.partition("\n\n")[2]) == {
        "host": f"kestrel.example:{server.port}"
    }
    assert not by_address.ok and "CERTIFICATE_VERIFY_FAILED" in by_address.output
    assert "IP address mismatch" in by_address.output
    assert not untrusted_ca.ok and "CERTIFICATE_VERIFY_FAILED" in untrusted_ca.output


async def test_a_refusal_of_the_address_asked_for_is_not_outside_content(
    tmp_path: Path, server: WebServer
) -> None:
    """Nothing was fetched: later writes must not wait for a person on its account. A
    refusal met on a redirect quotes where the server sent it, so it still marks the run."""
    guarded = context(tmp_path, allow=[])  # 127.0.0.1 refused
    asked = await http_request.run(guarded, {"method": "GET", "url": server.url("/anything")})
    assert not asked.ok and "EgressRefused" in asked.output and not asked.untrusted
    assert "--allow-host" in asked.output
    sent = server.redirect("/away", "http://10.0.0.7/secret")
    redirected = await http_request.run(context(tmp_path), {"method": "GET", "url": sent})
    assert not redirected.ok and "10.0.0.7" in redirected.output and redirected.untrusted
