"""Shared fixtures. Any connection outside 127.0.0.1 is refused unless a test is marked
`remote_model`, so no test can call a real remote model by accident."""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autonoma.llm import LLMSettings
from tests.fake_openai import FakeOpenAI

_real_connect = socket.socket.connect

# A suite started as a background job of a non-interactive shell (`cmd &`) inherits SIGINT
# ignored, and so would every process it starts: the tests of Ctrl-C and of stopping Ray tasks
# would fail for the shell's reason, not autonoma's. Tests start with Ctrl-C's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _is_local(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # unix sockets
    host = address[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`make test` runs the suite on two workers), the tests of one real
    Ray cluster share a worker, so one cluster is started, not one per worker."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(autouse=True)
def _no_remote_calls(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("remote_model") or request.node.get_closest_marker(
        "network"
    ):
        return

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise ConnectionRefusedError(
                f"test tried to reach {address}; mark it remote_model if that is intended"
            )
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _sigint_kept(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that leaves SIGINT ignored in its worker makes every process started after it
    ignore Ctrl-C (SIG_IGN is inherited), and later tests of stopping fail far from the cause:
    the handler is put back, and the test that changed it fails with its name."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"{request.node.nodeid} left SIGINT's handler changed ({after!r})")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fast_settings() -> LLMSettings:
    """Short timeouts and backoffs so that failure paths finish quickly."""
    return LLMSettings(
        timeout_s=2.0,
        connect_timeout_s=1.0,
        first_byte_timeout_s=2.0,
        idle_timeout_s=2.0,
        max_attempts=3,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        max_retry_after_s=5.0,
    )


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """A real Ray on this machine (2 CPUs), started once by the Ray executor for every test
    that asks for it and stopped at the end; yields the address other processes join it by."""
    pytest.importorskip("ray")
    import ray

    from autonoma.runtime.executor.ray import RayExecutor

    starter = RayExecutor(num_cpus=2)
    starter.connect()
    port = ray.get_runtime_context().gcs_address.rsplit(":", 1)[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        starter.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Where a CLI test's AUTONOMA_HOME lies (created by the run)."""
    return tmp_path / "home"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    """An OpenAI-compatible server on 127.0.0.1; a test sets its `responder`."""
    with FakeOpenAI() as fake:
        yield fake
