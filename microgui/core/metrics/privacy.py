"""Attribute-disclosure measures: p-sensitivity, distinct l-diversity and t-closeness.

Pure functions of a table (or of value arrays) and a grouping. A *grouping* is given either as
an int array of group labels, one per row, or as the names of the quasi-identifier columns, in
which case the groups are the sets of rows sharing one combination of quasi-identifier values
(the equivalence classes of the released table, as :func:`~microgui.core.metrics.k_anonymity_level`
counts them: values compared exactly as they appear). A blank (missing) quasi-identifier value is
one value of its own by default (``missing="category"``); with ``missing="any"`` it matches any
value (sdcMicro's ``freqCalc`` rule, :mod:`~microgui.core.metrics.kanonymity`): the class of a key
combination *c* then holds every record compatible with *c* (equal on the keys present in both),
classes overlap, and a measure is the extreme over the table's distinct combinations (the classes
of :func:`~microgui.core.metrics.disclosure.attribute_disclosure` after a local suppression). The
rule applies to a grouping given as column names; labels are groups as given. A missing
*confidential* value is one value of the attribute under both rules.

- **p-sensitivity** (Truta & Vinay 2006; ``002_f464918b99c38812.txt`` §4.11): the smallest number
  of distinct values of a confidential attribute within one group, minimum over the confidential
  attributes. A table is p-sensitive k-anonymous when this is >= p and its k-anonymity is >= k.
- **distinct l-diversity** (Machanavajjhala et al. 2007): the smallest number of distinct values
  of the sensitive attribute within one group; for several columns, of their value *combinations*.
  With one sensitive attribute it equals the p-sensitivity.
- **t-closeness** (Li, Li & Venkatasubramanian, ICDE 2007; ``002`` §4.16): the largest Earth
  Mover's Distance (EMD) between the distribution of a confidential attribute within a group and
  its distribution in the whole table, over groups and confidential attributes.

EMD, as defined by Li et al. (2007) §4.2:

- *ordered distance* (numerical and ordinal attributes): the m distinct values of the whole table,
  in order, are v_1 < ... < v_m, the distance between v_i and v_j is |i - j| / (m - 1), and
  EMD(P, Q) = (1 / (m - 1)) Σ_{i=1}^{m} |Σ_{j<=i} (p_j - q_j)|. Ranks are those of the values
  *present in the whole table* (an ordinal category absent from the table is not counted in m).
  With m = 1 every group has the table's distribution: EMD = 0.
- *equal distance* (nominal attributes): every two different values are at distance 1, and
  EMD(P, Q) = ½ Σ_i |p_i - q_i| (the total variation distance).

Li et al.'s Example 3 (9 salaries 3k..11k, ``shared/data/arx-small/test2.csv``): the group
{3k, 4k, 5k} has EMD 0.375 and {6k, 8k, 11k} 0.1667, the values the tests check.

**Computation.** Per-group EMDs are computed for all groups at once in O(n log n) time without an
(groups x values) matrix. For the ordered distance, a group's cumulative distribution P is a step
function with one step per record of the group, and the table's Q is non-decreasing; over a run
of ranks where P is constant, Σ |c - Q(i)| splits at the first rank where Q reaches c and is two
differences of prefix sums of Q. For the equal distance, ½ Σ_i |p_i - q_i| =
½ (1 + Σ_{i in group} (|p_i - q_i| - q_i)), a sum over the values the group holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from microgui.core.metrics.kanonymity import Missing, check_missing
from microgui.core.metrics.missing_match import compatible_value_counts, distinct_rows, key_codes
from microgui.core.table.column_types import column_type, json_cell
from microgui.core.table.roles import AttributeKind, ColumnSpec

__all__ = [
    "Grouping",
    "KindLike",
    "rank_codes",
    "nominal_codes",
    "attribute_codes",
    "ordered_tables",
    "emd_ordered",
    "emd_equal",
    "emd_by_group",
    "distinct_by_group",
    "p_sensitivity",
    "p_sensitivity_by_attribute",
    "distinct_l_diversity",
    "t_closeness",
    "t_closeness_by_attribute",
    "sparse_emd",
]

#: A grouping: labels (one int per row, as a numpy array or pandas Series) or the names of
#: the quasi-identifier columns whose value combinations form the groups.
Grouping: TypeAlias = npt.NDArray[np.integer[Any]] | pd.Series | Sequence[str]

#: The kind of a confidential attribute: an :class:`AttributeKind`, its value ("continuous",
#: "ordinal", "nominal") or a :class:`ColumnSpec` (which also carries an ordinal's order).
KindLike: TypeAlias = AttributeKind | str | ColumnSpec


# --------------------------------------------------------------------------------------------
# values -> codes
# --------------------------------------------------------------------------------------------


def _as_numbers(values: pd.Series) -> pd.Series | None:
    """The values as float64 when every non-missing one is a number, else None."""
    if pd.api.types.is_bool_dtype(values):
        return values.astype(np.float64)
    if column_type(values) in ("binary", "nested", "complex", "interval"):
        return None  # no numbers to rank (and bytes may be no text)
    if pd.api.types.is_numeric_dtype(values):
        return values.astype(np.float64)
    text = values.astype("string").str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    if bool((numbers.isna() & text.notna()).any()):
        return None
    return numbers.astype(np.float64)


def _key(value: object) -> str:
    # How a value is matched against a declared ordinal order (3.0 is written 3, as in dataset).
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def rank_codes(
    values: npt.ArrayLike | pd.Series, order: Sequence[str] | None = None
) -> tuple[np.ndarray, int]:
    """Ranks 0..m-1 of ``values`` in the ordered domain of the values present, and m.

    Parameters
    ----------
    values
        The attribute's values (numbers, or text holding numbers, or ordinal categories).
    order
        An ordinal attribute's categories, lowest first. None: numeric order when every value is
        a number, else text order.

    Returns
    -------
    tuple
        (int64 rank per value, number m of distinct values present). Equal values share a rank;
        ranks are consecutive (categories of ``order`` absent from ``values`` take none).

    Raises
    ------
    ValueError
        On a missing value, or a value absent from ``order``.
    """
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    series = series.reset_index(drop=True)
    if bool(series.isna().any()):
        raise ValueError("an ordered attribute may not contain missing values")
    if order is not None:
        position = {str(v): i for i, v in enumerate(order)}
        keys = series.map(_key)
        pos = keys.map(position)
        if bool(pos.isna().any()):
            bad = keys[pos.isna()].iloc[0]
            raise ValueError(f"value {bad!r} is not in the declared order {' < '.join(order)}")
        raw = pos.to_numpy(dtype=np.int64)
    else:
        numbers = _as_numbers(series)
        if numbers is not None:
            raw_f = numbers.to_numpy(dtype=np.float64) + 0.0  # -0.0 and 0.0 are one value
            _, codes = np.unique(raw_f, return_inverse=True)
            return codes.astype(np.int64).reshape(-1), int(codes.max()) + 1 if len(codes) else 0
        raw_t = series.astype("string").str.strip().to_numpy(dtype=object)
        _, codes = np.unique(raw_t.astype(str), return_inverse=True)
        return codes.astype(np.int64).reshape(-1), int(codes.max()) + 1 if len(codes) else 0
    _, codes = np.unique(raw, return_inverse=True)
    return codes.astype(np.int64).reshape(-1), int(codes.max()) + 1 if len(codes) else 0


def nominal_codes(values: npt.ArrayLike | pd.Series) -> tuple[np.ndarray, int]:
    """Codes 0..m-1 of the distinct values (a missing value is one value), and m."""
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    series = series.reset_index(drop=True)
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=False)
    except (TypeError, NotImplementedError):  # lists, structs, maps: compared as JSON text
        texts = series.map(json_cell, na_action="ignore")
        codes, uniques = pd.factorize(texts, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), len(uniques)


def ordered_tables(codes: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The table's cumulative distribution Q(i) (i = 0..m-1) and its prefix sums SQ (m+1).

    SQ[i] = Σ_{j<i} Q(j). These are what an ordered EMD needs of the whole table.
    """
    counts = np.bincount(codes, minlength=m).astype(np.float64)
    q = np.cumsum(counts) / max(len(codes), 1)
    sq = np.concatenate([[0.0], np.cumsum(q)])
    return q, sq


