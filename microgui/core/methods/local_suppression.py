"""Local suppression: set the fewest categorical key cells to missing so that every record's key
combination is shared by at least ``k`` records, with a missing value matching anything.

Reference semantics: sdcMicro's ``localSuppression`` (R/localSuppression.R, ``suppSubset``; its
nearest-neighbour step in src/calcSuppInds.cpp) and its frequency count ``freqCalc`` with
``alpha = 1`` (R/freqCalc.r): the size of record *i*'s key cell is

    f_i = #{ j : for every key c, x_ic = x_jc, or x_ic is missing, or x_jc is missing }

(sdcMicro 5.8.1, GitHub sdcTools/sdcMicro at commit cf32510; Templ, Kowarik & Meindl 2015,
"Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro", J. Stat. Softw.
67(4)). Local suppression itself: ``003`` §2 (values of a few attributes in a few records set
missing); minimal suppression for k-anonymity is NP-hard (``003`` §3.3, ``000`` §2.2), hence a
heuristic. Values that are already missing in the input match anything too and
are never counted as suppressions. Non-key columns are never touched.

Algorithm (greedy, near-minimal; documented here because it differs from sdcMicro's):

1. Every record is compared with every other one only through the *difference mask* ``D_ij``: the
   set of keys on which both are present and differ. Record *i* would, after suppressing the keys
   ``M``, match exactly the records with ``D_ij ⊆ M``. One pass over the block gives the histogram
   of ``D_ij`` over the ``2^m`` masks; a subset-sum (zeta) transform then gives, for every ``M``
   at once, the cell size ``F_i(M)`` that *i* would have. This is exact, not an estimate.
2. The records below ``k`` are visited in increasing order of their cell size (sdcMicro: in
   decreasing individual risk, the same order; measured on Adult, the reverse order costs 8-11 %
   more cells, a random one 1-3 %). A record still below ``k`` when its turn comes gets the mask
   ``M`` with ``F_i(M) >= k`` that has the fewest keys; among those, the one that spares the most
   important keys (importance 1 is suppressed last, compared lexicographically); among those, the
   one after which the most *other* records still below ``k`` match it (the same zeta transform
   over the unsafe records only), then the one with the larger cell. Suppressing every key of a
   record always works (``F = n``).
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
many categories are suppressed first. Here importance decides between masks of equal size only:
the number of cells comes first (in sdcMicro the nearest neighbours decide before importance
does). Equal ranks are allowed; with every key at 1 the fewest-cells rule and the help to other
unsafe records decide alone (Adult, 7 keys: 3,035 cells at k = 3 and 4,175 at k = 5 instead of
3,303 and 4,643 with the default importance, spread more evenly over the keys).

Measured (``python -m microgui.bench --suppression``; sdcMicro 5.8.1 ``localSuppression`` with its
default importance on the same keys): Adult's 7 categorical keys 3,303 cells at k = 3 (sdcMicro
5,637) and 4,643 at k = 5 (sdcMicro 8,239), about 0.3 s of CPU each (sdcMicro: minutes); sdcMicro's ``testdata`` with its example keys 174 at k = 3 (sdcMicro
293) and 299 at k = 5 (sdcMicro 500). sdcMicro suppresses more mainly through its one-cell steps
and its reduction (a): records dropped from large cells are no longer there to be matched. The
restore pass accounts for about 5 % (Adult: 3,477 and 4,861 cells without it). sdcMicro's own
``freqCalc`` on these releases finds no record below ``k``.

Cost: O(unsafe records x distinct key vectors x keys) for the greedy, the same per suppressed
cell for the restore pass (times the key subsets holding the cell's key with ``combinations``).
Adult: about 0.3 s of CPU. Sparse keys grow it: 100,000 census-shaped records on 6 keys (75,000
distinct vectors) took about 12 s of CPU.

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
from microgui.core.metrics.missing_match import distinct_rows as _entries
from microgui.core.metrics.missing_match import wildcard_counts
from microgui.core.metrics.missing_match import wildcard_counts_weighted as _weighted_counts
from microgui.core.progress import ProgressFn, no_progress, sub_progress

__all__ = [
    "SuppressionResult",
    "InvalidSuppression",
    "suppress",
    "wildcard_counts",
    "MAX_KEYS",
    "warm_up",
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
# kernels. They work on the distinct key vectors ("entries") of a block with their numbers of
# records ``w``, not on the records: Adult's 30,162 records have 5,988 distinct vectors on its 7
# categorical keys. A record that is suppressed moves from its entry to a child entry (created
# once per parent and mask, so identical records suppressed alike share it again).


@njit
def _diffs(ect: np.ndarray, cols: np.ndarray, vec: np.ndarray, ne: int, d: np.ndarray) -> None:
    """``d[t]`` = difference mask of entry ``t`` against the key vector ``vec``: bit b set when
    key ``cols[b]`` is present in both and differs. ``ect`` is keys x entries (column-wise, so
    that the inner loop runs over contiguous codes)."""
    for t in range(ne):
        d[t] = 0
    for b in range(cols.shape[0]):
        a = vec[cols[b]]
        if a < 0:
            continue
        col = ect[cols[b]]
        bit = np.int32(1 << b)
        for t in range(ne):
            v = col[t]
            if v >= 0 and v != a:
                d[t] |= bit


@njit
def _greedy(
    ect: np.ndarray,
    w: np.ndarray,
    f: np.ndarray,
    rec_entry: np.ndarray,
    used: np.ndarray,
    cols: np.ndarray,
    order: np.ndarray,
    k: int,
    cost: np.ndarray,
    child: np.ndarray,
    child_mask: np.ndarray,
) -> None:
    """Steps 1-3 of the module's algorithm for the records ``order``.

    ``ect`` (keys x entries, -1 = missing), ``w`` (records per entry), ``f`` (cell size of each
    entry on ``cols``), ``rec_entry`` and ``used[0]`` (entries in use) are updated in place.
    ``cost[M]`` ranks the masks (fewest keys, then sparing the important ones).
    """
    m = cols.shape[0]
    n_keys = ect.shape[0]
    full = 1 << m
    d = np.empty(ect.shape[1], dtype=np.int32)
    hist = np.empty(full, dtype=np.int64)
    gain = np.empty(full, dtype=np.int64)
    vec = np.empty(n_keys, dtype=np.int32)
    for r in order:
        e = rec_entry[r]
        if f[e] >= k:
            continue
        ne = used[0]
        for c in range(n_keys):
            vec[c] = ect[c, e]
        _diffs(ect, cols, vec, ne, d)
        hist[:] = 0
        gain[:] = 0
        for t in range(ne):
            hist[d[t]] += w[t]
            if f[t] < k and d[t] != 0:
                gain[d[t]] += w[t]
        for b in range(m):  # zeta transform: hist[M] = records with D ⊆ M
            bit = 1 << b
            for mask in range(full):
                if mask & bit:
                    hist[mask] += hist[mask ^ bit]
                    gain[mask] += gain[mask ^ bit]
        avail = 0
        for b in range(m):
            if vec[cols[b]] >= 0:
                avail |= 1 << b
        best = -1
        for mask in range(full):
            if mask & ~avail or hist[mask] < k:
                continue
            if (
                best < 0
                or cost[mask] < cost[best]
                or (cost[mask] == cost[best] and gain[mask] > gain[best])
                or (
                    cost[mask] == cost[best]
                    and gain[mask] == gain[best]
                    and hist[mask] > hist[best]
                )
            ):
                best = mask
        if best <= 0:  # impossible in a block of at least k records (best = avail works)
            continue
        w[e] -= 1
        if child[e] >= 0 and child_mask[e] == best:
            nt = child[e]
        else:
            nt = ne
            used[0] = ne + 1
            for c in range(n_keys):
                ect[c, nt] = vec[c]
            for b in range(m):
                if best & (1 << b):
                    ect[cols[b], nt] = -1
            w[nt] = 0
            child[nt] = -1
            child[e] = nt
            child_mask[e] = best
        w[nt] += 1
        rec_entry[r] = nt
        f[nt] = hist[best]
        nbest = ~best
        for t in range(ne):
            if d[t] != 0 and (d[t] & nbest) == 0:
                f[t] += 1


@njit
def _restore(
    ect: np.ndarray,
    w: np.ndarray,
    f: np.ndarray,
    rec_entry: np.ndarray,
    used: np.ndarray,
    subsets: np.ndarray,
    cell_r: np.ndarray,
    cell_c: np.ndarray,
    cell_value: np.ndarray,
    k: int,
    child: np.ndarray,
    child_col: np.ndarray,
    child_value: np.ndarray,
) -> None:
    """Step 4: give record ``cell_r[q]`` its value ``cell_value[q]`` back in key ``cell_c[q]``
    when the record and every record that would lose it as a match keep >= k on every subset.

    ``subsets`` (S x m key indices), ``f`` (S x entries: cell size per subset), the rest as in
    :func:`_greedy`.
    """
    s_count = subsets.shape[0]
    m = subsets.shape[1]
    n_keys = ect.shape[0]
    d = np.empty((s_count, ect.shape[1]), dtype=np.int32)
    cnt = np.empty(s_count, dtype=np.int64)
    has = np.empty(s_count, dtype=np.int32)  # bit of the key in the subset, 0 if absent
    vec = np.empty(n_keys, dtype=np.int32)
    for q in range(cell_r.shape[0]):
        r = cell_r[q]
        c = cell_c[q]
        e = rec_entry[r]
        ne = used[0]
        for cc in range(n_keys):
            vec[cc] = ect[cc, e]
        vec[c] = cell_value[q]
        ok = True
        for s in range(s_count):
            has[s] = 0
            for b in range(m):
                if subsets[s, b] == c:
                    has[s] = 1 << b
            cnt[s] = f[s, e]
            if has[s] == 0:
                continue
            ds = d[s]
            _diffs(ect, subsets[s], vec, ne, ds)
            total = 0
            h = has[s]
            for t in range(ne):
                if ds[t] == 0:
                    total += w[t]
                elif ds[t] == h and w[t] > 0 and f[s, t] - 1 < k:
                    ok = False
                    break
            if not ok or total < k:
                ok = False
                break
            cnt[s] = total
        if not ok:
            continue
        w[e] -= 1
        if child[e] >= 0 and child_col[e] == c and child_value[e] == vec[c]:
            nt = child[e]
        else:
            nt = ne
            used[0] = ne + 1
            for cc in range(n_keys):
                ect[cc, nt] = vec[cc]
            w[nt] = 0
            child[nt] = -1
            child[e] = nt
            child_col[e] = c
            child_value[e] = vec[c]
        w[nt] += 1
        rec_entry[r] = nt
        for s in range(s_count):
            f[s, nt] = cnt[s]
            if has[s] == 0:
                continue
            h = has[s]
            ds = d[s]
            for t in range(ne):
                if ds[t] == h:
                    f[s, t] -= 1


# --------------------------------------------------------------------------------------------
# counting with missing-as-wildcard: one implementation, in the metrics layer
# (:mod:`microgui.core.metrics.missing_match`), used here, by the plan and by the release check

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
            raise InvalidSuppression(
                f"local suppression: combinations must be >= 1, got {combinations}"
            )
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
    big = int(weight.sum()) + 1  # more than any set of keys weighs: size first
    out = np.zeros(1 << m, dtype=np.int64)
    for mask in range(1 << m):
        bits = [b for b in range(m) if mask >> b & 1]
        out[mask] = len(bits) * big + int(weight[bits].sum()) if bits else 0
    return out


def _subsets(n_keys: int, m: int | None) -> list[tuple[int, ...]]:
    if m is None or m >= n_keys:
        return [tuple(range(n_keys))]
    return list(itertools.combinations(range(n_keys), m))


def _grow(entries: np.ndarray, extra: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entry arrays with room for ``extra`` child entries: codes (keys x entries, int32), child
    index, child key."""
    cap = entries.shape[0] + extra + 1
    ect = np.full((entries.shape[1], cap), -1, dtype=np.int32)
    ect[:, : entries.shape[0]] = entries.T
    return ect, np.full(cap, -1, dtype=np.int64), np.full(cap, -1, dtype=np.int64)


