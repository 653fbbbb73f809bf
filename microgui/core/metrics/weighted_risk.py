"""Survey-weighted frequencies and the individual re-identification risk, as sdcMicro computes them.

A sample record that shares its combination of categorical key values with few other records,
in a population where that combination is rare, is at risk of re-identification. With survey
weights (each record stands for w population units) the population frequency of a combination
is estimated by the sum of the weights of the records that share it, and the risk of each record
follows from the sample and the estimated population frequency (the "individual risk" of
Benedetti & Franconi 1998, as in mu-Argus and sdcMicro). Sources, all of the R package sdcMicro
(GitHub ``sdcTools/sdcMicro``, GPL-2; formulas transcribed, no code copied):

- ``R/freqCalc.r`` (``freqCalc``): **fk**, the number of sample records sharing the record's key
  values, and **Fk** = the sum of their weights (``Fk=sum(weight)`` by key; Fk = fk without
  weights).
- ``R/indivRisk.R`` (``indivRisk``, ``method="approx"``, the default and the only method
  ``measure_risk`` uses): with pk = fk / Fk,

  - fk = 1: rk = pk / (1 − pk) · log(1 / pk)
  - fk = 2: rk = pk / (1 − pk) − (pk / (1 − pk))² · log(1 / pk)
  - fk ≥ 3: rk = pk / (fk − (1 − pk))
  - fk = Fk (every weight 1, or no weights): rk = 1 / fk.

  These are the approximations of E[1/Fk | fk] under a negative binomial super-population model
  of Benedetti & Franconi (1998), "Statistical and technological solutions for controlled data
  dissemination", NTTS 1998, 225–232, as reviewed by Franconi & Polettini (2004), "Individual
  risk estimation in mu-Argus: a review", PSD 2004, LNCS 3050, 262–272. sdcMicro's ``qual`` (a
  factor multiplying rk, default 1, never set by ``measure_risk``) and ``method="exact"`` (a
  series in pk) are not implemented. We evaluate the same expressions in a form that avoids
  cancellation when Fk is close to fk: with q = (Fk − fk) / fk, pk / (1 − pk) = 1 / q and
  log(1 / pk) = log1p(q), so rk = log1p(q) / q for fk = 1 and (q − log1p(q)) / q² for fk = 2
  (a Taylor series below q = 10⁻³); the values agree with sdcMicro's to rounding.
- ``R/measure_risk.R`` (``measure_riskWORK``): the **expected number of re-identifications**
  ER = Σ rk (``global_risk_ER``) and the **global risk** ER / n, shown in percent
  (``global_risk_pct``).
- ``R/printFunctions.R`` (``print(sdc, "risk")``): the number of records "with higher risk than
  the main part of the data": rk > median(rk) + 2 · mad(rk) and rk > 0.1, with R's ``mad``
  (1.4826 × the median absolute deviation). ``print.measure_risk`` uses 3 · mad: the ``mads``
  parameter of :func:`risky_records`.
- ``R/localSupp.R`` (``localSupp``): a record is suppressed when rk > threshold, default 0.15:
  the count of records above a risk threshold.
- ``print.freqCalc``: n1, the records with fk = 1 ("violate 2-anonymity"): the **sample uniques**.

sdcMicro has no estimate of the number of population uniques in these functions (its
``modRisk`` estimates one from log-linear models, a different method, not implemented here).

**Missing key values.** sdcMicro's ``freqCalc`` (``alpha = 1``, its default) reads a missing key
value as "any category": record j counts toward record i when the two agree on every key where
both have a value, so a suppressed cell enlarges the groups it could belong to. microgui does
the same by default (``missing="any"``), because the risk after local suppression is the figure
these measures exist for, and matches sdcMicro's figures including its two special cases:

- a record whose keys are all missing gets fk = n and Fk = the sum of all weights;
- with two or more key variables, a record with all its keys present does *not* count the
  records whose keys are all missing (sdcMicro leaves its ``addAllNAtoKeys`` switch off), while
  with a single key variable it does.

sdcMicro's ``alpha`` < 1 (a partial weight for wildcard matches) is not implemented: it makes fk
fractional, and ``indivRisk`` then leaves rk = 0 for 1 < fk < 2. ``missing="category"`` counts a
missing value as one more category instead (as :func:`~microgui.core.metrics.risk.sample_uniques`
and :func:`~microgui.core.metrics.k_anonymity_level` do). Key values are compared as they appear
(1 and 1.0 are one value, the text "1" another); sdcMicro compares numeric values and factor
codes the same way (``measure_risk`` turns text keys into factors first).

**Weights.** sdcMicro does not check them (an NA weight gives an NA Fk and rk, which
``measure_risk`` then drops from the sums). microgui refuses a weight that is missing, not a
number, not finite, or not greater than 0, naming the column and the rows; and refuses weights
whose sum over a combination is below the number of records sharing it (Fk < fk, e.g. weights
normalised to sum 1 or n), for which the formulas give risks above 1 or none at all. Single
weights below 1 are accepted when no combination falls below its count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.table.dataset import rows_text, survey_weights
from microgui.core.table.numbers import unique_rows

__all__ = [
    "RISK_THRESHOLD",
    "RISKY_MADS",
    "RISKY_FLOOR",
    "Frequencies",
    "frequencies",
    "individual_risk",
    "risky_records",
    "weighted_risk_summary",
]

#: sdcMicro ``localSupp``'s default threshold on the individual risk.
RISK_THRESHOLD = 0.15
#: ``print(sdc, "risk")``: risky when rk > median + RISKY_MADS · mad and rk > RISKY_FLOOR.
RISKY_MADS = 2.0
RISKY_FLOOR = 0.1
# R's mad(): the median absolute deviation times 1.4826 (consistent for the normal sd).
_MAD_SCALE = 1.4826
# Below this q = (Fk - fk) / fk the fk = 2 formula is evaluated by its Taylor series.
_SERIES_Q = 1e-3
# Relative slack when comparing Fk with fk (sums of weights are rounded).
_TOL = 1e-12

Missing = Literal["any", "category"]


class Frequencies(NamedTuple):
    """Per record: ``fk`` (int64), the sample frequency of its key combination, and ``Fk``
    (float64), the estimated population frequency (the sum of the weights; ``fk`` unweighted)."""

    fk: np.ndarray
    Fk: np.ndarray


def frequencies(
    frame: pd.DataFrame,
    keys: Sequence[str],
    weights: str | Sequence[float] | np.ndarray | None = None,
    *,
    missing: Missing = "any",
) -> Frequencies:
    """fk and Fk of every record of ``frame`` over the categorical ``keys`` (sdcMicro ``freqCalc``).

    ``weights`` is the name of the weight column, or one weight per row, or None (every weight 1:
    Fk = fk). ``missing``: ``"any"`` (a missing key value matches any value, as sdcMicro) or
    ``"category"`` (a missing value is one more category). See the module notes for the rules.

    Raises :class:`InvalidParameter` for unknown columns or no keys, :class:`InvalidInput` for
    unusable weights (missing, not a number, not finite, <= 0, or Fk < fk).
    """
    names = _key_names(frame, keys)
    if missing not in ("any", "category"):
        raise InvalidParameter(f"missing={missing!r}: give 'any' or 'category'")
    w, what = survey_weights(frame, weights)
    n = len(frame)
    if n == 0:
        return Frequencies(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    codes = _key_codes(frame, names)
    uniq, _first, inverse, counts = unique_rows(codes)
    g_f = counts.astype(np.float64)
    g_F = np.bincount(inverse, weights=w, minlength=len(uniq))
    if missing == "any" and (uniq < 0).any():
        g_f, g_F = _wildcard(uniq, g_f, g_F, n, float(w.sum()))
    fk = np.rint(g_f[inverse]).astype(np.int64)
    Fk = g_F[inverse]
    low = np.flatnonzero(Fk < fk * (1.0 - _TOL))
    if len(low):
        i = int(low[0])
        raise InvalidInput(
            f"{what}: the {fk[i]} records sharing the key values of {rows_text(frame, low[:1])} "
            f"have weights summing to {Fk[i]:g}, fewer than their number; a survey weight is the "
            "number of population units a record stands for, so the weights of a combination "
            f"cannot sum below its count ({len(low):,} records affected). Give the expansion "
            "weights (summing to the population size), not normalised ones"
        )
    return Frequencies(fk, Fk)


def individual_risk(fk: np.ndarray, Fk: np.ndarray) -> np.ndarray:
    """Individual risk rk of each record from its fk and Fk (sdcMicro ``indivRisk``, "approx").

    fk: whole numbers >= 1; Fk: finite, >= fk. Raises ``ValueError`` otherwise, naming the first
    offending position. Returns float64 values in (0, 1].
    """
    f = np.asarray(fk, dtype=np.float64).reshape(-1)
    F = np.asarray(Fk, dtype=np.float64).reshape(-1)
    if f.shape != F.shape:
        raise ValueError(f"fk has {len(f)} values and Fk {len(F)}")
    bad = np.flatnonzero(~np.isfinite(f) | (f < 1) | (f != np.rint(f)))
    if len(bad):
        raise ValueError(f"fk[{bad[0]}] = {f[bad[0]]!r} is not a whole number >= 1")
    bad = np.flatnonzero(~np.isfinite(F) | (F < f * (1.0 - _TOL)))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"Fk[{i}] = {F[i]!r} is below fk[{i}] = {f[i]:g} (or not finite)")
    rk = 1.0 / f  # fk == Fk: a census of the combination
    q = np.maximum(F - f, 0.0) / f  # (1 - pk) / pk
    open_ = q > 0
    one = open_ & (f == 1)
    rk[one] = np.log1p(q[one]) / q[one]
    two = open_ & (f == 2)
    q2 = q[two]
    small = q2 < _SERIES_Q
    r2 = np.empty_like(q2)
    r2[~small] = (q2[~small] - np.log1p(q2[~small])) / q2[~small] ** 2
    qs = q2[small]
    # (q − log1p(q)) / q² = Σ_{m>=2} (−1)^m q^(m−2) / m
    r2[small] = 1 / 2 - qs * (1 / 3 - qs * (1 / 4 - qs * (1 / 5 - qs * (1 / 6 - qs / 7))))
    rk[two] = r2
    more = open_ & (f >= 3)
    pk = f[more] / F[more]
    rk[more] = pk / (f[more] - (1.0 - pk))
    return rk


def risky_records(
    rk: np.ndarray, *, mads: float = RISKY_MADS, floor: float = RISKY_FLOOR
) -> np.ndarray:
    """Records "with higher risk than the main part of the data" (sdcMicro ``print(sdc, "risk")``):
    rk > median(rk) + mads · mad(rk) and rk > floor, mad = 1.4826 · median |rk − median(rk)|.
    ``print.measure_risk`` uses mads = 3. Returns a boolean mask."""
    r = np.asarray(rk, dtype=np.float64).reshape(-1)
    if len(r) == 0:
        return np.zeros(0, dtype=bool)
    med = float(np.median(r))
    mad = _MAD_SCALE * float(np.median(np.abs(r - med)))
    out: np.ndarray = (r > med + mads * mad) & (r > floor)
    return out


def weighted_risk_summary(
    frame: pd.DataFrame,
    keys: Sequence[str],
    weights: str | Sequence[float] | np.ndarray | None = None,
    *,
    missing: Missing = "any",
    threshold: float = RISK_THRESHOLD,
) -> dict[str, int | float]:
    """The risk figures sdcMicro reports, for ``frame`` over ``keys`` with ``weights``.

    Keys of the result (sources in the module notes):

    - ``records``: n.
    - ``sample_uniques``: records with fk = 1 (``freqCalc``'s n1).
    - ``expected_reidentifications``: Σ rk (``measure_risk``'s ``global_risk_ER``).
    - ``global_risk_pct``: 100 · Σ rk / n (``global_risk_pct``).
    - ``max_individual_risk``: max rk.
    - ``risky_records``: :func:`risky_records` with sdcMicro's defaults.
    - ``above_threshold``: records with rk > ``threshold`` (``localSupp``'s rule, default 0.15).

    An empty table gives zeros.
    """
    t = float(threshold)
    if not 0.0 <= t <= 1.0:
        raise InvalidParameter(f"threshold={threshold!r} must lie between 0 and 1")
    freq = frequencies(frame, keys, weights, missing=missing)
    rk = individual_risk(freq.fk, freq.Fk)
    n = len(rk)
    return {
        "records": n,
        "sample_uniques": int((freq.fk == 1).sum()),
        "expected_reidentifications": float(rk.sum()),
        "global_risk_pct": 100.0 * float(rk.mean()) if n else 0.0,
        "max_individual_risk": float(rk.max()) if n else 0.0,
        "risky_records": int(risky_records(rk).sum()),
        "above_threshold": int((rk > t).sum()),
    }


def _key_names(frame: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    names = [keys] if isinstance(keys, str) else [str(c) for c in keys]
    if not names:
        raise InvalidParameter("name at least one categorical key variable")
    absent = [c for c in names if c not in frame.columns]
    if absent:
        raise InvalidParameter(f"key variable {absent[0]!r} is not a column of the table")
    return names


def _key_codes(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """(n, k) int64 codes of the key values, equal values equal codes, -1 for a missing value."""
    cols = []
    for c in names:
        codes, _ = pd.factorize(frame[c].reset_index(drop=True), use_na_sentinel=True)
        cols.append(np.asarray(codes, dtype=np.int64))
    return np.column_stack(cols)


def _pair_keys(
    t_rows: np.ndarray, s_rows: np.ndarray, cols: np.ndarray, radix: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One int64 key per row of ``t_rows`` and ``s_rows`` (codes + 1, 0 = missing), equal when
    the rows agree on ``cols``: mixed radix when it fits in 63 bits, else dense ids."""
    span = 1
    for c in cols:
        span *= int(radix[c])
    if span < 2**62:
        t_key = np.zeros(len(t_rows), dtype=np.int64)
        s_key = np.zeros(len(s_rows), dtype=np.int64)
        for c in cols:
            t_key = t_key * int(radix[c]) + t_rows[:, c]
            s_key = s_key * int(radix[c]) + s_rows[:, c]
        return t_key, s_key
    _, _, inverse, _ = unique_rows(np.vstack([t_rows[:, cols], s_rows[:, cols]]))
    return inverse[: len(t_rows)], inverse[len(t_rows) :]


def _matched_sums(
    t_key: np.ndarray, s_key: np.ndarray, f: np.ndarray, F: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each target key, the sums of ``f`` and ``F`` over the sources with that key (the
    smaller side is sorted, the larger searched in it)."""
    if len(t_key) == 0 or len(s_key) == 0:
        return np.zeros(len(t_key)), np.zeros(len(t_key))
    if len(s_key) <= len(t_key):
        uniq, inverse = np.unique(s_key, return_inverse=True)
        sum_f = np.bincount(inverse, weights=f, minlength=len(uniq))
        sum_F = np.bincount(inverse, weights=F, minlength=len(uniq))
        at = np.minimum(np.searchsorted(uniq, t_key), len(uniq) - 1)
        hit = uniq[at] == t_key
        return np.where(hit, sum_f[at], 0.0), np.where(hit, sum_F[at], 0.0)
    uniq, inverse = np.unique(t_key, return_inverse=True)
    at = np.minimum(np.searchsorted(uniq, s_key), len(uniq) - 1)
    hit = uniq[at] == s_key
    sum_f = np.bincount(at[hit], weights=f[hit], minlength=len(uniq))
    sum_F = np.bincount(at[hit], weights=F[hit], minlength=len(uniq))
    return sum_f[inverse], sum_F[inverse]


def _wildcard(
    uniq: np.ndarray, g_f: np.ndarray, g_F: np.ndarray, n: int, total_w: float
) -> tuple[np.ndarray, np.ndarray]:
    """sdcMicro's counting with missing values as wildcards, on the distinct key rows ``uniq``
    (-1: missing) with their counts ``g_f`` and weight sums ``g_F``.

    Groups sharing a pattern of present keys differ on a present key, so they never match each
    other; a group of pattern P takes, from each other pattern Q, the groups that agree with it
    on the keys present in both (one lookup per pair of patterns)."""
    present = uniq >= 0
    k = uniq.shape[1]
    empty = ~present.any(axis=1)
    add_f = np.zeros_like(g_f)
    add_F = np.zeros_like(g_F)
    if k == 1:
        # freqCalc's case of one key variable: the missing ones count for every value.
        add_f[~empty] = g_f[empty].sum()
        add_F[~empty] = g_F[empty].sum()
    else:
        codes = uniq + 1  # 0: missing
        radix = codes.max(axis=0) + 1
        patterns, _, pattern_of, _ = unique_rows(present.astype(np.int8))
        pats = patterns.astype(bool)
        members = [np.flatnonzero(pattern_of == p) for p in range(len(pats))]
        rows = [codes[m] for m in members]
        full = [p for p, pat in enumerate(pats) if pat.all()]
        for p, pat_p in enumerate(pats):
            if pat_p.all() or not pat_p.any():
                continue  # complete: served below from the other side; all missing: fk = n
            t = members[p]
            if full:  # complete groups and this pattern, both ways
                c = full[0]
                cols = np.flatnonzero(pat_p)
                key_c, key_p = _pair_keys(rows[c], rows[p], cols, radix)
                sf, sF = _matched_sums(key_p, key_c, g_f[members[c]], g_F[members[c]])
                add_f[t] += sf
                add_F[t] += sF
                sf, sF = _matched_sums(key_c, key_p, g_f[t], g_F[t])
                add_f[members[c]] += sf
                add_F[members[c]] += sF
            for q, pat_q in enumerate(pats):
                if q == p or pat_q.all():
                    continue  # own pattern never matches; complete ones done above
                s = members[q]
                cols = np.flatnonzero(pat_p & pat_q)
                key_t, key_s = _pair_keys(rows[p], rows[q], cols, radix)
                sf, sF = _matched_sums(key_t, key_s, g_f[s], g_F[s])
                add_f[t] += sf
                add_F[t] += sF
    f = g_f + add_f
    F = g_F + add_F
    f[empty] = n
    F[empty] = total_w
    return f, F
