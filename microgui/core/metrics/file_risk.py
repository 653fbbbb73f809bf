"""Disclosure risk of one table, before any protection (``microgui assess``, the app's Risk view,
and the run report's ``risk_before`` / ``risk_after``).

The figures of the reference workflow's step 2 (``../shared/design/release-workflow.md``), as
sdcMicro computes them (GitHub ``sdcTools/sdcMicro``, GPL-2; formulas transcribed, no code
copied), over the table's *categorical key variables*:

- **k-anonymity on the keys** from the sample frequency fk of each record's key combination
  (``R/freqCalc.r``, ``freqCalc``; :func:`microgui.core.metrics.weighted_risk.frequencies`):
  the smallest fk, the records with fk = 1 and fk = 2 (``print.freqCalc``'s n1 and n2), the
  records and key cells with fk < k. **A missing key value matches any value** (sdcMicro's
  default, ``alpha = 1``), so a suppressed cell lowers the risk; the result says so.
- **Worst key combinations**: the smallest subsets of the key variables (1 to 3 of them) on
  which some combination is already shared by fewer than k records, with the number of such
  cells and of records in them: the variables to recode first (the idea of sdcMicro's
  ``localSuppression(combs=)`` and of mu-Argus' combinations of key variables; counts only).
- **Individual risk** (``R/indivRisk.R``, Benedetti & Franconi 1998) with the survey weights
  when a weight column is tagged; without weights it is 1/fk, the risk of a record when the
  sample is the population. Expected re-identifications Σ rk (``measure_risk``'s
  ``global_risk_ER``), records above 0.1, 0.2, 0.5, and a histogram.
- **Household risk** when a household-id column is tagged (sdcMicro ``measure_risk`` with
  ``hhId``: 1 − Π(1 − rᵢ) over each household's records, and its expected re-identifications):
  :mod:`microgui.core.metrics.household_risk`; ``household_size_key`` adds the size of each
  record's household to the keys.
- **SUDA2** (Manning, Haglin & Keane 2008, "A recursive search algorithm for statistical
  disclosure assessment", Data Min. Knowl. Disc. 16; sdcMicro ``R/suda2.R``):
  :func:`microgui.core.metrics.suda2.suda2`, with its per-variable contributions.
- **l-diversity** of each confidential attribute over the raw key cells (records with the
  same key values, a missing key value matching any value as for fk: Machanavajjhala et al. 2007;
  sdcMicro ``ldiversity``): distinct l (the fewest distinct values in a cell) and the records
  in cells where the attribute takes one value only (attribute disclosure).

Continuous quasi-identifiers enter the keys only when they take few distinct values
(:data:`FEW_VALUES` or fewer): a frequency count over a continuous variable makes almost every
record unique and says nothing the user can act on; the result's ``keys_note`` names those left
out and asks to bin them (or tag them ordinal).

The result holds counts, measures and column names only, never a value of any record.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.metrics.disclosure import attribute_disclosure
from microgui.core.metrics.household_risk import (
    HOUSEHOLD_SIZE_KEY,
    household_codes,
    household_risk_summary,
    household_sizes,
)
from microgui.core.metrics.suda2 import Suda2Result, suda2
from microgui.core.metrics.weighted_risk import frequencies, individual_risk
from microgui.core.table.dataset import numeric_column
from microgui.core.table.numbers import unique_rows
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = [
    "FEW_VALUES",
    "MAX_COMBINATION_SIZE",
    "MAX_WORST",
    "RISK_THRESHOLDS",
    "MISSING_RULE",
    "NoCategoricalKey",
    "assess_risk",
    "choose_keys",
    "format_expected",
    "risk_section",
]

#: A continuous quasi-identifier with at most this many distinct values enters the keys.
FEW_VALUES = 20
#: Subsets of the keys searched for the worst combinations: 1 to this many variables.
MAX_COMBINATION_SIZE = 3
#: Worst combinations listed.
MAX_WORST = 10
#: Individual-risk thresholds whose exceedances are counted.
RISK_THRESHOLDS = (0.1, 0.2, 0.5)
#: Bins of the risk histograms over [0, 1].
_BINS = 20

MISSING_RULE = (
    "a missing key value matches any value (sdcMicro freqCalc's default), so a record with a "
    "missing key counts in every cell it could belong to"
)


class NoCategoricalKey(InvalidParameter):
    """The table has no categorical key variable to count frequencies on."""


def choose_keys(
    frame: pd.DataFrame, roles: RoleMap, keys: Sequence[str] | None = None
) -> tuple[list[str], str]:
    """The key variables and a sentence saying which quasi-identifiers entered and why.

    ``keys`` given: those columns (each must be a column of ``frame``). Otherwise the nominal and
    ordinal quasi-identifiers, and the continuous ones with at most :data:`FEW_VALUES` distinct
    values. Raises :class:`NoCategoricalKey` when none is left.
    """
    if keys is not None:
        names = [str(c) for c in ([keys] if isinstance(keys, str) else keys)]
        absent = [c for c in names if c not in frame.columns]
        if absent:
            raise InvalidParameter(f"key variable {absent[0]!r} is not a column of the table")
        if not names:
            raise NoCategoricalKey("no key variable given; name at least one")
        return list(dict.fromkeys(names)), "key variables chosen by the caller"
    chosen: list[str] = []
    few: list[str] = []
    text: list[str] = []
    left_out: list[str] = []
    for col in roles.quasi_identifiers:
        if col not in frame.columns:
            raise InvalidParameter(f"quasi-identifier {col!r} is not a column of the table")
        if roles[col].kind is not AttributeKind.CONTINUOUS:
            chosen.append(col)
        else:
            values = _numbers(frame, col)
            if values is None:
                chosen.append(col)  # text cannot be measured as a continuous variable
                text.append(col)
            elif _few_distinct(values):
                chosen.append(col)
                few.append(col)
            else:
                left_out.append(col)
    parts = []
    n_cat = len(chosen) - len(few) - len(text)
    parts.append(f"{n_cat} nominal/ordinal quasi-identifier(s) enter the keys")
    if text:
        parts.append(f"{_names(text)} tagged continuous but holding text enter(s) as categories")
    if few:
        parts.append(f"continuous {_names(few)} enter(s) too: at most {FEW_VALUES} distinct values")
    if left_out:
        parts.append(
            f"continuous {_names(left_out)} left out: more than {FEW_VALUES} distinct values "
            "make almost every record unique; bin them (or tag them ordinal) to count them"
        )
    note = "; ".join(parts)
    if not chosen:
        raise NoCategoricalKey(
            "no categorical key: tag a quasi-identifier nominal or ordinal, or bin a continuous "
            f"one to at most {FEW_VALUES} values" + (f" ({note})" if left_out else "")
        )
    return chosen, note


def _numbers(frame: pd.DataFrame, col: str) -> np.ndarray | None:
    """The column as numbers (readers keep text: "39"), or None when it holds text."""
    try:
        return numeric_column(frame, col)
    except InvalidInput:
        return None


def _few_distinct(values: np.ndarray) -> bool:
    """Whether ``values`` hold at most :data:`FEW_VALUES` distinct numbers (missing cells
    aside). A head of the column decides when it already holds more (issue 33: every
    continuous quasi-identifier was hashed whole, 0.015 s a column of 100,000 under load, to
    learn what its first values showed)."""
    head = values[: 64 * (FEW_VALUES + 1)]
    if pd.Series(head).nunique(dropna=True) > FEW_VALUES:
        return False
    return int(pd.Series(values).nunique(dropna=True)) <= FEW_VALUES


def _names(cols: Sequence[str]) -> str:
    return ", ".join(repr(c) for c in cols)


def _histogram(values: np.ndarray) -> dict[str, list[float] | list[int]]:
    edges = np.linspace(0.0, 1.0, _BINS + 1)
    counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=edges)
    return {"edges": [round(float(e), 6) for e in edges], "counts": [int(c) for c in counts]}


def _key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """(n, len(keys)) int64 codes, equal values equal codes, -1 for a missing value."""
    if not len(frame):
        return np.zeros((0, len(keys)), dtype=np.int64)
    return np.column_stack(
        [pd.factorize(frame[c].reset_index(drop=True))[0].astype(np.int64) for c in keys]
    )


def _cells_below(
    frame: pd.DataFrame, codes: np.ndarray, cols: Sequence[int], keys: Sequence[str], k: int
) -> tuple[int, int]:
    """(key cells with fk < k, records in them) over the key columns ``cols`` (positions in
    ``keys``; a missing value matches anything, through :func:`frequencies`)."""
    sub = codes[:, list(cols)]
    radix = [int(sub[:, j].max()) + 1 for j in range(sub.shape[1])]
    if (sub < 0).any():
        fk = frequencies(frame, [keys[c] for c in cols], missing="any").fk
    elif float(np.prod(np.asarray(radix, dtype=np.float64))) < 2.0**62:
        # no missing value: one mixed-radix code per record, counted directly
        combined = np.zeros(len(sub), dtype=np.int64)
        for j, r in enumerate(radix):
            combined = combined * r + sub[:, j]
        _, inverse, counts = np.unique(combined, return_inverse=True, return_counts=True)
        fk = counts[inverse.reshape(-1)]
    else:
        _, _, inverse, counts = unique_rows(sub)
        fk = np.asarray(counts)[np.asarray(inverse)]
    below = fk < k
    if not below.any():
        return 0, 0
    return int(len(unique_rows(sub[below])[0])), int(below.sum())


def _worst_combinations(
    frame: pd.DataFrame, codes: np.ndarray, keys: Sequence[str], k: int
) -> list[dict[str, Any]]:
    """The minimal subsets of ``keys`` (1 to :data:`MAX_COMBINATION_SIZE` variables) on which
    some cell holds fewer than ``k`` records, most records below k first."""
    if k <= 1 or not len(frame):
        return []
    found: list[tuple[tuple[int, ...], int, int]] = []
    breaking: list[frozenset[int]] = []
    for size in range(1, min(MAX_COMBINATION_SIZE, len(keys)) + 1):
        for subset in itertools.combinations(range(len(keys)), size):
            if any(b <= set(subset) for b in breaking):
                continue  # not minimal: a smaller subset breaks k already
            cells, records = _cells_below(frame, codes, subset, keys, k)
            if cells:
                breaking.append(frozenset(subset))
                found.append((subset, cells, records))
    found.sort(key=lambda t: (len(t[0]), -t[2], -t[1]))
    return [
        {"columns": [keys[c] for c in cols], "cells_below_k": cells, "records_below_k": records}
        for cols, cells, records in found[:MAX_WORST]
    ]


def _k_anonymity(frame: pd.DataFrame, keys: list[str], fk: np.ndarray, k: int) -> dict[str, Any]:
    n = len(fk)
    below = fk < k
    codes = _key_codes(frame, keys)
    cells_below = len(unique_rows(codes[below])[0]) if below.any() else 0
    missing = int((codes < 0).any(axis=1).sum()) if n else 0
    return {
        "level": int(fk.min()) if n else 0,
        "records_in_cells_of_size_1": int((fk == 1).sum()),
        "records_in_cells_of_size_2": int((fk == 2).sum()),
        "records_below_k": int(below.sum()),
        "cells_below_k": int(cells_below),
        "records_with_missing_key": missing,
        "missing_rule": MISSING_RULE,
        # no cell below k on all the keys: none on fewer (a subset's cells are unions of them)
        "worst_combinations": _worst_combinations(frame, codes, keys, k) if below.any() else [],
        "worst_combinations_rule": (
            f"the smallest sets of 1 to {MAX_COMBINATION_SIZE} key variables on which a "
            f"combination is shared by fewer than k records (at most {MAX_WORST}; sets "
            "containing a listed set are left out)"
        ),
    }


def _individual_risk(rk: np.ndarray, method: str, weight: str | None) -> dict[str, Any]:
    n = len(rk)
    return {
        "method": method,
        "weighted": weight is not None,
        "mean": float(rk.mean()) if n else 0.0,
        "max": float(rk.max()) if n else 0.0,
        "expected_reidentifications": float(rk.sum()),
        "records_above": {str(t): int((rk > t).sum()) for t in RISK_THRESHOLDS},
        "histogram": _histogram(rk),
    }


def _risks(
    frame: pd.DataFrame, keys: list[str], weight: str | None, fk: np.ndarray
) -> tuple[np.ndarray, str]:
    """The individual risk of every record and a sentence saying how it was computed."""
    if weight is not None:
        freq = frequencies(frame, keys, weight, missing="any")
        rk = individual_risk(freq.fk, freq.Fk)
        method = (
            f"survey-weighted individual risk (sdcMicro indivRisk, Benedetti & Franconi 1998) "
            f"with weight column {weight!r}"
        )
    else:
        rk = individual_risk(fk, fk.astype(np.float64)) if len(fk) else np.zeros(0)
        method = "1/fk: no weight column is tagged, so the sample is taken as the population"
    return rk, method


def _household_size_key(
    frame: pd.DataFrame, codes: np.ndarray, keys: list[str], note: str
) -> tuple[pd.DataFrame, list[str], str]:
    """``frame`` with the number of records of each record's household as one more key
    (``--household-size-key``; sdcMicro's examples add it as a key variable by hand)."""
    name = HOUSEHOLD_SIZE_KEY
    while name in frame.columns:
        name = f"{name} (derived)"
    frame = frame.assign(**{name: household_sizes(codes)})
    return frame, [*keys, name], f"{note}; the household size enters the keys as {name!r}"


def _finite(x: float) -> float | None:
    return x if np.isfinite(x) else None


def _suda2(
    frame: pd.DataFrame, keys: list[str], max_size: int | None, no_unique: bool
) -> dict[str, Any]:
    """``no_unique``: no record is unique on all the keys and none has a missing key value, so
    no record has a minimal sample unique (an MSU is a set of a sample unique's values): every
    score is 0 without the search (a k-anonymous release; :func:`suda2` gives the same)."""
    if no_unique:
        zeros = np.zeros(len(frame))
        res = Suda2Result(
            tuple(keys), int(max_size or len(keys)), 0.01, zeros, zeros,
            np.zeros(len(frame), dtype=np.int64), dict.fromkeys(keys, 0.0), 0.0,
        )  # fmt: skip
    else:
        res = suda2(frame, keys, max_size=max_size)
    score = np.asarray(res.score, dtype=np.float64)
    dis = np.asarray(res.dis_score, dtype=np.float64)
    positive = score[score > 0]  # the records with an MSU: the others all score 0
    top = float(positive.max()) if len(positive) else 1.0
    edges = np.linspace(0.0, top, _BINS + 1)
    counts, _ = np.histogram(positive, bins=edges)
    contributions = sorted(res.contributions.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return {
        "contributions": {str(c): float(v) for c, v in contributions},
        "records_with_msu": int((score > 0).sum()),
        "score_mean": float(score.mean()) if len(score) else 0.0,
        "score_max": float(score.max()) if len(score) else 0.0,
        # None when sdcMicro's formula is undefined (U = 0 in Dis: 0/0; see suda2's notes)
        "dis_score_mean": _finite(float(dis.mean())) if len(dis) else 0.0,
        "dis_score_max": _finite(float(dis.max())) if len(dis) else 0.0,
        "score_histogram": {  # over the records with a minimal sample unique
            "edges": [float(e) for e in edges],
            "counts": [int(c) for c in counts],
        },
        "max_size": int(res.max_size),
        "dis_fraction": float(res.dis_fraction),
        "seconds": round(float(res.seconds), 4),
        "reference": "Manning, Haglin & Keane 2008; sdcMicro suda2",
    }


def _l_diversity(
    frame: pd.DataFrame, keys: list[str], confidential: Sequence[str], roles: RoleMap
) -> dict[str, dict[str, Any]]:
    """Per confidential attribute over the raw key cells (identical key values, a missing key
    value matching any value, the rule of fk above and of the release check):
    :func:`~microgui.core.metrics.disclosure.
    attribute_disclosure`, the same figures the run's verdict uses (distinct and entropy
    l-diversity, t-closeness, records and cells where the attribute takes one value)."""
    if not confidential:
        return {}
    kinds = {c: roles[c].kind for c in confidential if c in roles}
    return attribute_disclosure(frame, keys, list(confidential), kinds, missing_matches_any=True)


def assess_risk(
    frame: pd.DataFrame,
    roles: RoleMap,
    *,
    k: int = 3,
    keys: Sequence[str] | None = None,
    max_suda_size: int | None = None,
    suda: bool = True,
    household_size_key: bool = False,
) -> dict[str, Any]:
    """The disclosure risk of ``frame`` on its categorical key variables (see the module notes).

    Parameters
    ----------
    frame
        The table (original or released).
    roles
        Its roles: the quasi-identifiers give the keys (unless ``keys``), the confidential
        columns the l-diversity, the weight column (if any) the weighted individual risk.
    k
        The k of the k-anonymity counts (records and cells below k, worst combinations).
    keys
        The key variables; None: chosen by :func:`choose_keys`.
    max_suda_size
        SUDA2's largest minimal-sample-unique size (None: its default).
    suda
        False leaves SUDA2 out (``suda2`` is then None).
    household_size_key
        Add the size of each record's household (its household-id column, which ``roles``
        must tag) to the keys.

    Returns a JSON-ready dict: ``keys``, ``keys_note``, ``n_records``, ``k``, ``k_anonymity``,
    ``individual_risk``, ``household_risk`` (None without a household-id column:
    :func:`~microgui.core.metrics.household_risk.household_risk_summary`), ``suda2``,
    ``l_diversity``, ``seconds``. Raises
    :class:`NoCategoricalKey` when there is no key variable, :class:`InvalidParameter` for an
    unknown column or a k below 1.
    """
    start = time.perf_counter()
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or int(k) < 1:
        raise InvalidParameter(f"k={k!r} must be a whole number of at least 1")
    k = int(k)
    frame = frame.reset_index(drop=True)
    chosen, note = choose_keys(frame, roles, keys)
    household = roles.household if roles.household in frame.columns else None
    codes = household_codes(frame, household) if household is not None else None
    if household_size_key:
        if codes is None:
            raise InvalidParameter(
                "the household-size key needs a household-id column: tag one (--household COL)"
            )
        frame, chosen, note = _household_size_key(frame, codes, chosen, note)
    for col in chosen:
        # a continuous key with few values is counted on its numbers: "39" and "39.0" are one
        if col in roles and roles[col].kind is AttributeKind.CONTINUOUS:
            values = _numbers(frame, col)
            if values is not None:
                frame = frame.assign(**{col: values})
    fk = frequencies(frame, chosen, missing="any").fk
    missing = bool(frame[chosen].isna().to_numpy().any())
    weight = roles.weight if roles.weight in frame.columns else None
    confidential = [c for c in roles.confidential if c in frame.columns and c not in chosen]
    rk, method = _risks(frame, chosen, weight, fk)
    out: dict[str, Any] = {
        "keys": chosen,
        "keys_note": note,
        "n_records": int(len(frame)),
        "k": k,
        "k_anonymity": _k_anonymity(frame, chosen, fk, k),
        "individual_risk": _individual_risk(rk, method, weight),
        "household_risk": (
            household_risk_summary(rk, codes, household)
            if codes is not None and household is not None
            else None
        ),
        "suda2": (
            _suda2(frame, chosen, max_suda_size, no_unique=bool(fk.min() >= 2) and not missing)
            if suda and len(frame)
            else None
        ),
        "l_diversity": _l_diversity(frame, chosen, confidential, roles),
    }
    out["seconds"] = round(time.perf_counter() - start, 4)
    return out


def risk_section(
    frame: pd.DataFrame,
    roles: RoleMap,
    *,
    k: int,
    keys: Sequence[str] | None = None,
    suda: bool = True,
    household_size_key: bool = False,
) -> dict[str, Any]:
    """:func:`assess_risk` for a run report: a table without a categorical key gets
    ``{"keys": [], "keys_note": why}`` instead of an error."""
    try:
        return assess_risk(
            frame, roles, k=k, keys=keys, suda=suda, household_size_key=household_size_key
        )
    except NoCategoricalKey as exc:
        return {"keys": [], "keys_note": str(exc)}
    except InvalidInput:
        # a table the run could protect but the risk cannot read (e.g. survey weights that sum
        # below their records' count, which indivRisk refuses): the run is not failed for its
        # report; the note says where to find the reason (its message may quote a weight)
        return {
            "keys": [],
            "keys_note": "not measured: the risk of this table could not be computed "
            "(run microgui assess on it for the reason)",
        }


def format_expected(value: float) -> str:
    """An expected number of re-identifications as shown to the user: three significant digits
    below 100 ("0.116", "0.0862", "12.3"), one decimal with thousands separators from 100 on
    ("1,234.5"). One decimal everywhere showed 0.116 and 0.086 both as "0.1": a run that cut
    the expected re-identifications by a quarter seemed to change nothing (issue 30)."""
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}"
