"""Sweeps: a grid of methods × k × parameters, run in parallel processes, each run measured.

:class:`SweepSpec` describes the grid and expands it to :class:`~microgui.core.runs.RunSpec` s;
:func:`run_sweep` runs them and returns one :class:`SweepPoint` per run: its spec, run report,
measures (``microgui.core.metrics.evaluate``) and, when the run failed, the one-line reason. A
failed run (a method refusing the data, a bad parameter for that data) is recorded, never fatal.

Processes, not threads: the runs go to the process pool of :mod:`microgui.core.runs.pool`
(``forkserver``/``spawn``, never plain ``fork``). The dataset is pickled once per worker, through
the pool's initializer, and each task carries only its small ``RunSpec``; a point comes back with
the run report and measures, not the protected table. ``workers=1`` runs in the calling
process (tests, the app's single-run worker thread).

Cancellation: ``progress(fraction, status)`` is called after every finished run and, while runs are
in flight, at least every :data:`~microgui.core.runs.pool.POLL_SECONDS`; when it raises
:class:`RunCancelled` the sweep (1) sets a shared event that every worker's run checks at each of
its progress checkpoints (about 100 per run, so a running method stops within about 1 % of its work;
the longest gap measured is 1.5 s, mstk on 6,000 records), (2) cancels the runs not yet started, (3)
waits at most :data:`~microgui.core.runs.pool.STOP_GRACE_SECONDS` for the workers to exit and terminates
any that has not, then (4) raises :class:`SweepCancelled` (a :class:`RunCancelled`) whose ``points``
holds every run finished so far. Those points were also handed to ``on_result`` as they finished.
With ``workers=1`` the callback is passed down into each run, so a cancel stops the run at its next
checkpoint.

Worker processes start from the caller's ``__main__`` module: a script that calls
:func:`run_sweep` with ``workers != 1`` needs the usual ``if __name__ == "__main__":`` guard (and
a frozen app ``multiprocessing.freeze_support()``), as for any non-fork process pool.
"""

from __future__ import annotations

import itertools
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from microgui.core.errors import InvalidParameter
from microgui.core.progress import ProgressFn, RunCancelled, no_progress, sub_progress
from microgui.core.runs.analysis import one_line as _one_line
from microgui.core.runs.pool import (
    check_cancel,
    default_workers,
    labelled,
    run_in_pool,
    worker_payload,
)
from microgui.core.runs.spec import RunSpec, parse_k, parse_seed
from microgui.core.table.dataset import Dataset

__all__ = [
    "SweepSpec",
    "SweepPoint",
    "SweepCancelled",
    "run_sweep",
    "parse_k_list",
    "parse_param_grid",
]

Measures = dict[str, float | int | None]


def _texts(given: str | Sequence[str] | None) -> list[str]:
    return [given] if isinstance(given, str) else list(given or ())


def parse_k_list(given: str | Sequence[str] | None) -> list[int]:
    """The sweep's k values as typed: ``'3, 5,10'`` (``;`` too; several texts, as a repeated
    ``--k``, add up) → ``[3, 5, 10]``, duplicates dropped, order kept; :class:`InvalidParameter`
    naming an entry that is not a whole number, or when none is given."""
    items = [
        item.strip()
        for text in _texts(given)
        for item in text.replace(";", ",").split(",")
        if item.strip()
    ]
    if not items:
        raise InvalidParameter("give at least one k (for example 3, 5, 10)")
    out: list[int] = []
    for item in items:
        try:
            value = int(item)
        except ValueError:
            raise InvalidParameter(
                f"k value {item!r} is not a whole number; give k values like 3, 5, 10"
            ) from None
        if value not in out:
            out.append(value)
    return out


