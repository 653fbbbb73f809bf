"""MDAV and MDAV-generic: fixed-size multivariate microaggregation (partition step).

Domingo-Ferrer & Torra, ``003_309fe4adb430bc25.txt`` Algorithm 5.1 (MDAV-generic), with the
distances and average records of §5.2 (continuous), §5.3 (ordinal) and §5.4 (nominal); the same
algorithm as MDAV in ``002_f464918b99c38812.txt`` §4.5, whose step 5 has a slip: the second group
is built around ``s`` (the record farthest from ``r``), not around ``r``.

The partition (Algorithm 5.1, the "3k rule")::

    while |R| >= 3k:
        x~ = average record of all of R
        r  = record of R farthest from x~
        s  = record of R farthest from r
        G_r = r and its k-1 nearest records in R            (group numbered first)
        G_s = s and its k-1 nearest records in R minus G_r  (numbered next)
        R  = R minus G_r minus G_s
    if 2k <= |R| <= 3k-1:
        x~, r and G_r as above; the rest of R is one group (k..2k-1 records)
    else (k <= |R| < 2k): R is one group

Groups are numbered 0, 1, 2, ... in the order they are formed. Every group has between k and
2k-1 records. Reading of the paper's loose ends:

- ``003`` step 2 says "between 3k-1 and 2k records"; with the loop condition that is exactly
  2k <= |R| <= 3k-1, and the rest then holds |R| - k, between k and 2k-1 records. |R| < k never
  happens (the loop leaves at least k records), so ``002`` step 8 ("assign the remaining records
  to the closest group") never applies.
- ``s`` is the farthest record from ``r`` among *all* of R, as in ``003`` step 1c (r's future
  neighbours included). Only when ties put that record into G_r itself (at least 2k+1 records at
  the same, maximal distance from r, e.g. all records equal) is ``s`` taken as the farthest record
  outside G_r instead; in every case ``s`` is therefore the farthest record of R minus G_r.

**Tie rule.** Records are compared by the pair (distance, original row number), lexicographically:
the farthest record is the one with the largest distance and, among equal distances, the smallest
row number; the k-1 nearest are the k-1 smallest pairs (equal distances: smaller row numbers
first). The record itself (r or s) is always in its own group. The rule does not depend on how an
implementation stores or reorders the remaining records. (Checked on the CASC reference sets: the
opposite preference, largest row first, changes the partition of Tarragona and EIA, which have
duplicate records, but not their IL to 4 decimals.) Exact ties between *distinct* records also
depend on rounding: the average record here is a running sum over m (see "Floating point"). Where
the arithmetic is exact (integer or dyadic values) that equals the mean recomputed each round, so
any implementation following this rule gets this partition; with inexact values a freshly
computed mean can differ in its last bits and settle a near-tie for r the other way. The tests
compare the kernel label for label with an independent literal implementation (fresh mean,
sorted (distance, row) pairs) on the three reference sets and on tie-ridden integer data, and
with :func:`mdav_reference` (same arithmetic) on inexact data with ties.

**Distance** (MDAV-generic, ``003`` §5.2-5.4). For records x, y::

    d(x, y)^2 = sum_continuous (z_x - z_y)^2
              + sum_ordinal   d_ORD(x, y)^2,  d_ORD(a, b) = |rank(a) - rank(b)| / |D(V)|
              + sum_nominal   [x != y]

with z the z-scores (``003`` §5.2: standardize, Euclidean distance), d_ORD of ``003`` eq. (1)
(|D(V)| is the number of categories of the attribute's declared order) and the equality distance of
§5.4. The z-scores of a run use the sample standard deviation; the population one would scale
every continuous distance by the same factor, which changes neither MDAV's partition nor IL. So an ordinal attribute weighs at most 1 and a nominal one exactly 0 or 1, while a continuous
attribute has mean squared difference 2 between random records. Average record (``003`` §5.2-5.4):
the mean for continuous attributes, the median (or the convex median, parameter
``ordinal_average=convex-median``) for ordinal ones and the mode for nominal ones, with the tie
rules of :mod:`microgui.core.table.aggregate` (lower median, smallest most frequent code). With only
continuous quasi-identifiers MDAV-generic *is* MDAV: the two give the same partition.

**Implementation.** A numba kernel works on a private column-major copy of the quasi-identifiers:
the remaining records are kept compacted at the front (swap-remove) with their original row
numbers; the continuous part of the average record is a running sum of the remaining records
(ordinal/nominal category counts likewise), so it is never recomputed from scratch. Each round
makes three passes over the remaining records: distances to the average (arg-max gives r);
distances to r (fused: arg-max gives s, a bounded max-heap gives r's k-1 nearest); distances to s
(s's k-1 nearest). The kernel runs a bounded amount of work per call and returns to Python, which
reports progress (and so lets a :class:`RunCancelled` from the callback stop the run). With
more than one thread (issue 33, :mod:`microgui.core.methods.threads`) the passes over many
records run in fixed pieces merged in piece order, and the pruned search asks for s and for r's
k-1 nearest at once: the same partition for any thread count. Parallel regions this fine
(0.1-1 ms) pay only on an idle machine (measured here: a 60,000 x 10 batch 1.65x faster on 2
threads when the second core was free, ten times slower when other programs held it), so each
batch runs on one thread or all, whichever measured faster (``AdaptiveThreads``).

**Pruned search** (issue 17, ``search="pruned"``; ``"auto"`` picks it where it measured faster,
:func:`choose_search`). The same loop, each query answered without a pass over all remaining
records: r (farthest from the average) and s (farthest from r) by walks down an *anchor list*
(the records by decreasing distance from a recent average, with a projection filter), the k-1
nearest of r and of s from *blocks* with boxes (a k-d tree's leaves, grouped in superblocks;
a visited block is first summed on the few attributes where the query is farthest from it,
:func:`~microgui.core.methods.spatial.block_nearest`), re-made around the records left each
time they halve (:func:`~microgui.core.methods.spatial.rebuild_blocks`: as groups leave, the
blocks empty and a query visits more of them for fewer records); see
:mod:`microgui.core.methods.spatial`. Every bound is exact (monotone rounding) or keeps a
relative margin of 1e-9 on each operand, a candidate's distance is computed with this kernel's
arithmetic, and only strictly worse bounds are skipped, so the partition is this kernel's, bit
for bit, ties included (the tests compare them label for label, adversarial cases included, and
the benchmark on every row it times).

Floating point: the running sum starts at the column sums of the data and subtracts each removed
record, group by group, in ascending row order; distances are summed attribute by attribute in
column order. :func:`mdav_reference` (plain numpy) does exactly the same arithmetic, so both give
bit-identical distances and hence the same partition, ties included. The distance, selection and
removal primitives are the shared ones of :mod:`microgui.core.methods.kernels`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import first_call_compiles
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import (
    PARALLEL_MIN,
    PIECE,
    as_2d,
    average_record,
    check_k,
    column_sums,
    farthest,
    load_mixed_point,
    mixed_distances,
    mixed_farthest_parallel,
    mixed_nearest_and_farthest_parallel,
    nearest_and_farthest,
    ordinal_tables,
    piece_buffers,
    qi_arrays,
    take_group,
)
from microgui.core.methods.spatial import (
    anchor_farthest,
    block_nearest,
    block_size_for,
    build_blocks,
    choose_search,
    farthest_and_nearest,
    farthest_from_average,
    make_anchor,
    pruned_farthest,
    rebuild_blocks,
    take_around,
    take_nearest,
    work_arrays,
)
from microgui.core.methods.threads import AdaptiveThreads
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.spare import dropped
from microgui.core.table.aggregate import convex_median, mode, ordinal_median
from microgui.core.table.roles import AttributeKind

__all__ = [
    "mdav",
    "mdav_generic",
    "mdav_reference",
    "mdav_generic_reference",
    "warm_up",
    "MDAV",
    "MDAV_GENERIC",
    "SEARCHES",
    "SEARCH_PARAM",
    "choose_search",
]

#: Work (attribute-record operations) done per kernel call before returning to Python for
#: progress and cancellation. Measured: at most 20 ms between returns at 100,000 x 10 (70 ms at
#: 100,000 x 40), so a cancel takes effect well within 0.2 s.
_BATCH_WORK = 60_000_000
#: The same for the pruned search, whose work units (distances computed, records and boxes
#: scanned) cost more each: measured at most ~60 ms between returns at 100,000 x 10.
_PRUNED_BATCH_WORK = 8_000_000

_PROGRESS_STATUS = "forming groups"

#: The pruned search's blocks are re-made around the records left once they are this many times
#: fewer than when the blocks were made (:func:`~microgui.core.methods.spatial.rebuild_blocks`),
#: while at least ``_REBUILD_MIN`` remain. Checked between batches, so where exactly it happens
#: depends on the batches' sizes (which the thread chooser scales); the partition does not.
#: Measured at 100,000 x 10 in one process: whole runs 4-5 % faster than without (3 rebuilds).
#: Only while at most ``_REBUILD_MAX`` records remain: a rebuild holds the old layout and the new
#: one (and their temporaries) at once, which at 1,000,000 x 10 (rebuilds at 500,000 and 250,000
#: left) raised the whole command's peak from 695 to 833-838 MB (4.45x the CSV; issue 33's
#: target is 4x), for no measurable time (139 s against 141 s); from 125,000 left, 733 MB.
#: 60,000 keeps the rebuilds of a 100,000-record run (at 50,000, 25,000, ...).
_REBUILD_AT = 2
_REBUILD_MIN = 5_000
_REBUILD_MAX = 60_000

#: With more than one thread, the brute-force passes over at least this many remaining records
#: run in parallel pieces of ``_PIECE`` records (the tests make both small).
_PARALLEL_FROM = PARALLEL_MIN
_PIECE = PIECE


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@_njit
def _mdav_batch(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osizes: np.ndarray,
    osq: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    idx: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    state: np.ndarray,
    k: int,
    convex: bool,
    budget: int,
    parallel_from: int,
    piece: int,
    pbufs: tuple,  # type: ignore[type-arg]
) -> None:
    """Advance the partition by about ``budget`` attribute-record operations.

    ``state`` = [records remaining m, next group label]; m = 0 when the partition is complete.
    The passes over at least ``parallel_from`` records run in pieces of ``piece`` records on
    numba's threads (the same answers: :func:`~microgui.core.methods.kernels.mixed_farthest_parallel`;
    ``pbufs`` from :func:`~microgui.core.methods.kernels.piece_buffers`).
    """
    m = state[0]
    label = state[1]
    dc = cont.shape[0]
    do = ords.shape[0]
    dn = noms.shape[0]
    width = dc + do + dn + 1
    kk = k - 1
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    hd = np.empty(kk, dtype=np.float64)
    hx = np.empty(kk, dtype=np.int64)
    hp = np.empty(kk, dtype=np.int64)
    group = np.empty(k, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    work = 0
    while m >= 3 * k and work < budget:
        work += 3 * m * width
        wide = m >= parallel_from
        # 003 Algorithm 5.1 step 1a-b: r, the record farthest from the average of all of R.
        average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
        if wide:
            r = mixed_farthest_parallel(
                cont, ords, noms, osq, m, pc, po, pn, dist, idx, piece, pbufs[0]
            )
        else:
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            r = farthest(dist, idx, m)
        # Steps 1c-d: s farthest from r, and r's k-1 nearest, in one pass.
        load_mixed_point(cont, ords, noms, r, pc, po, pn)
        if wide:
            s = mixed_nearest_and_farthest_parallel(
                cont, ords, noms, osq, m, pc, po, pn, dist, idx, r, kk, hd, hx, hp, piece, pbufs
            )
        else:
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            s = nearest_and_farthest(dist, idx, m, r, kk, hd, hx, hp)
        group[0] = r
        group[1:] = hp
        s = take_group(
            group, k, label, m, s, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
            no_where,
        )  # fmt: skip
        label += 1
        m -= k
        if s < 0:
            # Ties put the farthest record into r's group: the farthest of the rest (dist still
            # holds the distances to r, swapped along with the records).
            s = farthest(dist, idx, m)
        # s's group among the records left.
        load_mixed_point(cont, ords, noms, s, pc, po, pn)
        if m >= parallel_from:
            mixed_nearest_and_farthest_parallel(
                cont, ords, noms, osq, m, pc, po, pn, dist, idx, s, kk, hd, hx, hp, piece, pbufs
            )
        else:
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            nearest_and_farthest(dist, idx, m, s, kk, hd, hx, hp)
        group[0] = s
        group[1:] = hp
        take_group(
            group, k, label, m, -1, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
            no_where,
        )  # fmt: skip
        label += 1
        m -= k
    if m < 3 * k and m > 0:
        if m >= 2 * k:
            # Step 2: one group around the record farthest from the average, the rest another.
            average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            r = farthest(dist, idx, m)
            load_mixed_point(cont, ords, noms, r, pc, po, pn)
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            nearest_and_farthest(dist, idx, m, r, kk, hd, hx, hp)
            group[0] = r
            group[1:] = hp
            take_group(
                group, k, label, m, -1, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
                no_where,
            )  # fmt: skip
            label += 1
            m -= k
        for i in range(m):
            labels[idx[i]] = label
        label += 1
        m = 0
    state[0] = m
    state[1] = label


@_njit
def _mdav_pruned_batch(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    work_arrays: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    osizes: np.ndarray,
    osq: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    state: np.ndarray,
    k: int,
    convex: bool,
    budget: int,
    parallel: bool,
) -> None:
    """The loop of :func:`_mdav_batch` with each query answered by the pruned searches of
    :mod:`microgui.core.methods.spatial`: the same partition, bit for bit.

    ``state`` = [records remaining m, next group label, distances computed so far]
    (the count of the searches is in ``work_arrays[3]``).
    """
    xcol, ocol, ncol, rowat, where, _posblock = records
    m = state[0]
    label = state[1]
    dc = xcol.shape[0]
    do = ocol.shape[0]
    dn = ncol.shape[0]
    width = dc + do + dn + 1
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    qc = np.empty(dc, dtype=np.float64)
    qo = np.empty(do, dtype=np.int64)
    qn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    kk = max(k - 1, 1)
    bufs = (
        np.empty(dc, dtype=np.float64),
        np.empty(do, dtype=np.int64),
        np.empty(dn, dtype=np.int64),
        np.empty(kk, dtype=np.float64),
        np.empty(kk, dtype=np.int64),
        np.empty(kk, dtype=np.int64),
        np.empty(k, dtype=np.int64),
        np.empty(k, dtype=np.int64),
    )
    pair = np.zeros(2, dtype=np.int64)
    fcost = np.zeros(3)  # pruned_farthest's estimates, per batch
    # The farthest query's own work arrays when it runs beside the nearest one (two threads).
    far_work = (
        np.empty_like(work_arrays[0]),
        np.empty_like(work_arrays[1]),
        np.empty(work_arrays[2].shape[0] if parallel else 0),
        np.zeros(5, dtype=np.int64),
        np.empty_like(work_arrays[4]),
        np.empty_like(work_arrays[5]),
    )
    work = 0
    examined = 0
    counted = work_arrays[3][0]
    while m >= 2 * k and work < budget:
        last_pair = m < 3 * k
        # 003 Algorithm 5.1 step 1a-b (step 2 when fewer than 3k are left): r, farthest from
        # the average record of R.
        average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
        r, w = farthest_from_average(records, osq, anchor, pc, po, pn, m)
        examined += w
        s_row = -1
        load_mixed_point(xcol, ocol, ncol, r, qc, qo, qn)
        if last_pair:
            block_nearest(
                records, blocks, supers, osq, qc, qo, qn, r, k - 1, bufs[3], bufs[4], bufs[5],
                work_arrays,
            )  # fmt: skip
        elif parallel:
            # Step 1c (s, the record of R farthest from r) and r's k-1 nearest (step 1d) at
            # once: independent queries, on two threads.
            farthest_and_nearest(
                records, blocks, supers, anchor, osq, r, k - 1, qc, qo, qn, bufs[3], bufs[4],
                bufs[5], work_arrays, pair, far_work, fcost,
            )  # fmt: skip
            s = pair[0]
            examined += pair[1]
            s_row = rowat[s]
        else:
            # Step 1c by the anchor walk or the boxes, whichever costs less on this data.
            s, w = pruned_farthest(
                records, blocks, supers, anchor, osq, qc, qo, qn, work_arrays, fcost
            )
            examined += w
            s_row = rowat[s]
            block_nearest(
                records, blocks, supers, osq, qc, qo, qn, r, k - 1, bufs[3], bufs[4], bufs[5],
                work_arrays,
            )  # fmt: skip
        # Step 1d: r's group.
        take_nearest(
            records, blocks, supers, anchor, r, k, label, ocount, ncount, total, labels, bufs[5],
            bufs,
        )  # fmt: skip
        label += 1
        m -= k
        if last_pair:
            break
        if where[s_row] < 0:
            # Ties put the farthest record into r's group: the farthest of the rest (from r,
            # whose point is still in qc, qo, qn).
            s, w = anchor_farthest(records, osq, anchor, qc, qo, qn)
            examined += w
        else:
            s = where[s_row]
        take_around(
            records, blocks, supers, anchor, osq, s, k, label, ocount, ncount, total, labels,
            work_arrays, bufs,
        )  # fmt: skip
        label += 1
        m -= k
        work = (examined + work_arrays[3][0] - counted) * width + (label - state[1]) * 256 * width
    if m < 2 * k and m > 0:
        # The last k..2k-1 records are one group.
        for row in range(where.shape[0]):
            if where[row] >= 0:
                labels[row] = label
                where[row] = -1
        label += 1
        m = 0
    state[0] = m
    state[1] = label
    state[2] += examined + work_arrays[3][0] - counted


# --------------------------------------------------------------------------------------------
# Python drivers
# --------------------------------------------------------------------------------------------


#: ``search`` parameter of MDAV and MDAV-generic: how the three queries per pair of groups are
#: answered.
SEARCHES = ("auto", "pruned", "brute")


def _partition(
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    k: int,
    convex: bool,
    progress: ProgressFn,
    search: str = "auto",
) -> np.ndarray:
    n = continuous.shape[0]
    k = check_k(k, n)
    if search not in SEARCHES:
        raise InvalidParameter(f"search={search!r} must be one of {', '.join(SEARCHES)}")
    finite = np.isfinite(continuous).all(axis=0) if n else np.ones(continuous.shape[1], bool)
    if not finite.all():
        # A run never gets here (missing values are refused when the table is prepared); a
        # direct call must not get a partition that depends on how NaN compares.
        raise InvalidParameter(
            f"continuous column {int(np.flatnonzero(~finite)[0])} holds NaN or an infinite "
            "value; MDAV needs finite numbers (drop or impute the missing values first)"
        )
    sizes = np.ascontiguousarray(ordinal_sizes, dtype=np.int64)
    osq, ocount = ordinal_tables(ordinal, sizes)
    ncat = int(nominal.max()) + 1 if nominal.size else 1
    ncount = np.zeros((nominal.shape[1], ncat), dtype=np.int64)
    for j in range(nominal.shape[1]):
        if nominal[:, j].min() < 0:
            raise ValueError(f"nominal column {j} has negative codes")
        ncount[j] = np.bincount(nominal[:, j], minlength=ncat)
    total = column_sums(continuous)
    labels = np.full(n, -1, dtype=np.int64)
    if search == "auto":
        categorical = ordinal.shape[1] + nominal.shape[1]
        search = choose_search(n, continuous.shape[1] + categorical, k, categorical)
    kernel = _mdav_pruned_batch if search == "pruned" else _mdav_batch
    if first_call_compiles(kernel):
        # Not compiled in this process yet: numba loads its on-disk cache (under a second) or, on
        # the very first run, compiles (10-15 s, during which a cancel cannot take effect).
        # warm_up() does this ahead of time, e.g. in a background thread when the app starts.
        progress(0.0, "compiling the MDAV kernel (first run only)")
    progress(0.0, _PROGRESS_STATUS)
    # One thread or all of them, batch by batch, whichever measures faster (the partition is
    # the same either way: microgui.core.methods.threads).
    chooser = AdaptiveThreads()
    if search == "pruned":
        block_size = block_size_for(continuous.shape[1])
        index = build_blocks(continuous, ordinal, sizes, nominal, block_size)
        work = work_arrays(index)
        anchor = make_anchor(n, continuous, ordinal.shape[1], nominal.shape[1])
        state = np.array([n, 0, 0], dtype=np.int64)
        built = n
        # the layout holds its own copy: the caller's z-scores may be given back meanwhile
        with dropped(continuous):
            while state[0] > 0:
                if _REBUILD_AT * state[0] <= built and _REBUILD_MIN <= state[0] <= _REBUILD_MAX:
                    # Compacted around the records left (same answers, fewer emptier blocks).
                    index = rebuild_blocks(index, sizes, block_size)
                    work = work_arrays(index)
                    built = int(state[0])
                with chooser.batch() as (threads, share):
                    _mdav_pruned_batch(
                        index.records, index.blocks, index.supers, work, anchor, sizes, osq,
                        ocount, ncount, total, labels, state, k, convex,
                        int(_PRUNED_BATCH_WORK * share), threads > 1,
                    )  # fmt: skip
                    if state[0] == 0:
                        chooser.partial()
                left = int(state[0]) / n
                progress(1.0 - left * left, _PROGRESS_STATUS)
            # freed before the z-scores are written again, not held beside them (the peak)
            del index, work, anchor
        return labels
    # Private column-major copies: the kernel reorders them as records are removed. (copy=True:
    # for Fortran-ordered input, ascontiguousarray(x.T) would be a view of the caller's data.)
    cont = np.array(continuous.T, dtype=np.float64, order="C", copy=True)
    ords = np.array(ordinal.T, dtype=np.int64, order="C", copy=True)
    noms = np.array(nominal.T, dtype=np.int64, order="C", copy=True)
    idx = np.arange(n, dtype=np.int64)
    dist = np.empty(n, dtype=np.float64)
    state = np.array([n, 0], dtype=np.int64)
    pbufs = piece_buffers(n, k - 1, _PIECE)
    with dropped(continuous):  # as above: the kernel reads its own copy only
        while state[0] > 0:
            with chooser.batch() as (threads, share):
                _mdav_batch(
                    cont, ords, noms, sizes, osq, ocount, ncount, idx, total, labels, dist, state,
                    k, convex, int(_BATCH_WORK * share), _PARALLEL_FROM if threads > 1 else n + 1,
                    _PIECE, pbufs,
                )  # fmt: skip
                if state[0] == 0:
                    chooser.partial()
            left = int(state[0]) / n
            # Remaining work is proportional to the square of the records left.
            progress(1.0 - left * left, _PROGRESS_STATUS)
        del cont, ords, noms, idx, dist, pbufs  # as above
    return labels


def mdav(
    values: npt.ArrayLike,
    k: int,
    *,
    progress: ProgressFn = no_progress,
    search: str = "auto",
) -> np.ndarray:
    """MDAV partition of continuous records (``003`` Algorithm 5.1 with §5.2).

    Parameters
    ----------
    values
        (n, d) array, already standardized (the distance is Euclidean on these values).
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.
    search
        How the queries are answered: ``"brute"`` (a pass over the remaining records),
        ``"pruned"`` (:mod:`microgui.core.methods.spatial`) or ``"auto"`` (by measured cost,
        :func:`choose_search`). All three give the same partition, bit for bit.

    Returns
    -------
    numpy.ndarray
        int64 group label per record (row order), groups numbered 0..g-1 in the order formed;
        every group has k..2k-1 records. Ties: among equal distances the smallest original
        row is the farthest and comes first among the nearest; ``s`` is the farthest record
        outside r's group (module docstring, "Tie rule").
    """
    x = as_2d(values, np.asarray(values).shape[0], np.float64)
    n = x.shape[0]
    empty = np.empty((n, 0), dtype=np.int64)
    return _partition(x, empty, np.empty(0, dtype=np.int64), empty, k, False, progress, search)


def mdav_generic(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    k: int,
    *,
    ordinal_average: str = "median",
    progress: ProgressFn = no_progress,
    search: str = "auto",
) -> np.ndarray:
    """MDAV-generic partition of mixed records (``003`` Algorithm 5.1, §5.2-5.4).

    Parameters
    ----------
    continuous
        (n, dc) z-scores, or None.
    ordinal
        (n, do) int category ranks 0..size-1, or None; ``ordinal_sizes`` gives each |D(V)|.
    nominal
        (n, dn) int category codes >= 0, or None.
    k
        Minimum group size, 2 <= k <= n.
    ordinal_average
        ``"median"`` or ``"convex-median"`` (``003`` Definitions 5.2, 5.3) for the average record.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.
    search
        ``"auto"``, ``"pruned"`` or ``"brute"``, as for :func:`mdav`.

    Returns
    -------
    numpy.ndarray
        int64 group label per record, as :func:`mdav`; with only continuous columns the very
        partition :func:`mdav` gives. Distance and tie rule: see the module docstring.
    """
    n = next(
        (np.asarray(a).shape[0] for a in (continuous, ordinal, nominal) if a is not None), None
    )
    if n is None:
        raise ValueError("mdav_generic needs at least one block of attributes")
    if ordinal_average not in ("median", "convex-median"):
        raise InvalidParameter(
            f"ordinal_average={ordinal_average!r} must be median or convex-median"
        )
    cont, ords, sizes, noms = qi_arrays(continuous, ordinal, ordinal_sizes, nominal, n)
    return _partition(
        cont, ords, sizes, noms, k, ordinal_average == "convex-median", progress, search
    )


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernel; returns the seconds it took.

    The first compilation on a machine takes 10-15 s; numba caches the result on disk (next to
    this module, or in the user's cache directory), after which loading takes under a second.
    """
    import time

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    for search in ("brute", "pruned"):
        # Both kernels, and the pruned one for continuous-only and for mixed records.
        mdav_generic(
            rng.normal(size=(12, 2)),
            rng.integers(0, 3, (12, 1)),
            [3],
            rng.integers(0, 2, (12, 1)),
            2,
            search=search,
        )
        mdav(rng.normal(size=(12, 2)), 2, search=search)
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# plain numpy reference
# --------------------------------------------------------------------------------------------


