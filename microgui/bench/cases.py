"""The benchmark's rows: each :class:`BenchCase` (the fixed :data:`CASES` and one per registered
method with ``bench_sizes``), how a row is timed (:func:`run_case`, best of R, JIT warmed first
through the registry) and printed (:func:`format_rows`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.bench.data import (
    SEED,
    BenchData,
    census_like_data,
    correlated_data,
    linkage_data,
    mixed_data,
    numpy_mdav,
    qi_matrix,
)
from microgui.bench.suppression import census_suppression
from microgui.core.methods import ama as ama_module
from microgui.core.methods import available_methods, get_method, warm_ups
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods import mhm as mhm_module
from microgui.core.methods import mst as mst_module
from microgui.core.methods import refine as refine_module
from microgui.core.metrics import information_loss
from microgui.core.progress import ProgressFn
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.aggregate import group_means
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.text_table import text_table

__all__ = [
    "QUICK_MAX_N",
    "BenchCase",
    "CASES",
    "TARGET_RUNS",
    "registered_cases",
    "BenchRow",
    "Baselines",
    "run_case",
    "warm_up_report",
    "format_rows",
    "complexity_table",
]


QUICK_MAX_N = 10_000


def _mdav(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mdav_module.mdav(data.continuous, k, progress=progress)


def _mdav_generic(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mdav_module.mdav_generic(
        data.continuous, data.ordinal, data.ordinal_sizes, data.nominal, k, progress=progress
    )


def _npn_path(data: BenchData, k: int, progress: ProgressFn) -> None:
    # MHM's path construction (001 §II-A, k-d tree); not a partition, so no IL.
    mhm_module.npn_path(data.continuous, progress=progress)


def _dependency_tree(data: BenchData, k: int, progress: ProgressFn) -> None:
    from microgui.core.table.dependency import dependency_tree

    frame = pd.DataFrame(data.continuous, columns=[f"q{j}" for j in range(data.d)])
    dependency_tree(frame, list(frame.columns), progress=progress)


def _record_linkage(data: BenchData, k: int, progress: ProgressFn) -> None:
    from microgui.core.metrics.risk import record_linkage

    assert data.protected is not None
    record_linkage(data.continuous, data.protected)


def _mst(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mst_module.mst_partition(data.continuous, k, progress=progress)[0]


def _mdav_full_run(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    frame = pd.DataFrame(data.continuous, columns=[f"q{j}" for j in range(data.d)])
    spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    roles = RoleMap.from_dict({c: spec for c in frame.columns})
    return run_protection(
        Dataset.from_frame(frame, roles), RunSpec.make("mdav", k, seed=0), progress
    ).labels


def _ama(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    # The dependency tree (entropies, Kruskal, key attributes) is part of the timed partition.
    return ama_module.ama_partition(qi_matrix(data), k, progress=progress)[0]


#: MDAV's partition of each bench table, made once outside the timing of the refinement rows.
_MDAV_START: dict[int, np.ndarray] = {}


def _refine_rows(mode: str) -> Callable[[BenchData, int, ProgressFn], np.ndarray]:
    """A row timing ``--param refine=mode`` alone on MDAV's partition of the table."""

    def partition(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
        key = id(data)
        if key not in _MDAV_START:  # the first call of a row: not timed apart, so warm it
            _MDAV_START.clear()
            _MDAV_START[key] = mdav_module.mdav(data.continuous, k)
        rng = np.random.default_rng(SEED)
        return refine_module.refine_partition(
            data.continuous, _MDAV_START[key], k, mode, rng=rng,
            rounds=refine_module.DEFAULT_ROUNDS, progress=progress,
        ).labels  # fmt: skip

    return partition


def _refine_data(n: int, d: int) -> BenchData:
    """The table of the refinement rows, with MDAV's partition made before the timing."""
    data = correlated_data(n, d)
    _MDAV_START.clear()
    _MDAV_START[id(data)] = mdav_module.mdav(data.continuous, 5)
    return data


@dataclass(frozen=True)
class BenchCase:
    """One row of the table.

    ``method``: the name shown (and matched by ``--only``); ``partition(data, k, progress)``
    returns the labels (None for a row that times something other than a partition: no IL);
    ``target``: the time the row must stay within (seconds), printed with PASS or MISS.
    """

    method: str
    n: int
    d: int
    k: int
    partition: Callable[[BenchData, int, ProgressFn], np.ndarray | None]
    data: Callable[[int, int], BenchData] = correlated_data
    note: str = ""
    target: float | None = None


CASES: list[BenchCase] = [
    BenchCase("mdav", 10_000, 10, 5, _mdav),
    BenchCase("mdav", 50_000, 10, 5, _mdav, target=1.5),
    BenchCase("mdav", 100_000, 10, 5, _mdav, target=1.5),
    BenchCase("mdav", 50_000, 10, 5, _mdav_full_run, note="run"),
    BenchCase("mdav-generic", 10_000, 10, 5, _mdav_generic, data=mixed_data, note="6c+2o+2n"),
    BenchCase("npn-path", 10_000, 10, 5, _npn_path, note="mhm's path, no IL"),
    BenchCase("npn-path", 100_000, 10, 5, _npn_path, note="mhm's path, no IL", target=10.0),
    BenchCase("mst", 10_000, 10, 5, _mst),
    BenchCase("mst", 50_000, 10, 5, _mst),
    BenchCase("mst", 100_000, 10, 5, _mst, target=60.0),
    BenchCase("ama", 10_000, 10, 5, _ama),
    BenchCase("ama", 50_000, 10, 5, _ama),
    BenchCase("ama", 10_000, 10, 5, _ama, data=mixed_data, note="6c+2o+2n"),
    BenchCase("ama", 500_000, 9, 20, _ama, data=census_like_data, note="000 §4 CENSUS shape"),
    BenchCase(
        "dependency-tree",
        500_000,
        9,
        5,
        _dependency_tree,
        data=census_like_data,
        note="000 §3.2 tree, no IL",
        target=5.0,
    ),
    BenchCase(
        "record-linkage",
        10_000,
        10,
        5,
        _record_linkage,
        data=linkage_data,
        note="vs mdav k=5 release",
    ),
    BenchCase(
        "refine-local",
        100_000,
        10,
        5,
        _refine_rows("local"),
        data=_refine_data,
        note="of MDAV's groups",
    ),
    BenchCase(
        "refine-igd",
        100_000,
        10,
        5,
        _refine_rows("igd"),
        data=_refine_data,
        note="of MDAV's groups",
    ),
    BenchCase(
        "refine-deep",
        100_000,
        10,
        5,
        _refine_rows("deep"),
        data=_refine_data,
        note="of MDAV's groups",
        target=60.0,
    ),
    BenchCase(
        "record-linkage",
        100_000,
        10,
        5,
        _record_linkage,
        data=linkage_data,
        note="vs mdav k=5 release",
        target=10.0,
    ),
    BenchCase(
        "local-suppression",
        100_000,
        5,
        5,
        census_suppression,
        data=census_like_data,
        note="census-shaped keys, no IL",
    ),
]

#: Rows of registered methods beyond their ``bench_sizes``, with a target (timed as a run).
TARGET_RUNS: dict[tuple[str, int], float] = {("vmdav", 100_000): 20.0, ("mhm", 100_000): 20.0}

#: the IL each "run" row's own report gives (the group-mean IL is wrong for methods that do not
#: publish group means: median, hybrid, individual ranking)
_RUN_IL: dict[tuple[int, str, int], float] = {}


def _registered(name: str) -> Callable[[BenchData, int, ProgressFn], np.ndarray]:
    """A partition function that runs the registered method ``name`` through ``run_protection``
    (so the time includes validation, aggregation and the report: note "run"). Methods that need
    confidential columns get one: a noisy copy of the first attribute, cut into 20 ordered levels.
    """

    def partition(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
        method = get_method(name)
        frame = pd.DataFrame(data.continuous, columns=[f"q{j}" for j in range(data.d)])
        spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        specs = {c: spec for c in frame.columns}
        if method.needs_confidential:
            rng = np.random.default_rng(SEED + 1)
            noisy = data.continuous[:, 0] + rng.normal(0, 1, data.n)
            frame["conf"] = pd.qcut(noisy, 20, labels=False).astype(np.int64)
            specs["conf"] = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
        dataset = Dataset(frame, RoleMap.from_dict(specs))
        result = run_protection(dataset, RunSpec.make(name, k, seed=SEED), progress)
        _RUN_IL[id(data), name, k] = result.information_loss
        return result.labels

    return partition


def registered_cases() -> list[BenchCase]:
    """Rows for every registered method's ``bench_sizes`` (and its :data:`TARGET_RUNS` rows),
    unless the method has hand-made rows in :data:`CASES`."""
    own = {c.method for c in CASES}
    out = []
    for m in available_methods():
        if m.name in own:
            continue
        extra = sorted(n for name, n in TARGET_RUNS if name == m.name and n not in m.bench_sizes)
        for n in (*m.bench_sizes, *extra):
            target = TARGET_RUNS.get((m.name, n))
            out.append(BenchCase(m.name, n, 10, 5, _registered(m.name), note="run", target=target))
    return out


@dataclass(frozen=True)
class BenchRow:
    case: BenchCase
    seconds: float
    il: float | None
    max_gap: float | None
    #: numpy MDAV on the same records: seconds, and whether it was measured (False: extrapolated)
    baseline: tuple[float, bool] | None = None
    #: for MDAV rows: whether the partition equals the baseline's (None: not compared)
    same: bool | None = None


def _stamper(stamps: list[float]) -> ProgressFn:
    def progress(fraction: float, status: str = "", /) -> None:
        stamps.append(time.perf_counter())

    return progress


def _best_time(
    fn: Callable[[ProgressFn], Any], repeat: int | None
) -> tuple[float, Any, float | None]:
    """Best time of ``fn(progress)`` over ``repeat`` calls (None: 3 if under a second, else 1),
    its last result, and the longest gap between progress calls."""
    best = float("inf")
    max_gap: float | None = None
    result: Any = None
    done = 0
    while done < (repeat or 1) or (repeat is None and done < 3 and best < 1.0):
        done += 1
        stamps: list[float] = []
        started = time.perf_counter()
        result = fn(_stamper(stamps))
        best = min(best, time.perf_counter() - started)
        if len(stamps) > 1:
            gap = float(np.diff(stamps).max())
            max_gap = gap if max_gap is None else max(max_gap, gap)
    return best, result, max_gap


class Baselines:
    """Times of :func:`numpy_mdav` per data set, measured once each, up to ``max_n`` records.

    Above ``max_n`` the time is extrapolated by n² (MDAV does O(n²/k) distance passes) from the
    largest measured data set with the same d and k, and flagged as not measured.
    """

    def __init__(self, max_n: int, repeat: int | None = None) -> None:
        self.max_n = max_n
        self.repeat = repeat
        self._measured: dict[tuple[Any, ...], tuple[float, np.ndarray]] = {}

    @staticmethod
    def _key(x: np.ndarray, k: int) -> tuple[Any, ...]:
        # The same seeded records reach several rows through different data functions.
        return (x.shape, k, x[0].tobytes(), x[-1].tobytes(), float(x[:, 0].sum()))

    def measure(self, data: BenchData, k: int) -> tuple[float, bool, np.ndarray | None] | None:
        """(seconds, measured, labels) of numpy MDAV on ``data``; None if it has categorical
        attributes (the baseline is continuous MDAV) or nothing to extrapolate from."""
        x = data.continuous
        if data.ordinal.shape[1] or data.nominal.shape[1] or not x.shape[1]:
            return None
        key = self._key(x, k)
        if key not in self._measured and data.n <= self.max_n:
            seconds, labels, _ = _best_time(lambda _p: numpy_mdav(x, k), self.repeat)
            self._measured[key] = (seconds, labels)
        if key in self._measured:
            seconds, labels = self._measured[key]
            return seconds, True, labels
        same_shape = [
            (kk[0][0], t)
            for kk, (t, _) in self._measured.items()
            if kk[0][1] == x.shape[1] and kk[1] == k
        ]
        if not same_shape:
            return None
        n0, t0 = max(same_shape)
        return t0 * (data.n / n0) ** 2, False, None


def run_case(
    case: BenchCase, repeat: int | None = None, baselines: Baselines | None = None
) -> BenchRow:
    """Time ``case``, measure its information loss and, with ``baselines``, numpy MDAV's time on
    the same records.

    Best of ``repeat`` timings; by default (None) best of 3 for a row that takes under a second
    (short timings vary most with the machine's load), else one.
    """
    data = case.data(case.n, case.d)
    best, labels, max_gap = _best_time(lambda p: case.partition(data, case.k, p), repeat)
    il: float | None = _RUN_IL.pop((id(data), case.method, case.k), None)
    z = data.continuous  # IL on the continuous attributes, as the run report measures it
    if il is None and labels is not None and z.shape[1]:
        g = int(labels.max()) + 1
        il = information_loss(z, group_means(z, labels, g)[labels])
    baseline: tuple[float, bool] | None = None
    same: bool | None = None
    if baselines is not None:
        measured = baselines.measure(data, case.k)
        if measured is not None:
            baseline = (measured[0], measured[1])
            if case.method == "mdav" and labels is not None and measured[2] is not None:
                same = bool(np.array_equal(labels, measured[2]))
    return BenchRow(case, best, il, max_gap, baseline, same)


def warm_up_report() -> str:
    """Compile or load the numba kernels; say which and how long it took."""
    seconds = sum(warm_up() for warm_up in warm_ups())
    stats = getattr(mdav_module._mdav_batch, "stats", None)
    hits = sum(getattr(stats, "cache_hits", {}).values()) if stats is not None else 0
    how = "loaded from numba's cache" if hits else "compiled (no cache yet)"
    return f"numba kernel {how} in {seconds:.2f} s (not included below)"


def _target_cell(row: BenchRow) -> str:
    target = row.case.target
    if target is None:
        return ""
    return f"<= {target:g} {'PASS' if row.seconds <= target else 'MISS'}"


def _baseline_cells(row: BenchRow) -> tuple[str, str]:
    if row.baseline is None:
        return "", ""
    seconds, measured = row.baseline
    est = "" if measured else " (est.)"
    return f"{seconds:.3f}{est}", f"{seconds / row.seconds:.1f}x{est}"


def format_rows(rows: Sequence[BenchRow]) -> str:
    header = (
        "method", "n", "d", "k", "seconds", "target", "IL %", "max gap ms",
        "numpy MDAV s", "x numpy", "same", "note",
    )  # fmt: skip
    lines = []
    for r in rows:
        c = r.case
        base, ratio = _baseline_cells(r)
        lines.append(
            (
                c.method,
                f"{c.n:,}",
                str(c.d),
                str(c.k),
                f"{r.seconds:.3f}",
                _target_cell(r),
                f"{r.il:.4f}" if r.il is not None else "",
                f"{r.max_gap * 1e3:.0f}" if r.max_gap is not None else "",
                base,
                ratio,
                "" if r.same is None else ("yes" if r.same else "NO"),
                c.note,
            )
        )
    return text_table(header, lines, {1, 2, 3, 4, 6, 7, 8, 9})


def complexity_table() -> str:
    """Each registered method's stated complexity."""
    methods = available_methods()
    width = max(len(m.name) for m in methods)
    return "\n".join(f"{m.name.ljust(width)}  {m.complexity or '(not stated)'}" for m in methods)
