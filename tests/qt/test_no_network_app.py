"""Issue 7: the app never opens a network connection, not even to loopback.

tests/conftest.py refuses outside addresses in every test; here every Internet socket the app
tries to connect while the demo is opened, protected and painted
is recorded, loopback included, and there must be none.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from microgui.qt.main_window import MainWindow

RUN_TIMEOUT_MS = 120_000


def test_a_whole_session_opens_no_socket(
    demo_window: MainWindow, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    seen: list[object] = []
    guarded = socket.socket.connect  # already the outside-address guard of tests/conftest.py

    def connect(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            seen.append(address)
        guarded(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(demo_window.run_panel.spec())
    demo_window.grab()  # paint every view once
    assert seen == []
