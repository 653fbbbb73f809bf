"""``python -m microgui.bench``: how long the methods take, as a table.

Each row is a :class:`BenchCase` in :data:`CASES`; a new method adds its rows there. Data are
synthetic and seeded (:func:`correlated_data`), z-scored as a run would; the time is the partition
step alone (the numba JIT is warmed up first and its compile or cache-load time printed apart),
except for rows marked "run", which time the whole ``run_protection`` (validation, partition,
aggregation, report). IL = 100·SSE/SST on the z-scores (``002_f464918b99c38812.txt`` §III).
"max gap" is the longest time between two progress calls, i.e. how late a cancel can take
effect; "vs" is the reference row's time over the fast row's at the same n, d and k.

Methods registered with ``bench_sizes`` get rows automatically (timed through ``run_protection``,
note "run"); the table is followed by each method's stated complexity. ``--reference`` adds the IL
of every continuous method on Census, Tarragona and EIA at k = 3, 4, 5, 10.

Options: ``--quick`` (only n <= 10,000), ``--only NAME`` (rows of one method), ``--repeat R``
(best of R timings; by default 3 for rows under a second, else 1), ``--reference``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
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
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods import mst as mst_module
from microgui.core.methods.base import available_methods, get_method
from microgui.core.metrics import information_loss
from microgui.core.progress import ProgressFn
from microgui.core.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.runs import RunSpec, run_protection

__all__ = ["BenchData", "BenchCase", "CASES", "correlated_data", "mixed_data", "run_case", "main"]

SEED = 20240501
QUICK_MAX_N = 10_000


@dataclass(frozen=True)
class BenchData:
    """Quasi-identifiers in the form the methods take (as ``QIMatrix`` holds them)."""

    continuous: np.ndarray  # (n, dc) z-scores
    ordinal: np.ndarray  # (n, do) ranks
    ordinal_sizes: np.ndarray
    nominal: np.ndarray  # (n, dn) codes

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


def _mdav(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mdav_module.mdav(data.continuous, k, progress=progress)


def _mdav_generic(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mdav_module.mdav_generic(
        data.continuous, data.ordinal, data.ordinal_sizes, data.nominal, k, progress=progress
    )


def _mdav_reference(data: BenchData, k: int, progress: ProgressFn) -> np.ndarray:
    return mdav_module.mdav_reference(data.continuous, k)


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
    returns the labels; ``baseline_of``: for a slow reference, the method whose row at the same
    n, d, k it is compared with.
    """

    method: str
    n: int
    d: int
    k: int
    partition: Callable[[BenchData, int, ProgressFn], np.ndarray]
    data: Callable[[int, int], BenchData] = correlated_data
    baseline_of: str | None = None
    note: str = ""


CASES: list[BenchCase] = [
    BenchCase("mdav", 10_000, 10, 5, _mdav),
    BenchCase("mdav", 50_000, 10, 5, _mdav),
    BenchCase("mdav", 100_000, 10, 5, _mdav),
    BenchCase("mdav", 50_000, 10, 5, _mdav_full_run, note="run"),
    BenchCase("mdav-generic", 10_000, 10, 5, _mdav_generic, data=mixed_data, note="6c+2o+2n"),
    BenchCase("mdav-reference", 10_000, 10, 5, _mdav_reference, baseline_of="mdav"),
    BenchCase("mdav-reference", 50_000, 10, 5, _mdav_reference, baseline_of="mdav"),
    BenchCase("mst", 10_000, 10, 5, _mst),
    BenchCase("mst", 50_000, 10, 5, _mst),
    BenchCase("mst", 100_000, 10, 5, _mst),
    BenchCase("ama", 10_000, 10, 5, _ama),
    BenchCase("ama", 50_000, 10, 5, _ama),
    BenchCase("ama", 10_000, 10, 5, _ama, data=mixed_data, note="6c+2o+2n"),
    BenchCase("ama", 500_000, 9, 20, _ama, data=_census_like_data, note="000 §4 CENSUS shape"),
]


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
    """Rows for every registered method that declares ``bench_sizes`` and has no hand-made row."""
    own = {c.method for c in CASES}
    return [
        BenchCase(m.name, n, 10, 5, _registered(m.name), note="run")
        for m in available_methods()
        if m.name not in own
        for n in m.bench_sizes
    ]


@dataclass(frozen=True)
class BenchRow:
    case: BenchCase
    seconds: float
    il: float
    max_gap: float | None


def _stamper(stamps: list[float]) -> ProgressFn:
    def progress(fraction: float, status: str = "", /) -> None:
        stamps.append(time.perf_counter())

    return progress


def run_case(case: BenchCase, repeat: int | None = None) -> BenchRow:
    """Time ``case`` and measure its information loss.

    Best of ``repeat`` timings; by default (None) best of 3 for a row that takes under a second
    (short timings vary most with the machine's load), else one.
    """
    data = case.data(case.n, case.d)
    best = float("inf")
    max_gap: float | None = None
    labels = np.empty(0, dtype=np.int64)
    done = 0
    while done < (repeat or 1) or (repeat is None and done < 3 and best < 1.0):
        done += 1
        stamps: list[float] = []
        progress = _stamper(stamps)
        started = time.perf_counter()
        labels = case.partition(data, case.k, progress)
        elapsed = time.perf_counter() - started
        best = min(best, elapsed)
        if len(stamps) > 1:
            gap = float(np.diff(stamps).max())
            max_gap = gap if max_gap is None else max(max_gap, gap)
    z = data.continuous  # IL on the continuous attributes, as the run report measures it
    g = int(labels.max()) + 1
    il = _RUN_IL.pop((id(data), case.method, case.k), None)
    if il is None:
        il = information_loss(z, group_means(z, labels, g)[labels]) if z.shape[1] else float("nan")
    return BenchRow(case, best, il, max_gap)


