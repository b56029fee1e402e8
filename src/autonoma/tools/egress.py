"""The egress guard: every connection the web tools open goes to an address that was checked.

A URL's host is resolved once, every address it resolves to is checked, and the connection
is made to a checked address itself (never to the name, which a second lookup could rebind
to another address); the connected peer is checked again. Because the check sits where
connections are opened, it holds for every redirect and every new host alike.

By default the guard refuses loopback, private, link-local, shared (carrier-grade NAT),
multicast, reserved and unspecified addresses, IPv4 addresses hidden in IPv6 forms (mapped,
6to4, Teredo, NAT64), and the cloud metadata addresses. `WebSettings.allow` lets chosen
hosts, addresses or networks through; a metadata address only passes when it is listed
itself, never as part of a wider network or host.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from ipaddress import (
    IPv4Address,
    IPv4Network,
    IPv6Address,
    IPv6Network,
    ip_address,
    ip_network,
)
from typing import Any

import httpcore2
import httpx2

from autonoma.errors import AutonomaError
from autonoma.tools.settings import WebSettings

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Turns a host name and port into address strings (what getaddrinfo does); injectable so
tests can map names to the addresses they need."""

# Where clouds serve instance credentials: AWS, GCP, Azure and OpenStack (169.254.169.254),
# AWS ECS tasks, Azure's wire server, Alibaba, AWS over IPv6, Oracle.
METADATA_ADDRESSES: frozenset[Address] = frozenset(
    ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "168.63.129.16",
        "100.100.100.200",
        "fd00:ec2::254",
        "192.0.0.192",
    )
)

_NAT64 = ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ip_network("::/96")  # deprecated ::a.b.c.d


class EgressRefused(AutonomaError):
    """A web tool was about to connect to an address the guard does not let through."""

    def __init__(self, host: str, address: str, reason: str, *, why: str = "") -> None:
        shown = host if host == address else f"{host} ({address})"
        why = why or (
            f"it is a {reason} address, which the web tools may not reach (it could expose "
            "this machine, its network or cloud credentials)"
        )
        names = f'"{address}"' if host == address else f'"{address}" or "{host}"'
        super().__init__(
            f"refused to connect to {shown}: {why}. If it is meant to be reachable, the "
            f"person can add {names} to the web allowlist (--allow-host, or web.allow in the "
            "tool settings)."
        )
        self.host = host
        self.address = address
        self.reason = reason


