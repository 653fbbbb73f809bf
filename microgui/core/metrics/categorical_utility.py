"""Utility of a release for categorical and mixed data (issue 29): distributions, cross-tabulations
and associations, original vs released.

Statisticians check a release on the analyses it will serve (sdcMicro's before/after tabulations,
``../shared/design/release-workflow.md`` step 4): the frequency table of each attribute, two-way
tables, the associations between attributes. Every function here compares the original table
with its release, row i of the release being the protected version of row i of the original.

**Columns and kinds** (:func:`utility_columns`, :func:`column_is_numeric`): the
quasi-identifiers, then the confidential columns, in the order of the roles. A column is a number
when it is a continuous quasi-identifier, or a confidential column whose original cells are all
numbers; every other column (nominal and ordinal quasi-identifiers, text) is categories.

**Released values of a number column** (:func:`released_numbers`): a number is itself; a range
written ``[20, 30)``, ``[20-30]``, ``(20, 30]`` or ``20-30`` (a generalization, ``mstk``) is
the interval it names and ``*`` the original's whole range; anything else is "not a number".
For a distribution, the records of a range are spread evenly over the original's bins the
interval covers (the usual reading of grouped data: uniform within the interval); for an
association, a cross-tabulation or a model, a range stands for its midpoint.

**Released values of a categorical column**: a value the original holds is that category
(``3.0`` and ``"3"`` are the same category, as ordinal orders match them); any other value (a
generalization such as ``Married*``, a suppression mark) is counted in one extra category,
"other released value", which the original never holds, so a generalization shows as a change.

**Missing cells**: in a distribution (one column at a time) a missing cell is a category of its
own in both tables, so a suppression shows as a change. Associations and cross-tabulations use
listwise deletion, as :mod:`microgui.core.metrics.association`: a record with a missing cell in
any column compared, in either table, is left out of every figure, so both sides describe the
same records; ``dropped_rows`` counts them.

**Measures**:

- Hellinger distance H(p, q) = sqrt(1 − Σ sqrt(p_i q_i)) = ||√p − √q||₂/√2, in [0, 1]
  (Hellinger 1909; the scaling of Le Cam & Yang, *Asymptotics in Statistics*, 2000, §3.2), and
  total variation TV(p, q) = ½ Σ |p_i − q_i|, in [0, 1], on the relative frequencies.
- Cramér's V = sqrt(χ² / (n (min(r, c) − 1))) (Cramér 1946, *Mathematical Methods of
  Statistics*, §21.9), bias-**uncorrected** (not Bergsma's 2013 correction), computed by
  :func:`scipy.stats.contingency.association` (``method="cramer"``, no Yates correction) on the
  table without its empty rows and columns; a table with one row or one column has no V (NaN).
- The correlation ratio η = sqrt(SS_between / SS_total) of a number by a category (Pearson 1903;
  Kendall & Stuart, *The Advanced Theory of Statistics* vol. 2, §26.21), in [0, 1]; NaN when the
  number is constant.
- Pearson's r for two numbers (NaN when one is constant).

**Privacy**: categories are values of the data. The dataclasses keep their labels for the app to
show on screen; their ``summary()`` (what reports and JSON carry) holds only column names,
counts and measures, never a label.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats.contingency import association as _scipy_association

from microgui.core.errors import InvalidParameter
from microgui.core.io import json_number
from microgui.core.metrics.utility import numeric_values
from microgui.core.table.dataset import is_missing
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = [
    "OTHER_LABEL",
    "MISSING_LABEL",
    "MAX_BINS",
    "hellinger",
    "total_variation",
    "cramers_v",
    "correlation_ratio",
    "utility_columns",
    "column_is_numeric",
    "released_numbers",
    "category_keys",
    "Distribution",
    "distribution",
    "distributions",
    "Crosstab",
    "crosstab",
    "AssociationMatrix",
    "association_matrix",
    "utility_summary",
]

#: The label (screen only) of the extra category holding released values the original lacks.
OTHER_LABEL = "(other released value)"
#: The label (screen only) of the missing cells' category in a distribution.
MISSING_LABEL = "(missing)"
#: Most bins of a number column's histogram (Sturges' rule below that).
MAX_BINS = 30


# ---------------------------------------------------------------------------------------------
# distances and associations of arrays
def _proportions(counts: Sequence[float] | np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64).reshape(-1)
    if (c < 0).any() or not np.isfinite(c).all():
        raise InvalidParameter("frequencies must be finite and not negative")
    total = c.sum()
    return c / total if total > 0 else c


def hellinger(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray) -> float:
    """Hellinger distance of two frequency arrays (counts or proportions, same length):
    sqrt(1 − Σ sqrt(p_i q_i)) on the relative frequencies, in [0, 1]; NaN if one is empty."""
    a, b = _proportions(p), _proportions(q)
    if a.shape != b.shape:
        raise InvalidParameter("the two frequency arrays must have the same length")
    if a.sum() == 0 or b.sum() == 0:
        return math.nan
    bc = float(np.sqrt(a * b).sum())
    return math.sqrt(max(0.0, 1.0 - min(bc, 1.0)))


def total_variation(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray) -> float:
    """Total variation distance ½ Σ |p_i − q_i| of two frequency arrays (counts or
    proportions), in [0, 1]; NaN if one is empty."""
    a, b = _proportions(p), _proportions(q)
    if a.shape != b.shape:
        raise InvalidParameter("the two frequency arrays must have the same length")
    if a.sum() == 0 or b.sum() == 0:
        return math.nan
    return float(0.5 * np.abs(a - b).sum())


def _table_v(table: np.ndarray) -> float:
    """Cramér's V (bias-uncorrected) of a contingency table, empty rows/columns removed."""
    t = np.rint(np.asarray(table, dtype=np.float64)).astype(np.int64)  # scipy wants counts
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    if t.ndim != 2 or min(t.shape) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = float(_scipy_association(t, method="cramer", correction=False))
    return v if math.isfinite(v) else math.nan


