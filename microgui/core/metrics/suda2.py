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
  total score. The contributions add up to more than 100 % (an MSU of size 2 credits both of
  its variables).

Where sdcMicro departs from the papers, this module follows sdcMicro (the issue's target is
equality with it) and says so here:

1. **Fewer than three keys.** The C++ needs ``ATT >= 3``; R/suda2.R pads one or two key columns
   with constant columns, so ``ATT`` in the weights and in ``Q`` is 3 for 1 or 2 keys. (With a
   single key sdcMicro's R code then stops in ``colSums``; the numbers here are its C++'s.)
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
   precision (``float`` in Suda2.h), as there. When ``U`` is 0 although some record scores,
   ``Dis`` is 0 and the positive scores' DIS scores are NaN (0/0), as in sdcMicro.
4. **No unique record** (total score 0): sdcMicro's contributions are 0/0 = NaN; here they are 0.

Values. sdcMicro's C++ works on integers: R passes numbers cast to ``int`` (truncated) and
factors as their level codes 1..L. Here a numeric column enters the row hash of point 3 truncated
the same way, and any other column (text, categories, booleans) as codes 1..L in the order of
its sorted distinct values (a pandas ``Categorical``: its category order), like an R factor
made under the C collation (R sorts factor levels by the locale: under another locale the codes,
and with them ``U``, can differ). Only the DIS score's ``U`` depends on these codes. Records are compared on their values
themselves: sdcMicro would take fractional numbers 1.2 and 1.7 as equal (both 1), this module
does not (it makes no difference on integer or coded keys).

Missing values (``missing``):

* ``"match"`` (default, sdcMicro's treatment): R/suda2.R recodes NA to the ``missing`` code
  (-999) and Suda2.h never makes an item of it, so a missing cell is never part of an MSU; when
  records are compared, a missing cell equals another missing cell and no value. A record with a
  missing cell in variable ``v`` has MSUs only among the variables it has.
* ``"category"``: a missing cell is one more value of the variable, which can be part of an MSU.

``max_size`` (sdcMicro has no such argument: R passes ``ncol`` and Suda2.h searches all sizes)
limits the search to MSUs of at most that many variables, as the papers' ``M``; the weights are
then ``prod_{i=k}^{M-1}(ATT - i)`` (the SDC guidelines' formula, equal to sdcMicro's at
``M = ATT``) and records whose smallest MSU is larger score 0. (With one or two keys and
every size searched, ``M`` is the padded ``ATT`` = 3, as in sdcMicro.)

Method. Only a record unique on all keys can have an MSU, and uniqueness is monotone (a record
unique on a set is unique on every superset), so a set ``s`` is an MSU of a unique record iff
the record is unique on ``s`` and on none of the sets ``s - {v}``. The search walks the lattice
of key subsets level by level (size 1, 2, …) with numpy, not SUDA2's recursion over items: a
subset is counted only for the unique records still *open* on all its immediate subsets, and
only over the rows that share a combination with such a record (``_lattice``); constant keys
are left out of the search. The MSUs found are exactly the paper's (checked against a
brute-force enumeration of every subset in the tests) and the counts, scores and credits are
sdcMicro's. Cost: at most ``sum_{k <= M} C(ATT, k)`` counting passes, each over the rows that
are still shared, so it grows like 2^ATT when many records have large MSUs. Measured here
(CPU seconds, best of 5, busy 2-core machine; sdcMicro's Suda2.h compiled with Rcpp beside
it): Adult with 7 categorical keys 0.058 s (sdcMicro 0.052 s), Adult with all 9 columns 0.43 s
(0.25 s), testdata with 12 keys 0.24 s (0.075 s), testdata with 7 keys 0.011 s (0.002 s);
3,000 random records with 16 keys of 3 values (6.2 million MSUs) 14 s (sdcMicro 40 s), peak
memory 0.6 GB (each level keeps the shared rows of each of its open subsets).
No numba kernel: the metrics layer may not import ``core.methods.jit_cache``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.progress import ProgressFn, Throttle, no_progress

