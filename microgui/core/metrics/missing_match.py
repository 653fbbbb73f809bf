"""Key frequencies where a missing cell matches any value (sdcMicro's convention).

sdcMicro counts the frequency of a record's key combination with missing values matching
anything (``freqCalc``/``measure_risk``, see ``sdcTools/sdcMicro`` ``R/freqCalc.R`` and the
guidelines' section on local suppression): a record whose cell was suppressed to missing is
counted with every record that agrees with it on its other keys, so a suppression lowers the
risk. Record *j* counts for record *i* when, on every key, the two agree or either is missing.

The count is exact and needs no pairwise pass over the records: records are first reduced to
their distinct key combinations, and combinations are grouped by their *pattern* (which keys are
missing). For two patterns *p* and *q*, the combinations of *q* compatible with one of *p* are
those equal to it on the keys present in both, so one group-by per pair of patterns gives every
count: O(P² · D) for P patterns and D distinct combinations (a few patterns after a local
suppression on a handful of keys), each pair a ``bincount`` over projections computed once per
set of common keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from microgui.core.table.numbers import unique_rows

__all__ = ["frequencies_missing_any", "k_anonymity_missing_any"]


def _codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Integer codes of the key columns, -1 where missing."""
    out = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, col in enumerate(keys):
        codes, _uniques = pd.factorize(frame[col], use_na_sentinel=True)
        out[:, j] = codes
    return out


def _ids_on(combos: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Group ids of the distinct combinations projected on ``columns`` (equal projection, equal
    id): one mixed-radix integer per row when it fits in 62 bits, else rows compared whole."""
    part = combos[:, columns] + 1  # -1 (missing) becomes 0: one more value
    radix = part.max(axis=0) + 1 if len(part) else np.ones(len(columns), dtype=np.int64)
    if float(np.prod(radix.astype(float))) < 2.0**62:
        key = np.zeros(len(part), dtype=np.int64)
        for j in range(part.shape[1]):
            key = key * int(radix[j]) + part[:, j]
        return np.unique(key, return_inverse=True)[1].reshape(-1)
    inverse: np.ndarray = unique_rows(part)[2]
    return inverse


def frequencies_missing_any(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """For each record, how many records (itself included) match its key combination when a
    missing cell matches any value; without missing cells, the plain frequency."""
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not keys:
        return np.full(n, n, dtype=np.int64)
    codes = _codes(frame, list(keys))
    combos, _first, inverse, counts = unique_rows(codes)
    present = combos >= 0
    patterns, _first, pattern_of, _counts = unique_rows(present)
    freq = np.zeros(len(combos), dtype=np.int64)
    members = [np.flatnonzero(pattern_of == p) for p in range(len(patterns))]
    ids_by_common: dict[bytes, np.ndarray] = {}  # one projection per set of common keys
    for p, rows_p in enumerate(members):
        for q, rows_q in enumerate(members):
            both = patterns[p] & patterns[q]
            if not both.any():  # nothing to disagree on: every record of q matches
                freq[rows_p] += int(counts[rows_q].sum())
                continue
            tag = both.tobytes()
            ids = ids_by_common.get(tag)
            if ids is None:
                ids = ids_by_common[tag] = _ids_on(combos, np.flatnonzero(both))
            sums = np.bincount(ids[rows_q], weights=counts[rows_q], minlength=int(ids.max()) + 1)
            freq[rows_p] += sums[ids[rows_p]].astype(np.int64)
    per_record: np.ndarray = freq[inverse]
    return per_record


def k_anonymity_missing_any(frame: pd.DataFrame, keys: Sequence[str]) -> int:
    """The smallest :func:`frequencies_missing_any` of the table (0 for an empty table)."""
    if len(frame) == 0:
        return 0
    return int(frequencies_missing_any(frame, keys).min())
