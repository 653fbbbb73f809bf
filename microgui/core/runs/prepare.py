"""Filling the on-disk kernel cache in a child process (issue 30): ``python -m microgui.core.runs.prepare``.

The app's background preparation (:class:`microgui.qt.kernel_prep.KernelPrep`) used to compile
every kernel in the app's own process: numba's type inference and LLVM calls hold the GIL, so the
GUI thread stood still up to 438 ms at a time (idle measurement of session 41, empty cache). This
module runs the same warm-ups in a process of its own, at low priority (``os.nice``; below normal
on Windows), with the same cache folder (:func:`microgui.core.methods.jit_cache.configure`: same
version, same source hash, same ``NUMBA_CACHE_DIR``); the app then only loads the kernels, when a
run first calls them. numba writes each cache file to a temporary name and renames it
(``numba.core.caching._CacheFileImpl._open_for_write``), and :mod:`jit_cache` locks the index
files, so a child killed mid-compile (the window closed) or compiling the kernel a run compiles
at the same moment leaves no broken entry.

Protocol (stdout, one line each, flushed): ``total N`` first, then for each method in
:func:`preparation_list`'s order ``ready I NAME`` or ``failed I NAME``, where I counts the methods
done so far; a line ``compiled`` before the first kernel compile (a cache that was empty, as
opposed to one that only loads); ``started NAME`` when a method's warm-up begins; ``saved PATH``
each time a kernel has been written to the cache (PATH: its index file,
:func:`microgui.core.methods.jit_cache.on_cache_saved`). Exit status 0 when the list went through
(failed warm-ups included: those methods compile at their first run).

A run of the app pressed meanwhile does not compile in the app's process (issue 30, session 43:
the compile's garbage made Python's full collections stall the GUI thread 127 ms idle, 300-600 ms
under load): it asks this child for its kernels and loads each one when its ``saved`` line comes
(:func:`microgui.qt.kernel_prep.after_kernels`). For that the child reads its stdin: a line
``first NAME…`` (names tab-separated) takes those methods next (after the warm-up under way: a
compile cannot be interrupted), ``relax`` puts the child back at the lowest priority (it says
``relaxed``, as when it lowers itself). Started with ``--first NAME…`` it prepares those
methods first at normal priority (the run is waiting for them: at the lowest priority, on a
busy machine, it would wait minutes), then lowers itself.

The lower bound's kernels compile APART, in a process forked from this one (Linux; issue 30,
session 45): every run needs them and MDAV's, and one process compiles one kernel at a time
(numba's compiler holds the GIL), so the two compiles ran one after the other, on one of the
machine's cores, while the first run of the app waited for both. The fork is taken as soon as
the lower bound's module is imported, before the other methods' modules; it prints its
``saved``/``compiled`` lines on the same stdout (one short line per write: whole on a pipe),
takes this process's priority when the app raises or lowers it, and is killed with it
(``PR_SET_PDEATHSIG``). This process prepares the lower bound's methods last (loading what the
fork saved; compiling them itself if the fork failed), after waiting for the fork.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

__all__ = [
    "Apart",
    "PREPARED_MODULES",
    "first_needed",
    "forked",
    "preparation_list",
    "lower_priority",
    "main",
]

#: A warm-up: compiles (or loads) a method's kernels, returns the seconds it took.
WarmUp = Callable[[], float]


def first_needed(warm_up: WarmUp | None) -> int:
    """The preparation's order (here and in the app's in-process preparation): the optimal
    univariate partition's kernels (every run's lower bound compiles them; about a second),
    then MDAV's (the proposed run's), then the others in the registry's order; a method without
    kernels first (nothing to wait for). The lower bound's came second until session 43: a run
    pressed at once, having loaded MDAV's first kernel, then waited 49 s for the rest of
    MDAV's warm-up (its pruned search) before the lower bound's (measured, load 1-3)."""
    if warm_up is None:  # no kernels: ready at once
        return -1
    module = warm_up.__module__
    return 0 if module.endswith(".univariate") else 1 if module.endswith(".mdav") else 2


#: The module of each built-in warm-up in :func:`preparation_list` (name → module; None: the
#: method has no kernels), so that the app learns which kernels the preparation covers without
#: importing every method's module in its GUI thread (~0.1-0.4 s; issue 30). A test checks it
#: against :func:`preparation_list`; methods of plug-ins are not in it.
PREPARED_MODULES: dict[str, str | None] = {
    "ama": "microgui.core.methods.mdav",
    "cbfs": "microgui.core.methods.cbfs",
    "dba": "microgui.core.methods.dba",
    "dp-individual-ranking": None,
    "gsms": "microgui.core.methods.gsms",
    "hybrid": "microgui.core.methods.mdav",
    "individual-ranking": None,
    "md": "microgui.core.methods.md",
    "mdav": "microgui.core.methods.mdav",
    "mdav-generic": "microgui.core.methods.mdav",
    "median": "microgui.core.methods.median",
    "mhm": "microgui.core.methods.mhm",
    "mst": "microgui.core.methods.mst",
    "mstk": None,
    "optimal": "microgui.core.methods.optimal",
    "optimal-univariate": "microgui.core.methods.univariate",
    "p-sensitive": "microgui.core.methods.psensitive",
    "t-closeness": "microgui.core.methods.tcloseness",
    "tfrp": "microgui.core.methods.tfrp",
    "vmdav": "microgui.core.methods.vmdav",
    "refinement": "microgui.core.methods.refine",
    "local suppression": "microgui.core.methods.local_suppression",
}


def preparation_list() -> list[tuple[str, WarmUp | None]]:
    """Every (name, warm-up) pair the preparation goes through: the registry's methods, the
    refinement any partitioning method may end with, a plan's local suppression step."""
    from microgui.core.methods import available_methods
    from microgui.core.methods.local_suppression import warm_up as suppression_warm_up
    from microgui.core.methods.refine import warm_up as refine_warm_up

    methods: list[tuple[str, WarmUp | None]] = [(m.name, m.warm_up) for m in available_methods()]
    methods.append(("refinement", refine_warm_up))
    methods.append(("local suppression", suppression_warm_up))
    return methods


