"""A real HTTP server on a loopback address, run in a thread, for the web tools' tests.

Routes map a path to a function of the request that returns (status, headers, body); a body
may be an iterable of byte chunks, sent as they come (so a 50 MB body is never built). The
server records every request it gets and how many body bytes it managed to send."""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


Body = bytes | Iterable[bytes]
Reply = tuple[int, dict[str, str], Body]
Route = Callable[[Seen], Reply]


@dataclass
class WebServer:
    host: str = "127.0.0.1"
    tls: tuple[str, str] | None = None  # certificate and key files: serve HTTPS
    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    sent: int = 0  # body bytes written to sockets, over all requests

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- routes ---------------------------------------------------------------------------

    def page(
        self,
        path: str,
        body: str | bytes,
        *,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = lambda _: (
            status,
            {"Content-Type": content_type, **(headers or {})},
            data,
        )
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        self.routes[path] = lambda _: (status, {"Location": location}, b"")
        return self.url(path)

    def json(self, path: str, function: Callable[[Seen], Any], status: int = 200) -> str:
        self.routes[path] = lambda seen: (
            status,
            {"Content-Type": "application/json"},
            json.dumps(function(seen)).encode(),
        )
        return self.url(path)

    def endless(self, path: str, total: int, chunk: int = 1 << 20, declare: bool = True) -> str:
        """A body of `total` bytes made as it is sent."""

        def chunks() -> Iterator[bytes]:
            block = b"x" * chunk
            left = total
            while left > 0:
                yield block[: min(chunk, left)]
                left -= chunk

        headers = {"Content-Type": "text/plain"}
        if declare:
            headers["Content-Length"] = str(total)
        self.routes[path] = lambda _: (200, headers, chunks())
        return self.url(path)

    def gzip_bomb(self, path: str, total: int) -> str:
        """A small gzip body that inflates to `total` bytes."""
        data = gzip.compress(b"\0" * total, compresslevel=9)
        self.routes[path] = lambda _: (
            200,
            {"Content-Type": "text/plain", "Content-Encoding": "gzip"},
            data,
        )
        return self.url(path)

    # -- running --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]

    def __enter__(self) -> WebServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"",
                )
                with server._lock:
                    server.seen.append(seen)
                route = server.routes.get(parts.path)
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
                else:
                    status, headers, body = route(seen)
                self.send_response(status)
                chunks = [body] if isinstance(body, bytes) else body
                if isinstance(body, bytes) and "Content-Length" not in headers:
                    headers = {**headers, "Content-Length": str(len(body))}
                if "Content-Length" not in headers:
                    self.close_connection = True  # the end of the body is the end of the stream
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command == "HEAD":
                    return
                try:
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        with server._lock:
                            server.sent += len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in self.host else socket.AF_INET

        self._server = Server((self.host, 0), Handler)
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