def _embedded_ipv4(address: IPv6Address) -> list[IPv4Address]:
    """IPv4 addresses an IPv6 address stands for (mapped, compatible, 6to4, Teredo, NAT64)."""
    found: list[IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        found.append(IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def forbidden_reason(address: Address) -> str | None:
    """Why the guard refuses `address` by default ("loopback", "private", ...), or None
    for a public address."""
    if isinstance(address, IPv6Address) and address.scope_id:
        address = IPv6Address(str(address).split("%", 1)[0])
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    if isinstance(address, IPv6Address):
        for inner in _embedded_ipv4(address):
            reason = forbidden_reason(inner)
            if reason is not None:
                return f"{reason} (IPv4 {inner} inside IPv6)"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("site-local", isinstance(address, IPv6Address) and address.is_site_local),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    )
    for reason, applies in checks:
        if applies:
            return reason
    if not address.is_global:
        return "non-public"  # 100.64.0.0/10 (shared, carrier-grade NAT) and the like
    return None


@dataclass(frozen=True)
class _Allowlist:
    hosts: frozenset[str]  # exact names
    suffixes: tuple[str, ...]  # "*.example.org" -> ".example.org"
    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, entries: Iterable[str]) -> _Allowlist:
        hosts: set[str] = set()
        suffixes: list[str] = []
        networks: list[Network] = []
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if entry.startswith("[") and entry.endswith("]"):
                entry = entry[1:-1]
            if not entry:
                continue
            try:
                networks.append(ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                suffixes.append(entry[1:])
            else:
                hosts.add(entry)
        return cls(frozenset(hosts), tuple(suffixes), tuple(networks))

    def host(self, host: str) -> bool:
        return host in self.hosts or any(host.endswith(s) for s in self.suffixes)

    def address(self, address: Address) -> bool:
        return any(address in network for network in self.networks)

    def exactly(self, address: Address) -> bool:
        return any(n.num_addresses == 1 and address in n for n in self.networks)


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses getaddrinfo gives for `host` (numeric forms like 2130706433 included)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _normal_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def _literal(host: str) -> Address | None:
    try:
        return ip_address(host.replace("%25", "%"))
    except ValueError:
        return None


class EgressGuard:
    """Decides which addresses the web tools may connect to, and makes HTTP clients that
    connect nowhere else. One per run, built from the run's WebSettings."""

    def __init__(
        self,
        settings: WebSettings,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """`ssl_context`: how HTTPS certificates are verified; default, against the system's
        (certifi's) CA certificates, by host name."""
        self.settings = settings
        self.resolver: Resolver = resolver or system_resolver
        self._allow = _Allowlist.parse(settings.allow)
        self._ssl_context = ssl_context

    def also_allowing(self, *entries: str) -> EgressGuard:
        """A guard like this one that also lets `entries` through (a SearxNG instance the
        person configured, say)."""
        settings = self.settings.model_copy(update={"allow": [*self.settings.allow, *entries]})
        return EgressGuard(settings, resolver=self.resolver, ssl_context=self._ssl_context)

    def refusal(self, host: str, address: Address) -> str | None:
        """Why a connection to `address` (which `host` resolved to) is refused, or None."""
        reason = forbidden_reason(address)
        if reason is None:
            return None
        if reason == "cloud metadata":
            return None if self._allow.exactly(address) else reason
        if self._allow.address(address) or self._allow.host(_normal_host(host)):
            return None
        return reason

    async def resolve(self, host: str, port: int) -> list[Address]:
        """Every address `host` resolves to, once, each checked. EgressRefused if any of them
        is refused (a name that points inside is not trusted for its other addresses);
        httpcore2.ConnectError if the name does not resolve."""
        name = _normal_host(host)
        literal = _literal(name)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                found = await self.resolver(name, port)
            except OSError as error:
                raise httpcore2.ConnectError(f"could not resolve {name}: {error}") from error
            addresses = []
            for text in found:
                address = _literal(text)
                if address is None:
                    raise httpcore2.ConnectError(f"{name} resolved to {text!r}, not an address")
                if address not in addresses:
                    addresses.append(address)
            if not addresses:
                raise httpcore2.ConnectError(f"could not resolve {name}: no addresses")
        for address in addresses:
            reason = self.refusal(name, address)
            if reason is not None:
                raise EgressRefused(name, name if literal else str(address), reason)
        return addresses

    def transport(self) -> httpx2.AsyncBaseTransport:
        """An httpx2 transport whose every connection passes this guard."""
        if self._ssl_context is None:  # made once: loading the CA certificates takes ~25 ms
            self._ssl_context = httpx2.create_ssl_context(trust_env=False)
        return GuardedTransport(self, self._ssl_context)

    def client(self, **options: Any) -> httpx2.AsyncClient:
        """An httpx2 client that follows up to `max_redirects` redirects, with the settings'
        timeout, no proxies from the environment (a proxy would resolve names itself), and
        every connection (so every redirect to a new host) through the guard."""
        options.setdefault("timeout", self.settings.timeout_s)
        options.setdefault("follow_redirects", True)
        options.setdefault("max_redirects", self.settings.max_redirects)
        return httpx2.AsyncClient(transport=self.transport(), trust_env=False, **options)


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """Opens TCP connections only to addresses the guard has checked, by address."""

    def __init__(self, guard: EgressGuard, inner: httpcore2.AsyncNetworkBackend | None = None):
        self.guard = guard
        self.inner = inner or httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                addresses = await self.guard.resolve(host, port)
        except TimeoutError as error:
            raise httpcore2.ConnectTimeout(f"resolving {host} timed out") from error
        failure: Exception | None = None
        for address in addresses:
            try:
                stream = await self.inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as error:
                failure = error
                continue
            await self._check_peer(stream, host, addresses)
            return stream
        assert failure is not None
        raise failure

    async def _check_peer(
        self, stream: httpcore2.AsyncNetworkStream, host: str, addresses: list[Address]
    ) -> None:
        """The socket really is connected to a checked address (belt and braces)."""
        peer = stream.get_extra_info("server_addr")
        text = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        address = _literal(text.split("%", 1)[0])
        plain = {_literal(str(a).split("%", 1)[0]) for a in addresses}
        if address is None or address not in plain:
            await stream.aclose()
            why = "the connection reached an address other than the one checked"
            raise EgressRefused(host, text or "unknown", "unchecked", why=why)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise EgressRefused(path, path, "unix socket", why="the web tools use TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's transport with a connection pool that opens connections through the guard
    (HTTP/1.1, certificates verified against the hostname as usual)."""

    def __init__(self, guard: EgressGuard, ssl_context: ssl.SSLContext) -> None:
        # Not super().__init__(): it would build a pool (and an SSL context, ~25 ms) that
        # this one replaces; the pool is all AsyncHTTPTransport keeps.
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context, network_backend=GuardedBackend(guard)
        )
