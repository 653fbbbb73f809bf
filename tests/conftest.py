"""Fixtures for every test: no network (issue 7), the state folder kept out of the user's home,
and deterministic hypothesis examples on CI.

microgui never opens a network connection. Every test runs with ``socket.connect`` (and so
``create_connection``) refusing any address outside the loopback range with :class:`NetworkUsed`;
the attempt is also recorded, so that a library that swallows the error still fails the test.
Unix sockets (the process pool's forkserver) and loopback (the Dask tests' LocalCluster on
127.0.0.1) stay allowed. Subprocesses are not covered: the pycanon cross-check builds its own venv
with pip on purpose, and says so.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from hypothesis import settings

# CI (CI=true) draws the same examples at every run, so that a landing never depends on luck;
# a developer's runs draw new ones and so keep finding cases (two were found that way).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", help="also run the tests marked slow (CI always does)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` are left out of a developer's run and run on CI (CI set in the
    environment, as ``.ci/run`` does), with ``--run-slow``, with a ``-m`` naming them, or when
    asked for by node id (``file.py::test``)."""
    if (
        os.environ.get("CI")
        or config.getoption("--run-slow")
        or "slow" in (config.getoption("-m") or "")
        or any("::" in str(arg) for arg in config.args)
    ):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


class NetworkUsed(OSError):
    """A test (or the code under it) tried to reach the network."""


def _is_loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) and address else address
    if not isinstance(host, str):
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: resolving it is already network use


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    attempts: list[object] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            attempts.append(address)
            raise NetworkUsed(f"test tried to open a network connection to {address!r}")

    def connect(sock: socket.socket, address: object) -> None:
        guard(sock, address)
        real_connect(sock, address)  # type: ignore[arg-type]

    def connect_ex(sock: socket.socket, address: object) -> int:
        guard(sock, address)
        return real_connect_ex(sock, address)  # type: ignore[arg-type]

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if not _is_loopback(host if not isinstance(host, bytes) else host.decode()):
            attempts.append(host)
            raise NetworkUsed(f"test tried to resolve the host name {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert not attempts, f"network use attempted: {attempts!r}"


@pytest.fixture(autouse=True)
def _isolated_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Autosaves and other state go to a temporary folder, never the user's."""
    monkeypatch.setenv("MICROGUI_STATE_DIR", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def register_method() -> Iterator[Callable[[Any], str]]:
    """Registers fake methods for one test: ``register_method(Method(...))`` returns the name;
    every method registered so leaves the registry when the test ends."""
    from microgui.core.methods import registered

    with ExitStack() as stack:
        yield lambda method: stack.enter_context(registered(method)).name
