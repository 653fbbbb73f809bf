"""Where numba caches the compiled kernels: one folder per version of *all* the kernel sources.

numba's on-disk cache (``cache=True``) is keyed on the source file of each jitted function only.
A cached function embeds the code of the jitted functions it calls, and numba does not notice
when a callee defined in another file changes (numba documentation, "Cache invalidation fails to
recognize changes in functions defined in a different file"; numba issue #1833). Our kernels call
across files (tfrp → cbfs → mdav, tcloseness → mdav, …). Here it was not theoretical: after kernel
files had changed, stale cache entries in ``__pycache__`` gave a TFRP partition that differed from
the pure-Python reference (EIA, k = 10: IL 2.6644 instead of 2.6636, depending on which method had
run first in the process) and a t-closeness release whose merged groups were not t-close.

So before any kernel is compiled, :func:`configure` points numba's cache at a folder named after
microgui's version and a hash of every ``.py`` file of this package: any change to any kernel
source gives a new folder, and every kernel is compiled afresh once. The folder is under
``NUMBA_CACHE_DIR`` when the user (or the frozen app's entry script) set one, else under the user's
cache folder (``$XDG_CACHE_HOME``/``~/.cache``, ``%LOCALAPPDATA%`` on Windows); it is never the
source tree, which may not be writable. Folders of older hashes unused for an hour are removed. If none of this can
be written, numba falls back to compiling at every start (the kernels still run).

Machine code compiled by different processes must never share a symbol name
(:func:`_unique_symbols`): numba names each compiled function's symbol after its qualified name,
argument types and a counter private to the process, so two processes filling the cache could
name two different helpers alike, and a third process loading both callers ran the wrong one
(the ``dba`` crash of session 38; numba issues #10486 and #10128).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numba

from microgui._version import __version__

__all__ = [
    "configure",
    "cache_folder",
    "source_hash",
    "njit",
    "njit_parallel",
    "file_lock",
    "on_first_compile",
    "watching_compiles",
    "compile_seconds",
    "cached_on_disk",
    "index_path",
    "compiling_kernel",
    "on_cache_saved",
    "first_call_compiles",
    "CompileHook",
]

_PREFIX = "kernels-"
_configured: Path | None = None


def njit(fn: Callable[..., Any]) -> Any:
    """``numba.njit(cache=True, nogil=True)``: every kernel of the methods.

    ``nogil``: the kernels touch no Python object, so they release the GIL while they run; the
    app's GUI thread then keeps its event loop going during a run (measured: the longest stall
    during a 60,000-record MDAV run fell from 1.24 s to 47 ms). Without a cache location for the
    source file (a frozen application shipped without ``.py`` sources) numba refuses
    ``cache=True``; the kernel is then compiled at first use.
    """
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True)(fn)


def njit_parallel(fn: Callable[..., Any]) -> Any:
    """:func:`njit` with ``parallel=True``: a kernel whose ``prange`` loops run on
    :func:`numba.get_num_threads` threads (:mod:`microgui.core.methods.threads`).

    Kept for small helpers whose loop bodies call ordinary :func:`njit` kernels: numba's parfor
    passes make a parallel kernel compile slower, so the large loops stay serial and call these.
    Every such helper splits its work into pieces fixed by the data (never by the thread count)
    and merges the pieces' answers in piece order, so the result is the same for any number of
    threads.
    """
    try:
        return numba.njit(cache=True, nogil=True, parallel=True)(fn)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, parallel=True)(fn)


#: How long a process waits for another one's cache write before it goes on without the lock.
LOCK_SECONDS = 120.0


@contextmanager
def file_lock(path: str, seconds: float = LOCK_SECONDS) -> Iterator[bool]:
    """An exclusive lock between processes on ``path`` (created if needed), held for the block;
    yields False (and locks nothing) when the lock file cannot be made or the lock is not had
    within ``seconds``: a read-only cache folder must not stop a run."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    locked = False
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                _try_lock(fd)
                locked = True
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        yield locked
    finally:
        if locked:
            with suppress(OSError):
                _unlock(fd)
        os.close(fd)


