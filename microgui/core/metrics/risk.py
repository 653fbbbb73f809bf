"""Disclosure-risk measures, all in percent: pure functions of original and protected values.

- **Distance-based record linkage** (Domingo-Ferrer & Torra 2001; Pagliuca & Seri 1999): every
  protected record is linked to its nearest original record (Euclidean distance on the
  quasi-identifiers standardized with the *original's* mean and standard deviation). The risk is
  the share of protected records linked to their own original. When t original records are
  equally near, the link is a draw among them and a correct one is credited 1/t. Nearest
  neighbours come from a ``scipy.spatial.cKDTree``; memory is O(n), never O(n²).
- **Interval disclosure**, rank-based (Domingo-Ferrer, Mateo-Sanz & Torra 2001, "Comparing SDC
  methods for microdata on the basis of information loss and disclosure risk"): each attribute is
  ranked on its original values; around each protected value x' an interval is drawn holding the
  values whose ranks lie within p % of n of the rank x' would take among the originals. The risk is
  the share of original values that fall inside the interval around their own protected value,
  averaged over attributes and over p = 1, 2, …, 10 %. (sdcMicro's ``dRisk`` uses instead
  intervals of ±k·sd around x', the SDID measure of Mateo-Sanz et al. 2004; we follow the rank
  definition the issue asks for.)
- **Re-identification risk from group sizes**: in the protected table, a record sharing its
  quasi-identifier combination with f − 1 others is re-identified with probability 1/f; we report
  the max and the mean over records, in percent. **Sample uniques**: records whose combination of
  categorical (ordinal and nominal) keys is unique in the table.
- **Entropy l-diversity** (Machanavajjhala et al. 2007): a group is entropy l-diverse when the
  entropy of its sensitive values is at least log l; the table's level is exp of the smallest
  group entropy (natural logarithm), minimum over the sensitive attributes.
- **Score** = w·IL + (1 − w)·DR; ``003`` §3.1 (Domingo-Ferrer & Torra 2001b) uses w = ½.

Probabilistic (Fellegi-Sunter) record linkage: :mod:`microgui.core.metrics.linkage`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from microgui.core.metrics.kanonymity import Missing, check_missing
from microgui.core.metrics.missing_match import frequencies_missing_any
from microgui.core.table.numbers import unique_rows

__all__ = [
    "INTERVAL_PERCENTS",
    "missing_patterns",
    "record_linkage",
    "squared_distances",
    "interval_disclosure",
    "reidentification_risk",
    "sample_uniques",
    "entropy_l_diversity",
    "score",
    "unique_rows",
]

#: The interval widths p of interval disclosure, in percent of the number of records.
INTERVAL_PERCENTS = tuple(range(1, 11))
# Neighbours fetched per query to count ties without a second tree search.
_TIE_PROBE = 4


def _matrix(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    return x.reshape(-1, 1) if x.ndim == 1 else x


def record_linkage(original: np.ndarray, protected: np.ndarray) -> float:
    """Percentage of protected records whose nearest original record is their own.

    Parameters
    ----------
    original, protected
        (n, d) float arrays on one common scale (e.g. z-scores with the original's mean and
        standard deviation), rows aligned: row i of ``protected`` is the release of row i.
        A missing (NaN) coordinate of a protected record - a suppressed key cell - matches any
        value, as in k-anonymity's rule (sdcMicro's): that record's distances are measured on
        its present coordinates only.

    Ties: if t originals are at the nearest distance and the right one is among them, 1/t.
    """
    x, y = _matrix(original), _matrix(protected)
    n = len(x)
    if n == 0:
        return 0.0
    # Microaggregated releases repeat rows: query each distinct protected point once (a missing
    # coordinate compared as +inf, so that rows blanked alike are one point).
    gaps = np.isnan(y)
    _key, first, inverse, _counts = unique_rows(np.where(gaps, np.inf, y) if gaps.any() else y)
    uniq = y[first]
    own = np.sqrt(np.nansum((x - y) ** 2, axis=1))
    # No original farther than a record's own is of interest: that bound prunes the search
    # (a point shared by several records takes the largest of their own distances).
    bound = np.zeros(len(uniq))
    np.maximum.at(bound, inverse, own)
    bound = bound * (1 + 1e-9) + 1e-12
    nearest = np.empty(len(uniq))
    ties = np.empty(len(uniq))
    for rows, present in missing_patterns(uniq):
        nearest[rows], ties[rows] = _nearest_and_ties(
            x[:, present], uniq[np.ix_(rows, present)], bound[rows]
        )
    tol = 1e-9 * np.maximum(nearest, 1.0)
    hit = own <= nearest[inverse] + tol[inverse]
    credit = np.where(hit, 1.0 / np.maximum(ties[inverse], 1.0), 0.0)
    return 100.0 * float(credit.sum()) / n


def missing_patterns(points: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of ``points`` grouped by which coordinates are missing (NaN): (rows, present
    columns) per pattern, the complete rows first. A suppression leaves few patterns (one per
    set of blanked keys), so a search per pattern on the present columns is exact and fast."""
    missing = np.isnan(points)
    if not missing.any():
        return [(np.arange(len(points)), np.arange(points.shape[1]))]
    patterns, _first, which, _counts = unique_rows(missing.astype(np.uint8))
    patterns = patterns.astype(bool)
    order = np.argsort(patterns.sum(axis=1), kind="stable")
    return [(np.flatnonzero(which == p), np.flatnonzero(~patterns[p])) for p in order]