def _codes_table(a: np.ndarray, b: np.ndarray, na: int, nb: int) -> np.ndarray:
    return np.bincount(a * nb + b, minlength=na * nb).reshape(na, nb)


def cramers_v(
    a: Sequence[object] | np.ndarray | pd.Series, b: Sequence[object] | np.ndarray | pd.Series
) -> float:
    """Cramér's V of two categorical arrays of the same length (bias-uncorrected; records with
    a missing value in either left out); NaN when either has fewer than two categories."""
    sa, sb = pd.Series(list(a), dtype=object), pd.Series(list(b), dtype=object)
    if len(sa) != len(sb):
        raise InvalidParameter("the two columns must have the same length")
    keep = ~(is_missing(sa) | is_missing(sb))
    ca, ua = pd.factorize(sa[keep])
    cb, ub = pd.factorize(sb[keep])
    if len(ca) == 0:
        return math.nan
    return _table_v(_codes_table(ca, cb, len(ua), len(ub)))


def correlation_ratio(categories: np.ndarray, values: np.ndarray) -> float:
    """The correlation ratio η = sqrt(SS_between / SS_total) of ``values`` (numbers) grouped by
    ``categories`` (integer codes ≥ 0); NaN when the values are constant or empty."""
    codes = np.asarray(categories, dtype=np.int64)
    x = _scaled(np.asarray(values, dtype=np.float64))
    if len(x) == 0:
        return math.nan
    mean = x.mean()
    sst = float(((x - mean) ** 2).sum())
    if not sst > 0:
        return math.nan
    n = np.bincount(codes).astype(np.float64)
    s = np.bincount(codes, weights=x)
    used = n > 0
    ssb = float((n[used] * (s[used] / n[used] - mean) ** 2).sum())
    return math.sqrt(min(1.0, max(0.0, ssb / sst)))


