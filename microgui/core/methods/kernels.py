"""The numba primitives and input checks that the microaggregation methods share.

One copy each of what several method modules need: the k check and matrix coercion, distance
passes (continuous, and MDAV-generic's mixed distance of ``003`` §5.2-5.4), the farthest record
and the k-1 nearest with a bounded max-heap under MDAV's tie rule ((distance, original row);
:mod:`microgui.core.methods.mdav`, "Tie rule"), the swap-removal of a group from the remaining
records, the average record (mean, lower or convex median, mode), the record pool of the
privacy methods, the placement of the last records, a k-d tree with deletions, a Fenwick tree
and a union-find. Method modules import these and never each other's private helpers.

Layout (as in MDAV's kernel): the remaining records are column-major private copies whose first
``m`` columns are the records not yet grouped (``cont`` (dc, n) float64 z-scores, ``ords``
(do, n) int64 ordinal ranks, ``noms`` (dn, n) int64 nominal codes), with ``idx`` their original
rows. Squared distances are summed attribute by attribute in column order, so that the plain
numpy references of the methods can do exactly the same arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from numba import prange

from microgui.core.errors import InvalidParameter
from microgui.core.methods.jit_cache import njit, njit_parallel
from microgui.core.table.aggregate import convex_frequencies

if TYPE_CHECKING:
    from microgui.core.table.dataset import QIMatrix

__all__ = [
    "BLOCK",
    "check_k",
    "as_matrix",
    "as_2d",
    "qi_arrays",
    "qi_blocks",
    "column_sums",
    "squared_distances_to",
    "seed_order",
    "ordinal_tables",
    "lower_median",
    "convex_lower_median",
    "count_mode",
    "average_record",
    "load_point",
    "load_mixed_point",
    "distances_block",
    "distances_pass",
    "mixed_distances_block",
    "mixed_distances",
    "farthest",
    "PIECE",
    "PARALLEL_MIN",
    "piece_buffers",
    "mixed_farthest_parallel",
    "mixed_nearest_and_farthest_parallel",
    "heap_sift_down",
    "heap_drain_sorted",
    "heap_push",
    "nearest_and_farthest",
    "sorted_nearest",
    "take_group",
    "group_means",
    "assign_leftovers",
    "assign_leftovers_reference",
    "RecordPool",
    "make_record_pool",
    "group_centroids",
    "build_kdtree",
    "box_distance",
    "box_distance_of_row",
    "shrink_box",
    "fenwick_add",
    "fenwick_prefix",
    "fenwick_select",
    "find_root",
]

#: Records per block of a distance pass: the partial sums stay in L1 cache (measured on MDAV:
#: 1024 is the best of 256..4096).
BLOCK = 1024


# --------------------------------------------------------------------------------------------
# input checks and coercion (Python)
# --------------------------------------------------------------------------------------------


def check_k(k: int, n: int) -> int:
    """k as an int with 2 <= k <= n, or :class:`InvalidParameter`."""
    k = int(k)
    if k < 2 or k > n:
        raise InvalidParameter(f"k={k} must satisfy 2 <= k <= n ({n} records)")
    return k


def as_matrix(values: npt.ArrayLike, *, plain_zeros: bool = False) -> np.ndarray:
    """(n, d) float64 C-ordered copy of the records (1-D input is one column), finite.

    ``plain_zeros``: -0.0 becomes 0.0 (no effect on distances; equal records are then equal bit
    for bit, which the k-d tree methods rely on).
    """
    arr = np.array(values, dtype=np.float64, order="C", copy=True)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array of records, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("records must be finite numbers")
    if plain_zeros:
        arr += 0.0
    return np.ascontiguousarray(arr)


def as_2d(values: npt.ArrayLike | None, n: int, dtype: type) -> np.ndarray:
    """A block of attributes as an (n, d) array of ``dtype``; None is the empty (n, 0) block."""
    if values is None:
        return np.empty((n, 0), dtype=dtype)
    arr: np.ndarray = np.asarray(values, dtype=dtype)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"expected an array of {n} rows, got shape {arr.shape}")
    return arr


def qi_arrays(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The quasi-identifier blocks as 2-D arrays of n rows ((n, 0) for an absent block) and the
    ordinal sizes as a 1-D array."""
    ords = as_2d(ordinal, n, np.int64)
    sizes = np.asarray(ordinal_sizes if ordinal_sizes is not None else [], dtype=np.int64).reshape(
        -1
    )
    if len(sizes) != ords.shape[1]:
        raise ValueError("ordinal_sizes needs one size per ordinal column")
    return as_2d(continuous, n, np.float64), ords, sizes, as_2d(nominal, n, np.int64)


