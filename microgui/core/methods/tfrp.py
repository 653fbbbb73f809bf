"""TFRP: microaggregation around two fixed reference points, with the optional phase II refinement.

Chang, Li & Huang, "TFRP: An efficient microaggregation algorithm for statistical disclosure
control", Journal of Systems and Software 80(11), 2007, as described in
``002_f464918b99c38812.txt`` §4.10 (Algorithms 1 and 2). The original's full text was not
available here; where the survey leaves a choice open, the choice made is stated below.

**Phase I (TFRP-1, ``002`` Algorithm 1)**, on the z-scored continuous quasi-identifiers::

    R1, R2 = the two reference points (see below); SET = all records; R = R1
    while |SET| >= k:
        x = the record of SET farthest from R               (step 3: "the initial point")
        G = x and its k-1 nearest records in SET             (steps 4-5)
        SET = SET minus G; R = the other reference point      (step 6)
    each record left in SET (fewer than k) joins its closest group      (step 7)

*Reference points.* The survey calls R1 and R2 "two extreme points calculated from the micro
data set" and says they are fixed. microgui takes the two opposite corners of the data's
bounding box: R1 = the minimum of every (standardized) attribute, R2 = the maximum of every
attribute. Being fixed, they are computed once, and each record's distance to them too, so
choosing a seed costs nothing; a round is one pass over the remaining records (the k-1
nearest), which is what makes TFRP cheaper than MDAV. The first group is seeded from R1, the
next from R2, and so on alternately. "Farthest from a reference point" follows the survey's
wording (§4.10: "In each iteration, TFRP selects the *initial point* x_r, the furthest vector
from a reference point, and then computes the distance of each vector to x_r"): the first seed
is the record farthest from the minimum corner, an extreme record on the "large values" side,
the second one the extreme record on the "small values" side.

*Farthest, not nearest* (issue 16). Seeding with the record *nearest* the reference point (also
an extreme record, on the other side) was checked as an alternative reading. The original's text
could not be found here (searches of the stored web pages, documentation and code found neither
it nor a restatement of TFRP-1's seed rule), and the survey, the only text at hand, says
"furthest" (its Algorithm 1 step 3, "Select an initial point x_i from the reference point",
does not contradict it), so microgui keeps the farthest record. The IL (%, k = 3 / 4 / 5 / 10,
with phase II) does not favour either: farthest 5.81 / 7.67 / 8.98 / 13.98 (Census), 16.72 /
19.60 / 23.11 / 33.36 (Tarragona), 0.416 / 0.608 / 1.011 / 2.664 (EIA), below MDAV in 7 of the
12 cells; nearest 6.18 / 8.10 / 9.54 / 14.36, 17.31 / 19.16 / 21.71 / 34.04, 0.411 / 0.564 /
0.962 / 2.496, below MDAV in 6, lower than farthest in 6 cells (Tarragona k = 4, 5 and all of
EIA) and higher in the 6 others (all of Census by 0.37-0.56). ``test_tfrp.py`` pins the reading
on a hand-traced line where the two differ.

*Closest group* (step 7): the group whose centroid (mean of its k records, before any of the
records left joins) is nearest. At most k-1 records are left, so phase I groups have k..2k-1
records.

**Phase II (TFRP-2, ``002`` Algorithm 2)**, ``--param phase2=true`` (the default)::

    GSE(G) = within-group squared error of G; order the groups by decreasing GSE (once)
    for each group G in that order:
        every record of G is provisionally given to its closest other group (nearest centroid,
        all centroids as they are before this provisional move)
        if SSE after the move < SSE before it: dissolve G (its records join those groups)
        else: keep G

The SSE change is computed exactly from group sizes and sums: with A_H the records of G going
to group H (n_A of them, mean a_H), the move changes SSE by
sum_H n_H n_A / (n_H + n_A) |mean_H - a_H|^2 - sum_H n_A |a_H - mean_G|^2 (the other terms of
the two SSEs cancel). A group is dissolved only when this is below -1e-12 times the second sum,
so that rounding never dissolves a group whose move changes nothing. Groups that received
records are examined in their turn with their current records, and centroids follow the moves.

*Group sizes.* Phase II never makes a group smaller than k (groups only grow or vanish), but a
group that receives records can exceed 2k-1: the survey's Algorithm 2 does not bound it (TFRP-2
aims at fewer, better groups) and microgui keeps that (on EIA, k = 5: groups of up to 14 records).
A group of 2k or more could be split into two of at least k without raising SSE (Domingo-Ferrer &
Mateo-Sanz 2002: optimal groups have k..2k-1 records), but that is not part of TFRP and is not
done here. With ``phase2=false`` every group has k..2k-1 records.

**Ties.** As in :mod:`microgui.core.methods.mdav`: the farthest record is the one with the largest
distance and then the smallest row; the k-1 nearest are the smallest (distance, row) pairs; the
closest group among equally close ones is the one numbered first. Phase I numbers the groups in
the order formed; after phase II the surviving groups keep that order, renumbered 0..g-1.

**Implementation.** Phase I is a numba kernel on a compacted column-major copy of the records
(one distance pass per group, bounded work per call for progress and cancellation). Phase II is
a numba kernel that keeps each group's size and sum (records added in ascending row order) and
its centroid column-major, and finds a record's closest group with one vectorized pass over the
centroids. :func:`tfrp_reference` does both phases in plain numpy with the same arithmetic (sums
of squared coordinate differences in column order), so both give the same partition. Measured
(``python -m microgui.bench``, whole run, 2 cores shared with other jobs), 50,000 x 10, k = 5:
1.9 s with phase II (10,000: 0.15 s), phase I alone about 1.2 s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import first_call_compiles, njit
from microgui.core.methods.kernels import (
    as_matrix,
    assign_leftovers,
    assign_leftovers_reference,
    check_k,
    distances_pass,
    load_point,
    nearest_and_farthest,
    seed_order,
    squared_distances_to,
    take_group,
)
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "tfrp_partition",
    "tfrp_reference",
    "reference_points",
    "phase_two",
    "warm_up",
    "TFRP",
]

#: Coordinate operations per kernel call (about 20-40 ms) before returning to Python.
_BATCH_WORK = 60_000_000

#: A group is dissolved only if the move lowers SSE by more than this fraction of its second sum.
_REL_TOL = 1e-12


def reference_points(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R1 = the minimum of every attribute, R2 = the maximum (the bounding box's corners)."""
    r1: np.ndarray = x.min(axis=0)
    r2: np.ndarray = x.max(axis=0)
    return r1, r2