def _say(line: str) -> None:
    """One line of the protocol on stdout in one write: whole on a pipe (up to 4 KiB) even
    when the process compiling apart (:func:`forked`) says a line at the same moment
    (``print`` writes the line and its end apart when Python's output is unbuffered,
    ``PYTHONUNBUFFERED``: "compiledcompiled" was seen)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def lower_priority(thread_id: int | None = None) -> None:
    """This process at the lowest priority: a run of the app gets the processors first.
    ``thread_id`` (the main thread's native id): from any thread, every thread of the
    process (Linux keeps a priority per thread: the warm-ups run in the main thread, parallel
    kernels in numba's workers); else the calling thread and those it starts later."""
    try:
        if os.name == "nt":  # pragma: no cover - Windows only
            import ctypes

            below_normal = 0x4000
            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
            kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), below_normal)
        elif thread_id is not None:  # every thread: numba's workers too (Linux: per thread)
            try:
                threads = [int(t) for t in os.listdir(f"/proc/{os.getpid()}/task")]
            except (OSError, ValueError):
                threads = [os.getpid()]  # no /proc (macOS: one priority per process)
            for thread in threads:
                try:
                    os.setpriority(os.PRIO_PROCESS, thread, 19)
                except OSError:
                    pass
        else:
            os.nice(19)
    except (OSError, AttributeError):
        pass


class _Requests:
    """The app's requests read from stdin in a thread of their own: methods to take next and
    whether to lower the priority (``relax``)."""

    def __init__(self, first: list[str]) -> None:
        self.lock = threading.Lock()
        self.first: list[str] = list(first)
        self.wanted: set[str] = set(first)  # every method asked for first
        self.relaxed = not first
        self.main_thread = threading.get_native_id()
        #: processes compiling apart for this one (:func:`forked`): they take its priority
        self.apart: list[Apart] = []

    def read(self) -> None:
        try:
            self._read()
        except (OSError, ValueError):  # no stdin to read (closed, or not a stream)
            return

    def _read(self) -> None:
        for line in sys.stdin:
            word, _, rest = line.strip().partition(" ")
            if word == "first":
                asked = rest.split("\t")
                with self.lock:  # the app has set this process back to normal priority
                    self.first = asked + self.first
                    self.wanted.update(asked)
                    self.relaxed = False
                    apart = list(self.apart)
                for process in apart:  # so does the process compiling apart
                    process.set_priority(0)
            elif word == "relax":
                self.relax()

    def relax(self) -> None:
        with self.lock:
            if self.relaxed:
                return
            self.relaxed = True
            apart = list(self.apart)
        lower_priority(self.main_thread)  # every thread, from any thread
        for process in apart:
            process.set_priority(19)
        _say("relaxed")

    def take(self, pending: list[int], names: list[str]) -> None:
        """Move the requested methods to the front of ``pending`` (indices into ``names``)."""
        with self.lock:
            wanted, self.first = self.first, []
        front = [i for n in wanted for i in pending if names[i] == n]
        front = list(dict.fromkeys(front))
        pending[:] = front + [i for i in pending if i not in front]


