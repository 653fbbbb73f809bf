"""Python's cyclic garbage collector runs in the GUI thread only, while a window is open.

Found in CI (two xdist workers hung for minutes, stacks read with ``py-spy --native``): a view's
analysis in a worker thread allocated, Python's automatic collector ran *in that thread*, freed a
cycle holding a Qt object and entered ``QObject::~QObject``, which took Qt's connection mutex and
then waited for the GIL to ask shiboken for a Python override; meanwhile the GUI thread, holding
the GIL, was destroying another widget and waited for that same mutex. Qt objects must be
destroyed in the thread they live in, and automatic collection picks whichever thread happens to
allocate. So while a main window exists, automatic collection is off and pyqtgraph's
:class:`~pyqtgraph.util.garbage_collector.GarbageCollector` collects on a timer in the GUI thread,
with the interpreter's own generation thresholds (the same collections, in the right thread).
When the last window goes, automatic collection is on again (tests and the command line).

How it collects keeps each pass short (issue 30: no GUI-thread stall above 100 ms); measured on
the demo (2 cores, loaded, rough): a full collection scans every tracked object of the process,
~210,000 after start-up (modules, Qt wrappers, pandas, numba), 160-280 ms each, and pyqtgraph's
collector ran one every tenth collection of the middle generation, whatever the heap's size.

- :class:`_Collector` looks every :data:`INTERVAL_S` (50 ms, was 250 ms: the young generations
  collected in smaller passes) and makes a full collection only by CPython's own rule
  (``gcmodule.c``: the objects promoted to the oldest generation since the last full
  collection exceed a quarter of those it kept), never as a fixed rhythm.
- :func:`settle` collects the young generations and freezes what survives
  (:func:`gc.freeze`) at points where the heap is made of long-lived objects: the second look
  after the window shows (the first is in the turn of its first paint), the end of the kernel
  preparation and of the window's first run (modules imported, kernels loaded). A full
  collection then scans only what came later (28-41 ms after three demo runs, from 160-280 ms).
  The cost: a cycle that was already garbage in the oldest generation at that moment is never
  freed (start-up objects: a bounded amount).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QTimer

__all__ = ["hold", "release", "reset", "active", "settle"]

#: How often the GUI thread looks at the collector's counts (seconds).
INTERVAL_S = 0.05


class _Collector:
    """Automatic collection off; the GUI thread collects on a timer by the interpreter's rules."""

    def __init__(self, interval_s: float = INTERVAL_S) -> None:
        self.threshold = gc.get_threshold()
        gc.disable()
        #: objects kept by the last full collection / promoted to the oldest generation since
        self.long_lived_total = 0
        self.long_lived_pending = 0
        self.settled = False
        self._looked = False
        self.timer = QTimer()
        self.timer.timeout.connect(self.check)
        self.timer.start(int(interval_s * 1000))

    def check(self) -> None:
        if not self.settled:  # the second look: the window is built, shown and painted
            # (the first look came in the turn of the window's first paint: settling there
            # made that turn longer, session 46)
            if self._looked:
                self.settle()
            self._looked = True
            return
        l0, l1, l2 = gc.get_count()
        if l0 <= self.threshold[0]:
            return
        gc.collect(0)
        if l1 <= self.threshold[1]:
            return
        young = len(gc.get_objects(generation=1))  # promoted to the oldest if they survive
        gc.collect(1)
        self.long_lived_pending += young
        # CPython's rule for a full collection (gcmodule.c, collect_generations): the oldest
        # generation's count past its threshold and a quarter more long-lived objects
        if l2 > self.threshold[2] and self.long_lived_pending > self.long_lived_total // 4:
            gc.collect(2)
            self.long_lived_total = len(gc.get_objects(generation=2))
            self.long_lived_pending = 0

    def settle(self) -> None:
        self.settled = True
        gc.collect(1)  # the young generations' garbage is freed, not frozen
        gc.freeze()
        self.long_lived_total = 0
        self.long_lived_pending = 0


_collector: _Collector | None = None
_holders = 0
_was_enabled = True


def hold() -> None:
    """Collect in the GUI thread from now on (call from the GUI thread: a window's creation)."""
    global _collector, _holders, _was_enabled
    _holders += 1
    if _collector is None:
        _was_enabled = gc.isenabled()
        _collector = _Collector()  # disables automatic collection


def settle() -> None:
    """Freeze the objects alive now out of the collector's reach, after collecting the young
    generations (call from the GUI thread at a point where the heap is long-lived: after a
    preparation or the first run). Nothing when no window holds the collector."""
    if _collector is not None:
        _collector.settle()


def release() -> None:
    """One holder fewer; with none left, automatic collection as before (a window's close)."""
    global _collector, _holders
    _holders = max(_holders - 1, 0)
    if _holders == 0 and _collector is not None:
        _collector.timer.stop()
        _collector = None
        gc.unfreeze()  # every object in the collector's reach again (tests, the command line)
        if _was_enabled:
            gc.enable()


def active() -> bool:
    """Whether collection runs in the GUI thread only (a window is open)."""
    return _collector is not None


def reset() -> None:
    """No holder left, whatever was held (a test's end: its windows are gone or going)."""
    global _holders
    _holders = 1
    release()
