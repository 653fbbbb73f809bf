"""The benchmark's data: seeded synthetic records (:func:`correlated_data`, :func:`mixed_data`, a
Census-like table) and the plain numpy MDAV baseline (:func:`numpy_mdav`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microgui.core.methods import mdav as mdav_module
from microgui.core.table.aggregate import group_means
from microgui.core.table.dataset import QIMatrix

__all__ = [
    "SEED",
    "BenchData",
    "correlated_data",
    "mixed_data",
    "numpy_mdav",
    "linkage_data",
    "census_like_data",
    "qi_matrix",
]


SEED = 20240501


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


def linkage_data(n: int, d: int, seed: int = SEED) -> BenchData:
    """:func:`correlated_data` with its MDAV (k = 5) release as ``protected`` (made untimed)."""
    data = correlated_data(n, d, seed)
    labels = mdav_module.mdav(data.continuous, 5)
    means = group_means(data.continuous, labels, int(labels.max()) + 1)
    return BenchData(
        data.continuous, data.ordinal, data.ordinal_sizes, data.nominal, protected=means[labels]
    )


#: Distinct values of the 9 attributes of 000's CENSUS (000_d23cf301593eeda4.txt §4.1, Table 4).
_CENSUS_CARDINALITIES = (78, 2, 17, 6, 9, 8, 83, 50, 50)


def census_like_data(n: int, d: int, seed: int = SEED) -> BenchData:
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


def qi_matrix(data: BenchData) -> QIMatrix:
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