def available_kernel_modules() -> list[Any]:
    """Method modules (besides mdav and mst) with a ``warm_up()`` for their numba kernels."""
    import importlib

    out = []
    for name in ("dba", "median", "psensitive", "tcloseness", "md", "cbfs", "vmdav", "tfrp", "mhm", "univariate"):
        module = importlib.import_module(f"microgui.core.methods.{name}")
        if hasattr(module, "warm_up"):
            out.append(module)
    return out


def warm_up_report() -> str:
    """Compile or load the numba kernels; say which and how long it took."""
    seconds = mdav_module.warm_up() + mst_module.warm_up()
    for module in available_kernel_modules():
        seconds += module.warm_up()
    stats = getattr(mdav_module._mdav_batch, "stats", None)
    hits = sum(getattr(stats, "cache_hits", {}).values()) if stats is not None else 0
    how = "loaded from numba's cache" if hits else "compiled (no cache yet)"
    return f"numba kernel {how} in {seconds:.2f} s (not included below)"


def _format(rows: Sequence[BenchRow]) -> str:
    fast = {
        (r.case.method, r.case.n, r.case.d, r.case.k): r.seconds for r in rows if not r.case.note
    }
    header = ("method", "n", "d", "k", "seconds", "IL %", "max gap ms", "vs", "note")
    lines = [header]
    for r in rows:
        c = r.case
        ratio = ""
        if c.baseline_of is not None:
            other = fast.get((c.baseline_of, c.n, c.d, c.k))
            if other:
                ratio = f"{r.seconds / other:.1f}x {c.baseline_of}"
        gap = f"{r.max_gap * 1e3:.0f}" if r.max_gap is not None else ""
        lines.append(
            (
                c.method,
                f"{c.n:,}",
                str(c.d),
                str(c.k),
                f"{r.seconds:.3f}",
                f"{r.il:.4f}",
                gap,
                ratio,
                c.note,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {1, 2, 3, 4, 5, 6}
    out = []
    for i, line in enumerate(lines):
        cells = [
            cell.rjust(w) if j in right else cell.ljust(w)
            for j, (cell, w) in enumerate(zip(line, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


REFERENCE_KS = (3, 4, 5, 10)


def shared_data_dir() -> Path | None:
    """The reference data folder: $MICROGUI_SHARED_DATA, or ``../shared/data`` beside a source
    checkout. None when absent (a user's clone has none)."""
    env = os.environ.get("MICROGUI_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "data")
    for path in candidates:
        if (path / "sdc-reference").is_dir():
            return path
    return None


def reference_sets(root: Path) -> dict[str, pd.DataFrame]:
    """Census (all 13 columns), Tarragona (all 13) and EIA (UTILITYID plus the 10 revenue and
    sales columns), as the literature uses them (``sdc-reference/README.md``)."""
    ref = root / "sdc-reference"
    census = pd.read_csv(ref / "CASCrefmicrodata.csv")
    tarragona = pd.read_csv(ref / "Tarragona.csv")
    eia = pd.read_csv(ref / "EIA.csv")
    eia_cols = ["UTILITYID"] + [c for c in eia.columns if c.endswith(("REVENUE", "SALES"))]
    return {"Census": census, "Tarragona": tarragona, "EIA": eia[eia_cols]}


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
    from microgui.core.sweep import SweepSpec, default_workers, run_sweep

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


def complexity_table() -> str:
    """Each registered method's stated complexity."""
    methods = available_methods()
    width = max(len(m.name) for m in methods)
    return "\n".join(f"{m.name.ljust(width)}  {m.complexity or '(not stated)'}" for m in methods)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m microgui.bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help=f"only rows with n <= {QUICK_MAX_N:,}")
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
        "--reference",
        action="store_true",
        help="also print the IL of every method on Census, Tarragona and EIA (k = 3, 4, 5, 10), "
        "read from ../shared/data or $MICROGUI_SHARED_DATA",
    )
    args = parser.parse_args(argv)
    cases = [
        c
        for c in CASES + registered_cases()
        if (not args.quick or c.n <= QUICK_MAX_N) and (args.only is None or c.method == args.only)
    ]
    if not cases:
        known = ", ".join(sorted({c.method for c in CASES}))
        print(f"no benchmark rows for {args.only!r}; methods: {known}", file=sys.stderr)
        return 2
    print(
        f"microgui benchmark: Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, {os.cpu_count()} CPU(s)",
        flush=True,
    )
    print(
        f"data: correlated_data(n, d, seed={SEED}) (see its docstring); partition time only unless note=run"
    )
    print(warm_up_report(), flush=True)
    rows = []
    for case in cases:
        rows.append(run_case(case, args.repeat))
        print(
            f"  done: {case.method} n={case.n:,} ({rows[-1].seconds:.2f} s)",
            file=sys.stderr,
            flush=True,
        )
    print(_format(rows))
    print()
    print("stated complexity of each method:")
    print(complexity_table())
    if args.only is None and not args.quick:
        sweep = census_sweep_text()
        if sweep is not None:
            print()
            print(sweep)
        print(measures_text())
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
