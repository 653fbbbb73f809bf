"""``python -m microgui.bench``: how long the methods take, as a table, against targets.

Each row is a :class:`BenchCase` in :data:`CASES`; a new method adds its rows there. Data are
synthetic and seeded (:func:`correlated_data`), z-scored as a run would; the time is the timed step
alone (the numba JIT is warmed up first and its compile or cache-load time printed apart), except
for rows marked "run", which time the whole ``run_protection`` (validation, partition,
aggregation, report). IL = 100·SSE/SST on the z-scores (``002_f464918b99c38812.txt`` §III).
"max gap" is the longest time between two progress calls, i.e. how late a cancel can take effect.

**Baseline.** Beside every row on continuous data, "numpy MDAV" is the time of
:func:`numpy_mdav` (a plain vectorized numpy MDAV, written here) on the very same records, n, d
and k, and "x" is that time over the row's: how many times faster than plain numpy the row is.
It is measured for n <= ``--baseline-max`` (default 100,000); above that it is extrapolated by n²
from the largest measured n at the same d and k and marked "(est.)", never shown as measured.
"same" says whether an MDAV row's partition equals the baseline's (a check of exactness at scale).

**Targets** (issue 6, this 2-core machine, d = 10, k = 5) are printed beside their rows with
PASS or MISS; the memory target is measured in a fresh subprocess (:func:`memory_probe`).

Methods registered with ``bench_sizes`` get rows automatically (timed through ``run_protection``,
note "run"); the table is followed by each method's stated complexity. ``--reference`` adds the IL
of every continuous method on Census, Tarragona and EIA at k = 3, 4, 5, 10.

Options: ``--quick`` (only n <= 10,000; no memory probe, sweep or measures), ``--only NAME`` (rows
of one method), ``--repeat R`` (best of R timings; by default 3 for rows under a second, else 1),
``--baseline-max N``, ``--huge`` (exact MDAV on 1,000,000 records run to the end: minutes),
``--gui`` (the app's redraw and event-loop measurements, Qt offscreen), ``--reference``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd

from microgui.core.aggregate import group_means
from microgui.core.dataset import Dataset, QIMatrix
from microgui.core.errors import MicroguiError
from microgui.core.methods import ama as ama_module
from microgui.core.methods import available_methods, get_method, warm_ups
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods import mhm as mhm_module
from microgui.core.methods import mst as mst_module
from microgui.core.metrics import information_loss
from microgui.core.progress import ProgressFn
from microgui.core.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.runs import RunSpec, run_protection
from microgui.reference_data import reference_sets, shared_data_dir
from microgui.text_table import text_table

__all__ = [
    "BenchData",
    "BenchCase",
    "BenchRow",
    "CASES",
    "correlated_data",
    "mixed_data",
    "numpy_mdav",
    "run_case",
    "Baselines",
    "memory_probe",
    "blocking_cost",
    "main",
]

SEED = 20240501
QUICK_MAX_N = 10_000


@dataclass(frozen=True)
class BenchData:
    """Quasi-identifiers in the form the methods take (as ``QIMatrix`` holds them)."""

    continuous: np.ndarray  # (n, dc) z-scores
    ordinal: np.ndarray  # (n, do) ranks
    ordinal_sizes: np.ndarray
    nominal: np.ndarray  # (n, dn) codes
    #: a protected release of ``continuous`` (rows aligned), for the disclosure-risk rows
    protected: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.continuous.shape[0])

    @property
    def d(self) -> int:
        return int(self.continuous.shape[1] + self.ordinal.shape[1] + self.nominal.shape[1])


def _zscore(x: np.ndarray) -> np.ndarray:
    std = x.std(axis=0, ddof=1)
    z: np.ndarray = (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
    return z


def correlated_data(n: int, d: int, seed: int = SEED) -> BenchData:
    """n records of d correlated continuous attributes, z-scored.

    Multivariate normal with correlation 0.6^|i-j| between columns i and j, drawn with
    ``numpy.random.default_rng(seed)``; every third column (2, 5, 8, ...) is exponentiated, so
    it is log-normal and skewed like incomes.
    """
    rng = np.random.default_rng(seed)
    lags = np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    x = rng.standard_normal((n, d)) @ np.linalg.cholesky(0.6**lags).T
    x[:, 2::3] = np.exp(x[:, 2::3])
    empty = np.empty((n, 0), dtype=np.int64)
    return BenchData(_zscore(x), empty, np.empty(0, dtype=np.int64), empty)


def mixed_data(n: int, d: int, seed: int = SEED) -> BenchData:
    """:func:`correlated_data` with the last 4 of its d columns made categorical: two ordinal
    (quintiles, 5 categories) and two nominal (4 categories: sign and parity of the floor)."""
    base = correlated_data(n, d, seed).continuous
    cont = base[:, : d - 4]
    ordinal = np.column_stack(
        [np.searchsorted(np.quantile(c, [0.2, 0.4, 0.6, 0.8]), c) for c in base[:, d - 4 : d - 2].T]
    ).astype(np.int64)
    nominal = np.column_stack(
        [
            (c > 0).astype(np.int64) * 2 + np.floor(c * 2).astype(np.int64) % 2
            for c in base[:, d - 2 :].T
        ]
    )
    return BenchData(_zscore(cont), ordinal, np.array([5, 5], dtype=np.int64), nominal)


def numpy_mdav(x: np.ndarray, k: int) -> np.ndarray:
    """MDAV as plain vectorized numpy: the baseline every row is compared with.

    ``003_309fe4adb430bc25.txt`` Algorithm 5.1, written the way a careful numpy user would,
    without compiled code: records as contiguous columns (each distance pass is d vectorized
    subtract-square-add sweeps over the remaining records), a running column sum for the
    average, ``argpartition`` for the k nearest, removed records masked and the arrays compacted
    whenever half of them is dead. Measured on the benchmark data it is a little faster than
    :func:`~microgui.core.methods.mdav.mdav_reference` (which spends extra work on the exact
    tie rule), so the ratios are not flattered by a slow baseline. Ties among the k nearest are
    broken by ``argpartition`` (arbitrarily), so on data with ties its partition may differ from
    the exact one; the table's "same" column says whether it did.
    """
    x = np.asarray(x, dtype=np.float64)
    n, dim = x.shape
    labels = np.full(n, -1, dtype=np.int64)
    cols = np.array(x.T, order="C")  # (d, m)
    rows = np.arange(n)
    alive = np.ones(n, dtype=bool)
    total = x.sum(axis=0)
    m, label = n, 0
    dist, tmp = np.empty(n), np.empty(n)

    def sqdist(point: np.ndarray) -> np.ndarray:
        size = cols.shape[1]
        d, t = dist[:size], tmp[:size]
        d[:] = 0.0
        for j in range(dim):
            np.subtract(cols[j], point[j], out=t)
            np.multiply(t, t, out=t)
            d += t
        return d

    def farthest(d: np.ndarray) -> int:
        d[~alive] = -np.inf
        return int(np.argmax(d))

    def around(d: np.ndarray, p: int) -> np.ndarray:
        d = np.where(alive, d, np.inf)
        d[p] = -1.0  # the record itself is always in its group
        return np.argpartition(d, k - 1)[:k]

    def take(group: np.ndarray) -> None:
        nonlocal label, m, total
        labels[rows[group]] = label
        label += 1
        alive[group] = False
        m -= len(group)
        total = total - cols[:, group].sum(axis=1)

    while m >= 3 * k:
        r = farthest(sqdist(total / m))
        d_r = sqdist(cols[:, r].copy())
        take(around(d_r, r))
        s = farthest(d_r)  # the farthest from r outside r's group
        take(around(sqdist(cols[:, s].copy()), s))
        if 2 * m <= cols.shape[1]:
            cols, rows = np.ascontiguousarray(cols[:, alive]), rows[alive]
            alive = np.ones(m, dtype=bool)
    if m >= 2 * k:
        r = farthest(sqdist(total / m))
        take(around(sqdist(cols[:, r].copy()), r))
    labels[rows[alive]] = label
    return labels


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
    from microgui.core.dependency import dependency_tree

    frame = pd.DataFrame(data.continuous, columns=[f"q{j}" for j in range(data.d)])
    dependency_tree(frame, list(frame.columns), progress=progress)


def _linkage_data(n: int, d: int, seed: int = SEED) -> BenchData:
    """:func:`correlated_data` with its MDAV (k = 5) release as ``protected`` (made untimed)."""
    data = correlated_data(n, d, seed)
    labels = mdav_module.mdav(data.continuous, 5)
    means = group_means(data.continuous, labels, int(labels.max()) + 1)
    return BenchData(
        data.continuous, data.ordinal, data.ordinal_sizes, data.nominal, protected=means[labels]
    )


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


#: Distinct values of the 9 attributes of 000's CENSUS (000_d23cf301593eeda4.txt §4.1, Table 4).
_CENSUS_CARDINALITIES = (78, 2, 17, 6, 9, 8, 83, 50, 50)


def _census_like_data(n: int, d: int, seed: int = SEED) -> BenchData:
    """n records of d <= 9 discrete attributes shaped like ``000``'s CENSUS (Table 4: 78, 2, 17, 6,
    9, 8, 83, 50, 50 values), dependent through one shared normal factor (each column: the factor
    times 0.6 plus its own noise, cut into equal-width classes), taken as numbers and z-scored, as
    the paper's AMA and MDAV average them."""
    rng = np.random.default_rng(seed)
    factor = rng.standard_normal(n)
    cols = []
    for size in _CENSUS_CARDINALITIES[:d]:
        z = 0.6 * factor + rng.standard_normal(n)
        cols.append(np.clip(((z + 3.0) / 6.0 * size).astype(np.int64), 0, size - 1))
    empty = np.empty((n, 0), dtype=np.int64)
    x = np.column_stack(cols).astype(np.float64)
    return BenchData(_zscore(x), empty, np.empty(0, dtype=np.int64), empty)