def mdav_generic_reference(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    k: int,
    *,
    ordinal_average: str = "median",
) -> np.ndarray:
    """Textbook MDAV-generic in plain numpy (``003`` Algorithm 5.1), for tests and benchmarks.

    Straightforward vectorized numpy, one group at a time (removed records are masked, the
    arrays compacted now and then); same partition, labels and tie rule as :func:`mdav_generic`. The continuous average is a running sum (started at
    ``x.sum(axis=0)``, each group subtracted record by record in ascending row order) so that it
    is bit-identical to the kernel's; a freshly computed mean differs in the last bits and could
    break exact ties between distinct records differently. Ordinal medians and nominal modes are
    recomputed from the remaining records with :mod:`microgui.core.table.aggregate`.
    """
    n = next(
        (np.asarray(a).shape[0] for a in (continuous, ordinal, nominal) if a is not None), None
    )
    if n is None:
        raise ValueError("mdav_generic_reference needs at least one block of attributes")
    k = check_k(k, n)
    x = as_2d(continuous, n, np.float64)
    o = as_2d(ordinal, n, np.int64)
    v = as_2d(nominal, n, np.int64)
    sizes = [
        int(s)
        for s in np.asarray(
            ordinal_sizes if ordinal_sizes is not None else [], dtype=np.int64
        ).reshape(-1)
    ]
    average = convex_median if ordinal_average == "convex-median" else ordinal_median
    ncat = [int(v[:, j].max()) + 1 for j in range(v.shape[1])]
    labels = np.full(n, -1, dtype=np.int64)
    next_label = 0
    total = column_sums(x)
    # Column-major copies and their original rows (ascending). Removed records are only masked
    # out of `alive`; the arrays are compacted when half of them is dead (amortized O(n)).
    rows = np.arange(n)
    xt, ot, vt = (np.ascontiguousarray(a.T) for a in (x, o, v))
    alive = np.ones(n, dtype=bool)
    m = n

    def distances(pc: np.ndarray, po: np.ndarray, pn: np.ndarray) -> np.ndarray:
        # Squared distances to a point, summed attribute by attribute in column order (as the
        # kernel does); entries of removed records are computed but never used.
        d = np.zeros(len(rows))
        t = np.empty(len(rows))
        for j in range(len(xt)):
            np.subtract(xt[j], pc[j], out=t)
            np.multiply(t, t, out=t)
            d += t
        for j in range(len(ot)):
            t = np.abs(ot[j] - po[j]) / sizes[j]
            t *= t
            d += t
        for j in range(len(vt)):
            d += (vt[j] != pn[j]).astype(np.float64)
        return d

    def record(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return xt[:, p].copy(), ot[:, p].copy(), vt[:, p].copy()

    def average_record() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        po = np.array([average(ot[j][alive], sizes[j]) for j in range(len(ot))], dtype=np.int64)
        pn = np.array([mode(vt[j][alive], ncat[j]) for j in range(len(vt))], dtype=np.int64)
        return total / m, po, pn

    def farthest(d: np.ndarray, among: np.ndarray) -> int:
        # np.argmax returns the first maximum: with ascending rows, the smallest row among ties.
        return int(np.argmax(np.where(among, d, -np.inf)))

    def around(d: np.ndarray, centre: int) -> np.ndarray:
        # centre and the k-1 smallest (distance, row) pairs among the other remaining records:
        # every record up to the (k-1)-th smallest distance, then a stable sort of those.
        others = np.flatnonzero(alive)
        others = others[others != centre]
        near = others[d[others] <= np.partition(d[others], k - 2)[k - 2]]
        return np.concatenate([[centre], near[np.argsort(d[near], kind="stable")[: k - 1]]])

    def take(positions: np.ndarray) -> None:
        nonlocal total, next_label, m, rows, xt, ot, vt, alive
        for i in np.sort(rows[positions]):
            total = total - x[i]
        labels[rows[positions]] = next_label
        next_label += 1
        alive[positions] = False
        m -= len(positions)
        if 2 * m <= len(rows):
            rows, xt, ot, vt = rows[alive], xt[:, alive], ot[:, alive], vt[:, alive]
            alive = np.ones(m, dtype=bool)

    while m >= 3 * k:
        r = farthest(distances(*average_record()), alive)
        d_r = distances(*record(r))
        group_r = around(d_r, r)
        s = farthest(d_r, alive)
        if s in group_r:  # only with ties: the farthest record outside r's group
            outside = alive.copy()
            outside[group_r] = False
            s = farthest(d_r, outside)
        s_point, s_row = record(s), rows[s]
        take(group_r)
        s = int(np.searchsorted(rows, s_row))  # its position after a possible compaction
        take(around(distances(*s_point), s))
    if m >= 2 * k:
        r = farthest(distances(*average_record()), alive)
        take(around(distances(*record(r)), r))
    take(np.flatnonzero(alive))
    return labels


def mdav_reference(x: npt.ArrayLike, k: int) -> np.ndarray:
    """Textbook MDAV (``003`` Algorithm 5.1, §5.2) in plain numpy: the baseline of the
    benchmark and the oracle of the tests. Same partition and tie rule as :func:`mdav`."""
    return mdav_generic_reference(np.asarray(x, dtype=np.float64), None, None, None, k)


# --------------------------------------------------------------------------------------------
# registered methods
# --------------------------------------------------------------------------------------------


def _run_mdav(inp: MethodInput) -> MethodOutput:
    labels = mdav(
        inp.qi.continuous,
        inp.k,
        progress=inp.progress,
        search=str(inp.params.get("search", "auto")),
    )
    return MethodOutput(labels=labels)


def _run_mdav_generic(inp: MethodInput) -> MethodOutput:
    qi = inp.qi
    labels = mdav_generic(
        qi.continuous,
        qi.ordinal,
        qi.ordinal_sizes,
        qi.nominal,
        inp.k,
        ordinal_average=str(inp.params.get("ordinal_average", "median")),
        progress=inp.progress,
        search=str(inp.params.get("search", "auto")),
    )
    return MethodOutput(labels=labels)


#: ``--param search``: how MDAV's queries are answered (issue 17). Every value gives the same
#: partition; only the time differs.
SEARCH_PARAM = ParamSpec(
    "search",
    str,
    "auto",
    "How the farthest and nearest records are found: brute = a pass over all remaining records "
    "each time; pruned = a spatial index that skips the records that cannot be the answer; "
    "auto = whichever measured faster for the table's size and width. The partition is the same "
    "bit for bit.",
    choices=SEARCHES,
)

MDAV = register(
    Method(
        name="mdav",
        title="MDAV",
        summary="Maximum Distance to Average Vector: fixed-size groups of k to 2k-1 similar records "
        "(003 Algorithm 5.1, §5.2)",
        description=(
            "Repeatedly takes the record farthest from the average of the records left, groups it "
            "with its k-1 nearest records, then does the same around the record farthest from it, "
            "until fewer than 3k records remain (Domingo-Ferrer & Torra 2005, Algorithm 5.1). "
            "Continuous quasi-identifiers only, standardized, Euclidean distance; each group is "
            "replaced by its mean, which keeps the means of the original data exactly."
        ),
        citation="003_309fe4adb430bc25.txt, Algorithm 5.1 and §5.2; 002_f464918b99c38812.txt §4.5",
        complexity="O(n²/k · d) brute force: three passes over the remaining records per pair "
        "of groups; the pruned search (search=auto from 30,000 records, 10,000 with at most 4 "
        "attributes, never above 12; 50,000 with categorical ones) grows more slowly, measured "
        "by the benchmark's --search",
        bench_sizes=(10_000, 50_000, 100_000),
        warm_up=warm_up,
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        params=(SEARCH_PARAM,),
        run=_run_mdav,
    )
)

MDAV_GENERIC = register(
    Method(
        name="mdav-generic",
        title="MDAV-generic",
        summary="MDAV for continuous, ordinal and nominal quasi-identifiers (003 Algorithm 5.1, §5.2-5.4)",
        description=(
            "The MDAV partition with a distance and an average record for every kind of attribute "
            "(Domingo-Ferrer & Torra 2005, §5.2-5.4): squared z-score differences for continuous "
            "attributes, the rank distance over the number of categories for ordinal ones, 0/1 "
            "equality for nominal ones, summed; groups are replaced by the mean, the median (or "
            "convex median) and the mode. With only continuous attributes it is MDAV."
        ),
        citation="003_309fe4adb430bc25.txt, Algorithm 5.1 and §5.2-5.4",
        complexity="O(n²/k · d) like mdav, plus O(categories) per centroid update",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
        kinds=frozenset({AttributeKind.CONTINUOUS, AttributeKind.ORDINAL, AttributeKind.NOMINAL}),
        params=(SEARCH_PARAM,),
        run=_run_mdav_generic,
    )
)