#: Points searched by a scan of every original rather than a k-d tree (a pattern of blanks with
#: few records: building a tree per pattern cost more than the scan, 4 s of 8 on Adult's plan).
BRUTE_FORCE_POINTS = 256


def squared_distances(
    x: np.ndarray, points: np.ndarray, chunk: int = 64
) -> Iterator[tuple[slice, np.ndarray]]:
    """(rows, squared distances from those points to every original), a chunk of points at a
    time, by :func:`scipy.spatial.distance.cdist` (``sqeuclidean``: the differences squared
    and summed, exact to rounding, no cancellation as in |x|² − 2 x·p + |p|²)."""
    from scipy.spatial.distance import cdist  # here: scipy.spatial takes 0.3 s to import

    for start in range(0, len(points), chunk):
        p = points[start : start + chunk]
        yield slice(start, start + len(p)), cdist(p, x, "sqeuclidean")


def _nearest_and_ties(
    x: np.ndarray, points: np.ndarray, bound: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each point: the distance to its nearest original (within ``bound``, else inf) and
    how many originals lie at that distance."""
    m, n = len(points), len(x)
    if x.shape[1] == 0:  # every coordinate missing: every original is as near
        return np.zeros(m), np.full(m, float(n))
    if m <= BRUTE_FORCE_POINTS:  # a few points: a tree costs more than a scan
        nearest, ties = np.empty(m), np.empty(m)
        for rows, d2 in squared_distances(x, points):
            near = np.sqrt(d2.min(axis=1))
            tol = 1e-9 * np.maximum(near, 1.0)
            nearest[rows] = near
            ties[rows] = (d2 <= ((near + tol) ** 2)[:, None]).sum(axis=1)
        return nearest, ties
    from scipy.spatial import cKDTree  # here: scipy.spatial takes 0.3 s to import

    tree = cKDTree(x)
    k = min(_TIE_PROBE, n)
    dist = np.empty((m, k))
    # distance_upper_bound is a scalar: query points in slices of similar bounds
    order = np.argsort(bound)
    for chunk in np.array_split(order, max(1, len(order) // 2048)):
        d, _ = tree.query(points[chunk], k=k, distance_upper_bound=bound[chunk].max(), workers=-1)
        dist[chunk] = d.reshape(len(chunk), k)
    nearest = dist[:, 0]
    tol = 1e-9 * np.maximum(nearest, 1.0)
    ties = (dist <= (nearest + tol)[:, None]).sum(axis=1).astype(np.float64)
    # Only points with at least _TIE_PROBE equidistant originals need a full count.
    crowded = np.flatnonzero(ties >= k) if k < n else np.empty(0, dtype=np.int64)
    if len(crowded):
        ties[crowded] = tree.query_ball_point(
            points[crowded], nearest[crowded] + tol[crowded], return_length=True, workers=-1
        )
    return nearest, ties


def interval_disclosure(
    original: np.ndarray, protected: np.ndarray, percents: Sequence[float] = INTERVAL_PERCENTS
) -> float:
    """Rank-based interval disclosure in percent, averaged over ``percents`` and attributes.

    For attribute j with original values sorted o_(0) <= … <= o_(n−1), a protected value v takes
    ranks [a, b] among them (a = number of originals < v, b = number <= v, minus 1; b = a − 1 when
    v is not an original value). Its interval is [o_(max(0, a−w)), o_(min(n−1, b+w))] with
    w = ⌊p·n/100⌋ (empty when max(0, a−w) > min(n−1, b+w)); the original value x_ij is disclosed
    when it lies inside.
    """
    x, y = _matrix(original), _matrix(protected)
    n, p = x.shape
    if n == 0 or p == 0:
        return 0.0
    shares = []
    for j in range(p):
        srt = np.sort(x[:, j])
        a = np.searchsorted(srt, y[:, j], side="left")
        b = np.searchsorted(srt, y[:, j], side="right") - 1
        for pct in percents:
            w = int(pct * n // 100)
            lo_rank = np.maximum(a - w, 0)
            hi_rank = np.minimum(b + w, n - 1)
            # lo_rank > hi_rank: no original rank within w of v (an empty interval)
            lo = srt[np.minimum(lo_rank, n - 1)]
            hi = srt[np.maximum(hi_rank, 0)]
            inside = (lo_rank <= hi_rank) & (x[:, j] >= lo) & (x[:, j] <= hi)
            shares.append(float(np.mean(inside)))
    return 100.0 * float(np.mean(shares))


def _group_ids(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    if not columns:
        return np.zeros(len(frame), dtype=np.int64)
    out: np.ndarray = (
        frame.groupby(list(columns), dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
    )
    return out


def _key_frequencies(frame: pd.DataFrame, keys: Sequence[str], missing: Missing) -> np.ndarray:
    """How many records share each record's combination of ``keys`` (itself included), a blank
    counted by the ``missing`` rule (:mod:`~microgui.core.metrics.kanonymity`)."""
    if check_missing(missing) == "any":
        return frequencies_missing_any(frame, list(keys))
    ids = _group_ids(frame, keys)
    out: np.ndarray = np.bincount(ids)[ids]
    return out


def reidentification_risk(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], *, missing: Missing = "category"
) -> tuple[float, float]:
    """(max, mean) over records of 100/|records sharing its quasi-identifier values|.

    ``missing``: a blank value is one value of its own (``"category"``, the default) or matches
    any value (``"any"``, sdcMicro's ``freqCalc`` fk); see
    :mod:`~microgui.core.metrics.kanonymity`."""
    check_missing(missing)
    if len(frame) == 0:
        return 0.0, 0.0
    size = _key_frequencies(frame, quasi_identifiers, missing).astype(np.float64)
    risk = 100.0 / size
    return float(risk.max()), float(risk.mean())


def sample_uniques(
    frame: pd.DataFrame, keys: Sequence[str], *, missing: Missing = "category"
) -> int:
    """Number of records whose combination of ``keys`` values occurs once in ``frame``.

    ``missing``: a blank value is one value of its own (``"category"``, the default) or matches
    any value (``"any"``: sdcMicro's n1, the records with ``freqCalc`` fk = 1); see
    :mod:`~microgui.core.metrics.kanonymity`."""
    check_missing(missing)
    if len(frame) == 0 or not keys:
        return 0
    return int((_key_frequencies(frame, keys, missing) == 1).sum())


def entropy_l_diversity(
    frame: pd.DataFrame, grouping: Sequence[str] | np.ndarray, sensitive: str | Sequence[str]
) -> float:
    """Entropy l-diversity: exp(min over groups of the entropy of the sensitive values).

    ``grouping`` is the quasi-identifier columns (groups: identical combinations) or an int label
    per row. A missing value is one value. Minimum over the sensitive columns.
    """
    names = [sensitive] if isinstance(sensitive, str) else [str(c) for c in sensitive]
    if not names:
        raise ValueError("name at least one sensitive column")
    if len(frame) == 0:
        return 0.0
    if isinstance(grouping, np.ndarray):
        _, labels = np.unique(np.asarray(grouping).reshape(-1), return_inverse=True)
        labels = labels.reshape(-1).astype(np.int64)
    else:
        labels = _group_ids(frame, [str(c) for c in grouping])
    n_groups = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=n_groups).astype(np.float64)
    best = np.inf
    for col in names:
        codes, uniques = pd.factorize(frame[col].reset_index(drop=True), use_na_sentinel=False)
        m = max(len(uniques), 1)
        pair, counts = np.unique(labels * m + np.asarray(codes, dtype=np.int64), return_counts=True)
        g = pair // m
        prob = counts / sizes[g]
        entropy = -np.bincount(g, weights=prob * np.log(prob), minlength=n_groups)
        best = min(best, float(entropy[sizes > 0].min()))
    return float(np.exp(best))


def score(il: float, dr: float, w_il: float = 0.5) -> float:
    """Score = w_il·IL + (1 − w_il)·DR (``003`` §3.1 uses w_il = ½: (IL + DR)/2). Lower is better.

    IL and DR should be on one scale (both in percent).
    """
    if not 0.0 <= w_il <= 1.0:
        raise ValueError(f"w_il={w_il} must lie in [0, 1]")
    return w_il * float(il) + (1.0 - w_il) * float(dr)
