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
