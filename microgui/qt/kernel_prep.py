"""Preparing the methods' compiled kernels in the background from start-up (issues 15, 30).

The first run of a method after installing (or updating) microgui compiles its numba kernels:
about 10 s for MDAV and 45 s for all of them on a 2-core machine, while a run sits at 0 %. From
the filled cache (:mod:`microgui.core.methods.jit_cache`) every kernel loads in under a second
(0.7 s measured for the 13 warm-ups).

:class:`KernelPrep` runs each registered warm-up (``Method.warm_up``) one by one in its own
one-thread pool, never in the GUI thread, from the moment the window shows; the lower bound's
kernels and then MDAV's (those of the proposed run) come first. :class:`KernelStatusLabel` says so in the status bar
("Preparing methods (once after installing): 5 of 19…", then "Methods ready"), but only when the
preparation takes longer than :data:`SHOW_AFTER_MS`: loading a filled cache shows nothing.

A run started meanwhile does not wait for the preparation (issue 30: it waited for MDAV's
whole warm-up, 73 s with an empty cache, where the run needs a third of it): it starts at once
and compiles the kernels it calls (numba compiles on the first call), while the preparation
gives way - it starts no further warm-up, and a warm-up under way stops before its next kernel
compile begins (:func:`~microgui.core.methods.jit_cache.watching_compiles`; the kernel compiled
at that moment is finished: numba's compiler lock serialises compiles, and a compile cannot be
interrupted), to be taken again, cheaply, when the run ends. A compile inside a run says so in
its status ("compiling the kernels of mdav-generic (first run only)…", :func:`after_kernels`).
Kernels are process-wide, so is the preparation in progress.

Since session 41 (issue 30: compiles in the app's process held the GIL, and the GUI thread stood
still up to 438 ms while the cache filled) the app's preparation runs in a CHILD PROCESS
(:mod:`microgui.core.runs.prepare`, started with :class:`QProcess` at the lowest priority,
same cache folder): this process compiles nothing in the background, and only loads the kernels
when a run first calls them. The status bar's "n of N" comes from the child's stdout lines.
Closing the window kills the child. A child that cannot start (a frozen app:
:func:`child_command` is None) or that crashes falls back to the in-process preparation
described above, with a warning in the log. An explicit list of warm-ups (``start(methods)``)
is always prepared in this process.

Since session 43 a run started while the child prepares compiles nothing in this process either
(issue 30: the in-process compile of the demo's first run made so much garbage that Python's full
collections, run in the GUI thread, stalled it 127 ms idle and 300-600 ms under load;
postponing collections only moved them, :func:`gc.freeze` kept the garbage). A kernel compile
the run would begin is stopped before it begins; the child is asked for the methods whose
warm-ups make that kernel, the lower bound's first (:meth:`KernelPrep.methods_of`), and takes
them next at normal priority: the child under way is set back to normal priority
(:func:`os.setpriority`) when it is on one of them or has begun none and the system allows it,
else a new child is started with them first (:meth:`KernelPrep._on_need`). The run waits,
saying "compiling the kernels of <method> (first run only)" with the seconds waited, until
the child's stdout says that kernel is saved, then starts again and loads it from the disk
cache (:func:`after_kernels`); when the run ends the child goes back to the lowest priority. A
child that dies, or that did not save the kernel the run misses, leaves the run to compile it
itself, as before.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from PySide6.QtCore import QObject, QProcess, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QLabel, QWidget

from microgui.core.progress import ProgressFn, RunCancelled
from microgui.core.runs import RunSpec
from microgui.core.runs.prepare import first_needed
from microgui.qt.workers import Job, TaskSlot, make_run_pool, stop_tasks

__all__ = [
    "KernelPrep",
    "KernelStatusLabel",
    "WarmUp",
    "after_kernels",
    "compile_status",
    "active_preparation",
    "SHOW_AFTER_MS",
    "READY_SHOWN_MS",
]

#: A method's warm-up: compiles (or loads) its kernels, returns the seconds it took.
WarmUp = Callable[[], float]
_log = logging.getLogger(__name__)


def child_command() -> list[str] | None:
    """The command of the child process that fills the kernel cache
    (:mod:`microgui.core.runs.prepare`), or None where there is no interpreter to start
    (a frozen application): the preparation then runs in this process."""
    if getattr(sys, "frozen", False) or not sys.executable:
        return None
    return [sys.executable, "-m", "microgui.core.runs.prepare"]


#: The status bar says nothing of a preparation that ends sooner (a filled cache).
SHOW_AFTER_MS = 1000
#: How long "Methods ready" stays in the status bar after a preparation that was shown.
READY_SHOWN_MS = 5000


_frozen = False


def _freeze_start_up_objects() -> None:
    """Move the objects of start-up (modules, Qt wrappers, the table) out of the collector's
    reach, once per process (:func:`gc.freeze`). A compile makes so many objects that Python's
    full collections run several times during it, each scanning every object of the process
    while holding the GIL, so the GUI thread stands still: on the demo's first run, 8 full
    collections, the longest 849 ms; after the freeze, the longest 292 ms (rough, on a loaded
    2-core machine). While a window lives, :func:`microgui.qt.gui_gc.settle` does it (young
    generations collected first) and again when the preparation ends."""
    global _frozen
    if not _frozen:
        _frozen = True
        from microgui.qt import gui_gc

        if gui_gc.active():
            gui_gc.settle()
        else:
            gc.freeze()


class _GiveWay(Exception):
    """Raised in the preparation's thread when a kernel compile would begin while a run
    computes: the compile does not begin, and the warm-up is taken again after the run."""


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
    _hold = Signal()  # a run began (emitted from its thread, handled in the GUI thread)
    _need = Signal(list)  # a run waits for these methods' kernels (from its thread)
    progress = Signal(int, int)  # methods ready, methods in all
    finished = Signal(int, int)  # methods ready, methods in all (fewer: a warm-up failed)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool: QThreadPool = make_run_pool(self)
        self._slot = TaskSlot(self.pool, self)
        self._slot.finished.connect(lambda _i, _value, warm_up: self._done(warm_up, True))
        self._slot.failed.connect(lambda _i, _m, _d, warm_up: self._done(warm_up, False))
        self._lock = threading.Lock()  # the queue and the holds (runs hold from their thread)
        self._queue: list[WarmUp] = []
        self._gave_way: set[WarmUp] = set()  # warm-ups stopped for a run: taken again after it
        self._methods: list[tuple[str, WarmUp | None]] = []
        self._stop_listening: Callable[[], None] | None = None
        self._started_at = 0.0
        self._stopped = False  # shut down: never starts again
        self._holds = 0  # runs in progress: the preparation gives way to them
        self._paused = False
        self._resume.connect(self._on_resume)
        self._hold.connect(self._on_hold)
        #: a kernel was compiled, not loaded from the cache (set from the compiling thread)
        self.compiled = threading.Event()
        #: the methods whose warm-up failed (they compile at their first run instead)
        self.failed: list[str] = []
        #: the preparation is in progress
        self.running = False
        #: how long the whole preparation took (None until it ends)
        self.seconds: float | None = None
        #: the child process's command (:func:`child_command`); None: prepare in this process
        self.child_command: list[str] | None = child_command()
        #: the child process filling the cache, while it runs
        self.child: QProcess | None = None
        #: the preparation went through the child process (False: in this process)
        self.in_child = False
        self._child_ready = 0
        self._child_total = 0
        self._child_out = b""
        self._child_killed_for_run = False
        # a run waiting for the child's kernels (issue 30, session 43): what it waits on is
        # read and waited for in the run's thread, written in the GUI thread
        self._kernels = threading.Condition()
        self._saved: set[str] = set()  # kernels' index paths the child has written
        self._names_done: set[str] = set()  # methods the child has prepared (or failed)
        self._child_alive = False
        self._child_current = ""  # the warm-up the child is on
        self._serving = False  # the child runs at normal priority for a waiting run
        self._need.connect(self._on_need)
        self._child_methods: list[tuple[str, str]] | None = None  # (name, warm-up's module)
        self._plugin_methods: list[tuple[str, str]] | None = None  # the same, plug-ins'
        self._child_in_main = False  # the child has said "total" (its priority is set)
        self._need_pending: list[str] = []  # asked before that: served then
        #: how each waiting run's kernels were had from the child: "priority raised" (the
        #: child under way, set back to normal priority) or "restarted" (a new child at normal
        #: priority, the run's methods first); for the benchmark's notes
        self.served: list[str] = []

    # state ---------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """The methods in all."""
        return self._child_total if self.in_child else len(self._methods)

    @property
    def ready(self) -> int:
        """The methods whose kernels are ready (methods without kernels included)."""
        if self.in_child:
            return self._child_ready
        return sum(1 for _name, w in self._methods if w is None or w in _prepared)

    # running -------------------------------------------------------------------------------
    def start(self, methods: Sequence[tuple[str, WarmUp | None]] | None = None) -> None:
        """Start preparing the kernels of ``methods`` ((name, warm-up) pairs; default: every
        registered method, in the registry's order after the lower bound's and MDAV's).
        Returns at once."""
        if self.running or self._stopped:
            return
        if methods is None and self.child_command:
            self._start_child(self.child_command)
            return
        self._start_here(methods)

    def _start_here(self, methods: Sequence[tuple[str, WarmUp | None]] | None) -> None:
        """The preparation in this process (a frozen app, a child that failed, tests)."""
        global _active
        self.in_child = False
        if methods is None:
            from microgui.core.runs.prepare import preparation_list

            # with the refinement (its first deep run compiled for 30 s after the preparation
            # had ended, issue 30) and a plan's local suppression step (issue 31)
            methods = preparation_list()
        self._methods = list(methods)
        _freeze_start_up_objects()
        order = sorted(
            {w: None for _n, w in self._methods if w is not None and w not in _prepared},
            key=first_needed,
        )
        self._gave_way = set()
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

    # the child process -------------------------------------------------------------------
    def _start_child(self, command: list[str]) -> None:
        """Fill the cache in a child process: nothing compiles in this one, so the GUI thread
        never waits for a compile holding the GIL. Its stdout lines give the progress."""
        global _active
        self.in_child = True
        self._child_ready = self._child_total = 0
        self._child_out = b""
        self.running = True
        self.failed = []
        self.seconds = None
        self._started_at = time.perf_counter()
        _active = self
        # which module each warm-up prepares is a table (PREPARED_MODULES): the GUI thread
        # imports no method's module to learn it (it did, ~0.4 s, on the event loop's first turn)
        self._launch_child(command)
        self.started.emit()
        self.progress.emit(self.ready, self.total)

    def _launch_child(self, command: list[str], first: Sequence[str] = ()) -> None:
        child = QProcess(self)
        child.setProgram(command[0])
        # the methods a run waits for, at normal priority (tab-separated: names have spaces)
        child.setArguments([*command[1:], *(["--first", "\t".join(first)] if first else [])])
        child.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        child.readyReadStandardOutput.connect(self._on_child_output)
        child.finished.connect(self._on_child_finished)
        child.errorOccurred.connect(self._on_child_error)
        self.child = child
        self.failed = []
        with self._kernels:
            self._child_alive = True
            self._child_current = ""
            self._serving = bool(first)
        self._child_in_main = False  # until its "total" line
        self._need_pending = []
        child.start()
        _log.debug("child started: %s", " ".join(child.arguments()))

    def _on_child_output(self) -> None:  # noqa: C901 - one branch per line of the protocol
        child = self.child
        if child is None:
            return
        self._child_out += bytes(child.readAllStandardOutput().data())
        *lines, self._child_out = self._child_out.split(b"\n")
        for raw in lines:
            _log.debug("child: %s", raw.decode("utf-8", "replace").strip())
            word, _, rest = raw.decode("utf-8", "replace").strip().partition(" ")
            if word == "saved":
                with self._kernels:
                    self._saved.add(rest)
                    self._kernels.notify_all()
                continue
            if word == "started":
                self._child_current = rest
                continue
            if word == "relaxed":  # the child lowered itself: a further need restarts it
                self._serving = False
                continue
            if word == "compiled":
                self.compiled.set()
            elif word == "total" and rest.isdigit():
                self._child_total = int(rest)
                self._child_in_main = True  # past its own priority setting
                pending, self._need_pending = self._need_pending, []
                if pending:
                    self._on_need(pending)
            elif word in ("ready", "failed"):
                count, _, name = rest.partition(" ")
                if count.isdigit():  # a child started again after a run counts from 1
                    self._child_ready = max(self._child_ready, int(count))
                if word == "failed":
                    self.failed.append(name)
                with self._kernels:
                    self._names_done.add(name)
                    self._kernels.notify_all()
            else:
                continue
            if self.running:
                self.progress.emit(self.ready, self.total)

    def _on_child_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and self.child is not None:
            self._child_failed(f"could not start ({self.child.errorString()})")

    def _on_child_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if self.child is None:
            return
        self._on_child_output()
        if self._stopped or self._child_killed_for_run:
            return
        if status == QProcess.ExitStatus.NormalExit and code == 0 and self._child_total:
            self._drop_child()
            # the methods that failed in the child compile at their first run (counted ready)
            self._child_ready = self._child_total
            self._finish()
            return
        self._child_failed(f"exit status {code}")

    def _child_failed(self, why: str) -> None:
        """The child crashed or could not start: prepare in this process, as before."""
        global _active
        _log.warning("kernel preparation in a child process failed (%s): preparing in-process", why)
        self._drop_child()
        self.running = False
        if _active is self:
            _active = None
        if not self._stopped:
            self._start_here(None)

    def _drop_child(self) -> None:
        with self._kernels:  # a run waiting for its kernels compiles them itself now
            self._child_alive = False
            self._serving = False
            self._kernels.notify_all()
        child, self.child = self.child, None
        if child is not None:
            with suppress(RuntimeError):
                child.readyReadStandardOutput.disconnect(self._on_child_output)
                child.finished.disconnect(self._on_child_finished)
                child.errorOccurred.disconnect(self._on_child_error)
            child.deleteLater()

    def _stop_child(self, timeout_ms: int) -> bool:
        """Kill the child (its cache files are renamed into place whole, or not at all)."""
        child = self.child
        if child is None:
            return True
        done = True
        if child.state() != QProcess.ProcessState.NotRunning:
            child.kill()
            done = child.waitForFinished(timeout_ms)
        self._drop_child()
        return done

    @contextmanager
    def giving_way(self) -> Iterator[None]:
        """While the block runs (a run, in its thread), start no further warm-up, and stop the
        one under way before its next kernel compile: the run gets the processor, and a kernel
        it compiles waits at most for the compile in progress (numba compiles one kernel at a
        time), not for a whole warm-up."""
        with self._lock:
            self._holds += 1
        self._hold.emit()
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
            self._resume.emit()

    def _on_hold(self) -> None:
        """A run began. The child filling the cache goes on: a kernel the run misses is asked
        of it (:meth:`_on_need`), and its other compiles run at the lowest priority."""

    def _on_resume(self) -> None:
        if self.in_child:
            with self._lock:
                idle = self._holds == 0
            child = self.child
            if idle:  # a need not yet served (the child still starting) is no more
                self._need_pending = []
            if idle and self._serving and child is not None and not self._stopped:
                self._serving = False  # no run waits: back to the lowest priority
                child.write(b"relax\n")
            return
        with self._lock:
            go = self._paused and self._holds == 0 and self.running
        if go:
            self._paused = False
            self._next()

    # a run's kernels from the child -------------------------------------------------------
    def methods_of(self, module: str) -> list[str]:
        """The methods whose warm-up prepares the kernels of ``module`` (a warm-up defined in
        it, or in the module whose name it extends: ``refine`` for ``refine_kernels``), the
        lower bound's first (every run computes it; its warm-up takes about a second); empty when
        no warm-up does (the run then compiles that kernel itself)."""
        pairs = self._method_modules()
        own = [n for n, m in pairs if module == m or module.startswith(m + "_")]
        if not own and not module.startswith("microgui."):  # a plug-in's kernel
            if self._plugin_methods is None:
                self._plugin_methods = self._plugin_modules()
            own = [n for n, m in self._plugin_methods if module == m or module.startswith(m + "_")]
        if not own:
            return []
        bound = [n for n, m in pairs if m.endswith(".univariate") and n not in own]
        return bound + own

    def _method_modules(self) -> list[tuple[str, str]]:
        """(name, warm-up's module) of every method the child prepares that has kernels: the
        built-in ones from :data:`~microgui.core.runs.prepare.PREPARED_MODULES` (no import),
        the plug-ins' read from the registry, once, when a run first needs a kernel no built-in
        warm-up makes (in the run's thread: the GUI thread imports no method module for it)."""
        if self._child_methods is None:
            from microgui.core.runs.prepare import PREPARED_MODULES

            self._child_methods = [(n, m) for n, m in PREPARED_MODULES.items() if m]
        return self._child_methods

    def _plugin_modules(self) -> list[tuple[str, str]]:
        """(name, warm-up's module) of the plug-ins' methods with kernels (imports them all)."""
        from microgui.core.runs.prepare import PREPARED_MODULES, preparation_list

        return [(n, w.__module__) for n, w in preparation_list() if w and n not in PREPARED_MODULES]

    def kernels_from_child(self) -> bool:
        """Whether a run's missing kernels are had from the child (it is alive) rather than
        compiled in this process."""
        return self.in_child and self._child_alive and not self._stopped

    def ask_child(self, names: Sequence[str]) -> None:
        """Ask the child for ``names``' kernels next, at normal priority (any thread)."""
        self._need.emit(list(names))

    def wait_for_kernel(self, path: str, names: Sequence[str], timeout_s: float) -> str:
        """Wait up to ``timeout_s`` for the kernel whose index is ``path`` (any thread but the
        GUI thread): "saved" (the child wrote it: load it), "done" (``names`` are prepared and
        it was not among their kernels), "gone" (no child any more) or "pending"."""
        with self._kernels:
            for look in ("before", "after"):
                if path in self._saved:
                    return "saved"
                if not self._child_alive or self._stopped:
                    return "gone"
                if all(n in self._names_done for n in names):
                    return "done"
                if look == "before":
                    self._kernels.wait(timeout_s)
            return "pending"

    def _on_need(self, names: list[str]) -> None:
        """A run waits for ``names``' kernels: the child takes them next at normal priority.
        A child at the lowest priority is set back to normal when it is on one of them or has
        begun none (:func:`os.setpriority`; Linux: allowed to root or with ``RLIMIT_NICE``),
        else it is replaced by a new child that prepares them first (the compile under way is
        lost; the kernels it had saved stay)."""
        child = self.child
        if not self.in_child or child is None or self._stopped or not self.child_command:
            with self._kernels:
                self._kernels.notify_all()
            return
        todo = [n for n in names if n not in self._names_done]
        if not todo:
            with self._kernels:
                self._kernels.notify_all()
            return
        line = ("first " + "\t".join(todo) + "\n").encode()
        if self._serving:
            child.write(line)
            return
        if not self._child_in_main and _may_raise_priority():
            # not yet at its own start, where it lowers its priority (a raise now would be
            # undone: measured, a first run of 168 s instead of 18): when it says "total"
            self._need_pending = todo
            return
        current = self._child_current
        if (not current or current in todo) and _normal_priority(child.processId()):
            self.served.append("priority raised")
            self._serving = True
            child.write(line)
            return
        self.served.append("restarted")
        # under the lock: a waiting run must not see the moment with no child ("gone": it
        # would compile the kernel itself)
        with self._kernels:
            self._child_killed_for_run = True
            if child.state() != QProcess.ProcessState.NotRunning:
                child.kill()
                child.waitForFinished(2000)
            self._drop_child()
            self._child_killed_for_run = False
            self._launch_child(self.child_command, todo)

    def _next(self) -> None:
        with self._lock:
            self._paused = self._holds > 0 and bool(self._queue)
            if self._paused:
                return
            warm_up = self._queue.pop(0) if self._queue else None
        if warm_up is None:
            self._finish()
            return
        self._slot.start(self._preparing(warm_up), warm_up)

    def _preparing(self, warm_up: WarmUp) -> Job:
        """``warm_up`` as a job of the preparation's thread, stopped before a kernel compile
        begins while a run computes (see :meth:`giving_way`) or once the window closes."""
        from microgui.core.methods.jit_cache import watching_compiles

        def gate(_module: str, _name: str) -> None:
            if self._holds > 0 or self._stopped:  # an int read: no lock needed
                self._gave_way.add(warm_up)
                raise _GiveWay()

        def job(_progress: ProgressFn) -> None:
            try:
                with watching_compiles(gate):
                    warm_up()
            except _GiveWay:
                pass

        return job

    def _done(self, warm_up: Any, ok: bool) -> None:
        if warm_up in self._gave_way:  # stopped for a run (even if it then failed): again later
            self._gave_way.discard(warm_up)
            with self._lock:
                self._queue.insert(0, warm_up)
            if self.running:
                self._next()
            return
        if ok:
            _prepared.add(warm_up)
        else:
            self.failed += [name for name, w in self._methods if w is warm_up]
        if self.running:
            self.progress.emit(self.ready, self.total)
            self._next()

    def _finish(self) -> None:
        global _active
        if not self.running:
            return
        self.running = False
        self.seconds = time.perf_counter() - self._started_at
        if _active is self:
            _active = None
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
        self.finished.emit(self.ready, self.total)

    def shutdown(self, timeout_ms: int = 60_000) -> bool:
        """Stop the warm-up in progress before its next kernel compile (the compile under way
        cannot be interrupted: tens of seconds for the largest kernels on a loaded machine) and
        wait for it; True when the pool is done (called when the window closes)."""
        self._stopped = True
        with self._lock:
            self._queue.clear()
        child_done = self._stop_child(min(timeout_ms, 5000))
        done = stop_tasks([self._slot], [self.pool], timeout_ms) and child_done
        self._finish()
        return done


def _may_raise_priority() -> bool:
    """Whether this process may set another one back from the lowest priority to normal
    (Linux: root, or ``RLIMIT_NICE`` of at least 20)."""
    try:
        import resource

        return os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20
    except (ImportError, AttributeError, OSError):
        return False


def _normal_priority(pid: int) -> bool:
    """Set the process ``pid`` back to normal priority, every thread of it (Linux keeps a
    priority per thread: numba's worker threads, started at the lowest priority, would leave a
    parallel kernel of a warm-up waiting for them: measured, a first run twice as long); False
    where that is not allowed (a user without ``CAP_SYS_NICE`` or ``RLIMIT_NICE``; Windows)."""
    if pid <= 0 or os.name == "nt":
        return False
    try:
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        threads = [pid]  # no /proc (macOS: the priority is the process's)
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 0)
        for thread in threads:
            with suppress(OSError):  # a thread that has ended meanwhile
                os.setpriority(os.PRIO_PROCESS, thread, 0)
    except (OSError, AttributeError):
        return False
    return True


def compile_status(method: str, module: str) -> str:
    """What a run's status says while a kernel of ``module`` compiles inside it."""
    if module.rsplit(".", 1)[-1].startswith("refine"):
        what = "the refinement kernels"
    elif module.rsplit(".", 1)[-1].startswith("local_suppression"):
        what = "the local suppression kernels"
    elif ".metrics." in module or module.endswith(".metrics"):
        what = "the kernels of the measures"
    else:
        what = f"the kernels of {method}"
    return f"compiling {what} (first run only)"  # the run panel adds the ellipsis


class _WaitForChild(BaseException):
    """Raised where a run's kernel compile would begin while the child prepares the kernels:
    the compile does not begin; the run waits for the child to save that kernel, then starts
    again and loads it. A BaseException: no ``except Exception`` of the run (a measure that
    fails, a helper thread's result) may take it for a failure."""

    def __init__(self, path: str, module: str, names: list[str]) -> None:
        super().__init__(path)
        self.path, self.module, self.names = path, module, names


def _runs_thread(run_thread: int) -> bool:
    """Whether this thread computes for the run whose thread is ``run_thread``: that thread, or
    a thread Python started (the run's lower bound, its thread pool), never the GUI thread or
    another task's thread of a Qt pool (a view's: it compiles as before)."""
    here = threading.current_thread()
    if here.ident == run_thread:
        return True
    foreign = getattr(threading, "_DummyThread", ())  # threads Python did not start (Qt's)
    return here is not threading.main_thread() and not isinstance(here, foreign)


#: How often a run waiting for the child's kernels looks at Cancel (seconds).
WAIT_LOOK_S = 0.05


def after_kernels(job: Job, spec: RunSpec) -> Job:
    """``job``, saying in its status when it compiles a kernel (:func:`compile_status`), and
    computing with the preparation in progress, if any, paused (:meth:`KernelPrep.giving_way`).

    While the preparation's child process is alive (issue 30, session 43), a kernel the run
    would compile is not compiled in this process: the compile's garbage made Python's full
    collections stall the GUI thread (127 ms idle, 300-600 ms under load, for the demo's first
    run). The compile is stopped before it begins (:func:`~microgui.core.methods.jit_cache.\
watching_compiles`), the child is asked for the methods that prepare it
    (:meth:`KernelPrep.methods_of`, at normal priority: :meth:`KernelPrep._on_need`), and the run
    waits, saying "compiling the kernels of <method> (first run only)" with the seconds waited
    and looking at Cancel every :data:`WAIT_LOOK_S`, until the child has saved that kernel; it
    then starts again from the beginning and loads the kernel from the disk cache. A kernel is
    waited for once: when the child did not save it (another signature, no warm-up makes it)
    or is gone (crashed, closed), the run compiles it itself, as it does without a child."""
    from microgui.core.methods.jit_cache import compiling_kernel, index_path, watching_compiles

    def running(progress: ProgressFn) -> Any:
        last: list[Any] = [0.0, ""]
        waited: set[str] = set()  # kernels waited for once: compiled here if missed again

        def noted(fraction: float, status: str = "", /) -> None:
            last[0] = max(last[0], fraction)  # a run started again does not go back
            last[1] = status
            progress(last[0], status)

        prep = _active
        run_thread = threading.get_ident()

        def started(module: str, _name: str) -> None:
            # may raise RunCancelled: the compile then does not begin
            progress(last[0], compile_status(spec.method, module))
            if prep is None or not _runs_thread(run_thread):
                return
            path = index_path(compiling_kernel())
            if path is None or path in waited or not prep.kernels_from_child():
                return
            names = prep.methods_of(module)
            if names:
                raise _WaitForChild(path, module, names)

        def ended(_module: str, _name: str) -> None:
            with suppress(RunCancelled):  # seen at the job's next progress call
                progress(last[0], last[1])

        def wait(w: _WaitForChild) -> None:
            assert prep is not None
            waited.add(w.path)
            prep.ask_child(w.names)
            began = time.perf_counter()
            what = compile_status(spec.method, w.module)
            _log.debug("run waits for %s (%s)", w.path, ", ".join(w.names))
            while (state := prep.wait_for_kernel(w.path, w.names, WAIT_LOOK_S)) == "pending":
                seconds = int(time.perf_counter() - began)
                progress(last[0], f"{what}, {seconds} s" if seconds else what)
            _log.debug("run waited %.1f s: %s", time.perf_counter() - began, state)

        # every thread: a run computes its lower bound in a helper thread, which compiles too
        # (the preparation's thread gives way before its own compiles while the run holds)
        with watching_compiles(started, ended, every_thread=True):
            if prep is None:
                return job(noted)
            with prep.giving_way():
                while True:
                    try:
                        return job(noted)
                    except _WaitForChild as w:
                        wait(w)
                        progress(last[0], last[1])

    return running


class KernelStatusLabel(QLabel):
    """The status bar's note on the kernels being prepared, shown only when it takes a while."""

    def __init__(self, prep: KernelPrep, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prep = prep
        self.setToolTip(
            "After installing or updating, microgui compiles its methods once (about a minute); "
            "later starts load them in under a second. A run started meanwhile has its own "
            "method prepared first."
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
