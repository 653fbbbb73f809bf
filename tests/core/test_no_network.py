"""The network guard of tests/conftest.py works: a test fails if code tries to connect."""

from __future__ import annotations

import socket

import pytest


def test_outside_connections_are_refused(_no_network: list[object]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(OSError, match="network connection"):
            sock.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed; the guard fires first
    with pytest.raises(OSError, match="resolve the host name"):
        socket.create_connection(("example.org", 443), timeout=0.1)
    assert _no_network == [("192.0.2.1", 80), "example.org"]  # recorded: swallowing won't hide it
    _no_network.clear()  # this test's own attempts were expected


def test_loopback_and_unix_sockets_are_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
    left, right = socket.socketpair()
    left.close()
    right.close()