def _scaled(x: np.ndarray) -> np.ndarray:
    """``x`` over its largest absolute value: the same correlations, and sums of squares that
    cannot overflow (a released value near the float maximum, 1.7e308, squared would)."""
    top = float(np.max(np.abs(x))) if len(x) else 0.0
    return x / top if np.isfinite(top) and top > 0 else x


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    x, y = _scaled(x), _scaled(y)
    sx, sy = x.std(), y.std()
    if not (sx > 0 and sy > 0):
        return math.nan
    return float(np.clip(np.mean((x - x.mean()) * (y - y.mean())) / (sx * sy), -1.0, 1.0))


# ---------------------------------------------------------------------------------------------
# columns, categories and numbers of a release
def utility_columns(roles: RoleMap) -> list[str]:
    """The quasi-identifiers, then the confidential columns not already listed."""
    qis = list(roles.quasi_identifiers)
    return [*qis, *(c for c in roles.confidential if c not in qis)]


def column_is_numeric(frame: pd.DataFrame, roles: RoleMap, column: str) -> bool:
    """A continuous quasi-identifier, or another column whose original cells are all numbers
    (a confidential income); nominal and ordinal quasi-identifiers are categories."""
    if column in roles.quasi_identifiers:
        if roles[column].kind is not AttributeKind.CONTINUOUS:
            return False
    series = frame[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        # text: decide on the distinct values (a 30,000-row text column has a few dozen)
        series = pd.Series(pd.unique(series.dropna()), dtype=object)
    values = numeric_values(series)
    return values is not None and bool(np.isfinite(values).any())


def _value_key(value: object) -> str:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value).strip()


def _key_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(codes, keys): each cell's index into ``keys`` (the distinct texts cells are matched by:
    ``3.0`` → ``"3"``, spaces stripped), −1 where missing. Works on the distinct values only."""
    miss = is_missing(series)
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    keys: list[str] = []
    where: dict[str, int] = {}
    remap = np.empty(len(uniques) + 1, dtype=np.int64)
    for i, u in enumerate(uniques):
        remap[i] = where.setdefault(_value_key(u), len(where))
    keys = list(where)
    remap[len(uniques)] = -1
    out = remap[np.where(codes < 0, len(uniques), codes)]
    out[miss] = -1
    return out, keys


def category_keys(series: pd.Series) -> np.ndarray:
    """Each cell as the text it is matched by (``3.0`` → ``"3"``, spaces stripped), None where
    missing: an object array."""
    codes, keys = _key_codes(series)
    table = np.array([*keys, None], dtype=object)
    out: np.ndarray = table[np.where(codes < 0, len(keys), codes)]
    return out


def _sorted_categories(keys: Sequence[str], order: Sequence[str] | None = None) -> list[str]:
    """The categories found, in the ordinal ``order`` when one is given (those it does not list
    after, sorted), else numerically when all are numbers, else alphabetically."""
    found = set(keys)
    if order:
        ranked = list(dict.fromkeys(k for k in (_value_key(v) for v in order) if k in found))
        rest = found.difference(ranked)
        return ranked + (_sorted_categories(list(rest)) if rest else [])
    try:
        return sorted(found, key=lambda k: (float(k), k))
    except ValueError:
        return sorted(found)


def _category_codes(
    original: pd.Series, released: pd.Series, order: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(original codes, released codes, labels): codes index the original's sorted categories
    (in the ordinal ``order`` when given: an ordinal's bars follow its order, issue 30);
    a released value the original lacks has the code ``len(categories)`` (labels end with
    :data:`OTHER_LABEL` then); missing is −1."""
    oc, okeys = _key_codes(original)
    rc, rkeys = _key_codes(released)
    used = np.unique(oc[oc >= 0])
    cats = _sorted_categories([okeys[i] for i in used], order)
    index = {c: i for i, c in enumerate(cats)}
    other = len(cats)
    o_map = np.array([index.get(k, -1) for k in okeys] + [-1], dtype=np.int64)
    r_map = np.array([index.get(k, other) for k in rkeys] + [-1], dtype=np.int64)
    o = o_map[np.where(oc < 0, len(okeys), oc)]
    r = r_map[np.where(rc < 0, len(rkeys), rc)]
    labels = list(cats)
    if (r == other).any():
        labels.append(OTHER_LABEL)
    return o, r, labels


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^\s*[\[(]?\s*({_NUMBER})\s*(?:,|;|\.\.|–|-)\s*({_NUMBER})\s*[\])]?\s*$")


