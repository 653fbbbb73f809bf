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

pyqtgraph's collector runs a full collection whenever the middle generation has been collected
more than its threshold (10) times, without the interpreter's rule that a full collection waits
until the objects that reached the oldest generation since the last one are a quarter of those
it kept (CPython's ``long_lived_pending > long_lived_total / 4``, Modules/gcmodule.c). After a
UCI Adult run the window holds ~260,000 tracked objects and a full collection takes ~200 ms of
the GUI thread (measured here, loaded machine): it then came every half minute of activity, in
whatever view was drawing (issue 29's view holds). :class:`_Collector` applies the rule.
"""

from __future__ import annotations

import gc

from pyqtgraph.util.garbage_collector import GarbageCollector

__all__ = ["hold", "release", "reset", "active"]


class _Collector(GarbageCollector):
    """pyqtgraph's timer collector with the interpreter's rule for full collections."""

    def __init__(self, interval: float) -> None:
        self.long_lived_total = len(gc.get_objects(2))
        super().__init__(interval=interval)

    def check(self) -> None:
        # pyqtgraph's conditions (GarbageCollector.check); a collection of a generation
        # collects the younger ones too
        l0, l1, l2 = gc.get_count()
        t0, t1, t2 = self.threshold
        if l0 <= t0:
            return
        if l1 <= t1:
            gc.collect(0)
        elif l2 <= t2:
            gc.collect(1)
        elif len(gc.get_objects(2)) - self.long_lived_total > self.long_lived_total // 4:
            # the survivors that reached the oldest generation since the last full collection
            # are a quarter of those it kept (counting them: ~6 ms at 300,000 objects)
            gc.collect(2)
            self.long_lived_total = len(gc.get_objects(2))
        else:
            gc.collect(1)


#: How often the GUI thread looks at the collector's counts (seconds).
INTERVAL_S = 0.25

_collector: _Collector | None = None
_holders = 0
_was_enabled = True


def hold() -> None:
    """Collect in the GUI thread from now on (call from the GUI thread: a window's creation)."""
    global _collector, _holders, _was_enabled
    _holders += 1
    if _collector is None:
        _was_enabled = gc.isenabled()
        _collector = _Collector(interval=INTERVAL_S)  # disables automatic collection


def release() -> None:
    """One holder fewer; with none left, automatic collection as before (a window's close)."""
    global _collector, _holders
    _holders = max(_holders - 1, 0)
    if _holders == 0 and _collector is not None:
        _collector.timer.stop()
        _collector = None
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
