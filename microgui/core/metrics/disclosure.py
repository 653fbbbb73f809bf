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

Everything is vectorised: one grouping for the classes
(:func:`~microgui.core.metrics.kanonymity.class_codes`), which also gives k, then per attribute a
``factorize`` and ``bincount``s over (class, value) pairs; UCI Adult (30,162 records, 8
quasi-identifiers) takes a few tens of milliseconds. :func:`group_measures` makes that one
grouping per released table and returns the :class:`GroupMeasures` the run report, the release
check and the release report all read (computed once per run, kept on its ``RunResult``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.metrics.kanonymity import Missing, check_missing, class_codes
from microgui.core.metrics.missing_match import (
    compatible_value_counts,
    distinct_rows,
    key_codes,
    wildcard_counts_weighted,
)
from microgui.core.metrics.privacy import (
    KindLike,
    attribute_codes,
    sparse_emd,
    t_closeness_by_attribute,
)
from microgui.core.table.column_types import json_cell
from microgui.core.table.roles import AttributeKind, ColumnSpec

__all__ = [
    "GroupMeasures",
    "group_measures",
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
    rule: Missing = "any" if missing_matches_any else "category"
    return group_measures(frame, qis, names, roles, missing=rule).disclosure_json()


@dataclass(frozen=True)
class GroupMeasures:
    """The group measures of one released table, computed once (:func:`group_measures`) and
    passed on: the run report's ``k_anonymity`` and ``attribute_disclosure``, the release
    check's verdict (:func:`microgui.core.release.check.check_export`) and the release report's
    rows (:func:`microgui.core.release.report.release_checks`) all read this one object, so they
    cannot disagree and the records are grouped once.

    ``qis`` and ``confidential`` are the columns measured, ``missing`` the rule a blank key
    value followed (:data:`~microgui.core.metrics.kanonymity.MISSING_RULES`), ``k_anonymity``
    the smallest class and ``attribute_disclosure`` the per-attribute measures of the module
    docstring (column -> measures)."""

    qis: tuple[str, ...]
    confidential: tuple[str, ...]
    missing: Missing
    k_anonymity: int
    attribute_disclosure: Mapping[str, Mapping[str, Any]]

    def applies_to(self, qis: Sequence[str], confidential: Sequence[str], missing: Missing) -> bool:
        """Whether these are the measures of those columns under that rule."""
        return (
            self.qis == tuple(str(c) for c in qis)
            and self.confidential == tuple(str(c) for c in confidential)
            and self.missing == missing
        )

    def disclosure_json(self) -> dict[str, dict[str, Any]]:
        """``attribute_disclosure`` as a report holds it (a fresh copy: a report may be edited)."""
        return {str(c): dict(m) for c, m in self.attribute_disclosure.items()}


def group_measures(
    frame: pd.DataFrame,
    qis: Sequence[str],
    confidential: Sequence[str],
    roles: Mapping[str, KindLike] | None = None,
    *,
    missing: Missing = "category",
) -> GroupMeasures:
    """k-anonymity and the attribute disclosure of each confidential attribute of ``frame``,
    from one grouping of its records by ``qis`` (Samarati 2001 for k; Machanavajjhala et al.
    2007 and Li et al. 2007 for the rest, module docstring).

    ``missing``: ``"category"``, a blank key value is one value of its own (the classes of
    :func:`~microgui.core.metrics.kanonymity.k_anonymity_level`); ``"any"``, a blank matches
    any value (sdcMicro's ``freqCalc``; the module docstring's classes after a local
    suppression: k is the smallest wildcard frequency). ``roles`` as for
    :func:`attribute_disclosure`. Columns of ``confidential`` absent from ``frame`` are left out.
    """
    rule = check_missing(missing)
    qi_names = tuple(str(c) for c in qis)
    names = tuple(str(c) for c in confidential if c in frame.columns)
    n = len(frame)
    if rule == "any" and qi_names and n and bool(frame[list(qi_names)].isna().to_numpy().any()):
        combos, entry, counts = distinct_rows(key_codes(frame, qi_names))
        sizes = wildcard_counts_weighted(combos, counts)
        k = int(sizes.min())
        disclosure = _attribute_disclosure_missing_any(frame, combos, entry, names, roles)
    else:
        labels = class_codes(frame, qi_names)
        n_groups = int(labels.max()) + 1 if n else 0
        k = 0 if n == 0 else n if not qi_names else int(np.bincount(labels).min())
        disclosure = {}
        for col in names:
            kind: KindLike = AttributeKind.CONTINUOUS
            if roles is not None and col in roles:
                kind = roles[col]
            disclosure[col] = _one_attribute(frame, labels, n_groups, col, kind)
    return GroupMeasures(qi_names, names, rule, k, disclosure)


# --------------------------------------------------------------------------------------------
# classes where a missing key cell matches any value (after a local suppression)
# --------------------------------------------------------------------------------------------


def _attribute_disclosure_missing_any(
    frame: pd.DataFrame,
    combos: np.ndarray,
    entry: np.ndarray,
    names: Sequence[str],
    roles: Mapping[str, KindLike] | None,
) -> dict[str, dict[str, Any]]:
    """:func:`attribute_disclosure` with the classes of the module docstring's suppression rule
    (``combos``: the distinct key rows, codes -1 missing; ``entry``: each record's row)."""
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
            emd = sparse_emd(t_combo, t_value, t_count, n_combos, whole, ordered=ordered)
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