def _released_intervals(
    released: pd.Series, whole: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, missing) per released cell of a number column: a number x is [x, x], a range
    its interval, ``*`` the original's range ``whole``; NaN bounds where the cell is not a
    number (nor missing)."""
    n = len(released)
    miss = is_missing(released)
    direct = numeric_values(released)
    if direct is not None:
        return direct, direct.copy(), miss | ~np.isfinite(direct)
    low = np.full(n, np.nan)
    high = np.full(n, np.nan)
    codes, uniques = pd.factorize(released.astype(object), use_na_sentinel=True)
    lo_u = np.full(len(uniques), np.nan)
    hi_u = np.full(len(uniques), np.nan)
    for i, u in enumerate(uniques):
        text = _value_key(u)
        try:
            lo_u[i] = hi_u[i] = float(text)
            continue
        except ValueError:
            pass
        if text == "*":
            lo_u[i], hi_u[i] = whole
            continue
        m = _RANGE.match(text)
        if m:
            a, b = float(m.group(1)), float(m.group(2))
            lo_u[i], hi_u[i] = min(a, b), max(a, b)
    ok = codes >= 0
    low[ok], high[ok] = lo_u[codes[ok]], hi_u[codes[ok]]
    return low, high, miss


def released_numbers(original: pd.Series, released: pd.Series) -> np.ndarray:
    """A number column's released cells as numbers: numbers as they are, ranges (and ``*``,
    the original's range) by their midpoint, NaN where missing or not a number."""
    x = numeric_values(original)
    finite = x[np.isfinite(x)] if x is not None else np.zeros(0)
    whole = (float(finite.min()), float(finite.max())) if len(finite) else (math.nan, math.nan)
    low, high, miss = _released_intervals(released, whole)
    # halves added, not the sum halved: two finite ends near the float maximum do not overflow
    mid: np.ndarray = low / 2.0 + high / 2.0
    mid[miss] = np.nan
    return mid


# ---------------------------------------------------------------------------------------------
# distributions
@dataclass(frozen=True)
class Distribution:
    """One attribute's frequency table, original vs released.

    ``labels`` (screen only, never in a report) name the positions of ``original`` and
    ``released`` (counts; a released range spread over bins gives fractions); for a number
    column ``edges`` are the bin edges (the same before and after) and the labels the bins.
    The last positions may be :data:`MISSING_LABEL` and :data:`OTHER_LABEL`.
    """

    column: str
    numeric: bool
    labels: tuple[str, ...]
    original: np.ndarray
    released: np.ndarray
    hellinger: float
    total_variation: float
    edges: np.ndarray | None = None
    missing_original: int = 0
    missing_released: int = 0
    other_released: int = 0

    def summary(self) -> dict[str, Any]:
        """What a report may carry: the distances and counts, no category or bin label."""
        return {
            "kind": "bins" if self.numeric else "categories",
            "hellinger": json_number(self.hellinger),
            "total_variation": json_number(self.total_variation),
            "positions": len(self.labels),
            "missing_original": int(self.missing_original),
            "missing_released": int(self.missing_released),
            "other_released": int(self.other_released),
        }