def qi_blocks(qi: QIMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A run's quasi-identifiers as (z-scores, ordinal ranks, ordinal sizes, nominal codes)."""
    return (
        np.asarray(qi.continuous, dtype=np.float64),
        np.asarray(qi.ordinal, dtype=np.int64),
        qi.ordinal_sizes,
        np.asarray(qi.nominal, dtype=np.int64),
    )


def column_sums(x: np.ndarray) -> np.ndarray:
    """Column sums of a C-ordered array: where every running sum starts (kernel and reference).

    numpy's rounding of ``sum(axis=0)`` depends on the memory layout, so it is always taken on a
    C-ordered array.
    """
    sums: np.ndarray = np.ascontiguousarray(x, dtype=np.float64).sum(axis=0)
    return sums


def squared_distances_to(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Squared distances of every record of x to p, summed column by column (the kernels' sum)."""
    out = np.zeros(x.shape[0])
    for j in range(x.shape[1]):
        t = x[:, j] - p[j]
        out += t * t
    return out


def seed_order(dist: np.ndarray) -> np.ndarray:
    """Rows by decreasing distance, equal distances by increasing row."""
    order: np.ndarray = np.lexsort((np.arange(len(dist)), -dist)).astype(np.int64)
    return order


def ordinal_tables(ordinal: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ordinal column: d_ORD(a, b)^2 by |rank(a) - rank(b)|, and the category counts."""
    width = int(sizes.max()) if len(sizes) else 1
    osq = np.zeros((len(sizes), width), dtype=np.float64)
    ocount = np.zeros((len(sizes), width), dtype=np.int64)
    for j, size in enumerate(sizes):
        size = int(size)
        col = ordinal[:, j]
        if len(col) and (col.min() < 0 or col.max() >= size):
            raise ValueError(f"ordinal column {j} has ranks outside 0..{size - 1}")
        t = np.arange(size) / size  # 003 eq. (1): categories between a and b over |D(V)|
        osq[j, :size] = t * t
        ocount[j, :size] = np.bincount(col, minlength=size)
    return osq, ocount


# --------------------------------------------------------------------------------------------
# the average record (003 §5.2-5.4)
# --------------------------------------------------------------------------------------------


@njit
def lower_median(counts: np.ndarray, total: int) -> int:
    """Smallest category whose cumulative count reaches half the total
    (:func:`microgui.core.table.aggregate.weighted_lower_median`)."""
    cum = 0
    for c in range(counts.shape[0]):
        cum += counts[c]
        if 2 * cum >= total:
            return c
    last: int = counts.shape[0] - 1
    return last


@njit
def convex_lower_median(counts: np.ndarray, buf: np.ndarray) -> int:
    """Lower median of the convex frequencies (``003`` Definition 5.3): f'(c) =
    min(max_{j<=c} f, max_{j>=c} f), then the lower median over f'."""
    size = counts.shape[0]
    run = 0
    for c in range(size - 1, -1, -1):
        run = max(run, counts[c])
        buf[c] = run
    run = 0
    total = 0
    for c in range(size):
        run = max(run, counts[c])
        buf[c] = min(buf[c], run)
        total += buf[c]
    median: int = lower_median(buf[:size], total)
    return median


@njit
def count_mode(counts: np.ndarray) -> int:
    """Most frequent category of a count table (smallest code on ties)."""
    best = 0
    for c in range(1, counts.shape[0]):
        if counts[c] > counts[best]:
            best = c
    return best


@njit
def average_record(
    total: np.ndarray,
    m: int,
    osizes: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    convex: bool,
    buf: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> None:
    """The average record of m records into (pc, po, pn): running sum over m, lower (or convex)
    medians of the ordinal counts, modes of the nominal counts."""
    for j in range(total.shape[0]):
        pc[j] = total[j] / m
    for j in range(ocount.shape[0]):
        size = osizes[j]
        if convex:
            po[j] = convex_lower_median(ocount[j, :size], buf)
        else:
            po[j] = lower_median(ocount[j, :size], m)
    for j in range(ncount.shape[0]):
        pn[j] = count_mode(ncount[j])


# --------------------------------------------------------------------------------------------
# distance passes
# --------------------------------------------------------------------------------------------


@njit
def load_point(cont: np.ndarray, pos: int, p: np.ndarray) -> None:
    """p = the coordinates of the record at position ``pos`` of ``cont`` (d, n)."""
    for j in range(cont.shape[0]):
        p[j] = cont[j, pos]


@njit
def load_mixed_point(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    pos: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> None:
    """(pc, po, pn) = the record at position ``pos`` of the mixed layout."""
    load_point(cont, pos, pc)
    for j in range(ords.shape[0]):
        po[j] = ords[j, pos]
    for j in range(noms.shape[0]):
        pn[j] = noms[j, pos]


@njit
def distances_block(cont: np.ndarray, lo: int, hi: int, p: np.ndarray, dist: np.ndarray) -> None:
    """dist[lo:hi] = squared distances of records lo..hi-1 of ``cont`` (d, n) to the point p."""
    # Loops over slices starting at 0: with range(lo, hi) numba keeps its negative-index
    # wraparound in the loop and LLVM does not vectorize it (5x slower).
    n = hi - lo
    out = dist[lo:hi]
    for i in range(n):
        out[i] = 0.0
    for j in range(cont.shape[0]):
        col = cont[j, lo:hi]
        c = p[j]
        for i in range(n):
            t = col[i] - c
            out[i] += t * t


@njit
def distances_pass(cont: np.ndarray, m: int, p: np.ndarray, dist: np.ndarray) -> None:
    """dist[:m] = squared distances of the first m records of ``cont`` (d, n) to the point p,
    summed coordinate by coordinate in column order."""
    for lo in range(0, m, BLOCK):
        distances_block(cont, lo, min(lo + BLOCK, m), p, dist)


@njit
def mixed_distances_block(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    lo: int,
    hi: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    dist: np.ndarray,
) -> None:
    """dist[lo:hi] = MDAV-generic squared distances (``003`` §5.2-5.4) of records lo..hi-1 to
    the point (pc, po, pn): continuous, then ordinal (``osq`` of :func:`ordinal_tables`), then
    nominal terms, attribute by attribute."""
    distances_block(cont, lo, hi, pc, dist)
    n = hi - lo
    out = dist[lo:hi]
    for j in range(ords.shape[0]):
        col_o = ords[j, lo:hi]
        sq = osq[j]
        c_o = po[j]
        for i in range(n):
            out[i] += sq[abs(col_o[i] - c_o)]
    for j in range(noms.shape[0]):
        col_n = noms[j, lo:hi]
        c_n = pn[j]
        for i in range(n):
            # branch-free: lets the loop vectorize (about 25 % faster at 100k, same partition)
            out[i] += np.float64(col_n[i] != c_n)


@njit
def mixed_distances(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    m: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    dist: np.ndarray,
) -> None:
    """dist[:m] = MDAV-generic squared distances of the first m records to (pc, po, pn)."""
    # Summed attribute by attribute in column order (the order mdav_generic_reference sums in).
    # The column loops run along contiguous rows of the column-major copy and vectorize across
    # records; blocks of BLOCK records keep the partial sums in L1 cache.
    for lo in range(0, m, BLOCK):
        mixed_distances_block(cont, ords, noms, osq, lo, min(lo + BLOCK, m), pc, po, pn, dist)


# --------------------------------------------------------------------------------------------
# farthest and nearest records (tie rule: (distance, original row))
# --------------------------------------------------------------------------------------------


@njit
def farthest(dist: np.ndarray, idx: np.ndarray, m: int) -> int:
    """Position of the largest (distance, -row) pair among the first m: ties go to the smallest
    original row."""
    best = 0
    for i in range(1, m):
        d = dist[i]
        if d > dist[best] or (d == dist[best] and idx[i] < idx[best]):
            best = i
    return best


@njit
def heap_sift_down(hd: np.ndarray, hx: np.ndarray, hp: np.ndarray, size: int) -> None:
    """Restore the max-heap on (distance hd, row hx) from the root (hp: positions, carried)."""
    # The root is the worst of the current nearest candidates.
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            return
        big = left
        right = left + 1
        if right < size and (
            hd[right] > hd[left] or (hd[right] == hd[left] and hx[right] > hx[left])
        ):
            big = right
        if hd[big] > hd[i] or (hd[big] == hd[i] and hx[big] > hx[i]):
            hd[i], hd[big] = hd[big], hd[i]
            hx[i], hx[big] = hx[big], hx[i]
            hp[i], hp[big] = hp[big], hp[i]
            i = big
        else:
            return


@njit
def heap_push(
    hd: np.ndarray, hx: np.ndarray, hp: np.ndarray, size: int, d: float, x: int, p: int
) -> None:
    """Add (distance d, row x, position p) to the max-heap of ``size`` entries."""
    i = size
    hd[i] = d
    hx[i] = x
    hp[i] = p
    while i > 0:
        parent = (i - 1) // 2
        if hd[i] > hd[parent] or (hd[i] == hd[parent] and hx[i] > hx[parent]):
            hd[i], hd[parent] = hd[parent], hd[i]
            hx[i], hx[parent] = hx[parent], hx[i]
            hp[i], hp[parent] = hp[parent], hp[i]
            i = parent
        else:
            return


@njit
def nearest_and_farthest(
    dist: np.ndarray,
    idx: np.ndarray,
    m: int,
    exclude: int,
    kk: int,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
) -> int:
    """One scan of the first m records: the kk smallest (distance, row) pairs other than
    position ``exclude`` (positions left in hp[:kk], in heap order) and, returned, the position
    of the largest pair (``exclude`` included: its distance is 0)."""
    far = 0
    size = 0
    for i in range(m):
        d = dist[i]
        x = idx[i]
        if d > dist[far] or (d == dist[far] and x < idx[far]):
            far = i
        if i == exclude:
            continue
        # inline, not a helper call: a call per record measured 2.4x slower in the pruned search
        if size < kk:
            heap_push(hd, hx, hp, size, d, x, i)
            size += 1
        elif d < hd[0] or (d == hd[0] and x < hx[0]):
            hd[0] = d
            hx[0] = x
            hp[0] = i
            heap_sift_down(hd, hx, hp, size)
    return far


#: Records per piece of a parallel pass: fixed, so the pieces and the order their answers are
#: merged in do not depend on the number of threads.
PIECE = 8 * BLOCK
#: A pass over fewer remaining records than this stays serial (a parallel region costs a few
#: microseconds to start, and far more when the cores are busy with other programs).
PARALLEL_MIN = 4 * PIECE


def piece_buffers(n: int, kk: int, piece: int = PIECE) -> tuple[np.ndarray, ...]:
    """Work arrays of the parallel passes over up to n records in pieces of ``piece`` (kk
    nearest per piece): (each piece's farthest position (pieces,), its heap's distances, rows
    and positions (pieces, kk), its heap's size (pieces,))."""
    pieces = max(1, -(-n // piece))
    kk = max(kk, 1)
    return (
        np.empty(pieces, dtype=np.int64),
        np.empty((pieces, kk), dtype=np.float64),
        np.empty((pieces, kk), dtype=np.int64),
        np.empty((pieces, kk), dtype=np.int64),
        np.empty(pieces, dtype=np.int64),
    )


@njit_parallel
def mixed_farthest_parallel(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    m: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    dist: np.ndarray,
    idx: np.ndarray,
    piece: int,
    pbest: np.ndarray,
) -> int:
    """:func:`mixed_distances` then :func:`farthest` in one pass, piece by piece (``piece``
    records each, :data:`PIECE` in the kernels) in parallel:
    the same distances (each record's sum is computed as there) and the same answer, the largest
    (distance, -row) pair, merged over the pieces in order."""
    pieces = (m + piece - 1) // piece
    for q in prange(pieces):
        lo = q * piece
        hi = min(lo + piece, m)
        for b in range(lo, hi, BLOCK):
            mixed_distances_block(cont, ords, noms, osq, b, min(b + BLOCK, hi), pc, po, pn, dist)
        best = lo
        for i in range(lo + 1, hi):
            d = dist[i]
            if d > dist[best] or (d == dist[best] and idx[i] < idx[best]):
                best = i
        pbest[q] = best
    best = pbest[0]
    for q in range(1, pieces):
        i = pbest[q]
        if dist[i] > dist[best] or (dist[i] == dist[best] and idx[i] < idx[best]):
            best = i
    return int(best)


@njit_parallel
def mixed_nearest_and_farthest_parallel(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    m: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    dist: np.ndarray,
    idx: np.ndarray,
    exclude: int,
    kk: int,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
    piece: int,
    bufs: tuple,  # type: ignore[type-arg]
) -> int:
    """:func:`mixed_distances` then :func:`nearest_and_farthest` in one pass, piece by piece in
    parallel: each piece keeps its own kk smallest (distance, row) pairs and its largest pair;
    the pieces are merged in order. The kk smallest pairs of the whole are among the pieces' (and
    are one set, rows being distinct), so hp[:kk] holds the same positions as the serial scan
    (in another heap order, which no caller depends on); the largest pair is the same."""
    pbest, phd, phx, php, psize = bufs
    pieces = (m + piece - 1) // piece
    for q in prange(pieces):
        lo = q * piece
        hi = min(lo + piece, m)
        for b in range(lo, hi, BLOCK):
            mixed_distances_block(cont, ords, noms, osq, b, min(b + BLOCK, hi), pc, po, pn, dist)
        qd = phd[q]
        qx = phx[q]
        qp = php[q]
        far = lo
        size = 0
        for i in range(lo, hi):
            d = dist[i]
            x = idx[i]
            if d > dist[far] or (d == dist[far] and x < idx[far]):
                far = i
            if i == exclude:
                continue
            if size < kk:
                heap_push(qd, qx, qp, size, d, x, i)
                size += 1
            elif d < qd[0] or (d == qd[0] and x < qx[0]):
                qd[0] = d
                qx[0] = x
                qp[0] = i
                heap_sift_down(qd, qx, qp, size)
        pbest[q] = far
        psize[q] = size
    far = pbest[0]
    size = 0
    for q in range(pieces):
        i = pbest[q]
        if dist[i] > dist[far] or (dist[i] == dist[far] and idx[i] < idx[far]):
            far = i
        for a in range(psize[q]):
            d = phd[q, a]
            x = phx[q, a]
            if size < kk:
                heap_push(hd, hx, hp, size, d, x, php[q, a])
                size += 1
            elif d < hd[0] or (d == hd[0] and x < hx[0]):
                hd[0] = d
                hx[0] = x
                hp[0] = php[q, a]
                heap_sift_down(hd, hx, hp, size)
    return int(far)


@njit
def heap_drain_sorted(
    hd: np.ndarray, hx: np.ndarray, hp: np.ndarray, kk: int, out: np.ndarray
) -> None:
    """out[:kk] = the positions of the heap's kk pairs in ascending (distance, row) order (the
    heap is used up)."""
    size = kk
    while size > 0:
        out[size - 1] = hp[0]
        size -= 1
        hd[0] = hd[size]
        hx[0] = hx[size]
        hp[0] = hp[size]
        heap_sift_down(hd, hx, hp, size)


@njit
def sorted_nearest(
    dist: np.ndarray,
    idx: np.ndarray,
    m: int,
    exclude: int,
    kk: int,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
    out: np.ndarray,
) -> None:
    """Positions of the ``kk`` smallest (distance, row) pairs among the first ``m`` records,
    position ``exclude`` left out, in ascending order, into ``out[:kk]`` (kk <= m - 1)."""
    if kk <= 0:
        return
    nearest_and_farthest(dist, idx, m, exclude, kk, hd, hx, hp)
    heap_drain_sorted(hd, hx, hp, kk, out)


# --------------------------------------------------------------------------------------------
# taking a group out of the remaining records
# --------------------------------------------------------------------------------------------


@njit
def take_group(
    group: np.ndarray,
    g: int,
    label: int,
    m: int,
    tracked: int,
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    idx: np.ndarray,
    total: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    where: np.ndarray,
) -> int:
    """Label the records at positions group[:g] and swap-remove them from the first m.

    They are taken out of the running sum ``total`` (in ascending row order, as the plain numpy
    references do; an empty ``total`` for none) and out of the category counts ``ocount`` /
    ``ncount`` (empty for none). ``where[row]`` follows every record's position (an empty
    ``where`` for none). Returns the new position of the record at position ``tracked`` (-1 if
    it was removed or if tracked is -1).
    """
    pos = group[:g]
    rows = np.empty(g, dtype=np.int64)
    for a in range(g):
        rows[a] = idx[pos[a]]
    by_row = np.argsort(rows)
    for a in range(g):
        p = pos[by_row[a]]
        labels[idx[p]] = label
        for j in range(total.shape[0]):
            total[j] -= cont[j, p]
        for j in range(ocount.shape[0]):
            ocount[j, ords[j, p]] -= 1
        for j in range(ncount.shape[0]):
            ncount[j, noms[j, p]] -= 1
    track = where.shape[0] > 0
    desc = np.sort(pos)[::-1]
    for a in range(g):
        p = desc[a]
        last = m - 1
        if p == tracked:
            tracked = -1
        if track:
            where[idx[p]] = -1
        if p != last:
            for j in range(cont.shape[0]):
                cont[j, p] = cont[j, last]
            for j in range(ords.shape[0]):
                ords[j, p] = ords[j, last]
            for j in range(noms.shape[0]):
                noms[j, p] = noms[j, last]
            idx[p] = idx[last]
            dist[p] = dist[last]
            if track:
                where[idx[p]] = p
            if tracked == last:
                tracked = p
        m -= 1
    return tracked


# --------------------------------------------------------------------------------------------
# the last records: each joins the group with the nearest centroid
# --------------------------------------------------------------------------------------------


@njit
def group_means(x: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups, d) centroids: each group's records (label >= 0) summed in ascending row
    order, over its size."""
    d = x.shape[1]
    sums = np.zeros((n_groups, d))
    counts = np.zeros(n_groups)
    for i in range(x.shape[0]):
        g = labels[i]
        if g >= 0:
            counts[g] += 1.0
            for j in range(d):
                sums[g, j] += x[i, j]
    for g in range(n_groups):
        for j in range(d):
            sums[g, j] = sums[g, j] / counts[g]
    return sums


@njit
def _assign_leftovers_kernel(
    x: np.ndarray, labels: np.ndarray, n_groups: int, cap: int, sizes: np.ndarray
) -> int:
    # Each unlabelled record (ascending row) joins the group with the nearest centroid among the
    # groups with fewer than `cap` records (centroids of the groups as formed; ties: the group
    # formed first). Returns the first row that found no group with room, or -1.
    cent = group_means(x, labels, n_groups)
    d = x.shape[1]
    for i in range(x.shape[0]):
        if labels[i] >= 0:
            continue
        best = -1
        best_d = 0.0
        for g in range(n_groups):
            if sizes[g] >= cap:
                continue
            s = 0.0
            for j in range(d):
                t = x[i, j] - cent[g, j]
                s += t * t
            if best < 0 or s < best_d:
                best = g
                best_d = s
        if best < 0:
            return i
        labels[i] = best
        sizes[best] += 1
    return -1


def assign_leftovers(x: np.ndarray, labels: np.ndarray, cap: int) -> int:
    """Give each unlabelled record (label -1) the label of the group with the nearest centroid.

    Centroids are those of the groups as labelled on entry (each group's records summed in
    ascending row order); records are placed in ascending row order, only into groups holding
    fewer than ``cap`` records; equal distances go to the smaller label. Modifies ``labels`` in
    place; returns the first row that found every group full (-1 when all were placed).
    """
    n_groups = int(labels.max()) + 1 if len(labels) and labels.max() >= 0 else 0
    if n_groups == 0:
        return -1 if (labels >= 0).all() else int(np.flatnonzero(labels < 0)[0])
    sizes = np.bincount(labels[labels >= 0], minlength=n_groups).astype(np.int64)
    row: int = _assign_leftovers_kernel(x, labels, n_groups, int(cap), sizes)
    return row


def assign_leftovers_reference(x: np.ndarray, labels: np.ndarray, cap: int) -> int:
    """Plain-numpy twin of :func:`assign_leftovers` (for the tests)."""
    n_groups = int(labels.max()) + 1
    d = x.shape[1]
    sums = np.zeros((n_groups, d))
    counts = np.zeros(n_groups)
    for i in range(len(x)):  # ascending row order, as the kernel sums
        if labels[i] >= 0:
            sums[labels[i]] += x[i]
            counts[labels[i]] += 1.0
    cent = sums / counts[:, None]
    sizes = counts.astype(np.int64)
    for row in np.flatnonzero(labels < 0):
        i = int(row)
        dist = np.zeros(n_groups)
        for j in range(d):
            t = x[i, j] - cent[:, j]
            dist += t * t
        dist[sizes >= cap] = np.inf
        if not np.isfinite(dist).any():
            return i
        g = int(np.argmin(dist))
        labels[i] = g
        sizes[g] += 1
    return -1


# --------------------------------------------------------------------------------------------
# the record pool: MDAV-generic's remaining records (p-sensitive, t-closeness)
# --------------------------------------------------------------------------------------------


@dataclass
class RecordPool:
    """The remaining records in the layout of MDAV's numba kernel.

    Column-major private copies (``cont`` (dc, n), ``ords`` (do, n), ``noms`` (dn, n)) whose
    first ``m`` columns are the records not yet grouped; ``idx`` their original rows; ``total``,
    ``ocount``, ``ncount`` the running sums and category counts of the average record; ``labels``
    the group of every original row (-1 while unassigned); ``dist`` a work array.
    """

    cont: np.ndarray
    ords: np.ndarray
    noms: np.ndarray
    sizes: np.ndarray
    osq: np.ndarray
    ocount: np.ndarray
    ncount: np.ndarray
    total: np.ndarray
    idx: np.ndarray
    labels: np.ndarray
    dist: np.ndarray
    convex: bool


def make_record_pool(
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    *,
    convex: bool = False,
) -> RecordPool:
    """A :class:`RecordPool` holding every record (z-scores, ordinal ranks, nominal codes)."""
    n = continuous.shape[0]
    sizes = np.ascontiguousarray(ordinal_sizes, dtype=np.int64).reshape(-1)
    osq, ocount = ordinal_tables(ordinal, sizes)
    ncat = int(nominal.max()) + 1 if nominal.size else 1
    ncount = np.zeros((nominal.shape[1], ncat), dtype=np.int64)
    for j in range(nominal.shape[1]):
        ncount[j] = np.bincount(nominal[:, j], minlength=ncat)
    return RecordPool(
        cont=np.array(continuous.T, dtype=np.float64, order="C", copy=True),
        ords=np.array(ordinal.T, dtype=np.int64, order="C", copy=True),
        noms=np.array(nominal.T, dtype=np.int64, order="C", copy=True),
        sizes=sizes,
        osq=osq,
        ocount=ocount,
        ncount=ncount,
        total=column_sums(continuous),
        idx=np.arange(n, dtype=np.int64),
        labels=np.full(n, -1, dtype=np.int64),
        dist=np.empty(n, dtype=np.float64),
        convex=convex,
    )


def group_centroids(
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    labels: np.ndarray,
    n_groups: int,
    *,
    convex: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The average record of every group (MDAV-generic, ``003`` §5.2-5.4): z-score means, lower
    medians (or convex medians) of ordinal ranks, modes of nominal codes (smallest code on ties)."""
    lab = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(lab, minlength=n_groups).astype(np.float64)
    cc = np.empty((n_groups, continuous.shape[1]), dtype=np.float64)
    for j in range(continuous.shape[1]):
        cc[:, j] = np.bincount(lab, weights=continuous[:, j], minlength=n_groups) / counts
    co = np.empty((n_groups, ordinal.shape[1]), dtype=np.int64)
    for j in range(ordinal.shape[1]):
        size = int(ordinal_sizes[j])
        freq = np.zeros((n_groups, size), dtype=np.int64)
        np.add.at(freq, (lab, ordinal[:, j]), 1)
        if convex:
            freq = np.apply_along_axis(convex_frequencies, 1, freq)
        cum = np.cumsum(freq, axis=1)
        co[:, j] = np.argmax(2 * cum >= cum[:, -1:], axis=1)
    cn = np.empty((n_groups, nominal.shape[1]), dtype=np.int64)
    for j in range(nominal.shape[1]):
        freq = np.zeros((n_groups, int(nominal[:, j].max()) + 1), dtype=np.int64)
        np.add.at(freq, (lab, nominal[:, j]), 1)
        cn[:, j] = np.argmax(freq, axis=1)
    return cc, co, cn


# --------------------------------------------------------------------------------------------
# k-d tree with deletions (mhm's nearest-neighbour path, mst's Borůvka)
# --------------------------------------------------------------------------------------------


@njit
def build_kdtree(
    x: np.ndarray, leaf_size: int
) -> tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
]:
    """k-d tree of the rows of x (n, d): median split on the widest side of the box.

    Returns (perm (tree position -> row), node ranges lo/hi of tree positions, children
    left/right (-1 for a leaf), parent (-1 for the root), box bmin/bmax, leaf_of (tree position
    -> leaf node), split_dim (each inner node's split dimension)). Nodes are numbered so that
    children follow their parents. A node of at most ``leaf_size`` records, or whose records
    are all equal, is a leaf. Ties along the split dimension keep their order (stable sort);
    the searches built on the tree do not depend on its shape.
    """
    n, d = x.shape
    cap = 2 * (n // max(leaf_size // 2, 1)) + 3
    perm = np.arange(n)
    lo = np.empty(cap, dtype=np.int64)
    hi = np.empty(cap, dtype=np.int64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    parent = np.full(cap, -1, dtype=np.int64)
    bmin = np.empty((cap, d), dtype=np.float64)
    bmax = np.empty((cap, d), dtype=np.float64)
    leaf_of = np.empty(n, dtype=np.int64)
    split_dim = np.zeros(cap, dtype=np.int64)
    lo[0] = 0
    hi[0] = n
    count = 1
    stack = np.empty(cap, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        a = lo[node]
        b = hi[node]
        for t in range(d):
            bmin[node, t] = np.inf
            bmax[node, t] = -np.inf
        for p in range(a, b):
            r = perm[p]
            for t in range(d):
                v = x[r, t]
                if v < bmin[node, t]:
                    bmin[node, t] = v
                if v > bmax[node, t]:
                    bmax[node, t] = v
        widest = 0
        spread = -1.0
        for t in range(d):
            s = bmax[node, t] - bmin[node, t]
            if s > spread:
                spread = s
                widest = t
        if b - a <= leaf_size or spread <= 0.0:
            for p in range(a, b):
                leaf_of[p] = node
            continue
        vals = np.empty(b - a, dtype=np.float64)
        for p in range(a, b):
            vals[p - a] = x[perm[p], widest]
        order = np.argsort(vals, kind="mergesort")
        seg = perm[a:b].copy()
        for p in range(b - a):
            perm[a + p] = seg[order[p]]
        mid = (a + b) // 2
        lo[count] = a
        hi[count] = mid
        lo[count + 1] = mid
        hi[count + 1] = b
        parent[count] = node
        parent[count + 1] = node
        stack[top] = count
        stack[top + 1] = count + 1
        top += 2
        left[node] = count
        right[node] = count + 1
        split_dim[node] = widest
        count += 2
    return (
        perm,
        lo[:count].copy(),
        hi[:count].copy(),
        left[:count].copy(),
        right[:count].copy(),
        parent[:count].copy(),
        np.ascontiguousarray(bmin[:count]),
        np.ascontiguousarray(bmax[:count]),
        leaf_of,
        split_dim[:count].copy(),
    )


@njit
def box_distance(q: np.ndarray, bmin: np.ndarray, bmax: np.ndarray, node: int) -> float:
    """Squared distance from the point q to the box of a k-d tree node."""
    # Coordinate by coordinate in column order; each term is at most the term of any record in
    # the box (exactly, and so after rounding too). Branch-free: measured a third faster than
    # the if/else form in mhm's searches (mst's Boruvka queries prefer box_distance_of_row).
    s = 0.0
    for t in range(q.shape[0]):
        v = q[t]
        u = max(max(bmin[node, t] - v, v - bmax[node, t]), 0.0)
        s += u * u
    return s


@njit
def box_distance_of_row(xs: np.ndarray, i: int, lo: np.ndarray, hi: np.ndarray, node: int) -> float:
    """Squared distance from row ``i`` of ``xs`` to the box of a k-d tree node (the if/else
    form: in mst's Boruvka queries it measured faster than :func:`box_distance`)."""
    s = 0.0
    for j in range(xs.shape[1]):
        v = xs[i, j]
        if v < lo[node, j]:
            t = lo[node, j] - v
            s += t * t
        elif v > hi[node, j]:
            t = v - hi[node, j]
            s += t * t
    return s


@njit
def shrink_box(
    xs: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    bmin: np.ndarray,
    bmax: np.ndarray,
    count: np.ndarray,
    alive: np.ndarray,
    node: int,
) -> None:
    """Tighten a node's box to its records still alive (deletion from the k-d tree)."""
    # A leaf from its alive records, an inner node as the union of its non-empty children's
    # boxes (which are themselves supersets of their alive records, so the result is one too).
    d = xs.shape[1]
    for t in range(d):
        bmin[node, t] = np.inf
        bmax[node, t] = -np.inf
    if left[node] < 0:
        for p in range(lo[node], hi[node]):
            if alive[p]:
                for t in range(d):
                    v = xs[p, t]
                    if v < bmin[node, t]:
                        bmin[node, t] = v
                    if v > bmax[node, t]:
                        bmax[node, t] = v
        return
    for child in (left[node], right[node]):
        if count[child] > 0:
            for t in range(d):
                if bmin[child, t] < bmin[node, t]:
                    bmin[node, t] = bmin[child, t]
                if bmax[child, t] > bmax[node, t]:
                    bmax[node, t] = bmax[child, t]


# --------------------------------------------------------------------------------------------
# Fenwick tree of counts, union-find
# --------------------------------------------------------------------------------------------


@njit
def fenwick_add(tree: np.ndarray, pos: int, value: int) -> None:
    """Add ``value`` at position ``pos`` (0-based) of a Fenwick tree (``tree[0]`` unused)."""
    i = pos + 1
    while i < tree.shape[0]:
        tree[i] += value
        i += i & (-i)


@njit
def fenwick_prefix(tree: np.ndarray, pos: int) -> int:
    """Sum of positions [0, pos) of a Fenwick tree."""
    s = 0
    i = pos
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@njit
def fenwick_select(tree: np.ndarray, t: int, top: int) -> int:
    """Position (0-based) of the element of rank t (0-based) in a Fenwick tree of counts: the
    smallest p whose prefix count exceeds t. ``top`` is the largest power of two <= size."""
    size = tree.shape[0] - 1
    p = 0
    rest = t + 1
    step = top
    while step > 0:
        q = p + step
        if q <= size and tree[q] < rest:
            p = q
            rest -= tree[q]
        step >>= 1
    return p


@njit
def find_root(parent: np.ndarray, a: int) -> int:
    """Root of a in a union-find forest (``parent[root] == root``), with path compression."""
    root = a
    while parent[root] != root:
        root = parent[root]
    while parent[a] != root:
        nxt = parent[a]
        parent[a] = root
        a = nxt
    return root
