"""Key frequencies where a missing cell matches any value (sdcMicro's convention).

sdcMicro counts the frequency of a record's key combination with missing values matching
anything (``freqCalc``/``measure_risk``, see ``sdcTools/sdcMicro`` ``R/freqCalc.R`` and the
guidelines' section on local suppression): a record whose cell was suppressed to missing is
counted with every record that agrees with it on its other keys, so a suppression lowers the
risk. Record *j* counts for record *i* when, on every key, the two agree or either is missing.

The count is exact and needs no pairwise pass over the records: records are first reduced to
their distinct key combinations (:func:`distinct_rows`), and combinations are grouped by their
*pattern* (which keys are missing). For two patterns *p* and *q*, the combinations of *q*
compatible with one of *p* are those equal to it on the keys present in both, so one group count
per pair of patterns gives every count: O(P² · D) for P patterns and D distinct combinations (a
few patterns after a local suppression on a handful of keys).

This is the one implementation (issue 31 review): :func:`wildcard_counts` on integer codes is
what local suppression (:mod:`microgui.core.methods.local_suppression`) counts with, and
:func:`frequencies_missing_any` (a table's key columns) what the plan's figures and the release
check count with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "compatible_value_counts",
    "key_codes",
    "frequencies_missing_any",
    "k_anonymity_missing_any",
    "wildcard_counts",
    "wildcard_counts_weighted",
    "distinct_rows",
]


def _codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Integer codes of the key columns, -1 where missing."""
    out = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, col in enumerate(keys):
        codes, _uniques = pd.factorize(frame[col], use_na_sentinel=True)
        out[:, j] = codes
    return out


def _combined_key(block: np.ndarray) -> np.ndarray:
    """One int64 per row of ``block`` (codes >= 0), equal iff the rows are equal."""
    key = np.zeros(block.shape[0], dtype=np.int64)
    span = 1
    for col in block.T:
        card = int(col.max()) + 1 if col.size else 1
        if span * card >= 2**62:  # re-densify before it would overflow
            key = np.unique(key, return_inverse=True)[1].astype(np.int64).reshape(-1)
            span = int(key.max()) + 1 if key.size else 1
        key = key * card + col
        span *= card
    return key


def wildcard_counts_weighted(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Cell size of each row of ``x`` (codes, -1 missing) among the rows weighted by ``weight``.

    For a pattern P and every pattern Q, the rows of Q compatible with a row of P are those
    equal to it on the keys present in both (S = P & Q); the patterns Q sharing the same S are
    counted together, on dense codes of the S-columns (one ``np.unique`` per S, cached), by one
    ``bincount``: no sort per pair of patterns.
    """
    n, m = x.shape
    f = np.zeros(n, dtype=np.int64)
    if n == 0:
        return f
    present = x >= 0
    pattern = (present * (1 << np.arange(m, dtype=np.int64))).sum(axis=1)
    patterns, inverse = np.unique(pattern, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(patterns) + 1))
    members = [order[bounds[p] : bounds[p + 1]] for p in range(len(patterns))]
    safe = np.where(present, x, 0).astype(np.int64)
    w = np.asarray(weight, dtype=np.float64)
    mass = np.array([w[rows].sum() for rows in members])
    dense: dict[int, tuple[np.ndarray, int]] = {}
    for pi, pp in enumerate(patterns):
        rows_p = members[pi]
        groups: dict[int, list[int]] = {}
        for qi, qq in enumerate(patterns):
            groups.setdefault(int(pp) & int(qq), []).append(qi)
        total = np.zeros(len(rows_p))
        for shared, qis in groups.items():
            if shared == 0:  # every row of these patterns matches every row of P
                total += mass[qis].sum()
                continue
            got = dense.get(shared)
            if got is None:
                key = _combined_key(safe[:, [b for b in range(m) if shared >> b & 1]])
                uniq, code = np.unique(key, return_inverse=True)
                got = (code.reshape(-1), len(uniq))
                dense[shared] = got
            code, size = got
            rows_q = members[qis[0]] if len(qis) == 1 else np.concatenate([members[q] for q in qis])
            sums = np.bincount(code[rows_q], weights=w[rows_q], minlength=size)
            total += sums[code[rows_p]]
        f[rows_p] = np.rint(total).astype(np.int64)
    return f


def distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``codes``, each row's entry and the records per entry."""
    if codes.shape[0] == 0:
        return codes.copy(), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # one int64 per row (np.unique(axis=0) sorts rows as bytes: 10x slower here)
    _, first, inverse, counts = np.unique(
        _combined_key(codes + 1), return_index=True, return_inverse=True, return_counts=True
    )
    return codes[first], inverse.reshape(-1).astype(np.int64), counts.astype(np.int64)


def wildcard_counts(codes: np.ndarray, cols: Sequence[int] | np.ndarray) -> np.ndarray:
    """Cell size of every row of ``codes`` on the keys ``cols``, a missing code (-1) matching
    anything (sdcMicro ``freqCalc`` with ``alpha = 1``).

    Rows are grouped by their pattern of present keys; the rows of patterns P and Q match exactly
    when they agree on the keys present in both, so each pair of patterns is one group count on
    those keys: O(patterns² · distinct rows), not O(n²).
    """
    x = np.ascontiguousarray(codes[:, list(cols)])
    unique, inverse, counts = distinct_rows(x)
    sizes: np.ndarray = wildcard_counts_weighted(unique, counts)[inverse]
    return sizes


def frequencies_missing_any(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """For each record, how many records (itself included) match its key combination when a
    missing cell matches any value; without missing cells, the plain frequency
    (:func:`wildcard_counts` on the key columns' codes)."""
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not keys:
        return np.full(n, n, dtype=np.int64)
    return wildcard_counts(_codes(frame, list(keys)), range(len(keys)))


def k_anonymity_missing_any(frame: pd.DataFrame, keys: Sequence[str]) -> int:
    """The smallest :func:`frequencies_missing_any` of the table (0 for an empty table)."""
    if len(frame) == 0:
        return 0
    return int(frequencies_missing_any(frame, keys).min())


def key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Integer codes of the key columns (n x keys), -1 where missing; cells pandas cannot hash
    (lists, structs) are compared as their JSON text."""
    from microgui.core.table.column_types import json_cell

    out = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, col in enumerate(keys):
        series = frame[col].reset_index(drop=True)
        try:
            codes, _uniques = pd.factorize(series, use_na_sentinel=True)
        except (TypeError, NotImplementedError):
            codes, _uniques = pd.factorize(series.map(json_cell, na_action="ignore"))
        out[:, j] = codes
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