@contextmanager
def _no_collections() -> Iterator[None]:
    """No garbage collection during a warm-up, one at its end. A compile makes so many objects
    that Python's collector runs hundreds of times in it, each pass over every young object and
    now and then over every object of the process (numba, pandas, scipy, networkx: ~1M): MDAV's
    first warm-up took 14.0-14.6 s here against 12.7-13.0 s with collections off (idle, 2
    cores, session 44: the first run of the app waits for it, issue 30), for ~90 MB more at its
    peak (371 → 463 MB) in this short-lived child. The app's own process never does this."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect()


class Apart:
    """A warm-up compiling in a process forked from this one (:func:`forked`)."""

    def __init__(self, pid: int, warm_up: WarmUp) -> None:
        self.pid = pid
        self.warm_up = warm_up
        self.ok: bool | None = None  # None while it runs

    def running(self) -> bool:
        if self.ok is None:
            with suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == 0:
                    return True
                self.ok = os.waitstatus_to_exitcode(status) == 0
            if self.ok is None:  # reaped elsewhere: its kernels load or compile here
                self.ok = False
        return False

    def wait(self) -> bool:
        """Wait for it to end; whether its warm-up went through."""
        if self.ok is None:
            try:
                _pid, status = os.waitpid(self.pid, 0)
                self.ok = os.waitstatus_to_exitcode(status) == 0
            except ChildProcessError:
                self.ok = False
        return self.ok

    def set_priority(self, niceness: int) -> None:
        if self.ok is None:
            with suppress(OSError):  # not allowed to raise it, or it has ended
                os.setpriority(os.PRIO_PROCESS, self.pid, niceness)


def forked(warm_up: WarmUp) -> Apart | None:
    """``warm_up`` run in a process forked from this one, its exit status saying whether it went
    through; None where there is no fork to take (not Linux: macOS's system libraries do not
    survive a fork, Windows has none). Measured (issue 30, session 45, 2 cores): the lower bound's
    compile (~0.7 s idle) no longer delays MDAV's, which the app's first run waits for."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return None
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        with warnings.catch_warnings():  # numpy's BLAS threads: nothing of theirs is used here
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        return None
    if pid:
        return Apart(pid, warm_up)
    code = 1  # the forked process: the warm-up, then out without the parent's exit handlers
    try:
        _die_with(parent)
        with _no_collections():
            warm_up()
        code = 0
    except BaseException:  # noqa: BLE001 - the parent compiles it then
        pass
    finally:
        with suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _die_with(parent: int) -> None:
    """This process killed when ``parent`` ends (Linux ``prctl(PR_SET_PDEATHSIG)``): the app
    kills the preparation's child when the window closes or a run restarts it."""
    import ctypes

    pr_set_pdeathsig = 1
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the call above
        os._exit(1)


def _lower_bound() -> WarmUp:
    """The lower bound's warm-up (the optimal univariate partition's kernels), imported alone."""
    from microgui.core.methods.univariate import warm_up

    return warm_up


def _mdav() -> tuple[str, WarmUp]:
    """MDAV's warm-up (the proposed run's kernels) and a name it prepares, imported alone."""
    from microgui.core.methods.mdav import warm_up

    return "mdav", warm_up