def _suppress_block(
    codes: np.ndarray,
    k: int,
    importance: np.ndarray,
    subsets: list[tuple[int, ...]],
    progress: ProgressFn,
    never: int | None = None,
) -> tuple[np.ndarray, int]:
    """Suppress within one stratum (``codes``: its records x keys, -1 missing); returns the new
    codes and the smallest cell size after, over the subsets. ``never``: a key column never
    suppressed (every mask touching it costs more than any other: a mask without it always
    reaches k, since its groups hold >= k records)."""
    original = codes
    share = 0.8 / len(subsets)
    for si, subset in enumerate(subsets):
        cols = np.asarray(subset, dtype=np.int64)
        entries, rec_entry, w = _entries(codes)
        f_rec = wildcard_counts(codes, cols)
        unsafe = np.flatnonzero(f_rec < k)
        if unsafe.size == 0:
            continue
        f = np.zeros(entries.shape[0] + unsafe.size + 1, dtype=np.int64)
        f[rec_entry] = f_rec
        # lowest cell first (sdcMicro: highest risk first); identical records one after another
        order = unsafe[np.lexsort((rec_entry[unsafe], f_rec[unsafe]))]
        ect, child, child_mask = _grow(entries, unsafe.size)
        wfull = np.zeros(ect.shape[1], dtype=np.int64)
        wfull[: w.size] = w
        used = np.array([entries.shape[0]], dtype=np.int64)
        costs = _mask_costs(importance, subset)
        if never is not None and never in subset:
            bit = 1 << subset.index(never)
            touching = (np.arange(costs.size) & bit) != 0
            costs[touching] = np.iinfo(np.int64).max // 2
        for start in range(0, order.size, _BATCH):
            batch = order[start : start + _BATCH]
            _greedy(ect, wfull, f, rec_entry, used, cols, batch, k, costs, child, child_mask)
            progress(share * (si + min(1.0, (start + _BATCH) / order.size)), "local suppression")
        codes = ect.T[rec_entry].astype(np.int64)
    # restore pass: most important key first (importance 1 first), then record order
    cells_r, cells_c = np.nonzero((codes < 0) & (original >= 0))
    if cells_r.size:
        o = np.lexsort((cells_r, importance[cells_c]))
        cells_r, cells_c = cells_r[o].astype(np.int64), cells_c[o].astype(np.int64)
        values = original[cells_r, cells_c]
        entries, rec_entry, w = _entries(codes)
        table = np.asarray(subsets, dtype=np.int64)
        ect, child, child_col = _grow(entries, cells_r.size)
        child_value = np.full(ect.shape[1], -1, dtype=np.int64)
        wfull = np.zeros(ect.shape[1], dtype=np.int64)
        wfull[: w.size] = w
        f = np.zeros((len(subsets), ect.shape[1]), dtype=np.int64)
        for s, subset in enumerate(subsets):
            f[s, : entries.shape[0]] = _weighted_counts(entries[:, list(subset)], w)
        used = np.array([entries.shape[0]], dtype=np.int64)
        for start in range(0, cells_r.size, _BATCH):
            sl = slice(start, start + _BATCH)
            _restore(
                ect, wfull, f, rec_entry, used, table, cells_r[sl], cells_c[sl], values[sl], k,
                child, child_col, child_value,
            )  # fmt: skip
            progress(0.8 + 0.2 * min(1.0, (start + _BATCH) / cells_r.size), "local suppression")
        codes = ect.T[rec_entry].astype(np.int64)
    k_after = min(int(wildcard_counts(codes, s).min()) for s in subsets)
    return codes, k_after


