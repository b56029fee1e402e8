"""The web tools: `web_search`, `browse_website` and `http_request`.

Every fetch goes through the run's EgressGuard (see egress.py), under the size, time and
redirect caps of its WebSettings; what comes back is outside content, so every result is
marked untrusted. The tools find what they need in their ToolContext:

- egress: the run's EgressGuard (its settings are the run's WebSettings); all three tools
- model: the run's Model; browse_website answers the question with it
- search: a SearchProvider; optional, web_search builds one from the settings without it
- spent: the run's BudgetSpent; optional, browse_website charges its model calls to it
"""

from __future__ import annotations

import asyncio
import codecs
import json
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Annotated, Any, Literal, Protocol, runtime_checkable
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx2
from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError, ConfigError, ModelRefused, OutputInvalid
from autonoma.llm import Model
from autonoma.runtime.budget import BudgetSpent
from autonoma.templating import render
from autonoma.tools.base import Risk, Tool, ToolContext, ToolResult, tool
from autonoma.tools.egress import EgressGuard, EgressRefused

USER_AGENT = "autonoma/0.1 (an autonomous agent; https://github.com/autonoma)"
# Only encodings we can decompress a bounded amount at a time (a 50 KB gzip bomb must not
# become 50 MB in memory).
ACCEPT_ENCODING = "gzip, deflate"


class WebError(AutonomaError):
    """A web tool could not do its work (the message says why and what to try)."""


class SearchFailed(WebError):
    """The search provider gave no results because it failed."""


class FetchFailed(WebError):
    """A URL could not be fetched, or what came back cannot be read."""


# -- what the tools need from the run -------------------------------------------------------


def egress_of(context: ToolContext) -> EgressGuard:
    """The run's EgressGuard."""
    if context.egress is None:
        raise WebError(
            "the web tools are not set up for this run (no egress guard in the tool context); "
            "run with the web tools enabled"
        )
    return context.egress


def model_of(context: ToolContext) -> Model:
    """The run's Model."""
    if context.model is None:
        raise WebError(
            "browse_website needs the run's model (ToolContext.model) to read a page, and this "
            "run has none in its tool context"
        )
    return context.model


def spent_of(context: ToolContext) -> BudgetSpent | None:
    """What the run has spent, if the context carries it."""
    return context.spent


def search_of(context: ToolContext) -> SearchProvider:
    """The context's search provider if it has one, else the one the run's WebSettings
    choose."""
    if context.search is None:
        return search_provider(egress_of(context))
    if not isinstance(context.search, SearchProvider):
        kind = type(context.search).__name__
        raise WebError(f"ToolContext.search is a {kind}, not a SearchProvider")
    return context.search


# -- fetching ------------------------------------------------------------------------------


@dataclass
class Fetched:
    """A response, its body read up to the cap (and decompressed, within the cap)."""

    url: str  # where it came from in the end, after redirects
    status: int
    reason: str
    headers: httpx2.Headers
    body: bytes
    truncated: bool  # the body went on past max_bytes and was not read further
    redirects: list[str] = field(default_factory=list)  # the URLs that redirected, in order

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str:
        found = re.search(r"charset=[\"']?([\w.:-]+)", self.headers.get("content-type", ""), re.I)
        if found:
            try:
                return codecs.lookup(found.group(1)).name
            except LookupError:
                pass
        return "utf-8"

    def text(self) -> str:
        return self.body.decode(self.charset, errors="replace")


