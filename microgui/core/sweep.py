"""Sweeps: a grid of methods × k × parameters, run in parallel processes, each run measured.

:class:`SweepSpec` describes the grid and expands it to :class:`~microgui.core.runs.RunSpec` s;
:func:`run_sweep` runs them and returns one :class:`SweepPoint` per run: its spec, run report,
measures (``microgui.core.metrics.evaluate``) and, when the run failed, the one-line reason. A
failed run (a method refusing the data, a bad parameter for that data) is recorded, never fatal.

Processes, not threads: the methods hold the GIL between numba kernels, and the measures are
numpy/pandas work. The pool uses the ``forkserver`` start method (``spawn`` where there is
none); never plain ``fork``, which is unsafe in a process that runs Qt or numba threads (see
:func:`_pool_context`). The dataset is pickled once per worker, through the pool's initializer,
and each task carries only its small ``RunSpec``; a point comes back with the run report and
measures, not the protected table. ``workers=1`` runs in the calling
process (tests, the app's single-run worker thread).

Cancellation: ``progress(fraction, status)`` is called after every finished run and, while runs
are in flight, at least every :data:`POLL_SECONDS`; when it raises :class:`RunCancelled` the
sweep (1) sets a shared event that every worker's run checks at each of its progress checkpoints
(about 100 per run, so a running method stops within about 1 % of its work; the longest gap
measured is 1.5 s, mstk on 6,000 records), (2) cancels the
runs not yet started, (3) waits at most :data:`STOP_GRACE_SECONDS` for the workers to exit and
terminates any that has not, then (4) raises :class:`SweepCancelled` (a :class:`RunCancelled`)
whose ``points`` holds every run finished so far. Those points were also handed to
``on_result`` as they finished. With ``workers=1`` the callback is passed down into each run, so
a cancel stops the run at its next checkpoint.

Worker processes start from the caller's ``__main__`` module: a script that calls
:func:`run_sweep` with ``workers != 1`` needs the usual ``if __name__ == "__main__":`` guard (and
a frozen app ``multiprocessing.freeze_support()``), as for any non-fork process pool.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import numbers
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from microgui.core.dataset import Dataset
from microgui.core.errors import InvalidParameter
from microgui.core.progress import ProgressFn, RunCancelled, no_progress, sub_progress
from microgui.core.runs import RunSpec, parse_k, parse_seed

__all__ = [
    "SweepSpec",
    "SweepPoint",
    "SweepCancelled",
    "run_sweep",
    "default_workers",
    "json_number",
    "POLL_SECONDS",
    "STOP_GRACE_SECONDS",
]

#: While runs are in flight, the progress callback is called at least this often (seconds).
POLL_SECONDS = 0.1
#: After a cancel, how long running workers get to stop by themselves before they are terminated.
STOP_GRACE_SECONDS = 1.0

Measures = dict[str, float | int | None]


@dataclass(frozen=True)
class SweepSpec:
    """A grid of runs: every method × every k × every combination of parameter values.

    ``params_grid`` maps a parameter name to the values to try. A method takes part in the
    product only over the parameters it declares (``rescale_variance`` varies the aggregating
    methods, ``max_records`` only ``optimal``); a name declared by none of ``methods`` is refused.
    Every run gets ``seed`` (None: each run draws a fresh one, recorded in its report).
    ``hierarchies`` (column -> hierarchy file, ``--hierarchy COL=FILE``) go to the runs of the
    methods that use hierarchies (``mstk``) only; the other methods of the sweep run without
    them. A sweep none of whose methods uses hierarchies refuses them (they would be ignored).
    """

    methods: tuple[str, ...]
    ks: tuple[int, ...]
    params_grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    seed: int | None = None
    hierarchies: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(
        cls,
        methods: Sequence[str],
        ks: Sequence[int | str],
        params_grid: Mapping[str, Sequence[Any]] | None = None,
        seed: int | str | None = None,
        hierarchies: Mapping[str, str] | None = None,
    ) -> SweepSpec:
        """A spec from loose values (k parsed as whole numbers, duplicates dropped, order kept;
        the seed checked by :func:`~microgui.core.runs.parse_seed` before any run starts)."""
        grid = tuple((str(n), tuple(dict.fromkeys(v))) for n, v in (params_grid or {}).items())
        return cls(
            methods=tuple(dict.fromkeys(methods)),
            ks=tuple(dict.fromkeys(parse_k(k) for k in ks)),
            params_grid=grid,
            seed=parse_seed(seed),
            hierarchies=tuple(sorted((str(c), str(p)) for c, p in (hierarchies or {}).items())),
        )

    def run_specs(self) -> list[RunSpec]:
        """The runs, method by method, then k, then parameter combination.

        Raises :class:`InvalidParameter` for an unknown method, an empty grid, a parameter no
        method declares, or a value its parameter refuses, before anything runs.
        """
        from microgui.core.methods.base import get_method, resolve_params

        if not self.methods:
            raise InvalidParameter("the sweep names no method; give at least one")
        if not self.ks:
            raise InvalidParameter("the sweep names no k; give at least one")
        methods = [get_method(name) for name in self.methods]
        if self.hierarchies and not any(m.uses_hierarchies for m in methods):
            from microgui.core.methods.base import available_methods

            users = ", ".join(m.name for m in available_methods() if m.uses_hierarchies)
            raise InvalidParameter(
                f"no method of the sweep ({', '.join(self.methods)}) generalizes, so the "
                f"hierarchy given for {self.hierarchies[0][0]!r} would be ignored; drop "
                f"--hierarchy, or add a method that uses hierarchies ({users})"
            )
        grid = dict(self.params_grid)
        for name, values in grid.items():
            if not values:
                raise InvalidParameter(f"parameter {name!r} is given no value to try")
            if not any(name in {p.name for p in m.all_params} for m in methods):
                raise InvalidParameter(
                    f"no method of the sweep ({', '.join(self.methods)}) has a parameter {name!r}"
                )
        specs: list[RunSpec] = []
        for method in methods:
            own = {p.name for p in method.all_params}
            names = [n for n in grid if n in own]
            combos = [
                dict(zip(names, vals, strict=True))
                for vals in itertools.product(*(grid[n] for n in names))
            ]
            for params in combos:
                resolve_params(method, params)  # a bad value fails now, not in run 37
            files = dict(self.hierarchies) if method.uses_hierarchies else None
            for k in self.ks:
                specs.extend(
                    RunSpec.make(method.name, k, params, self.seed, files) for params in combos
                )
        return specs


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep.

    ``index``: its place in the spec list; ``report``: the run report (None when the run failed);
    ``measures``: the report's own figures plus ``evaluate``'s keys (empty when the run failed);
    ``error``: one line saying why the run or its measures failed, None when all went well;
    ``seconds``: wall time of the run, ``measure_seconds`` of its measures.
    """

    index: int
    spec: RunSpec
    report: Mapping[str, Any] | None
    measures: Mapping[str, float | int | None] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    measure_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class SweepCancelled(RunCancelled):
    """The sweep was cancelled; ``points`` holds the runs that finished before, in spec order."""

    def __init__(self, points: Sequence[SweepPoint], total: int) -> None:
        super().__init__(f"sweep cancelled after {len(points)} of {total} runs")
        self.points: list[SweepPoint] = list(points)
        self.total = total


