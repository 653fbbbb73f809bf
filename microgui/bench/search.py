"""The exact-MDAV search table (issue 17): the pruned kernel against the brute-force kernel and
the numpy baseline, on the same records, with the same partition.

Rows: the benchmark's standard table (:func:`correlated_data`, d = 10, k = 5) at growing n, a
growth exponent fitted to each kernel's times (time ~ n**e, least squares on log-log), the same
size with heavier tails (every column log-normal) and with clusters, narrower and wider tables
(where the pruning stops paying) and mixed kinds (MDAV-generic). Each row checks that the two
kernels give the identical partition; the numpy baseline (:func:`numpy_mdav`) is measured up to
:data:`NUMPY_MAX` records and extrapolated by n**2 above (marked est.), like the brute-force
kernel above :data:`BRUTE_MAX` unless ``huge`` (then measured: about 5 minutes at 1,000,000).

Timings are best of ``repeat`` for rows under a second, else one run; the kernels are compiled
(or loaded from numba's cache) before any timing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from microgui.bench.data import SEED, correlated_data, mixed_data, numpy_mdav
from microgui.core.methods import mdav as mdav_module
from microgui.text_table import text_table

__all__ = ["SEARCH_TARGETS", "search_text", "lognormal_data", "clustered_data"]

#: Kernel targets of issue 17 (seconds, this 2-core machine, d = 10, k = 5); the issue states
#: them for the whole command, whose rows print beside (``--command``).
SEARCH_TARGETS = {100_000: 1.5, 1_000_000: 60.0}
#: The numpy baseline is measured up to this many records, the brute-force kernel up to this
#: many (unless huge); above, extrapolated by n**2 from the largest measured row.
NUMPY_MAX = 50_000
BRUTE_MAX = 300_000
K = 5


def lognormal_data(n: int, d: int, seed: int = SEED) -> np.ndarray:
    """n records of d independent log-normal columns (sigma 1), z-scored: heavy right tails."""
    x = np.exp(np.random.default_rng(seed).standard_normal((n, d)))
    return (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)


def clustered_data(n: int, d: int, seed: int = SEED) -> np.ndarray:
    """n records around 20 centres (normal, spread 4) with unit normal noise, z-scored."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, d)) * 4.0
    x = centres[rng.integers(0, 20, n)] + rng.standard_normal((n, d))
    return (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)


@dataclass
class _Row:
    data: str
    n: int
    d: int
    pruned: float
    brute: float
    brute_measured: bool
    numpy: float | None
    numpy_measured: bool
    same: bool | None
    target: float | None


def _time(fn: Callable[[], np.ndarray], repeat: int) -> tuple[float, np.ndarray]:
    best = math.inf
    out = np.empty(0)
    for i in range(repeat):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
        if best > 1.0 and i == 0:
            break
    return best, out


def _exponent(ns: list[int], seconds: list[float]) -> float:
    slope, _ = np.polyfit(np.log(ns), np.log(seconds), 1)
    return float(slope)


