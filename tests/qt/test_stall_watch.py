"""The opt-in watchdog of the GUI thread's stalls (microgui/qt/stall_watch.py, issue 30)."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from microgui.qt import stall_watch
from microgui.qt.stall_watch import StallWatch


def _blocks_the_gui_thread() -> None:
    time.sleep(0.5)  # the watchdog samples it (every 20 ms once 100 ms have passed)


def test_a_stall_is_recorded_with_the_gui_threads_stack(qtbot) -> None:  # type: ignore[no-untyped-def]
    watch = StallWatch(threshold_ms=100, log_stalls=False).start()
    try:
        qtbot.wait(50)
        QTimer.singleShot(0, _blocks_the_gui_thread)
        qtbot.waitUntil(lambda: any(s.ms >= 450 for s in watch.stalls), timeout=5_000)
    finally:
        watch.stop()
    stall = watch.longest()
    assert stall is not None and stall.ms >= 450
    frames = [frame for stack in stall.stacks for frame in stack]
    assert any(frame.endswith(" _blocks_the_gui_thread") for frame in frames)
    assert "GUI thread stalled" in stall.summary()


def test_off_unless_asked(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(stall_watch.ENV, raising=False)
    assert stall_watch.watch_from_environment() is None
    monkeypatch.setenv(stall_watch.ENV, "0")
    assert stall_watch.watch_from_environment() is None
    monkeypatch.setenv(stall_watch.ENV, "80")
    watch = stall_watch.watch_from_environment()
    assert watch is not None and watch.threshold_s == 0.08
    watch.stop()