# --------------------------------------------------------------------------------------------
# phase I
# --------------------------------------------------------------------------------------------


@njit
def _phase_one_batch(
    cont: np.ndarray,
    idx: np.ndarray,
    where: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    order1: np.ndarray,
    order2: np.ndarray,
    state: np.ndarray,
    k: int,
    budget: int,
) -> None:
    """state = [m, next label, pointer into order1, pointer into order2]."""
    m = state[0]
    label = state[1]
    p1 = state[2]
    p2 = state[3]
    d = cont.shape[0]
    kk = k - 1
    p = np.empty(d)
    hd = np.empty(max(kk, 1))
    hx = np.empty(max(kk, 1), dtype=np.int64)
    hp = np.empty(max(kk, 1), dtype=np.int64)
    group = np.empty(k, dtype=np.int64)
    no_sum = np.empty(0)
    no_codes = np.empty((0, 0), dtype=np.int64)
    work = 0
    while m >= k and work < budget:
        # Groups 0, 2, 4, ... are seeded from R1, groups 1, 3, 5, ... from R2.
        if label % 2 == 0:
            while labels[order1[p1]] >= 0:
                p1 += 1
            r = where[order1[p1]]
        else:
            while labels[order2[p2]] >= 0:
                p2 += 1
            r = where[order2[p2]]
        load_point(cont, r, p)
        distances_pass(cont, m, p, dist)
        nearest_and_farthest(dist, idx, m, r, kk, hd, hx, hp)
        group[0] = r
        for a in range(kk):
            group[1 + a] = hp[a]
        take_group(
            group, k, label, m, -1, cont, no_codes, no_codes, idx, no_sum, no_codes, no_codes,
            labels, dist, where,
        )  # fmt: skip
        label += 1
        m -= k
        work += m * (d + 1)
    state[0] = m
    state[1] = label
    state[2] = p1
    state[3] = p2