def _bin_edges(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return np.array([0.0, 1.0])
    n_bins = min(MAX_BINS, max(1, math.ceil(math.log2(len(finite))) + 1))  # Sturges
    n_bins = min(n_bins, len(np.unique(finite)))
    return np.histogram_bin_edges(finite, bins=max(1, n_bins))


def _bin_label(lo: float, hi: float, last: bool) -> str:
    return f"[{lo:.4g}, {hi:.4g}{']' if last else ')'}"


def _spread(low: np.ndarray, high: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts per bin: points (low == high) in their bin, values beyond the edges in the end
    bins; an interval spread evenly over the part of it inside the edges."""
    nb = len(edges) - 1
    counts = np.zeros(nb)
    point = low == high
    idx = np.clip(np.searchsorted(edges, low[point], side="right") - 1, 0, nb - 1)
    counts += np.bincount(idx, minlength=nb)
    lo, hi = low[~point], high[~point]
    if len(lo):
        span = hi - lo
        for j in range(nb):
            a, b = edges[j], edges[j + 1]
            if j == 0:
                a = -np.inf
            if j == nb - 1:
                b = np.inf
            overlap = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0.0, None)
            counts[j] += float((overlap / span).sum())
    return counts


def distribution(
    original: pd.Series,
    released: pd.Series,
    numeric: bool,
    order: Sequence[str] | None = None,
) -> Distribution:
    """The frequency table of one attribute, original vs released (see the module docstring
    for bins, ranges, other values and missing cells); an ordinal's categories in ``order``."""
    if len(original) != len(released):
        raise InvalidParameter("the original and released columns must have the same length")
    name = str(original.name)
    if numeric:
        x = numeric_values(original)
        if x is None:
            raise InvalidParameter(f"column {name!r} is not numbers in the original table")
        o_miss = ~np.isfinite(x)
        edges = _bin_edges(x)
        nb = len(edges) - 1
        o_counts = np.bincount(
            np.clip(np.searchsorted(edges, x[~o_miss], side="right") - 1, 0, nb - 1),
            minlength=nb,
        ).astype(np.float64)
        whole = (float(edges[0]), float(edges[-1]))
        low, high, r_miss = _released_intervals(released, whole)
        bad = ~r_miss & ~(np.isfinite(low) & np.isfinite(high))
        good = ~r_miss & ~bad
        r_counts = _spread(low[good], high[good], edges)
        labels = [_bin_label(edges[j], edges[j + 1], j == nb - 1) for j in range(nb)]
        extra_o, extra_r = [], []
        if o_miss.any() or r_miss.any():
            labels.append(MISSING_LABEL)
            extra_o.append(float(o_miss.sum()))
            extra_r.append(float(r_miss.sum()))
        if bad.any():
            labels.append(OTHER_LABEL)
            extra_o.append(0.0)
            extra_r.append(float(bad.sum()))
        o_all = np.concatenate([o_counts, extra_o])
        r_all = np.concatenate([r_counts, extra_r])
        return Distribution(
            name,
            True,
            tuple(labels),
            o_all,
            r_all,
            hellinger(o_all, r_all),
            total_variation(o_all, r_all),
            edges,
            int(o_miss.sum()),
            int(r_miss.sum()),
            int(bad.sum()),
        )
    o, r, labels = _category_codes(original, released, order)
    return _category_distribution(name, o, r, labels)


def _category_distribution(
    name: str, o: np.ndarray, r: np.ndarray, labels: list[str]
) -> Distribution:
    """:func:`distribution` of a categorical column from its codes (see :func:`_category_codes`)."""
    size = len(labels)
    o_counts = np.bincount(o[o >= 0], minlength=size).astype(np.float64)
    r_counts = np.bincount(r[r >= 0], minlength=size).astype(np.float64)
    mo, mr = int((o < 0).sum()), int((r < 0).sum())
    if mo or mr:
        labels = [*labels, MISSING_LABEL]
        o_counts = np.append(o_counts, mo)
        r_counts = np.append(r_counts, mr)
    other = int((r == len([c for c in labels if c not in (OTHER_LABEL, MISSING_LABEL)])).sum())
    return Distribution(
        name,
        False,
        tuple(labels),
        o_counts,
        r_counts,
        hellinger(o_counts, r_counts),
        total_variation(o_counts, r_counts),
        None,
        mo,
        mr,
        other,
    )


def distributions(
    original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap
) -> dict[str, Distribution]:
    """:func:`distribution` of every column of :func:`utility_columns` present in both tables."""
    _check_rows(original, protected)
    return {
        c: distribution(
            original[c], protected[c], column_is_numeric(original, roles, c), _order(roles, c)
        )
        for c in utility_columns(roles)
        if c in original.columns and c in protected.columns
    }


def _check_rows(original: pd.DataFrame, protected: pd.DataFrame) -> None:
    if len(original) != len(protected):
        raise InvalidParameter(
            f"the original has {len(original):,} rows and the release {len(protected):,}; "
            "they must describe the same records"
        )


# ---------------------------------------------------------------------------------------------
# columns prepared for associations and cross-tabulations
@dataclass(frozen=True)
class _Prepared:
    """A column as numbers (``numeric``) or category codes, both sides, with a missing mask."""

    name: str
    numeric: bool
    original: np.ndarray
    released: np.ndarray
    missing: np.ndarray
    labels: tuple[str, ...] = ()


def _order(roles: RoleMap, column: str) -> tuple[str, ...] | None:
    """The ordinal order of ``column`` in ``roles`` (None: not ordinal, or no order given)."""
    if column not in roles or roles[column].kind != AttributeKind.ORDINAL:
        return None
    return roles[column].order


def _prepare(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    column: str,
    numeric: bool,
    order: Sequence[str] | None = None,
) -> _Prepared:
    if numeric:
        x = numeric_values(original[column])
        assert x is not None
        y = released_numbers(original[column], protected[column])
        miss = ~np.isfinite(x) | ~np.isfinite(y)
        return _Prepared(column, True, x, y, miss)
    o, r, labels = _category_codes(original[column], protected[column], order)
    return _Prepared(column, False, o, r, (o < 0) | (r < 0), tuple(labels))


def _binned(col: _Prepared) -> _Prepared:
    """A number column as the categories of its histogram bins (same edges both sides)."""
    if not col.numeric:
        return col
    keep = ~col.missing
    edges = _bin_edges(col.original[keep])
    nb = len(edges) - 1

    def code(v: np.ndarray) -> np.ndarray:
        out = np.clip(np.searchsorted(edges, np.nan_to_num(v), side="right") - 1, 0, nb - 1)
        return np.where(np.isfinite(v), out, -1).astype(np.int64)

    labels = tuple(_bin_label(edges[j], edges[j + 1], j == nb - 1) for j in range(nb))
    return _Prepared(col.name, False, code(col.original), code(col.released), col.missing, labels)


def _pair_measure(a: _Prepared, b: _Prepared, keep: np.ndarray, side: str) -> float:
    x = getattr(a, side)[keep]
    y = getattr(b, side)[keep]
    if a.numeric and b.numeric:
        return _pearson(x, y)
    if a.numeric:
        return correlation_ratio(y, x)
    if b.numeric:
        return correlation_ratio(x, y)
    na, nb = int(x.max(initial=-1)) + 1, int(y.max(initial=-1)) + 1
    if na == 0 or nb == 0:
        return math.nan
    return _table_v(_codes_table(x, y, na, nb))


def _measure_name(a: _Prepared, b: _Prepared) -> str:
    if a.numeric and b.numeric:
        return "pearson"
    if a.numeric or b.numeric:
        return "eta"
    return "cramers_v"


# ---------------------------------------------------------------------------------------------
# cross-tabulations
@dataclass(frozen=True)
class Crosstab:
    """The two-way table of ``a`` by ``b``, original vs released, on the records complete in
    both tables. ``row_labels``/``column_labels`` are for the screen only."""

    a: str
    b: str
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    original: np.ndarray
    released: np.ndarray
    cramers_v_original: float
    cramers_v_released: float
    n_records: int
    dropped_rows: int

    @property
    def cramers_v_change(self) -> float:
        return self.cramers_v_released - self.cramers_v_original

    @property
    def hellinger(self) -> float:
        return hellinger(self.original, self.released)

    @property
    def total_variation(self) -> float:
        return total_variation(self.original, self.released)

    def summary(self) -> dict[str, Any]:
        """Measures and the table's shape; no cell and no label."""
        return {
            "a": self.a,
            "b": self.b,
            "rows": len(self.row_labels),
            "columns": len(self.column_labels),
            "cramers_v_original": json_number(self.cramers_v_original),
            "cramers_v_released": json_number(self.cramers_v_released),
            "cramers_v_change": json_number(self.cramers_v_change),
            "hellinger": json_number(self.hellinger),
            "total_variation": json_number(self.total_variation),
            "n_records": int(self.n_records),
            "dropped_rows": int(self.dropped_rows),
        }


def crosstab(
    original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap, a: str, b: str
) -> Crosstab:
    """The cross-tabulation of ``a`` by ``b`` before and after, with Cramér's V of each (a
    number column enters by the bins of its histogram). Raises :class:`InvalidParameter` for an
    unknown column or a = b."""
    _check_rows(original, protected)
    for c in (a, b):
        if c not in original.columns or c not in protected.columns:
            raise InvalidParameter(f"there is no column {c!r} in both tables")
    if a == b:
        raise InvalidParameter(f"a cross-tabulation needs two different columns, not {a!r} twice")
    ca = _binned(
        _prepare(original, protected, a, column_is_numeric(original, roles, a), _order(roles, a))
    )
    cb = _binned(
        _prepare(original, protected, b, column_is_numeric(original, roles, b), _order(roles, b))
    )
    keep = ~(ca.missing | cb.missing)
    na, nb = len(ca.labels), len(cb.labels)
    to = _codes_table(ca.original[keep], cb.original[keep], na, nb)
    tr = _codes_table(ca.released[keep], cb.released[keep], na, nb)
    return Crosstab(
        a,
        b,
        ca.labels,
        cb.labels,
        to,
        tr,
        _table_v(to),
        _table_v(tr),
        int(keep.sum()),
        int((~keep).sum()),
    )


# ---------------------------------------------------------------------------------------------
# association matrix
@dataclass(frozen=True)
class AssociationMatrix:
    """Pairwise associations of ``columns``: Pearson's r (two numbers), Cramér's V (two
    categorical), η (mixed); ``original``, ``released`` and ``difference`` (released −
    original) are symmetric matrices (diagonal 1; NaN where undefined), ``measures[i][j]``
    names the measure of a pair."""

    columns: tuple[str, ...]
    numeric: tuple[bool, ...]
    original: np.ndarray
    released: np.ndarray
    measures: tuple[tuple[str, ...], ...]
    n_records: int
    dropped_rows: int

    @property
    def difference(self) -> np.ndarray:
        out: np.ndarray = self.released - self.original
        return out

    def _pairs(self) -> np.ndarray:
        p = len(self.columns)
        iu = np.triu_indices(p, 1)
        d: np.ndarray = np.abs(self.difference[iu])
        out: np.ndarray = d[np.isfinite(d)]
        return out

    @property
    def max_abs_difference(self) -> float | None:
        d = self._pairs()
        return float(d.max()) if len(d) else None

    @property
    def mean_abs_difference(self) -> float | None:
        d = self._pairs()
        return float(d.mean()) if len(d) else None

    def summary(self) -> dict[str, Any]:
        """Column names, kinds, each pair's measure before/after, and the summaries."""
        pairs = []
        for i in range(len(self.columns)):
            for j in range(i + 1, len(self.columns)):
                pairs.append(
                    {
                        "a": self.columns[i],
                        "b": self.columns[j],
                        "measure": self.measures[i][j],
                        "original": json_number(self.original[i, j]),
                        "released": json_number(self.released[i, j]),
                        "difference": json_number(self.difference[i, j]),
                    }
                )
        return {
            "columns": list(self.columns),
            "kinds": ["number" if n else "categories" for n in self.numeric],
            "max_abs_difference": json_number(self.max_abs_difference),
            "mean_abs_difference": json_number(self.mean_abs_difference),
            "n_records": int(self.n_records),
            "dropped_rows": int(self.dropped_rows),
            "pairs": pairs,
        }


def association_matrix(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    roles: RoleMap,
    columns: Sequence[str] | None = None,
) -> AssociationMatrix:
    """The associations of ``columns`` (default :func:`utility_columns`) before and after, on
    the records complete in every column in both tables (listwise deletion)."""
    _check_rows(original, protected)
    wanted = list(utility_columns(roles) if columns is None else columns)
    names = [c for c in dict.fromkeys(wanted) if c in original.columns and c in protected.columns]
    cols = [
        _prepare(original, protected, c, column_is_numeric(original, roles, c), _order(roles, c))
        for c in names
    ]
    return _matrix(cols, len(original))


def _matrix(cols: list[_Prepared], n: int) -> AssociationMatrix:
    names = [c.name for c in cols]
    keep = np.ones(n, dtype=bool)
    for c in cols:
        keep &= ~c.missing
    p = len(cols)
    mo, mr = np.eye(p), np.eye(p)
    kinds = [["" for _ in range(p)] for _ in range(p)]
    for i in range(p):
        for j in range(i + 1, p):
            mo[i, j] = mo[j, i] = _pair_measure(cols[i], cols[j], keep, "original")
            mr[i, j] = mr[j, i] = _pair_measure(cols[i], cols[j], keep, "released")
            kinds[i][j] = kinds[j][i] = _measure_name(cols[i], cols[j])
    return AssociationMatrix(
        tuple(names),
        tuple(c.numeric for c in cols),
        mo,
        mr,
        tuple(tuple(r) for r in kinds),
        int(keep.sum()),
        int((~keep).sum()),
    )


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UtilitySummary:
    """Distributions and the association matrix of a release: what ``evaluate`` computes by
    default."""

    distributions: dict[str, Distribution] = field(default_factory=dict)
    associations: AssociationMatrix | None = None

    def measures(self) -> dict[str, float | None]:
        """The flat measures registered in ``evaluate.MEASURES``."""
        hs = [d.hellinger for d in self.distributions.values() if math.isfinite(d.hellinger)]
        tv = [
            d.total_variation
            for d in self.distributions.values()
            if math.isfinite(d.total_variation)
        ]
        m = self.associations
        return {
            "hellinger_max": max(hs) if hs else None,
            "hellinger_mean": float(np.mean(hs)) if hs else None,
            "total_variation_max": max(tv) if tv else None,
            "association_change_max": None if m is None else m.max_abs_difference,
            "association_change_mean": None if m is None else m.mean_abs_difference,
        }


def utility_summary(
    original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap
) -> UtilitySummary:
    """:func:`distributions` and :func:`association_matrix` over :func:`utility_columns`."""
    _check_rows(original, protected)
    names = [c for c in utility_columns(roles) if c in original.columns and c in protected.columns]
    # each column read once: its codes serve its distribution and the association matrix
    prepared = {
        c: _prepare(original, protected, c, column_is_numeric(original, roles, c), _order(roles, c))
        for c in names
    }
    dists = {
        c: (
            distribution(original[c], protected[c], True)
            if col.numeric
            else _category_distribution(c, col.original, col.released, list(col.labels))
        )
        for c, col in prepared.items()
    }
    return UtilitySummary(dists, _matrix(list(prepared.values()), len(original)))


__all__ += ["UtilitySummary"]
