"""Cyclic garbage is collected in the GUI thread while a window lives (microgui/qt/gui_gc.py).

The deadlock it prevents: a worker thread's automatic collection destroyed a Qt object (Qt's
mutex held, waiting for the GIL) while the GUI thread (GIL held) waited for that mutex.
"""

from __future__ import annotations

import gc
import threading

from microgui.qt import gui_gc
from microgui.qt.main_window import MainWindow


class _Cycle:
    def __init__(self, seen: list[str]) -> None:
        self.me = self
        self.seen = seen

    def __del__(self) -> None:
        self.seen.append(threading.current_thread().name)


def test_garbage_made_in_a_worker_is_collected_in_the_gui_thread(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    assert gui_gc.active() and not gc.isenabled()
    seen: list[str] = []
    kept: list[list[object]] = []

    def work() -> None:
        for _ in range(50):
            _Cycle(seen)
        # live containers past the youngest generation's threshold (700): automatic collection,
        # were it on, would run here, in the worker
        kept.extend([] for _ in range(5 * gc.get_threshold()[0]))

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()
    assert seen == []  # nothing collected in the worker
    qtbot.waitUntil(lambda: len(seen) == 50, timeout=5_000)
    assert set(seen) == {threading.main_thread().name}


def test_closing_the_last_window_gives_automatic_collection_back(qtbot) -> None:  # type: ignore[no-untyped-def]
    from microgui.qt.settings import UiSettings

    first, second = MainWindow(UiSettings()), MainWindow(UiSettings())
    for win in (first, second):
        qtbot.addWidget(win)
    assert not gc.isenabled()
    first.close()
    assert not gc.isenabled()  # the other window still lives
    second.close()
    assert gc.isenabled() and not gui_gc.active()


class _FakeGc:
    """gc's counters, set by the test; records the collections asked for."""

    def __init__(self, count: tuple[int, int, int], oldest: int) -> None:
        self.count, self.oldest, self.collected = count, oldest, []  # type: ignore[var-annotated]

    def get_count(self) -> tuple[int, int, int]:
        return self.count

    def get_objects(self, generation: int) -> list[None]:
        assert generation == 2
        return [None] * self.oldest

    def collect(self, generation: int) -> int:
        self.collected.append(generation)
        return 0


def test_a_full_collection_waits_for_a_quarter_more_long_lived_objects(monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    """CPython's rule (Modules/gcmodule.c: long_lived_pending > long_lived_total / 4), which
    pyqtgraph's collector lacks: after a UCI Adult run a full collection holds the GUI thread
    ~200 ms (issue 29), so it waits until the oldest generation has grown by a quarter."""
    was_enabled = gc.isenabled()
    collector = gui_gc._Collector(interval=60.0)
    collector.timer.stop()
    if was_enabled:
        gc.enable()
    collector.threshold = (700, 10, 10)
    collector.long_lived_total = 1_000
    for count, oldest, expected in [
        ((100, 0, 0), 1_000, []),  # the youngest generation below its threshold: nothing
        ((701, 3, 0), 1_000, [0]),
        ((701, 11, 3), 1_000, [1]),
        ((701, 11, 11), 1_200, [1]),  # the oldest grew by a fifth: no full collection yet
        ((701, 11, 11), 1_300, [2]),  # by 30 %: a full one
    ]:
        fake = _FakeGc(count, oldest)
        monkeypatch.setattr(gui_gc, "gc", fake)
        collector.check()
        assert fake.collected == expected, (count, oldest)
    assert collector.long_lived_total == 1_300  # counted again after the full collection
