"""Local suppression: set the fewest categorical key cells to missing so that every record's key
combination is shared by at least ``k`` records, with a missing value matching anything.

Reference semantics: sdcMicro's ``localSuppression`` (R/localSuppression.R, ``suppSubset``; its
nearest-neighbour step in src/calcSuppInds.cpp) and its frequency count ``freqCalc`` with
``alpha = 1`` (R/freqCalc.r): the size of record *i*'s key cell is

    f_i = #{ j : for every key c, x_ic = x_jc, or x_ic is missing, or x_jc is missing }

(Templ, Kowarik & Meindl 2015, "Statistical Disclosure Control for Micro-Data Using the R Package
sdcMicro", J. Stat. Softw. 67(4), §3.2 "local suppression"; Hundepool et al. 2012, *Statistical
Disclosure Control*, §3.4.5). Values that are already missing in the input match anything too and
are never counted as suppressions. Non-key columns are never touched.

Algorithm (greedy, near-minimal; documented here because it differs from sdcMicro's):

1. Every record is compared with every other one only through the *difference mask* ``D_ij``: the
   set of keys on which both are present and differ. Record *i* would, after suppressing the keys
   ``M``, match exactly the records with ``D_ij ⊆ M``. One pass over the block gives the histogram
   of ``D_ij`` over the ``2^m`` masks; a subset-sum (zeta) transform then gives, for every ``M``
   at once, the cell size ``F_i(M)`` that *i* would have. This is exact, not an estimate.
2. The records below ``k`` are visited in increasing order of their cell size (sdcMicro: in
   decreasing individual risk, the same order). A record still below ``k`` when its turn comes
   gets the mask ``M`` with ``F_i(M) >= k`` that has the fewest keys; among those, the one that
   spares the most important keys (importance 1 is suppressed last, compared lexicographically),
   then the one with the larger cell. Suppressing every key of a record always works (``F = n``).
3. The cell sizes of all records are kept exact after each suppression (record *j* gains *i*
   exactly when ``0 ≠ D_ij ⊆ M``). Suppression only ever adds matches, so a record that reaches
   ``k`` stays there and the result is k-anonymous after one pass — no repeated rounds.
4. Restore pass: the suppressed cells are then tried back one by one, most important key first;
   a cell is given back its value when the record and every record that would lose it as a match
   keep at least ``k``. This removes suppressions made redundant by later ones.

sdcMicro instead (a) first drops all but ``k`` records of every cell larger than ``k`` (after
filling missing values with the column's first value), (b) for each unsafe record finds the
records at the smallest non-zero Hamming distance and suppresses *one* cell — the least important
key on which the record differs from one of those neighbours — and (c) recomputes all frequencies
and repeats until no record is below ``k``. Its single-cell steps can take a record through
several cells where one other cell would have done; ours picks the smallest set for the record
directly and keeps counts exact instead of recomputing them.

Importance: sdcMicro's convention, one integer per key, 1 = most important (suppressed last).
Default (sdcMicro's): keys ranked by their number of distinct values, fewest first, so keys with
many categories are suppressed first. Here importance decides between masks of equal size only;
the number of cells comes first (sdcMicro also lets the neighbours decide before importance).

Strata: k-anonymity within each stratum separately (a stratum smaller than ``k`` is refused).
Combinations (sdcMicro ``combs``): with ``combinations = m`` only the key subsets of size ``m``
are made k-anonymous, one after the other (suppressions for one subset never undo another's:
they only add matches). Subsets of size below ``m`` need nothing more: a record matched on a set
of keys is matched on each of its subsets.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.methods.jit_cache import njit
from microgui.core.progress import ProgressFn, no_progress, sub_progress

__all__ = [
    "SuppressionResult",
    "InvalidSuppression",
    "suppress",
    "wildcard_counts",
    "MAX_KEYS",
]

#: The greedy step enumerates the 2^m masks of a key set; above this it would not be "fast".
MAX_KEYS = 16
#: Unsafe records handled per kernel call between two progress calls.
_BATCH = 256


class InvalidSuppression(InvalidParameter, ValueError):
    """A parameter of local suppression is invalid (unknown column, k out of range, ...)."""


@dataclass(frozen=True)
class SuppressionResult:
    """The suppressed table and its figures (counts only: no value of any record)."""

    frame: pd.DataFrame  # same index/order/columns as input; suppressed key cells set to missing
    suppressed: dict[str, int]  # per key column, number of cells suppressed
    total: int
    k_after: int  # smallest key-cell size after (missing matches anything)
    seconds: float


# --------------------------------------------------------------------------------------------
# kernels


@njit
def _diff_masks(codes: np.ndarray, cols: np.ndarray, rows: np.ndarray, i: int, out: np.ndarray) -> None:
    """``out[t] = D`` of record ``rows[t]`` against record ``i``: bit b set when key ``cols[b]`` is
    present in both and differs."""
    m = cols.shape[0]
    for t in range(rows.shape[0]):
        j = rows[t]
        d = 0
        for b in range(m):
            c = cols[b]
            a = codes[i, c]
            v = codes[j, c]
            if a >= 0 and v >= 0 and a != v:
                d |= 1 << b
        out[t] = d


@njit
def _greedy(
    codes: np.ndarray,
    cols: np.ndarray,
    rows: np.ndarray,
    order: np.ndarray,
    f: np.ndarray,
    k: int,
    cost: np.ndarray,
    suppressed: np.ndarray,
) -> int:
    """Step 2-3 of the module's algorithm for the records ``order`` (positions in ``rows``).

    ``codes`` (records x keys, -1 = missing) and ``f`` (cell sizes of ``rows``, by position) are
    updated in place; ``suppressed[r, c]`` marks the cells this function set missing. ``cost[M]``
    ranks masks of equal size (smaller spares the important keys). Returns the cells suppressed.
    """
    n = rows.shape[0]
    m = cols.shape[0]
    full = 1 << m
    d = np.empty(n, dtype=np.int64)
    hist = np.empty(full, dtype=np.int64)
    done = 0
    for p in order:
        if f[p] >= k:
            continue
        i = rows[p]
        _diff_masks(codes, cols, rows, i, d)
        hist[:] = 0
        for t in range(n):
            hist[d[t]] += 1
        for b in range(m):
            bit = 1 << b
            for mask in range(full):
                if mask & bit:
                    hist[mask] += hist[mask ^ bit]
        avail = 0
        for b in range(m):
            if codes[i, cols[b]] >= 0:
                avail |= 1 << b
        best = -1
        for mask in range(full):
            if mask & ~avail:
                continue
            if hist[mask] < k:
                continue
            if best < 0 or cost[mask] < cost[best] or (cost[mask] == cost[best] and hist[mask] > hist[best]):
                best = mask
        if best <= 0:  # cannot happen for a block of at least k records
            continue
        for b in range(m):
            if best & (1 << b):
                codes[i, cols[b]] = -1
                suppressed[i, cols[b]] = True
                done += 1
        f[p] = hist[best]
        for t in range(n):
            if d[t] != 0 and (d[t] & ~best) == 0:
                f[t] += 1
    return done


@njit
def _restore(
    codes: np.ndarray,
    original: np.ndarray,
    subsets: np.ndarray,
    rows: np.ndarray,
    cells_r: np.ndarray,
    cells_c: np.ndarray,
    f: np.ndarray,
    k: int,
    suppressed: np.ndarray,
) -> int:
    """Step 4: give suppressed cells back their value where k still holds on every key subset.

    ``subsets`` is (n_subsets x m) column indices; ``f`` (n_subsets x len(rows)) the exact cell
    sizes per subset. ``cells_r`` are positions in ``rows``. Returns the cells restored.
    """
    n = rows.shape[0]
    s_count = subsets.shape[0]
    m = subsets.shape[1]
    restored = 0
    lose = np.zeros((s_count, n), dtype=np.bool_)
    newf = np.zeros(s_count, dtype=np.int64)
    for q in range(cells_r.shape[0]):
        p = cells_r[q]
        i = rows[p]
        c = cells_c[q]
        value = original[i, c]
        ok = True
        for s in range(s_count):
            has_c = False
            for b in range(m):
                if subsets[s, b] == c:
                    has_c = True
            newf[s] = f[s, p]
            if not has_c:
                continue
            cnt = 0
            for t in range(n):
                j = rows[t]
                match = True
                for b in range(m):
                    cc = subsets[s, b]
                    a = value if cc == c else codes[i, cc]
                    v = codes[j, cc]
                    if a >= 0 and v >= 0 and a != v:
                        match = False
                        break
                if match:
                    cnt += 1
                    lose[s, t] = False
                else:
                    # it matched before (i had c missing) iff the only difference is on c
                    v = codes[j, c]
                    only_c = v >= 0 and v != value
                    if only_c:
                        for b in range(m):
                            cc = subsets[s, b]
                            if cc == c:
                                continue
                            a = codes[i, cc]
                            w = codes[j, cc]
                            if a >= 0 and w >= 0 and a != w:
                                only_c = False
                                break
                    lose[s, t] = only_c
                    if only_c and f[s, t] - 1 < k:
                        ok = False
                        break
            if not ok or cnt < k:
                ok = False
                break
            newf[s] = cnt
        if not ok:
            continue
        codes[i, c] = value
        suppressed[i, c] = False
        restored += 1
        for s in range(s_count):
            has_c = False
            for b in range(m):
                if subsets[s, b] == c:
                    has_c = True
            if not has_c:
                continue
            f[s, p] = newf[s]
            for t in range(n):
                if lose[s, t]:
                    f[s, t] -= 1
                    lose[s, t] = False
    return restored


# --------------------------------------------------------------------------------------------
# counting with missing-as-wildcard


def _combined_key(block: np.ndarray) -> np.ndarray:
    """One int64 per row of ``block`` (codes >= 0), equal iff the rows are equal."""
    if block.shape[1] == 0:
        return np.zeros(block.shape[0], dtype=np.int64)
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


def wildcard_counts(codes: np.ndarray, cols: Sequence[int] | np.ndarray) -> np.ndarray:
    """Cell size of every row of ``codes`` on the keys ``cols``, a missing code (-1) matching
    anything (sdcMicro ``freqCalc`` with ``alpha = 1``).

    Rows are grouped by their pattern of present keys; for two patterns P and Q the rows of P
    match those of Q exactly when they agree on the keys present in both, so each pair of
    patterns is one group count on those keys: O(patterns² · n), not O(n²).
    """
    x = np.ascontiguousarray(codes[:, list(cols)])
    n, m = x.shape
    f = np.zeros(n, dtype=np.int64)
    if n == 0:
        return f
    present = x >= 0
    pattern = (present * (1 << np.arange(m, dtype=np.int64))).sum(axis=1)
    patterns, inverse = np.unique(pattern, return_inverse=True)
    members = [np.flatnonzero(inverse == p) for p in range(len(patterns))]
    safe = np.where(present, x, 0).astype(np.int64)
    keys_cache: dict[int, np.ndarray] = {}
    for pi, pp in enumerate(patterns):
        rows_p = members[pi]
        for qi, qq in enumerate(patterns):
            rows_q = members[qi]
            shared = int(pp) & int(qq)
            if shared == 0:
                f[rows_p] += rows_q.size
                continue
            keys = keys_cache.get(shared)
            if keys is None:
                on = [b for b in range(m) if shared >> b & 1]
                keys = _combined_key(safe[:, on])
                keys_cache[shared] = keys
            values, counts = np.unique(keys[rows_q], return_counts=True)
            kp = keys[rows_p]
            at = np.searchsorted(values, kp)
            at_c = np.minimum(at, values.size - 1)
            hit = values[at_c] == kp
            f[rows_p] += np.where(hit, counts[at_c], 0)
    return f


# --------------------------------------------------------------------------------------------
# the public function


def _check(
    frame: pd.DataFrame,
    keys: Sequence[str],
    k: int,
    importance: Sequence[int] | None,
    strata: str | None,
    combinations: int | None,
) -> tuple[list[str], np.ndarray | None, int | None]:
    if isinstance(keys, str):
        keys = [keys]
    keys = list(keys)
    if not keys:
        raise InvalidSuppression("local suppression needs at least one key column (none given)")
    for c in keys:
        if c not in frame.columns:
            raise InvalidSuppression(f"local suppression: unknown key column '{c}'")
    dup = [c for c in keys if keys.count(c) > 1]
    if dup:
        raise InvalidSuppression(f"local suppression: key column '{dup[0]}' is given twice")
    if len(keys) > MAX_KEYS:
        raise InvalidSuppression(
            f"local suppression: {len(keys)} key columns, at most {MAX_KEYS} (use combinations=m)"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidSuppression(f"local suppression: k must be an integer >= 1, got {k!r}")
    n = len(frame)
    if k > n:
        raise InvalidSuppression(f"local suppression: k = {k} is larger than the {n} records")
    if strata is not None:
        if strata not in frame.columns:
            raise InvalidSuppression(f"local suppression: unknown strata column '{strata}'")
        if strata in keys:
            raise InvalidSuppression(f"local suppression: strata column '{strata}' is also a key")
    imp: np.ndarray | None = None
    if importance is not None:
        imp = np.asarray(list(importance))
        if imp.shape != (len(keys),):
            raise InvalidSuppression(
                f"local suppression: importance has {imp.size} entries for {len(keys)} key columns"
            )
        if not np.issubdtype(imp.dtype, np.integer) or imp.min() < 1 or imp.max() > len(keys):
            raise InvalidSuppression(
                f"local suppression: importance must be integers from 1 to {len(keys)} "
                "(1 = most important, suppressed last)"
            )
    m: int | None = None
    if combinations is not None:
        if isinstance(combinations, bool) or not isinstance(combinations, (int, np.integer)):
            raise InvalidSuppression(
                f"local suppression: combinations must be an integer, got {combinations!r}"
            )
        if combinations < 1:
            raise InvalidSuppression(f"local suppression: combinations must be >= 1, got {combinations}")
        m = min(int(combinations), len(keys))
    return keys, imp, m


def _default_importance(codes: np.ndarray) -> np.ndarray:
    """sdcMicro's default: keys ranked by number of distinct values, fewest = 1 (stable ties)."""
    cards = np.array([np.unique(col[col >= 0]).size for col in codes.T])
    ranks = np.empty(cards.size, dtype=np.int64)
    ranks[np.argsort(cards, kind="stable")] = np.arange(1, cards.size + 1)
    return ranks


