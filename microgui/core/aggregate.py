"""The aggregation step of microaggregation: replace each group by its aggregate.

``003_309fe4adb430bc25.txt`` §5 ("Aggregation"): the arithmetic mean for continuous attributes
(§5.2, with the optional variance-preserving rescaling), the median or the convex median for
ordinal attributes (§5.3, Definitions 5.2 and 5.3) and the mode for nominal attributes (§5.4).

Ties, which the paper leaves open, are broken the same way everywhere: the median of an even
number of values is the *lower* of the two central categories (the smallest category whose
cumulative frequency reaches half the total); the mode is the smallest category code among the
most frequent (for nominal attributes, codes are the sorted order of the values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.dataset import Dataset, QIMatrix

__all__ = [
    "weighted_lower_median",
    "ordinal_median",
    "convex_frequencies",
    "convex_median",
    "mode",
    "group_means",
    "rescale_variance",
    "aggregate",
    "protected_continuous_z",
]


def weighted_lower_median(weights: np.ndarray) -> int:
    """Smallest index whose cumulative weight reaches half the total weight."""
    w = np.asarray(weights, dtype=np.float64)
    cum = np.cumsum(w)
    return int(np.searchsorted(cum, cum[-1] / 2.0, side="left"))


def ordinal_median(codes: np.ndarray, n_categories: int) -> int:
    """Median category (``003`` Definition 5.2) of ordinal codes 0..n_categories-1.

    >>> ordinal_median(np.array([1, 2, 2, 5, 6]), 8)
    2
    """
    return weighted_lower_median(np.bincount(codes, minlength=n_categories))


def convex_frequencies(freq: np.ndarray) -> np.ndarray:
    """f'(c_i) = min(max_{j<=i} f(c_j), max_{j>=i} f(c_j)) of ``003`` Definition 5.3."""
    f = np.asarray(freq)
    left = np.maximum.accumulate(f)
    right = np.maximum.accumulate(f[::-1])[::-1]
    return np.minimum(left, right)


def convex_median(codes: np.ndarray, n_categories: int) -> int:
    """Convex median (``003`` Definition 5.3): the median over the convexified frequencies.

    >>> convex_median(np.array([1, 2, 7]), 8)
    4
    """
    return weighted_lower_median(convex_frequencies(np.bincount(codes, minlength=n_categories)))


def mode(codes: np.ndarray, n_categories: int) -> int:
    """Most frequent code (``003`` §5.4, plurality rule); ties go to the smallest code."""
    return int(np.argmax(np.bincount(codes, minlength=n_categories)))


def group_means(values: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group column means of a (n, d) array; returns (n_groups, d)."""
    counts = np.bincount(labels, minlength=n_groups).astype(np.float64)
    out = np.empty((n_groups, values.shape[1]), dtype=np.float64)
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(labels, weights=values[:, j], minlength=n_groups) / counts
    return out


def rescale_variance(protected: np.ndarray, original: np.ndarray) -> np.ndarray:
    """``003`` §5.2: (x - m1)·sqrt(mu2)/sqrt(m2) + mu1, column-wise.

    m1, m2 are the mean and variance of the protected column, mu1, mu2 of the original one.
    Records with equal protected values stay equal, so k-anonymity is kept. A protected column
    with zero variance (one group) is left as it is.
    """
    m1 = protected.mean(axis=0)
    m2 = protected.var(axis=0)
    mu1 = original.mean(axis=0)
    mu2 = original.var(axis=0)
    # A column of identical values is constant even though its computed variance may be ~1e-34
    # (its mean rounds); scaling by sqrt(mu2/m2) would then shift it by one standard deviation.
    varies = (m2 > 0) & (np.ptp(protected, axis=0) > 0) if len(protected) else m2 > 0
    scale = np.where(varies, np.sqrt(np.divide(mu2, m2, out=np.ones_like(m2), where=varies)), 1.0)
    out: np.ndarray = (protected - m1) * scale + mu1
    return out


def _group_apply(
    codes: np.ndarray, labels: np.ndarray, n_groups: int, n_cat: int, fn: Any
) -> np.ndarray:
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(n_groups + 1))
    out = np.empty(n_groups, dtype=np.int64)
    for g in range(n_groups):
        out[g] = fn(codes[order[bounds[g] : bounds[g + 1]]], n_cat)
    return out


def aggregate(
    dataset: Dataset, qi: QIMatrix, labels: np.ndarray, params: Mapping[str, Any]
) -> pd.DataFrame:
    """The protected table: identifiers removed, each quasi-identifier replaced by its group's
    aggregate, every other column the very same data, rows in the original order.
    """
    labels = np.asarray(labels, dtype=np.int64)
    n_groups = int(labels.max()) + 1 if len(labels) else 0
    frame = dataset.frame
    keep = [c for c in frame.columns if str(c) not in set(dataset.roles.identifiers)]
    out = frame.loc[:, keep].copy(deep=False)

    if qi.continuous_names:
        original = qi.continuous * qi.cont_std + qi.cont_mean
        means = group_means(original, labels, n_groups)[labels]
        if params.get("rescale_variance", False):
            means = rescale_variance(means, original)
        for j, col in enumerate(qi.continuous_names):
            out[col] = means[:, j]

    average = (
        convex_median
        if params.get("ordinal_average", "median") == "convex-median"
        else ordinal_median
    )
    for j, col in enumerate(qi.ordinal_names):
        order = qi.ordinal_orders[j]
        agg = _group_apply(qi.ordinal[:, j], labels, n_groups, len(order), average)
        out[col] = pd.Series(
            np.asarray(order, dtype=object)[agg[labels]], index=out.index, dtype=object
        )

    for j, col in enumerate(qi.nominal_names):
        cats = qi.nominal_categories[j]
        agg = _group_apply(qi.nominal[:, j], labels, n_groups, len(cats), mode)
        values = np.empty(len(cats), dtype=object)
        values[:] = list(cats)
        out[col] = pd.Series(values[agg[labels]], index=out.index, dtype=object)
    return out


def protected_continuous_z(protected: pd.DataFrame, qi: QIMatrix) -> np.ndarray:
    """The protected continuous quasi-identifiers on the original's z-scale (for SSE)."""
    if not qi.continuous_names:
        return np.empty((len(protected), 0))
    values = np.column_stack(
        [
            pd.to_numeric(protected[c], errors="coerce").to_numpy(dtype=np.float64)
            for c in qi.continuous_names
        ]
    )
    z: np.ndarray = (values - qi.cont_mean) / qi.cont_std
    return z
