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


def test_settle_frees_young_garbage_and_freezes_the_rest_until_the_last_window_goes(qtbot) -> None:  # type: ignore[no-untyped-def]
    """gui_gc.settle: a cycle that is garbage is freed (not frozen for ever); what lives is
    frozen (out of every full collection's scan) while a window lives, and in reach again after."""
    from microgui.qt.settings import UiSettings

    win = MainWindow(UiSettings())
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=5_000)  # the first look settles
    seen: list[str] = []
    _Cycle(seen)
    alive = [[] for _ in range(10)]
    gui_gc.settle()
    assert seen == [threading.main_thread().name]  # collected, in the GUI thread
    assert all(gc.is_tracked(x) for x in alive) and gc.get_freeze_count() > 0
    win.close()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_full_collection_only_by_cpythons_quarter_rule(window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The collector's full collections follow CPython's rule (gcmodule.c: long-lived objects
    promoted since the last full collection > a quarter of those it kept), not pyqtgraph's fixed
    rhythm of one per ten middle collections, which scanned ~210,000 objects (160-280 ms) in
    the GUI thread whatever the heap's growth."""
    collector = gui_gc._collector
    assert collector is not None
    collector.timer.stop()  # looks driven by the test
    collector.settled = True
    generations: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            generations.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        kept: list[list[object]] = []

        def looks(n: int) -> None:
            for _ in range(n):
                kept.extend([] for _ in range(gc.get_threshold()[0] + 10))
                collector.check()

        collector.long_lived_total = 10**9  # far more kept than will be promoted
        looks(15 * gc.get_threshold()[1])
        assert 1 in generations and 2 not in generations
        collector.long_lived_total = 0  # now any promotion is more than a quarter
        looks(15 * gc.get_threshold()[1])
        assert 2 in generations
    finally:
        gc.callbacks.remove(seen)
