"""Preparing the methods' compiled kernels in the background from start-up (issue 15).

The first run of a method after installing (or updating) microgui compiles its numba kernels:
about 10 s for MDAV and 45 s for all of them on a 2-core machine, while a run sits at 0 %. From
the filled cache (:mod:`microgui.core.methods.jit_cache`) every kernel loads in under a second
(0.7 s measured for the 13 warm-ups).

:class:`KernelPrep` runs each registered warm-up (``Method.warm_up``) one by one in its own
one-thread pool, never in the GUI thread, from the moment the window shows; the MDAV kernels
(those of the proposed run) come first. :class:`KernelStatusLabel` says so in the status bar
("Preparing methods (once after installing): 5 of 19…", then "Methods ready"), but only when the
preparation takes longer than :data:`SHOW_AFTER_MS`: loading a filled cache shows nothing.

A run started meanwhile (:func:`after_kernels`, applied by the controller to every run) first
waits for its method's kernels, which the preparation takes next, and says so in the run's status
("waiting for the mdav kernels to be prepared (once after installing)"); while it waits it checks
the cancel flag ten times a second. While a run computes, the preparation starts no further
warm-up (it gives way). Kernels are process-wide, so is the preparation in progress.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QLabel, QWidget

from microgui.core.progress import ProgressFn
from microgui.core.runs import RunSpec
from microgui.qt.workers import Job, TaskSlot, make_run_pool, stop_tasks

__all__ = [
    "KernelPrep",
    "KernelStatusLabel",
    "WarmUp",
    "after_kernels",
    "active_preparation",
    "SHOW_AFTER_MS",
    "READY_SHOWN_MS",
]

#: A method's warm-up: compiles (or loads) its kernels, returns the seconds it took.
WarmUp = Callable[[], float]
#: The status bar says nothing of a preparation that ends sooner (a filled cache).
SHOW_AFTER_MS = 1000
#: How long "Methods ready" stays in the status bar after a preparation that was shown.
READY_SHOWN_MS = 5000
#: How often a run waiting for its kernels looks at its cancel flag (seconds).
_WAIT_POLL_S = 0.1

#: The warm-ups that have finished in this process (compiled kernels are process-wide).
_prepared: set[WarmUp] = set()
_active: KernelPrep | None = None


def active_preparation() -> KernelPrep | None:
    """The preparation in progress in this process, or None."""
    return _active


class KernelPrep(QObject):
    """The background preparation of every method's compiled kernels, one warm-up at a time."""

    started = Signal()
    _resume = Signal()  # a run ended (emitted from its thread, handled in the GUI thread)
    progress = Signal(int, int)  # methods ready, methods in all
    finished = Signal(int, int)  # methods ready, methods in all (fewer: a warm-up failed)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool: QThreadPool = make_run_pool(self)
        self._slot = TaskSlot(self.pool, self)
        self._slot.finished.connect(lambda _i, _value, warm_up: self._done(warm_up, True))
        self._slot.failed.connect(lambda _i, _m, _d, warm_up: self._done(warm_up, False))
        self._lock = threading.Lock()  # the queue: reordered from a waiting run's thread
        self._queue: list[WarmUp] = []
        self._events: dict[WarmUp, threading.Event] = {}
        self._methods: list[tuple[str, WarmUp | None]] = []
        self._stop_listening: Callable[[], None] | None = None
        self._started_at = 0.0
        self._stopped = False  # shut down: never starts again
        self._holds = 0  # runs in progress: the preparation gives way to them
        self._paused = False
        self._resume.connect(self._on_resume)
        #: a kernel was compiled, not loaded from the cache (set from the compiling thread)
        self.compiled = threading.Event()
        #: the methods whose warm-up failed (they compile at their first run instead)
        self.failed: list[str] = []
        #: the preparation is in progress
        self.running = False
        #: how long the whole preparation took (None until it ends)
        self.seconds: float | None = None

    # state ---------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """The methods in all."""
        return len(self._methods)

    @property
    def ready(self) -> int:
        """The methods whose kernels are ready (methods without kernels included)."""
        return sum(1 for _name, w in self._methods if w is None or w in _prepared)

    def warm_up_of(self, method: str) -> WarmUp | None:
        """The warm-up this preparation runs for ``method`` (None: none, or an unknown name)."""
        return next((w for name, w in self._methods if name == method), None)

    # running -------------------------------------------------------------------------------
    def start(self, methods: Sequence[tuple[str, WarmUp | None]] | None = None) -> None:
        """Start preparing the kernels of ``methods`` ((name, warm-up) pairs; default: every
        registered method, in the registry's order with MDAV's first). Returns at once."""
        global _active
        if self.running or self._stopped:
            return
        if methods is None:
            from microgui.core.methods import available_methods

            methods = [(m.name, m.warm_up) for m in available_methods()]
        self._methods = list(methods)
        order = sorted(
            {w: None for _n, w in self._methods if w is not None and w not in _prepared},
            key=lambda w: 0 if w.__module__.endswith(".mdav") else 1,
        )
        self._events = {w: threading.Event() for w in order}
        with self._lock:
            self._queue = list(order)
        self.running = True
        self.failed = []
        self.seconds = None
        self._started_at = time.perf_counter()
        _active = self
        from microgui.core.methods.jit_cache import on_first_compile

        self._stop_listening = on_first_compile(lambda _kernel: self.compiled.set())
        self.started.emit()
        self.progress.emit(self.ready, self.total)
        self._next()

    def prioritise(self, warm_up: WarmUp) -> None:
        """Take ``warm_up`` next (thread-safe: called from a waiting run's thread)."""
        with self._lock:
            if warm_up in self._queue:
                self._queue.remove(warm_up)
                self._queue.insert(0, warm_up)

    def wait_for(self, warm_up: WarmUp, method: str, progress: ProgressFn) -> None:
        """Block (in a run's worker thread) until ``warm_up`` has ended, saying why in the run's
        status; ``progress`` raises :class:`~microgui.core.progress.RunCancelled` on Cancel."""
        event = self._events.get(warm_up)
        if event is None:
            return
        self.prioritise(warm_up)
        started = time.monotonic()
        while not event.is_set():
            waited = int(time.monotonic() - started)
            so_far = f"; {waited} s so far" if waited else ""
            if self.compiled.is_set():
                text = f"to be prepared (once after installing{so_far})"
            else:
                text = "to load"
            progress(0.0, f"waiting for the {method} kernels {text}")
            event.wait(_WAIT_POLL_S)

    @contextmanager
    def giving_way(self) -> Iterator[None]:
        """While the block runs (a run, in its thread), start no further warm-up: the run gets
        the processor, and a kernel it compiles does not wait behind another compile."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
            self._resume.emit()

    def _on_resume(self) -> None:
        with self._lock:
            go = self._paused and self._holds == 0 and self.running
        if go:
            self._paused = False
            self._next()

    def _next(self) -> None:
        with self._lock:
            self._paused = self._holds > 0 and bool(self._queue)
            if self._paused:
                return
            warm_up = self._queue.pop(0) if self._queue else None
        if warm_up is None:
            self._finish()
            return
        run: WarmUp = warm_up
        self._slot.start(lambda _progress: run(), warm_up)

    def _done(self, warm_up: Any, ok: bool) -> None:
        if ok:
            _prepared.add(warm_up)
        else:
            self.failed += [name for name, w in self._methods if w is warm_up]
        event = self._events.get(warm_up)
        if event is not None:
            event.set()
        if self.running:
            self.progress.emit(self.ready, self.total)
            self._next()

    def _finish(self) -> None:
        global _active
        if not self.running:
            return
        self.running = False
        self.seconds = time.perf_counter() - self._started_at
        for event in self._events.values():  # a run still waiting goes on (and compiles)
            event.set()
        if _active is self:
            _active = None
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
        self.finished.emit(self.ready, self.total)

    def shutdown(self, timeout_ms: int = 60_000) -> bool:
        """Stop after the warm-up in progress (a compile cannot be interrupted: at most about
        10 s) and wait for it; True when the pool is done (called when the window closes)."""
        self._stopped = True
        with self._lock:
            self._queue.clear()
        done = stop_tasks([self._slot], [self.pool], timeout_ms)
        self._finish()
        return done


def after_kernels(job: Job, spec: RunSpec) -> Job:
    """``job``, first waiting for the kernels of ``spec``'s method while the app prepares them,
    then computing with the preparation paused (unchanged when no preparation is in progress)."""
    prep = _active
    if prep is None:
        return job
    warm_up = prep.warm_up_of(spec.method)

    def waiting(progress: ProgressFn) -> Any:
        if warm_up is not None:
            prep.wait_for(warm_up, spec.method, progress)
        with prep.giving_way():
            return job(progress)

    return waiting


class KernelStatusLabel(QLabel):
    """The status bar's note on the kernels being prepared, shown only when it takes a while."""

    def __init__(self, prep: KernelPrep, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prep = prep
        self.setToolTip(
            "After installing or updating, microgui compiles its methods once (about a minute); "
            "later starts load them in under a second. A run started meanwhile waits for its "
            "method's kernels, which are prepared first."
        )
        self.setContentsMargins(0, 0, 12, 0)  # apart from the table's label beside it
        self.hide()
        self._reveal = QTimer(self, singleShot=True, interval=SHOW_AFTER_MS)
        self._reveal.timeout.connect(self._on_reveal)
        self._hide = QTimer(self, singleShot=True, interval=READY_SHOWN_MS)
        self._hide.timeout.connect(self.hide)
        prep.started.connect(self._reveal.start)
        prep.progress.connect(self._on_progress)
        prep.finished.connect(self._on_finished)

    def _on_reveal(self) -> None:
        if self.prep.running:
            self._on_progress(self.prep.ready, self.prep.total)
            self.show()

    def _on_progress(self, ready: int, total: int) -> None:
        what = (
            "Preparing methods (once after installing)"
            if self.prep.compiled.is_set()
            else "Loading methods"
        )
        self.setText(f"{what}: {ready} of {total}…")

    def _on_finished(self, ready: int, total: int) -> None:
        self._reveal.stop()
        if self.isHidden():  # never shown: a filled cache, nothing to say
            return
        failed = self.prep.failed
        self.setText(
            "Methods ready"
            if not failed
            else f"Methods ready ({', '.join(failed)}: compiled at the first run)"
        )
        self._hide.start()