def search_text(*, huge: bool = False, repeat: int = 3) -> str:
    """The table, the fitted growth exponents and the targets met."""
    mdav_module.warm_up()
    rows: list[_Row] = []
    numpy_ref: dict[int, float] = {}

    def row(name: str, x: np.ndarray, *, target: float | None = None) -> _Row:
        n, d = x.shape
        pruned_s, pruned = _time(lambda: mdav_module.mdav(x, K, search="pruned"), repeat)
        brute_measured = huge or n <= BRUTE_MAX
        if brute_measured:
            brute_s, brute = _time(lambda: mdav_module.mdav(x, K, search="brute"), repeat)
            same: bool | None = bool(np.array_equal(pruned, brute))
        else:
            largest = max((r for r in rows if r.d == d and r.brute_measured), key=lambda r: r.n)
            brute_s = largest.brute * (n / largest.n) ** 2
            same = None
        numpy_s: float | None = None
        numpy_measured = n <= NUMPY_MAX
        if numpy_measured:
            numpy_s, _ = _time(lambda: numpy_mdav(x, K), 1)
            numpy_ref[d] = numpy_s / n**2
        elif d in numpy_ref:
            numpy_s = numpy_ref[d] * n**2
        out = _Row(
            name, n, d, pruned_s, brute_s, brute_measured, numpy_s, numpy_measured, same, target
        )
        rows.append(out)
        return out

    sizes = [10_000, 30_000, 100_000, 300_000] + ([1_000_000] if huge else [])
    for n in sizes:
        row("standard", correlated_data(n, 10).continuous, target=SEARCH_TARGETS.get(n))
    base = next(r for r in rows if r.n == 100_000)
    tails = row("log-normal", lognormal_data(100_000, 10))
    clusters = row("clustered", clustered_data(100_000, 10))
    for d in (2, 4, 20, 40):
        row("standard", correlated_data(100_000, d).continuous)
    row("standard", correlated_data(10_000, 40).continuous)
    for n in (10_000, 50_000):
        data = mixed_data(n, 10)
        started = time.perf_counter()
        args = (data.continuous, data.ordinal, data.ordinal_sizes, data.nominal, K)
        pruned = mdav_module.mdav_generic(*args, search="pruned")
        pruned_s = time.perf_counter() - started
        started = time.perf_counter()
        brute = mdav_module.mdav_generic(*args, search="brute")
        brute_s = time.perf_counter() - started
        rows.append(
            _Row(
                "mixed 6c+2o+2n",
                n,
                10,
                pruned_s,
                brute_s,
                True,
                None,
                False,
                bool(np.array_equal(pruned, brute)),
                None,
            )  # fmt: skip
        )

    def cell(value: float | None, measured: bool) -> str:
        if value is None:
            return "-"
        return f"{value:.2f}" + ("" if measured else " (est.)")

    table = text_table(
        [
            "data",
            "n",
            "d",
            "pruned s",
            "brute s",
            "numpy s",
            "x brute",
            "x numpy",
            "same",
            "auto",
            "target",
        ],  # fmt: skip
        [
            [
                r.data,
                f"{r.n:,}",
                str(r.d),
                f"{r.pruned:.2f}",
                cell(r.brute, r.brute_measured),
                cell(r.numpy, r.numpy_measured),
                f"{r.brute / r.pruned:.1f}",
                "-" if r.numpy is None else f"{r.numpy / r.pruned:.0f}",
                {True: "yes", False: "NO", None: "-"}[r.same],
                mdav_module.choose_search(r.n, r.d, K, 4 if r.data.startswith("mixed") else 0),
                "" if r.target is None else f"<= {r.target:g} s",
            ]
            for r in rows
        ],
        right={1, 2, 3, 4, 5, 6, 7},
    )
    standard = [r for r in rows if r.data == "standard" and r.d == 10]
    measured = [r for r in standard if r.brute_measured]
    lines = [
        f"exact MDAV, k = {K}: pruned and brute-force kernels (issue 17); data of "
        f"microgui.bench.data / microgui.bench.search, seed {SEED}",
        table,
        "x brute, x numpy = their time / the pruned kernel's; same = identical labels; auto = "
        "what search=auto picks; est. = extrapolated by n**2, not measured",
        f"growth exponent (time ~ n**e, d = 10): pruned "
        f"{_exponent([r.n for r in standard], [r.pruned for r in standard]):.2f}, brute "
        f"{_exponent([r.n for r in measured], [r.brute for r in measured]):.2f}",
        f"heavier tails and clusters against the standard table at 100,000 (target <= 2x): "
        f"log-normal {tails.pruned / base.pruned:.2f}x, clustered "
        f"{clusters.pruned / base.pruned:.2f}x",
    ]
    targets = [r for r in rows if r.target is not None]
    met = sum(r.pruned <= (r.target or 0.0) for r in targets)
    lines.append(
        f"kernel targets: {met} of {len(targets)} met"
        + ("" if huge else " (1,000,000 only with --huge)")
    )
    if any(r.same is False for r in rows):
        lines.append("WARNING: a pruned partition differs from the brute-force one")
    return "\n".join(lines)