def _method_count() -> int:
    """How many methods :func:`preparation_list` will hold, without importing every method's
    module: the built-in ones, the plug-ins' entry points, the refinement and local suppression
    (a plug-in that then fails to load makes it one too many: ``total`` is said again)."""
    from importlib import metadata

    from microgui.core.methods import BUILT_IN
    from microgui.core.methods.plugins import GROUP

    names = set(BUILT_IN) | {ep.name for ep in metadata.entry_points(group=GROUP)}
    return len(names) + 2


def _warm(name: str, warm_up: WarmUp, done: dict[WarmUp, bool]) -> bool:
    """``warm_up`` once (a warm-up shared by several names runs once), without collections."""
    if warm_up not in done:
        _say(f"started {name}")
        try:
            with _no_collections():
                warm_up()
            done[warm_up] = True
        except Exception as exc:  # noqa: BLE001 - that method compiles at its first run
            done[warm_up] = False
            print(f"error {name}: {type(exc).__name__}", file=sys.stderr, flush=True)
    return done[warm_up]


def main(
    argv: list[str] | None = None,
    *,
    apart: Callable[[WarmUp], Apart | None] | None = None,
    lean: bool = False,
) -> int:
    """The child's work (the module's docstring). ``apart``: how to start the lower bound's
    warm-up in a process of its own (:func:`forked`, given when run as a program); None: here,
    in order. ``lean`` (given when run as a program): at start-up (no ``--first``), MDAV's
    warm-up before the other methods' modules are imported (~0.4 s idle, ~1 s under load,
    before the compile the app's first run waits for; issue 30, session 45); ``total`` is then
    counted from the registry's names (:func:`_method_count`)."""
    from microgui.core import process_start

    process_start.start()  # one BLAS thread; numpy.f2py never run (issue 33)
    args = sys.argv[1:] if argv is None else argv
    # the methods named after --first: at normal priority (a run waits for them), tab-separated
    first = args[1].split("\t") if args[:1] == ["--first"] and len(args) > 1 else []
    requests = _Requests(first)
    if not first:
        lower_priority()
    from microgui.core.methods.jit_cache import on_cache_saved, on_first_compile

    said = threading.Event()

    def compiled(_kernel: str) -> None:
        if not said.is_set():
            said.set()
            _say("compiled")

    on_first_compile(compiled)
    on_cache_saved(lambda path: _say(f"saved {path}"))
    # the lower bound's compile apart, before the other methods' modules are imported
    bound = apart(_lower_bound()) if apart is not None else None
    if bound is not None:
        requests.apart.append(bound)
    done: dict[WarmUp, bool] = {}
    said_total = 0
    if lean and not first:
        said_total = _method_count()
        _say(f"total {said_total}")
        threading.Thread(target=requests.read, name="requests", daemon=True).start()
        if bound is None:  # the lower bound first, as below
            _warm("optimal-univariate", _lower_bound(), done)
        _warm(*_mdav(), done)
    methods = preparation_list()
    names = [name for name, _w in methods]
    if said_total != len(methods):
        _say(f"total {len(methods)}")
    if not said_total:
        threading.Thread(target=requests.read, name="requests", daemon=True).start()
    # the lower bound's kernels first, then MDAV's (the proposed run's); the methods a run
    # waits for before all
    pending = sorted(range(len(methods)), key=lambda i: first_needed(methods[i][1]))
    count = 0
    while pending:
        requests.take(pending, names)
        i = pending.pop(_next(pending, methods, bound))
        name, warm_up = methods[i]
        ok = True
        if warm_up is not None:
            if bound is not None and warm_up is bound.warm_up:
                bound.wait()  # then loaded from what it saved (compiled here if it failed)
            ok = _warm(name, warm_up, done)
        count += 1
        _say(f"{'ready' if ok else 'failed'} {count} {name}")
        if not requests.relaxed and requests.wanted.isdisjoint(names[j] for j in pending):
            requests.relax()  # what the run waited for is ready: back to the lowest priority
    return 0


def _next(pending: list[int], methods: list[tuple[str, WarmUp | None]], bound: Apart | None) -> int:
    """The position in ``pending`` of the method to prepare next: the first, unless its
    warm-up is compiling apart and another one is left (that one goes first)."""
    if bound is None or not bound.running():
        return 0
    for position, i in enumerate(pending):
        if methods[i][1] is not bound.warm_up:
            return position
    return 0


if __name__ == "__main__":
    sys.exit(main(apart=forked, lean=True))
