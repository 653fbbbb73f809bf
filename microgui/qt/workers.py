"""Running core computations off the GUI thread (STYLE.md §4).

A :class:`RunWorker` (QRunnable) calls a core job ``job(progress) -> value`` in a private
one-thread pool. Its :class:`RunSignals` object is created in the GUI thread, so the signals it
emits from the worker thread reach the GUI thread queued. The worker only computes: numpy, pandas
and dataclass values go in and out, never a widget, pixmap or Qt model.

Cancellation: :meth:`RunWorker.cancel` sets a flag; the progress callback handed to the job
raises :class:`~microgui.core.progress.RunCancelled` at its next call, and the core lets it
propagate. Threads are never terminated.
"""

from __future__ import annotations

import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from microgui.core.errors import MicroguiError
from microgui.core.progress import ProgressFn, RunCancelled

__all__ = ["RunSignals", "SweepSignals", "RunWorker", "make_run_pool", "live_run_pools", "Job"]

#: A core computation: takes a progress function, returns a value (numpy/pandas/dataclasses).
Job = Callable[[ProgressFn], Any]

_POOLS: weakref.WeakSet[QThreadPool] = weakref.WeakSet()


def make_run_pool(parent: QObject | None = None) -> QThreadPool:
    """A private pool with one thread: runs execute one after the other, never concurrently.

    Pools made here are tracked so that tests can check that none is left with running threads.
    """
    pool = QThreadPool(parent)
    pool.setMaxThreadCount(1)
    _POOLS.add(pool)
    return pool


def live_run_pools() -> list[QThreadPool]:
    """The pools made by :func:`make_run_pool` that still exist (a Python wrapper kept alive,
    e.g. by a failed test's traceback, after Qt deleted its pool is left out)."""
    return [pool for pool in list(_POOLS) if shiboken6.isValid(pool)]


class RunSignals(QObject):
    """What a worker reports. Create it in the GUI thread (it lives there)."""

    progress = Signal(int, float, str)  # run id, fraction in [0, 1], status text
    finished = Signal(int, object)  # run id, the job's value
    failed = Signal(int, str, str)  # run id, message for the user, details (traceback or "")
    cancelled = Signal(int)  # run id


class SweepSignals(RunSignals):
    """A sweep's signals: those of a run, plus one per finished point (emitted from the worker
    thread while the sweep goes on, so each point reaches the GUI thread as it arrives)."""

    point = Signal(int, object)  # sweep id, microgui.core.sweep.SweepPoint


class RunWorker(QRunnable):
    """Runs one job; emits exactly one of ``finished``, ``failed`` or ``cancelled`` at the end.

    Progress is throttled to whole-percent or status changes (STYLE.md §4).
    """

    def __init__(self, run_id: int, job: Job, signals: RunSignals) -> None:
        super().__init__()
        # The controller keeps this object referenced until its last signal; Qt must not
        # delete the C++ side under a live Python wrapper.
        self.setAutoDelete(False)
        self.run_id = run_id
        self.signals = signals
        self._job = job
        self._cancel = threading.Event()
        self._last_percent = -1
        self._last_status: str | None = None

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the job to stop at its next progress call (thread-safe, returns at once)."""
        self._cancel.set()

    def _progress(self, fraction: float, status: str = "", /) -> None:
        if self._cancel.is_set():
            raise RunCancelled()
        fraction = min(max(float(fraction), 0.0), 1.0)
        percent = int(fraction * 100)
        if percent != self._last_percent or status != self._last_status:
            self._last_percent = percent
            self._last_status = status
            self.signals.progress.emit(self.run_id, fraction, status)

    def run(self) -> None:  # noqa: D102 (QRunnable override)
        try:
            if self._cancel.is_set():
                raise RunCancelled()
            value = self._job(self._progress)
        except RunCancelled:
            self.signals.cancelled.emit(self.run_id)
        except MicroguiError as exc:
            self.signals.failed.emit(self.run_id, str(exc), "")
        except Exception as exc:  # a bug in a job must not kill the app: report it
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            self.signals.failed.emit(
                self.run_id,
                f"internal error: {message} (the details say where; please report it)",
                traceback.format_exc(),
            )
        else:
            # The user asked to cancel while the last step ran: honour the request.
            if self._cancel.is_set():
                self.signals.cancelled.emit(self.run_id)
            else:
                self.signals.finished.emit(self.run_id, value)
