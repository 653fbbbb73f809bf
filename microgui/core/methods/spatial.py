"""Spatial pruning of MDAV's queries: blocks of records with boxes, and an anchor list.

Issue 17 ("exact MDAV below the brute-force floor"). MDAV (``003`` Algorithm 5.1) asks three
questions per pair of groups about the records not yet grouped: the record farthest from the
average record (r), the record farthest from r (s) together with r's k-1 nearest, and s's k-1
nearest. The brute-force kernel answers each with a pass over all remaining records. Here:

- **Blocks** (the k-1 nearest). The records are ordered by a k-d tree (median splits on the
  widest side, :func:`~microgui.core.methods.kernels.build_kdtree`) built along the principal
  axes of the continuous attributes (:func:`principal_rotation`: the boxes of correlated data
  are far tighter along them than along the columns) and cut into its leaves,
  *blocks* of at most ``block_size`` records (a leaf of identical records can be larger), stored
  column-major in tree order, and consecutive blocks are grouped in *superblocks* of
  ``super_blocks`` (subtrees). Each block keeps its remaining records at its front (swap-removal
  inside the block) and a box around them, tightened when a record on its boundary leaves; a
  superblock's box is the union of its blocks', and empty superblocks leave the list. A query
  bounds every superblock in one vectorized pass, searches the query record's own superblock
  first, then the others by increasing lower bound while that bound is at most the current
  (k-1)-th distance; inside a superblock, its blocks in order, each skipped when its own bound
  cannot compete.
- **Anchor list** (the farthest record from a point: r from the average, s from r). The remaining
  records by decreasing distance from an anchor point (the average record when the list was
  made), cut into shells of :data:`SHELL` entries, each sorted along the first principal axis and
  cut into chunks of :data:`CHUNK`. The MDAV-generic distance is Euclidean in an embedding
  (z-scores; ranks over |D(V)|; nominal codes one-hot over sqrt 2), so by the triangle
  inequality a record whose anchor distance is below sqrt(best) - |p - anchor| cannot be farther
  from p than the best found: the walk down the list stops at the first shell below that. A
  projection filter (continuous attributes only) bounds each chunk and each record further by its
  coordinate along the first principal axis (:func:`anchor_farthest`); a walk from a point on
  the negative side of that axis takes each shell from its far end. The walks for r get
  longer as the average drifts from the anchor; once they have computed about 8 m distances
  since the list was made (what remaking it costs, measured), it is re-made around the average.

**Exactness.** The answers are those of the brute-force passes, bit for bit, ties included:

- A candidate's distance is computed with exactly the brute-force kernel's arithmetic
  (:func:`~microgui.core.methods.kernels.mixed_distances_block`): ``0.0``, then the continuous
  terms ``(x - p)**2`` in column order, then the ordinal terms ``osq[j][|a - b|]``, then the
  nominal terms 0.0/1.0.
- Boxes along the columns (one continuous attribute, or a covariance that is not finite) use
  the same operations in the same order on the box's corners. Rounding to
  nearest is monotone (a <= b implies fl(a - c) <= fl(b - c), fl(a * a) <= fl(b * b) for
  0 <= a <= b, fl(a + c) <= fl(b + c)), so the computed upper bound of a box is at least the
  computed distance of every record in it, and its computed lower bound at most: they bound the
  computed distances, not only the real ones. (numba compiles without fast-math: nothing is
  re-associated or fused.)
- Boxes along the principal axes bound the records' *rotated* coordinates, which carry the
  rounding of the rotation: their lower bounds are taken down by a margin far above that
  rounding before they are compared (:func:`_safe_lower`), and stay 0 for a point inside.
- The anchor list's bounds are algebra on square roots and projections, not the brute-force
  arithmetic. Each keeps a relative margin of 1e-9 on every operand (not on a difference of
  operands, which can cancel), and the length of the part of a record outside the principal
  axes, a difference of squares, is widened by 1e-12 of the square before its root; rounding
  is about 1e-16 relative per operation. (An adversarial review found both cancellations in a
  first version: records tied in the last bit near the anchor, and a record almost on the
  principal axes; the tests keep its reproducers.)
- A block or chunk is passed over only when its bound is *strictly* worse than the answer so
  far: a record at exactly the same distance is always examined, so MDAV's (distance, original
  row) tie rule settles ties as in the brute-force pass.

**Bounds per kind.** Continuous: the lower bound takes the nearer corner coordinate (0
inside). Ordinal ranks: the same on ranks, the term read from ``osq`` (which
grows with the rank difference). Nominal codes: lower bound 1 when the point's code is outside the
block's [min, max] code range, else 0.

Where it pays is measured by the benchmark (``python -m microgui.bench --search``); see
:func:`choose_search`: above about 12 attributes the boxes and the
projection filter rule out too little and the brute-force passes are faster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from microgui.core.methods.jit_cache import njit, njit_parallel
from microgui.core.methods.kernels import (
    heap_push,
    heap_sift_down,
    load_mixed_point,
    mixed_distances_block,
)

__all__ = [
    "PRUNED_MAX_D",
    "PRUNED_MIN_N",
    "choose_search",
    "BLOCK_SIZE",
    "SUPER_BLOCKS",
    "REANCHOR_WALK",
    "Blocks",
    "build_blocks",
    "rebuild_blocks",
    "block_size_for",
    "record_distance",
    "block_nearest",
    "block_farthest",
    "pruned_farthest",
    "PROBE_AFTER",
    "block_remove",
    "work_arrays",
    "AXES",
    "SHELL",
    "CHUNK",
    "make_anchor",
    "anchor_farthest",
    "anchor_remove",
    "take_rows",
    "take_around",
    "take_nearest",
    "farthest_and_nearest",
    "farthest_from_average",
    "set_anchor",
]

#: Records per block (the k-d tree's leaf size; measured at 100,000 x 10: 16-64 within 10 %).
BLOCK_SIZE = 64
#: Blocks per superblock (consecutive leaves of the tree, so a superblock is a subtree).
SUPER_BLOCKS = 8
#: The anchor list is re-made once the walks for r have computed more distances than this, or
#: than 8 m, since it was made (m: the records remaining).
REANCHOR_WALK = 256


#: ``search="auto"`` takes the pruned search for at most this many attributes...
PRUNED_MAX_D = 12
#: ...and at least this many records (fewer for narrow tables, :func:`choose_search`).
PRUNED_MIN_N = 30_000


def choose_search(
    n: int, d: int, k: int = 5, categorical: int = 0, min_n: int = PRUNED_MIN_N
) -> str:
    """``search="auto"`` of every method on these searches (MDAV, MDAV-generic, CBFS, V-MDAV,
    p-sensitive): the pruned searches where they measured faster than the passes, from
    ``min_n`` records (a method whose passes are cheaper per group asks for more: V-MDAV 50,000).

    Measured here (the benchmark's ``--search`` table, k = 5; time pruned / brute): d = 10:
    2.1 at 10,000 records, 0.72 at 50,000, 0.53 at 100,000, about 0.2 at 1,000,000; d = 4: 0.72
    at 20,000, 0.42 at 50,000; d = 2: even at 10,000; mixed 6 continuous + 2 ordinal + 2 nominal:
    1.3 at 20,000, 0.61 at 50,000; but d = 20: 1.9 at 100,000 and d = 40: 3.6 at 50,000 (in
    many dimensions the boxes and the projection filter rule out too little). At 50,000 x 10
    the ratio is 0.66 with k = 3, 0.72 with k = 5 and 0.86 with k = 10 (fewer, larger groups
    mean fewer passes for the brute-force kernel to save). With ordinal and nominal attributes
    (``categorical`` of the d) the projection filter is off and their boxes bound little: UCI
    Adult (30,162 records, 1 continuous + 7 nominal, MDAV-generic k = 5, whole command) took
    0.97 s pruned against 0.74 s brute force, so a table with categorical attributes takes the
    pruned search only from 50,000 records and when at most half of its attributes are
    categorical.

    Re-measured after the staged sums and the rebuilds (standard normal, k = 5, one thread,
    CPU-time medians of 5 alternating runs, on a machine shared with other programs): d = 10:
    1.95 at 10,000, 1.27 at 20,000, 0.90 at 30,000, 0.66 at 50,000; d = 4: 1.57 at 5,000, 0.79
    at 10,000, 0.49 at 20,000; at 50,000, d = 12: 1.04 and d = 14: 1.50. The thresholds stand.
    """
    if d > PRUNED_MAX_D:
        return "brute"
    if categorical:
        return "pruned" if n >= max(min_n, 50_000) and 2 * categorical <= d else "brute"
    return "pruned" if n >= (min_n if d > 4 else min_n // 3) else "brute"


@dataclass(frozen=True)
class Blocks:
    """The arrays of the blocked layout (numba kernels take them as three tuples).

    ``records`` = (xcol (dc, n) float64, ocol (do, n) int64, ncol (dn, n) int64, rowat (n,)
    the original row at each position, where (n,) the position of each original row or -1 once
    removed, posblock (n,) the block of each position).

    ``blocks`` (by block) = (bstart, bcnt, cmin, cmax, omin, omax, nmin, nmax, zcol, rot,
    rmeta): the first position and number of remaining records of each block and the box around
    its remaining records (column-major: (dc, blocks) etc.). The continuous part of the boxes is
    taken along the principal axes: ``zcol`` (dc, n) holds the records' coordinates along them
    (``xcol @ rot``, in the same positions), ``rot`` the axes (columns) and ``rmeta`` = [1, the
    rounding margin of zcol (:func:`_safe_lower`)]. Without a rotation (one continuous attribute,
    or a covariance that is not finite) ``zcol`` is ``xcol`` itself, ``rot`` the identity and
    ``rmeta`` = [0, 0]: the boxes are then exact bounds of the computed distances and take no
    margin.

    ``supers`` (by slot of the list of non-empty superblocks) = (scnt, slot_sb, sb_slot, cmin,
    cmax, omin, omax, nmin, nmax, meta): each slot's remaining records and superblock, the slot
    of each superblock (-1 once empty), the box around its blocks' boxes; ``meta`` = [slots,
    blocks per superblock, blocks].
    """

    records: tuple[np.ndarray, ...]
    blocks: tuple[np.ndarray, ...]
    supers: tuple[np.ndarray, ...]


def build_blocks(
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    block_size: int = BLOCK_SIZE,
    super_blocks: int = 0,
) -> Blocks:
    """The blocked layout of (n, dc) z-scores, (n, do) ranks and (n, dn) codes.

    The k-d tree splits on z-scores, ranks over their number of categories and codes over
    theirs, so that no attribute kind dominates the splits by its units.
    """
    n = continuous.shape[0]
    x = np.asarray(continuous, dtype=np.float64)
    rot = principal_rotation(x)
    z = x if rot is None else x @ rot
    parts = [z]
    if ordinal.shape[1]:
        parts.append(ordinal / np.maximum(np.asarray(ordinal_sizes, dtype=np.float64), 1.0))
    if nominal.shape[1]:
        ncat = nominal.max(axis=0) + 1
        parts.append(nominal / np.maximum(ncat.astype(np.float64), 1.0))
    # one part (continuous only): itself, no copy (issue 33: each (n, d) copy is 76 MB at a
    # million records x 10, and the kernel's peak is the sum of those alive at once)
    split = np.ascontiguousarray(parts[0] if len(parts) == 1 else np.hstack(parts))
    if split.shape[1] == 0:
        split = np.zeros((n, 1))
    perm, starts, counts = _leaf_order(split, block_size)
    del split, parts
    nb = len(starts)
    if super_blocks <= 0:
        super_blocks = super_blocks_for(nb)
    ns = -(-nb // super_blocks)
    dc = continuous.shape[1]
    do = ordinal.shape[1]
    dn = nominal.shape[1]
    posblock = np.repeat(np.arange(nb, dtype=np.int64), counts)
    zcol = None if rot is None else _columns_in_order(z, perm)
    del z
    xcol = _columns_in_order(x, perm)
    zcol = xcol if zcol is None else zcol
    ocol = _columns_in_order(np.asarray(ordinal, dtype=np.int64), perm)
    ncol = _columns_in_order(np.asarray(nominal, dtype=np.int64), perm)
    rowat = perm.astype(np.int64)
    where = np.empty(n, dtype=np.int64)
    where[rowat] = np.arange(n)
    records = (xcol, ocol, ncol, rowat, where, posblock)
    if rot is None:
        rmeta = np.zeros(2)
        rot = np.eye(dc)
    else:
        # 1e-10 of the largest record length: far above the rounding of z = x @ rot (about
        # dc**1.5 * 1.1e-16 of it, :func:`_rotated_margin`).
        rmeta = np.array([1.0, 1e-10 * _longest_row(x)])
    # the staged sums of block_nearest only in blocks large enough for them to pay (measured:
    # with 64-record blocks they made MDAV slower, not faster)
    staged = dc >= STAGED_MIN_D and block_size >= STAGED_BLOCK_SIZE
    centre = _block_centres(xcol, starts, counts) if staged else np.zeros((0, nb))
    blocks = (starts, counts, *_level_arrays(dc, do, dn, nb), zcol, rot, rmeta, centre)
    scnt = np.add.reduceat(counts, np.arange(0, nb, super_blocks)).astype(np.int64)
    supers = (
        scnt,
        np.arange(ns, dtype=np.int64),
        np.arange(ns, dtype=np.int64),
        *_level_arrays(dc, do, dn, ns),
        np.array([ns, super_blocks, nb], dtype=np.int64),
    )
    _all_boxes(records, blocks, supers)
    return Blocks(records=records, blocks=blocks, supers=supers)


def rebuild_blocks(
    index: Blocks, ordinal_sizes: np.ndarray, block_size: int = BLOCK_SIZE
) -> Blocks:
    """A new blocked layout of the records still in ``index`` (its own copies: the caller's
    arrays are not read), with their original rows (``where`` keeps one entry per original row,
    -1 for the records gone). The searches do not depend on the layout (their answers are the
    brute-force passes'), so MDAV can compact its index mid-run: as records leave, the blocks
    empty and a query visits more, emptier blocks (at 100,000 x 10, 28 records per visited block
    on average over a run), and a visit costs about as much for few records as for many."""
    xcol, ocol, ncol, rowat, where, _posblock = index.records
    starts, counts = index.blocks[0], index.blocks[1]
    alive = np.concatenate(
        [np.arange(a, a + c) for a, c in zip(starts.tolist(), counts.tolist(), strict=True)]
        or [np.empty(0, dtype=np.int64)]
    )
    rows = rowat[alive]
    new = build_blocks(
        np.ascontiguousarray(xcol[:, alive].T),
        np.ascontiguousarray(ocol[:, alive].T),
        ordinal_sizes,
        np.ascontiguousarray(ncol[:, alive].T),
        block_size,
    )
    nx, no, nn, nrowat, _nwhere, nposblock = new.records
    nrowat = rows[nrowat]
    nwhere = np.full(where.shape[0], -1, dtype=np.int64)
    nwhere[nrowat] = np.arange(nrowat.shape[0])
    return Blocks(
        records=(nx, no, nn, nrowat, nwhere, nposblock), blocks=new.blocks, supers=new.supers
    )


def _columns_in_order(a: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``np.ascontiguousarray(a[perm].T)`` column by column: no (n, d) temporary."""
    out = np.empty((a.shape[1], len(perm)), dtype=a.dtype)
    for j in range(a.shape[1]):
        np.take(a[:, j], perm, out=out[j], mode="clip")  # (perm is in range; "raise" buffers)
    return out


def _longest_row(x: np.ndarray, rows: int = 65_536) -> float:
    """The largest Euclidean length of a row of x, in pieces of ``rows`` (no (n, d) temporary)."""
    longest = 0.0
    for start in range(0, x.shape[0], rows):
        piece = x[start : start + rows]
        longest = max(longest, float(np.sqrt((piece * piece).sum(axis=1)).max(initial=0.0)))
    return longest


@njit
def _block_centres(xcol: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(dc, blocks): the mean of each block's records along each continuous attribute (where
    :func:`block_nearest` looks for the attributes that rule a block out first)."""
    dc = xcol.shape[0]
    centre = np.zeros((dc, starts.shape[0]))
    for b in range(starts.shape[0]):
        a = starts[b]
        c = counts[b]
        for t in range(dc):
            acc = 0.0
            for p in range(a, a + c):
                acc += xcol[t, p]
            centre[t, b] = acc / max(c, 1)
    return centre


def super_blocks_for(blocks: int) -> int:
    """Blocks per superblock: :data:`SUPER_BLOCKS`, more for many blocks (a query bounds every
    superblock: measured at 300,000 and 1,000,000 x 10, 16 and 32 took 3-4 % less time than 8)."""
    if blocks >= 12_000:
        return 4 * SUPER_BLOCKS
    if blocks >= 4_000:
        return 2 * SUPER_BLOCKS
    return SUPER_BLOCKS


@njit
def _leaf_order(x: np.ndarray, leaf_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leaves of a k-d tree on the rows of x (n, d): median splits on the widest side until
    a piece holds at most ``leaf_size`` rows or all of its rows are equal. Returns (perm: the
    rows in leaf order, each leaf's first position, each leaf's size), leaves in position order.

    As :func:`~microgui.core.methods.kernels.build_kdtree` without its nodes and with a
    selection (np.partition, then rows below, equal to and above the median value in their
    order) in place of a sort per node: O(n d) per level instead of O(n log n) (1,000,000 x 10:
    0.3 s against 1.3 s). The searches do not depend on the tree's shape."""
    n, d = x.shape
    perm = np.arange(n)
    cap = 2 * (n // max(leaf_size // 2, 1)) + 3
    stack = np.empty((cap, 2), dtype=np.int64)
    starts = np.empty(cap, dtype=np.int64)
    sizes = np.empty(cap, dtype=np.int64)
    vals = np.empty(n)
    tmp = np.empty(n, dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    top = 1
    leaves = 0
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        widest = 0
        spread = 0.0
        if b - a > leaf_size:
            for t in range(d):
                small = np.inf
                large = -np.inf
                for p in range(a, b):
                    v = x[perm[p], t]
                    small = min(small, v)
                    large = max(large, v)
                if large - small > spread:
                    spread = large - small
                    widest = t
        if b - a <= leaf_size or spread <= 0.0:
            if b > a:
                starts[leaves] = a
                sizes[leaves] = b - a
                leaves += 1
            continue
        m = b - a
        for p in range(m):
            vals[p] = x[perm[a + p], widest]
        h = m // 2
        kth = np.partition(vals[:m], h)[h]
        i = a
        for p in range(m):
            if vals[p] < kth:
                tmp[i] = perm[a + p]
                i += 1
        for p in range(m):
            if vals[p] == kth:
                tmp[i] = perm[a + p]
                i += 1
        for p in range(m):
            if vals[p] > kth:
                tmp[i] = perm[a + p]
                i += 1
        perm[a:b] = tmp[a:b]
        mid = a + h
        # Right half pushed first: the left one is taken next, so leaves come in position order.
        stack[top, 0] = mid
        stack[top, 1] = b
        stack[top + 1, 0] = a
        stack[top + 1, 1] = mid
        top += 2
    return perm, starts[:leaves].copy(), sizes[:leaves].copy()


def _level_arrays(dc: int, do: int, dn: int, size: int) -> tuple[np.ndarray, ...]:
    return (
        np.empty((dc, size)),
        np.empty((dc, size)),
        np.empty((do, size), dtype=np.int64),
        np.empty((do, size), dtype=np.int64),
        np.empty((dn, size), dtype=np.int64),
        np.empty((dn, size), dtype=np.int64),
    )


#: The blocks' boxes are taken along the principal axes of the continuous attributes from this
#: many of them (measured at 100,000 x 10, correlated: the nearest-record searches computed 37 %
#: fewer distances and the whole kernel took 22 % less time than with boxes along the columns).
ROTATE_MIN_D = 2


def principal_rotation(x: np.ndarray) -> np.ndarray | None:
    """The (dc, dc) orthonormal matrix of the principal axes of the rows of x (largest variance
    first), measured on at most 100,000 evenly spaced rows; None for fewer than
    :data:`ROTATE_MIN_D` columns, fewer than 2 rows, or a covariance that is not finite (values
    near 1e154) or whose axes do not come out orthonormal to 1e-13."""
    n, dc = x.shape
    if dc < ROTATE_MIN_D or n < 2:
        return None
    sample = x[:: max(1, -(-n // 100_000))]
    with np.errstate(all="ignore"):
        cov = np.cov(sample, rowvar=False).reshape(dc, dc)
    if not np.isfinite(cov).all():
        return None
    try:
        _w, vec = np.linalg.eigh(cov)
    except np.linalg.LinAlgError:
        return None
    rot = np.ascontiguousarray(vec[:, ::-1])
    if not np.isfinite(rot).all() or np.abs(rot.T @ rot - np.eye(dc)).max() > 1e-13:
        return None
    return rot


@njit
def _all_boxes(records: tuple, blocks: tuple, supers: tuple) -> None:  # type: ignore[type-arg]
    for b in range(blocks[0].shape[0]):
        _block_box(records, blocks, b)
    for s in range(supers[9][0]):
        _super_box(blocks, supers, s)


@njit
def _block_box(records: tuple, blocks: tuple, b: int) -> None:  # type: ignore[type-arg]
    """The box of block b around its remaining records."""
    _xcol, ocol, ncol, _rowat, _where, _posblock = records
    bstart, bcnt, cmin, cmax, omin, omax, nmin, nmax, zcol = blocks[:9]
    a = bstart[b]
    c = bcnt[b]
    if c == 0:
        return
    _ranges(zcol, a, a + c, cmin, cmax, b)
    _ranges(ocol, a, a + c, omin, omax, b)
    _ranges(ncol, a, a + c, nmin, nmax, b)


@njit
def _ranges(cols: np.ndarray, a: int, b: int, lo: np.ndarray, hi: np.ndarray, slot: int) -> None:
    """lo[:, slot], hi[:, slot] = each column's smallest and largest value over positions a..b-1
    (b > a) of the column-major ``cols``."""
    for t in range(cols.shape[0]):
        small = cols[t, a]
        large = small
        for p in range(a + 1, b):
            v = cols[t, p]
            small = min(small, v)
            large = max(large, v)
        lo[t, slot] = small
        hi[t, slot] = large


@njit
def _super_box(blocks: tuple, supers: tuple, s: int) -> None:  # type: ignore[type-arg]
    """The box of superblock slot s: the union of its non-empty blocks' boxes."""
    bcnt = blocks[1]
    bcmin, bcmax, bomin, bomax, bnmin, bnmax = blocks[2:8]
    slot_sb = supers[1]
    cmin, cmax, omin, omax, nmin, nmax, meta = supers[3:]
    g = meta[1]
    b0 = slot_sb[s] * g
    b1 = min(b0 + g, meta[2])
    for t in range(cmin.shape[0]):
        cmin[t, s] = np.inf
        cmax[t, s] = -np.inf
    for t in range(omin.shape[0]):
        omin[t, s] = np.iinfo(np.int64).max
        omax[t, s] = np.iinfo(np.int64).min
    for t in range(nmin.shape[0]):
        nmin[t, s] = np.iinfo(np.int64).max
        nmax[t, s] = np.iinfo(np.int64).min
    for b in range(b0, b1):
        if bcnt[b] == 0:
            continue
        for t in range(cmin.shape[0]):
            cmin[t, s] = min(cmin[t, s], bcmin[t, b])
            cmax[t, s] = max(cmax[t, s], bcmax[t, b])
        for t in range(omin.shape[0]):
            omin[t, s] = min(omin[t, s], bomin[t, b])
            omax[t, s] = max(omax[t, s], bomax[t, b])
        for t in range(nmin.shape[0]):
            nmin[t, s] = min(nmin[t, s], bnmin[t, b])
            nmax[t, s] = max(nmax[t, s], bnmax[t, b])


@njit
def record_distance(
    records: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    p: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> float:
    """Squared MDAV-generic distance of the record at position p to (pc, po, pn), with the
    brute-force kernel's arithmetic."""
    xcol, ocol, ncol, _rowat, _where, _posblock = records
    s = 0.0
    for t in range(xcol.shape[0]):
        u = xcol[t, p] - pc[t]
        s += u * u
    for t in range(ocol.shape[0]):
        s += osq[t, abs(ocol[t, p] - po[t])]
    for t in range(ncol.shape[0]):
        s += np.float64(ncol[t, p] != pn[t])
    return s


@njit
def _lower_bounds(
    level: tuple,  # type: ignore[type-arg]
    lo: int,
    hi: int,
    osq: np.ndarray,
    qz: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    delta: float,
    out: np.ndarray,
) -> None:
    """out[:hi-lo] = lower bounds of the distances from the point (qz along the principal axes,
    po, pn) of the records in boxes lo..hi-1 of ``level`` = (cmin, cmax, omin, omax, nmin,
    nmax); ``delta`` > 0 (rotated boxes) makes them safe for rounding (:func:`_safe_lower`)."""
    cmin, cmax, omin, omax, nmin, nmax = level
    m = hi - lo
    for s in range(m):
        out[s] = 0.0
    for t in range(qz.shape[0]):
        bl = cmin[t, lo:hi]
        bh = cmax[t, lo:hi]
        v = qz[t]
        for s in range(m):
            u = max(max(bl[s] - v, v - bh[s]), 0.0)
            out[s] += u * u
    if delta > 0.0:
        for s in range(m):
            out[s] = _safe_lower(out[s], delta)
    for t in range(po.shape[0]):
        v = po[t]
        for s in range(m):
            out[s] += osq[t, max(max(omin[t, lo + s] - v, v - omax[t, lo + s]), 0)]
    for t in range(pn.shape[0]):
        v = pn[t]
        for s in range(m):
            out[s] += np.float64(v < nmin[t, lo + s] or v > nmax[t, lo + s])
    if delta > 0.0:
        for s in range(m):
            out[s] *= 1.0 - 1e-9


@njit
def _upper_bounds(
    level: tuple,  # type: ignore[type-arg]
    lo: int,
    hi: int,
    osq: np.ndarray,
    qz: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    delta: float,
    out: np.ndarray,
) -> None:
    """out[:hi-lo] = upper bounds of the distances from the point (qz along the principal axes,
    po, pn) of the records in boxes lo..hi-1 of ``level``: the mirror of :func:`_lower_bounds`
    (the farther corner coordinate; the larger rank difference; a nominal term 0 only when every
    record of the box has the point's code). With ``delta`` > 0 (rotated boxes) the continuous
    part is widened to (sqrt(bound) (1 + 1e-9) + delta)^2, the argument of :func:`_safe_lower`
    turned round, and the whole bound by a relative 1e-9: a record's computed distance never
    exceeds it, so a box whose bound is below the best distance found holds no farther record
    and no tie."""
    cmin, cmax, omin, omax, nmin, nmax = level
    m = hi - lo
    for s in range(m):
        out[s] = 0.0
    for t in range(qz.shape[0]):
        v = qz[t]
        for s in range(m):
            u = max(abs(v - cmin[t, lo + s]), abs(cmax[t, lo + s] - v))
            out[s] += u * u
    if delta > 0.0:
        for s in range(m):
            root = np.sqrt(out[s]) * (1.0 + 1e-9) + delta
            out[s] = root * root
    for t in range(po.shape[0]):
        v = po[t]
        for s in range(m):
            out[s] += osq[t, max(abs(v - omin[t, lo + s]), abs(omax[t, lo + s] - v))]
    for t in range(pn.shape[0]):
        v = pn[t]
        for s in range(m):
            out[s] += np.float64(not (nmin[t, lo + s] == v and nmax[t, lo + s] == v))
    for s in range(m):
        out[s] = out[s] * (1.0 + 1e-9) + 1e-300


@njit
def _safe_lower(bound: float, delta: float) -> float:
    """A lower bound of the computed continuous distance, from the squared distance ``bound``
    between a point and a box along the principal axes.

    The box holds the records' computed rotated coordinates z = fl(x @ rot), the point's are
    fl(rot^T p): each is within dc**1.5 * 1.1e-16 of its length of the exact rotation (any
    order of summation, fused or not), and ``rot`` is orthonormal to 1e-13 (checked when it
    is made), so the exact distance |x - p| is at least sqrt(bound) - delta for delta = 1e-10
    (|x|max + |p|) (up to 10,000 attributes), less a relative 1e-13 per attribute. The
    continuous terms computed with the brute-force kernel's arithmetic are within a relative
    (dc + 2) * 1.1e-16 of |x - p|^2. The factors 1 - 1e-9 here and on the whole bound in
    :func:`_lower_bounds` cover all of these with a wide margin; the bound stays 0 when the
    point is in the box, so a tie (a record at exactly the k-1th distance) is never passed
    over."""
    root = np.sqrt(bound) * (1.0 - 1e-9) - delta
    if root <= 0.0:
        return 0.0
    low: float = root * root
    return low


@njit
def _rotate_point(blocks: tuple, pc: np.ndarray, qz: np.ndarray) -> float:  # type: ignore[type-arg]
    """qz = the continuous point pc along the principal axes; returns the bounds' margin
    (0.0 without a rotation: qz is then pc itself, and the bounds are exact)."""
    rot = blocks[9]
    rmeta = blocks[10]
    if rmeta[0] == 0.0:
        qz[:] = pc
        return 0.0
    norm = 0.0
    for t in range(pc.shape[0]):
        norm += pc[t] * pc[t]
    for j in range(qz.shape[0]):
        acc = 0.0
        for t in range(pc.shape[0]):
            acc += pc[t] * rot[t, j]
        qz[j] = acc
    margin: float = rmeta[1] + 1e-10 * np.sqrt(norm)
    return margin


@njit
def _any_within(dist: np.ndarray, a: int, c: int, bound: float) -> bool:
    """Whether one of dist[a:a+c] is at most ``bound`` (a count, so that the loop vectorizes)."""
    seg = dist[a : a + c]
    hits = 0
    for i in range(c):
        hits += seg[i] <= bound
    return hits > 0


#: :func:`block_nearest` first sums this many continuous attributes of a block's records (those
#: where the query is farthest from the block's centre), from this many continuous attributes on
#: and in blocks of at least :data:`STAGED_BLOCK_SIZE` records (MDAV's index).
#: Measured at 100,000 x 10 (standard normal, the records nearest the periphery as queries): 79 %
#: of the visited blocks are ruled out after 4 attributes (58 % after 3, 89 % after 5; in column
#: order instead, 15 % after 4).
#:
#: Counts of a whole run at 100,000 x 10 (standard normal, k = 5, one thread): 20,000 nearest
#: queries visit 635,000 superblocks (about 32 of the ~98 each) and 2.2 million blocks; 104
#: million records are summed on 4 attributes in blocks so ruled out, 49 million whole distances
#: computed. Tried and not kept (the same partition each time; A/B in one process, old and new
#: alternating, 7 runs each, medians): (1) whole distances only for the records whose partial
#: sum is within the bound, record by record: 49 -> 3.5 million whole distances, yet the run
#: took 1.99 s against 1.93 (wall close to CPU time; 2.16 against 2.12 s doing so only for at
#: most 8 such records): reaching a block's columns costs more than their arithmetic, which
#: vectorizes; (2) the other picked attributes summed only for the records still within after
#: 2: slower (CPU 2.52 against 1.96 s, under heavy load);
#: (3) a ball around each block's centre before the sums: it ruled out 271 of the 2.2 million
#: visits (in 10 dimensions a block's radius is about its distance from most queries); (4) a
#: superblock's blocks by increasing bound: 3 % fewer distances, 0.5 % more visits.
STAGED_DIMS = 4
STAGED_MIN_D = 7
#: Records per block where the staged sums apply (MDAV's index, :func:`block_size_for`): they
#: make a record cheaper, so larger blocks (fewer visits) pay. Measured at 100,000 x 10, whole
#: MDAV runs in one process: 128 about 10 % faster than 64 and than 256.
STAGED_BLOCK_SIZE = 128


def block_size_for(dc: int) -> int:
    """Records per block of MDAV's index for ``dc`` continuous attributes."""
    return STAGED_BLOCK_SIZE if dc >= STAGED_MIN_D else BLOCK_SIZE


@njit
def _partial_within(
    xcol: np.ndarray,
    centre: np.ndarray,
    b: int,
    a: int,
    c: int,
    pc: np.ndarray,
    bound: float,
    pick: np.ndarray,
    pick_gap: np.ndarray,
    out: np.ndarray,
) -> bool:
    """Whether a record of block b (positions a..a+c-1) may be within ``bound`` of the point pc,
    judged on :data:`STAGED_DIMS` continuous attributes: those where pc is farthest from the
    block's centre. ``out[a:a+c]`` is overwritten.

    Each term is the kernel's own ``fl((x - p)**2)``; a record's distance computed in column
    order (:func:`~microgui.core.methods.kernels.mixed_distances_block`) is a rounded sum of
    these and of further non-negative terms, so it is at least (1 - (d + 1) eps) times the exact
    sum of the picked terms, which is at least their rounded sum over (1 + h eps): a partial sum
    above ``bound`` / (1 - 1e-9) proves the distance above ``bound`` (any number of attributes
    below 10^6). False only then, for every record of the block."""
    h = pick.shape[0]
    dc = xcol.shape[0]
    gap = pick_gap[:dc]
    for t in range(dc):
        gap[t] = abs(pc[t] - centre[t, b])
    # the h attributes with the largest gap, by selection (dc is small)
    for i in range(h):
        best = 0
        for t in range(1, dc):
            if gap[t] > gap[best]:
                best = t
        pick[i] = best
        gap[best] = -1.0
    seg = out[a : a + c]
    for i in range(c):
        seg[i] = 0.0
    for i2 in range(h):
        t = pick[i2]
        col = xcol[t, a : a + c]
        v = pc[t]
        for i in range(c):
            u = col[i] - v
            seg[i] += u * u
    limit = bound / (1.0 - 1e-9)
    hits = 0
    for i in range(c):
        hits += seg[i] <= limit
    return hits > 0


@njit
def block_nearest(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    exclude: int,
    kk: int,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
) -> None:
    """The ``kk`` smallest (distance, original row) pairs among the remaining records other than
    position ``exclude`` (their positions into hp[:kk], heap order), as
    :func:`~microgui.core.methods.kernels.nearest_and_farthest` finds them.

    The superblock of ``exclude`` first; then, by increasing lower bound, the superblocks whose
    bound is at most the current kk-th distance, and inside each its blocks whose bound is. Only
    a strictly larger bound rules a box out (ties are settled by row). A visited block's
    distances are computed in one vectorized pass; once the heap is full, its per-record pass
    (row, comparison, heap) runs only when one of them is at most the current kk-th distance
    (counted in ``counter[1]`` otherwise): a record at exactly that distance can still enter by
    a smaller row (the tie rule of :mod:`microgui.core.methods.mdav`, ``003`` Algorithm 5.1), one
    farther cannot. At 100,000 x 10 most visited blocks hold no such record (the heap pass was
    a fifth of the query's time). ``work`` = (sbound, bbound, dist, counter, cand, qz) work
    arrays."""
    xcol, ocol, ncol, rowat, _where, posblock = records
    bstart = blocks[0]
    bcnt = blocks[1]
    blevel = blocks[2:8]
    slot_sb = supers[1]
    sb_slot = supers[2]
    meta = supers[9]
    slevel = supers[3:9]
    m = meta[0]
    g = meta[1]
    nb = meta[2]
    sbound, bbound, dist, counter, cand, qz = work
    centre = blocks[11]
    staged = kk > 0 and centre.shape[0] > 0
    pick = np.empty(STAGED_DIMS, dtype=np.int64)
    gap = np.empty(xcol.shape[0])
    delta = _rotate_point(blocks, pc, qz)
    _lower_bounds(slevel, 0, m, osq, qz, po, pn, delta, sbound)
    size = 0
    start = sb_slot[posblock[exclude] // g] if exclude >= 0 else int(np.argmin(sbound[:m]))
    ncand = 0
    for i in range(-1, m):
        if i < 0:
            s = start
        else:
            if i == 0:
                # Candidates left after the first superblock, nearest first.
                for t in range(m):
                    if t != start and (size < kk or sbound[t] <= hd[0]):
                        cand[ncand] = t
                        ncand += 1
                cand[:ncand] = cand[:ncand][np.argsort(sbound[cand[:ncand]])]
            if i >= ncand:
                break
            s = cand[i]
            if size >= kk and sbound[s] > hd[0]:
                break
        b0 = slot_sb[s] * g
        b1 = min(b0 + g, nb)
        counter[2] += 1
        _lower_bounds(blevel, b0, b1, osq, qz, po, pn, delta, bbound)
        top = -1
        if exclude >= 0 and b0 <= posblock[exclude] < b1:
            top = posblock[exclude] - b0
        for jj in range(-1, b1 - b0):
            j = top if jj < 0 else jj
            if j < 0 or (jj >= 0 and j == top):
                continue
            b = b0 + j
            c = bcnt[b]
            if c == 0 or (size >= kk and bbound[j] > hd[0]):
                continue
            a = bstart[b]
            counter[4] += 1
            if (
                staged
                and size >= kk
                and jj >= 0
                and not _partial_within(xcol, centre, b, a, c, pc, hd[0], pick, gap, dist)
            ):
                counter[3] += c
                continue
            mixed_distances_block(xcol, ocol, ncol, osq, a, a + c, pc, po, pn, dist)
            counter[0] += c
            if kk > 0 and size >= kk and jj >= 0 and not _any_within(dist, a, c, hd[0]):
                # No record of the block reaches the heap (a record enters only at a distance
                # at most the kk-th): the per-record pass is skipped, not its outcome.
                counter[1] += 1
                continue
            for q in range(c):
                p = a + q
                if p == exclude:
                    continue
                d = dist[p]
                x = rowat[p]
                if size < kk:
                    heap_push(hd, hx, hp, size, d, x, p)
                    size += 1
                elif d < hd[0] or (d == hd[0] and x < hx[0]):
                    hd[0] = d
                    hx[0] = x
                    hp[0] = p
                    heap_sift_down(hd, hx, hp, size)


@njit
def block_farthest(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
) -> tuple[int, int]:
    """Position of the remaining record farthest from (pc, po, pn) (the largest (distance, -row)
    pair, as :func:`anchor_farthest` and the brute-force kernel find it) by the blocks' boxes:
    the superblocks by decreasing upper bound (:func:`_upper_bounds`), inside each its blocks
    whose bound reaches the best distance so far, until a superblock's bound is below it; and
    the distances computed (-1, 0 when no record remains). Only a strictly smaller bound rules
    a box out (ties are settled by row).

    It complements the anchor walk on clustered data: from a record r on one cluster, the
    farthest record lies in another cluster that is seldom opposite r across the anchor, so the
    walk's bound (anchor distance + |r - anchor|) is loose and it computes about a quarter of
    the records per query (issue 33 item 4: 223 million distances at 100,000 x 10 in 20
    clusters against 15 million on standard normal data), where the boxes rule out every
    cluster but the far ones (130 million). On unclustered data the walk is the better of the
    two; :func:`pruned_farthest` picks per query."""
    xcol, ocol, ncol, rowat, _where, _posblock = records
    bstart = blocks[0]
    bcnt = blocks[1]
    blevel = blocks[2:8]
    slot_sb = supers[1]
    meta = supers[9]
    slevel = supers[3:9]
    m = meta[0]
    g = meta[1]
    nb = meta[2]
    sbound, bbound, dist, counter, _cand, qz = work
    delta = _rotate_point(blocks, pc, qz)
    _upper_bounds(slevel, 0, m, osq, qz, po, pn, delta, sbound)
    order = np.argsort(-sbound[:m], kind="mergesort")
    best = -1
    best_d = -1.0
    best_row = 0
    done = 0
    for i in range(m):
        s = order[i]
        if sbound[s] < best_d:
            break
        b0 = slot_sb[s] * g
        b1 = min(b0 + g, nb)
        counter[2] += 1
        _upper_bounds(blevel, b0, b1, osq, qz, po, pn, delta, bbound)
        for j in range(b1 - b0):
            b = b0 + j
            c = bcnt[b]
            if c == 0 or bbound[j] < best_d:
                continue
            a = bstart[b]
            mixed_distances_block(xcol, ocol, ncol, osq, a, a + c, pc, po, pn, dist)
            done += c
            counter[4] += 1
            for q in range(c):
                p = a + q
                d = dist[p]
                x = rowat[p]
                if d > best_d or (d == best_d and x < best_row):
                    best = p
                    best_d = d
                    best_row = x
    return best, done


#: :func:`pruned_farthest` tries the search it did not take once the one it took has computed
#: this many times the other's estimated cost since the last try (at most ~3 % spent on tries).
PROBE_AFTER = 32


@njit
def pruned_farthest(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    cost: np.ndarray,
) -> tuple[int, int]:
    """The farthest remaining record from (pc, po, pn) by :func:`anchor_farthest` or
    :func:`block_farthest`, whichever has computed fewer distances per query lately; the same
    record either way (both are exact, with the same tie rule), so the choice changes only the
    time. ``cost`` = [the walk's estimate, the boxes' estimate (distances per query, 0: not
    measured yet), distances computed since the other was last tried] (a running mean of 1/4
    weight per query); the other is tried once the one taken has computed :data:`PROBE_AFTER`
    times its estimate since the last try. Counts, not clock time: the same choices on every
    machine."""
    if cost[0] == 0.0:
        use_blocks = False
    elif cost[1] == 0.0:
        use_blocks = True
    else:
        cheap = 1 if cost[1] < cost[0] else 0
        use_blocks = cheap == 1
        if cost[2] >= PROBE_AFTER * cost[1 - cheap]:
            use_blocks = not use_blocks
            cost[2] = 0.0
    if use_blocks:
        s, w = block_farthest(records, blocks, supers, osq, pc, po, pn, work)
    else:
        s, w = anchor_farthest(records, osq, anchor, pc, po, pn)
    slot = 1 if use_blocks else 0
    # +1: an empty query still costs its bounds
    cost[slot] = w + 1.0 if cost[slot] == 0.0 else 0.75 * cost[slot] + 0.25 * (w + 1.0)
    cost[2] += w + 1.0
    return s, w


def work_arrays(index: Blocks) -> tuple[np.ndarray, ...]:
    """The work arrays of the searches: (superblock bounds, block bounds, distances by position,
    [distances computed, blocks whose per-record pass :func:`block_nearest` skipped, superblocks
    visited, -, blocks visited], candidate superblocks, the query point along the principal
    axes)."""
    ns = index.supers[0].shape[0]
    g = int(index.supers[9][1])
    n = index.records[3].shape[0]
    dc = index.records[0].shape[0]
    return (
        np.empty(ns),
        np.empty(g),
        np.empty(n),
        np.zeros(5, dtype=np.int64),
        np.empty(ns, dtype=np.int64),
        np.empty(dc),
    )


@njit
def block_remove(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    rows: np.ndarray,
    g: int,
    touched: np.ndarray,
) -> None:
    """Take the records of original rows rows[:g] out of their blocks (swap-removal inside the
    block; ``where`` follows), tighten the boxes of their blocks and superblocks and drop the
    superblocks left empty."""
    xcol, ocol, ncol, rowat, where, posblock = records
    bstart, bcnt = blocks[0], blocks[1]
    scnt, slot_sb, sb_slot = supers[0], supers[1], supers[2]
    scmin, scmax, somin, somax, snmin, snmax, meta = supers[3:]
    per = meta[1]
    bcmin, bcmax, bomin, bomax, bnmin, bnmax, zcol = blocks[2:9]
    rotated = blocks[10][0] != 0.0
    for a in range(g):
        p = where[rows[a]]
        b = posblock[p]
        # A box needs tightening only when the record leaving it lies on its boundary (a box
        # left wider than its records stays a valid bound: it is only looser).
        edge = False
        for t in range(zcol.shape[0]):
            v = zcol[t, p]
            if v == bcmin[t, b] or v == bcmax[t, b]:
                edge = True
        for t in range(ocol.shape[0]):
            w = ocol[t, p]
            if w == bomin[t, b] or w == bomax[t, b]:
                edge = True
        for t in range(ncol.shape[0]):
            w = ncol[t, p]
            if w == bnmin[t, b] or w == bnmax[t, b]:
                edge = True
        touched[a] = b if edge else -1 - b
        last = bstart[b] + bcnt[b] - 1
        if p != last:
            for t in range(xcol.shape[0]):
                xcol[t, p] = xcol[t, last]
            if rotated:
                for t in range(zcol.shape[0]):
                    zcol[t, p] = zcol[t, last]
            for t in range(ocol.shape[0]):
                ocol[t, p] = ocol[t, last]
            for t in range(ncol.shape[0]):
                ncol[t, p] = ncol[t, last]
            rowat[p] = rowat[last]
            where[rowat[p]] = p
        where[rows[a]] = -1
        bcnt[b] -= 1
        scnt[sb_slot[b // per]] -= 1
    for a in range(g):
        edge = touched[a] >= 0
        b = touched[a] if edge else -1 - touched[a]
        repeat = False
        for a2 in range(a):
            if touched[a2] == b or -1 - touched[a2] == b:
                repeat = True
                edge = edge or touched[a2] >= 0
        if repeat and not edge:
            continue
        if edge:
            _block_box(records, blocks, b)
        sb = b // per
        s = sb_slot[sb]
        if s < 0:
            continue
        if scnt[s] > 0:
            if edge:
                _super_box(blocks, supers, s)
            continue
        # Empty: the last slot moves into this one.
        last = meta[0] - 1
        if s != last:
            moved = slot_sb[last]
            scnt[s] = scnt[last]
            slot_sb[s] = moved
            sb_slot[moved] = s
            for t in range(scmin.shape[0]):
                scmin[t, s] = scmin[t, last]
                scmax[t, s] = scmax[t, last]
            for t in range(somin.shape[0]):
                somin[t, s] = somin[t, last]
                somax[t, s] = somax[t, last]
            for t in range(snmin.shape[0]):
                snmin[t, s] = snmin[t, last]
                snmax[t, s] = snmax[t, last]
        sb_slot[sb] = -1
        meta[0] = last


@njit
def _gap(
    ac: np.ndarray,
    ao: np.ndarray,
    an: np.ndarray,
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> float:
    """Squared MDAV-generic distance between two points."""
    s = 0.0
    for t in range(pc.shape[0]):
        u = ac[t] - pc[t]
        s += u * u
    for t in range(po.shape[0]):
        s += osq[t, abs(ao[t] - po[t])]
    for t in range(pn.shape[0]):
        s += np.float64(an[t] != pn[t])
    return s


#: Principal axes of the anchor list's projection filter (continuous attributes only). One:
#: measured with 1, 2, 3, 5 and 10 at 100,000-1,000,000 x 10 (and 1 or 3 at d = 4 and 12),
#: more axes rule out more records but each check costs more than the distances it saves
#: (1,000,000 x 10: 41 s with one axis, 57 s with three).
AXES = 1
#: Entries per shell of the anchor list (sorted inside along the first principal axis), and per
#: chunk (consecutive entries of a shell, with bounds).
SHELL = 2048
CHUNK = 32


def make_anchor(n: int, continuous: np.ndarray, do: int, dn: int) -> tuple[np.ndarray, ...]:
    """The arrays of an (empty) anchor list for the records of (n, dc) ``continuous`` (see
    :func:`set_anchor`); the projection filter's axes are the leading principal axes of the
    continuous attributes (measured on at most 100,000 evenly spaced records; none when their
    covariance is not finite)."""
    dc = continuous.shape[1]
    p = min(AXES, dc) if do == 0 and dn == 0 else 0
    axes = np.zeros((p, dc))
    if p and n > 1:
        sample = continuous[:: max(1, -(-n // 100_000))]
        with np.errstate(all="ignore"):
            cov = np.cov(sample, rowvar=False).reshape(dc, dc)
        if np.isfinite(cov).all():
            try:
                _w, vec = np.linalg.eigh(cov)
                axes = np.ascontiguousarray(vec[:, ::-1][:, :p].T)
            except np.linalg.LinAlgError:
                pass
        # Values so large that their covariance overflows (about 1e154): no filter, the walk's
        # other bounds still hold (review).
    chunks = n // CHUNK + n // SHELL + 2
    return (
        np.empty(dc),
        np.empty(do, dtype=np.int64),
        np.empty(dn, dtype=np.int64),
        np.zeros(5, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n),
        np.empty((n, dc)),
        np.empty((n, do), dtype=np.int64),
        np.empty((n, dn), dtype=np.int64),
        np.zeros(n, dtype=np.bool_),
        np.full(n, -1, dtype=np.int64),
        axes,
        np.empty((n, p + 1)),
        np.empty(n, dtype=np.int64),
        np.empty(chunks, dtype=np.int64),
        np.empty(chunks, dtype=np.int64),
        np.empty(chunks),
        np.empty(chunks),
        np.empty((chunks, p + 1)),
        np.empty((chunks, p + 1)),
        np.zeros(chunks, dtype=np.int64),
    )


@njit
def set_anchor(
    records: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    anchor: tuple,  # type: ignore[type-arg]
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> int:
    """Make (pc, po, pn) the anchor and list the remaining records around it; returns m.

    The list holds the records' original rows (``order``) by decreasing distance from the
    anchor (``radius``), cut into shells of :data:`SHELL` entries; inside a shell the entries are
    sorted along the first principal axis and cut into chunks of :data:`CHUNK`. Each entry has
    the record copied row-major (``xa``, ``oa``, ``na``: a walk reads them in sequence) and, for
    the projection filter (continuous attributes only), its coordinates along the principal
    ``axes`` relative to the anchor and the length of the rest (``proj``). Each chunk has its
    first entry and end (``cfirst``, ``cend``), its live entries (``clive``), the largest anchor
    distance of its shell (``ctop``) and of its own entries (``crho``), and the range of its
    entries' ``proj`` (``cmin``, ``cmax``; only the largest rest is used).

    ``anchor`` (from :func:`make_anchor`) = (ac, ao, an, head [first chunk with live entries,
    chunks, distances computed by the walks from the average since the list was made, -,
    list length], order, radius, xa, oa, na, live, entry
    (list index of each row), axes, proj, chunk_of, cfirst, cend, ctop, crho, cmin, cmax, clive).
    """
    xcol, ocol, ncol, _rowat, where, _posblock = records
    ac, ao, an, head, order, radius, xa, oa, na, live, entry, axes, proj = anchor[:13]
    chunk_of, cfirst, cend, ctop, crho, cmin, cmax, clive = anchor[13:]
    dc = xcol.shape[0]
    do = ocol.shape[0]
    dn = ncol.shape[0]
    npx = axes.shape[0]
    m = 0
    for row in range(where.shape[0]):
        p = where[row]
        if p >= 0:
            radius[m] = -np.sqrt(record_distance(records, osq, p, pc, po, pn))
            order[m] = row
            m += 1
    by = np.argsort(radius[:m], kind="mergesort")
    # reordered through one buffer and ``by`` itself (each by[i] read once, then overwritten),
    # not a reordered copy of each and a negated one: two n-arrays less at the peak of the
    # kernel (issue 33: 16 MB of the 1,000,000 x 10 command's); the same values
    r = np.empty(m)
    for i in range(m):
        r[i] = -radius[by[i]]
    radius[:m] = r
    for i in range(m):
        by[i] = order[by[i]]
    order[:m] = by
    key = np.zeros(min(SHELL, max(m, 1)))
    nch = 0
    for lo in range(0, m, SHELL):
        hi = min(lo + SHELL, m)
        top = radius[lo]
        if npx:
            # Inside the shell: along the first principal axis.
            for i in range(lo, hi):
                p = where[order[i]]
                acc = 0.0
                for t in range(dc):
                    acc += (xcol[t, p] - pc[t]) * axes[0, t]
                key[i - lo] = acc
            by = np.argsort(key[: hi - lo], kind="mergesort")
            rows_s = order[lo:hi][by]
            rad_s = radius[lo:hi][by]
            order[lo:hi] = rows_s
            radius[lo:hi] = rad_s
        for i in range(lo, hi):
            row = order[i]
            p = where[row]
            entry[row] = i
            live[i] = True
            for t in range(dc):
                xa[i, t] = xcol[t, p]
            for t in range(do):
                oa[i, t] = ocol[t, p]
            for t in range(dn):
                na[i, t] = ncol[t, p]
            rest = radius[i] * radius[i]
            for j in range(npx):
                acc = 0.0
                for t in range(dc):
                    acc += (xa[i, t] - pc[t]) * axes[j, t]
                proj[i, j] = acc
                rest -= acc * acc
            # rho^2 - sum alpha^2 cancels when the rest is tiny: its rounding (a few eps rho^2)
            # would then be a relative error of order sqrt(eps) in |w|; widening the radicand by
            # 1e-12 rho^2 makes |w| an upper bound whatever the cancellation (review).
            proj[i, npx] = np.sqrt(max(rest, 0.0) + 1e-12 * radius[i] * radius[i])
        for a in range(lo, hi, CHUNK):
            b = min(a + CHUNK, hi)
            cfirst[nch] = a
            cend[nch] = b
            clive[nch] = b - a
            ctop[nch] = top
            far = 0.0
            for j in range(npx + 1):
                cmin[nch, j] = np.inf
                cmax[nch, j] = -np.inf
            for i in range(a, b):
                chunk_of[i] = nch
                far = max(far, radius[i])
                for j in range(npx + 1):
                    cmin[nch, j] = min(cmin[nch, j], proj[i, j])
                    cmax[nch, j] = max(cmax[nch, j], proj[i, j])
            crho[nch] = far
            nch += 1
    ac[:] = pc
    ao[:] = po
    an[:] = pn
    head[0] = 0
    head[1] = nch
    head[2] = 0
    head[4] = m
    return m


@njit
def anchor_remove(anchor: tuple, rows: np.ndarray, g: int) -> None:  # type: ignore[type-arg]
    """Take the original rows rows[:g] out of the anchor list."""
    head = anchor[3]
    live = anchor[9]
    entry = anchor[10]
    chunk_of = anchor[13]
    clive = anchor[20]
    for a in range(g):
        i = entry[rows[a]]
        if 0 <= i < head[4] and live[i]:
            live[i] = False
            clive[chunk_of[i]] -= 1


@njit
def anchor_farthest(
    records: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    anchor: tuple,  # type: ignore[type-arg]
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
) -> tuple[int, int]:
    """Position of the remaining record farthest from (pc, po, pn) (the largest (distance, -row)
    pair), by a walk down the anchor list; and the number of distances computed (-1, 0 when the
    list holds no remaining record).

    By the triangle inequality (the MDAV-generic distance is Euclidean in an embedding: z-scores,
    ranks over |D(V)|, nominal codes one-hot over sqrt 2) a record at anchor distance rho is at
    most rho + |p - anchor| from p: the walk stops at the first shell whose largest anchor
    distance is below sqrt(best) - |p - anchor|, and passes over a chunk whose largest anchor
    distance cannot reach the best. The projection filter (continuous attributes only) bounds a
    distance before it is computed: with y - a = sum_j alpha_j e_j + w and
    p - a = sum_j beta_j e_j + u (e_j the principal axes, w and u orthogonal to them),
    |y - p|^2 = rho^2 + |p - a|^2 - 2 sum_j alpha_j beta_j - 2 w.u
              <= rho^2 + |p - a|^2 - 2 sum_j alpha_j beta_j + 2 |w| |u|,
    for a chunk with its largest rho, the smallest alpha_j beta_j over its range and its largest
    |w|; a chunk or record whose bound is below the best is passed over. These bounds are algebra,
    not the brute-force arithmetic: they keep a relative margin of 1e-9 of the size of their
    terms, far above their rounding.
    """
    where = records[4]
    ac, ao, an, head, order, radius, xa, oa, na, live, _entry, axes, proj = anchor[:13]
    _chunk_of, cfirst, cend, ctop, crho, cmin, cmax, clive = anchor[13:]
    nch = head[1]
    while head[0] < nch and clive[head[0]] == 0:
        head[0] += 1
    dc = xa.shape[1]
    do = oa.shape[1]
    dn = na.shape[1]
    npx = axes.shape[0]
    shift2 = _gap(ac, ao, an, osq, pc, po, pn)
    shift = np.sqrt(shift2)
    beta = np.zeros(npx)
    rest_q = shift2
    for j in range(npx):
        acc = 0.0
        for t in range(dc):
            acc += (pc[t] - ac[t]) * axes[j, t]
        beta[j] = acc
        rest_q -= acc * acc
    res_q = np.sqrt(max(rest_q, 0.0) + 1e-12 * shift2)
    best = -1
    best_d = -1.0
    best_row = 0
    work = 0
    reach = -1.0
    per = SHELL // CHUNK
    backward = npx > 0 and beta[0] < 0.0
    for cc in range(head[0], nch):
        c = cc
        if backward:
            # Inside a shell (sorted along the first principal axis), from the end farther
            # from p: a far record is found early and the bounds rule out more (the order
            # does not change the answer).
            lo_c = max(cc // per * per, head[0])
            hi_c = min(cc // per * per + per, nch)
            c = lo_c + hi_c - 1 - cc
        if ctop[c] < reach:
            break
        if clive[c] == 0:
            continue
        a = cfirst[c]
        b = cend[c]
        far = crho[c] + shift
        if far * far * (1.0 + 1e-9) + 1e-300 < best_d:
            continue
        if npx and best_d > 0.0:
            lin = crho[c] * crho[c] + shift2
            mag = lin
            for j in range(npx):
                x1 = cmin[c, j] * beta[j]
                x2 = cmax[c, j] * beta[j]
                lin -= 2.0 * min(x1, x2)
                mag += 2.0 * max(abs(x1), abs(x2))
            cross = 2.0 * cmax[c, npx] * res_q
            if lin + cross + 1e-9 * (mag + cross) < best_d:
                continue
        for i in range(a, b):
            if not live[i]:
                continue
            if npx and best_d > 0.0:
                rho = radius[i]
                lin = rho * rho + shift2
                mag = lin
                for j in range(npx):
                    x = proj[i, j] * beta[j]
                    lin -= 2.0 * x
                    mag += 2.0 * abs(x)
                cross = 2.0 * proj[i, npx] * res_q
                if lin + cross + 1e-9 * (mag + cross) < best_d:
                    continue
            work += 1
            # The brute-force kernel's arithmetic, on the anchor's row-major copy.
            d = 0.0
            for t in range(dc):
                u = xa[i, t] - pc[t]
                d += u * u
            for t in range(do):
                d += osq[t, abs(oa[i, t] - po[t])]
            for t in range(dn):
                d += np.float64(na[i, t] != pn[t])
            row = order[i]
            if d > best_d or (d == best_d and row < best_row):
                best = i
                best_d = d
                best_row = row
                # Margins on the operands, not on their difference: the rounding of the two
                # square roots is relative to each of them (review: a difference of nearly
                # equal numbers lost its margin).
                reach = (np.sqrt(best_d) * (1.0 - 1e-9) - shift * (1.0 + 1e-9)) / (1.0 + 1e-9)
    return (where[order[best]] if best >= 0 else -1), work


@njit
def take_rows(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    rows: np.ndarray,
    g: int,
    label: int,
    ocount: np.ndarray,
    ncount: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    touched: np.ndarray,
) -> None:
    """Label the records of original rows rows[:g], take them out of the running sum (in
    ascending row order, as :func:`~microgui.core.methods.kernels.take_group`) and the category
    counts, out of their blocks and out of the anchor list."""
    xcol, ocol, ncol, _rowat, where, _posblock = records
    rows[:g].sort()
    for a in range(g):
        row = rows[a]
        p = where[row]
        labels[row] = label
        for t in range(total.shape[0]):
            total[t] -= xcol[t, p]
        for t in range(ocount.shape[0]):
            ocount[t, ocol[t, p]] -= 1
        for t in range(ncount.shape[0]):
            ncount[t, ncol[t, p]] -= 1
    block_remove(records, blocks, supers, rows, g, touched)
    anchor_remove(anchor, rows, g)


@njit
def farthest_from_average(
    records: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    anchor: tuple,  # type: ignore[type-arg]
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    m: int,
) -> tuple[int, int]:
    """Position of the remaining record farthest from the average (pc, po, pn) of the m
    remaining records, by the anchor walk; and the distances computed. The list is made here
    when there is none, and re-made around the average once the walks from the average have
    computed about as much as remaking it costs (a sort and a pass: measured at roughly 8 m
    distances; amortized, at most about twice the cost of the best schedule)."""
    head = anchor[3]
    examined = 0
    if head[1] == 0:
        set_anchor(records, osq, anchor, pc, po, pn)
        examined += m
    r, w = anchor_farthest(records, osq, anchor, pc, po, pn)
    examined += w
    head[2] += w
    if head[2] > max(REANCHOR_WALK, 8 * m):
        set_anchor(records, osq, anchor, pc, po, pn)
        examined += m
    return r, examined


@njit
def take_around(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    p: int,
    k: int,
    label: int,
    ocount: np.ndarray,
    ncount: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    bufs: tuple,  # type: ignore[type-arg]
) -> None:
    """The group of the record at position p and its k-1 nearest remaining records
    (:func:`block_nearest`), labelled ``label`` and taken out (:func:`take_rows`). ``bufs`` =
    (qc, qo, qn, hd, hx, hp, rows, touched) work arrays."""
    qc, qo, qn, hd, hx, hp, rows, touched = bufs
    xcol, ocol, ncol, rowat, _where, _posblock = records
    kk = k - 1
    load_mixed_point(xcol, ocol, ncol, p, qc, qo, qn)
    block_nearest(records, blocks, supers, osq, qc, qo, qn, p, kk, hd, hx, hp, work)
    rows[0] = rowat[p]
    for a in range(kk):
        rows[1 + a] = rowat[hp[a]]
    take_rows(
        records, blocks, supers, anchor, rows, k, label, ocount, ncount, total, labels, touched
    )


@njit
def take_nearest(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    p: int,
    k: int,
    label: int,
    ocount: np.ndarray,
    ncount: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    hp: np.ndarray,
    bufs: tuple,  # type: ignore[type-arg]
) -> None:
    """:func:`take_around` once :func:`block_nearest` has put p's k-1 nearest positions in hp."""
    rows = bufs[6]
    touched = bufs[7]
    rowat = records[3]
    rows[0] = rowat[p]
    for a in range(k - 1):
        rows[1 + a] = rowat[hp[a]]
    take_rows(
        records, blocks, supers, anchor, rows, k, label, ocount, ncount, total, labels, touched
    )


@njit_parallel
def farthest_and_nearest(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    p: int,
    kk: int,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    out: np.ndarray,
    far_work: tuple,  # type: ignore[type-arg]
    cost: np.ndarray,
) -> None:
    """Two independent queries about the record at position p, whose point is (pc, po, pn), on
    two threads when there are: the remaining record farthest from it (:func:`pruned_farthest`
    with the work arrays ``far_work`` and estimates ``cost``; out = [its position, distances
    computed]) and its kk nearest (:func:`block_nearest` into hd, hx, hp, with ``work``). MDAV
    asks both once r is known (``003`` Algorithm 5.1 steps 1c and 1d). Both only read the
    records and write disjoint outputs (the walk also skips its list's empty head), and each is
    the serial query: the answers do not depend on the number of threads."""
    for task in prange(2):
        if task == 0:
            far, w = pruned_farthest(
                records, blocks, supers, anchor, osq, pc, po, pn, far_work, cost
            )
            out[0] = far
            out[1] = w
        else:
            block_nearest(records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work)