class _Decoder:
    """Content-Encoding undone a bounded amount at a time."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._zlib: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
            self._raw_deflate_tried = False
        elif encoding not in ("", "identity"):
            raise FetchFailed(
                f"the server sent its body {encoding}-encoded although only {ACCEPT_ENCODING} "
                "was accepted; it cannot be read safely"
            )

    def feed(self, data: bytes, limit: int) -> bytes:
        """At most `limit` bytes of decoded output from `data` (more input than that needs
        stays unread; the caller stops at the cap)."""
        if self._zlib is None:
            return data[:limit]
        try:
            return bytes(self._zlib.decompress(data, limit))
        except zlib.error as error:
            if self.encoding == "deflate" and not self._raw_deflate_tried:
                self._raw_deflate_tried = True  # some servers send raw deflate, no zlib header
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, limit)
            broken = f"the body's {self.encoding} compression is broken: {error}"
            raise FetchFailed(broken) from None


async def _read_capped(response: httpx2.Response, cap: int) -> tuple[bytes, bool]:
    """The body, decoded, up to `cap` bytes, and whether there was more. Never holds more
    than the cap plus one network read, however large the body or its compression ratio."""
    decoder = _Decoder(response.headers.get("content-encoding", "").strip().lower())
    body = bytearray()
    async for raw in response.aiter_raw():
        room = cap - len(body)
        piece = decoder.feed(raw, room + 1)
        if len(piece) > room:
            body += piece[:room]
            return bytes(body), True
        body += piece
    return bytes(body), False


def _check_url(url: str) -> httpx2.URL:
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL as error:
        raise FetchFailed(f"{url!r} is not a valid URL: {error}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise FetchFailed(f"only http:// and https:// URLs can be fetched, not {url!r}")
    return parsed


async def fetch(
    guard: EgressGuard,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: str | bytes | None = None,
    params: dict[str, str] | None = None,
) -> Fetched:
    """Send one request through the guard (each redirect's connection checked again) and
    read the response under the settings' caps: body size, total time, redirects.
    EgressRefused when an address is off limits; FetchFailed for everything else."""
    settings = guard.settings
    _check_url(url)
    sent = {"user-agent": USER_AGENT}
    for name, value in (headers or {}).items():
        sent[name.lower()] = value
    sent["accept-encoding"] = ACCEPT_ENCODING  # not the caller's: see _Decoder
    try:
        async with asyncio.timeout(settings.timeout_s), guard.client() as client:
            request = client.build_request(method, url, headers=sent, content=body, params=params)
            response = await client.send(request, stream=True)
            try:
                data, truncated = await _read_capped(response, settings.max_bytes)
            finally:
                await response.aclose()
    except TimeoutError:
        raise FetchFailed(f"{url} did not answer in full within {settings.timeout_s:g}s") from None
    except httpx2.TooManyRedirects:
        raise FetchFailed(
            f"{url} redirected more than {settings.max_redirects} times; giving up"
        ) from None
    except httpx2.UnsupportedProtocol as error:
        raise FetchFailed(f"{url} led to a URL that cannot be fetched: {error}") from None
    except httpx2.HTTPError as error:
        raise FetchFailed(f"could not fetch {url}: {type(error).__name__}: {error}") from None
    return Fetched(
        url=str(response.url),
        status=response.status_code,
        reason=response.reason_phrase,
        headers=response.headers,
        body=data,
        truncated=truncated,
        redirects=[str(r.url) for r in response.history],
    )


def _failure(error: Exception, asked: str = "") -> ToolResult:
    """A failed fetch as the model sees it. Untrusted, since the message may quote what a
    server sent (a redirect's target, a protocol error), unless it is the guard refusing the
    very address asked for (`asked`, the URL the model gave): nothing was fetched then, and
    later writes must not wait for a person on its account."""
    said = f"error: {type(error).__name__}: {error}"
    if isinstance(error, EgressRefused) and asked:
        host = (urlsplit(asked).hostname or "").lower()
        if host and host in (error.host.lower(), error.address.lower()):
            return ToolResult(False, said)
    return ToolResult(False, said, untrusted=True)


# -- search --------------------------------------------------------------------------------


class SearchResult(BaseModel):
    title: str
    url: str
    snippet: str = ""


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


DdgsText = Callable[[str, int], list[dict[str, Any]]]
"""ddgs's text search: query and max_results in, result dicts (title, href, body) out."""


def _ddgs_text(timeout_s: float) -> DdgsText:
    def text(query: str, max_results: int) -> list[dict[str, Any]]:
        from ddgs import DDGS

        rows: list[dict[str, Any]] = DDGS(timeout=max(1, int(timeout_s))).text(
            query, max_results=max_results
        )
        return rows

    return text


class DdgsSearch:
    """Metasearch with ddgs (no API key). ddgs talks to fixed public search engines with its
    own HTTP client; the guard governs the URLs the agent fetches, not those."""

    name = "ddgs"

    def __init__(self, text: DdgsText | None = None, *, timeout_s: float = 20) -> None:
        self._text = text or _ddgs_text(timeout_s)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            rows = await asyncio.to_thread(self._text, query, max_results)
        except Exception as error:
            if "no results" in str(error).lower():
                return []
            raise SearchFailed(
                f"web search (ddgs) failed: {type(error).__name__}: {error}. It needs the "
                "public search engines to be reachable: check the internet connection, try "
                "again later, or use a SearxNG instance (WebSettings search='searxng')."
            ) from error
        results = []
        for row in rows[:max_results]:
            url = str(row.get("href") or row.get("url") or "")
            if url:
                results.append(
                    SearchResult(
                        title=str(row.get("title") or url),
                        url=url,
                        snippet=str(row.get("body") or row.get("snippet") or ""),
                    )
                )
        return results


class SearxngSearch:
    """A SearxNG instance's JSON API (its settings.yml must list `json` in search.formats).
    The instance is the person's choice, so its host passes the guard even when private."""

    name = "searxng"

    def __init__(self, url: str, guard: EgressGuard) -> None:
        self.url = url.rstrip("/")
        self.guard = guard.also_allowing(_check_url(url).host)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        endpoint = f"{self.url}/search"
        try:
            page = await fetch(
                self.guard,
                "GET",
                endpoint,
                params={"q": query, "format": "json"},
                headers={"accept": "application/json"},
            )
        except (FetchFailed, EgressRefused) as error:
            raise SearchFailed(f"SearxNG at {self.url} could not be reached: {error}") from error
        if page.status != 200:
            hint = " (is json in search.formats of its settings.yml?)" if page.status == 403 else ""
            raise SearchFailed(
                f"SearxNG at {self.url} answered HTTP {page.status} {page.reason}{hint}"
            )
        try:
            data = json.loads(page.text())
            rows = data["results"]
            assert isinstance(rows, list)
        except (ValueError, KeyError, TypeError, AssertionError):
            raise SearchFailed(f"SearxNG at {self.url} did not answer with its JSON") from None
        results = []
        for row in rows:
            if isinstance(row, dict) and row.get("url"):
                results.append(
                    SearchResult(
                        title=str(row.get("title") or row["url"]),
                        url=str(row["url"]),
                        snippet=str(row.get("content") or ""),
                    )
                )
        return results[:max_results]


def search_provider(guard: EgressGuard) -> SearchProvider:
    """The provider the guard's WebSettings choose."""
    settings = guard.settings
    if settings.search == "searxng":
        if not settings.searxng_url:
            raise ConfigError("search is 'searxng' but no searxng_url is set in the web settings")
        return SearxngSearch(settings.searxng_url, guard)
    return DdgsSearch(timeout_s=settings.timeout_s)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


Query = Annotated[str, Field(min_length=1, max_length=400)]


@tool(risk=Risk.NETWORK, timeout_s=60)
async def web_search(context: ToolContext, query: Query) -> ToolResult:
    """Search the web. Gives each result's title, URL and a snippet; browse_website reads one.

    Args:
        query: what to search for, in a few words
    """
    provider = search_of(context)
    count = egress_of(context).settings.search_results
    try:
        results = await provider.search(query, count)
    except SearchFailed as error:
        return ToolResult(False, f"error: SearchFailed: {error}", untrusted=True)
    if not results:
        return ToolResult(True, f"no results for {query!r}", untrusted=True)
    lines = [f"{len(results)} results for {query!r} ({provider.name}):"]
    for n, result in enumerate(results, 1):
        lines.append(f"{n}. {_one_line(result.title, 150)}\n   {result.url}")
        if result.snippet:
            lines.append(f"   {_one_line(result.snippet, 300)}")
    return ToolResult(True, "\n".join(lines), untrusted=True)


# -- browsing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    url: str
    text: str


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.found: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "base" and values.get("href") and self.base is None:
            self.base = values["href"]
        elif tag == "a" and values.get("href"):
            self._href, self._text = values["href"], []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.found.append((self._href, " ".join("".join(self._text).split())))
            self._href = None


def links_of(html: str, url: str, limit: int) -> tuple[list[Link], int]:
    """The page's http(s) links, absolute and without fragments, each once: the first
    `limit` of them and how many there are."""
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    base = urljoin(url, parser.base) if parser.base else url
    seen: dict[str, Link] = {}
    for href, text in parser.found:
        target = urldefrag(urljoin(base, href.strip())).url
        if target.startswith(("http://", "https://")) and target not in seen:
            seen[target] = Link(target, _one_line(text, 80))
    links = list(seen.values())
    return links[:limit], len(links)


_HTML_TYPES = ("text/html", "application/xhtml+xml")


def page_text(page: Fetched, max_links: int) -> tuple[str, list[Link], int]:
    """The main text of a page (trafilatura; its plain text when that finds no main part),
    its links and how many links there are. Plain text and JSON are taken as they are."""
    import trafilatura

    kind = page.content_type
    text = page.text()
    looks_html = not kind and text.lstrip()[:1] == "<"
    if kind in _HTML_TYPES or looks_html:
        main = trafilatura.extract(text, url=page.url, favor_recall=True, include_tables=True)
        if not main:
            main = trafilatura.html2txt(text)
        links, total = links_of(text, page.url, max_links)
        return str(main or ""), links, total
    if kind.startswith("text/") or "json" in kind or "xml" in kind or not kind:
        return text, [], 0
    raise FetchFailed(f"{page.url} is {kind}, not a page with text to read")


def chunks_of(text: str, size: int) -> list[str]:
    """`text` in pieces of at most `size` characters, cut between paragraphs where possible,
    else between words."""
    pieces: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in text.splitlines()):
        if not paragraph:
            continue
        while len(paragraph) > size:  # a paragraph longer than a chunk: cut between words
            cut = paragraph.rfind(" ", 0, size)
            cut = cut if cut > size // 2 else size
            if current:
                pieces.append(current)
                current = ""
            pieces.append(paragraph[:cut].strip())
            paragraph = paragraph[cut:].strip()
        if current and len(current) + 1 + len(paragraph) > size:
            pieces.append(current)
            current = ""
        current = f"{current}\n{paragraph}" if current else paragraph
    if current:
        pieces.append(current)
    return pieces


_WORD = re.compile(r"[^\W_]{3,}")


def most_relevant(chunks: Sequence[str], question: str, keep: int) -> list[int]:
    """The indexes of the `keep` chunks sharing most words with the question, in page order
    (ties go to the earlier chunk)."""
    if len(chunks) <= keep:
        return list(range(len(chunks)))
    asked = {w.lower() for w in _WORD.findall(question)}

    def score(i: int) -> tuple[int, int]:
        words = [w.lower() for w in _WORD.findall(chunks[i])]
        return (sum(1 for w in words if w in asked), -i)

    best = sorted(range(len(chunks)), key=score, reverse=True)[:keep]
    return sorted(best)


class ChunkAnswer(BaseModel):
    """What the model makes of one part of a page. The answer comes first: a small model
    that must first decide whether the text answers tends to decide wrongly (measured on
    SmolLM2-135M: with `found` first it said false beside a right answer)."""

    answer: str = Field(max_length=1000, description="the answer, from this text only")
    found: bool = Field(description="true if this text answers the question")


@dataclass
class PageAnswer:
    text: str
    found: bool
    chunks_read: int
    chunks: int


def _charge(spent: BudgetSpent | None, prompt: int, completion: int, usd: float) -> None:
    if spent is not None:
        spent.charge(prompt, completion, usd)


async def answer_from_page(
    model: Model,
    question: str,
    text: str,
    *,
    url: str,
    chunk_chars: int,
    max_chunks: int,
    spent: BudgetSpent | None = None,
) -> PageAnswer:
    """Answer `question` from a page's text as AutoGPT's browse did: the model answers from
    each chunk (the `max_chunks` most relevant, when there are more), then, when several
    chunks held an answer, combines them. Every call is charged to `spent`."""
    chunks = chunks_of(text, chunk_chars)
    chosen = most_relevant(chunks, question, max_chunks)

    async def read(i: int) -> ChunkAnswer | None:
        prompt = render(
            "autonoma.tools",
            "browse_chunk.j2",
            url=url,
            question=question,
            text=chunks[i],
            part=i + 1,
            parts=len(chunks),
        )
        try:
            response = await model.request(
                [{"role": "user", "content": prompt}],
                output=ChunkAnswer,
                max_tokens=300,
                temperature=0.0,
            )
        except (OutputInvalid, ModelRefused) as error:
            _charge(spent, error.prompt_tokens, error.completion_tokens, error.cost_usd)
            return None
        usage = response.usage
        _charge(spent, usage.prompt_tokens, usage.completion_tokens, response.cost_usd)
        answer: ChunkAnswer = response.data
        return answer if answer.found and answer.answer.strip() else None

    answers = [a for a in await asyncio.gather(*(read(i) for i in chosen)) if a is not None]
    notes = [a.answer.strip() for a in answers]
    if not notes:
        return PageAnswer("", False, len(chosen), len(chunks))
    if len(notes) == 1:
        return PageAnswer(notes[0], True, len(chosen), len(chunks))
    prompt = render("autonoma.tools", "browse_combine.j2", url=url, question=question, notes=notes)
    try:
        response = await model.request(
            [{"role": "user", "content": prompt}], max_tokens=400, temperature=0.0
        )
    except (OutputInvalid, ModelRefused) as error:
        _charge(spent, error.prompt_tokens, error.completion_tokens, error.cost_usd)
        return PageAnswer("\n".join(notes), True, len(chosen), len(chunks))
    usage = response.usage
    _charge(spent, usage.prompt_tokens, usage.completion_tokens, response.cost_usd)
    combined = response.text.strip() or "\n".join(notes)
    return PageAnswer(combined, True, len(chosen), len(chunks))


Question = Annotated[str, Field(min_length=1, max_length=500)]


@tool(risk=Risk.NETWORK, timeout_s=300)
async def browse_website(context: ToolContext, url: str, question: Question) -> ToolResult:
    """Read a web page and answer a question from its text; also lists the page's links.

    Args:
        url: the page's address (http:// or https://)
        question: what you want to learn from the page
    """
    guard = egress_of(context)
    model = model_of(context)
    settings = guard.settings
    _check_url(url)
    try:
        page = await fetch(
            guard,
            "GET",
            url,
            headers={"accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"},
        )
        if page.status >= 400:
            raise FetchFailed(f"{page.url} answered HTTP {page.status} {page.reason}")
        text, links, total_links = await asyncio.to_thread(page_text, page, settings.max_links)
    except (FetchFailed, EgressRefused) as error:
        return _failure(error, url)
    notes = []
    if page.redirects:
        notes.append(f"redirected to {page.url}")
    if page.truncated:
        notes.append(f"only the first {settings.max_bytes} bytes were read")
    if not text.strip():
        answer = PageAnswer("", False, 0, 0)
        said = "The page has no readable text."
    else:
        answer = await answer_from_page(
            model,
            question,
            text,
            url=page.url,
            chunk_chars=settings.chunk_chars,
            max_chunks=settings.max_chunks,
            spent=spent_of(context),
        )
        said = answer.text if answer.found else "The page does not seem to answer this question."
        if answer.chunks_read < answer.chunks:
            notes.append(f"read the {answer.chunks_read} of {answer.chunks} parts most relevant")
    head = f"Answer from {page.url}" + (f" ({'; '.join(notes)})" if notes else "") + ":"
    lines = [head, said]
    if links:
        more = f", first {len(links)} of {total_links}" if total_links > len(links) else ""
        lines.append(f"\nLinks on the page{more}:")
        lines.extend(f"- {link.text or '(no text)'}: {link.url}" for link in links)
    else:
        lines.append("\nNo links on the page.")
    return ToolResult(True, "\n".join(lines), untrusted=True)


# -- HTTP APIs -----------------------------------------------------------------------------

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

_TEXT_TYPES = ("json", "xml", "javascript", "x-www-form-urlencoded", "yaml", "csv")
_SHOWN_HEADERS = 30


def _is_text(page: Fetched) -> bool:
    kind = page.content_type
    if kind.startswith("text/") or any(t in kind for t in _TEXT_TYPES):
        return True
    if kind:
        return False
    try:
        page.body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@tool(risk=Risk.NETWORK, timeout_s=60)
async def http_request(
    context: ToolContext,
    method: Method,
    url: str,
    headers: dict[str, str] | None = None,
    body: str = "",
) -> ToolResult:
    """Send an HTTP request to an API and give back the status, headers and body.

    Args:
        method: the HTTP method
        url: the full URL (http:// or https://), query string included
        headers: request headers, such as {"Content-Type": "application/json"}
        body: the request body as text (JSON, say); empty for none
    """
    guard = egress_of(context)
    settings = guard.settings
    _check_url(url)
    try:
        page = await fetch(guard, method, url, headers=headers, body=body.encode() or None)
    except (FetchFailed, EgressRefused) as error:
        return _failure(error, url)
    lines = [f"HTTP {page.status} {page.reason}".rstrip()]
    if page.redirects:
        lines[0] += f" from {page.url} (redirected from {page.redirects[0]})"
    shown = list(page.headers.items())
    for name, value in shown[:_SHOWN_HEADERS]:
        lines.append(f"{name}: {_one_line(value, 300)}")
    if len(shown) > _SHOWN_HEADERS:
        lines.append(f"[{len(shown) - _SHOWN_HEADERS} more headers not shown]")
    lines.append("")
    size = len(page.body)
    if not page.body:
        lines.append("(empty body)")
    elif not _is_text(page):
        lines.append(f"[binary body: {size} bytes of {page.content_type}, not shown]")
    else:
        text = page.text()
        lines.append(text[: settings.output_chars])
        if len(text) > settings.output_chars:
            lines.append(f"[body cut at {settings.output_chars} of {len(text)} characters]")
    if page.truncated:
        lines.append(f"[the body went on past {settings.max_bytes} bytes and was not read further]")
    return ToolResult(page.status < 400, "\n".join(lines), untrusted=True)


WEB_TOOLS: list[Tool] = [web_search, browse_website, http_request]