# --------------------------------------------------------------------------------------------
# EMD
# --------------------------------------------------------------------------------------------


def _ordered_emd_sums(codes: np.ndarray, labels: np.ndarray, n_groups: int, m: int) -> np.ndarray:
    """Σ_{i=0}^{m-2} |P_g(i) - Q(i)| for every group g (see the module docstring)."""
    q, sq = ordered_tables(codes, m)
    order = np.lexsort((codes, labels))
    lab = labels[order]
    rank = codes[order]
    sizes = np.bincount(labels, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # Position j (1-based) of each record in its group's sorted ranks: P = j / s on [rank, next).
    j = np.arange(len(order)) - starts[lab] + 1
    c = j / sizes[lab]
    last = m - 1  # the sum runs over ranks 0..m-2: beyond that P = Q = 1
    nxt = np.empty_like(rank)
    nxt[:-1] = rank[1:]
    if len(rank):
        nxt[-1] = last
    is_end = np.ones(len(rank), dtype=bool)
    is_end[:-1] = lab[1:] != lab[:-1]
    nxt[is_end] = last
    a = np.minimum(rank, last)
    b = np.minimum(nxt, last)
    split = np.clip(np.searchsorted(q, c, side="left"), a, b)
    part = c * (split - a) - (sq[split] - sq[a]) + (sq[b] - sq[split]) - c * (b - split)
    total = np.bincount(lab, weights=part, minlength=n_groups)
    # Ranks below the group's smallest value: P = 0, so Σ Q(i) for i < first rank.
    first = rank[starts[sizes > 0]]
    head = np.zeros(n_groups)
    head[sizes > 0] = sq[np.minimum(first, last)]
    out: np.ndarray = total + head
    return out


def _equal_emd(codes: np.ndarray, labels: np.ndarray, n_groups: int, m: int) -> np.ndarray:
    q = np.bincount(codes, minlength=m) / max(len(codes), 1)
    sizes = np.bincount(labels, minlength=n_groups)
    pair = labels.astype(np.int64) * m + codes
    uniq, counts = np.unique(pair, return_counts=True)
    g = uniq // m
    v = uniq % m
    p = counts / sizes[g]
    part = np.abs(p - q[v]) - q[v]
    out: np.ndarray = 0.5 * (1.0 + np.bincount(g, weights=part, minlength=n_groups))
    out[sizes == 0] = 0.0
    clipped: np.ndarray = np.maximum(out, 0.0)
    return clipped


def emd_by_group(
    codes: npt.ArrayLike, labels: npt.ArrayLike, n_values: int, *, ordered: bool
) -> np.ndarray:
    """EMD of every group's distribution to the whole table's, for one attribute.

    Parameters
    ----------
    codes
        int code per record: ranks 0..m-1 (:func:`rank_codes`) for ``ordered=True``, value codes
        (:func:`nominal_codes`) otherwise. The whole table is the records given.
    labels
        int group label per record, 0..g-1.
    n_values
        m, the number of distinct values (codes are < m).
    ordered
        Ordered distance (numerical, ordinal) or equal distance (nominal).

    Returns
    -------
    numpy.ndarray
        float64 EMD per group label (0 for a label with no record).
    """
    c = np.asarray(codes, dtype=np.int64).reshape(-1)
    lab = np.asarray(labels, dtype=np.int64).reshape(-1)
    if c.shape != lab.shape:
        raise ValueError("codes and labels need one entry per record")
    n_groups = int(lab.max()) + 1 if len(lab) else 0
    if n_groups == 0:
        return np.zeros(0)
    if ordered:
        if n_values <= 1:
            return np.zeros(n_groups)
        # Rounding of the prefix sums can leave -1e-17 where the distributions are equal.
        return np.maximum(_ordered_emd_sums(c, lab, n_groups, n_values) / (n_values - 1), 0.0)
    return _equal_emd(c, lab, n_groups, n_values)


def emd_ordered(
    group_values: npt.ArrayLike | pd.Series,
    all_values: npt.ArrayLike | pd.Series,
    order: Sequence[str] | None = None,
) -> float:
    """Ordered-distance EMD (Li et al. 2007) of a group's values to the whole table's.

    ``group_values`` must be values of ``all_values`` (the whole table, group included); ranks
    are those of the distinct values of ``all_values`` (``order``: an ordinal's categories,
    lowest first; None: numeric, else text order).

    >>> round(emd_ordered([3, 4, 5], [3, 4, 5, 6, 7, 8, 9, 10, 11]), 4)
    0.375
    """
    group = pd.Series(group_values).reset_index(drop=True)
    table = pd.Series(all_values).reset_index(drop=True)
    if len(group) == 0:
        raise ValueError("the group is empty")
    codes, m = rank_codes(pd.concat([table, group], ignore_index=True), order)
    table_codes, group_codes = codes[: len(table)], codes[len(table) :]
    if not np.isin(group_codes, table_codes).all():
        raise ValueError("the group holds a value that is not in the whole table")
    # Re-rank on the table's own values (the group adds none), then measure the group alone.
    present, table_codes = np.unique(table_codes, return_inverse=True)
    group_codes = np.searchsorted(present, group_codes)
    m = len(present)
    if m <= 1:
        return 0.0
    q, _ = ordered_tables(table_codes, m)
    p = np.cumsum(np.bincount(group_codes, minlength=m)) / len(group_codes)
    return float(np.abs(p - q)[:-1].sum() / (m - 1))


def emd_equal(
    group_values: npt.ArrayLike | pd.Series, all_values: npt.ArrayLike | pd.Series
) -> float:
    """Equal-distance EMD, ½ Σ |p_i - q_i|, of a group's values to the whole table's.

    >>> emd_equal(["a", "a"], ["a", "a", "b", "b"])
    0.5
    """
    group = pd.Series(group_values).reset_index(drop=True)
    table = pd.Series(all_values).reset_index(drop=True)
    if len(group) == 0:
        raise ValueError("the group is empty")
    codes, m = nominal_codes(pd.concat([table, group], ignore_index=True))
    table_codes, group_codes = codes[: len(table)], codes[len(table) :]
    if not np.isin(group_codes, table_codes).all():
        raise ValueError("the group holds a value that is not in the whole table")
    p = np.bincount(group_codes, minlength=m) / len(group_codes)
    q = np.bincount(table_codes, minlength=m) / len(table_codes)
    return float(0.5 * np.abs(p - q).sum())


# --------------------------------------------------------------------------------------------
# table-level measures
# --------------------------------------------------------------------------------------------


def _labels(frame: pd.DataFrame, grouping: Grouping) -> np.ndarray:
    if isinstance(grouping, (np.ndarray, pd.Series)):
        labels = np.asarray(grouping, dtype=np.int64).reshape(-1)
        if len(labels) != len(frame):
            raise ValueError(f"{len(labels)} labels for a table of {len(frame)} rows")
        _, inverse = np.unique(labels, return_inverse=True)
        return np.asarray(inverse, dtype=np.int64).reshape(-1)
    qis = [str(c) for c in grouping]
    if not qis:
        return np.zeros(len(frame), dtype=np.int64)
    groups = frame.groupby(qis, dropna=False, sort=False).ngroup()
    out: np.ndarray = groups.to_numpy(dtype=np.int64)
    return out


def _wildcard_classes(
    frame: pd.DataFrame, grouping: Grouping, missing: Missing
) -> tuple[np.ndarray, np.ndarray] | None:
    """(distinct key combinations, each row's combination) when ``missing="any"`` changes the
    classes (column names given and a blank key cell present); None: the partition of
    :func:`_labels` is the grouping."""
    if check_missing(missing) == "category" or isinstance(grouping, (np.ndarray, pd.Series)):
        return None
    qis = [str(c) for c in grouping]
    if not qis or len(frame) == 0:
        return None
    codes = key_codes(frame, qis)
    if not bool((codes < 0).any()):
        return None
    combos, entry, _counts = distinct_rows(codes)
    return combos, entry


def _wildcard_distinct(classes: tuple[np.ndarray, np.ndarray], codes: np.ndarray) -> np.ndarray:
    """Distinct values of ``codes`` (>= 0) in the class of each distinct key combination."""
    combos, entry = classes
    combo, _value, _count = compatible_value_counts(combos, entry, np.asarray(codes, np.int64))
    return np.bincount(combo, minlength=len(combos))


def _names(columns: str | Sequence[str]) -> list[str]:
    return [columns] if isinstance(columns, str) else [str(c) for c in columns]


def distinct_by_group(codes: npt.ArrayLike, labels: npt.ArrayLike) -> np.ndarray:
    """Number of distinct codes in every group (index = group label)."""
    c = np.asarray(codes, dtype=np.int64).reshape(-1)
    lab = np.asarray(labels, dtype=np.int64).reshape(-1)
    n_groups = int(lab.max()) + 1 if len(lab) else 0
    m = int(c.max()) + 1 if len(c) else 1
    pairs = np.unique(lab * m + c)
    return np.bincount(pairs // m, minlength=n_groups)


def p_sensitivity_by_attribute(
    frame: pd.DataFrame,
    labels_or_qis: Grouping,
    confidential: str | Sequence[str],
    *,
    missing: Missing = "category",
) -> dict[str, int]:
    """For each confidential attribute, the fewest distinct values it takes within a group.

    A missing confidential value counts as one value. ``missing``: how a blank quasi-identifier
    value groups (module docstring). An empty table gives 0.
    """
    classes = _wildcard_classes(frame, labels_or_qis, missing)
    labels = _labels(frame, labels_or_qis) if classes is None else None
    out: dict[str, int] = {}
    for col in _names(confidential):
        if len(frame) == 0:
            out[col] = 0
            continue
        codes, _ = nominal_codes(frame[col])
        if labels is not None:
            counts = distinct_by_group(codes, labels)
        else:
            assert classes is not None
            counts = _wildcard_distinct(classes, codes)
        out[col] = int(counts[counts > 0].min())
    return out


def p_sensitivity(
    frame: pd.DataFrame,
    labels_or_qis: Grouping,
    confidential: str | Sequence[str],
    *,
    missing: Missing = "category",
) -> int:
    """The p of p-sensitive k-anonymity: the fewest distinct values of a confidential attribute
    within one group, minimum over the confidential attributes (``002`` §4.11).

    Parameters
    ----------
    frame
        The table (original or protected: confidential attributes are the same in both).
    labels_or_qis
        Group labels (int array or Series, one per row) or quasi-identifier column names.
    confidential
        One or more confidential column names.
    missing
        A blank quasi-identifier value as one value (``"category"``) or matching any value
        (``"any"``); see the module docstring.
    """
    names = _names(confidential)
    if not names:
        raise ValueError("name at least one confidential column")
    return min(p_sensitivity_by_attribute(frame, labels_or_qis, names, missing=missing).values())


def distinct_l_diversity(
    frame: pd.DataFrame,
    labels_or_qis: Grouping,
    sensitive: str | Sequence[str],
    *,
    missing: Missing = "category",
) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values within one group.

    With several sensitive columns, their value combinations are counted (one joint attribute);
    for the per-attribute minimum use :func:`p_sensitivity`. A missing sensitive value is one
    value. ``missing``: how a blank quasi-identifier value groups (module docstring).
    """
    names = _names(sensitive)
    if not names:
        raise ValueError("name at least one sensitive column")
    classes = _wildcard_classes(frame, labels_or_qis, missing)
    if len(frame) == 0:
        return 0
    joint = frame.groupby(names, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
    if classes is not None:
        counts = _wildcard_distinct(classes, joint)
    else:
        counts = distinct_by_group(joint, _labels(frame, labels_or_qis))
    return int(counts[counts > 0].min())


def _spec(kind: KindLike) -> tuple[AttributeKind, Sequence[str] | None]:
    """(kind, declared order) of a kind-like value."""
    if isinstance(kind, ColumnSpec):
        return kind.kind, kind.order
    return AttributeKind(kind), None


def attribute_codes(values: pd.Series, kind: KindLike) -> tuple[np.ndarray, int, bool]:
    """(codes, number of distinct values, ordered?) of a confidential attribute of this kind.

    Ordinal attributes are ranked by their declared order (else numeric, else text order) and
    nominal ones coded by value. A continuous attribute is ranked by value when every value is a
    number; one whose values are not all numbers is read as nominal: the command line tags every
    ``--confidential`` column continuous, text included (as
    :func:`microgui.core.methods.confidential.prepare_confidential` reads it too).
    """
    attr_kind, order = _spec(kind)
    if attr_kind is AttributeKind.NOMINAL or (
        attr_kind is AttributeKind.CONTINUOUS and _as_numbers(values.reset_index(drop=True)) is None
    ):
        codes, m = nominal_codes(values)
        return codes, m, False
    codes, m = rank_codes(values, order if attr_kind is AttributeKind.ORDINAL else None)
    return codes, m, True


def t_closeness_by_attribute(
    frame: pd.DataFrame,
    labels_or_qis: Grouping,
    confidential: str | Sequence[str],
    kinds: Mapping[str, KindLike],
    *,
    missing: Missing = "category",
) -> dict[str, float]:
    """For each confidential attribute, the largest EMD of a group to the whole table.

    ``kinds`` maps each confidential column to its kind: continuous and ordinal attributes use
    the ordered distance (ordinal ranks from a :class:`ColumnSpec`'s order when it has one), nominal
    ones the equal distance; a "continuous" column of text is nominal (:func:`attribute_codes`).
    A :class:`~microgui.core.table.roles.RoleMap` is a valid ``kinds``. ``missing``: how a blank
    quasi-identifier value groups (module docstring; with ``"any"`` the class of a combination
    is compared with the whole table's distribution, :func:`sparse_emd`).
    """
    classes = _wildcard_classes(frame, labels_or_qis, missing)
    labels = _labels(frame, labels_or_qis) if classes is None else None
    out: dict[str, float] = {}
    for col in _names(confidential):
        if len(frame) == 0:
            out[col] = 0.0
            continue
        if col not in kinds:
            raise ValueError(f"no kind given for confidential column {col!r}")
        codes, m, ordered = attribute_codes(frame[col], kinds[col])
        if labels is not None:
            out[col] = float(emd_by_group(codes, labels, m, ordered=ordered).max())
            continue
        assert classes is not None
        combos, entry = classes
        combo, value, count = compatible_value_counts(combos, entry, codes)
        whole = np.bincount(codes, minlength=m).astype(np.float64)
        emd = sparse_emd(combo, value, count, len(combos), whole, ordered=ordered)
        out[col] = float(emd.max()) if len(emd) else 0.0
    return out


def t_closeness(
    frame: pd.DataFrame,
    qis: Grouping,
    confidential: str | Sequence[str],
    kinds: Mapping[str, KindLike],
    *,
    missing: Missing = "category",
) -> float:
    """The t of t-closeness: the largest EMD between a group's distribution of a confidential
    attribute and the whole table's, over groups and confidential attributes (Li et al. 2007).

    Parameters
    ----------
    frame
        The table.
    qis
        Quasi-identifier column names (groups: identical value combinations) or group labels.
    confidential
        One or more confidential column names.
    kinds
        Kind of each confidential column (see :func:`t_closeness_by_attribute`).
    missing
        A blank quasi-identifier value as one value (``"category"``) or matching any value
        (``"any"``); see the module docstring.
    """
    names = _names(confidential)
    if not names:
        raise ValueError("name at least one confidential column")
    return max(t_closeness_by_attribute(frame, qis, names, kinds, missing=missing).values())


def sparse_emd(
    combo: np.ndarray,
    value: np.ndarray,
    count: np.ndarray,
    n_combos: int,
    whole: np.ndarray,
    *,
    ordered: bool,
) -> np.ndarray:
    """EMD of each combination's distribution (sparse triples) to the whole table's
    (``whole``: value counts), as :func:`~microgui.core.metrics.privacy.emd_by_group` defines it
    (Li, Li & Venkatasubramanian 2007: equal distance ½Σ|p−q|, ordered distance
    Σ|F_c − F|/(m−1) over the ranks)."""
    m = len(whole)
    q_prob = whole / max(whole.sum(), 1)
    sizes = np.bincount(combo, weights=count, minlength=n_combos)
    p = count / np.where(sizes[combo] > 0, sizes[combo], 1)
    out = np.zeros(n_combos)
    if not ordered:
        diff = np.abs(p - q_prob[value]) - q_prob[value]
        equal = 0.5 * (1.0 + np.bincount(combo, weights=diff, minlength=n_combos))
        return np.asarray(np.maximum(equal, 0.0), dtype=np.float64)
    if m <= 1:
        return out
    q_cdf, sq = ordered_tables(np.repeat(np.arange(m), whole.astype(np.int64)), m)
    # F_c is a step function: g_j on [value_j, next value of c) and 0 before c's first value
    g = np.cumsum(p)
    first = np.ones(len(combo), dtype=bool)
    first[1:] = combo[1:] != combo[:-1]
    starts = np.flatnonzero(first)
    g -= np.repeat(np.concatenate([[0.0], g[starts[1:] - 1]]), np.diff(np.append(starts, len(g))))
    last = np.ones(len(combo), dtype=bool)
    last[:-1] = combo[1:] != combo[:-1]
    a = value
    b = np.where(last, m, np.roll(value, -1))
    s = np.clip(np.searchsorted(q_cdf, g, side="left"), a, b)
    piece = g * (s - a) - (sq[s] - sq[a]) + (sq[b] - sq[s]) - g * (b - s)
    head = sq[value[first]]  # ranks below the first value: |0 - F| = F
    total = np.bincount(combo, weights=piece, minlength=n_combos)
    total[combo[first]] += head
    return np.maximum(total / (m - 1), 0.0)