def _mask_costs(importance: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    """Cost of suppressing each mask of ``cols``: number of keys first, then lexicographically
    the importance of the keys it touches (importance 1 weighs more than all others together)."""
    m = len(cols)
    levels = int(importance.max())
    weight = np.array([1 << (levels - int(importance[c])) for c in cols], dtype=np.int64)
    big = 1 << (levels + 1)
    out = np.zeros(1 << m, dtype=np.int64)
    for mask in range(1 << m):
        bits = [b for b in range(m) if mask >> b & 1]
        out[mask] = len(bits) * big + int(weight[bits].sum()) if bits else 0
    return out


def _subsets(n_keys: int, m: int | None) -> list[tuple[int, ...]]:
    if m is None or m >= n_keys:
        return [tuple(range(n_keys))]
    return list(itertools.combinations(range(n_keys), m))


def _suppress_block(
    codes: np.ndarray,
    rows: np.ndarray,
    k: int,
    importance: np.ndarray,
    subsets: list[tuple[int, ...]],
    suppressed: np.ndarray,
    progress: ProgressFn,
) -> int:
    """Suppress within the records ``rows`` (one stratum); returns the smallest cell after."""
    original = codes.copy()
    for si, subset in enumerate(subsets):
        cols = np.asarray(subset, dtype=np.int64)
        f = wildcard_counts(codes[rows], cols)
        unsafe = np.flatnonzero(f < k)
        if unsafe.size:
            order = unsafe[np.argsort(f[unsafe], kind="stable")]
            costs = _mask_costs(importance, subset)
            for start in range(0, order.size, _BATCH):
                _greedy(codes, cols, rows, order[start : start + _BATCH], f, k, costs, suppressed)
                progress(
                    (si + 0.8 * min(1.0, (start + _BATCH) / order.size)) / len(subsets),
                    "local suppression",
                )
    # restore pass, most important key first (importance 1 first), then record order
    sub = suppressed[rows]
    cells_p, cells_c = np.nonzero(sub)
    if cells_p.size:
        rank = importance[cells_c]
        o = np.lexsort((cells_p, rank))
        cells_p, cells_c = cells_p[o], cells_c[o]
        table = np.asarray(subsets, dtype=np.int64)
        f_all = np.stack([wildcard_counts(codes[rows], s) for s in subsets])
        for start in range(0, cells_p.size, _BATCH):
            _restore(
                codes, original, table, rows,
                cells_p[start : start + _BATCH], cells_c[start : start + _BATCH],
                f_all, k, suppressed,
            )  # fmt: skip
            progress(0.8 + 0.2 * min(1.0, (start + _BATCH) / cells_p.size), "local suppression: restore")
    return int(min(int(wildcard_counts(codes[rows], s).min()) for s in subsets))


def _with_missing(column: pd.Series, mask: np.ndarray) -> pd.Series:
    """``column`` with the cells of ``mask`` missing; integer and boolean columns become pandas'
    nullable dtypes so that their other values stay exact."""
    if pd.api.types.is_bool_dtype(column.dtype) and not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("boolean")
    elif pd.api.types.is_integer_dtype(column.dtype) and not isinstance(
        column.dtype, pd.CategoricalDtype
    ):
        column = column.astype(f"{column.dtype}".replace("int", "Int").replace("uInt", "UInt"))
    return column.mask(mask)


def suppress(
    frame: pd.DataFrame,
    keys: Sequence[str],
    k: int,
    *,
    importance: Sequence[int] | None = None,
    strata: str | None = None,
    combinations: int | None = None,
    progress: ProgressFn | None = None,
) -> SuppressionResult:
    """Locally suppress key cells of ``frame`` until every key combination has >= ``k`` records,
    a missing value matching anything (see the module docstring for the algorithm and how it
    differs from sdcMicro's ``localSuppression``).

    ``importance``: one integer per key, 1 = most important (suppressed last), sdcMicro's
    convention; default: fewest distinct values = most important. ``strata``: a column within
    whose values k-anonymity is reached separately. ``combinations = m``: only every subset of
    ``m`` keys must be k-anonymous (sdcMicro ``combs``). Raises :class:`InvalidSuppression` (a
    ``ValueError``) with a one-line message naming the column on bad input.
    """
    started = time.perf_counter()
    report = progress or no_progress
    keys, imp, m = _check(frame, keys, k, importance, strata, combinations)
    k = int(k)
    codes = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, c in enumerate(keys):
        codes[:, j] = pd.factorize(frame[c], use_na_sentinel=True)[0]
    before = codes < 0
    if imp is None:
        imp = _default_importance(codes)
    subsets = _subsets(len(keys), m)
    if strata is None:
        blocks = [np.arange(len(frame), dtype=np.int64)]
    else:
        labels = pd.factorize(frame[strata], use_na_sentinel=False)[0]
        order = np.argsort(labels, kind="stable")
        bounds = np.flatnonzero(np.diff(labels[order])) + 1
        blocks = [b.astype(np.int64) for b in np.split(order, bounds)]
        smallest = min(b.size for b in blocks)
        if smallest < k:
            raise InvalidSuppression(
                f"local suppression: strata column '{strata}' has a stratum of {smallest} "
                f"records, fewer than k = {k}"
            )
    suppressed = np.zeros_like(before)
    k_after = len(frame)
    total_rows = max(1, len(frame))
    done = 0
    for rows in blocks:
        share = rows.size / total_rows
        k_after = min(
            k_after,
            _suppress_block(
                codes, rows, k, imp, subsets, suppressed,
                sub_progress(report, done / total_rows, done / total_rows + share),
            ),
        )  # fmt: skip
        done += rows.size
    out = frame.copy()
    counts: dict[str, int] = {}
    for j, c in enumerate(keys):
        mask = suppressed[:, j] & ~before[:, j]
        counts[c] = int(mask.sum())
        if counts[c]:
            out[c] = _with_missing(frame[c], mask)
    report(1.0, "local suppression")
    return SuppressionResult(
        frame=out,
        suppressed=counts,
        total=int(sum(counts.values())),
        k_after=int(k_after),
        seconds=time.perf_counter() - started,
    )