def default_workers(n_runs: int) -> int:
    """One worker per available core, never more than there are runs."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, n_runs))


#: The report entries that are measures themselves (kept even when ``evaluate`` is absent).
_REPORT_MEASURES = (
    "information_loss_all_qi",
    "information_loss",
    "generalization_il",
    "k_anonymity",
)


def json_number(value: Any) -> float | int | None:
    """A JSON-ready number: numpy scalars unwrapped, NaN and infinities as None."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu":
        return int(value)
    return number


def _one_line(exc: BaseException) -> str:
    from microgui.core.errors import MicroguiError

    text = " ".join(str(exc).split())
    if isinstance(exc, MicroguiError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_point(dataset: Dataset, index: int, spec: RunSpec, progress: ProgressFn) -> SweepPoint:
    """Run and measure one spec; every failure but a cancel becomes the point's ``error``."""
    from microgui.core.runs import run_protection

    started = time.perf_counter()
    try:
        result = run_protection(dataset, spec, sub_progress(progress, 0.0, 0.6))
    except RunCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - one failed run must not stop the sweep
        return SweepPoint(index, spec, None, {}, _one_line(exc), time.perf_counter() - started)
    seconds = time.perf_counter() - started
    report = dict(result.report)
    measures: Measures = {k: json_number(report[k]) for k in _REPORT_MEASURES if k in report}
    error = None
    started = time.perf_counter()
    try:
        from microgui.core.metrics.evaluate import evaluate

        extra = evaluate(
            dataset,
            result.protected,
            labels=result.labels,
            progress=sub_progress(progress, 0.6, 1.0),
            k=spec.k,  # CAVG is relative to the run's k
        )
        # evaluate has no generalization IL without hierarchies: the run's own figure stays;
        # numbers only (information_loss_by_attribute, a breakdown, stays in the run report)
        measures.update(
            {
                str(k): json_number(v)
                for k, v in extra.items()
                if (v is not None or k not in measures) and not isinstance(v, dict)
            }
        )
    except RunCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the run is sound; say what is missing
        error = f"measures not computed: {_one_line(exc)}"
    progress(1.0, "")
    return SweepPoint(index, spec, report, measures, error, seconds, time.perf_counter() - started)


# --- worker process side -------------------------------------------------------------------------
_WORKER_DATASET: Dataset | None = None
_WORKER_CANCEL: Any = None


def _init_worker(dataset: Dataset | None, cancel: Any) -> None:
    """Pool initializer: keep the dataset (sent once per worker) and the shared cancel event."""
    global _WORKER_DATASET, _WORKER_CANCEL
    _WORKER_DATASET, _WORKER_CANCEL = dataset, cancel


def _check_cancel(fraction: float, status: str = "", /) -> None:
    if _WORKER_CANCEL is not None and _WORKER_CANCEL.is_set():
        raise RunCancelled()


def _worker_task(index: int, spec: RunSpec) -> SweepPoint | None:
    """One run in a worker process; None when the sweep was cancelled during it."""
    if _WORKER_DATASET is None:
        raise RuntimeError("sweep worker started without its dataset")
    try:
        return _run_point(_WORKER_DATASET, index, spec, _check_cancel)
    except RunCancelled:
        return None


# --- caller side ---------------------------------------------------------------------------------
def run_sweep(
    dataset: Dataset,
    specs: Sequence[RunSpec],
    *,
    workers: int | None = None,
    progress: ProgressFn = no_progress,
    on_result: Callable[[SweepPoint], object] | None = None,
) -> list[SweepPoint]:
    """Run every spec on ``dataset`` and measure it.

    Parameters
    ----------
    workers
        Processes to use; None: one per available core (at most one per run); 1: run in this
        process, one run after the other.
    progress
        Called with the fraction of runs done (and "i/n runs"); raising :class:`RunCancelled`
        from it cancels the sweep (see the module docstring for how running workers stop).
    on_result
        Called in the caller's thread with each :class:`SweepPoint` as soon as it is done
        (completion order).

    Returns
    -------
    One point per spec, in spec order. A run that failed has its ``error`` set.

    Raises
    ------
    SweepCancelled
        When cancelled; its ``points`` are the runs finished so far, in spec order.
    """
    specs = list(specs)
    total = len(specs)
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1
    ):
        raise InvalidParameter(f"workers={workers!r}: give a whole number >= 1 (or None)")
    n_workers = default_workers(total) if workers is None else int(workers)
    if total == 0:
        progress(1.0, "0/0 runs")
        return []
    if n_workers == 1 or total == 1:
        return _run_in_process(dataset, specs, progress, on_result)
    return _run_in_pool(dataset, specs, min(n_workers, total), progress, on_result)