if os.name == "nt":  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]

else:
    import fcntl

    def _try_lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _lock_cache_files() -> None:
    """Make numba's cache index safe between processes.

    numba saves a kernel by reading its index file, adding the new signature under the first
    free data-file number and writing index then data, with no lock between processes (numba
    issue #4807). Two processes compiling the same kernel at once (a sweep's or blocked run's
    workers on a cold cache; the app and the command line) can both take data-file number 1 for
    different signatures and leave an index that names another signature's data. Each save and
    each load of an index and its data is therefore done under a file lock beside the index
    (``….nbi.lock``). Skipped, with the race left as it was, if numba's cache class no longer
    looks as expected. (The poisoned caches of session 38 had consistent indexes: that crash was
    the symbol collision that :func:`_unique_symbols` prevents.)
    """
    from numba.core import caching

    cls = getattr(caching, "IndexDataCacheFile", None)
    if cls is None or getattr(cls, "_microgui_locked", False):
        return
    if not all(callable(getattr(cls, name, None)) for name in ("save", "load")):
        return

    def locked(method: Callable[..., Any]) -> Callable[..., Any]:
        saving = method.__name__ == "save"

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            index = getattr(self, "_index_path", None)
            if not isinstance(index, str):
                return method(self, *args, **kwargs)
            with file_lock(index + ".lock"):
                value = method(self, *args, **kwargs)
            if saving:  # index and data written, lock released: another process may load it
                for listener in list(_saved_listeners):
                    with suppress(Exception):
                        listener(index)
            return value

        return wrapper

    cls.save = locked(cls.save)
    cls.load = locked(cls.load)
    cls._microgui_locked = True


class _ProcessUniqueIds:
    """An iterator of function ids that no other process draws: 64 random bits (from the OS, so
    a forked child does not repeat its parent) above a counter of this process's draws (so two
    ids of one process always differ)."""

    def __init__(self) -> None:
        self._count = itertools.count(1)
        self._lock = threading.Lock()

    def __iter__(self) -> _ProcessUniqueIds:
        return self

    def __next__(self) -> int:
        with self._lock:
            return (secrets.randbits(64) << 24) | (next(self._count) & 0xFFFFFF)


def _unique_symbols() -> None:
    """Give every function numba compiles in this process an id no other process uses.

    The mechanism of the poisoned kernel cache: numba names the machine-code symbol of each
    compiled function ``<module>.<qualname>[abi:v<id>](<argument types>)``, where ``<id>`` comes
    from a counter that starts at 1 in every process
    (``numba.core.bytecode.FunctionIdentity._unique_ids``). A kernel's cached object code holds
    its callees' code under these names with ``linkonce_odr`` linkage ("any copy will do"). Two
    processes that compile on a cache miss count from the same start, so two *different*
    functions with one qualified name and argument types (closures made by one factory, such
    as numba's own ``make_quicksort_impl.<locals>.run_quicksort`` behind both ``np.sort`` and
    ``np.argsort``) get the same symbol, one in each process's cache entry. Each entry is right
    on its own; a later process that loads both links every call of that name to the body
    loaded first and runs code that belongs to another function: a wrong ``_take_group`` sort
    in ``dba`` (29 records grouped where 30 were due) or a segmentation fault. The processes need
    not even run at the same time, and the index lock (:func:`_lock_cache_files`) cannot help;
    numba issues #10486 and #10128 describe the same collision. With ids drawn by
    :class:`_ProcessUniqueIds` the symbols of two processes never coincide (the ids are not
    part of numba's cache key, so cached kernels still load in every process).
    """
    from numba.core import bytecode

    cls = getattr(bytecode, "FunctionIdentity", None)
    ids = getattr(cls, "_unique_ids", None)
    if cls is None or ids is None or isinstance(ids, _ProcessUniqueIds):
        return
    cls._unique_ids = _ProcessUniqueIds()


