"""Running core computations off the GUI thread (STYLE.md §4).

A :class:`RunWorker` (QRunnable) calls a core job ``job(progress) -> value`` in a private
one-thread pool. Its :class:`RunSignals` object is created in the GUI thread, so the signals it
emits from the worker thread reach the GUI thread queued. The worker only computes: numpy, pandas
and dataclass values go in and out, never a widget, pixmap or Qt model.

Cancellation: :meth:`RunWorker.cancel` sets a flag; the progress callback handed to the job
raises :class:`~microgui.core.progress.RunCancelled` at its next call, and the core lets it
propagate. Threads are never terminated.

A :class:`TaskSlot` is one kind of background task of the controller (the run, the file being
read, the dependency tree...): starting a task supersedes the slot's previous one (cancelled,
its late signals dropped), and the slot re-emits only the current task's signals. Orange's
``ConcurrentMixin`` (``Orange/widgets/utils/concurrent.py``) is the model.
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, SignalInstance, Slot

from microgui.core.errors import MicroguiError
from microgui.core.methods.threads import app_threads, using_threads
from microgui.core.progress import ProgressFn, RunCancelled

__all__ = [
    "RunSignals",
    "SweepSignals",
    "RunWorker",
    "TaskSlot",
    "make_run_pool",
    "lower_thread_priority",
    "live_run_pools",
    "Job",
    "PartialJob",
    "stop_tasks",
]

#: A core computation: takes a progress function, returns a value (numpy/pandas/dataclasses).
Job = Callable[[ProgressFn], Any]
#: A job that hands partial results on as it goes: made from the function that sends one.
PartialJob = Callable[[Callable[[Any], None]], Job]

_POOLS: weakref.WeakSet[QThreadPool] = weakref.WeakSet()


def make_run_pool(parent: QObject | None = None, *, background: bool = False) -> QThreadPool:
    """A private pool with one thread: runs execute one after the other, never concurrently.

    ``background``: its tasks run below the GUI thread's priority (:func:`lower_thread_priority`):
    the views' analyses, which must not take the CPU from the GUI thread drawing them; a run and
    the kernels' preparation keep the GUI thread's priority (a first run is measured against the
    command line's).

    Pools made here are tracked so that tests can check that none is left with running threads.
    """
    pool = QThreadPool(parent)
    pool.setMaxThreadCount(1)
    pool.background = background  # read by TaskSlot for each worker
    _POOLS.add(pool)
    if parent is not None:
        # deleting the parent deletes the pool, and a pool's destructor waits for its tasks;
        # deleted from Python code (an overridden ``event``, a wrapper freed), the deleting
        # thread holds the GIL the tasks need: a hang for good (CI, session 45). ``destroyed``
        # comes before the children are deleted: wait there, where waiting frees the GIL.
        parent.destroyed.connect(lambda *_a, pool=pool: drain_pool(pool))
    return pool


#: How long a parent's deletion waits for its pool's tasks (:func:`make_run_pool`).
DRAIN_MS = 60_000


def drain_pool(pool: QThreadPool, timeout_ms: int = DRAIN_MS) -> bool:
    """Wait (the GIL free) for what ``pool`` runs, its queue dropped; True when it is done."""
    if not shiboken6.isValid(pool):
        return True
    pool.clear()
    return bool(pool.waitForDone(timeout_ms))


def live_run_pools() -> list[QThreadPool]:
    """The pools made by :func:`make_run_pool` that still exist (a Python wrapper kept alive,
    e.g. by a failed test's traceback, after Qt deleted its pool is left out)."""
    return [pool for pool in list(_POOLS) if shiboken6.isValid(pool)]


#: Environment variable: how many nice steps below the GUI thread the worker threads run (0: the
#: same priority). Default :data:`WORKER_NICE`.
NICE_ENV = "MICROGUI_WORKER_NICE"
#: The default for a background pool's threads (:func:`make_run_pool`): the views' analyses yield
#: the CPU to the GUI thread when they compete for it (issue 29/30). The R-U map's reference
#: (a full ``evaluate`` of the table, scipy's ``workers=-1`` k-d tree queries on every core)
#: ran while the views drew and the GUI thread waited 100-600 ms for a core on a loaded machine
#: although no thread held the GIL longer than 40 ms.
WORKER_NICE = 5


def _nice_of(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except (AttributeError, OSError):  # no per-thread priorities here (not Linux)
        return None


#: The GUI thread's priority (this module is imported by it), or None where unknown.
_GUI_NICE = _nice_of(threading.get_native_id()) if hasattr(os, "getpriority") else None


def worker_nice() -> int:
    """The nice steps of :data:`NICE_ENV`, else :data:`WORKER_NICE` (0 … 19)."""
    value = os.environ.get(NICE_ENV, "").strip()
    try:
        return min(max(int(value), 0), 19) if value else WORKER_NICE
    except ValueError:
        return WORKER_NICE


def lower_thread_priority(steps: int | None = None) -> int | None:
    """Run the calling thread ``steps`` nice levels below the GUI thread (default
    :func:`worker_nice`); the threads it starts later inherit it (Linux: ``setpriority`` on a
    thread id sets that thread alone). Returns the thread's nice value, None where the system has
    no per-thread priority. Never raises the priority: a thread already lower stays so."""
    steps = worker_nice() if steps is None else steps
    tid = threading.get_native_id()
    now = _nice_of(tid)
    if now is None or _GUI_NICE is None or steps <= 0:
        return now
    target = min(_GUI_NICE + steps, 19)
    if now < target:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, target)
        except OSError:
            return now
        return target
    return now


class RunSignals(QObject):
    """What a worker reports. Create it in the GUI thread (it lives there)."""

    progress = Signal(int, float, str)  # run id, fraction in [0, 1], status text
    finished = Signal(int, object)  # run id, the job's value
    failed = Signal(int, str, str)  # run id, message for the user, details (traceback or "")
    cancelled = Signal(int)  # run id


class SweepSignals(RunSignals):
    """A sweep's signals: those of a run, plus one per finished point (emitted from the worker
    thread while the sweep goes on, so each point reaches the GUI thread as it arrives)."""

    point = Signal(int, object)  # sweep id, microgui.core.runs.sweep.SweepPoint


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
        #: run below the GUI thread's priority (:func:`make_run_pool`'s ``background``)
        self.background = False

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
            if self.background:  # once per pool thread; the threads it starts inherit it
                lower_thread_priority()
            # The kernels leave one core to the GUI thread (issue 33; MICROGUI_THREADS wins).
            with using_threads(app_threads()):
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


class TaskSlot(QObject):
    """One kind of background task: at most one current task, run in ``pool``.

    :meth:`start` supersedes the current task (asks it to stop and drops its later signals) and
    starts a new one with the next id; each task may carry a ``context`` (the table it runs on,
    the file it reads) handed back with its end. The slot's signals are those of the current
    task only, emitted after the task is released: ``progress``, ``partial`` (a value the job
    handed on while running), then exactly one of ``finished``, ``failed`` or ``cancelled``.
    A superseded task's worker stays referenced until its last signal (:attr:`live`).
    """

    progress = Signal(int, float, str)  # task id, fraction, status
    partial = Signal(int, object)  # task id, a partial result
    finished = Signal(int, object, object)  # task id, the job's value, context
    failed = Signal(int, str, str, object)  # task id, message, details, context
    cancelled = Signal(int, object)  # task id, context

    def __init__(
        self,
        pool: QThreadPool,
        parent: QObject | None = None,
        ids: Iterator[int] | None = None,
    ) -> None:
        super().__init__(parent)
        self.pool = pool
        #: the ids of new tasks (several slots may share one counter)
        self._ids = ids if ids is not None else itertools.count(1)
        self.current: int | None = None
        self._workers: dict[int, tuple[RunWorker, Any]] = {}

    def forward(
        self,
        *,
        progress: SignalInstance | None = None,
        finished: SignalInstance | None = None,
        failed: SignalInstance | None = None,
        cancelled: SignalInstance | None = None,
    ) -> TaskSlot:
        """Re-emit the current task's signals as ``progress(id, fraction, status)``,
        ``finished(id, value)``, ``failed(id, message, details)`` and ``cancelled(id)`` (the
        context left out); returns the slot."""
        if progress is not None:
            self.progress.connect(progress)
        if finished is not None:
            self.finished.connect(lambda task_id, value, _context: finished.emit(task_id, value))
        if failed is not None:
            self.failed.connect(
                lambda task_id, message, details, _context: failed.emit(task_id, message, details)
            )
        if cancelled is not None:
            self.cancelled.connect(lambda task_id, _context: cancelled.emit(task_id))
        return self

    @property
    def busy(self) -> bool:
        """A task is current."""
        return self.current is not None

    @property
    def live(self) -> int:
        """Tasks started whose last signal has not been handled yet (superseded ones too)."""
        return len(self._workers)

    def contexts(self) -> list[Any]:
        """The contexts of every live task."""
        return [context for _worker, context in self._workers.values()]

    def context(self, task_id: int | None = None) -> Any:
        """The context of a live task (the current one by default; None when there is none)."""
        task_id = self.current if task_id is None else task_id
        entry = self._workers.get(task_id) if task_id is not None else None
        return None if entry is None else entry[1]

    def start(self, job: Job, context: Any = None) -> int:
        """Supersede the current task and start ``job``; returns its id."""
        return self.start_partial(lambda _send: job, context)

    def start_partial(self, make_job: PartialJob, context: Any = None) -> int:
        """As :meth:`start`, for a job made from the function that hands a partial result on
        (called in the worker thread; ``partial`` follows in the GUI thread)."""
        self.supersede()
        task_id = next(self._ids)
        signals = SweepSignals()  # made here, in the GUI thread
        signals.progress.connect(self._on_progress)
        signals.point.connect(self._on_partial)
        signals.finished.connect(self._on_finished)
        signals.failed.connect(self._on_failed)
        signals.cancelled.connect(self._on_cancelled)
        job = make_job(lambda value: signals.point.emit(task_id, value))
        worker = RunWorker(task_id, job, signals)
        worker.background = bool(getattr(self.pool, "background", False))
        self._workers[task_id] = (worker, context)
        self.current = task_id
        self.pool.start(worker)
        return task_id

    def cancel(self) -> None:
        """Ask the current task to stop; it stays current, and ``cancelled`` follows when it
        has stopped."""
        if self.current is not None and self.current in self._workers:
            self._workers[self.current][0].cancel()

    def supersede(self) -> int | None:
        """Ask the current task to stop and drop its later signals; returns its id (None when
        there was none)."""
        task_id, self.current = self.current, None
        if task_id is not None and task_id in self._workers:
            self._workers[task_id][0].cancel()
        return task_id

    def cancel_all(self) -> None:
        """Ask every live task to stop (the window closes)."""
        for worker, _context in self._workers.values():
            worker.cancel()

    def clear(self) -> None:
        """Forget every task (after the pool has been waited for)."""
        self.current = None
        self._workers.clear()

    def _end(self, task_id: int) -> tuple[bool, Any]:
        """Release a task at its last signal: (was it the current one, its context)."""
        _worker, context = self._workers.pop(task_id, (None, None))
        if task_id != self.current:
            return False, context
        self.current = None
        return True, context

    @Slot(int, float, str)
    def _on_progress(self, task_id: int, fraction: float, status: str) -> None:
        if task_id == self.current:
            self.progress.emit(task_id, fraction, status)

    @Slot(int, object)
    def _on_partial(self, task_id: int, value: Any) -> None:
        if task_id == self.current:
            self.partial.emit(task_id, value)

    @Slot(int, object)
    def _on_finished(self, task_id: int, value: Any) -> None:
        current, context = self._end(task_id)
        if current:
            self.finished.emit(task_id, value, context)

    @Slot(int, str, str)
    def _on_failed(self, task_id: int, message: str, details: str) -> None:
        current, context = self._end(task_id)
        if current:
            self.failed.emit(task_id, message, details, context)

    @Slot(int)
    def _on_cancelled(self, task_id: int) -> None:
        current, context = self._end(task_id)
        if current:
            self.cancelled.emit(task_id, context)


def stop_tasks(slots: Iterable[TaskSlot], pools: Iterable[QThreadPool], timeout_ms: int) -> bool:
    """Ask every task of ``slots`` to stop, drop what the ``pools`` have not started, wait for
    them (at most ``timeout_ms`` each), then forget every task; True when all pools are done."""
    slots = list(slots)
    for slot in slots:
        slot.cancel_all()
    pools = list(pools)
    for pool in pools:
        pool.clear()
    done = all([pool.waitForDone(timeout_ms) for pool in pools])
    for slot in slots:
        slot.clear()
    return bool(done)
