"""Household (hierarchical) disclosure risk, as sdcMicro computes it (issue 31 item 5).

The persons of one household are released together: whoever re-identifies one of them learns the
household, and so every member. sdcMicro's ``measure_risk`` with a household id (``hhId`` of
``createSdcObj``; GitHub ``sdcTools/sdcMicro``, GPL-2, ``R/measure_risk.R``,
``measure_riskWORK``, its default ``fast_hier = TRUE`` branch; formula transcribed, no code
copied) gives each record the risk of its household

    r_h = 1 − Π_{i ∈ h} (1 − r_i)

over the household's persons, from their individual risks r_i (``indivRisk``, the figures of
:func:`microgui.core.metrics.weighted_risk.individual_risk`: survey-weighted when a weight column
is tagged, else 1/fk), i.e. the probability that at least one member is re-identified when the
members' re-identifications are independent. From it:

- ``hier_risk_ER`` (here ``expected_reidentifications``): Σ r_h over the **records** (a
  household's risk counted once per member, as sdcMicro sums its ``Res[, "hier_risk"]`` column);
- ``hier_risk`` = hier_risk_ER / n (here ``mean``) and ``hier_risk_pct`` (``pct``).

We add counts sdcMicro does not print (households, their sizes, records above the thresholds
of the individual risk) and ``expected_households``: Σ r_h over the households (each counted
once), the expected number of households re-identified.

The product is taken in the records' input order within a household, as R's ``prod`` over
``by()``'s groups of the stably sorted ids, so the figures agree with sdcMicro's to the last bit
or close to it. sdcMicro's exact C++ path (``fast_hier = FALSE``, ``measure_hierachical``) is
not used by ``measure_risk`` by default and is not implemented.

A record without a household id is refused (sdcMicro gives it no household risk and leaves it
out of the sum, silently). Two degenerate ids are accepted with a note, since the figures are
still defined but the column is most likely not a household id: every household of one record
(the household risk is then the individual risk), and all records in one household (its risk is
the risk that anyone in the file is re-identified).

The result holds counts, measures and column names only, never an id or a value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.table.dataset import is_missing, rows_text

__all__ = [
    "HOUSEHOLD_SIZE_KEY",
    "household_codes",
    "household_sizes",
    "household_risk",
    "household_risk_summary",
]

#: The name of the household-size key column (``--household-size-key``), made unique if taken.
HOUSEHOLD_SIZE_KEY = "household size"

_THRESHOLDS = (0.1, 0.2, 0.5)
_BINS = 20


def household_codes(frame: pd.DataFrame, column: str) -> np.ndarray:
    """One int64 code per record, equal for the records of one household (``column``'s values).

    Raises :class:`InvalidInput` naming the column and the first rows when an id is missing.
    """
    if column not in frame.columns:
        raise InvalidInput(f"the household-id column {column!r} is not a column of the table")
    values = frame[column].reset_index(drop=True)
    missing = np.flatnonzero(np.asarray(is_missing(values), dtype=bool))
    if len(missing):
        raise InvalidInput(
            f"the household-id column {column!r} is missing in {len(missing):,} record(s) "
            f"({rows_text(frame, missing[:3])}); give every record its household's id"
        )
    codes, _ = pd.factorize(values, sort=False)
    return np.asarray(codes, dtype=np.int64)


def household_sizes(codes: np.ndarray) -> np.ndarray:
    """Per record, the number of records of its household (the household-size key)."""
    codes = np.asarray(codes, dtype=np.int64)
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(codes)
    out: np.ndarray = counts[codes].astype(np.int64)
    return out


def household_risk(rk: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per record, the risk of its household: 1 − Π (1 − r_i) over the household's records.

    ``rk``: the individual risks in [0, 1]; ``codes``: the households
    (:func:`household_codes`). sdcMicro ``measure_risk`` (``fast_hier``) as in the module notes.
    """
    r = np.asarray(rk, dtype=np.float64).reshape(-1)
    c = np.asarray(codes, dtype=np.int64).reshape(-1)
    if r.shape != c.shape:
        raise ValueError(f"{len(r)} risks and {len(c)} household codes")
    if not len(r):
        return np.zeros(0, dtype=np.float64)
    order = np.argsort(c, kind="stable")  # input order kept inside a household, as R's by()
    sorted_codes = c[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    # a left-to-right product per household, as R's prod
    kept = np.multiply.reduceat(1.0 - r[order], starts)
    per_household = np.empty(int(c.max()) + 1, dtype=np.float64)
    per_household[sorted_codes[starts]] = 1.0 - kept
    out: np.ndarray = per_household[c]
    return out


def _histogram(values: np.ndarray) -> dict[str, list[float] | list[int]]:
    edges = np.linspace(0.0, 1.0, _BINS + 1)
    counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=edges)
    return {"edges": [round(float(e), 6) for e in edges], "counts": [int(x) for x in counts]}


def household_risk_summary(rk: np.ndarray, codes: np.ndarray, column: str) -> dict[str, Any]:
    """The household-risk figures of a table (JSON-ready; counts and measures only).

    Keys: ``column``, ``households``, ``household_size`` (min, mean, max), ``mean``
    (sdcMicro's ``hier_risk``), ``pct`` (``hier_risk_pct``), ``max``,
    ``expected_reidentifications`` (``hier_risk_ER``: over the records),
    ``expected_households`` (over the households), ``records_above`` {threshold: records},
    ``histogram``, ``method``, and ``note`` (None, or why the column looks like no household id).
    """
    hr = household_risk(rk, codes)
    n = len(hr)
    c = np.asarray(codes, dtype=np.int64)
    counts = np.bincount(c) if n else np.zeros(0, dtype=np.int64)
    counts = counts[counts > 0]
    households = int(len(counts))
    firsts = np.unique(c, return_index=True)[1] if n else np.zeros(0, dtype=np.int64)
    note = None
    if n > 1 and households == n:
        note = (
            f"every household of {column!r} has one record: the household risk equals the "
            "individual risk; check that the column is the household id"
        )
    elif n > 1 and households == 1:
        note = (
            f"all {n:,} records are one household of {column!r}: its risk is the risk that any "
            "record of the file is re-identified, and the random order cannot shuffle the "
            "records; check that the column is the household id"
        )
    return {
        "column": column,
        "households": households,
        "household_size": {
            "min": int(counts.min()) if households else 0,
            "mean": float(counts.mean()) if households else 0.0,
            "max": int(counts.max()) if households else 0,
        },
        "mean": float(hr.mean()) if n else 0.0,
        "pct": 100.0 * float(hr.mean()) if n else 0.0,
        "max": float(hr.max()) if n else 0.0,
        "expected_reidentifications": float(hr.sum()),
        "expected_households": float(hr[firsts].sum()) if n else 0.0,
        "records_above": {str(t): int((hr > t).sum()) for t in _THRESHOLDS},
        "histogram": _histogram(hr),
        "method": (
            "1 − Π(1 − r) over each household's records of their individual risks r "
            "(sdcMicro measure_risk with hhId, hier_risk)"
        ),
        "note": note,
    }
