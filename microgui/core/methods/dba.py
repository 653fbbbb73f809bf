"""DBA: density-based microaggregation, both phases.

Sulekha & Arumugam, ``002_f464918b99c38812.txt`` §4.13, summarizing Lin, Wen, Hsieh & Chang,
"Density-based microaggregation for statistical disclosure control", Expert Systems with
Applications 37(4), 2010 ("The DBA first forms groups of records by the descending order of their
densities, then fine-tunes these groups in reverse order").

**Definitions.** The survey only names the k-neighbourhood and the k-density; the full text of
Lin et al. could not be read here: the stored web pages hold a copy of it (c.coek.info), but
the search tool returns only excerpts of its first page and abstract, and searches of the pages
and code for later papers restating its definitions found none; so the definitions below are
our reading, to be checked against the paper's §3 when it can be read. For a set T of records, the k-neighbourhood kNN_T(x) of a
record x of T is x and its k-1 nearest records in T; the k-density of x in T is the inverse of
the sum of the distances from x to the records of kNN_T(x)::

    dens_T(x) = 1 / Σ_{y ∈ kNN_T(x)} d(x, y)

with d the Euclidean distance on the z-scored quasi-identifiers (``003`` §5.2). Highest density
= smallest sum of the k-1 nearest distances.

**Phase 1 (DBA-1)**::

    U = all records
    while |U| >= k:
        x = the record of U with the highest k-density in U, dens_U(x)
        G = kNN_U(x): x and its k-1 nearest records in U    (a new group, numbered in this order)
        U = U minus G
    each record left in U (fewer than k) joins the group whose centroid is nearest to it

*Which k-density* (issue 16). ``002`` §4.13: "it uses K nearest neighborhood of the record with
the maximum k-density among all the records that are not allocated to any group". Three readings
were compared: (a) densities measured once on the whole data set, neighbourhood among the
ungrouped records (microgui before issue 16); (b) densities measured among the ungrouped
records, dens_U, so that the density that picks x is the compactness of the very group kNN_U(x)
it forms (this module); (c) the sparsest record first. (c) contradicts "maximum k-density" and the
abstract's "by the descending order of their densities", however well it does (better than MDAV
in 6 of the 12 reference cells). (a) ranks records by neighbourhoods that no longer exist once
their neighbours are grouped, and the survey's "among all the records that are not allocated"
qualifies the k-density as well as the neighbourhood; (b) is the one reading in which the
k-density and the k-neighbourhood are taken in the same set. (b) still forms the groups "by the
descending order of their densities": grouping records only lengthens the others' k-1 nearest
distances, so the densities of successive seeds never increase. The paper may say otherwise;
``test_dba.py`` pins (b) on a hand case where (a) and (b) differ.

``002`` §4.13 says "till k records remain unallocated. These remaining k records are then
allocated to its nearest groups"; read literally that leaves exactly k records ungrouped, which
could form a group of their own. Here groups are formed while at least k records
remain, so fewer than k are left over. The left-over records join their nearest groups
simultaneously (centroids of the phase-1 groups), so phase-1 groups have k..2k-1 records.

**Phase 2 (DBA-2)**. The groups are visited in the reverse order of their formation. For a group
G, *decomposing* G means removing it and moving each of its records to the group (other than G)
whose centroid is nearest to that record (all records at once, with the centroids before the
move). G is decomposed when this lowers the total SSE: ΔSSE = Σ_H [SSE(H ∪ A_H) - SSE(H)] -
SSE(G) < 0, A_H being the records of G sent to H. The groups visited later see the groups as
changed by earlier decompositions. Finally every group of 2k or more records is split by MDAV
(``003`` Algorithm 5.1; :func:`microgui.core.methods.mdav.mdav`) into groups of k..2k-1 records.
Splitting never raises the SSE (the within-group sum of squares of a union is at least the sum of
its parts'), so the final SSE is at most phase 1's; every final group has k..2k-1 records. The
survey does not say how large groups are split; MDAV is the fixed-size method of the papers at
hand.

**Information loss** (IL = 100·SSE/SST, k = 3 / 4 / 5 / 10). Reading (b): Census 5.79 / 7.90 / 9.11
/ 14.13 %, Tarragona 15.94 / 23.00 / 25.72 / 39.56 %, EIA 0.41 / 0.58 / 0.82 / 2.19 %; below MDAV
(5.69 / 7.49 / 9.09 / 14.16, 16.93 / 19.55 / 22.46 / 33.19, 0.48 / 0.67 / 1.67 / 3.84) in 6 of the
12 cells (Census k = 10, Tarragona k = 3, all of EIA). Reading (a) gave 6.23 / 8.62 / 10.29 /
15.56, 17.34 / 23.07 / 29.03 / 38.01, 0.49 / 0.76 / 1.10 / 2.98 (below MDAV in 2 cells); (b) is
lower in 11 of the 12 (not Tarragona k = 10). Reading (c), for the record: 5.79 / 7.71 / 9.23 /
14.50, 16.61 / 19.41 / 23.22 / 33.27, 0.43 / 0.60 / 0.95 / 3.32. Lin et al.'s abstract reports the
least information loss among the compared methods "for over half of the test situations"; their
table could not be checked here.

**Tie rule.** Records are compared by (distance, row), centroids by (distance, group number):
the highest density is the smallest sum with the smallest row (sums added in ascending order of
the distances, the same arithmetic everywhere), the k-1 nearest are the k-1 smallest (distance,
row) pairs, the nearest group the smallest (distance, group) pair.

**Group numbering.** Phase-1 groups in the order formed, decomposed groups dropped; a group split
by MDAV is replaced by its parts in MDAV's order.

**Implementation.** No n × n matrix anywhere (memory O(n·d)):

- *densities*: below 9 quasi-identifiers, scipy's ``cKDTree``, queried in blocks of records.
  Every candidate the tree returns is re-measured with the one distance function of
  :func:`dba_reference` (squared differences summed in column order), and a record's query is
  widened until its radius exceeds its (k-1)-th distance by a safety margin, so the tree's own
  rounding never decides a tie. From 9 on, an exact tiled brute-force numba pass over all pairs
  (O(n²·d) time, O(n·k) memory): k-d trees degrade with the dimension. Measured at 50,000
  correlated records, k = 5, on 2 busy cores: tree 0.6 s against 6.5 s brute force at d = 4,
  2.2 s against 9.4 s at d = 6, 8.4 s against 11 s at d = 8, but 22 s against 9.7 s at d = 10
  (and 11 s against 2.3 s at 20,000 × 13). Both give bit-identical sums. Progress and
  cancellation between blocks of records.
- *phase 1*: a numba kernel keeps the ungrouped records compacted at the front of a column-major
  copy (swap-remove, as the MDAV kernel does) and the ungrouped records in a binary min-heap on
  (sum, row), starting from the whole-set sums. A record's key is a lower bound of its current
  sum, since grouping records only lengthens the others' k-1 nearest distances. The kernel pops
  the smallest key; if none of that record's k-1 nearest (as last measured) has been grouped
  since, its key is its current sum, hence the smallest of all (every other key is at most its
  record's sum), and it forms its group. Otherwise one exact distance pass over the ungrouped
  records measures its sum again: unchanged, it forms its group; grown, it goes back in the heap
  with its new sum and neighbours. So the partition is the one of measuring every density again
  after every group (:func:`dba_reference` does exactly that), at one pass per group formed from
  whole-set neighbours plus one per sum measured again: O(n²·d/k) times a small factor (at 50,000
  × 10, k = 5: 10,000 groups, about 40,000 sums measured again, 8 s for the whole run on 2 busy
  cores against 6 s for reading (a); k = 3: 11 s against 12 s, timings noisy). It returns to Python after a bounded amount of work.
- *phase 2*: the nearest centroid of each record of the group being dissolved, by one numba
  distance pass over all centroids (column-major, vectorized): O(n·g·d) = O(n²·d/k) in all.
  (Pruning by the triangle inequality ||x - c_h|| >= ||c_g - c_h|| - ||x - c_g|| kept a fifth
  of the centroids at 50,000 × 10, too many to pay for its scalar loop; a k-d tree of moving
  centroids cost more in Python than it saved.) ΔSSE, means and SSEs of the groups involved are
  recomputed from their records.

:func:`dba` and the brute-force :func:`dba_reference` share that arithmetic and give the same
partition, ties included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.methods.jit_cache import first_call_compiles
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import as_matrix, check_k
from microgui.core.methods.mdav import mdav
from microgui.core.progress import ProgressFn, Throttle, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "dba",
    "dba_partition",
    "DbaPartition",
    "dba_reference",
    "k_density_sums",
    "warm_up",
    "DBA",
]

#: Relative margin between a tree query's radius and the chosen distance (the tree rounds its
#: distances differently from :func:`_sq_dists`; 1e-9 is far above that rounding).
_MARGIN = 1e-9

#: Rows per block of the density queries (progress and cancellation between blocks).
_DENSITY_BLOCK = 512

#: From this many quasi-identifiers on, the densities are computed by brute force rather than
#: with a k-d tree (measured at 50,000 records: tree 4x faster at d = 6, even at d = 8, brute
#: force 2.3x faster at d = 10 and 5x at d = 13).
_BRUTE_MIN_DIMS = 9

#: Attribute-record operations per kernel call (phase-1 groups, brute-force densities); progress
#: and cancellation between calls.
_BATCH_WORK = 30_000_000

# Shares of the progress bar (roughly the shares of the time at 50,000 x 10).
_P_DENSITY, _P_PHASE1, _P_PHASE2 = 0.4, 0.55, 0.97


# --------------------------------------------------------------------------------------------
# arithmetic shared by the fast version and the reference (bit-identical decisions)
# --------------------------------------------------------------------------------------------


def _sq_dists(points: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of each row of ``points`` to ``x``, summed in column order.

    The numba kernels compute ``t = point - x; acc += t * t`` column by column, the same
    operations in the same order, so every distance is bit-identical across implementations.
    """
    out = np.zeros(points.shape[0])
    for j in range(points.shape[1]):
        t = points[:, j] - x[j]
        out += t * t
    return out