def parse_param_grid(
    given: str | Sequence[str] | None, what: str = "parameter values"
) -> dict[str, list[str]]:
    """The parameter values a sweep tries: ``'gamma=0.1,0.2; rescale_variance=true,false'``
    (entries separated by ``;`` or new lines; several texts, as a repeated ``--param``, add up;
    a repeated name adds values) → ``{name: [values]}``. Nothing given: no parameter is varied.
    :class:`InvalidParameter` (starting with ``what``) for an entry that is not NAME=V1,V2."""
    grid: dict[str, list[str]] = {}
    for text in _texts(given):
        for part in text.replace("\n", ";").split(";"):
            if not part.strip():
                continue
            name, sep, raw = part.partition("=")
            values = [v.strip() for v in raw.split(",") if v.strip()]
            if not sep or not name.strip() or not values:
                raise InvalidParameter(
                    f"{what} {part.strip()!r}: write NAME=VALUE, or NAME=V1,V2 for several "
                    "values (entries separated by ;)"
                )
            bucket = grid.setdefault(name.strip(), [])
            bucket.extend(v for v in values if v not in bucket)
    return grid


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
        from microgui.core.methods import get_method, resolve_params

        if not self.methods:
            raise InvalidParameter("the sweep names no method; give at least one")
        if not self.ks:
            raise InvalidParameter("the sweep names no k; give at least one")
        methods = [get_method(name) for name in self.methods]
        if self.hierarchies and not any(m.uses_hierarchies for m in methods):
            from microgui.core.methods import available_methods

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


def _run_point(dataset: Dataset, index: int, spec: RunSpec, progress: ProgressFn) -> SweepPoint:
    """Run and measure one spec (:func:`~microgui.core.runs.analysis.measure_run`); every failure
    but a cancel becomes the point's ``error``."""
    from microgui.core.runs.analysis import measure_run
    from microgui.core.runs.protect import run_protection

    started = time.perf_counter()
    try:
        result = run_protection(dataset, spec, sub_progress(progress, 0.0, 0.6))
    except RunCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - one failed run must not stop the sweep
        return SweepPoint(index, spec, None, {}, _one_line(exc), time.perf_counter() - started)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    measures, note = measure_run(dataset, result, sub_progress(progress, 0.6, 1.0))
    progress(1.0, "")
    return SweepPoint(
        index,
        spec,
        dict(result.report),
        measures,
        note or None,
        seconds,
        time.perf_counter() - started,
    )


# --- worker process side -------------------------------------------------------------------------
def _worker_task(index: int, spec: RunSpec) -> SweepPoint | None:
    """One run in a worker process; None when the sweep was cancelled during it."""
    dataset = worker_payload()
    if not isinstance(dataset, Dataset):
        raise RuntimeError("sweep worker started without its dataset")
    try:
        return _run_point(dataset, index, spec, check_cancel)
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
                labelled(progress, f"{spec.method} k={spec.k}"), i / total, (i + 1) / total
            )
            point = _run_point(dataset, i, spec, stage)
            points.append(point)
            if on_result is not None:
                on_result(point)
            progress((i + 1) / total, f"{i + 1}/{total} runs")
    except RunCancelled as exc:
        raise SweepCancelled(points, total) from exc
    return points


def _run_in_pool(
    dataset: Dataset,
    specs: list[RunSpec],
    n_workers: int,
    progress: ProgressFn,
    on_result: Callable[[SweepPoint], object] | None,
) -> list[SweepPoint]:
    total = len(specs)
    done_points: dict[int, SweepPoint] = {}

    def on_done(i: int, future: Future[SweepPoint | None]) -> None:
        point = _collect(future, i, specs[i])
        if point is None:
            return
        done_points[i] = point
        if on_result is not None:
            on_result(point)

    def tick() -> None:
        progress(len(done_points) / total, f"{len(done_points)}/{total} runs")

    try:
        run_in_pool(
            _worker_task,
            [(i, spec) for i, spec in enumerate(specs)],
            n_workers,
            on_done=on_done,
            tick=tick,
            payload=dataset,
        )
    except RunCancelled as exc:
        raise SweepCancelled([done_points[i] for i in sorted(done_points)], total) from exc
    return [done_points[i] for i in range(total)]


def _collect(future: Future[SweepPoint | None], index: int, spec: RunSpec) -> SweepPoint | None:
    """The point of a finished future; a worker that died (killed, out of memory) is an error."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, unpicklable result, ...
        return SweepPoint(index, spec, None, {}, f"worker failed: {_one_line(exc)}")
