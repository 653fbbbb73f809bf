"""How many threads the exact kernels use (issue 33, item 1).

The parallel kernels (:func:`~microgui.core.methods.jit_cache.njit_parallel`) split their work
into pieces fixed by the data and merge the pieces' answers in piece order, so a run gives the same
partition, bit for bit, with any number of threads; only the time differs. The number is numba's
(:func:`numba.set_num_threads`), which numba keeps *per calling thread*: a run sets it in the
thread that runs the kernels (:func:`using_threads`).

- ``threads=None`` (the default): ``MICROGUI_THREADS`` when set, else every core this process may
  use. The app asks for one core fewer (:func:`app_threads`): its GUI thread keeps one.
- numba cannot use more threads than it started its pool with (``NUMBA_NUM_THREADS``, by default
  the number of cores); a larger request is capped there (the report records the number used).

Parallelism inside MDAV's loop is fine-grained (a parallel region per query or pass, 0.1-1 ms
each): on an idle machine both threads run at once, but when other programs hold the cores a
thread waits for the other at every region and a run can take several times *longer*. So the
drivers do not assume it pays: :class:`AdaptiveThreads` times the kernel's batches and keeps
whichever of one thread and all threads did the same work faster, probing the other now and then.

**Two threads splitting each query: estimated 1.34-1.47x at 100,000 records, short of 1.5x**
(issue 33 item 1, session 42; measured, not built). The one route left after the two-query step
(:func:`~microgui.core.methods.spatial.farthest_and_nearest`, 1.18x measured idle) is data
parallelism inside each query: one parallel region per batch, both threads running MDAV's loop in
lock-step, each searching half of the records for every query and meeting at a spin barrier,
the halves' answers merged by the serial tie rule. Measured on a 2-core machine that other
programs kept busy (minimum of repeats per query, preempted samples cut off; spread over four
runs; to be re-measured idle). ``python -m microgui.bench --split-queries`` gives the first two
items; the others come from an emulation of the whole loop that timed every query, and each
half of its split, in one thread (not kept: it copied the search kernels).

- *Barrier*: a two-thread spin barrier on atomics (numba intrinsics: an acquire load, a release
  store) costs 20-230 ns median per crossing, p99 under 0.7 us, when both threads hold a core,
  against queries of 5-40 us: negligible. When another program holds the second core a crossing
  waits for a time slice (ms): what :class:`AdaptiveThreads` guards against.
- *k-1 nearest split in two* (100,000 x 10, k = 5, whole table remaining). Time of the larger
  half, each half given the final k-1-th distance as its bound (the best case): 0.56-0.68 of
  the serial search with whole blocks dealt out in turn, 0.68-0.82 with each block's records
  halved; each half still bounds every superblock and its visited blocks (0.14-0.23 of the
  search). Distances computed by the larger half (counts, not times): 0.496 of the serial
  search's with the final bound, 0.69 on its own bound, 0.558 in lock-step with the bounds
  shared (the smaller of the two halves' k-1-th distances; 0.563 at 1,000,000): with a shared
  bound a half takes about 0.62-0.74 of the serial search.
- *Farthest searches split in two* (the anchor walk; halves of every chunk): 0.60 of the serial
  walk from the average, 0.69 from r, on their own bounds; 0.54 and 0.49 with the final bound.
- *Serial loop, 100,000 x 10*: farthest from the average 4 %, farthest from r 25 %, r's k-1
  nearest 24 %, s's k-1 nearest 23 %; taking the groups out (labels, running sums, blocks'
  boxes, anchor list) 15 % and re-making the anchor list 8 %. Those last 23 % change the shared
  structures: serial. With every query exactly halved and free barriers: 1.63x at most.
- *Estimate* from these per-iteration times (barriers at 0.3 us, 6 per pair of groups; per
  iteration the better of the two-query step and the split): no shared bounds 1.17x; shared
  bounds (k-1 nearest at 0.62-0.74, farthest between its own-bound and final-bound figures)
  1.34-1.47x; every search at its best case (final bounds, k-1 nearest at 0.56) 1.53x. Running
  s's search beside the removal of r's group instead of splitting it gains nothing (s's search
  is longer than the removal). The same model gives 1.19x for today's two-query step alone,
  which measured 1.18x idle. The model assumes warm caches and no contention for memory.
- *1,000,000 x 10* (profile only): farthest from r about a third, the other queries about 45 %,
  removals 6 %, re-anchoring 3-15 % (uncertain under load): every query at 0.6 of its serial
  time would give 1.44-1.56x, at 0.65 1.36-1.46x; the 1.7x target needs every query at
  0.46-0.54 of its serial time: a perfect split.

So the lock-step loop (a large kernel: every query split, a bound shared by atomics, the merges,
cancel points) is estimated short of 1.5x at 100,000 and of 1.7x at 1,000,000; it would take the
removals and the anchor list made parallel or much cheaper first, and a cheaper k-1 nearest
(its bounds are duplicated in each half). Re-run the probe idle before deciding otherwise.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from microgui.core.errors import InvalidParameter

__all__ = [
    "ENV",
    "available_cores",
    "parse_threads",
    "default_threads",
    "app_threads",
    "max_threads",
    "threadsafe_layer",
    "current_threads",
    "using_threads",
    "requested_threads",
    "AdaptiveThreads",
]

#: Environment variable giving the default number of threads.
ENV = "MICROGUI_THREADS"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def parse_threads(value: object, where: str = "--threads") -> int:
    """A thread count >= 1 from an option or the environment, or a one-line
    :class:`InvalidParameter` naming ``where``."""
    try:
        n = int(str(value).strip())
    except ValueError:
        n = 0
    if n < 1:
        raise InvalidParameter(f"{where}={value!r} must be a whole number of threads >= 1")
    return n


def default_threads() -> int:
    """``MICROGUI_THREADS`` when set, else :func:`available_cores`."""
    env = os.environ.get(ENV, "").strip()
    return parse_threads(env, ENV) if env else available_cores()


def app_threads() -> int:
    """The app's default: ``MICROGUI_THREADS`` when set, else one core fewer than there are
    (at least one), leaving a core to the GUI thread."""
    env = os.environ.get(ENV, "").strip()
    return parse_threads(env, ENV) if env else max(1, available_cores() - 1)


def max_threads() -> int:
    """The most threads numba can run a kernel on in this process (``NUMBA_NUM_THREADS``), or 1
    where numba has no thread-safe threading layer (:func:`threadsafe_layer`)."""
    import numba

    layer = threadsafe_layer()
    return int(numba.config.NUMBA_NUM_THREADS) if layer else 1  # type: ignore[attr-defined]


@functools.cache
def threadsafe_layer() -> bool:
    """Whether numba can load a threading layer that several Python threads may call at once
    (``tbb`` or ``omp``). Its fallback, ``workqueue``, aborts the whole process when two threads
    launch parallel kernels together (numba's "The Threading Layers": workqueue is neither
    thread- nor fork-safe) -- as the app does, with its run, its preparation and the bound each in
    a thread. Without one, every run stays on one thread (the partition is the same) and numba is
    told never to choose workqueue for a parallel launch of ours."""
    import importlib

    import numba

    for module in ("numba.np.ufunc.tbbpool", "numba.np.ufunc.omppool"):
        try:
            importlib.import_module(module)
        except (ImportError, OSError):
            continue
        numba.config.THREADING_LAYER = "threadsafe"  # type: ignore[attr-defined]
        return True
    return False


def current_threads() -> int:
    """The number of threads the kernels called from this thread use."""
    import numba

    return int(numba.get_num_threads())


class _Requested(threading.local):
    n: int | None = None


_requested = _Requested()


def requested_threads(threads: int | None = None) -> int:
    """``threads`` when given; else the number an enclosing :func:`using_threads` block of this
    thread set (a plan's steps keep the command's ``--threads``); else :func:`default_threads`."""
    if threads is not None:
        return parse_threads(threads)
    return _requested.n if _requested.n is not None else default_threads()


@contextmanager
def using_threads(threads: int | None) -> Iterator[int]:
    """Run the kernels called from this thread on ``threads`` threads (None:
    :func:`requested_threads`; capped at :func:`max_threads`) for the block; yields the number
    set and restores the previous one after."""
    import numba

    n = max(1, min(requested_threads(threads), max_threads()))
    before = numba.get_num_threads()
    outer = _requested.n
    numba.set_num_threads(n)
    _requested.n = n
    try:
        yield n
    finally:
        _requested.n = outer
        numba.set_num_threads(before)


class AdaptiveThreads:
    """Chooses, batch by batch, between one thread and :func:`current_threads` for a kernel that
    runs to a work budget per call (MDAV's kernels), and how much of the budget to give it.

    The first batch runs on all threads, the second on one; from then on the faster of the two
    (seconds per whole budget, the last few batches of each) runs, and the other is tried again
    after :attr:`PROBE_FIRST` batches, then after twice as many each time it loses again (a busy
    machine is not probed at a high cost), so that a machine that becomes idle (or busy) mid-run
    is followed. A batch that took longer than :attr:`TARGET_SECONDS` gets a smaller share of the
    budget the next time it runs on that many threads (a thread held up by another program at
    every parallel region can make a batch ten times slower): progress and cancellation still
    come every few tenths of a second. The choice never changes a result, only how fast it
    comes.

    Use::

        chooser = AdaptiveThreads()
        while work left:
            with chooser.batch() as (threads, share):
                kernel(..., budget=int(BUDGET * share), parallel=threads > 1)
                if it finished: chooser.partial()
    """

    #: False: every batch on all threads (the tests of the parallel kernels).
    adaptive = True
    #: Batches before the option not in use is tried again (doubled each time it loses).
    PROBE_FIRST = 8
    #: Longest wait between probes, in batches.
    PROBE_MOST = 256
    #: Timings kept per option.
    KEEP = 3
    #: A batch should take about this long at most (progress and cancellation between batches).
    TARGET_SECONDS = 0.08

    def __init__(self, threads: int | None = None) -> None:
        self.threads = current_threads() if threads is None else max(1, int(threads))
        self._per_budget: dict[int, list[float]] = {1: [], self.threads: []}
        # The first batches on all threads get a small share: on a busy machine they can be
        # many times slower than on one, and a small batch measures the speed as well.
        self._share: dict[int, float] = {1: 1.0, self.threads: 1.0 if self.threads == 1 else 0.125}
        self._count = 0
        self._best = self.threads
        self._next_probe = 2
        self._interval = self.PROBE_FIRST
        self._probing = False
        self.used: dict[int, int] = {1: 0, self.threads: 0}
        self._full = True

    def _cost(self, n: int) -> float:
        times = self._per_budget[n]
        return sum(times) / len(times) if times else 0.0

    def choose(self) -> tuple[int, float]:
        """The thread count and the share of the budget for the next batch."""
        if self.threads == 1:
            return 1, self._share[1]
        if not self.adaptive:
            return self.threads, self._share[self.threads]
        c = self._count
        self._probing = False
        if c == 0:
            n = self.threads
        elif c == 1:
            n = 1
        elif c >= self._next_probe:
            n = 1 if self._best == self.threads else self.threads
            self._probing = True
        else:
            n = self._best
        return n, self._share[n]

    def record(self, threads: int, seconds: float, share: float = 1.0, full: bool = True) -> None:
        """Note that a batch on ``threads`` given ``share`` of the budget took ``seconds``
        (``full``: it used its whole share; a last, partial batch is not compared)."""
        self._count += 1
        self.used[threads] = self.used.get(threads, 0) + 1
        if not full:
            return
        times = self._per_budget.setdefault(threads, [])
        times.append(seconds / share)
        del times[: -self.KEEP]
        if seconds > self.TARGET_SECONDS:
            self._share[threads] = max(1 / 64, share * self.TARGET_SECONDS / seconds)
        elif seconds < self.TARGET_SECONDS / 4 and share < 1.0:
            self._share[threads] = min(1.0, share * 2.0)
        if self.threads == 1 or self._count < 2:
            return
        other = 1 if threads == self.threads else self.threads
        if not self._per_budget[other]:
            return
        faster = threads if self._cost(threads) <= self._cost(other) else other
        if self._count == 2:
            self._best = faster
            self._next_probe = self._count + self._interval
        elif self._probing:
            if faster == threads:  # the probe won: switch, probe the other soon
                self._best = threads
                self._interval = self.PROBE_FIRST
            else:
                self._interval = min(2 * self._interval, self.PROBE_MOST)
            self._next_probe = self._count + self._interval

    @contextmanager
    def batch(self) -> Iterator[tuple[int, float]]:
        """Run one batch: yields (threads, share of the budget); the threads are set for the
        block in this thread and the batch is timed. Call :meth:`partial` inside the block when
        the batch ended before using its share (the last one)."""
        import numba

        n, share = self.choose()
        before = numba.get_num_threads()
        numba.set_num_threads(n)
        self._full = True
        started = time.perf_counter()
        try:
            yield n, share
        finally:
            numba.set_num_threads(before)
        self.record(n, time.perf_counter() - started, share, self._full)

    def partial(self) -> None:
        """The current batch did less than its share of the budget: its time is not compared."""
        self._full = False