def _phase_one(x: np.ndarray, k: int, progress: ProgressFn) -> np.ndarray:
    n = x.shape[0]
    r1, r2 = reference_points(x)
    order1 = seed_order(squared_distances_to(x, r1))
    order2 = seed_order(squared_distances_to(x, r2))
    cont = np.array(x.T, dtype=np.float64, order="C", copy=True)
    idx = np.arange(n, dtype=np.int64)
    where = np.arange(n, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    dist = np.empty(n)
    state = np.array([n, 0, 0, 0], dtype=np.int64)
    if first_call_compiles(_phase_one_batch):
        progress(0.0, "compiling the TFRP kernel (first run only)")
    progress(0.0, "phase I: forming groups")
    while state[0] >= k:
        _phase_one_batch(cont, idx, where, labels, dist, order1, order2, state, k, _BATCH_WORK)
        left = int(state[0]) / n
        progress(1.0 - left * left, "phase I: forming groups")
    assign_leftovers(x, labels, 2 * k - 1)
    return labels


# --------------------------------------------------------------------------------------------
# phase II
# --------------------------------------------------------------------------------------------


@njit
def _sq(a: np.ndarray, b: np.ndarray) -> float:
    s = 0.0
    for j in range(a.shape[0]):
        t = a[j] - b[j]
        s += t * t
    return s


@njit
def _phase_two_setup(
    x: np.ndarray, labels: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sizes, sums (ascending row order) and GSE of the groups."""
    d = x.shape[1]
    counts = np.zeros(n_groups, dtype=np.int64)
    sums = np.zeros((n_groups, d))
    for i in range(x.shape[0]):
        g = labels[i]
        counts[g] += 1
        for j in range(d):
            sums[g, j] += x[i, j]
    gse = np.zeros(n_groups)
    mean = np.empty(d)
    for i in range(x.shape[0]):
        g = labels[i]
        for j in range(d):
            mean[j] = sums[g, j] / counts[g]
        gse[g] += _sq(x[i], mean)
    return counts, sums, gse


@njit
def _phase_two_batch(
    x: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    sums: np.ndarray,
    cent: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    order: np.ndarray,
    state: np.ndarray,
    rel_tol: float,
    budget: int,
) -> None:
    """Examine groups order[state[0]:] until about ``budget`` work; state = [next, dissolved].

    ``cent`` is (d, g) column-major (+inf for dissolved groups); ``head``/``nxt`` are each
    group's records as a singly linked list.
    """
    d = x.shape[1]
    g_total = counts.shape[0]
    buf = np.empty(g_total)
    mean_g = np.empty(d)
    work = 0
    pos = state[0]
    while pos < order.shape[0] and work < budget:
        g = order[pos]
        pos += 1
        size = counts[g]
        if size == 0:
            continue
        rows = np.empty(size, dtype=np.int64)
        r = head[g]
        a = 0
        while r >= 0:
            rows[a] = r
            a += 1
            r = nxt[r]
        rows.sort()
        target = np.empty(size, dtype=np.int64)
        for a in range(size):
            distances_pass(cent, g_total, x[rows[a]], buf)
            best = -1
            best_d = np.inf
            for h in range(g_total):
                if h != g and buf[h] < best_d:
                    best_d = buf[h]
                    best = h
            target[a] = best
        work += size * g_total * (d + 1)
        if target[0] < 0:
            continue  # no other group left
        # SSE change of the provisional move, target groups in ascending label order.
        for j in range(d):
            mean_g[j] = sums[g, j] / size
        hs = np.unique(target)
        between = 0.0
        within = 0.0
        sum_a = np.empty(d)
        mean_a = np.empty(d)
        mean_h = np.empty(d)
        for h in hs:
            n_a = 0
            for j in range(d):
                sum_a[j] = 0.0
            for a in range(size):
                if target[a] == h:
                    n_a += 1
                    for j in range(d):
                        sum_a[j] += x[rows[a], j]
            for j in range(d):
                mean_a[j] = sum_a[j] / n_a
                mean_h[j] = sums[h, j] / counts[h]
            n_h = counts[h]
            between += (n_h * n_a) / (n_h + n_a) * _sq(mean_h, mean_a)
            within += n_a * _sq(mean_a, mean_g)
        if between < within - rel_tol * within:
            for a in range(size):
                row = rows[a]
                h = target[a]
                labels[row] = h
                counts[h] += 1
                for j in range(d):
                    sums[h, j] += x[row, j]
                nxt[row] = head[h]
                head[h] = row
            for h in hs:
                for j in range(d):
                    cent[j, h] = sums[h, j] / counts[h]
            counts[g] = 0
            head[g] = -1
            for j in range(d):
                cent[j, g] = np.inf
            state[1] += 1
    state[0] = pos


def phase_two(
    x: npt.ArrayLike, labels: npt.ArrayLike, *, progress: ProgressFn = no_progress
) -> np.ndarray:
    """TFRP phase II (``002`` §4.10, Algorithm 2) on a partition; returns the new labels.

    ``labels`` are group numbers 0..g-1 (every group non-empty). Groups are examined once, in
    decreasing order of their initial GSE (equal GSE: smaller label first); the survivors are
    renumbered 0..g'-1 in their original order.
    """
    data = as_matrix(x)
    lab = np.array(labels, dtype=np.int64, copy=True)
    n_groups = int(lab.max()) + 1
    counts, sums, gse = _phase_two_setup(data, lab, n_groups)
    order = np.lexsort((np.arange(n_groups), -gse)).astype(np.int64)
    cent = np.ascontiguousarray((sums / counts[:, None]).T)
    head = np.full(n_groups, -1, dtype=np.int64)
    nxt = np.full(len(lab), -1, dtype=np.int64)
    for row in range(len(lab) - 1, -1, -1):
        g = lab[row]
        nxt[row] = head[g]
        head[g] = row
    state = np.array([0, 0], dtype=np.int64)
    status = "phase II: dissolving groups"
    progress(0.0, status)
    while state[0] < n_groups:
        _phase_two_batch(
            data, lab, counts, sums, cent, head, nxt, order, state, _REL_TOL, _BATCH_WORK
        )
        progress(float(state[0]) / n_groups, status)
    return _renumber(lab)


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Labels 0..g'-1 keeping the order of the surviving groups."""
    _, new = np.unique(labels, return_inverse=True)
    out: np.ndarray = new.astype(np.int64).reshape(-1)
    return out


def tfrp_partition(
    x: npt.ArrayLike,
    k: int,
    *,
    phase2: bool = True,
    progress: ProgressFn = no_progress,
) -> np.ndarray:
    """TFRP partition of continuous records (Chang, Li & Huang 2007; ``002`` §4.10).

    Parameters
    ----------
    x
        (n, d) array, already standardized (Euclidean distance on these values).
    k
        Minimum group size, 2 <= k <= n.
    phase2
        Run phase II (TFRP-2) after phase I (TFRP-1).
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 group label per record (row order), 0..g-1 in the order the groups were formed;
        every group has at least k records, and at most 2k-1 without phase II.
    """
    data = as_matrix(x)
    k = check_k(k, data.shape[0])
    labels = _phase_one(data, k, sub_progress(progress, 0.0, 0.6 if phase2 else 1.0))
    if phase2:
        labels = phase_two(data, labels, progress=sub_progress(progress, 0.6, 1.0))
    progress(1.0, "done")
    return labels


# --------------------------------------------------------------------------------------------
# plain numpy reference
# --------------------------------------------------------------------------------------------


def _sq_ref(a: np.ndarray, b: np.ndarray) -> float:
    s = 0.0
    for j in range(len(a)):
        t = float(a[j]) - float(b[j])
        s += t * t
    return s


def _phase_two_reference(data: np.ndarray, labels: np.ndarray) -> np.ndarray:
    n_groups = int(labels.max()) + 1
    d = data.shape[1]
    counts = np.zeros(n_groups, dtype=np.int64)
    sums = np.zeros((n_groups, d))
    for i in range(len(data)):
        counts[labels[i]] += 1
        sums[labels[i]] += data[i]
    gse = np.zeros(n_groups)
    for i in range(len(data)):
        gse[labels[i]] += _sq_ref(data[i], sums[labels[i]] / counts[labels[i]])
    alive = np.ones(n_groups, dtype=bool)
    for g in np.lexsort((np.arange(n_groups), -gse)):
        rows = np.flatnonzero(labels == g)
        cent = sums / np.maximum(counts, 1)[:, None]
        others = alive.copy()
        others[g] = False
        if not others.any():
            continue
        target = np.empty(len(rows), dtype=np.int64)
        for a, row in enumerate(rows):
            dist = squared_distances_to(cent, data[row])
            target[a] = int(np.argmin(np.where(others, dist, np.inf)))
        mean_g = sums[g] / len(rows)
        between = 0.0
        within = 0.0
        for h in np.unique(target):
            members = rows[target == h]
            sum_a = np.zeros(d)
            for row in members:
                sum_a += data[row]
            mean_a = sum_a / len(members)
            n_h = int(counts[h])
            n_a = len(members)
            between += (n_h * n_a) / (n_h + n_a) * _sq_ref(sums[h] / counts[h], mean_a)
            within += n_a * _sq_ref(mean_a, mean_g)
        if between < within - _REL_TOL * within:
            for a, row in enumerate(rows):
                h = target[a]
                labels[row] = h
                counts[h] += 1
                sums[h] += data[row]
            counts[g] = 0
            alive[g] = False
    return _renumber(labels)


def tfrp_reference(x: npt.ArrayLike, k: int, *, phase2: bool = True) -> np.ndarray:
    """TFRP in plain numpy, one group at a time: the oracle of the tests (same partition)."""
    data = as_matrix(x)
    n = data.shape[0]
    k = check_k(k, n)
    r1, r2 = reference_points(data)
    orders = (
        seed_order(squared_distances_to(data, r1)),
        seed_order(squared_distances_to(data, r2)),
    )
    labels = np.full(n, -1, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    label = 0
    m = n
    while m >= k:
        order = orders[label % 2]
        r = int(order[alive[order]][0])
        d_r = squared_distances_to(data, data[r])
        others = np.flatnonzero(alive)
        others = others[others != r]
        near = others[np.argsort(d_r[others], kind="stable")[: k - 1]]
        group = np.concatenate([[r], near])
        labels[group] = label
        alive[group] = False
        label += 1
        m -= k
    assign_leftovers_reference(data, labels, 2 * k - 1)
    if phase2:
        labels = _phase_two_reference(data, labels)
    return labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    tfrp_partition(np.random.default_rng(0).normal(size=(13, 2)), 3)
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run_tfrp(inp: MethodInput) -> MethodOutput:
    phase2 = bool(inp.params.get("phase2", True))
    x = inp.qi.continuous
    k = inp.k
    extra: dict[str, Any] = {"tfrp_phase2": phase2}
    if phase2:
        data = as_matrix(x)
        check_k(k, data.shape[0])
        first = _phase_one(data, k, sub_progress(inp.progress, 0.0, 0.6))
        labels = phase_two(data, first, progress=sub_progress(inp.progress, 0.6, 1.0))
        extra["tfrp_phase1_groups"] = int(first.max()) + 1
        extra["tfrp_groups_dissolved"] = int(first.max()) - int(labels.max())
    else:
        labels = tfrp_partition(x, k, phase2=False, progress=inp.progress)
    return MethodOutput(labels=labels, extra=extra)


TFRP = register(
    Method(
        name="tfrp",
        title="TFRP",
        summary="Two fixed reference points: fixed-size groups seeded alternately from two "
        "corners of the data, then optional merging by SSE (002 §4.10)",
        description=(
            "Phase I groups the record farthest from a fixed reference point with its k-1 "
            "nearest records, alternating between the two opposite corners of the data's "
            "bounding box (attribute minima and maxima); the fewer than k records left join "
            "their closest group. Phase II (phase2=true) then dissolves, in decreasing order of "
            "within-group error, each group whose records would lower the total SSE by joining "
            "their closest other groups (Chang, Li & Huang 2007, as described in 002 §4.10). "
            "Groups of at least k records (k to 2k-1 without phase II); continuous "
            "quasi-identifiers, standardized, Euclidean distance."
        ),
        citation="002_f464918b99c38812.txt §4.10, Algorithms 1 and 2 (Chang, Li & Huang 2007)",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_tfrp,
        params=(
            ParamSpec(
                "phase2",
                bool,
                True,
                "Run phase II (TFRP-2): dissolve groups whose records, moved to their closest "
                "other groups, lower the total SSE; groups may then exceed 2k-1 records.",
            ),
        ),
        complexity="O(n²d/k): phase I one pass over the ungrouped records per group of k; "
        "phase II one pass over the g ~ n/k centroids per record",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
    )
)
