"""SUDA2: minimal sample uniques, SUDA and DIS-SUDA scores, per-variable contributions.

A *minimal sample unique* (MSU) of a record is a set of its key values that no other record of
the sample shares (a sample unique) and none of whose proper subsets is unique (Elliot, Manning
& Ford 2002; Manning, Haglin & Keane, "A recursive search algorithm for statistical disclosure
assessment", Data Min Knowl Disc 16 (2008) 165-196, §2). :func:`suda2` finds every MSU of every
record up to a maximum size and scores the records as sdcMicro's ``suda2`` does (R/suda2.R and
src/Suda2.h of sdcTools/sdcMicro, commit cf32510, version 5.8.1, ``original_scores = TRUE``):

* **SUDA score** (Elliot et al., "SUDA: a program for detecting special uniques"): an MSU of
  size ``k`` scores ``prod_{i=k}^{M-1} (ATT - i)`` where ``ATT`` is the number of key variables
  and ``M`` the maximum MSU size; sdcMicro always searches ``M = ATT``, so the weight is
  ``(ATT - k)!`` (``g_ab`` in Suda2.h). A record's score is the sum over its MSUs.
* **DIS-SUDA score**: ``Dis = U f / (U f + P (1 - f))`` (``U`` sample uniques, ``P`` records in
  pairs, ``f`` = ``dis_fraction``), ``Q = 1 + (8 - ATT) / 20``, and per record with a positive
  score ``1 / (1 + (U / Dis - U) / (score^Q * sum_j score_j^-Q))``, else 0.
* **Contributions** (``$attribute_contributions``): each MSU adds its weight to each of its
  variables in the record's row; a variable's contribution is 100 × its column total over the
  total score. Rows of these sum to more than 100 (an MSU of size 2 credits both variables).

Where sdcMicro departs from the papers, this module follows sdcMicro (the issue's target is
equality with it) and says so here:

1. **Fewer than three keys.** The C++ needs ``ATT >= 3``; R/suda2.R pads one or two key columns
   with constant columns, so ``ATT`` in the weights and in ``Q`` is 3 for 1 or 2 keys.
2. **Correlated items and the contributions.** Suda2.h folds *correlated* items — values of two
   variables held by exactly the same records (``CorrelateItem``) — into one representative (the
   value of the first such variable) and multiplies the MSU counts back, which keeps the MSU
   counts and scores exact. The per-variable credit is not spread back the same way: for an
   MSU of size ≥ 3 only the representative variables are credited, each with
   ``(product of the class sizes) × weight``; for an MSU ``{a, b}`` of size 2, ``a`` is credited
   ``|class(b)| × weight``, ``b`` ``|class(a)| × weight`` and every other member of either class
   ``weight`` once. :func:`suda2` credits the same way, so the contributions equal sdcMicro's.
3. **U of the DIS score** counts only the sample uniques that are alone in their bucket of
   Suda2.h's 16-bit row hash (a unique record sharing a bucket with another row is missed:
   ``else if (k == g_NbPerHash[i])`` never holds). :func:`suda2` computes the same hash on the
   values sdcMicro would see (see *Values* below) and counts ``U`` the same way; ``P`` is
   2 × the number of rows present exactly twice. ``Dis``, ``Q`` and ``U / Dis - U`` are single
   precision (``float`` in Suda2.h), as there.
4. **No unique record** (total score 0): sdcMicro's contributions are 0/0 = NaN; here they are 0.

Values. sdcMicro's C++ works on integers: R passes numbers as they are (cast to ``int``) and
factors as their level codes 1..L. Here an integer-valued numeric column keeps its values; any
other column (text, categories, booleans, fractional numbers) is coded 1..L in the order of its
sorted distinct values (a pandas ``Categorical`` in its category order), like an R factor. Only
the DIS score's ``U`` (point 3) depends on the codes; MSUs and SUDA scores do not.

Missing values (``missing``):

* ``"match"`` (default, sdcMicro's treatment): R/suda2.R recodes NA to the ``missing`` code
  (-999) and Suda2.h never makes an item of it, so a missing cell is never part of an MSU; when
  records are compared, a missing cell equals another missing cell and no value. A record with a
  missing cell in variable ``v`` has MSUs only among the variables it has.
* ``"category"``: a missing cell is one more value of the variable, which can be part of an MSU.

``max_size`` (sdcMicro has no such argument: R passes ``ncol`` and Suda2.h searches all sizes)
limits the search to MSUs of at most that many variables, as the papers' ``M``; the weights are
then ``prod_{i=k}^{M-1}(ATT - i)`` (the SDC guidelines' formula, equal to sdcMicro's at
``M = ATT``) and records whose smallest MSU is larger score 0.

Method. Only a record unique on all keys can have an MSU, and uniqueness is monotone (a record
unique on a set is unique on every superset), so a set ``s`` is an MSU of a unique record iff
it is unique on ``s`` and on none of the sets ``s - {v}``. The search walks the lattice of key
subsets level by level (size 1, 2, …), counting each combination over the distinct rows with
``numpy.bincount``; a subset is skipped (and with it every superset) as soon as every unique
record is already unique on one of its immediate subsets. The cost is at most
``sum_{k <= M} C(ATT, k)`` counting passes over the distinct rows: fine for the usual up to ~12
keys; beyond that, bound ``max_size``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter

__all__ = ["Suda2Result", "suda2", "MISSING_CODE", "MISSING_MODES"]

#: sdcMicro's default ``missing`` code (R/suda2.R, ``missing = -999``): the value a missing cell
#: has in the DIS score's row hash.
MISSING_CODE = -999
#: Accepted values of ``missing``.
MISSING_MODES = ("match", "category")
#: sdcMicro's padding: Suda2.h needs at least three variables (R/suda2.R adds constant columns).
_MIN_VARS = 3
#: Bucket bits of Suda2.h's row hash (``es_HashListBit``).
_HASH_BITS = 16


@dataclass(frozen=True)
class Suda2Result:
    """What :func:`suda2` found (record arrays in the order of the frame's rows)."""

    keys: tuple[str, ...]  # the key variables, in order
    max_size: int  # maximum MSU size searched
    dis_fraction: float  # DisFraction used
    score: np.ndarray  # per record SUDA score (float64), sdcMicro's $score
    dis_score: np.ndarray  # per record DIS-SUDA score, sdcMicro's $disScore
    msu_count: np.ndarray  # per record number of MSUs (int64; sdcMicro does not report it)
    contributions: dict[str, float]  # per key variable, sdcMicro's $attribute_contributions (%)
    seconds: float


# --------------------------------------------------------------------------------------------
# input coding
# --------------------------------------------------------------------------------------------


def _column_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sdcMicro value, dense code, missing mask) of one key column.

    The sdcMicro value is what the C++ would hold for the cell (integer values kept, anything
    else coded 1..L in sorted order, missing = ``MISSING_CODE``); the dense code numbers the
    distinct values 0..L-1 (missing is code L when present, a value of its own)."""
    miss = column.isna().to_numpy()
    present = column[~miss]
    sdc = np.full(len(column), MISSING_CODE, dtype=np.int64)
    values: np.ndarray | None = None
    if (
        pd.api.types.is_numeric_dtype(column.dtype)
        and not pd.api.types.is_bool_dtype(column.dtype)
        and not isinstance(column.dtype, pd.CategoricalDtype)
    ):
        num = present.to_numpy(dtype=np.float64)
        if np.all(np.isfinite(num)) and np.all(num == np.round(num)) and (
            num.size == 0 or (num.min() >= -(2**31) and num.max() < 2**31)
        ):
            values = num.astype(np.int64)
    if values is None:
        if isinstance(column.dtype, pd.CategoricalDtype):
            cats = column.cat.remove_unused_categories().cat.codes.to_numpy()[~miss]
            values = cats.astype(np.int64) + 1
        else:
            _, inverse = np.unique(present.to_numpy(), return_inverse=True)
            values = inverse.astype(np.int64).ravel() + 1
    sdc[~miss] = values
    dense = np.empty(len(column), dtype=np.int64)
    uniq, inverse = np.unique(values, return_inverse=True)
    dense[~miss] = inverse.ravel()
    dense[miss] = uniq.size  # missing: a code of its own (it equals only another missing cell)
    return sdc, dense, miss


def _combine(ids: np.ndarray, n_ids: int, codes: np.ndarray, card: int) -> tuple[np.ndarray, int]:
    """Dense ids (0..g-1) of the pairs (ids, codes) and their number g."""
    key = ids * card + codes
    bins = n_ids * card
    if bins <= max(8 * ids.size, 1 << 16):
        present = np.bincount(key, minlength=bins) > 0
        relabel = np.cumsum(present) - 1
        return relabel[key], int(present.sum())
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.ravel(), int(uniq.size)


def _row_hash(values: np.ndarray) -> np.ndarray:
    """Suda2.h's bucket of each row (``CEntry::InitValue``): 16-bit rotate left, add the value."""
    mask = (1 << _HASH_BITS) - 1
    h = np.zeros(values.shape[0], dtype=np.int64)
    for j in range(values.shape[1]):
        carry = h >> (_HASH_BITS - 1)
        h = (((h << 1) & mask) + values[:, j] + carry) & mask
    return h


