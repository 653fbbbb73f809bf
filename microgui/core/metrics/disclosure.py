"""Attribute disclosure of a release and the one verdict every surface shows (issue 29).

k-anonymity protects against identity disclosure only: a group of k records whose confidential
attribute takes one value discloses that value for all of them (the *homogeneity attack*,
Machanavajjhala et al. 2007, "l-Diversity: Privacy Beyond k-Anonymity", §3.1). This module
measures it per confidential attribute and turns a run report into one :class:`Verdict`
(:func:`release_verdict`), so that the app, the command line, the JSON report, the text, HTML
and PDF reports, the compare and sweep tables all say the same words.

:func:`attribute_disclosure` groups the records as
:func:`~microgui.core.metrics.kanonymity.k_anonymity_level` does (the equivalence classes of the
released quasi-identifiers, values compared as they appear, a missing quasi-identifier value is
one value) and gives, for each confidential attribute:

- ``distinct_l_diversity``: the fewest distinct values of the attribute within one class
  (Machanavajjhala et al. 2007, Def. 3.2's "distinct" reading; sdcMicro ``ldiversity``,
  ``Distinct_Ldiversity``);
- ``entropy_l_diversity``: exp of the smallest entropy (natural log) of the attribute's
  distribution within a class (Machanavajjhala et al. 2007, Def. 4.1);
- ``t_closeness``: the largest Earth Mover's Distance of a class's distribution to the whole
  table's (Li, Li & Venkatasubramanian 2007), from
  :func:`microgui.core.metrics.privacy.t_closeness_by_attribute`; None when it cannot be computed
  (an ordered attribute holding missing values has no rank for them);
- ``homogeneous_groups`` / ``homogeneous_records``: the classes whose attribute takes a single
  value, and the records in them with a known value; ``homogeneous_percent`` is
  100 × homogeneous_records / ``n_known`` (records with a known value);
- ``n_groups`` (classes), ``n_known`` and ``missing`` (records without a value).

**After a local suppression** (``missing_matches_any=True``, what a plan with a suppress step
reports, issue 31) the classes are those an intruder can form when a suppressed (missing) key cell
matches any value, sdcMicro's convention for k (``freqCalc``; :mod:`.missing_match`): the class of a
released key combination *c* holds every record compatible with *c* (equal on the keys present in
both), so a record with a suppressed cell belongs to every class it matches and its confidential
value joins each such class's distribution. Each record is judged in its own combination's class:
``homogeneous_records`` counts the records whose own class is homogeneous, ``homogeneous_groups``
and ``n_groups`` count distinct released combinations, and class sizes are the k check's
wildcard frequencies. Classes overlap, so they no longer partition the table. For a combination
without missing cells the class is exactly the set of candidates of an intruder who knows the
person's keys; for one with a suppressed cell it is the candidates of an intruder who does not
know the suppressed value (one who knows it narrows the set to the class of the matching complete
combination, measured there, or, when no released complete combination matches, to a subset of
this class that is not measured separately). Without any missing key cell both rules give the
same figures.

**Missing confidential values are ignored**, as sdcMicro's ``ldiversity`` does: a missing cell
is no value an intruder learns, so a class's distinct and entropy counts run over its known values,
a class whose known values are all one value is homogeneous, and a class with no known value
discloses nothing (it is left out of the minima and of the homogeneous counts). Note the difference
with :func:`microgui.core.metrics.privacy.distinct_l_diversity`, which counts a missing value as
one value (a method's *promise* is checked that way); on a table without missing confidential
values both agree. ``t_closeness`` is the privacy module's, unchanged.

Everything is vectorised: one ``groupby().ngroup()`` for the classes, then per attribute a
``factorize`` and ``bincount``s over (class, value) pairs; UCI Adult (30,162 records, 8
quasi-identifiers) takes a few tens of milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.metrics.missing_match import _combined_key, distinct_rows
from microgui.core.metrics.privacy import (
    KindLike,
    attribute_codes,
    ordered_tables,
    t_closeness_by_attribute,
)
from microgui.core.table.column_types import json_cell
from microgui.core.table.roles import AttributeKind, ColumnSpec

__all__ = [
    "attribute_disclosure",
    "Verdict",
    "VERDICT_LEVELS",
    "release_verdict",
    "verdict_json",
    "percent_text",
    "worst_homogeneous",
]

#: The levels of a :class:`Verdict`, safest last.
VERDICT_LEVELS = ("not_k_anonymous", "attribute_disclosure", "no_confidential", "safe")


def _class_labels(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Equivalence-class label per row, as ``k_anonymity_level`` groups (NA is one value)."""
    if not qis:
        return np.zeros(len(frame), dtype=np.int64)
    out: np.ndarray = (
        frame.groupby(list(qis), dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
    )
    return out


def _value_codes(values: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Codes 0..m-1 of the known values, -1 for a missing one, and the m distinct values."""
    series = values.reset_index(drop=True)
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except (TypeError, NotImplementedError):  # lists, structs: compared as JSON text
        codes, uniques = pd.factorize(series.map(json_cell, na_action="ignore"))
    return np.asarray(codes, dtype=np.int64), pd.Series(uniques)


def _emd_kind(values: pd.Series, uniques: pd.Series, kind: KindLike) -> KindLike:
    """``kind``, or nominal when :func:`~microgui.core.metrics.privacy.attribute_codes` would read
    the column as nominal anyway (a "continuous" column of text, as the command line tags every
    ``--confidential`` column): decided on the m distinct values, not by parsing every cell."""
    plain = kind.kind if isinstance(kind, ColumnSpec) else AttributeKind(kind)
    if plain is not AttributeKind.CONTINUOUS:  # an ordinal's order, a nominal: as given
        return kind
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return kind
    try:
        ordered = attribute_codes(uniques, plain)[2]
    except (ValueError, TypeError):
        return kind  # let t_closeness_by_attribute say what it says of the whole column
    return kind if ordered else AttributeKind.NOMINAL


def _one_attribute(
    frame: pd.DataFrame,
    labels: np.ndarray,
    n_groups: int,
    column: str,
    kind: KindLike,
) -> dict[str, Any]:
    codes, uniques = _value_codes(frame[column])
    m = len(uniques)
    known = codes >= 0
    n_known = int(known.sum())
    out: dict[str, Any] = {
        "distinct_l_diversity": 0,
        "entropy_l_diversity": 0.0,
        "t_closeness": None,
        "homogeneous_records": 0,
        "homogeneous_groups": 0,
        "homogeneous_percent": 0.0,
        "n_groups": n_groups,
        "n_known": n_known,
        "missing": int(len(codes) - n_known),
    }
    if n_known:
        lab = labels[known]
        pair, counts = np.unique(lab * max(m, 1) + codes[known], return_counts=True)
        g = pair // max(m, 1)
        distinct = np.bincount(g, minlength=n_groups)
        sizes = np.bincount(lab, minlength=n_groups).astype(np.float64)
        seen = sizes > 0  # classes with at least one known value
        prob = counts / sizes[g]
        entropy = -np.bincount(g, weights=prob * np.log(prob), minlength=n_groups)
        homogeneous = seen & (distinct == 1)
        records = int(sizes[homogeneous].sum())
        out.update(
            distinct_l_diversity=int(distinct[seen].min()),
            # exp(0) = 1 exactly for a homogeneous class; rounding noise kept out of the minimum
            entropy_l_diversity=float(np.exp(max(float(entropy[seen].min()), 0.0))),
            homogeneous_records=records,
            homogeneous_groups=int(homogeneous.sum()),
            homogeneous_percent=100.0 * records / n_known,
        )
    try:
        emd_kind = _emd_kind(frame[column], uniques, kind)
        t = t_closeness_by_attribute(frame, labels, [column], {column: emd_kind})[column]
        out["t_closeness"] = float(t)
    except (ValueError, TypeError):  # no rank for a missing value of an ordered attribute
        out["t_closeness"] = None
    return out


def attribute_disclosure(
    frame: pd.DataFrame,
    qis: Sequence[str],
    confidential: str | Sequence[str],
    roles: Mapping[str, KindLike] | None = None,
    *,
    missing_matches_any: bool = False,
) -> dict[str, dict[str, Any]]:
    """Attribute disclosure of each confidential attribute over the classes of ``qis``.

    Parameters
    ----------
    frame
        The released table (the values as written).
    qis
        The released quasi-identifier columns: classes are their identical value combinations.
    confidential
        The confidential column(s).
    roles
        The kind of each confidential column (a :class:`~microgui.core.table.roles.RoleMap` or a
        mapping to an :class:`AttributeKind`), used by ``t_closeness`` only; a column it does not
        name is read as continuous (ordered distance on numbers, equal distance on text, as
        :func:`~microgui.core.metrics.privacy.attribute_codes` reads the command line's tags).
    missing_matches_any
        Classes after a local suppression: a missing key cell matches any value (the module
        docstring's rule; sdcMicro's ``freqCalc`` convention). Without a missing key cell the
        figures are those of the default rule.

    Returns
    -------
    dict
        column -> the measures of the module docstring (counts and measures only, no value).
    """
    names = [confidential] if isinstance(confidential, str) else [str(c) for c in confidential]
    if not names:
        return {}  # no grouping to pay for (a large continuous run has no confidential column)
    qi_names = [str(c) for c in qis]
    if missing_matches_any and qi_names and bool(frame[qi_names].isna().to_numpy().any()):
        return _attribute_disclosure_missing_any(frame, qi_names, names, roles)
    labels = _class_labels(frame, qi_names)
    n_groups = int(labels.max()) + 1 if len(labels) else 0
    out: dict[str, dict[str, Any]] = {}
    for col in names:
        kind: KindLike = AttributeKind.CONTINUOUS
        if roles is not None and col in roles:
            kind = roles[col]
        out[col] = _one_attribute(frame, labels, n_groups, col, kind)
    return out


# --------------------------------------------------------------------------------------------
# classes where a missing key cell matches any value (after a local suppression)
# --------------------------------------------------------------------------------------------


def _key_codes(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Integer codes of the key columns (n x keys), -1 where missing."""
    out = np.empty((len(frame), len(qis)), dtype=np.int64)
    for j, col in enumerate(qis):
        out[:, j] = _value_codes(frame[col])[0]
    return out


def compatible_value_counts(
    combos: np.ndarray, entry: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key combination *c*, the count of each value over the records compatible
    with *c* (equal on the keys present in both; a missing key code -1 matches anything).

    ``combos``: the D distinct key rows (codes, -1 missing); ``entry``: each record's row of
    ``combos``; ``values``: each record's value code (>= 0; records with -1 are left out).
    Returns (combination, value, count) triples, sorted by combination then value. Rows are
    grouped by their pattern of present keys; for two patterns P and Q a combination of P and a
    record of Q are compatible exactly when they agree on the keys present in both, so each pair
    of patterns is one sorted join on those keys (as :func:`.missing_match.wildcard_counts`
    counts): O(P² log D) array operations plus one entry per compatible (combination, value).
    """
    d, m_keys = combos.shape
    known = values >= 0
    m = int(values.max()) + 1 if known.any() else 1
    # the distinct (combination, value) pairs of the records, with their counts
    pair_key, pair_count = np.unique(entry[known] * m + values[known], return_counts=True)
    pair_row, pair_value = pair_key // m, pair_key % m
    present = combos >= 0
    pattern = (present * (1 << np.arange(m_keys, dtype=np.int64))).sum(axis=1)
    safe = np.where(present, combos, 0).astype(np.int64)
    keys: dict[int, np.ndarray] = {}
    pair_pattern = pattern[pair_row]
    patterns = np.unique(pattern)
    in_q = {int(q): np.flatnonzero(pair_pattern == q) for q in np.unique(pair_pattern)}
    combo_parts: list[np.ndarray] = []
    value_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    for pp in patterns:
        rows_p = np.flatnonzero(pattern == pp)
        for qq, at_q in in_q.items():
            shared = int(pp) & qq
            if shared == 0:  # every record of Q matches every combination of P
                dist = np.bincount(pair_value[at_q], weights=pair_count[at_q], minlength=m)
                vals = np.flatnonzero(dist)
                combo_parts.append(np.repeat(rows_p, len(vals)))
                value_parts.append(np.tile(vals, len(rows_p)))
                count_parts.append(np.tile(dist[vals].astype(np.int64), len(rows_p)))
                continue
            key = keys.get(shared)
            if key is None:
                key = _combined_key(safe[:, [b for b in range(m_keys) if shared >> b & 1]])
                keys[shared] = key
            q_key = key[pair_row[at_q]]
            order = np.argsort(q_key, kind="stable")
            q_sorted = q_key[order]
            p_key = key[rows_p]
            lo = np.searchsorted(q_sorted, p_key, side="left")
            lens = np.searchsorted(q_sorted, p_key, side="right") - lo
            total = int(lens.sum())
            if total == 0:
                continue
            starts = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(total)
            picked = at_q[order[starts]]
            combo_parts.append(np.repeat(rows_p, lens))
            value_parts.append(pair_value[picked])
            count_parts.append(pair_count[picked])
    if not combo_parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    flat = np.concatenate(combo_parts) * m + np.concatenate(value_parts)
    weights = np.concatenate(count_parts).astype(np.float64)
    if d * m <= 20_000_000:
        dense = np.bincount(flat, weights=weights, minlength=d * m)
        where = np.flatnonzero(dense)
        counts = dense[where]
    else:
        where, inverse = np.unique(flat, return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=weights)
    return where // m, where % m, np.rint(counts).astype(np.int64)


def _sparse_emd(
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


def _attribute_disclosure_missing_any(
    frame: pd.DataFrame,
    qis: Sequence[str],
    names: Sequence[str],
    roles: Mapping[str, KindLike] | None,
) -> dict[str, dict[str, Any]]:
    """:func:`attribute_disclosure` with the classes of the module docstring's suppression rule."""
    combos, entry, _counts = distinct_rows(_key_codes(frame, qis))
    n_combos = len(combos)
    out: dict[str, dict[str, Any]] = {}
    for col in names:
        codes, uniques = _value_codes(frame[col])
        known = codes >= 0
        n_known = int(known.sum())
        res: dict[str, Any] = {
            "distinct_l_diversity": 0,
            "entropy_l_diversity": 0.0,
            "t_closeness": None,
            "homogeneous_records": 0,
            "homogeneous_groups": 0,
            "homogeneous_percent": 0.0,
            "n_groups": n_combos,
            "n_known": n_known,
            "missing": int(len(codes) - n_known),
        }
        if n_known:
            combo, _value, count = compatible_value_counts(combos, entry, codes)
            distinct = np.bincount(combo, minlength=n_combos)
            sizes = np.bincount(combo, weights=count, minlength=n_combos)
            seen = sizes > 0
            prob = count / sizes[combo]
            entropy = -np.bincount(combo, weights=prob * np.log(prob), minlength=n_combos)
            homogeneous = seen & (distinct == 1)
            records = int((homogeneous[entry] & known).sum())
            res.update(
                distinct_l_diversity=int(distinct[seen].min()),
                entropy_l_diversity=float(np.exp(max(float(entropy[seen].min()), 0.0))),
                homogeneous_records=records,
                homogeneous_groups=int(homogeneous.sum()),
                homogeneous_percent=100.0 * records / n_known,
            )
        kind: KindLike = AttributeKind.CONTINUOUS
        if roles is not None and col in roles:
            kind = roles[col]
        try:
            t_codes, m, ordered = attribute_codes(frame[col], _emd_kind(frame[col], uniques, kind))
            t_combo, t_value, t_count = compatible_value_counts(combos, entry, t_codes)
            whole = np.bincount(t_codes, minlength=m).astype(np.float64)
            emd = _sparse_emd(t_combo, t_value, t_count, n_combos, whole, ordered=ordered)
            res["t_closeness"] = float(emd.max()) if len(emd) else 0.0
        except (ValueError, TypeError):  # no rank for a missing value of an ordered attribute
            res["t_closeness"] = None
        out[col] = res
    return out


def worst_homogeneous(disclosure: Mapping[str, Any] | None) -> float | None:
    """The largest ``homogeneous_percent`` over the confidential attributes (the share the
    verdict names), None when there is none or it was not measured: the compare and sweep
    tables' number for attribute disclosure."""
    if not isinstance(disclosure, Mapping):
        return None
    shares = [
        float(m.get("homogeneous_percent") or 0.0)
        for m in disclosure.values()
        if isinstance(m, Mapping)
    ]
    return max(shares) if shares else None


# --------------------------------------------------------------------------------------------
# the verdict
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What a release is, in words every surface shows alike.

    ``level`` is one of :data:`VERDICT_LEVELS`: ``"safe"`` (k-anonymous and no class with a
    single value of any confidential attribute), ``"attribute_disclosure"`` (k-anonymous, but a
    class discloses a confidential value), ``"not_k_anonymous"`` (below the chosen k) or
    ``"no_confidential"`` (k-anonymous, no confidential attribute measured). ``text`` is one
    line; ``short`` fits a status line or a table cell. ✓ appears only when nothing is disclosed.
    """

    level: str
    text: str
    short: str
    #: False when the report has no ``attribute_disclosure`` (null: not measured, e.g. a
    #: partitioned run, or a report of an older version): no ✓ then, whatever the level
    measured: bool = True

    @property
    def ok(self) -> bool:
        """True when the verdict may carry a ✓ (safe, or k-anonymous with nothing to disclose)."""
        return self.measured and self.level in ("safe", "no_confidential")


def percent_text(value: float) -> str:
    """A share in percent as the verdict writes it: whole percent, finer below 1 %, never "0 %"
    for a share above zero nor "100 %" for one below it."""
    v = float(value)
    if v <= 0.0:
        return "0 %"
    if v < 0.1:
        return "< 0.1 %"
    if v < 1.0:
        return f"{v:.1f} %"
    if v < 100.0:
        return f"{min(round(v), 99)} %"
    return "100 %"


def _int_or_none(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return None


def release_verdict(report: Mapping[str, Any]) -> Verdict:
    """The verdict on a release, from the run report's ``k``, ``k_anonymity`` and
    ``attribute_disclosure`` alone (so the app, the command line and every report agree).

    Never a plain ✓ while a class is homogeneous in a confidential attribute; with several
    confidential attributes the one with the largest homogeneous share is named and the others
    with a homogeneous class are counted.
    """
    k = _int_or_none(report.get("k"))
    level = _int_or_none(report.get("k_anonymity"))
    disclosure = report.get("attribute_disclosure")
    k_text = "k = ?" if k is None else f"k = {k}"
    below = level is not None and k is not None and level < k
    if below:
        head = f"not k-anonymous: smallest group {level} < {k_text}"
        head_short = f"k-anonymity {level} < {k}"
    else:
        extra = "" if level is None or k is None or level == k else f", smallest group {level}"
        head = f"k-anonymous ({k_text}{extra})"
        head_short = f"k-anonymity {level if level is not None else '?'}"

    if not isinstance(disclosure, Mapping):
        # no figures (null or absent): said, and never a ✓
        what = "attribute disclosure not measured"
        if below:
            return Verdict("not_k_anonymous", f"{head}; {what}", head_short, measured=False)
        return Verdict(
            "no_confidential", f"{head}; {what}", f"{head_short} ({what})", measured=False
        )
    if not disclosure:
        what = "no confidential attribute tagged"
        if below:
            return Verdict("not_k_anonymous", f"{head}; {what}", head_short)
        return Verdict("no_confidential", f"{head}; {what}", f"{head_short} ✓")

    def share(item: tuple[str, Any]) -> tuple[float, int]:
        m = item[1] if isinstance(item[1], Mapping) else {}
        return float(m.get("homogeneous_percent") or 0.0), int(m.get("homogeneous_records") or 0)

    disclosing = [
        (name, m)
        for name, m in disclosure.items()
        if isinstance(m, Mapping) and int(m.get("homogeneous_groups") or 0) > 0
    ]
    if disclosing:
        name, worst = max(disclosing, key=share)
        pct = percent_text(float(worst.get("homogeneous_percent") or 0.0))
        groups = int(worst.get("homogeneous_groups") or 0)
        others = len(disclosing) - 1
        more = (
            f" (and {others} other confidential attribute{'s' if others > 1 else ''})"
            if others
            else ""
        )
        what = (
            f"attribute disclosure: {pct} of records in groups with one {name} value"
            f" ({groups:,} group{'s' if groups != 1 else ''}){more}"
        )
        short = f"attribute disclosure {pct} ({name}{f' +{others}' if others else ''})"
        if below:
            return Verdict("not_k_anonymous", f"{head}; {what}", f"{head_short}; {short}")
        return Verdict("attribute_disclosure", f"{head}; {what}", f"{head_short}; {short}")

    ls = [
        int(m.get("distinct_l_diversity") or 0)
        for m in disclosure.values()
        if isinstance(m, Mapping)
    ]
    low = min(ls) if ls else 0
    names = list(disclosure)
    subject = names[0] if len(names) == 1 else f"{len(names)} confidential attributes"
    what = f"no homogeneous group: every group has ≥ {low} values of {subject}"
    if below:
        return Verdict("not_k_anonymous", f"{head}; {what}", head_short)
    return Verdict("safe", f"{head}; {what}", f"{head_short}, l-diversity {low} ✓")


def verdict_json(verdict: Verdict) -> dict[str, str]:
    """The verdict as the run report holds it: ``{"level", "text"}``."""
    return {"level": verdict.level, "text": verdict.text}