#: Called with a kernel's index path after each save to the cache (:func:`on_cache_saved`).
_saved_listeners: list[Callable[[str], None]] = []


def on_cache_saved(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(index path)`` each time this process has saved a compiled kernel to the
    on-disk cache (its index and data files written, their lock released): the kernel preparation
    in a child process says so on its stdout, and a run of the app waiting for that kernel then
    loads it (:mod:`microgui.core.runs.prepare`). Returns a function that removes the listener."""
    _saved_listeners.append(callback)
    return lambda: _saved_listeners.remove(callback) if callback in _saved_listeners else None


def on_first_compile(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(kernel name)`` once, when this process first compiles a kernel (a cache
    miss: the first run after installing, or after an update); returns a function that removes
    the listener. Loading a kernel from the cache calls nothing."""
    from numba.core import event

    class _First(event.Listener):
        fired = False

        def on_start(self, ev: Any) -> None:
            if self.fired:
                return
            self.fired = True
            dispatcher = (ev.data or {}).get("dispatcher")
            callback(str(getattr(dispatcher, "__name__", "kernel")))

        def on_end(self, ev: Any) -> None:
            pass

    listener = _First()
    event.register("numba:compile", listener)  # type: ignore[no-untyped-call]
    return lambda: event.unregister("numba:compile", listener)  # type: ignore[no-untyped-call]


#: Called with the compiled function's module and name (see :func:`watching_compiles`).
CompileHook = Callable[[str, str], None]


class _ThreadCompiles(threading.local):
    """One thread's compiles: nesting depth, watchers, seconds spent compiling."""

    def __init__(self) -> None:
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0
        self.skip_end = False  # the start was refused by a watcher: its end event is not ours
        self.kernel: Any = None  # the dispatcher whose compile is beginning (for the watchers)
        self.watchers: list[tuple[CompileHook, CompileHook | None]] = []


_threads = _ThreadCompiles()
_everywhere: list[tuple[CompileHook, CompileHook | None]] = []  # watchers of every thread
_watch_installed = False
_watch_lock = threading.Lock()


def _install_watch() -> None:
    """Register, once per process, the listener behind :func:`watching_compiles` and
    :func:`compile_seconds` (numba fires ``numba:compile`` only on a cache miss, in the thread
    that compiles, inside its compiler lock)."""
    global _watch_installed
    with _watch_lock:
        if _watch_installed:
            return
        from numba.core import event

        class _Watch(event.Listener):
            def on_start(self, ev: Any) -> None:
                here = _threads
                if here.depth == 0:
                    dispatcher = (ev.data or {}).get("dispatcher")
                    module = str(getattr(dispatcher, "__module__", "") or "")
                    name = str(getattr(dispatcher, "__name__", "kernel"))
                    here.kernel = dispatcher
                    try:
                        for started, _ended in [*here.watchers, *_everywhere]:
                            started(module, name)
                    except BaseException:
                        # nothing compiled yet: numba's lock is released on the way out,
                        # and trigger_event still sends this event's end, which is not ours
                        here.skip_end = True
                        raise
                    finally:
                        here.kernel = None
                    here.started = time.perf_counter()
                here.depth += 1

            def on_end(self, ev: Any) -> None:
                here = _threads
                if here.skip_end:
                    here.skip_end = False
                    return
                here.depth = max(0, here.depth - 1)
                if here.depth:
                    return
                here.seconds += time.perf_counter() - here.started
                dispatcher = (ev.data or {}).get("dispatcher")
                module = str(getattr(dispatcher, "__module__", "") or "")
                name = str(getattr(dispatcher, "__name__", "kernel"))
                for _started, ended in [*here.watchers, *_everywhere]:
                    if ended is None:
                        continue
                    # numba saves the kernel to the cache after this event: never raise here
                    with suppress(Exception):
                        ended(module, name)

        event.register("numba:compile", _Watch())  # type: ignore[no-untyped-call]
        _watch_installed = True


@contextmanager
def watching_compiles(
    started: CompileHook, ended: CompileHook | None = None, *, every_thread: bool = False
) -> Iterator[None]:
    """While the block runs, in this thread (``every_thread``: in any thread, e.g. a run's
    helper threads; this thread's own watchers are called first): ``started(module, name)`` when a kernel
    compile begins (a cache miss; the kernels it calls, compiled within it, are not reported
    apart) and ``ended(module, name)`` when it has ended. ``started`` may raise (a run
    cancelled, a preparation giving way): the compile then does not begin, nothing compiled is
    lost, and the exception comes out of the kernel call. ``ended`` must not raise (numba saves
    the kernel to its cache after it); an exception from it is ignored."""
    _install_watch()
    entry = (started, ended)
    where = _everywhere if every_thread else _threads.watchers
    where.append(entry)
    try:
        yield
    finally:
        where.remove(entry)


def compiling_kernel() -> Any:
    """The kernel (numba dispatcher) whose compile is beginning in this thread, while the
    ``started`` watchers of :func:`watching_compiles` are called; None elsewhere."""
    return _threads.kernel


def index_path(kernel: Any) -> str | None:
    """The path of ``kernel``'s index file in numba's on-disk cache (one per kernel, whatever
    its signatures), or None for a kernel without a disk cache. The same in every process of
    one cache folder: what :func:`on_cache_saved` reports."""
    cache = getattr(kernel, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index if isinstance(index, str) else None


def cached_on_disk(kernel: Any) -> bool:
    """Whether numba's on-disk cache holds compiled code of ``kernel`` (its index file exists in
    :func:`cache_folder`): its first call in a process then loads it, in well under a second,
    instead of compiling it. Filled by an earlier run or by the app's preparation in a child
    process (:mod:`microgui.core.runs.prepare`)."""
    index = index_path(kernel)
    return index is not None and os.path.exists(index)


def first_call_compiles(*kernels: Any) -> bool:
    """Whether calling ``kernels`` may compile one of them: one has no signature in this
    process yet and nothing in the on-disk cache. What a method's status says before its
    kernels run ("compiling … (first run only)"): after the app's preparation in a child process
    the kernels are on disk but not yet loaded here, and are loaded, not compiled (issue 30: the
    status said it compiled after the preparation, a kernel having no signature in the app's
    process being read as one to compile). The app reports real compiles as they begin
    (:func:`watching_compiles`); this is the estimate made before the call."""
    return any(not getattr(k, "signatures", True) and not cached_on_disk(k) for k in kernels)


def compile_seconds() -> float:
    """Seconds this thread has spent compiling kernels so far (cache misses; 0.0 with a filled
    cache): a phase that times itself subtracts it, so that a first run's compile does not
    inflate its estimate of the time left."""
    _install_watch()
    return _threads.seconds


def source_hash() -> str:
    """A short hash of every ``.py`` file of ``microgui.core.methods`` (names and contents)."""
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _base() -> Path:
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user)
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "microgui" / "numba"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "microgui" / "numba"


def cache_folder() -> Path:
    """The cache folder of this version of the kernel sources."""
    return _base() / f"{_PREFIX}{__version__}-{source_hash()}"


def configure() -> Path | None:
    """Point numba's cache at :func:`cache_folder` (once per process); returns the folder, or
    None when it cannot be created (numba then keeps its default behaviour)."""
    global _configured
    if _configured is not None:
        return _configured
    _unique_symbols()  # before any kernel compiles, even when no cache folder can be made
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    # numba.config creates its settings at run time (from the environment), so no stub knows them
    numba.config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    _configured = folder
    _lock_cache_files()
    now = time.time()
    for old in folder.parent.glob(f"{_PREFIX}*"):
        # a stale version's kernels; not one touched in the last hour, which another process
        # (of another checkout or version) may still be using
        with suppress(OSError):
            if old != folder and old.is_dir() and now - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
    return folder


configure()  # at import: the package imports this module before any kernel module
_install_watch()