__all__ = ["Suda2Result", "suda2", "minimal_sample_uniques", "MISSING_CODE", "MISSING_MODES"]

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

    The sdcMicro value is what the C++ would hold for the cell (a number cast to ``int``, i.e.
    truncated; anything else coded 1..L like an R factor; missing = ``MISSING_CODE``); the dense
    code numbers the distinct values 0..L-1 (missing is code L when present, a value of its own).
    Equality is decided on the values themselves, not on the truncated numbers."""
    miss = column.isna().to_numpy()
    present = column[~miss]
    sdc = np.full(len(column), MISSING_CODE, dtype=np.int64)
    values: np.ndarray | None = None
    basis: np.ndarray | None = None
    if (
        pd.api.types.is_numeric_dtype(column.dtype)
        and not pd.api.types.is_bool_dtype(column.dtype)
        and not isinstance(column.dtype, pd.CategoricalDtype)
    ):
        num = present.to_numpy(dtype=np.float64)
        if np.all(np.isfinite(num)) and (
            num.size == 0 or (num.min() > -(2.0**31) and num.max() < 2.0**31)
        ):
            values = np.trunc(num).astype(np.int64)  # Suda2.h: (TValue) Mat(Index, j)
            basis = num
    if values is None:
        if isinstance(column.dtype, pd.CategoricalDtype):
            # an R factor keeps its unused levels: codes follow the categories
            values = column.cat.codes.to_numpy()[~miss].astype(np.int64) + 1
        else:
            try:  # hash-based, then only the distinct values are sorted
                codes, _ = pd.factorize(present, sort=True)
            except TypeError:  # values that do not sort together (mixed types): by their text
                codes, _ = pd.factorize(present.astype(str), sort=True)
            values = np.asarray(codes, dtype=np.int64) + 1
    sdc[~miss] = values
    dense = np.empty(len(column), dtype=np.int64)
    inverse, uniq = pd.factorize(values if basis is None else basis)
    dense[~miss] = inverse
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


@dataclass(frozen=True)
class _Coded:
    """The key columns coded for the search (see :func:`_code`)."""

    n_keys: int
    att: int  # ATT: number of variables as Suda2.h sees them (padded to 3)
    sdc: np.ndarray  # (n, att) the values sdcMicro's C++ holds
    dense: np.ndarray  # (n, n_keys) dense codes, missing a code of its own
    miss: np.ndarray  # (n, n_keys) missing cells that are no item ("match" mode)
    cards: list[int]
    row_id: np.ndarray  # distinct row of each record
    row_count: np.ndarray  # records per distinct row
    first: np.ndarray  # first record of each distinct row
    cand_rows: np.ndarray  # distinct rows present once (the sample uniques)


def _check(
    frame: pd.DataFrame, keys: Sequence[str], max_size: int | None, missing: str
) -> tuple[tuple[str, ...], int]:
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
    size = len(keys) if max_size is None else int(max_size)
    if not 1 <= size <= len(keys):
        raise InvalidParameter(f"max_size={max_size} must be between 1 and {len(keys)}")
    return keys, size


def _code(frame: pd.DataFrame, keys: tuple[str, ...], missing: str) -> _Coded:
    n, n_keys = len(frame), len(keys)
    att = max(n_keys, _MIN_VARS)
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
    cand_rows = np.flatnonzero(row_count == 1)
    return _Coded(n_keys, att, sdc, dense, miss, cards, row_id, row_count, first, cand_rows)


def _count(key: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """For the combination keys of rows (``0 <= key < bins``): the number of rows with each row's
    combination and a combination id per row (< ``bins``)."""
    if bins <= 8 * key.size + 1024:
        return np.bincount(key, minlength=bins)[key], key
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    return counts[inverse], inverse


def _lattice(
    coded: _Coded, max_size: int, progress: ProgressFn = no_progress
) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """Every (key subset, candidates whose MSU it is), by size then in lexicographic order;
    candidates are indices into ``coded.cand_rows`` (module docstring, *Method*).

    A candidate can have an MSU ``t`` only if it is *open* on every immediate subset ``s`` of
    ``t``: it holds a value in every variable of ``s``, is not unique on any immediate subset of
    ``s`` (so ``s`` is no MSU of it and none of its subsets is unique) and is not unique on ``s``.
    So the open candidates of ``t`` are the intersection of the open sets of its immediate
    subsets, and a subset whose intersection is empty is never counted. The count of a
    candidate's combination on ``t`` is over the records that share its combination on an
    immediate subset of ``t`` (the one that keeps fewest rows): each subset keeps only the
    distinct rows of combinations that hold an open candidate, with the ids of their
    combinations. A candidate's combination is unique iff no other distinct row has it (a
    candidate is a row present once)."""
    n_cand = coded.cand_rows.size
    if n_cand == 0:
        return
    n_rows = coded.first.size
    columns = [np.ascontiguousarray(coded.dense[coded.first, v]) for v in range(coded.n_keys)]
    # candidate flags have one more slot, always False: the slot of the rows that are no candidate
    has_value = []
    for v in range(coded.n_keys):
        flag = np.zeros(n_cand + 1, dtype=bool)
        flag[:n_cand] = ~coded.miss[coded.first[coded.cand_rows], v]
        has_value.append(flag)
    cand_of_row = np.full(n_rows, -1, dtype=np.int64)
    cand_of_row[coded.cand_rows] = np.arange(n_cand)
    # a variable with one value for all (two or more) records is in no MSU and changes no count
    searched = [v for v in range(coded.n_keys) if coded.cards[v] > 1 or coded.dense.shape[0] < 2]
    tick = Throttle(progress, "minimal sample uniques")
    everyone = np.ones(n_cand + 1, dtype=bool)
    everyone[n_cand] = False
    prev_open: dict[tuple[int, ...], np.ndarray] = {(): everyone}
    # per open subset: its kept distinct rows and their combination ids (int32: the memory of a
    # level is the sum of these over its open subsets)
    prev_rows: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, int]] = {
        (): (np.arange(n_rows, dtype=np.int32), np.zeros(n_rows, dtype=np.int32), 1)
    }
    for level in range(1, max_size + 1):
        open_now: dict[tuple[int, ...], np.ndarray] = {}
        rows_now: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, int]] = {}
        if level == 1:
            subsets: list[tuple[int, ...]] = [(v,) for v in searched]
        else:  # a subset's parent (it without its last variable) must have open candidates
            subsets = sorted(s + (w,) for s in prev_open for w in searched if w > s[-1])
        for done, subset in enumerate(subsets):
            tick((level - 1 + done / len(subsets)) / max_size)
            below = [prev_open.get(subset[:d] + subset[d + 1 :]) for d in range(level)]
            if any(b is None for b in below):
                continue  # an immediate subset has no open candidate
            alive = has_value[subset[0]] & below[0]
            for d in range(1, level):
                alive &= below[d]
                alive &= has_value[subset[d]]
            if not alive.any():
                continue
            # count over the fewest rows: those of the immediate subset keeping fewest
            drop = min(range(level), key=lambda d: prev_rows[subset[:d] + subset[d + 1 :]][0].size)
            rows, ids32, n_ids = prev_rows[subset[:drop] + subset[drop + 1 :]]
            card = coded.cards[subset[drop]]
            key = ids32.astype(np.int64) * card + columns[subset[drop]][rows]
            count, ids = _count(key, n_ids * card)
            cand = cand_of_row[rows]
            row_alive = alive[cand]
            found = row_alive & (count == 1)
            if found.any():
                yield subset, cand[found]
            still = row_alive & (count > 1)
            if not still.any():
                continue
            flags = np.zeros(n_cand + 1, dtype=bool)
            flags[cand[still]] = True
            open_now[subset] = flags
            if level < max_size:
                groups = np.zeros(int(ids.max()) + 1, dtype=bool)
                groups[ids[still]] = True
                keep = groups[ids]
                relabel = np.cumsum(groups) - 1
                rows_now[subset] = (
                    rows[keep],
                    relabel[ids[keep]].astype(np.int32),
                    int(relabel[-1]) + 1,
                )
        prev_open, prev_rows = open_now, rows_now
        if not prev_open:
            return


def minimal_sample_uniques(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    max_size: int | None = None,
    missing: str = "match",
    progress: ProgressFn = no_progress,
) -> list[tuple[int, tuple[str, ...]]]:
    """Every MSU as (record position, its key variables), by size: the sets of key values of a
    record that no other record shares and none of whose proper subsets is unique (Manning,
    Haglin & Keane 2008, §2), up to ``max_size`` variables; missing cells as in :func:`suda2`.
    Correlated MSUs are listed each (this is the full list that sdcMicro's counts multiply out)."""
    keys, size = _check(frame, keys, max_size, missing)
    if len(frame) == 0:
        return []
    coded = _code(frame, keys, missing)
    records = coded.first[coded.cand_rows]
    return [
        (int(records[c]), tuple(keys[v] for v in subset))
        for subset, found in _lattice(coded, size, progress)
        for c in found.tolist()
    ]


def suda2(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    missing: str = "match",
    progress: ProgressFn = no_progress,
) -> Suda2Result:
    """SUDA2 on the key variables ``keys`` of ``frame``: sdcMicro's ``suda2(frame, variables =
    keys, DisFraction = dis_fraction)`` (module docstring: definitions, where sdcMicro departs
    from the papers, values and missing cells).

    ``max_size``: largest MSU searched (None: all keys, sdcMicro's only behaviour).
    ``dis_fraction``: the sampling fraction of the DIS score (sdcMicro's ``DisFraction``; 0 means
    Suda2.h's fallback 0.5). ``missing``: ``"match"`` (sdcMicro) or ``"category"``.
    ``progress``: called with the fraction of the subsets searched (by level; a run that ends at
    a lower level jumps to 1); a callback that raises :class:`~microgui.core.progress.RunCancelled`
    stops the search.
    """
    started = time.perf_counter()
    keys, max_size = _check(frame, keys, max_size, missing)
    dis_fraction = float(dis_fraction)
    if not 0.0 <= dis_fraction < 1.0:
        raise InvalidParameter(f"dis_fraction={dis_fraction} must be in [0, 1)")
    n = len(frame)
    n_keys = len(keys)
    score = np.zeros(n, dtype=np.float64)
    dis_score = np.zeros(n, dtype=np.float64)
    msu_count = np.zeros(n, dtype=np.int64)
    contributions = dict.fromkeys(keys, 0.0)
    if n == 0:
        return Suda2Result(
            keys,
            max_size,
            dis_fraction,
            score,
            dis_score,
            msu_count,
            contributions,
            time.perf_counter() - started,
        )
    coded = _code(frame, keys, missing)
    dense, cards = coded.dense, coded.cards
    cand_records = coded.first[coded.cand_rows]
    n_cand = cand_records.size

    # items and their classes of correlated items, per record of the candidates
    item_ok = []
    for v in range(n_keys):
        counts = np.bincount(dense[:, v], minlength=cards[v])
        ok = (counts >= 2) & (counts < n)
        if coded.miss[:, v].any():
            ok[dense[coded.miss[:, v], v][0]] = False
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

    # searching every size is sdcMicro's M = ATT (its padding columns are in no MSU)
    weights = _weights(coded.att, coded.att if max_size == n_keys else max_size)[:max_size]
    per_size = np.zeros((n_cand, max_size), dtype=np.int64)
    raw = np.zeros((n_cand, n_keys), dtype=np.float64)
    for subset, found in _lattice(coded, max_size, progress):
        per_size[found, len(subset) - 1] += 1
        _credit(raw, found, subset, weights[len(subset) - 1], is_rep, size_c, class_id)

    # scores (Suda2.h main: the Res columns; R/suda2.R: the attribute contributions)
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
    dis_score[:] = _dis_scores(score, coded.sdc, coded.row_count, coded.att, dis_fraction)
    progress(1.0, "minimal sample uniques")
    return Suda2Result(
        keys,
        max_size,
        dis_fraction,
        score,
        dis_score,
        msu_count,
        contributions,
        time.perf_counter() - started,
    )


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
    # C's pow (math.pow), not numpy's vector power, which may differ in the last bit
    powered = np.array([math.pow(x, q) for x in score[positive].tolist()])
    adj = float(np.cumsum(1.0 / powered)[-1])  # summed in record order, as Suda2.h
    with np.errstate(invalid="ignore", divide="ignore"):
        out[positive] = 1.0 / (1.0 + excess / (powered * adj))
    return out
