"""CBFS: centroid-based fixed-size microaggregation, and the fixed-size primitives of md, vmdav, tfrp.

Laszlo & Mukherjee, "Minimum spanning tree partitioning algorithm for microaggregation", IEEE
TKDE 17(7), 2005, where CBFS divides the oversized trees of MST partitioning (``002`` §4.6 step 4);
named, with its complexity O(n²/2k) for CBFS-MHM, in ``001_3dadf1a6914d9138.txt`` Table 3 and §III.
Neither survey spells it out and the original's full text was not available here; the algorithm
below is the one the secondary sources agree on (the MATLAB port ``cbfs.m`` of N. C. Damasceno,
GitHub ``nielsencastelo/Mdav-Matlab``, which cites the paper; the MDAV family of ``003`` Algorithm
5.1 for distances and ties)::

    R = all records
    while |R| >= k:
        c = the centroid of R                   (centroid="remaining", the default)
          | the centroid of all records          (centroid="fixed", computed once)
        r = the record of R farthest from c
        G = r and its k-1 nearest records in R  (one group per round, numbered in that order)
        R = R minus G
    each record left (fewer than k) joins the group whose centroid is nearest

**Which centroid.** The port above recomputes the centroid of the records still unassigned in
every round; so does MDAV (``003`` Algorithm 5.1 step 1a), of which CBFS is the one-group-per-
round variant. V-MDAV instead fixes the centroid of the whole data set at the start (``002``
§4.8, last sentence), and with gain factor 0 it makes exactly CBFS's groups with that fixed
centroid (see :mod:`microgui.core.methods.vmdav`). Both readings are offered: ``--param
centroid=remaining`` (default) or ``centroid=fixed``.

**Last records.** Fewer than k records are left at the end (0..k-1); each joins the group whose
centroid (the mean of its k records, before any of the left records joins) is nearest. Every
group then has k..2k-1 records (at most k-1 records are left in all).

**Ties** (as in :mod:`microgui.core.methods.mdav`): records are compared by (distance, row); the
farthest record is the one with the largest distance and, among equal distances, the smallest
row; the k-1 nearest are the k-1 smallest (distance, row) pairs; a left record's nearest
centroid is, among equal distances, the one of the group formed first.

**Implementation.** A numba kernel keeps the unassigned records compacted at the front of a
column-major copy (swap-remove), with their original rows and, for the centroid of the
remaining records, a running sum started at the column sums and decreased by each group's
records in ascending row order. A round is two passes over the remaining records (distances to
the centroid, then distances to r with a bounded max-heap for r's k-1 nearest); with the fixed
centroid the order of the seeds is sorted once and a round is one pass. Squared distances are
summed coordinate by coordinate in column order; :func:`cbfs_reference` (plain numpy, one group
at a time) does exactly the same arithmetic, so both give the same partition, ties included.
The kernel returns to Python after a bounded amount of work for progress and cancellation.
Measured (``python -m microgui.bench``, whole run, 2 cores shared with other jobs), 50,000 x 10,
k = 5: 1.7 s (10,000: 0.14 s); with the fixed centroid about 1.0 s.

This module also holds the numba primitives shared by :mod:`~microgui.core.methods.md`,
:mod:`~microgui.core.methods.vmdav` and :mod:`~microgui.core.methods.tfrp` (distance passes,
nearest-record selection, swap-removal of a group, the placement of the last records).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import njit
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.roles import AttributeKind

__all__ = [
    "cbfs_partition",
    "cbfs_reference",
    "warm_up",
    "CBFS",
    # shared by md, vmdav and tfrp
    "njit",
    "distances_block",
    "distances_pass",
    "load_point",
    "farthest",
    "nearest",
    "take_group",
    "assign_leftovers",
    "assign_leftovers_reference",
    "as_matrix",
    "check_k",
    "column_sums",
    "squared_distances_to",
    "seed_order",
]

#: Work (coordinate operations) per kernel call before returning to Python for progress and
#: cancellation; about 20-40 ms at 50,000 x 10.
_BATCH_WORK = 60_000_000

_PROGRESS_STATUS = "forming groups"

#: Records per block of a distance pass (partial sums stay in L1 cache).
_BLOCK = 1024


# --------------------------------------------------------------------------------------------
# shared numba primitives
# --------------------------------------------------------------------------------------------


@njit
def distances_block(cont: np.ndarray, lo: int, hi: int, p: np.ndarray, dist: np.ndarray) -> None:
    # Slices starting at 0 so that LLVM drops negative-index wraparound and vectorizes the loop.
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
    for lo in range(0, m, _BLOCK):
        distances_block(cont, lo, min(lo + _BLOCK, m), p, dist)


# The selection kernels are MDAV's own (same tie rule: (distance, original row)); md, vmdav and
# tfrp import them from here under these names.
from microgui.core.methods.mdav import _farthest as farthest  # noqa: E402
from microgui.core.methods.mdav import _nearest_and_farthest as nearest  # noqa: E402


@njit
def load_point(cont: np.ndarray, pos: int, p: np.ndarray) -> None:
    for j in range(cont.shape[0]):
        p[j] = cont[j, pos]


@njit
def take_group(
    group: np.ndarray,
    g: int,
    label: int,
    m: int,
    tracked: int,
    cont: np.ndarray,
    idx: np.ndarray,
    where: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    total: np.ndarray,
) -> int:
    """Label the records at positions group[:g], subtract them from the running sum ``total``
    (ascending row order; pass an empty array for none) and swap-remove them from the first m.

    ``where[row]`` follows every record's position. Returns the new position of the record at
    position ``tracked`` (-1 if it was removed or if tracked is -1).
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
    desc = np.sort(pos)[::-1]
    for a in range(g):
        p = desc[a]
        last = m - 1
        if p == tracked:
            tracked = -1
        where[idx[p]] = -1
        if p != last:
            for j in range(cont.shape[0]):
                cont[j, p] = cont[j, last]
            idx[p] = idx[last]
            dist[p] = dist[last]
            where[idx[p]] = p
            if tracked == last:
                tracked = p
        m -= 1
    return tracked