def _qi_matrix(data: BenchData) -> QIMatrix:
    dc, do, dn = data.continuous.shape[1], data.ordinal.shape[1], data.nominal.shape[1]
    return QIMatrix(
        continuous_names=tuple(f"c{j}" for j in range(dc)),
        continuous=data.continuous,
        cont_mean=np.zeros(dc),
        cont_std=np.ones(dc),
        ordinal_names=tuple(f"o{j}" for j in range(do)),
        ordinal=data.ordinal,
        ordinal_orders=tuple(tuple(str(v) for v in range(int(s))) for s in data.ordinal_sizes),
        nominal_names=tuple(f"n{j}" for j in range(dn)),
        nominal=data.nominal,
        nominal_categories=tuple(
            tuple(range(int(data.nominal[:, j].max()) + 1)) for j in range(dn)
        ),
    )


def _ama(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    # The dependency tree (entropies, Kruskal, key attributes) is part of the timed partition.
    return ama_module.ama_partition(_qi_matrix(data), k, progress=progress)[0]


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
    BenchCase("mdav", 100_000, 10, 5, _mdav, target=6.0),
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
    BenchCase("ama", 500_000, 9, 20, _ama, data=_census_like_data, note="000 §4 CENSUS shape"),
    BenchCase(
        "dependency-tree",
        500_000,
        9,
        5,
        _dependency_tree,
        data=_census_like_data,
        note="000 §3.2 tree, no IL",
        target=5.0,
    ),
    BenchCase(
        "record-linkage",
        10_000,
        10,
        5,
        _record_linkage,
        data=_linkage_data,
        note="vs mdav k=5 release",
    ),
    BenchCase(
        "record-linkage",
        100_000,
        10,
        5,
        _record_linkage,
        data=_linkage_data,
        note="vs mdav k=5 release",
        target=10.0,
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


def _format(rows: Sequence[BenchRow]) -> str:
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


REFERENCE_KS = (3, 4, 5, 10)


def reference_table(methods: Sequence[str] | None = None) -> str | None:
    """IL (%) of every continuous method on the reference sets at k = 3, 4, 5, 10."""
    root = shared_data_dir()
    if root is None:
        return None
    sets = reference_sets(root)
    names = [
        m.name
        for m in available_methods()
        if AttributeKind.CONTINUOUS in m.kinds
        and not m.needs_confidential
        and (methods is None or m.name in methods)
    ]
    header = ["method"] + [f"{s} k={k}" for s in sets for k in REFERENCE_KS]
    lines = [header]
    for name in names:
        row = [name]
        for frame in sets.values():
            spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
            dataset = Dataset(frame, RoleMap.from_dict({c: spec for c in frame.columns}))
            for k in REFERENCE_KS:
                try:
                    result = run_protection(dataset, RunSpec.make(name, k, seed=SEED))
                    il = result.information_loss
                    row.append("n/a" if il != il else f"{il:.4f}")  # NaN: generalized output
                except MicroguiError:
                    row.append("n/a")
        lines.append(row)
        print(f"  done: reference IL of {name}", file=sys.stderr, flush=True)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for i, line in enumerate(lines):
        out.append(
            "  ".join(
                c.ljust(w) if j == 0 else c.rjust(w)
                for j, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


#: The 12-run sweep of the benchmark (issue 5: "a 12-run sweep on Census <= 60 s").
SWEEP_METHODS = ("mdav", "mdav-generic", "mst", "vmdav")
SWEEP_KS = (3, 5, 10)


def census_sweep_text() -> str | None:
    """Time a sweep of :data:`SWEEP_METHODS` × :data:`SWEEP_KS` on Census (13 continuous
    quasi-identifiers), every run measured, on the default number of worker processes (pool
    start included). None when the reference data is absent."""
    from microgui.core.pool import default_workers
    from microgui.core.sweep import SweepSpec, run_sweep

    root = shared_data_dir()
    if root is None:
        return None
    frame = reference_sets(root)["Census"]
    spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    dataset = Dataset(frame, RoleMap.from_dict({str(c): spec for c in frame.columns}))
    specs = SweepSpec.make(SWEEP_METHODS, SWEEP_KS, seed=SEED).run_specs()
    workers = default_workers(len(specs))
    started = time.perf_counter()
    points = run_sweep(dataset, specs, workers=workers)
    elapsed = time.perf_counter() - started
    failed = [p for p in points if p.error is not None]
    slowest = max(points, key=lambda p: p.seconds + p.measure_seconds)
    return (
        f"sweep: {len(points)} runs ({', '.join(SWEEP_METHODS)} × k = "
        f"{', '.join(map(str, SWEEP_KS))}) on Census, {len(frame):,} records × {frame.shape[1]}, "
        f"every run measured, {workers} worker process(es): {elapsed:.2f} s in all "
        f"(target <= 60 s), slowest run {slowest.spec.method} k={slowest.spec.k} "
        f"{slowest.seconds + slowest.measure_seconds:.2f} s, {len(failed)} failed"
    )


def measures_text() -> str:
    """Time ``evaluate`` (every measure that applies) after MDAV k = 5: on Census when the
    reference data is present, and on 50,000 synthetic records (10 continuous QIs plus a
    confidential column)."""
    from microgui.core.metrics.evaluate import evaluate

    cases: list[tuple[str, pd.DataFrame, list[str]]] = []
    root = shared_data_dir()
    if root is not None:
        census = reference_sets(root)["Census"]
        cases.append(("Census", census, []))
    data = correlated_data(50_000, 10)
    frame = pd.DataFrame(data.continuous, columns=[f"q{j}" for j in range(10)])
    frame["conf"] = np.random.default_rng(SEED).integers(0, 20, len(frame))
    cases.append(("50,000 synthetic", frame, ["conf"]))
    lines = []
    for name, table, confidential in cases:
        qi_spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        conf_spec = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
        roles = {str(c): (conf_spec if c in confidential else qi_spec) for c in table.columns}
        dataset = Dataset(table, RoleMap.from_dict(roles))
        result = run_protection(dataset, RunSpec.make("mdav", 5, seed=SEED))
        started = time.perf_counter()
        measures = evaluate(dataset, result.protected, labels=result.labels)
        elapsed = time.perf_counter() - started
        applied = sum(v is not None for v in measures.values())
        lines.append(
            f"all measures on {name} ({len(table):,} records, mdav k=5): {elapsed:.2f} s "
            f"({applied} measures; record linkage {measures['record_linkage']:.2f} %, "
            f"IL1-5 IL {measures['il']:.2f})"
        )
    return "\n".join(lines)


#: Input sizes of the memory probe: exact MDAV run to the end at 200,000 (about 12 s here), and at
#: 1,000,000 (the issue's target size) stopped after its first batch, or with ``--huge`` run to
#: the end (about 8 minutes of O(n²) work on this machine).
MEMORY_N = 200_000
HUGE_N = 1_000_000


def _maxrss_mb() -> float:
    """This process's peak resident memory: VmHWM where /proc exists (Linux), else ru_maxrss.

    Linux's ru_maxrss survives exec: a child forked from a large parent starts with the
    parent's peak, which would hide everything below it; VmHWM belongs to the new address space.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**10  # kB
    except (OSError, ValueError, IndexError):
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes there, KiB on Linux


def _current_rss_mb() -> float | None:
    try:  # Linux: resident pages, second field of /proc/self/statm
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _read_npy_in_place(path: str) -> np.ndarray:
    # np.load reads through a temporary buffer, whose peak (about 1.5x the input, measured) would
    # hide MDAV's own; reading straight into the final array costs the input and nothing more.
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(f)
        x = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
        f.readinto(memoryview(x).cast("B"))
    return x


def _memory_child(path: str, k: int, whole: bool) -> int:
    """Body of the probe's subprocess: load the kernel and the data, run MDAV (to the end, or
    only its first batch of groups unless ``whole``), print JSON."""
    from microgui.core.progress import RunCancelled

    mdav_module.warm_up()
    x = _read_npy_in_place(path)
    before_peak, before_now = _maxrss_mb(), _current_rss_mb()

    def progress(fraction: float, status: str = "", /) -> None:
        # The first report after a batch of groups: every array MDAV uses has been allocated
        # and written (the kernel allocates only O(k + d) per batch after that).
        if not whole and fraction > 0:
            raise RunCancelled

    started = time.perf_counter()
    try:
        mdav_module.mdav(x, k, progress=progress)
    except RunCancelled:
        pass
    seconds = time.perf_counter() - started
    from microgui.core.io import json_text

    record = {
        "before_peak_mb": before_peak,
        "before_mb": before_now,
        "peak_mb": _maxrss_mb(),
        "seconds": seconds,
    }
    print(json_text(record, indent=None), end="")
    return 0


@dataclass(frozen=True)
class MemoryResult:
    """Peak resident memory of exact MDAV in a fresh process (MB = 2**20 bytes)."""

    n: int
    d: int
    k: int
    input_mb: float
    #: peak RSS after the imports, the kernel load and the data load (before MDAV runs)
    before_peak_mb: float
    #: resident memory at that moment (None where /proc is absent)
    before_mb: float | None
    #: peak RSS at the end: the whole process's peak
    peak_mb: float
    seconds: float
    #: False: MDAV was stopped after its first batch of groups (its memory is all allocated then)
    whole: bool = True

    @property
    def limit_mb(self) -> float:
        """Issue 6's target: 3x the input matrix + 300 MB."""
        return 3 * self.input_mb + 300

    @property
    def passed(self) -> bool:
        return self.peak_mb <= self.limit_mb

    def text(self) -> str:
        grown = self.peak_mb - self.before_peak_mb
        now = f", resident {self.before_mb:.0f} MB" if self.before_mb is not None else ""
        return (
            f"exact MDAV {self.n:,} x {self.d}, k={self.k}, fresh process: input {self.input_mb:.0f} MB; "
            f"peak RSS {self.peak_mb:.0f} MB (before MDAV: peak {self.before_peak_mb:.0f} MB{now}; "
            f"MDAV added {grown:.0f} MB = {grown / self.input_mb:.2f}x the input); "
            f"target peak <= 3 x input + 300 MB = {self.limit_mb:.0f} MB: "
            f"{'PASS' if self.passed else 'MISS'}; "
            + (
                f"MDAV took {self.seconds:.1f} s"
                if self.whole
                else f"MDAV stopped after its first batch of groups ({self.seconds:.1f} s): every "
                "array it uses is allocated and written by then; --huge runs it to the end"
            )
        )


def memory_probe(n: int, d: int = 10, k: int = 5, *, whole: bool = True) -> MemoryResult:
    """Peak resident memory of :func:`~microgui.core.methods.mdav.mdav` on ``n`` x ``d`` records,
    measured in a fresh Python process (VmHWM of ``/proc/self/status``; ``resource.getrusage``
    ru_maxrss where there is no /proc, see :func:`_maxrss_mb`).

    The records (:func:`correlated_data`) are made here and saved to a temporary ``.npy`` file
    that the child loads, so the peak of making them (several temporary n x d arrays) does not
    count; the child reports its peak before and after the run, so both the process's peak and
    MDAV's own increase are shown. ``whole=False`` stops MDAV (through its progress callback)
    after the first batch of groups: the peak is reached by then, which makes the million-record
    probe take seconds instead of minutes.
    """
    # Compile the kernel here if numba's cache is stale: compiling in the child would set its peak.
    mdav_module.warm_up()
    x = correlated_data(n, d).continuous
    with tempfile.TemporaryDirectory(prefix="microgui-bench-") as tmp:
        path = os.path.join(tmp, "records.npy")
        np.save(path, x)
        done = subprocess.run(
            [sys.executable, "-m", "microgui.bench", "--memory-child", path, str(k), str(whole)],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"memory probe failed:\n{done.stderr.strip()}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return MemoryResult(
        n,
        d,
        k,
        x.nbytes / 2**20,
        out["before_peak_mb"],
        out["before_mb"],
        out["peak_mb"],
        out["seconds"],
        whole,
    )


#: Blocked MDAV: block sizes tried against exact MDAV at :data:`BLOCKED_N`, and the block size of
#: the million-record run (issue 6 "Scale beyond one block": IL cost aim <= +3 % relative; a
#: million records x 10 in <= 60 s with the local engine).
BLOCKED_N = 100_000
BLOCK_SIZES = (10_000, 25_000)
MILLION_BLOCK_SIZE = 25_000
MILLION_TARGET = 60.0


def blocking_cost(
    values: np.ndarray,
    k: int,
    block_sizes: Sequence[int],
    *,
    method: str = "mdav",
    exact: bool = True,
    workers: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Information loss and time of blocked runs against the unblocked (exact) run.

    Parameters
    ----------
    values
        (n, d) continuous records (the benchmark's ``correlated_data(n, d).continuous``).
    k
        Minimum group size.
    block_sizes
        The block sizes to try (each >= 2k).
    method
        A method for continuous quasi-identifiers.
    exact
        Also run without blocking (the reference; O(n²) for MDAV, skip it for a million).
    workers
        Processes of the local engine (None: one per core).

    Returns
    -------
    list of dict
        One row per run, the unblocked one first when ``exact``: ``block_size`` (None for the
        unblocked run), ``n_blocks``, ``block_size_min``, ``block_size_max``, ``engine``,
        ``processes``, ``information_loss`` (IL = 100·SSE/SST, %), ``seconds`` (whole run,
        blocking and aggregation included) and ``relative_il_increase`` (IL / exact IL - 1,
        None without the exact run).
    """
    x = np.asarray(values, dtype=np.float64)
    names = [f"x{j}" for j in range(x.shape[1])]
    frame = pd.DataFrame(x, columns=names)
    roles = RoleMap.from_dict(
        {c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS) for c in names}
    )
    dataset = Dataset(frame, roles)
    sizes: list[int | None] = ([None] if exact else []) + [int(b) for b in block_sizes]
    rows: list[dict[str, Any]] = []
    reference: float | None = None
    for size in sizes:
        spec = RunSpec.make(method, k, seed=seed, block_size=size, workers=workers)
        started = time.perf_counter()
        result = run_protection(dataset, spec)
        seconds = time.perf_counter() - started
        il = result.information_loss
        scale = dict(result.report.get("scale", {}))
        if size is None:
            reference = il
        rows.append(
            {
                "block_size": size,
                "n_blocks": int(scale.get("n_blocks", 1)),
                "block_size_min": int(scale.get("block_sizes", {}).get("min", len(x))),
                "block_size_max": int(scale.get("block_sizes", {}).get("max", len(x))),
                "engine": scale.get("engine", "in-process"),
                "processes": int(scale.get("processes", 1)),
                "information_loss": il,
                "seconds": seconds,
                "relative_il_increase": None if reference is None else il / reference - 1.0,
            }
        )
    return rows


def scale_text() -> str:
    """Blocked runs (issue 6 "Scale beyond one block") through :func:`blocking_cost`: blocked
    MDAV's IL against exact MDAV at :data:`BLOCKED_N` records, and 1,000,000 x 10 in blocks of
    :data:`MILLION_BLOCK_SIZE` on the local engine against its 60 s target (about 10-15 s here,
    so it is in the default run)."""
    lines = ["blocked MDAV (k=5, d=10, whole run_protection; IL cost aim <= +3 % relative):"]
    rows = blocking_cost(correlated_data(BLOCKED_N, 10).continuous, 5, BLOCK_SIZES, seed=SEED)
    for row in rows:
        lines.append("  " + _blocked_line(BLOCKED_N, row))
    (row,) = blocking_cost(
        correlated_data(HUGE_N, 10).continuous, 5, (MILLION_BLOCK_SIZE,), exact=False, seed=SEED
    )
    verdict = "PASS" if row["seconds"] <= MILLION_TARGET else "MISS"
    lines.append("  " + _blocked_line(HUGE_N, row) + f"; target <= {MILLION_TARGET:g} s: {verdict}")
    return "\n".join(lines)


def _blocked_line(n: int, row: dict[str, Any]) -> str:
    if row["block_size"] is None:
        return f"{n:,} exact: IL {row['information_loss']:.4f} %, {row['seconds']:.2f} s"
    cost = row["relative_il_increase"]
    versus = f", IL vs exact {100 * cost:+.2f} % relative" if cost is not None else ""
    return (
        f"{n:,} in blocks of <= {row['block_size']:,} ({row['n_blocks']} blocks of "
        f"{row['block_size_min']:,}-{row['block_size_max']:,}, {row['engine']}, "
        f"{row['processes']} process(es)): IL {row['information_loss']:.4f} %{versus}, "
        f"{row['seconds']:.2f} s"
    )


#: Records of the run during which the GUI's event loop is watched (MDAV: about a minute here).
GUI_STALL_RECORDS = 350_000


def gui_text() -> str:
    """The app's measurements (scatter redraw at 100,000 points, longest event-loop stall
    during a run), Qt offscreen, when :mod:`microgui.qt.perf` exists."""
    import importlib.util

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if importlib.util.find_spec("microgui.qt.perf") is None:
        return "GUI: microgui.qt.perf is not in this checkout; no GUI rows"
    from microgui.qt.perf import ensure_application, event_loop_stall, scatter_redraw_times

    ensure_application()
    lines = ["GUI (Qt offscreen)"]
    for n in (100_000, 200_000):
        r = scatter_redraw_times(n=n)
        verdict = "PASS" if r["redraw_ms"] <= 100 else "MISS"
        lines.append(
            f"  groups plot, {n:,} records ({r['mode']}): first draw {r['first_draw_ms']:.0f} ms, "
            f"redraw {r['redraw_ms']:.0f} ms (max {r['redraw_max_ms']:.0f}) <= 100 ms {verdict}"
        )
    # Load the compiled kernels first, as any run after the session's first has them: loading
    # them from numba's cache holds the GIL for about 0.4 s once per session (said below).
    from microgui.core.runs import RunSpec, run_protection
    from microgui.qt.perf import random_dataset

    started = time.perf_counter()
    run_protection(random_dataset(2_000, 10, 1), RunSpec.make("mdav", 5, seed=0))
    load_seconds = time.perf_counter() - started
    s = event_loop_stall(n_records=GUI_STALL_RECORDS)
    verdict = "PASS" if s["max_gap_during_run_ms"] <= 100 else "MISS"
    lines.append(
        f"  event loop during a {s['run_seconds']:.0f} s MDAV run of {s['n_records']:,} x 10 "
        f"({s['outcome']}): longest stall {s['max_gap_during_run_ms']:.0f} ms during the run "
        f"<= 100 ms {verdict}; {s['max_gap_while_drawing_ms']:.0f} ms while drawing the result "
        f"({'PASS' if s['max_gap_while_drawing_ms'] <= 100 else 'MISS'}) "
        f"(kernels loaded beforehand in {load_seconds:.2f} s, as after a session's first run)"
    )
    return "\n".join(lines)


def complexity_table() -> str:
    """Each registered method's stated complexity."""
    methods = available_methods()
    width = max(len(m.name) for m in methods)
    return "\n".join(f"{m.name.ljust(width)}  {m.complexity or '(not stated)'}" for m in methods)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m microgui.bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"only rows with n <= {QUICK_MAX_N:,}; no memory probe, sweep or measures",
    )
    parser.add_argument(
        "--only", metavar="NAME", help="only the rows of this method (e.g. mdav-generic)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="R",
        help="best of R timings (default: 3 for rows under 1 s, else 1)",
    )
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=100_000,
        metavar="N",
        help="measure the numpy MDAV baseline up to N records; above, extrapolate and mark (est.) "
        "(default 100,000; 0 = no baseline)",
    )
    parser.add_argument(
        "--huge",
        action="store_true",
        help=f"run the memory probe's exact MDAV on {HUGE_N:,} records to the end (minutes)",
    )
    parser.add_argument(
        "--gui", action="store_true", help="also the app's redraw and event-loop measurements"
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also print the IL of every method on Census, Tarragona and EIA (k = 3, 4, 5, 10), "
        "read from ../shared/data or $MICROGUI_SHARED_DATA",
    )
    parser.add_argument(
        "--memory-child", nargs=3, metavar=("NPY", "K", "WHOLE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.memory_child:
        path, k, whole = args.memory_child
        return _memory_child(path, int(k), whole == "True")
    cases = [
        c
        for c in CASES + registered_cases()
        if (not args.quick or c.n <= QUICK_MAX_N) and (args.only is None or c.method == args.only)
    ]
    if not cases:
        known = ", ".join(sorted({c.method for c in CASES + registered_cases()}))
        print(f"no benchmark rows for {args.only!r}; methods: {known}", file=sys.stderr)
        return 2
    print(
        f"microgui benchmark: Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, {os.cpu_count()} CPU(s), {platform.machine()}",
        flush=True,
    )
    print(
        f"data: correlated_data(n, d, seed={SEED}) (see its docstring) unless noted; "
        "time of the partition only unless note=run"
    )
    print(warm_up_report(), flush=True)
    baselines = Baselines(args.baseline_max, args.repeat) if args.baseline_max > 0 else None
    rows = []
    for case in cases:
        rows.append(run_case(case, args.repeat, baselines))
        print(
            f"  done: {case.method} n={case.n:,} ({rows[-1].seconds:.2f} s)",
            file=sys.stderr,
            flush=True,
        )
    print(_format(rows))
    if baselines is not None:
        print(
            "numpy MDAV: numpy_mdav on the same records; x numpy = its time / the row's time; "
            "(est.) = extrapolated by n² from the largest measured n, not measured; "
            "same = the MDAV row's partition equals numpy MDAV's"
        )
    targets = [r for r in rows if r.case.target is not None]
    if targets:
        missed = [r for r in targets if r.seconds > (r.case.target or 0.0)]
        print(f"targets: {len(targets) - len(missed)} of {len(targets)} met")
    print()
    print("stated complexity of each method:")
    print(complexity_table())
    if args.only in (None, "mdav") and not args.quick:
        print()
        print("memory (issue 6 target: MDAV on 1,000,000 x 10 peaks at <= 3 x input + 300 MB):")
        print("  " + memory_probe(MEMORY_N).text(), flush=True)
        print("  " + memory_probe(HUGE_N, whole=args.huge).text(), flush=True)
    if args.only is None and not args.quick:
        print()
        print(scale_text(), flush=True)
        sweep = census_sweep_text()
        if sweep is not None:
            print()
            print(sweep)
        print(measures_text())
    if args.gui:
        print()
        print(gui_text())
    if args.reference:
        only = [args.only] if args.only else None
        table = reference_table(only)
        print()
        if table is None:
            print("reference IL: ../shared/data not found (set MICROGUI_SHARED_DATA)")
        else:
            print("information loss IL % on the reference sets (all columns z-scored):")
            print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
