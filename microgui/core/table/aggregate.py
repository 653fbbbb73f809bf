"""The aggregation step of microaggregation: replace each group by its aggregate.

``003_309fe4adb430bc25.txt`` §5 ("Aggregation"): the arithmetic mean for continuous attributes
(§5.2, with the optional variance-preserving rescaling), the median or the convex median for
ordinal attributes (§5.3, Definitions 5.2 and 5.3) and the mode for nominal attributes (§5.4).

Ties, which the paper leaves open, are broken the same way everywhere: the median of an even
number of values is the *lower* of the two central categories (the smallest category whose
cumulative frequency reaches half the total); the mode is the smallest category code among the
most frequent (for nominal attributes, codes are the sorted order of the values).

**Categorical combinations** (issue 13, parameter ``categorical_aggregate``). Aggregating each
categorical attribute on its own (``independent``, ``003`` §5.3-5.4 as printed, and Torra 2004,
whom §5.4 follows) can release a combination of categories that no record of the group has: the
group {(high, green), (low, red)} gets the median ``low`` and the mode ``green``, and so publishes
(low, green). sdcMicro's categorical microaggregation has the same defect (sdcTools/sdcMicro issue
#245). ``joint`` (:func:`joint_categorical`) releases, for every group, a combination of
categories that one of its records has:

1. the per-attribute aggregate above when a record of the group has that very combination (so
   ``joint`` and ``independent`` differ only in the groups where ``independent`` invents one);
2. otherwise the group's *categorical medoid* (Kaufman & Rousseeuw 1990, *Finding Groups in
   Data*, ch. 2: the member minimising the total dissimilarity to the others), in the partition's
   own metric restricted to the categorical attributes (``003`` §5.3-5.4, as
   :mod:`microgui.core.methods.mdav` sums it): the combination c of one of the group's records
   minimising sum_records [sum_ordinal d_ORD(x, c)^2 + sum_nominal [x != c]], i.e. the
   categorical part of the group's SSE; ties go to the combination most records of the group
   have, then to the smallest category codes (ordinal rank, then sorted nominal value) read
   left to right, ordinal attributes first.

With one categorical attribute the median and the mode are always values of the group, and
``joint`` changes nothing; only the convex median (``003`` Definition 5.3), which may by design be
a category no record has, is then replaced by the medoid. Continuous attributes keep the mean.
The release stays k-anonymous: every record of a group gets the same combination.

**Default: joint**, because it costs little. Measured (issue 13) as ``information_loss_all_qi``
(100·SSE/SST over every quasi-identifier in the partition's metric,
:mod:`microgui.core.metrics.mixed_loss`), the share of categorical values changed, and the
groups ``independent`` invents (``invented_combinations``), independent -> joint::

    data (categorical QIs)          method        k   invented         IL all QIs %     changed %
    demo (education, region, sex)   mdav-generic  3     11 / 1333      2.870 -> 2.872   12.35 -> 12.36
                                    mdav-generic  5      9 / 800       4.999 -> 5.001   16.67 -> 16.68
                                    mdav-generic  10     3 / 400       8.873 -> 8.875   22.17 -> 22.17
                                    ama           5    190 / 800      47.180 -> 47.247  35.83 -> 35.95
                                    p-sensitive   5      6 / 800       4.933 -> 4.935   16.54 -> 16.54
                                    t-closeness   5     59 / 800      34.298 -> 34.336  25.66 -> 25.72
    Adult, age + 5 (education       mdav-generic  3     33 / 10054     0.708 -> 0.709    3.12 -> 3.12
      ordinal; sex, race, marital-  mdav-generic  5     48 / 6032      1.482 -> 1.488    4.63 -> 4.64
      status, workclass nominal)    mdav-generic  10    48 / 3016      3.322 -> 3.329    7.04 -> 7.07
                                    ama           5   1757 / 6032     63.413 -> 63.622  24.28 -> 24.47
                                    p-sensitive   5     61 / 6032     10.063 -> 10.069   9.08 -> 9.09
    Adult, age + 7 (+ native-       mdav-generic  3    455 / 10054     3.903 -> 3.946    5.12 -> 5.18
      country, occupation)          mdav-generic  5    367 / 6032      6.335 -> 6.411    7.36 -> 7.43
                                    mdav-generic  10   268 / 3016     10.316 -> 10.427  10.46 -> 10.56
    EIA, 8 continuous + STATE       mdav-generic  3      4 / 1364      0.809 -> 0.810   24.29 -> 24.29
      (nominal), MONTH (ordinal)    mdav-generic  5     21 / 818       2.422 -> 2.426   32.05 -> 32.14
                                    mdav-generic  10    15 / 409       4.950 -> 4.954   40.96 -> 40.97
                                    ama           5    208 / 818      12.605 -> 12.691  53.42 -> 53.51

(seed 1; t-closeness t = 0.2 t-first, p-sensitive p = 2 on the demo's health_score and Adult's
salary-class). IL grows by at most 0.21 points (AMA on Adult) and by at most 1.2 % of its value
(Adult with 7 categorical attributes), the changed share by at most 0.19 points. Two
alternatives were measured (k = 5) and not taken: the medoid in *every* group loses up to 0.01
points less IL but changes more categorical values (demo 17.85 %, Adult with 7: 7.78 %), since
it also replaces ``003``'s median where that is a real combination; the joint mode (the most
frequent combination) loses more (demo 5.122 %, Adult with 7: 6.613 %).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.table.dataset import Dataset, QIMatrix, survey_weights
from microgui.core.table.numbers import unique_rows

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
    "CATEGORICAL_AGGREGATES",
    "DEFAULT_CATEGORICAL_AGGREGATE",
    "joint_categorical",
]

#: Values of the ``categorical_aggregate`` parameter (see the module docstring).
CATEGORICAL_AGGREGATES: Final = ("joint", "independent")
#: Its default: ``joint`` (the measured cost is in the module docstring).
DEFAULT_CATEGORICAL_AGGREGATE: Final = "joint"


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


def weighted_group_means(
    values: np.ndarray, weights: np.ndarray, labels: np.ndarray, n_groups: int
) -> np.ndarray:
    """Per-group survey-weighted column means Σ w·x / Σ w of a (n, d) array (issue 18: as
    sdcMicro's ``microaggregation(weights=)`` with ``measure="mean"``, ``stats::weighted.mean``
    per group and column); returns (n_groups, d). Every weight is > 0
    (:func:`~microgui.core.table.dataset.survey_weights`), so no group's sum is 0."""
    # each group's weights divided by its largest: Σ w·x cannot overflow (weights of 1e300)
    # nor a group's Σ w underflow to 0 (weights of 1e-300 beside others of 1e300)
    largest = np.zeros(n_groups, dtype=np.float64)
    np.maximum.at(largest, labels, weights)
    scaled = weights / largest[labels]
    totals = np.bincount(labels, weights=scaled, minlength=n_groups)
    out = np.empty((n_groups, values.shape[1]), dtype=np.float64)
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(labels, weights=values[:, j] * scaled, minlength=n_groups) / totals
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