@njit
def _group_centroids(x: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    # Sum of each group's records in ascending row order, over its size.
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
    cent = _group_centroids(x, labels, n_groups)
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
# shared Python helpers
# --------------------------------------------------------------------------------------------


def check_k(k: int, n: int) -> int:
    """k as an int with 2 <= k <= n, or :class:`InvalidParameter`."""
    k = int(k)
    if k < 2 or k > n:
        raise InvalidParameter(f"k={k} must satisfy 2 <= k <= n ({n} records)")
    return k


def as_matrix(values: npt.ArrayLike) -> np.ndarray:
    """(n, d) float64 C-ordered copy of the records (1-D input is one column)."""
    arr = np.array(values, dtype=np.float64, order="C", copy=True)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array of records, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("records must be finite numbers")
    return np.ascontiguousarray(arr)


def column_sums(x: np.ndarray) -> np.ndarray:
    """Column sums of a C-ordered array: where every running sum starts (kernel and reference)."""
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


# --------------------------------------------------------------------------------------------
# CBFS kernel
# --------------------------------------------------------------------------------------------


@njit
def _cbfs_batch(
    cont: np.ndarray,
    idx: np.ndarray,
    where: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    total: np.ndarray,
    order: np.ndarray,
    state: np.ndarray,
    k: int,
    fixed: bool,
    budget: int,
) -> None:
    """Advance by about ``budget`` coordinate operations; state = [m, next label, seed pointer]."""
    m = state[0]
    label = state[1]
    ptr = state[2]
    d = cont.shape[0]
    kk = k - 1
    p = np.empty(d)
    hd = np.empty(max(kk, 1))
    hx = np.empty(max(kk, 1), dtype=np.int64)
    hp = np.empty(max(kk, 1), dtype=np.int64)
    group = np.empty(k, dtype=np.int64)
    no_sum = np.empty(0)
    work = 0
    while m >= k and work < budget:
        if fixed:
            while labels[order[ptr]] >= 0:
                ptr += 1
            r = where[order[ptr]]
            work += m * (d + 1)
        else:
            for j in range(d):
                p[j] = total[j] / m
            distances_pass(cont, m, p, dist)
            r = farthest(dist, idx, m)
            work += 2 * m * (d + 1)
        load_point(cont, r, p)
        distances_pass(cont, m, p, dist)
        nearest(dist, idx, m, r, kk, hd, hx, hp)
        group[0] = r
        for a in range(kk):
            group[1 + a] = hp[a]
        take_group(
            group, k, label, m, -1, cont, idx, where, labels, dist, no_sum if fixed else total
        )
        label += 1
        m -= k
    state[0] = m
    state[1] = label
    state[2] = ptr


def _cbfs_groups(
    x: np.ndarray, k: int, fixed: bool, progress: ProgressFn, status: str = _PROGRESS_STATUS
) -> np.ndarray:
    """Labels of the groups formed while >= k records remain (-1 for the records left)."""
    n = x.shape[0]
    cont = np.array(x.T, dtype=np.float64, order="C", copy=True)
    idx = np.arange(n, dtype=np.int64)
    where = np.arange(n, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    dist = np.empty(n)
    total = column_sums(x)
    order = np.empty(0, dtype=np.int64)
    if fixed:
        order = seed_order(squared_distances_to(x, total / n))
    state = np.array([n, 0, 0], dtype=np.int64)
    if not _cbfs_batch.signatures:
        progress(0.0, "compiling the CBFS kernel (first run only)")
    progress(0.0, status)
    while state[0] >= k:
        _cbfs_batch(cont, idx, where, labels, dist, total, order, state, k, fixed, _BATCH_WORK)
        left = int(state[0]) / n
        progress(1.0 - left * left, status)
    return labels


def cbfs_partition(
    x: npt.ArrayLike,
    k: int,
    *,
    centroid: str = "remaining",
    progress: ProgressFn = no_progress,
) -> np.ndarray:
    """CBFS partition of continuous records (Laszlo & Mukherjee 2005; ``001`` Table 3).

    Parameters
    ----------
    x
        (n, d) array, already standardized (Euclidean distance on these values).
    k
        Minimum group size, 2 <= k <= n.
    centroid
        ``"remaining"``: the centroid of the records not yet grouped, recomputed every round
        (default); ``"fixed"``: the centroid of all records, computed once.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 group label per record (row order), groups numbered 0..g-1 in the order formed;
        every group has k..2k-1 records. Ties: see the module docstring.
    """
    data = as_matrix(x)
    k = check_k(k, data.shape[0])
    if centroid not in ("remaining", "fixed"):
        raise InvalidParameter(f"centroid={centroid!r} must be remaining or fixed")
    labels = _cbfs_groups(data, k, centroid == "fixed", progress)
    assign_leftovers(data, labels, 2 * k - 1)
    progress(1.0, _PROGRESS_STATUS)
    return labels


def cbfs_reference(x: npt.ArrayLike, k: int, *, centroid: str = "remaining") -> np.ndarray:
    """Textbook CBFS in plain numpy, one group at a time: the oracle of the tests.

    Same partition, labels and tie rule as :func:`cbfs_partition`; the centroid of the remaining
    records is the same running sum (column sums, minus each group's records in ascending row
    order) over their number.
    """
    data = as_matrix(x)
    n = data.shape[0]
    k = check_k(k, n)
    labels = np.full(n, -1, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    total = column_sums(data)
    order = seed_order(squared_distances_to(data, total / n))
    label = 0
    m = n
    while m >= k:
        if centroid == "fixed":
            r = int(order[alive[order]][0])
        else:
            d_c = squared_distances_to(data, total / m)
            r = int(np.argmax(np.where(alive, d_c, -np.inf)))  # first maximum: smallest row
        d_r = squared_distances_to(data, data[r])
        others = np.flatnonzero(alive)
        others = others[others != r]
        near = others[np.argsort(d_r[others], kind="stable")[: k - 1]]
        group = np.sort(np.concatenate([[r], near]))
        labels[group] = label
        alive[group] = False
        if centroid != "fixed":
            for i in group:
                total = total - data[i]
        label += 1
        m -= k
    assign_leftovers_reference(data, labels, 2 * k - 1)
    return labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    x = np.random.default_rng(0).normal(size=(13, 2))
    cbfs_partition(x, 3)
    cbfs_partition(x, 3, centroid="fixed")
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run_cbfs(inp: MethodInput) -> MethodOutput:
    centroid = str(inp.params.get("centroid", "remaining"))
    labels = cbfs_partition(inp.qi.continuous, inp.k, centroid=centroid, progress=inp.progress)
    return MethodOutput(labels=labels, extra={"cbfs_centroid": centroid})


CBFS = register(
    Method(
        name="cbfs",
        title="CBFS",
        summary="Centroid-based fixed size: one group of k around the record farthest from the "
        "centroid per round (Laszlo & Mukherjee 2005; 001 Table 3)",
        description=(
            "Repeatedly takes the record farthest from the centroid of the records not yet "
            "grouped (or, with centroid=fixed, of all records) and groups it with its k-1 nearest "
            "records; the fewer than k records left at the end join the group with the nearest "
            "centroid (Laszlo & Mukherjee 2005, 'Minimum spanning tree partitioning algorithm "
            "for microaggregation'; one of the fixed-size heuristics of 001, Table 3). Groups of "
            "k to 2k-1 records; continuous quasi-identifiers, standardized, Euclidean distance."
        ),
        citation="001_3dadf1a6914d9138.txt Table 3 and §III; 002_f464918b99c38812.txt §4.6 "
        "(Laszlo & Mukherjee 2005)",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_cbfs,
        params=(
            ParamSpec(
                "centroid",
                str,
                "remaining",
                "Centroid the seed record is farthest from: of the records still ungrouped, "
                "recomputed every round (remaining), or of all records, computed once (fixed).",
                choices=("remaining", "fixed"),
            ),
        ),
        complexity="O(n²d/k): two passes over the ungrouped records per group of k (one with "
        "centroid=fixed)",
        bench_sizes=(10_000, 50_000),
    )
)
