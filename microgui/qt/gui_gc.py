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
"""

from __future__ import annotations

import gc

from pyqtgraph.util.garbage_collector import GarbageCollector

__all__ = ["hold", "release", "reset", "active"]

#: How often the GUI thread looks at the collector's counts (seconds).
INTERVAL_S = 0.25

_collector: GarbageCollector | None = None
_holders = 0
_was_enabled = True


def hold() -> None:
    """Collect in the GUI thread from now on (call from the GUI thread: a window's creation)."""
    global _collector, _holders, _was_enabled
    _holders += 1
    if _collector is None:
        _was_enabled = gc.isenabled()
        _collector = GarbageCollector(interval=INTERVAL_S)  # disables automatic collection


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