def _sq_dists_many(cands: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """(m, c) squared distances of cands[i, a] to queries[i]: the arithmetic of :func:`_sq_dists`."""
    out = np.zeros(cands.shape[:2])
    for j in range(cands.shape[2]):
        t = cands[:, :, j] - queries[:, None, j]
        out += t * t
    return out


def _sum_sorted(sorted_dists: np.ndarray) -> np.ndarray:
    """Row sums of an (n, k-1) array of ascending distances, added left to right."""
    out = np.zeros(sorted_dists.shape[0])
    for j in range(sorted_dists.shape[1]):
        out += sorted_dists[:, j]
    return out


def _mean(points: np.ndarray) -> np.ndarray:
    return np.asarray(points.sum(axis=0) / points.shape[0])


def _sse(points: np.ndarray) -> float:
    c = points - _mean(points)
    return float((c * c).sum())


def _pick_nearest(sq: np.ndarray, ids: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` smallest (sq, id) pairs, in that order."""
    return np.lexsort((ids, sq))[:count]


def _attach_leftovers(x: np.ndarray, groups: list[np.ndarray], rest: np.ndarray) -> None:
    """DBA-1's last step: each left-over record joins the group with the nearest centroid
    (centroids of the groups before any joins; ties: smallest group number)."""
    if not len(rest):
        return
    centroids = np.array([_mean(x[g]) for g in groups])
    ids = np.arange(len(groups))
    joins: dict[int, list[int]] = {}
    for r in rest:
        sq = _sq_dists(centroids, x[r])
        joins.setdefault(int(_pick_nearest(sq, ids, 1)[0]), []).append(int(r))
    for g, rows in joins.items():
        groups[g] = np.sort(np.concatenate([groups[g], rows]))


def _phase2(
    x: np.ndarray,
    groups: list[np.ndarray],
    nearest_groups: Callable[[np.ndarray, int], np.ndarray],
    means: np.ndarray,
    sses: np.ndarray,
    alive: np.ndarray,
    progress: ProgressFn,
) -> None:
    """DBA-2: decompose groups, last formed first, when that lowers the SSE (in place).

    ``nearest_groups(points, g)`` gives, for each point, the live group other than g whose
    centroid (``means``) is nearest, ties to the smallest group number.
    """
    g_count = len(groups)
    throttle = Throttle(progress, "fine-tuning groups")
    live = int(alive.sum())
    for step, g in enumerate(range(g_count - 1, -1, -1)):
        throttle(step / g_count)
        if live < 2:
            break
        targets = nearest_groups(x[groups[g]], g)
        delta = 0.0
        merged: dict[int, np.ndarray] = {}
        for h in np.unique(targets):
            h = int(h)
            rows = np.sort(np.concatenate([groups[h], groups[g][targets == h]]))
            merged[h] = rows
            delta += _sse(x[rows]) - float(sses[h])
        delta -= float(sses[g])
        if delta < 0:
            alive[g] = False
            live -= 1
            for h, rows in merged.items():
                groups[h] = rows
                means[h] = _mean(x[rows])
                sses[h] = _sse(x[rows])
    throttle(1.0)


def _finish(
    x: np.ndarray, k: int, groups: list[np.ndarray], alive: np.ndarray, progress: ProgressFn
) -> np.ndarray:
    """Labels in group order; groups of 2k or more records split by MDAV."""
    labels = np.empty(x.shape[0], dtype=np.int64)
    label = 0
    throttle = Throttle(progress, "splitting large groups (MDAV)")
    for g, rows in enumerate(groups):
        if not alive[g]:
            continue
        if len(rows) >= 2 * k:
            sub = mdav(x[rows], k)
            labels[rows] = sub + label
            label += int(sub.max()) + 1
        else:
            labels[rows] = label
            label += 1
        throttle(g / len(groups))
    return labels


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------


@_njit
def _knn_sq_brute(cont: np.ndarray, lo: int, hi: int, kk: int, out: np.ndarray) -> None:
    """The kk smallest squared distances from each record lo..hi-1 to the other records,
    ascending, into out[lo:hi]: exact brute force in tiles (32 records against 256 candidates
    at a time, all in L1 cache), distances summed in column order as :func:`_sq_dists`."""
    d, n = cont.shape
    tile_q = 32
    tile_c = 256
    buf = np.empty(tile_c, dtype=np.float64)
    for i in range(lo, hi):
        for a in range(kk):
            out[i, a] = np.inf
    for q0 in range(lo, hi, tile_q):
        q1 = min(q0 + tile_q, hi)
        for c0 in range(0, n, tile_c):
            c1 = min(c0 + tile_c, n)
            w = c1 - c0
            for i in range(q0, q1):
                for c in range(w):
                    buf[c] = 0.0
                for j in range(d):
                    xi = cont[j, i]
                    row = cont[j, c0:c1]
                    for c in range(w):
                        t = row[c] - xi
                        buf[c] += t * t
                best = out[i]
                worst = best[kk - 1]
                for c in range(w):
                    v = buf[c]
                    if v < worst and c0 + c != i:
                        a = kk - 1
                        while a > 0 and v < best[a - 1]:
                            best[a] = best[a - 1]
                            a -= 1
                        best[a] = v
                        worst = best[kk - 1]


@_njit
def _heap_less(keys: np.ndarray, rows: np.ndarray, a: int, b: int) -> bool:
    return bool(keys[a] < keys[b] or (keys[a] == keys[b] and rows[a] < rows[b]))


@_njit
def _heap_swap(keys: np.ndarray, rows: np.ndarray, a: int, b: int) -> None:
    t = keys[a]
    keys[a] = keys[b]
    keys[b] = t
    r = rows[a]
    rows[a] = rows[b]
    rows[b] = r


@_njit
def _heap_pop(keys: np.ndarray, rows: np.ndarray, size: int) -> int:
    """Remove the smallest (key, row) of the binary heap keys/rows[:size] (moved to the
    position ``size - 1``); returns the new size."""
    size -= 1
    _heap_swap(keys, rows, 0, size)
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _heap_less(keys, rows, c + 1, c):
            c += 1
        if not _heap_less(keys, rows, c, i):
            break
        _heap_swap(keys, rows, i, c)
        i = c
    return size


@_njit
def _heap_push(keys: np.ndarray, rows: np.ndarray, size: int, key: float, row: int) -> int:
    keys[size] = key
    rows[size] = row
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _heap_less(keys, rows, i, parent):
            break
        _heap_swap(keys, rows, i, parent)
        i = parent
    return size + 1


@_njit
def _take_group(
    cont: np.ndarray,
    idx: np.ndarray,
    pos_of: np.ndarray,
    group_of: np.ndarray,
    take: np.ndarray,
    k: int,
    m: int,
    label: int,
) -> None:
    """Group the records at positions ``take`` (of the m ungrouped) and swap-remove them."""
    d = cont.shape[0]
    for a in range(k):
        group_of[idx[take[a]]] = label
    desc = np.sort(take)[::-1]  # highest positions first
    for a in range(k):
        q = desc[a]
        last = m - 1
        pos_of[idx[q]] = -1
        if q != last:
            for j in range(d):
                cont[j, q] = cont[j, last]
            idx[q] = idx[last]
            pos_of[idx[q]] = q
        m -= 1


@_njit
def _phase1_batch(
    cont: np.ndarray,
    idx: np.ndarray,
    pos_of: np.ndarray,
    keys: np.ndarray,
    rows: np.ndarray,
    near: np.ndarray,
    group_of: np.ndarray,
    state: np.ndarray,
    k: int,
    budget: int,
) -> None:
    """DBA-1 groups until about ``budget`` attribute-record operations are done.

    The ungrouped records sit compacted at the front of ``cont`` (d × n, column-major), with
    their rows in ``idx`` and each row's position in ``pos_of`` (-1 once grouped).
    ``keys``/``rows``: a binary min-heap of (sum, row), one entry per ungrouped record, whose
    sum is a lower bound of the record's current sum (exact when none of its k-1 nearest has
    been grouped since it was measured). ``near[r]``: the rows of r's k-1 nearest when its sum
    was last measured here (``near[r, 0] = -1``: not measured here yet). ``state`` = [heap size,
    records left m, next group number, sums measured again].
    """
    d = cont.shape[0]
    size = state[0]
    m = state[1]
    label = state[2]
    kk = k - 1
    dist = np.empty(cont.shape[1], dtype=np.float64)
    bd = np.empty(kk, dtype=np.float64)
    bx = np.empty(kk, dtype=np.int64)
    bp = np.empty(kk, dtype=np.int64)
    take = np.empty(k, dtype=np.int64)
    done = 0
    while m >= k and done < budget:
        size = _heap_pop(keys, rows, size)
        key = keys[size]
        r = rows[size]
        rp = pos_of[r]
        if rp < 0:
            continue  # grouped since it was pushed
        if near[r, 0] >= 0:
            intact = True
            for a in range(kk):
                if pos_of[near[r, a]] < 0:
                    intact = False
                    break
            if intact:
                # None of its k-1 nearest grouped since they were measured: they are still its
                # k-1 nearest ungrouped records and its key is its sum. No distance pass.
                take[0] = rp
                for a in range(kk):
                    take[a + 1] = pos_of[near[r, a]]
                _take_group(cont, idx, pos_of, group_of, take, k, m, label)
                m -= k
                label += 1
                continue
        for i in range(m):
            dist[i] = 0.0
        for j in range(d):
            col = cont[j, :m]
            c = cont[j, rp]
            for i in range(m):
                t = col[i] - c
                dist[i] += t * t
        done += m * d
        # the kk smallest (distance, row) pairs other than r, kept sorted by insertion
        filled = 0
        for i in range(m):
            if i == rp:
                continue
            di = dist[i]
            xi = idx[i]
            if filled == kk and not (di < bd[kk - 1] or (di == bd[kk - 1] and xi < bx[kk - 1])):
                continue
            a = filled if filled < kk else kk - 1
            while a > 0 and (di < bd[a - 1] or (di == bd[a - 1] and xi < bx[a - 1])):
                bd[a] = bd[a - 1]
                bx[a] = bx[a - 1]
                bp[a] = bp[a - 1]
                a -= 1
            bd[a] = di
            bx[a] = xi
            bp[a] = i
            if filled < kk:
                filled += 1
        # its k-density among the ungrouped records, with k_density_sums' arithmetic
        total = 0.0
        for a in range(kk):
            total += np.sqrt(bd[a])
        if total != key:
            # Some of its nearest were grouped: its sum grew. Back in the heap with it.
            for a in range(kk):
                near[r, a] = bx[a]
            state[3] += 1
            size = _heap_push(keys, rows, size, total, r)
            continue
        take[0] = rp
        for a in range(kk):
            take[a + 1] = bp[a]
        _take_group(cont, idx, pos_of, group_of, take, k, m, label)
        m -= k
        label += 1
    state[0] = size
    state[1] = m
    state[2] = label


@_njit
def _nearest_centroids(
    means: np.ndarray, alive: np.ndarray, exclude: int, points: np.ndarray, out: np.ndarray
) -> None:
    """For each point (a record of group ``exclude``), the live group other than ``exclude``
    whose centroid is nearest, by (squared distance, group number): one distance pass over all
    centroids per point. ``means`` is column-major (Fortran order), so each pass runs along
    memory and vectorizes.
    """
    g, d = means.shape
    dist = np.empty(g, dtype=np.float64)
    for a in range(points.shape[0]):
        for h in range(g):
            dist[h] = 0.0
        for j in range(d):
            c = points[a, j]
            col = means[:, j]
            for h in range(g):
                t = col[h] - c
                dist[h] += t * t
        best = -1
        best_sq = np.inf
        for h in range(g):  # ascending: ties go to the smallest group number
            if dist[h] < best_sq and alive[h] and h != exclude:
                best_sq = dist[h]
                best = h
        out[a] = best


# --------------------------------------------------------------------------------------------
# fast version
# --------------------------------------------------------------------------------------------


def k_density_sums(
    values: npt.ArrayLike,
    k: int,
    *,
    method: str = "auto",
    progress: ProgressFn = no_progress,
) -> np.ndarray:
    """Σ of the distances from each record to its k-1 nearest other records (1 / k-density in the
    whole data set: DBA-1's starting keys).

    The sum adds the k-1 distances in ascending order. ``method``: ``"tree"`` (scipy's
    ``cKDTree``, queried in blocks; every candidate is re-measured with :func:`_sq_dists`'s
    arithmetic and a record's query is widened while its (k-1)-th distance is too close to the
    query radius), ``"brute"`` (an exact tiled numba pass over all pairs, O(n²·d)) or
    ``"auto"``: brute force from :data:`_BRUTE_MIN_DIMS` dimensions on, where k-d trees lose
    their edge (see the module docstring). All three give bit-identical sums. Progress and
    cancellation between blocks.
    """
    x = as_matrix(values)
    n, d = x.shape
    k = check_k(k, n)
    if method not in ("auto", "tree", "brute"):
        raise ValueError(f"method={method!r} must be auto, tree or brute")
    if method == "brute" or (method == "auto" and d >= _BRUTE_MIN_DIMS):
        return _density_sums_brute(x, k, progress)
    kk = k - 1
    tree = cKDTree(x)
    out = np.empty(n)
    throttle = Throttle(progress, "measuring k-densities")
    for lo in range(0, n, _DENSITY_BLOCK):
        rows = np.arange(lo, min(lo + _DENSITY_BLOCK, n))
        kq = min(k + 1, n)
        while len(rows):
            dd, ii = tree.query(x[rows], k=kq)
            dd = dd.reshape(len(rows), kq)
            ii = ii.reshape(len(rows), kq)
            sq = _sq_dists_many(x[ii], x[rows])
            sq[ii == rows[:, None]] = np.inf  # the record itself
            order = np.lexsort((ii, sq), axis=-1)[:, :kk]
            chosen = np.take_along_axis(sq, order, axis=-1)
            t = chosen[:, -1]
            # Complete when no record outside the candidates can be nearer than the (k-1)-th
            # (records tied with it do not change the sum: equal values).
            done = (kq >= n) | (t == 0) | (dd[:, -1] ** 2 > t * (1 + _MARGIN))
            out[rows[done]] = _sum_sorted(np.sqrt(chosen[done]))
            rows = rows[~done]
            kq = min(2 * kq, n)
        throttle(min(lo + _DENSITY_BLOCK, n) / n)
    return out


def _density_sums_brute(x: np.ndarray, k: int, progress: ProgressFn) -> np.ndarray:
    n, d = x.shape
    cont = np.ascontiguousarray(x.T)
    nearest = np.empty((n, k - 1), dtype=np.float64)
    step = max(1, _BATCH_WORK // max(n * d, 1))
    throttle = Throttle(progress, "measuring k-densities")
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        _knn_sq_brute(cont, lo, hi, k - 1, nearest)
        throttle(hi / n)
    return _sum_sorted(np.sqrt(nearest))


def _phase1_fast(
    x: np.ndarray, k: int, sums: np.ndarray, progress: ProgressFn
) -> tuple[list[np.ndarray], int]:
    """DBA-1 groups (left-overs attached) and how many sums were measured again."""
    n = x.shape[0]
    # sorted ascending by (sum, row): a valid binary min-heap as it is
    rows = np.lexsort((np.arange(n), sums)).astype(np.int64)
    keys = np.ascontiguousarray(sums[rows], dtype=np.float64)
    cont = np.array(x.T, dtype=np.float64, order="C", copy=True)
    idx = np.arange(n, dtype=np.int64)
    pos_of = np.arange(n, dtype=np.int64)
    group_of = np.full(n, -1, dtype=np.int64)
    near = np.full((n, k - 1), -1, dtype=np.int64)
    state = np.array([n, n, 0, 0], dtype=np.int64)
    throttle = Throttle(progress, "forming groups by density")
    while state[1] >= k:
        _phase1_batch(cont, idx, pos_of, keys, rows, near, group_of, state, k, _BATCH_WORK)
        left = int(state[1]) / n
        throttle(1.0 - left * left)
    count = int(state[2])
    members = np.argsort(group_of[group_of >= 0], kind="stable")
    grouped = np.flatnonzero(group_of >= 0)[members]
    groups = list(grouped.reshape(count, k)) if count else []
    _attach_leftovers(x, groups, np.flatnonzero(group_of < 0))
    return groups, int(state[3])


@dataclass(frozen=True)
class DbaPartition:
    """The outcome of :func:`dba_partition`: final labels and what phase 2 did.

    ``phase1_labels``: the DBA-1 groups (k..2k-1 records), numbered in the order formed;
    ``remeasured``: how many times DBA-1 found a record's k-density lowered by the grouping of
    some of its neighbours and measured it again; ``decomposed``: how many groups DBA-2
    dissolved; ``split``: how many groups of 2k or more records MDAV split at the end.
    """

    labels: np.ndarray
    phase1_labels: np.ndarray
    decomposed: int
    split: int
    remeasured: int = 0


def _labels_of(groups: list[np.ndarray], n: int) -> np.ndarray:
    labels = np.empty(n, dtype=np.int64)
    for g, rows in enumerate(groups):
        labels[rows] = g
    return labels


def dba_partition(
    values: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> DbaPartition:
    """DBA (Lin et al. 2010; ``002`` §4.13), both phases; see the module docstring.

    Parameters
    ----------
    values
        (n, d) array, already standardized (Euclidean distance on these values).
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    DbaPartition
        ``labels``: int64 group label per record (row order); every group has k..2k-1 records.
    """
    x = as_matrix(values)
    n = x.shape[0]
    k = check_k(k, n)
    kernels = [_phase1_batch, _nearest_centroids]
    if x.shape[1] >= _BRUTE_MIN_DIMS:
        kernels.append(_knn_sq_brute)
    if first_call_compiles(*kernels):
        # Not compiled in this process yet: numba loads its on-disk cache or, on the very first
        # run, compiles (several seconds, during which a cancel cannot take effect); warm_up()
        # does this ahead of time.
        progress(0.0, "compiling the DBA kernels (first run only)")
    progress(0.0, "measuring k-densities")
    sums = k_density_sums(x, k, progress=sub_progress(progress, 0.0, _P_DENSITY))
    groups, passes = _phase1_fast(x, k, sums, sub_progress(progress, _P_DENSITY, _P_PHASE1))
    phase1 = _labels_of(groups, n)
    means = np.asfortranarray(np.array([_mean(x[g]) for g in groups]))
    sses = np.array([_sse(x[g]) for g in groups])
    alive = np.ones(len(groups), dtype=bool)

    def nearest_groups(points: np.ndarray, exclude: int) -> np.ndarray:
        out = np.empty(len(points), dtype=np.int64)
        _nearest_centroids(means, alive, exclude, np.ascontiguousarray(points), out)
        return out

    _phase2(
        x, groups, nearest_groups, means, sses, alive, sub_progress(progress, _P_PHASE1, _P_PHASE2)
    )
    labels = _finish(x, k, groups, alive, sub_progress(progress, _P_PHASE2, 1.0))
    progress(1.0, "done")
    split = sum(1 for g, rows in enumerate(groups) if alive[g] and len(rows) >= 2 * k)
    return DbaPartition(labels, phase1, int((~alive).sum()), split, passes)


def dba(values: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress) -> np.ndarray:
    """The DBA labels of :func:`dba_partition` (int64 per record; groups of k..2k-1)."""
    return dba_partition(values, k, progress=progress).labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    x = np.random.default_rng(0).normal(size=(30, 2))
    dba(x, 3)
    k_density_sums(x, 3, method="brute")
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# brute-force reference
# --------------------------------------------------------------------------------------------


def dba_reference(values: npt.ArrayLike, k: int) -> np.ndarray:
    """DBA by brute force in plain numpy (all pairwise distances, every centroid): the oracle
    of the tests. Same phases, tie rules and arithmetic as :func:`dba`; O(n²) memory, so for
    small inputs only.
    """
    x = as_matrix(values)
    n = x.shape[0]
    k = check_k(k, n)
    rows = np.arange(n)
    sq_all = np.array([_sq_dists(x, x[i]) for i in range(n)])
    np.fill_diagonal(sq_all, np.inf)
    # phase 1: the ungrouped record of highest k-density among the ungrouped records (all
    # densities measured again after every group), with its k-1 nearest ungrouped records
    assigned = np.zeros(n, dtype=bool)
    groups: list[np.ndarray] = []
    while n - assigned.sum() >= k:
        live = rows[~assigned]
        sq = sq_all[np.ix_(live, live)]
        nearest = np.sort(np.partition(sq, k - 2, axis=1)[:, : k - 1], axis=1)
        sums = _sum_sorted(np.sqrt(nearest))
        r = live[np.lexsort((live, sums))[0]]
        cand = live[live != r]
        near = cand[_pick_nearest(sq_all[r, cand], cand, k - 1)]
        members = np.sort(np.concatenate([[r], near]))
        assigned[members] = True
        groups.append(members)
    _attach_leftovers(x, groups, rows[~assigned])
    # phase 2
    means = np.array([_mean(x[g]) for g in groups])
    sses = np.array([_sse(x[g]) for g in groups])
    alive = np.ones(len(groups), dtype=bool)

    def nearest_groups(points: np.ndarray, exclude: int) -> np.ndarray:
        ids = np.flatnonzero(alive)
        ids = ids[ids != exclude]
        return np.array([ids[_pick_nearest(_sq_dists(means[ids], p), ids, 1)[0]] for p in points])

    _phase2(x, groups, nearest_groups, means, sses, alive, no_progress)
    return _finish(x, k, groups, alive, no_progress)


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run_dba(inp: MethodInput) -> MethodOutput:
    z = inp.qi.continuous
    result = dba_partition(z, inp.k, progress=inp.progress)
    extra = {
        "groups_phase1": int(result.phase1_labels.max()) + 1 if len(z) else 0,
        "groups_decomposed": result.decomposed,
        "groups_split": result.split,
        "densities_remeasured": result.remeasured,
        "sse_phase1": _partition_sse(z, result.phase1_labels),
    }
    return MethodOutput(labels=result.labels, extra=extra)


def _partition_sse(z: np.ndarray, labels: np.ndarray) -> float:
    g = int(labels.max()) + 1 if len(labels) else 0
    counts = np.bincount(labels, minlength=g)[:, None]
    means = np.stack(
        [np.bincount(labels, weights=z[:, j], minlength=g) for j in range(z.shape[1])], 1
    )
    diff = z - (means / counts)[labels]
    return float((diff * diff).sum())


DBA = register(
    Method(
        name="dba",
        title="DBA (density-based)",
        summary="Density-based microaggregation: groups around the densest records, then "
        "decomposed in reverse order where that lowers SSE (002 §4.13; Lin et al. 2010)",
        description=(
            "Density-based algorithm (Lin, Wen, Hsieh & Chang 2010, in Sulekha & Arumugam "
            "§4.13). Phase 1 takes the record with the highest k-density among those not yet "
            "grouped (the inverse of the summed distances to its k-1 nearest ungrouped records, "
            "measured again as records are grouped) and groups it with those k-1 records, "
            "until fewer than k remain, which join "
            "their nearest groups. Phase 2 visits the groups in reverse order and dissolves a "
            "group into the groups nearest to its records when that lowers the information "
            "loss; groups of 2k or more are then split by MDAV. Groups of k to 2k-1 records, "
            "replaced by their means."
        ),
        citation="002_f464918b99c38812.txt §4.13",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_dba,
        complexity="k-d tree k-nearest-neighbour queries for the densities (near O(n log n) in "
        "low intrinsic dimension, towards O(n²·d) in high), O(n²·d/k) times a small factor "
        "for the phase-1 groups (one pass per group and per density measured again), O(n²·d/k) "
        "for the phase-2 nearest centroids",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
    )
)
