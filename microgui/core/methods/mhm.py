"""MHM: multivariate Hansen-Mukherjee microaggregation over a path through the records.

Ramya, Selvaraj & Anandh, ``001_3dadf1a6914d9138.txt`` §II (after Domingo-Ferrer, Martínez-
Ballesté, Mateo-Sanz & Sebé, "Efficient multivariate data-oriented microaggregation", VLDB J.
15(4), 2006); summarized in ``002_f464918b99c38812.txt`` §4.7 (MDOM). Three steps (``001`` §II):

1. find a path through all n records (a permutation pi);
2. feed the records in that order to the multivariate Hansen-Mukherjee algorithm: nodes 0..n,
   an arc (i, j) for every i + k <= j < i + 2k standing for the group of records
   pi(i+1)..pi(j), its length the group's within-group sum of squares
   sum_h ||x_h - mean||^2; the shortest path from 0 to n is the best partition into
   *consecutive* groups of k..2k-1 records along the path
   (:func:`microgui.core.methods.univariate.hansen_mukherjee`, O(nkd));
3. replace each group by its mean (the shared aggregation step).

So MHM is optimal *for the given order*; the quality depends on the path. Paths
(``--param path=...``):

``npn`` - nearest point next (``001`` §II-A): the record farthest from the centroid of all
    records first, then repeatedly the nearest record not yet on the path.
``mdav``, ``md``, ``cbfs`` - the records in the order in which that fixed-size heuristic forms
    its groups (``001`` Table 3: MDAV-MHM, MD-MHM, CBFS-MHM). The papers do not say how the
    records *within* a group are ordered. microgui takes the group's "first record" to be its
    record farthest from the centroid of the records not yet on the path - exactly how MDAV and
    CBFS choose the record r they build a group around, so for those groups it is r - and
    then the other members by increasing distance to it (the order in which MDAV and CBFS add
    them). For MDAV's second group of a round (built around s, the record farthest from r) and
    for MD's groups the first record so chosen need not be the heuristic's own centre.

**Never worse than the heuristic.** Along an mdav/md/cbfs path the heuristic's own groups are
consecutive and have k..2k-1 records (MDAV's last group and CBFS's groups with a left-over
record too), so its partition is one path of the graph and MHM's SSE is at most the
heuristic's, whatever the order inside the groups (checked on Census, Tarragona and EIA at
k = 3, 4, 5, 10). The gain is small on those sets (Census k = 4: IL 7.4947 % -> 7.4928 %; often
none): MHM can only move records between groups that are neighbours on the path, and a
fixed-size heuristic's consecutive groups lie far apart (MDAV builds the group of s, the record
farthest from r, right after the group of r). ``001`` §III says these variants "dramatically
reduce" the loss; its figures are not in the text and the original's path details were not
available, so this reading could not be checked against them.

**Arc lengths** are computed by Welford updates of each candidate group grown backwards, not by
prefix sums of x and ||x||^2 (same O(nkd) cost, no cancellation; see
:mod:`microgui.core.methods.univariate`). Ties between equally short paths: the smallest last
group (as there).

**NPN quickly.** A k-d tree over the records (buckets of 64 records, median splits on the
widest side), each node counting the records of its subtree not yet on the path: a record
joining the path decrements the counts up to the root, and a node's box is refitted to what is
left in it whenever its count has halved since the last fit (a bucket from its records, an
inner node as the union of its children's boxes), amortized O(n log n). The nearest-record
search goes depth first, nearer child first, skipping empty subtrees and subtrees whose box is
farther than the best candidate (a child is pushed with a cheap lower bound - its parent's box
distance or its gap along the split dimension - and its own box distance is computed when it
is popped); a bucket's distances are computed column by column, vectorized. Distances and box
distances are both sums of squared coordinate differences taken in column order, so (rounding
being monotone) a box never looks farther than a record inside it and no tie is lost. **Tie
rule:** the nearest (or farthest) record is the one with the smallest (largest) squared
distance and, among equal distances, the smallest row number; :func:`npn_path_reference`
(plain numpy, O(n^2 d)) gives the same path. Cost: in d = 10 a query still examines a few
thousand records (the path has eaten the records near the current one, so the nearest one left
is comparatively far); measured on the benchmark's correlated data, d = 10, 2 shared cores:
50,000 records 1.5-2.5 s, 100,000 records 4-6 s (up to about 15 s when the other core is
saturated). A cached k-nearest-neighbour list would not help: with 16 neighbours 25 % of the
queries find all of them already on the path.

Progress: the path takes 0-85 % (for mdav/md/cbfs, the heuristic 0-75 % and the ordering up to
85 %), the shortest path the rest; every stage returns to Python after a bounded amount of work,
so a :class:`~microgui.core.progress.RunCancelled` raised by the progress function stops the
run within a fraction of a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.artifacts import RECORD_PATH
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import (
    as_matrix,
    box_distance,
    build_kdtree,
    check_k,
    shrink_box,
    squared_distances_to,
)
from microgui.core.methods.univariate import hansen_mukherjee
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "PATHS",
    "npn_path",
    "npn_path_reference",
    "group_path",
    "heuristic_labels",
    "mhm_partition",
    "mhm",
    "path_length",
    "warm_up",
    "MHM",
]

#: The path heuristics of ``001`` §II and Table 3.
PATHS = ("npn", "mdav", "md", "cbfs")

#: Records per k-d tree bucket. Buckets are scanned whole with vectorized distance loops, so
#: large ones pay: measured at 100,000 x 10, 64 beats 16 and 32 by 25-35 %.
_LEAF_SIZE = 64

#: Path steps (nearest-neighbour queries) per kernel call before returning to Python.
_NPN_BATCH = 2_000

_PATH_STATUS = "building the path"
_HM_STATUS = "shortest path"


# --------------------------------------------------------------------------------------------
# nearest-neighbour path on the k-d tree with deletions (kernels.build_kdtree)
# --------------------------------------------------------------------------------------------


@_njit
def _npn_batch(
    xs: np.ndarray,
    xt: np.ndarray,
    rows: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    parent: np.ndarray,
    bmin: np.ndarray,
    bmax: np.ndarray,
    leaf_of: np.ndarray,
    split_dim: np.ndarray,
    count: np.ndarray,
    boxed: np.ndarray,
    alive: np.ndarray,
    path: np.ndarray,
    state: np.ndarray,
    buf: np.ndarray,
    steps: int,
) -> None:
    # state = [records on the path, tree position of the last one]. xs holds the records in tree
    # order (xt the same, column-major), rows their row numbers; buf >= the largest bucket. Each step: take the last record off the tree, then find the
    # alive record nearest to it, smallest (squared distance, row).
    n, d = xs.shape
    stack_node = np.empty(lo.shape[0] + 1, dtype=np.int64)
    stack_bd = np.empty(lo.shape[0] + 1, dtype=np.float64)
    q = np.empty(d, dtype=np.float64)
    placed = state[0]
    cur = state[1]
    done = 0
    while placed < n and done < steps:
        done += 1
        # cur joins the path: remove it from the tree.
        path[placed] = rows[cur]
        placed += 1
        alive[cur] = False
        node = leaf_of[cur]
        while node >= 0:
            count[node] -= 1
            if 0 < count[node] <= boxed[node] // 2:
                shrink_box(xs, lo, hi, left, right, bmin, bmax, count, alive, node)
                boxed[node] = count[node]
            node = parent[node]
        if placed == n:
            break
        for t in range(d):
            q[t] = xs[cur, t]
        best_d = np.inf
        best_p = -1
        best_r = n
        # Depth first, nearer child first. A child is pushed with a cheap lower bound of its box
        # distance (its parent's, or its gap to q along the parent's split dimension, one term
        # of its own box distance); the full box distance is computed when it is popped.
        top = 1
        stack_node[0] = 0
        stack_bd[0] = 0.0
        while top > 0:
            top -= 1
            node = stack_node[top]
            if count[node] == 0 or stack_bd[top] > best_d:
                continue
            bd = box_distance(q, bmin, bmax, node)
            if bd > best_d:
                continue
            if left[node] < 0:
                # distances to the whole bucket, column by column (vectorizes across records;
                # the sum is still taken in column order for each record)
                a0 = lo[node]
                m = hi[node] - a0
                for i in range(m):
                    buf[i] = 0.0
                for t in range(d):
                    col = xt[t, a0 : a0 + m]
                    qt = q[t]
                    for i in range(m):
                        u = col[i] - qt
                        buf[i] += u * u
                for p in range(a0, a0 + m):
                    if not alive[p]:
                        continue
                    s = buf[p - a0]
                    if s < best_d or (s == best_d and rows[p] < best_r):
                        best_d = s
                        best_p = p
                        best_r = rows[p]
                continue
            a = left[node]
            b = right[node]
            sd = split_dim[node]
            qs = q[sd]
            ga = qs - bmax[a, sd]
            gb = bmin[b, sd] - qs
            ta = ga * ga if ga > 0.0 else 0.0
            tb = gb * gb if gb > 0.0 else 0.0
            la = bd if bd > ta else ta
            lb = bd if bd > tb else tb
            if ga <= gb:  # a is the nearer child: push b first
                stack_node[top] = b
                stack_bd[top] = lb
                stack_node[top + 1] = a
                stack_bd[top + 1] = la
            else:
                stack_node[top] = a
                stack_bd[top] = la
                stack_node[top + 1] = b
                stack_bd[top + 1] = lb
            top += 2
        cur = best_p
    state[0] = placed
    state[1] = cur


def _farthest_from_centroid(x: np.ndarray) -> int:
    # Squared distances summed in column order (as the kernel and the reference do); the
    # largest, ties to the smallest row.
    dist = squared_distances_to(x, x.mean(axis=0))
    return int(np.flatnonzero(dist == dist.max())[0])


def npn_path(values: npt.ArrayLike, *, progress: ProgressFn = no_progress) -> np.ndarray:
    """Nearest point next (``001`` §II-A): the order in which NPN visits the records.

    Parameters
    ----------
    values
        (n, d) records (z-scores; Euclidean distance).
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 permutation of 0..n-1: the record farthest from the centroid first, then each time
        the nearest record not yet visited (ties: smallest row; module docstring).
    """
    x = as_matrix(values, plain_zeros=True)
    n = x.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    start = _farthest_from_centroid(x)
    perm, lo, hi, left, right, parent, bmin, bmax, leaf_of, split_dim = build_kdtree(x, _LEAF_SIZE)
    xs = np.ascontiguousarray(x[perm])
    xt = np.ascontiguousarray(xs.T)
    buf = np.empty(int((hi - lo)[left < 0].max()), dtype=np.float64)
    count = (hi - lo).astype(np.int64)
    boxed = count.copy()  # the count when each box was last fitted
    alive = np.ones(n, dtype=np.bool_)
    path = np.empty(n, dtype=np.int64)
    pos_of = np.empty(n, dtype=np.int64)
    pos_of[perm] = np.arange(n)
    state = np.array([0, pos_of[start]], dtype=np.int64)
    progress(0.0, _PATH_STATUS)
    while state[0] < n:
        _npn_batch(
            xs, xt, perm, lo, hi, left, right, parent, bmin, bmax, leaf_of, split_dim, count,
            boxed, alive, path, state, buf, _NPN_BATCH,
        )  # fmt: skip
        progress(int(state[0]) / n, _PATH_STATUS)
    return path


def npn_path_reference(values: npt.ArrayLike) -> np.ndarray:
    """NPN in plain numpy, O(n^2 d): the same path as :func:`npn_path` (for tests)."""
    x = as_matrix(values, plain_zeros=True)
    n, d = x.shape
    if n == 0:
        return np.empty(0, dtype=np.int64)
    rows = np.arange(n)
    alive = np.ones(n, dtype=bool)
    cur = _farthest_from_centroid(x)
    path = [cur]
    alive[cur] = False
    for _ in range(n - 1):
        cand = rows[alive]
        dist = np.zeros(len(cand))
        for t in range(d):  # column order, as the kernel sums
            u = x[cand, t] - x[cur, t]
            dist += u * u
        cur = int(cand[np.flatnonzero(dist == dist.min())[0]])
        path.append(cur)
        alive[cur] = False
    return np.asarray(path, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# paths from fixed-size heuristics
# --------------------------------------------------------------------------------------------


@_njit
def _group_path(x: np.ndarray, by_group: np.ndarray, starts: np.ndarray) -> np.ndarray:
    # by_group: rows sorted by (group, row); starts: group boundaries in it. Groups in label
    # order; first record = farthest from the centroid of the records not yet on the path
    # (ties: smallest row), then the others by (distance to it, row).
    n, d = x.shape
    total = np.zeros(d, dtype=np.float64)
    for i in range(n):
        for t in range(d):
            total[t] += x[i, t]
    left = n
    out = np.empty(n, dtype=np.int64)
    c = np.empty(d, dtype=np.float64)
    pos = 0
    for g in range(starts.shape[0] - 1):
        members = by_group[starts[g] : starts[g + 1]]
        m = members.shape[0]
        for t in range(d):
            c[t] = total[t] / left
        best = -1.0
        first = members[0]
        for a in range(m):
            r = members[a]
            s = 0.0
            for t in range(d):
                u = x[r, t] - c[t]
                s += u * u
            if s > best:  # members are in row order: the first of equals is the smallest row
                best = s
                first = r
        dist = np.empty(m, dtype=np.float64)
        for a in range(m):
            r = members[a]
            s = 0.0
            for t in range(d):
                u = x[r, t] - x[first, t]
                s += u * u
            dist[a] = s if r != first else -1.0
        order = np.argsort(dist, kind="mergesort")  # stable: equal distances in row order
        for a in range(m):
            out[pos] = members[order[a]]
            pos += 1
        for a in range(m):
            r = members[a]
            for t in range(d):
                total[t] -= x[r, t]
        left -= m
    return out


def group_path(values: npt.ArrayLike, labels: npt.ArrayLike) -> np.ndarray:
    """A path that visits a heuristic's groups one after the other, in label order.

    Parameters
    ----------
    values
        (n, d) records.
    labels
        int group labels 0..g-1, numbered in the order the heuristic formed the groups.

    Returns
    -------
    numpy.ndarray
        int64 permutation of 0..n-1. Each group's records are consecutive: first its record
        farthest from the centroid of the records not yet on the path, then the others by
        increasing distance to that one (ties: smallest row); see the module docstring.
    """
    x = as_matrix(values, plain_zeros=True)
    lab = np.asarray(labels, dtype=np.int64)
    if lab.shape != (x.shape[0],):
        raise ValueError("labels must have one entry per record")
    if len(lab) == 0:
        return np.empty(0, dtype=np.int64)
    by_group = np.argsort(lab, kind="stable")
    starts = np.searchsorted(lab[by_group], np.arange(int(lab.max()) + 2))
    out: np.ndarray = _group_path(x, by_group, starts.astype(np.int64))
    return out


def heuristic_labels(
    values: npt.ArrayLike, k: int, heuristic: str, *, progress: ProgressFn = no_progress
) -> np.ndarray:
    """The partition of a fixed-size heuristic (``mdav``, ``md`` or ``cbfs``), groups numbered
    in the order formed."""
    if heuristic == "mdav":
        from microgui.core.methods.mdav import mdav

        return np.asarray(mdav(values, k, progress=progress), dtype=np.int64)
    if heuristic == "md":
        from microgui.core.methods import md

        fn = getattr(md, "md_partition", None)
    elif heuristic == "cbfs":
        from microgui.core.methods import cbfs

        fn = getattr(cbfs, "cbfs_partition", None)
    else:
        raise InvalidParameter(f"path={heuristic!r} must be one of {', '.join(PATHS)}")
    if fn is None:
        raise InvalidParameter(
            f"path={heuristic} is not available in this build (the {heuristic} method is "
            "missing); use path=npn or path=mdav"
        )
    return np.asarray(fn(values, k, progress=progress), dtype=np.int64)


# --------------------------------------------------------------------------------------------
# MHM
# --------------------------------------------------------------------------------------------


def mhm_partition(
    values: npt.ArrayLike, order: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, float]:
    """MHM on a given path (``001`` §II, steps 2-3 of the partition).

    Parameters
    ----------
    values
        (n, d) records.
    order
        The path: a permutation of 0..n-1.
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    (labels, sse)
        int64 group label per record (row order), groups numbered along the path, each of
        k..2k-1 records consecutive on it; and the partition's SSE (the shortest path length).
    """
    x = as_matrix(values, plain_zeros=True)
    perm = np.asarray(order, dtype=np.int64)
    n = x.shape[0]
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError("order must be a permutation of the records")
    on_path, total = hansen_mukherjee(x[perm], k, progress=progress)
    labels = np.empty(n, dtype=np.int64)
    labels[perm] = on_path
    return labels, total


def path_length(values: npt.ArrayLike, order: npt.ArrayLike) -> float:
    """Euclidean length of the path (sum of the distances between consecutive records)."""
    x = as_matrix(values, plain_zeros=True)[np.asarray(order, dtype=np.int64)]
    return float(np.sqrt(((x[1:] - x[:-1]) ** 2).sum(axis=1)).sum()) if len(x) > 1 else 0.0


def mhm(
    values: npt.ArrayLike, k: int, *, path: str = "npn", progress: ProgressFn = no_progress
) -> tuple[np.ndarray, np.ndarray]:
    """NPN-MHM, MDAV-MHM, MD-MHM or CBFS-MHM (``001`` §II, Table 3).

    Parameters
    ----------
    values
        (n, d) records, standardized (Euclidean distance and SSE on these values).
    k
        Minimum group size, 2 <= k <= n.
    path
        ``"npn"``, ``"mdav"``, ``"md"`` or ``"cbfs"`` (module docstring).
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    (labels, order)
        int64 group label per record (groups numbered along the path, k..2k-1 records each) and
        the path (a permutation of the rows).
    """
    labels, order, _ = _mhm(as_matrix(values, plain_zeros=True), k, path, progress)
    return labels, order


def _mhm(
    x: np.ndarray, k: int, path: str, progress: ProgressFn
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    # labels, path, and the heuristic's own labels (None for npn)
    n = x.shape[0]
    if path not in PATHS:
        raise InvalidParameter(f"path={path!r} must be one of {', '.join(PATHS)}")
    check_k(k, n)
    base: np.ndarray | None = None
    if path == "npn":
        order = npn_path(x, progress=sub_progress(progress, 0.0, 0.85))
    else:
        base = heuristic_labels(x, k, path, progress=sub_progress(progress, 0.0, 0.75))
        progress(0.75, "ordering the groups")
        order = group_path(x, base)
    labels, _ = mhm_partition(x, order, k, progress=sub_progress(progress, 0.85, 1.0))
    return labels, order, base


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    from microgui.core.methods.univariate import warm_up as hm_warm_up

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    npn_path(x)
    group_path(x, np.arange(40) // 4)
    hm_warm_up()
    return time.perf_counter() - started


def _sse(x: np.ndarray, labels: np.ndarray) -> float:
    g = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=g).astype(np.float64)
    total = 0.0
    for t in range(x.shape[1]):
        means = np.bincount(labels, weights=x[:, t], minlength=g) / counts
        u = x[:, t] - means[labels]
        total += float(u @ u)
    return total


def _run(inp: MethodInput) -> MethodOutput:
    x = inp.qi.continuous
    path = str(inp.params["path"])
    labels, order, base = _mhm(x, inp.k, path, inp.progress)
    extra: dict[str, Any] = {"path": path, "path_length": path_length(x, order)}
    if base is not None:
        # The heuristic's own partition, for comparison: MHM's SSE is never larger.
        extra["path_heuristic_sse"] = _sse(x, base)
        extra["path_heuristic_n_groups"] = int(base.max()) + 1
    return MethodOutput(labels=labels, extra=extra, artifacts=RECORD_PATH.entry(order))


MHM = register(
    Method(
        name="mhm",
        title="MHM (multivariate Hansen-Mukherjee)",
        summary="Optimal consecutive groups of k..2k-1 records along a path through the data "
        "(NPN, MDAV, MD or CBFS order; 001 §II)",
        description=(
            "Data-oriented multivariate microaggregation (001 §II; Domingo-Ferrer et al. 2006). "
            "The records are first put in a sequence: nearest point next (start at the record "
            "farthest from the centroid, then always the nearest unvisited record) or the order "
            "in which MDAV, MD or CBFS form their groups. Hansen and Mukherjee's shortest-path "
            "algorithm then finds the best split of that sequence into consecutive groups of k to "
            "2k-1 records, i.e. the least sum of squares any such split can reach. With an "
            "MDAV, MD or CBFS path the result is never worse than that heuristic's own groups. "
            "Continuous quasi-identifiers only; groups are replaced by their means."
        ),
        citation="001_3dadf1a6914d9138.txt §II, §II-A, Table 3; 002_f464918b99c38812.txt §4.7",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run,
        params=(
            ParamSpec(
                "path",
                str,
                "npn",
                "The path through the records: npn (nearest point next), or the group order of "
                "mdav, md or cbfs (001 Table 3).",
                choices=PATHS,
            ),
        ),
        complexity="path: NPN O(n log n) k-d tree queries in low dimension (up to O(n^2 d)); "
        "mdav/md/cbfs paths cost that heuristic (O(n^2/k) for MDAV); then O(nkd) shortest path",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
        artifacts=(RECORD_PATH,),
    )
)