def _run_in_process(
    dataset: Dataset,
    specs: list[RunSpec],
    progress: ProgressFn,
    on_result: Callable[[SweepPoint], object] | None,
) -> list[SweepPoint]:
    total = len(specs)
    points: list[SweepPoint] = []
    try:
        progress(0.0, f"0/{total} runs")
        for i, spec in enumerate(specs):
            stage = sub_progress(
                _labelled(progress, f"{spec.method} k={spec.k}"), i / total, (i + 1) / total
            )
            point = _run_point(dataset, i, spec, stage)
            points.append(point)
            if on_result is not None:
                on_result(point)
            progress((i + 1) / total, f"{i + 1}/{total} runs")
    except RunCancelled as exc:
        raise SweepCancelled(points, total) from exc
    return points


def _labelled(progress: ProgressFn, label: str) -> ProgressFn:
    def inner(fraction: float, status: str = "", /) -> None:
        progress(fraction, f"{label}: {status}" if status else label)

    return inner


def _run_in_pool(
    dataset: Dataset,
    specs: list[RunSpec],
    n_workers: int,
    progress: ProgressFn,
    on_result: Callable[[SweepPoint], object] | None,
) -> list[SweepPoint]:
    total = len(specs)
    ctx = _pool_context()
    cancel = ctx.Event()
    executor = ProcessPoolExecutor(
        max_workers=n_workers, mp_context=ctx, initializer=_init_worker, initargs=(dataset, cancel)
    )
    done_points: dict[int, SweepPoint] = {}
    try:
        futures: dict[Future[SweepPoint | None], int] = {
            executor.submit(_worker_task, i, spec): i for i, spec in enumerate(specs)
        }
        pending = set(futures)
        progress(0.0, f"0/{total} runs")
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                i = futures[future]
                point = _collect(future, i, specs[i])
                if point is None:
                    continue
                done_points[i] = point
                if on_result is not None:
                    on_result(point)
            # Called on every tick, not only when a run ends: this is where a cancel is noticed.
            progress(len(done_points) / total, f"{len(done_points)}/{total} runs")
    except BaseException as exc:
        _stop(executor, cancel)
        if isinstance(exc, RunCancelled):
            raise SweepCancelled([done_points[i] for i in sorted(done_points)], total) from exc
        raise
    executor.shutdown(wait=True)
    return [done_points[i] for i in range(total)]


#: Imported once by the fork server, so that its forked workers start with them loaded.
_PRELOAD = ["microgui.core.runs", "microgui.core.methods", "microgui.core.metrics.evaluate"]


def _pool_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` where there is one (Linux, macOS), else ``spawn``; never plain ``fork``.

    The fork server is a fresh single-threaded process (no Qt, no numba threads) started once
    per caller process and reused by later sweeps; it imports microgui once, and each worker is
    a fork of it, ready in milliseconds. With ``spawn`` every worker imports microgui itself
    (a few seconds each). ``set_forkserver_preload`` applies to the process-wide fork server.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def _collect(future: Future[SweepPoint | None], index: int, spec: RunSpec) -> SweepPoint | None:
    """The point of a finished future; a worker that died (killed, out of memory) is an error."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, unpicklable result, ...
        return SweepPoint(index, spec, None, {}, f"worker failed: {_one_line(exc)}")


def _stop(executor: ProcessPoolExecutor, cancel: Any) -> None:
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