def _with_missing(column: pd.Series, mask: np.ndarray) -> pd.Series:
    """``column`` with the cells of ``mask`` missing; integer and boolean columns become pandas'
    nullable dtypes so that their other values stay exact."""
    if pd.api.types.is_bool_dtype(column.dtype) and not isinstance(
        column.dtype, pd.CategoricalDtype
    ):
        column = column.astype("boolean")
    elif pd.api.types.is_integer_dtype(column.dtype) and not isinstance(
        column.dtype, pd.CategoricalDtype
    ):
        name = f"{column.dtype}".replace("int", "Int").replace("uInt", "UInt")
        column = column.astype(pd.api.types.pandas_dtype(name))
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
    fixed: Sequence[str] = (),
) -> SuppressionResult:
    """Locally suppress key cells of ``frame`` until every key combination has >= ``k`` records,
    a missing value matching anything (see the module docstring for the algorithm and how it
    differs from sdcMicro's ``localSuppression``).

    ``importance``: one integer per key, 1 = most important (suppressed last), sdcMicro's
    convention; default: fewest distinct values = most important. ``strata``: a column within
    whose values k-anonymity is reached separately. ``combinations = m``: only every subset of
    ``m`` keys must be k-anonymous (sdcMicro ``combs``). ``fixed``: columns that belong to
    the key combination but are never suppressed (a plan's microaggregated continuous keys,
    issue 31): a record then matches only records with equal values there, and every group of
    equal ``fixed`` values must hold >= ``k`` records (not with ``combinations``). Raises :class:`InvalidSuppression` (a
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
    never: int | None = None
    if fixed:
        if m is not None:
            raise InvalidSuppression("local suppression: fixed keys are not for combinations")
        group = frame.groupby(list(fixed), dropna=False, sort=False).ngroup().to_numpy()
        smallest = int(np.bincount(group).min()) if len(group) else k
        if smallest < k:
            raise InvalidSuppression(
                f"local suppression: the fixed key(s) {', '.join(fixed)} leave a group of "
                f"{smallest} records with equal values, fewer than k = {k}"
            )
        # one more key, never suppressed: its masks cost more than any other (_suppress_block)
        never = len(keys)
        codes = np.column_stack([codes, group.astype(np.int64)])
        imp = np.append(imp, int(imp.max()) + 1)
        subsets = [tuple(range(len(keys) + 1))]
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
    k_after = len(frame)
    total_rows = max(1, len(frame))
    done = 0
    for rows in blocks:
        part = sub_progress(report, done / total_rows, (done + rows.size) / total_rows)
        codes[rows], block_k = _suppress_block(codes[rows], k, imp, subsets, part, never)
        k_after = min(k_after, block_k)
        done += rows.size
    out = frame.copy()
    counts: dict[str, int] = {}
    for j, c in enumerate(keys):
        mask = (codes[:, j] < 0) & ~before[:, j]
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


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels on a tiny table, restore pass and
    combinations included; returns the seconds it took (for the app's kernel preparation)."""
    started = time.perf_counter()
    tiny = pd.DataFrame({"a": list("xxxyy"), "b": list("ppqqq"), "c": list("rrrrs")})
    suppress(tiny, ["a", "b", "c"], 2)
    suppress(tiny, ["a", "b", "c"], 2, combinations=2)
    return time.perf_counter() - started
