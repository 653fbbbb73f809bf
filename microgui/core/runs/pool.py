"""The process pool that sweeps (:mod:`microgui.core.runs.sweep`) and scaled runs
(:mod:`microgui.core.runs.scale`) share: start method, worker set-up, cancellation and the poll loop.

Processes, not threads: the methods hold the GIL between numba kernels, and the measures are
numpy/pandas work. The pool uses the ``forkserver`` start method (``spawn`` where there is
none); never plain ``fork``, which is unsafe in a process that runs Qt or numba threads (see
:func:`pool_context`). Whatever the tasks share (a sweep's dataset) is pickled once per worker,
through the pool's initializer (:func:`init_worker`, read back with :func:`worker_payload`); each
task carries only its own small arguments.

Cancellation: :func:`run_in_pool` calls its ``tick`` after every finished task and, while tasks
are in flight, at least every :data:`POLL_SECONDS`; when ``tick`` raises (a
:class:`~microgui.core.progress.RunCancelled` from the caller's progress callback), the pool is
stopped (:func:`stop`): a shared event that every worker's progress checkpoints poll
(:func:`check_cancel`) is set, tasks not yet started are dropped, and workers still running after
:data:`STOP_GRACE_SECONDS` are terminated; then the exception propagates.

Worker processes start from the caller's ``__main__`` module: a script that uses the pool needs
the usual ``if __name__ == "__main__":`` guard (and a frozen app
``multiprocessing.freeze_support()``), as for any non-fork process pool.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

from microgui.core.progress import ProgressFn, RunCancelled

__all__ = [
    "POLL_SECONDS",
    "STOP_GRACE_SECONDS",
    "PRELOAD",
    "default_workers",
    "init_worker",
    "worker_payload",
    "check_cancel",
    "pool_context",
    "stop",
    "run_in_pool",
    "labelled",
]

#: While tasks are in flight, the progress callback is called at least this often (seconds).
POLL_SECONDS = 0.1
#: After a cancel, how long running workers get to stop by themselves before they are terminated.
STOP_GRACE_SECONDS = 1.0
#: Modules imported once by the fork server, so that its forked workers start with them loaded.
PRELOAD = ["microgui.core.runs", "microgui.core.methods", "microgui.core.metrics.evaluate"]

_R = TypeVar("_R")


def default_workers(n_tasks: int) -> int:
    """One worker per available core, never more than there are tasks."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, n_tasks))


def labelled(progress: ProgressFn, label: str) -> ProgressFn:
    """A progress function that prefixes every status with ``label``."""

    def inner(fraction: float, status: str = "", /) -> None:
        progress(fraction, f"{label}: {status}" if status else label)

    return inner


# --- worker process side -------------------------------------------------------------------------
_WORKER_PAYLOAD: Any = None
_WORKER_CANCEL: Any = None


def init_worker(payload: Any, cancel: Any) -> None:
    """Pool initializer: keep what the tasks share (sent once per worker) and the cancel event."""
    global _WORKER_PAYLOAD, _WORKER_CANCEL
    _WORKER_PAYLOAD, _WORKER_CANCEL = payload, cancel


def worker_payload() -> Any:
    """In a worker, what :func:`init_worker` was given to share (None outside a pool)."""
    return _WORKER_PAYLOAD


def check_cancel(fraction: float, status: str = "", /) -> None:
    """A worker's progress function: raises :class:`RunCancelled` once the pool is stopped."""
    if _WORKER_CANCEL is not None and _WORKER_CANCEL.is_set():
        raise RunCancelled()


# --- caller side ---------------------------------------------------------------------------------
def pool_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` where there is one (Linux, macOS), else ``spawn``; never plain ``fork``.

    The fork server is a fresh single-threaded process (no Qt, no numba threads) started once
    per caller process and reused by later pools; it imports microgui once (:data:`PRELOAD`), and
    each worker is a fork of it, ready in milliseconds. With ``spawn`` every worker imports
    microgui itself (a few seconds each). ``set_forkserver_preload`` applies to the process-wide
    fork server.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def stop(executor: ProcessPoolExecutor, cancel: Any) -> None:
    """Stop a pool promptly: signal the runs, drop queued ones, terminate stragglers."""
    cancel.set()
    # Private, but the only handle on the workers; snapshot it before shutdown clears it.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(1.0)


def run_in_pool(
    task: Callable[..., _R],
    jobs: Sequence[tuple[Any, ...]],
    n_workers: int,
    *,
    on_done: Callable[[int, Future[_R]], object],
    tick: Callable[[], object],
    payload: Any = None,
) -> None:
    """Run ``task(*job)`` for every job in a pool of ``n_workers`` processes.

    ``task`` is a module-level function (it is pickled by name); in the workers it reads
    ``payload`` with :func:`worker_payload` and passes :func:`check_cancel` as its progress.
    ``on_done(i, future)`` is called in this thread as job i finishes (completion order);
    ``tick()`` once before the first finishes and then after every wait of at most
    :data:`POLL_SECONDS`, finished or not: it reports progress and is where a cancel is noticed.
    Whatever ``on_done`` or ``tick`` raise stops the pool (:func:`stop`) and propagates.
    """
    ctx = pool_context()
    cancel = ctx.Event()
    executor = ProcessPoolExecutor(
        max_workers=n_workers, mp_context=ctx, initializer=init_worker, initargs=(payload, cancel)
    )
    try:
        futures: dict[Future[_R], int] = {
            executor.submit(task, *job): i for i, job in enumerate(jobs)
        }
        pending = set(futures)
        tick()
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                on_done(futures[future], future)
            # Called on every tick, not only when a task ends: this is where a cancel is noticed.
            tick()
    except BaseException:
        stop(executor, cancel)
        raise
    executor.shutdown(wait=True)
