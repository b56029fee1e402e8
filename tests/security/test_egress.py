"""The egress guard against SSRF: loopback, private, link-local and cloud-metadata addresses
refused through browse_website and http_request, directly, through a redirect and through a
DNS name, in IPv6 and numeric forms; DNS rebinding; a 50 MB response and a gzip bomb capped.

Each refusal is asserted as the guard's own (EgressRefused in the tool's output), and where a
real server stands behind the forbidden address, as that server never being reached. (The
test suite's conftest also blocks sockets to anything but loopback, so a mere connection
failure would not prove the guard did its job.)"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator, Sequence
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest

from autonoma.llm import ScriptedModel
from autonoma.tools import Tool, ToolContext, ToolResult, Workspace
from autonoma.tools.egress import EgressGuard, EgressRefused, Resolver, forbidden_reason
from autonoma.tools.settings import WebSettings
from autonoma.tools.web import browse_website, fetch, http_request
from tests.tools.web_server import WebServer

PAGE = "<html><body><article><p>Allowed page text.</p></article></body></html>"


@pytest.fixture
def allowed() -> Iterator[WebServer]:
    """A server the tests allow (127.0.0.1)."""
    with WebServer("127.0.0.1") as server:
        server.page("/", PAGE)
        yield server


@pytest.fixture
def secret() -> Iterator[WebServer]:
    """A server standing where the guard must not go (127.0.0.2, loopback, not allowed)."""
    with WebServer("127.0.0.2") as server:
        server.page("/secret", "<html><body><p>the keys to the kingdom</p></body></html>")
        server.json("/latest/meta-data/iam", lambda _: {"AccessKeyId": "AKIA-SECRET"})
        yield server


def resolver_of(names: dict[str, Sequence[str]]) -> Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError(f"no such name: {host}")
        return list(names[host])

    return resolve


def context(
    tmp_path: Path,
    *,
    allow: Sequence[str] = (),
    resolver: Resolver | None = None,
    **settings: Any,
) -> ToolContext:
    guard = EgressGuard(WebSettings(allow=list(allow), **settings), resolver=resolver)
    model = ScriptedModel(lambda messages, request: {"found": True, "answer": "scripted"})
    return ToolContext(Workspace(tmp_path / "ws"), egress=guard, model=model)


async def call(tool: Tool, ctx: ToolContext, url: str) -> ToolResult:
    if tool is browse_website:
        return await tool.run(ctx, {"url": url, "question": "What is here?"})
    return await tool.run(ctx, {"method": "GET", "url": url})


def assert_refused(result: ToolResult, address: str | None = None) -> None:
    assert not result.ok
    assert "EgressRefused" in result.output, result.output
    assert "allowlist" in result.output
    if address is not None:
        assert address in result.output
    # outside content or not, by whose address it was: tests/tools/test_web.py


TOOLS = [pytest.param(browse_website, id="browse"), pytest.param(http_request, id="http")]


# -- directly ------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://192.168.1.1/admin", "192.168.1.1"),
        ("http://172.16.5.4/", "172.16.5.4"),
        ("http://100.64.0.1/", "100.64.0.1"),
        ("http://[fe80::1]/", "fe80::1"),
        ("http://[fc00::1]/", "fc00::1"),
        ("http://0.0.0.0:{port}/", "0.0.0.0"),
        ("http://224.0.0.1/", "224.0.0.1"),
    ],
)
async def test_forbidden_addresses_are_refused_directly(
    tool: Tool, url: str, address: str, tmp_path: Path, allowed: WebServer
) -> None:
    result = await call(tool, context(tmp_path), url.format(port=allowed.port))
    assert_refused(result, address)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1:{port}/", "127.0.0.1"),
        ("http://[::1]:{port}/", "::1"),
        ("http://[::ffff:127.0.0.1]:{port}/", "::ffff:127.0.0.1"),
        ("http://[::ffff:7f00:1]:{port}/", "::ffff:7f00:1"),
        ("http://2130706433:{port}/", "127.0.0.1"),  # decimal
        ("http://0x7f000001:{port}/", "127.0.0.1"),  # hex
        ("http://0x7f.1:{port}/", "127.0.0.1"),
        ("http://127.1:{port}/", "127.0.0.1"),
        ("http://localhost:{port}/", "127.0.0.1"),  # a DNS name, the system's resolver
        ("http://LOCALHOST.:{port}/", "127.0.0.1"),
    ],
)
async def test_loopback_in_every_form_is_refused_and_never_reached(
    tool: Tool, url: str, address: str, tmp_path: Path, allowed: WebServer
) -> None:
    """A real server listens on 127.0.0.1 (and ::1 reaches the same machine); with nothing
    allowed, none of these forms gets to it."""
    result = await call(tool, context(tmp_path), url.format(port=allowed.port))
    assert_refused(result, address)
    assert allowed.seen == []


# -- through a redirect --------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("target", "address"),
    [
        ("http://169.254.169.254/latest/meta-data/iam", "169.254.169.254"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://192.168.0.10:8080/", "192.168.0.10"),
        ("http://[::1]:{secret}/secret", "::1"),
        ("http://127.0.0.2:{secret}/secret", "127.0.0.2"),
        ("http://2130706434:{secret}/secret", "127.0.0.2"),
        ("http://[::ffff:127.0.0.2]:{secret}/secret", "::ffff:127.0.0.2"),
    ],
)
async def test_a_redirect_to_a_forbidden_address_is_refused(
    tool: Tool,
    target: str,
    address: str,
    tmp_path: Path,
    allowed: WebServer,
    secret: WebServer,
) -> None:
    start = allowed.redirect("/go", target.format(secret=secret.port))
    result = await call(tool, context(tmp_path, allow=["127.0.0.1"]), start)
    assert_refused(result, address)
    assert allowed.paths() == ["/go"]  # the allowed server was asked, and redirected
    assert secret.seen == []


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_redirect_chain_is_checked_at_every_hop(
    tool: Tool, tmp_path: Path, allowed: WebServer, secret: WebServer
) -> None:
    allowed.redirect("/a", allowed.url("/b"), status=301)
    allowed.redirect("/b", allowed.url("/c"), status=307)
    allowed.redirect("/c", secret.url("/secret"), status=308)
    result = await call(tool, context(tmp_path, allow=["127.0.0.1"]), allowed.url("/a"))
    assert_refused(result, "127.0.0.2")
    assert allowed.paths() == ["/a", "/b", "/c"]
    assert secret.seen == []


async def test_a_redirect_to_another_scheme_is_not_followed(
    tmp_path: Path, allowed: WebServer
) -> None:
    start = allowed.redirect("/file", "file:///etc/passwd")
    result = await call(http_request, context(tmp_path, allow=["127.0.0.1"]), start)
    assert not result.ok and "led to a URL that cannot be fetched" in result.output
    assert "root:" not in result.output


# -- through a DNS name --------------------------------------------------------------------

NAMES = {
    "intranet.example": ["127.0.0.2"],
    "metadata.example": ["169.254.169.254"],
    "private.example": ["10.1.2.3"],
    "v6.example": ["::1"],
    "mapped.example": ["::ffff:127.0.0.2"],
    # a name that also points inside is not trusted for its public address
    "mixed.example": ["93.184.215.14", "127.0.0.2"],
    "redirector.example": ["127.0.0.1"],
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("intranet.example", "127.0.0.2"),
        ("metadata.example", "169.254.169.254"),
        ("private.example", "10.1.2.3"),
        ("v6.example", "::1"),
        ("mapped.example", "127.0.0.2"),
        ("mixed.example", "127.0.0.2"),
    ],
)
async def test_a_name_resolving_to_a_forbidden_address_is_refused(
    tool: Tool, host: str, address: str, tmp_path: Path, allowed: WebServer, secret: WebServer
) -> None:
    ctx = context(tmp_path, allow=["127.0.0.1"], resolver=resolver_of(NAMES))
    result = await call(tool, ctx, f"http://{host}:{secret.port}/secret")
    assert_refused(result, address)
    assert host in result.output
    assert secret.seen == []


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_redirect_to_a_name_resolving_inside_is_refused(
    tool: Tool, tmp_path: Path, allowed: WebServer, secret: WebServer
) -> None:
    start = allowed.redirect("/go", f"http://intranet.example:{secret.port}/secret")
    ctx = context(tmp_path, allow=["127.0.0.1"], resolver=resolver_of(NAMES))
    result = await call(tool, ctx, start)
    assert_refused(result, "127.0.0.2")
    assert secret.seen == []


async def test_dns_rebinding_connects_to_the_address_that_was_checked(
    tmp_path: Path, allowed: WebServer, secret: WebServer
) -> None:
    """The name resolves to an allowed address when checked and to a forbidden one on any
    later lookup. The guard resolves once per connection and connects to what it checked."""
    answers = iter([["127.0.0.1"]] + [["127.0.0.2"]] * 10)
    lookups: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return next(answers)

    secret.page("/", "<p>secret</p>")
    ctx = context(tmp_path, allow=["127.0.0.1"], resolver=rebinding)
    result = await call(http_request, ctx, f"http://rebind.example:{allowed.port}/")
    assert result.ok, result.output
    assert "Allowed page text" in result.output
    assert lookups == ["rebind.example"]
    assert allowed.seen[0].headers["host"] == f"rebind.example:{allowed.port}"
    assert secret.seen == []


# -- the allowlist -------------------------------------------------------------------------


async def test_the_allowlist_lets_chosen_addresses_networks_and_names_through(
    tmp_path: Path, secret: WebServer
) -> None:
    url = secret.url("/secret")
    for allow in (["127.0.0.2"], ["127.0.0.0/8"], ["intranet.example"], ["*.example"]):
        ctx = context(tmp_path, allow=allow, resolver=resolver_of(NAMES))
        direct = await call(http_request, ctx, url)
        named = await call(http_request, ctx, f"http://intranet.example:{secret.port}/secret")
        assert named.ok, (allow, named.output)
        if allow[0][0].isdigit():
            assert direct.ok, (allow, direct.output)
        else:  # a name lets that name through, not the address by itself
            assert_refused(direct, "127.0.0.2")


async def test_metadata_addresses_pass_only_when_listed_themselves() -> None:
    wide = EgressGuard(WebSettings(allow=["169.254.0.0/16", "metadata.example"]))
    with pytest.raises(EgressRefused, match="cloud metadata"):
        await wide.resolve("169.254.169.254", 80)
    assert await wide.resolve("169.254.1.1", 80) == [ip_address("169.254.1.1")]
    named = EgressGuard(WebSettings(allow=["metadata.example"]), resolver=resolver_of(NAMES))
    with pytest.raises(EgressRefused, match="cloud metadata"):
        await named.resolve("metadata.example", 80)
    exact = EgressGuard(WebSettings(allow=["169.254.169.254"]))
    assert await exact.resolve("169.254.169.254", 80) == [ip_address("169.254.169.254")]


def test_the_refusal_names_the_address_and_how_to_allow_it() -> None:
    error = EgressRefused("intranet.example", "10.0.0.7", "private")
    text = str(error)
    assert "intranet.example (10.0.0.7)" in text
    assert "private address" in text
    assert '"10.0.0.7" or "intranet.example"' in text and "--allow-host" in text


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("192.168.0.1", "private"),
        ("172.31.255.255", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.170.2", "cloud metadata"),
        ("168.63.129.16", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%2", "link-local"),
        ("fc00::1", "private"),
        ("fec0::1", "site-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("100.64.0.1", "non-public"),
        ("::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("::ffff:169.254.169.254", "cloud metadata (IPv4 169.254.169.254 inside IPv6)"),
        ("::127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("2002:a00:1::", "private (IPv4 10.0.0.1 inside IPv6)"),  # 6to4
        ("64:ff9b::a9fe:a9fe", "cloud metadata (IPv4 169.254.169.254 inside IPv6)"),  # NAT64
        ("8.8.8.8", None),
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_forbidden_reasons(address: str, reason: str | None) -> None:
    assert forbidden_reason(ip_address(address)) == reason


async def test_a_name_that_does_not_resolve_is_a_plain_failure(tmp_path: Path) -> None:
    ctx = context(tmp_path, resolver=resolver_of({}))
    result = await call(http_request, ctx, "http://nowhere.example/")
    assert not result.ok and "could not resolve nowhere.example" in result.output


# -- huge responses ------------------------------------------------------------------------

FIFTY_MB = 50_000_000
CAP = 1_000_000


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
async def test_a_50_mb_response_is_capped_without_reading_it_all(
    declared: bool, tmp_path: Path, allowed: WebServer
) -> None:
    url = allowed.endless("/huge", FIFTY_MB, declare=declared)
    guard = EgressGuard(WebSettings(allow=["127.0.0.1"], max_bytes=CAP))
    tracemalloc.start()
    try:
        page = await fetch(guard, "GET", url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.truncated and len(page.body) == CAP
    assert peak < 8 * CAP  # the cap and a few network reads, never the 50 MB
    assert allowed.sent < FIFTY_MB // 4  # the rest was never even sent: the connection closed


@pytest.mark.parametrize("tool", TOOLS)
async def test_the_tools_say_a_huge_body_was_cut(
    tool: Tool, tmp_path: Path, allowed: WebServer
) -> None:
    url = allowed.endless("/huge", FIFTY_MB)
    result = await call(tool, context(tmp_path, allow=["127.0.0.1"], max_bytes=CAP), url)
    assert result.ok, result.output
    assert f"{CAP} bytes" in result.output
    assert len(result.output) < 30_000
    assert allowed.sent < FIFTY_MB // 4


async def test_a_gzip_bomb_inflates_no_further_than_the_cap(
    tmp_path: Path, allowed: WebServer
) -> None:
    url = allowed.gzip_bomb("/bomb", FIFTY_MB)
    guard = EgressGuard(WebSettings(allow=["127.0.0.1"], max_bytes=CAP))
    tracemalloc.start()
    try:
        page = await fetch(guard, "GET", url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.truncated and len(page.body) == CAP and set(page.body) == {0}
    assert peak < 8 * CAP


async def test_a_body_in_an_encoding_that_cannot_be_bounded_is_refused(
    tmp_path: Path, allowed: WebServer
) -> None:
    url = allowed.page("/br", b"\x1b\x00\x00", headers={"Content-Encoding": "br"})
    result = await call(http_request, context(tmp_path, allow=["127.0.0.1"]), url)
    assert not result.ok and "br-encoded" in result.output


async def test_a_slow_drip_is_cut_off_by_the_total_time_limit(
    tmp_path: Path, allowed: WebServer
) -> None:
    import time

    def drip() -> Iterator[bytes]:
        for _ in range(100):
            time.sleep(0.05)
            yield b"x"

    allowed.routes["/drip"] = lambda _: (200, {"Content-Type": "text/plain"}, drip())
    ctx = context(tmp_path, allow=["127.0.0.1"], timeout_s=0.5)
    result = await call(http_request, ctx, allowed.url("/drip"))
    assert not result.ok and "within 0.5s" in result.output