def joint_categorical(
    codes: np.ndarray,
    independent: np.ndarray,
    labels: np.ndarray,
    ordinal_sizes: Sequence[int | None],
) -> np.ndarray:
    """The released categorical combination of every group under ``categorical_aggregate=joint``.

    Parameters
    ----------
    codes
        (n, c) int codes of the records' categorical quasi-identifiers: ordinal ranks
        0..size-1, nominal codes >= 0.
    independent
        (g, c) the per-attribute aggregates of each group (``003`` §5.3-5.4).
    labels
        (n,) group of each record, 0..g-1.
    ordinal_sizes
        Per column, the number of categories |D(V)| of an ordinal attribute, None for a
        nominal one.

    Returns
    -------
    np.ndarray
        (g, c): ``independent[g]`` when a record of group g has that combination, else the
        group's categorical medoid (module docstring), a combination one of its records has.
    """
    codes = np.asarray(codes, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    out = np.array(independent, dtype=np.int64, copy=True)
    n_groups = out.shape[0]
    if codes.shape[1] == 0 or len(labels) == 0:
        return out
    present = (codes == out[labels]).all(axis=1)
    covered = np.bincount(labels, weights=present, minlength=n_groups) > 0
    rows = np.flatnonzero(~covered[labels])
    if not len(rows):
        return out
    # Only the groups without their per-attribute combination: re-number them 0..m-1.
    groups, lab = np.unique(labels[rows], return_inverse=True)
    lab = lab.reshape(-1)
    sub = codes[rows]
    m = len(groups)
    size = np.bincount(lab, minlength=m)
    # cost[i]: the group's sum of squared categorical distances to record i's combination
    # (the group's categorical SSE if that combination were released), from per-group sums,
    # in units of 1/scale (scale = lcm of the d_ORD denominators |D(V)|^2) so that equal costs
    # are equal numbers; a float sum could split a tie in its last bit.
    sizes = [int(d) for d in ordinal_sizes if d is not None]
    scale = math.lcm(*(d * d for d in sizes)) if sizes else 1
    exact = len(ordinal_sizes) * len(rows) * scale < 2**62  # bounds every cost below
    cost = np.zeros(len(rows), dtype=np.int64 if exact else np.float64)
    for j, d in enumerate(ordinal_sizes):
        v = sub[:, j]
        if d is not None:
            s1 = np.bincount(lab, weights=v, minlength=m)[lab]
            s2 = np.bincount(lab, weights=v * v, minlength=m)[lab]
            # sum_x (x - v)^2 in integers: ranks are small, the float sums exact
            num = np.rint(s2 - 2.0 * v * s1).astype(np.int64) + v * v * size[lab]
            cost += num * (scale // (int(d) * int(d))) if exact else num / float(int(d) ** 2)
        else:
            _, inv, counts = np.unique(
                lab * (int(v.max()) + 1) + v, return_inverse=True, return_counts=True
            )
            mismatches = size[lab] - counts[inv.reshape(-1)]
            cost += mismatches * scale if exact else mismatches
    if not exact:
        cost = np.round(cost, 9)
    # Lexicographic order of codes, as np.unique(axis=0) numbers them (lexsort: no GIL held).
    _, _, combo, _ = unique_rows(sub)
    _, pair, freq = np.unique(
        lab * (int(combo.max()) + 1) + combo, return_inverse=True, return_counts=True
    )
    order = np.lexsort((combo, -freq[pair.reshape(-1)], cost, lab))
    first = order[np.r_[True, lab[order][1:] != lab[order][:-1]]]
    out[groups[lab[first]]] = sub[first]
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
    removed = set(dataset.roles.identifiers)  # once: per column it was quadratic (issue 27)
    keep = [c for c in frame.columns if str(c) not in removed]
    out = frame.loc[:, keep].copy(deep=False)

    if qi.continuous_names:
        # the values as read when known: undoing the z-scores adds float noise
        original = (
            qi.cont_values
            if qi.cont_values is not None
            else qi.continuous * qi.cont_std + qi.cont_mean
        )
        if params.get("weighted_means", False):
            column = dataset.roles.weight
            if column is None:
                raise InvalidParameter(
                    "weighted_means=yes needs a survey weight column: tag one with the role "
                    "weight (--weight COL), or drop the parameter"
                )
            weights, _what = survey_weights(frame, column)
            by_group = weighted_group_means(original, weights, labels, n_groups)
        else:
            by_group = group_means(original, labels, n_groups)
        if params.get("rescale_variance", False):
            means = rescale_variance(by_group[labels], original)
            for j, col in enumerate(qi.continuous_names):
                out[col] = means[:, j]
        else:  # column by column: no (n, d) temporary (issue 33)
            for j, col in enumerate(qi.continuous_names):
                out[col] = by_group[labels, j]

    average = (
        convex_median
        if params.get("ordinal_average", "median") == "convex-median"
        else ordinal_median
    )
    # (g, c) per-attribute aggregates (003 §5.3-5.4), ordinal columns first, then nominal
    n_cat = len(qi.ordinal_names) + len(qi.nominal_names)
    agg = np.empty((n_groups, n_cat), dtype=np.int64)
    for j, order in enumerate(qi.ordinal_orders):
        agg[:, j] = _group_apply(qi.ordinal[:, j], labels, n_groups, len(order), average)
    for j, cats in enumerate(qi.nominal_categories):
        agg[:, len(qi.ordinal_names) + j] = _group_apply(
            qi.nominal[:, j], labels, n_groups, len(cats), mode
        )
    how = params.get("categorical_aggregate", DEFAULT_CATEGORICAL_AGGREGATE)
    if how not in CATEGORICAL_AGGREGATES:
        raise ValueError(
            f"categorical_aggregate={how!r} must be one of {', '.join(CATEGORICAL_AGGREGATES)}"
        )
    if how == "joint" and n_cat and len(labels):
        agg = joint_categorical(
            np.hstack([qi.ordinal, qi.nominal]),
            agg,
            labels,
            [len(o) for o in qi.ordinal_orders] + [None] * len(qi.nominal_names),
        )

    for j, col in enumerate(qi.ordinal_names):
        order = qi.ordinal_orders[j]
        out[col] = pd.Series(
            np.asarray(order, dtype=object)[agg[labels, j]], index=out.index, dtype=object
        )

    for j, col in enumerate(qi.nominal_names):
        cats = qi.nominal_categories[j]
        values = np.empty(len(cats), dtype=object)
        values[:] = list(cats)
        out[col] = pd.Series(
            values[agg[labels, len(qi.ordinal_names) + j]], index=out.index, dtype=object
        )
    return out


def protected_continuous_z(protected: pd.DataFrame, qi: QIMatrix) -> np.ndarray:
    """The protected continuous quasi-identifiers on the original's z-scale (for SSE)."""
    if not qi.continuous_names:
        return np.empty((len(protected), 0))
    # column by column into the one result: the same (value - mean) / std per cell as on the
    # stacked matrix, without its stacked copy and temporary (three n x d arrays at once were
    # the 1,000,000-record command's peak, issue 33)
    z = np.empty((len(protected), len(qi.continuous_names)), dtype=np.float64)
    for j, c in enumerate(qi.continuous_names):
        column = pd.to_numeric(protected[c], errors="coerce").to_numpy(dtype=np.float64)
        np.subtract(column, qi.cont_mean[j], out=z[:, j])
        z[:, j] /= qi.cont_std[j]
    return z