# --------------------------------------------------------------------------------------------
# correlated items (Suda2.h CorrelateItem at the top level)
# --------------------------------------------------------------------------------------------


def _item_classes(
    dense: np.ndarray, cards: list[int], item_ok: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per variable and value: the representative variable and value of its class of items held
    by exactly the same records, and the class size. ``item_ok[v][x]``: (v, x) is an item
    (held by at least two records, not missing in "match" mode, not by every record)."""
    n_vars = len(cards)
    counts = [np.bincount(dense[:, v], minlength=cards[v]) for v in range(n_vars)]
    rep_var = [np.full(cards[v], v, dtype=np.int64) for v in range(n_vars)]
    rep_val = [np.arange(cards[v], dtype=np.int64) for v in range(n_vars)]
    size = [np.ones(cards[v], dtype=np.int64) for v in range(n_vars)]
    for u, v in itertools.combinations(range(n_vars), 2):
        if not (item_ok[u].any() and item_ok[v].any()):
            continue
        pair, n_pairs = _combine(dense[:, u], cards[u], dense[:, v], cards[v])
        pair_count = np.bincount(pair, minlength=n_pairs)
        first = np.zeros(n_pairs, dtype=np.int64)
        first[pair] = np.arange(pair.size)
        xu = dense[first, u]
        xv = dense[first, v]
        same = (
            (pair_count == counts[u][xu])
            & (pair_count == counts[v][xv])
            & item_ok[u][xu]
            & item_ok[v][xv]
        )
        for x, y in zip(xu[same].tolist(), xv[same].tolist(), strict=True):
            size[u][x] += 1
            size[v][y] += 1
            if rep_var[v][y] > u:  # the first variable of the class is its representative
                rep_var[v][y] = rep_var[u][x]
                rep_val[v][y] = rep_val[u][x]
    return rep_var, rep_val, size


# --------------------------------------------------------------------------------------------
# the search
# --------------------------------------------------------------------------------------------


def _weights(att: int, max_size: int) -> np.ndarray:
    """Score of an MSU of size k (index k-1): prod_{i=k}^{M-1} (ATT - i) (Suda2.h ``g_ab``)."""
    return np.array(
        [float(math.prod(att - i for i in range(k, max_size))) for k in range(1, max_size + 1)]
    )


def suda2(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    missing: str = "match",
) -> Suda2Result:
    """SUDA2 on the key variables ``keys`` of ``frame``: sdcMicro's ``suda2(frame, variables =
    keys, DisFraction = dis_fraction)`` (module docstring: definitions, where sdcMicro departs
    from the papers, values and missing cells).

    ``max_size``: largest MSU searched (None: all keys, sdcMicro's only behaviour).
    ``dis_fraction``: the sampling fraction of the DIS score (sdcMicro's ``DisFraction``; 0 means
    Suda2.h's fallback 0.5). ``missing``: ``"match"`` (sdcMicro) or ``"category"``.
    """
    started = time.perf_counter()
    keys = tuple(keys)
    if not keys:
        raise InvalidParameter("SUDA2 needs at least one key variable")
    if len(set(keys)) != len(keys):
        raise InvalidParameter("SUDA2 key variables must be distinct")
    absent = [k for k in keys if k not in frame.columns]
    if absent:
        raise InvalidParameter(f"SUDA2 key variables not in the table: {absent}")
    if missing not in MISSING_MODES:
        raise InvalidParameter(f"missing must be one of {MISSING_MODES}, got {missing!r}")
    n_keys = len(keys)
    if max_size is None:
        max_size = n_keys
    max_size = int(max_size)
    if not 1 <= max_size <= n_keys:
        raise InvalidParameter(f"max_size={max_size} must be between 1 and {n_keys}")
    dis_fraction = float(dis_fraction)
    if not 0.0 <= dis_fraction < 1.0:
        raise InvalidParameter(f"dis_fraction={dis_fraction} must be in [0, 1)")

    n = len(frame)
    att = max(n_keys, _MIN_VARS)
    score = np.zeros(n, dtype=np.float64)
    dis_score = np.zeros(n, dtype=np.float64)
    msu_count = np.zeros(n, dtype=np.int64)
    contributions = dict.fromkeys(keys, 0.0)
    if n == 0:
        return Suda2Result(keys, max_size, dis_fraction, score, dis_score, msu_count,
                           contributions, time.perf_counter() - started)

    sdc = np.empty((n, att), dtype=np.int64)
    sdc[:, n_keys:] = 1  # R/suda2.R's constant padding columns
    dense = np.empty((n, n_keys), dtype=np.int64)
    miss = np.zeros((n, n_keys), dtype=bool)
    for j, key in enumerate(keys):
        sdc[:, j], dense[:, j], miss[:, j] = _column_codes(frame[key])
    cards = [int(dense[:, j].max()) + 1 for j in range(n_keys)]
    if missing == "category":
        miss[:] = False

    # distinct rows (missing cells equal each other): only rows present once can have an MSU
    row_id = np.zeros(n, dtype=np.int64)
    n_rows = 1
    for j in range(n_keys):
        row_id, n_rows = _combine(row_id, n_rows, dense[:, j], cards[j])
    row_count = np.bincount(row_id, minlength=n_rows)
    first = np.zeros(n_rows, dtype=np.int64)
    first[row_id[::-1]] = np.arange(n - 1, -1, -1)
    mult = np.minimum(row_count, 2)  # Suda2.h keeps two copies of a row (uniqueness is the same)
    cand_rows = np.flatnonzero(row_count == 1)  # distinct-row ids of the sample uniques
    cand_records = first[cand_rows]
    n_cand = cand_rows.size

    # items and their classes of correlated items, per record of the candidates
    counts = [np.bincount(dense[:, v], minlength=cards[v]) for v in range(n_keys)]
    item_ok = []
    for v in range(n_keys):
        ok = (counts[v] >= 2) & (counts[v] < n)
        if missing == "match" and miss[:, v].any():
            ok[dense[miss[:, v], v][0]] = False
        item_ok.append(ok)
    rep_var, rep_val, class_size = _item_classes(dense, cards, item_ok)
    cand_dense = dense[cand_records]
    is_rep = np.empty((n_cand, n_keys), dtype=bool)
    size_c = np.empty((n_cand, n_keys), dtype=np.float64)
    class_id = np.empty((n_cand, n_keys), dtype=np.int64)
    big = max(cards) + 1
    for v in range(n_keys):
        x = cand_dense[:, v]
        is_rep[:, v] = rep_var[v][x] == v
        size_c[:, v] = class_size[v][x]
        class_id[:, v] = rep_var[v][x] * big + rep_val[v][x]
    eligible_miss = miss[cand_records]

    # the lattice of key subsets, level by level, over the distinct rows
    weights = _weights(att, max_size)
    dense_rows = dense[first]
    mult_w = mult.astype(np.float64)
    per_size = np.zeros((n_cand, max_size), dtype=np.int64)
    raw = np.zeros((n_cand, n_keys), dtype=np.float64)
    prev_ids: dict[tuple[int, ...], tuple[np.ndarray, int]] = {(): (np.zeros(n_rows, np.int64), 1)}
    prev_unique: dict[tuple[int, ...], np.ndarray] = {(): np.zeros(n_cand, dtype=bool)}
    all_true = np.ones(n_cand, dtype=bool)
    for level in range(1, max_size + 1):
        ids_now: dict[tuple[int, ...], tuple[np.ndarray, int]] = {}
        unique_now: dict[tuple[int, ...], np.ndarray] = {}
        for subset in itertools.combinations(range(n_keys), level):
            alive = ~eligible_miss[:, list(subset)].any(axis=1)
            for drop in range(level):
                below = prev_unique.get(subset[:drop] + subset[drop + 1 :], all_true)
                alive &= ~below
            if not alive.any():
                unique_now[subset] = all_true  # no record can have an MSU here or above
                continue
            parent_ids, parent_n = prev_ids[subset[:-1]]
            v = subset[-1]
            key = parent_ids * cards[v] + dense_rows[:, v]
            combo = np.bincount(key, weights=mult_w, minlength=parent_n * cards[v])
            unique = combo[key[cand_rows]] == 1
            unique_now[subset] = unique
            if level < max_size:
                present = combo > 0
                relabel = np.cumsum(present) - 1
                ids_now[subset] = (relabel[key], int(present.sum()))
            found = np.flatnonzero(alive & unique)
            if found.size:
                per_size[found, level - 1] += 1
                _credit(raw, found, subset, weights[level - 1], is_rep, size_c, class_id)
        prev_ids, prev_unique = ids_now, unique_now

    # scores (Suda2.h main: Res columns; R/suda2.R: contributions)
    cand_score = per_size.astype(np.float64) @ weights
    score[cand_records] = cand_score
    msu_count[cand_records] = per_size.sum(axis=1)
    total = float(np.sum(score))
    if total > 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            percent = np.where(cand_score[:, None] > 0, raw / cand_score[:, None], 0.0)
        contribs = percent * cand_score[:, None]
        contributions = {
            key: 100.0 * (math.fsum(contribs[:, j].tolist()) / total) for j, key in enumerate(keys)
        }
    dis_score[:] = _dis_scores(score, sdc, row_id, row_count, att, dis_fraction)
    return Suda2Result(keys, max_size, dis_fraction, score, dis_score, msu_count, contributions,
                       time.perf_counter() - started)


def _credit(
    raw: np.ndarray,
    found: np.ndarray,
    subset: tuple[int, ...],
    weight: float,
    is_rep: np.ndarray,
    size_c: np.ndarray,
    class_id: np.ndarray,
) -> None:
    """Credit the MSU ``subset`` of the candidates ``found`` to its variables as Suda2.h does
    (module docstring, point 2): once per class of correlated MSUs, at its representative."""
    reps = found[is_rep[found][:, list(subset)].all(axis=1)]
    if reps.size == 0:
        return
    if len(subset) == 1:
        raw[reps, subset[0]] += weight
    elif len(subset) == 2:
        a, b = subset
        raw[reps, a] += size_c[reps, b] * weight
        raw[reps, b] += size_c[reps, a] * weight
        for u in range(raw.shape[1]):
            if u in subset:
                continue
            alt = (class_id[reps, u] == class_id[reps, a]).astype(np.float64)
            alt += class_id[reps, u] == class_id[reps, b]
            raw[reps, u] += alt * weight
    else:
        m = np.prod(size_c[reps][:, list(subset)], axis=1) * weight
        for v in subset:
            raw[reps, v] += m


def _dis_scores(
    score: np.ndarray,
    sdc: np.ndarray,
    row_id: np.ndarray,
    row_count: np.ndarray,
    att: int,
    dis_fraction: float,
) -> np.ndarray:
    """Suda2.h's DIS-SUDA scores, single precision where it is (module docstring, point 3)."""
    buckets = _row_hash(sdc)
    per_bucket = np.bincount(buckets, minlength=1 << _HASH_BITS)
    n_unique = int(np.sum(per_bucket[buckets] == 1))
    n_pair = 2 * int(np.sum(row_count == 2))
    f = np.float32(dis_fraction if dis_fraction != 0 else 0.5)
    u = np.float32(n_unique)
    with np.errstate(invalid="ignore", divide="ignore"):
        dis = np.float32(u * f) / np.float32(u * f + np.float32(n_pair) * (np.float32(1.0) - f))
        excess = float(np.float32(np.float32(u / dis) - u))
    q = float(np.float32(1.0) + np.float32(np.float32(8.0) - np.float32(att)) / np.float32(20.0))
    out = np.zeros(score.size, dtype=np.float64)
    positive = score != 0
    if not positive.any():
        return out
    powered = np.power(score[positive], q)
    adj = float(np.cumsum(1.0 / powered)[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        out[positive] = 1.0 / (1.0 + excess / (powered * adj))
    return out
