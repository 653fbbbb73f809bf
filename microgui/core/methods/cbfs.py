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

The distance passes, the selection kernels, the swap-removal of a group and the placement of the
last records are the shared ones of :mod:`~microgui.core.methods.kernels`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import first_call_compiles, njit
from microgui.core.methods.kernels import (
    as_matrix,
    assign_leftovers,
    assign_leftovers_reference,
    check_k,
    column_sums,
    distances_pass,
    farthest,
    load_point,
    nearest_and_farthest,
    seed_order,
    squared_distances_to,
    take_group,
)
from microgui.core.methods.spatial import (
    build_blocks,
    choose_search,
    farthest_from_average,
    make_anchor,
    take_around,
    work_arrays,
)
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "cbfs_partition",
    "cbfs_reference",
    "warm_up",
    "CBFS",
]

#: Work (coordinate operations) per kernel call before returning to Python for progress and
#: cancellation; about 20-40 ms at 50,000 x 10.
_BATCH_WORK = 60_000_000

#: The pruned searches (issue 17): their work budget per kernel call (see MDAV's) and where
#: ``search="auto"`` takes them (measured: the benchmark's --search table).
_PRUNED_BATCH_WORK = 8_000_000

_PROGRESS_STATUS = "forming groups"


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
    no_codes = np.empty((0, 0), dtype=np.int64)
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
        nearest_and_farthest(dist, idx, m, r, kk, hd, hx, hp)
        group[0] = r
        for a in range(kk):
            group[1 + a] = hp[a]
        take_group(
            group, k, label, m, -1, cont, no_codes, no_codes, idx, no_sum if fixed else total,
            no_codes, no_codes, labels, dist, where,
        )  # fmt: skip
        label += 1
        m -= k
    state[0] = m
    state[1] = label
    state[2] = ptr


@njit
def _cbfs_pruned_batch(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    work_arrays: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    labels: np.ndarray,
    total: np.ndarray,
    order: np.ndarray,
    state: np.ndarray,
    k: int,
    fixed: bool,
    budget: int,
) -> None:
    """:func:`_cbfs_batch` with its two queries answered by the pruned searches of
    :mod:`microgui.core.methods.spatial` (issue 17, as MDAV's ``search="pruned"``): the record
    farthest from the centroid by a walk down the anchor list, its k-1 nearest from the blocks;
    the same groups, bit for bit (same arithmetic, tie rule and running sum)."""
    where = records[4]
    m = state[0]
    label = state[1]
    ptr = state[2]
    d = records[0].shape[0]
    kk = max(k - 1, 1)
    pc = np.empty(d)
    none = np.empty(0, dtype=np.int64)
    no_counts = np.empty((0, 1), dtype=np.int64)
    bufs = (
        np.empty(d),
        none,
        none,
        np.empty(kk),
        np.empty(kk, dtype=np.int64),
        np.empty(kk, dtype=np.int64),
        np.empty(k, dtype=np.int64),
        np.empty(k, dtype=np.int64),
    )
    osq = np.zeros((0, 1))
    counted = work_arrays[3][0]
    examined = 0
    work = 0
    while m >= k and work < budget:
        if fixed:
            while labels[order[ptr]] >= 0:
                ptr += 1
            r = where[order[ptr]]
        else:
            for j in range(d):
                pc[j] = total[j] / m
            r, w = farthest_from_average(records, osq, anchor, pc, none, none, m)
            examined += w
        take_around(
            records, blocks, supers, anchor, osq, r, k, label, no_counts, no_counts,
            np.empty(0) if fixed else total, labels, work_arrays, bufs,
        )  # fmt: skip
        label += 1
        m -= k
        work = (examined + work_arrays[3][0] - counted) * (d + 1) + (label - state[1]) * 256 * d
    state[0] = m
    state[1] = label
    state[2] = ptr


def _cbfs_groups(
    x: np.ndarray,
    k: int,
    fixed: bool,
    progress: ProgressFn,
    status: str = _PROGRESS_STATUS,
    search: str = "auto",
) -> np.ndarray:
    """Labels of the groups formed while >= k records remain (-1 for the records left).

    ``search``: as MDAV's (``auto``: :func:`~microgui.core.methods.spatial.choose_search`; the
    groups are the same either way)."""
    n = x.shape[0]
    if search not in ("auto", "pruned", "brute"):
        raise InvalidParameter(f"search={search!r} must be one of auto, pruned, brute")
    if search == "auto":
        search = choose_search(n, x.shape[1], k)
    if search == "pruned" and not np.isfinite(x).all():
        raise InvalidParameter("CBFS needs finite numbers (drop or impute missing values)")
    labels = np.full(n, -1, dtype=np.int64)
    total = column_sums(x)
    order = np.empty(0, dtype=np.int64)
    if fixed:
        order = seed_order(squared_distances_to(x, total / n))
    state = np.array([n, 0, 0], dtype=np.int64)
    if search == "pruned":
        empty = np.empty((n, 0), dtype=np.int64)
        index = build_blocks(x, empty, np.empty(0, dtype=np.int64), empty)
        work, anchor = work_arrays(index), make_anchor(n, x, 0, 0)

        def advance() -> None:
            _cbfs_pruned_batch(
                index.records, index.blocks, index.supers, work, anchor, labels, total, order,
                state, k, fixed, _PRUNED_BATCH_WORK,
            )  # fmt: skip

        kernel = _cbfs_pruned_batch
    else:
        cont = np.array(x.T, dtype=np.float64, order="C", copy=True)
        idx = np.arange(n, dtype=np.int64)
        where = np.arange(n, dtype=np.int64)
        dist = np.empty(n)

        def advance() -> None:
            _cbfs_batch(cont, idx, where, labels, dist, total, order, state, k, fixed, _BATCH_WORK)

        kernel = _cbfs_batch
    if first_call_compiles(kernel):
        progress(0.0, "compiling the CBFS kernel (first run only)")
    progress(0.0, status)
    while state[0] >= k:
        advance()
        left = int(state[0]) / n
        progress(1.0 - left * left, status)
    return labels


def cbfs_partition(
    x: npt.ArrayLike,
    k: int,
    *,
    centroid: str = "remaining",
    progress: ProgressFn = no_progress,
    search: str = "auto",
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
    search
        ``"brute"`` (passes over the ungrouped records), ``"pruned"`` (the spatial searches of
        :mod:`microgui.core.methods.spatial`, issue 17) or ``"auto"``; the same partition.

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
    labels = _cbfs_groups(data, k, centroid == "fixed", progress, search=search)
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
    for search in ("brute", "pruned"):
        cbfs_partition(x, 3, search=search)
        cbfs_partition(x, 3, centroid="fixed", search=search)
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run_cbfs(inp: MethodInput) -> MethodOutput:
    centroid = str(inp.params.get("centroid", "remaining"))
    labels = cbfs_partition(
        inp.qi.continuous,
        inp.k,
        centroid=centroid,
        progress=inp.progress,
        search=str(inp.params.get("search", "auto")),
    )
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
            ParamSpec(
                "search",
                str,
                "auto",
                "How the farthest and nearest records are found: brute = a pass over all "
                "ungrouped records each time; pruned = a spatial index that skips the records "
                "that cannot be the answer; auto = pruned from 30,000 records up to 12 "
                "attributes. The partition is the same bit for bit.",
                choices=("auto", "pruned", "brute"),
            ),
        ),
        complexity="O(n²d/k): two passes over the ungrouped records per group of k (one with "
        "centroid=fixed); search=pruned skips most of them",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
    )
)
