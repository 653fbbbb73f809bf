"""A proven lower bound on a run's SSE/SST (issue 16): no k-anonymous microaggregation of these
continuous quasi-identifiers can lose less.

The report's ``information_loss`` is 100·SSE/SST on the z-scored continuous quasi-identifiers,
with SSE = Σ_i ||x_i − x'_i||² between each original record x_i and its released version x'_i
(:mod:`microgui.core.metrics.information_loss`). This module bounds that SSE from below, for the
release of the run, and reports the bound in the same units (percent of SST).

**Per attribute** (``il_lower_bound``). SSE splits by attribute, SSE = Σ_j SSE_j. Let the *level
sets* of attribute j be the sets of records released with the same value c of attribute j. When
every level set S has at least k records,

    SSE_j = Σ_S Σ_{i∈S} (x_ij − c_S)²  ≥  Σ_S Σ_{i∈S} (x_ij − mean_S)²  ≥  OPT_j(k),

the first step because the mean minimises a sum of squares (whatever the released value c_S),
the second because the level sets are a partition of the values of attribute j into groups of
at least k, and OPT_j(k) is the least within-group SSE of any such partition: the optimal
univariate k-partition, computed exactly by Hansen & Mukherjee's shortest path ("A polynomial
algorithm for optimal univariate microaggregation", IEEE TKDE 15(4), 2003; ``002`` §4.3-4.4),
microgui's :func:`~microgui.core.methods.univariate.hansen_mukherjee`, reused here. That path
only tries contiguous groups of k..2k−1 sorted values, and this is no loss for groups of *any*
size ≥ k: in one dimension an optimal partition has contiguous groups (``002`` §4.4), and a group
of 2k or more values splits into two groups of at least k without raising the SSE (the SSE of a
union is the sum of the parts' SSEs plus a non-negative between-part term; Domingo-Ferrer &
Mateo-Sanz, IEEE TKDE 14(1), 2002), so the least SSE over "sizes ≥ k" equals the least over
"sizes k..2k−1". Hence IL ≥ 100·Σ_j OPT_j(k)/SST.

**Which runs it covers.** The argument needs only that, in every continuous column of the
release, each released value is shared by at least k records - checked on the release itself,
so it holds whatever method made it:

- every microaggregation whose groups have ≥ k records, of any size (above 2k−1 too), whose
  continuous output is constant within a group: the mean, the median (``median``), the mean after
  ``003`` §5.2's variance-preserving rescaling (an affine map of each column, so still constant
  within a group: its SSE is larger than the means', never below the bound) and after rounding
  or cleaning of the released numbers (a function of the value: groups with equal released
  values merge into larger level sets, which the argument allows); strata and blocks too;
- individual ranking: each attribute microaggregated on its own into groups of ≥ k is exactly
  the per-attribute case (its records are not one partition, which the per-attribute bound does
  not need); ``dp-individual-ranking`` too, whose Laplace noise is one draw per group and
  attribute, so each group still shares one released value;
- **null** (with the reason in ``il_lower_bound_basis``) when a released value of a continuous
  column is shared by fewer than k records - synthetic values within a group (``hybrid``), noise
  drawn per record - since SSE can then fall below the bound; when the continuous
  quasi-identifiers were generalized to text (``information_loss`` is null: ``mstk``); and when
  there is no continuous quasi-identifier.

**A tighter bound** (``il_lower_bound_best``), for releases that are one k-partition of the
records (every released *row* of continuous values shared by ≥ k records: all microaggregation,
not individual ranking). Two facts, both exact:

1. *Any orthonormal basis.* For an orthonormal basis u_1..u_d, SSE = Σ_j Σ_i (u_j·(x_i − x'_i))²,
   and u_j·x' is constant on a level set of rows, so the per-attribute argument applies to the
   projections X·u_j: SSE ≥ Σ_j OPT(X·u_j, k). The basis used is the principal axes of the
   z-scores; more generally the space splits into the span of the first p principal axes and its
   complement, and SSE is the sum of the SSEs of the two projections.
2. *Nearest neighbours* (the bound that prunes :mod:`~microgui.core.methods.optimal`'s branch and
   bound, proved in full here). A group G of s ≥ k records has SSE(G) = (1/2s) Σ_{y∈G} Σ_{z∈G}
   ||y − z||², and record y's share (1/2s) Σ_{z∈G} ||y − z||² is at least (1/2s)·D_{s−1}(y), where
   D_m(y) is the sum of the m smallest squared distances from y to the *other records* of the
   table. As D_m/m grows with m and (s−1)/s with s, (1/2s)·D_{s−1}(y) ≥ (1/2k)·D_{k−1}(y), so
   SSE ≥ (1/2k)·Σ_y D_{k−1}(y) for every k-partition, and, with the mean argument above, for every
   release constant on row level sets of ≥ k records.

Put together: SSE ≥ max(NN_p, Σ_{j≤p} OPT_j) + Σ_{j>p} OPT_j, with NN_p the nearest-neighbour
bound of the projections on the first p principal axes and OPT_j that of the j-th axis; and
``il_lower_bound_best`` is the larger of this and ``il_lower_bound`` (it is never below it). The
nearest neighbours come from scipy's ``cKDTree``, whose cost grows fast with the dimension, so p
is chosen from the table's shape alone (deterministic: the same data and k always give the same
report): every axis when n²·d ≤ 2.5·10⁸ (up to about 4,700 records at d = 11: Census, Tarragona,
EIA), else the most axes with n·k·2^p ≤ 2²² (100,000 records: p = 3 at k = 3 or 5, 2 at k = 10);
``il_lower_bound_basis`` names p.

**Measured** on the CASC reference sets (all columns continuous QIs; EIA its 11 usual ones;
percent of SST; seed 1; "lowest" is the least IL of microgui's multivariate methods at this
stop: gsms on Census, dba, gsms or mdav on Tarragona, mst or dba on EIA), the
nearest-neighbour part makes the bound 1.8-34 times the per-attribute one, and about 0.3-0.6
times MDAV's IL::

    set        k   il_lower_bound  il_lower_bound_best   mdav IL   lowest IL
    Census     3       0.1029            3.4438           5.6922    5.5636
    Census     4       0.2340            4.3231           7.4947    7.2538
    Census     5       0.3313            5.0168           9.0884    8.6856
    Census    10       0.8906            7.3363          14.1559   13.5485
    Tarragona  3       2.2071            9.8551          16.9326   15.9403
    Tarragona  4       3.1932           12.1667          19.5460   19.0495
    Tarragona  5       4.2554           13.9273          22.4619   21.9476
    Tarragona 10      10.6068           19.2181          33.1929   33.1929
    EIA        3       0.0136            0.2204           0.4829    0.3951
    EIA        4       0.0210            0.3344           0.6713    0.5664
    EIA        5       0.0402            0.4720           1.6667    0.7965
    EIA       10       0.1448            1.2737           3.8397    2.1946

Individual ranking, which groups each attribute on its own, comes close to the per-attribute
bound (Census k = 3: 0.107 %), as it must: it is nearly that bound's own construction.

**Numbers.** Both bounds are rounded down by a relative 10⁻⁹, so that floating-point rounding in
either figure never puts a bound above the IL of a run that attains it (``optimal-univariate`` on
one attribute: the two then agree to about 10⁻⁹). SST = 0 (every column constant) gives 0.

**Cost and cache.** O(n log n + n·k) per attribute and per axis (a sort and the shortest path)
plus the nearest-neighbour search; measured on 2 shared cores, k = 3..10: EIA (4,092 × 11)
0.004-0.007 s per attribute bound, 0.008-0.015 s for the principal one; 100,000 × 10 Gaussian
(the worst case for k-d trees) 0.08-0.16 s and 0.3-0.4 s: 0.49 s in an MDAV k = 5 run of 3.6 s.
The bounds depend only on the z-scored original and k, so they are kept per (hash of the
matrix, k): the runs of a sweep at one k compute them once (a repeat costs the hash and the
check of the release, 0.04 s at 100,000 × 10). Nor do they depend on the partition, so a run
starts them in a thread of their own before its method (:func:`prefetch`): they are computed
on the second core while the method's kernels (which release the GIL) partition, and the
report waits for them only if they are not done yet (issue 17: 0.3 s of the 1.5 s
``microgui protect`` of 50,000 records).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from microgui.core.methods.threads import current_threads
from microgui.core.methods.univariate import hansen_mukherjee_sse
from microgui.core.metrics.information_loss import sst
from microgui.core.metrics.risk import unique_rows
from microgui.core.spare import borrowed
from microgui.core.table.dataset import QIMatrix

__all__ = [
    "univariate_optimum_sse",
    "attribute_bound_sse",
    "principal_axes_searched",
    "principal_bound_sse",
    "lower_bound_report",
    "prefetch",
    "clear_cache",
]

#: Relative amount each bound is rounded down by (see the module docstring).
_SAFETY = 1e-9
#: Every principal axis gets the nearest-neighbour search when n²·d is at most this.
_FULL_SEARCH_WORK = 2.5e8
#: Otherwise p axes, the most with n·k·2^p at most this.
_TREE_WORK = 2**22
#: Work allowed for each bound, in n·k·(columns) steps of the exact univariate solver (O(n·k)
#: per column, about 10⁸ steps a second): above it the bound is not computed (null, with the
#: reason) rather than hold up every run - n = 40,000, k = 10,000, d = 3 took 24 s (review).
_SOLVE_WORK = 3e8
#: Bounds kept (each a float keyed by a 16-byte hash).
_CACHE_SIZE = 64

#: each bound as a Future: done, or being computed by the thread that put it there
_cache: OrderedDict[tuple[Any, ...], Future[tuple[float, int]]] = OrderedDict()
_cache_lock = threading.Lock()


def univariate_optimum_sse(values: npt.ArrayLike, k: int) -> float:
    """The least within-group SSE of any partition of ``values`` into groups of at least ``k``
    (Hansen & Mukherjee 2003, through :func:`~microgui.core.methods.univariate.hansen_mukherjee_sse`
    on the sorted values; groups larger than 2k−1 never do better, see the module docstring)."""
    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    return hansen_mukherjee_sse(v, k)


def _column_optima(x: np.ndarray, k: int, threads: int) -> list[float]:
    """OPT_j(k) of every column of x, in column order; the columns on up to ``threads`` threads
    (the shortest-path kernel releases the GIL; each column is solved alone, so the values, and
    their sum in column order, do not depend on the thread count: issue 33)."""
    # each column copied when its turn comes, not all at once (issue 33: the copies of every
    # column were 80 MB more at 1,000,000 x 10, in the run report's peak); np.sort copies anyway
    d = x.shape[1]
    if threads <= 1 or d < 2:
        return [univariate_optimum_sse(x[:, j], k) for j in range(d)]
    with ThreadPoolExecutor(max_workers=min(threads, d)) as pool:
        return list(pool.map(lambda j: univariate_optimum_sse(x[:, j], k), range(d)))


def attribute_bound_sse(values_z: npt.ArrayLike, k: int, threads: int = 1) -> float:
    """Σ_j OPT_j(k): the sum over the columns of their optimal univariate k-partition SSE, a
    lower bound on the SSE of every release that groups each column's values by ≥ k
    (``threads``: columns solved at once)."""
    x = np.asarray(values_z, dtype=np.float64)
    return float(sum(_column_optima(x, k, threads)))


def principal_axes_searched(n: int, d: int, k: int) -> int:
    """How many leading principal axes get the nearest-neighbour bound (module docstring)."""
    if float(n) * n * d <= _FULL_SEARCH_WORK:
        return d
    p = 0
    while p < d and float(n) * k * 2 ** (p + 1) <= _TREE_WORK:
        p += 1
    return p


def _nearest_neighbour_sse(y: np.ndarray, k: int, threads: int = 1) -> float:
    # (1/2k)·Σ_y D_{k−1}(y). The k nearest points of y include y itself at distance 0, so their
    # squared distances add up to D_{k−1}(y) even when y has duplicates (any of them may come
    # first: all are at 0).
    from scipy.spatial import cKDTree  # here: scipy.spatial takes 0.2 s to import

    dist, _ = cKDTree(y).query(y, k=k, workers=max(1, threads))  # same answer on any count
    return float(np.einsum("ij,ij->", dist, dist)) / (2.0 * k)


#: Rows projected at a time by :func:`_projected_in_place`.
_PROJECT_ROWS = 1 << 16


def _projected_in_place(centred: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``centred @ basis`` written over ``centred`` (square ``basis``), a block of rows at a time:
    the product and the centred records are never both whole (issue 33: 80 MB less at the peak
    of the 1,000,000 x 10 command's report). Each row of a product depends on that row alone,
    so blocks of rows give the very bits of the one product (tested) - blocks of two rows or
    more: numpy multiplies a single row as a vector, another rounding."""
    n = centred.shape[0]
    start = 0
    while start < n:
        stop = start + _PROJECT_ROWS
        if n - stop < 2:  # no block of one row at the end: the last takes it
            stop = n
        centred[start:stop] = centred[start:stop] @ basis
        start = stop
    return centred


def principal_bound_sse(values_z: npt.ArrayLike, k: int, threads: int = 1) -> tuple[float, int]:
    """max(NN_p, Σ_{j≤p} OPT_j) + Σ_{j>p} OPT_j on the principal axes of ``values_z``, and p:
    a lower bound on the SSE of every release constant on sets of ≥ k records (module
    docstring)."""
    x = np.asarray(values_z, dtype=np.float64)
    n, d = x.shape
    mean = x.mean(axis=0)
    # x is not read again: a run's z-scores (:mod:`microgui.core.spare`) are centred and
    # projected in their own buffer, then written again (issue 33: 80 MB at 1,000,000 x 10, at
    # the command's peak); x - mean either way, element by element, so the same bits
    with borrowed(x) as mine:
        centred = np.subtract(x, mean, out=x if mine else None)
        _, axes = np.linalg.eigh(centred.T @ centred)
        projected = _projected_in_place(centred, axes[:, ::-1])  # largest variance first
        del centred
        optima = _column_optima(projected, k, threads)
        p = principal_axes_searched(n, d, k)
        lead = sum(optima[:p])
        if p:
            lead = max(
                lead, _nearest_neighbour_sse(np.ascontiguousarray(projected[:, :p]), k, threads)
            )
    return float(lead + sum(optima[p:])), p


def clear_cache() -> None:
    """Forget the kept bounds (tests)."""
    with _cache_lock:
        _cache.clear()


def _cached(kind: str, values_z: np.ndarray, k: int, threads: int = 1) -> tuple[float, int]:
    """The bound of this kind, computed here (on ``threads`` threads) unless kept (or being
    computed by another thread: then its value, once there)."""
    x = np.ascontiguousarray(values_z, dtype=np.float64)
    # the buffer itself, not a copy (x.tobytes() was 76 MB more at 1,000,000 x 10: issue 33)
    key = (kind, hashlib.blake2b(x.data, digest_size=16).digest(), x.shape, int(k))
    with _cache_lock:
        future = _cache.get(key)
        mine = future is None
        if future is None:
            future = _cache[key] = Future()
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
    if not mine:
        return future.result()
    try:
        value = (
            (attribute_bound_sse(x, k, threads), x.shape[1])
            if kind == "attribute"
            else principal_bound_sse(x, k, threads)
        )
    except BaseException as exc:  # not kept: the next caller computes it again
        with _cache_lock:
            if _cache.get(key) is future:
                del _cache[key]
        future.set_exception(exc)
        raise
    future.set_result(value)
    return value


def prefetch(qi: QIMatrix, k: int, one_partition: bool) -> None:
    """Start computing the bounds that :func:`lower_bound_report` will ask for, in a thread of
    their own (daemon: a cancelled run leaves it to finish, its value kept): the per-attribute
    bound, and the principal-axis one when the run makes ``one_partition`` (a method that
    aggregates its groups). Nothing when the report would compute none."""
    original = qi.continuous
    n, d = original.shape
    k = int(k)
    if not qi.continuous_names or not 2 <= k <= n or n * k * d > _SOLVE_WORK:
        return
    # The run's threads (its thread's using_threads) less the one its kernel holds meanwhile:
    # on 2 cores the bound's second worker (a column's solve, cKDTree's query) took the
    # kernel's core, 0.10-0.18 s of the 100,000 x 10 command's kernel (issue 33); the value is
    # the same on any count.
    threads = max(1, current_threads() - 1)
    kinds = ["attribute"]
    if one_partition and 2 * n * k * d <= _SOLVE_WORK:
        kinds.append("principal")

    def compute() -> None:
        for kind in kinds:
            try:
                _cached(kind, original, k, threads)
            # kept in the Future for the report to raise; a BaseException too (a run waiting
            # for the kernel preparation's child stops its compile so: microgui.qt.kernel_prep)
            except BaseException:  # noqa: BLE001
                return

    threading.Thread(target=compute, name="microgui-il-bound", daemon=True).start()


def _column_shared_by_fewer(z: np.ndarray, k: int) -> int:
    """The first column with a value shared by fewer than k records (-1: none)."""
    for j in range(z.shape[1]):
        _, counts = np.unique(z[:, j], return_counts=True)
        if int(counts.min()) < k:
            return j
    return -1


def _rows_shared_by_k(z: np.ndarray, labels: np.ndarray | None, k: int) -> bool:
    """Whether every released row is shared by ≥ k records. Fast when ``labels`` describe the
    release (groups of ≥ k, constant within); otherwise the rows themselves are counted."""
    n = z.shape[0]
    if labels is not None and labels.shape == (n,) and n:
        lab = np.asarray(labels, dtype=np.int64)
        sizes = np.bincount(lab)
        if int(sizes[sizes > 0].min()) >= k:
            order = np.argsort(lab, kind="stable")
            ls = lab[order]
            starts = np.flatnonzero(np.r_[True, ls[1:] != ls[:-1]])
            first = order[np.repeat(starts, np.diff(np.r_[starts, n]))]
            # column by column: no (n, d) temporaries (issue 33: 230 MB at 1,000,000 x 10)
            if all(bool((z[order, j] == z[first, j]).all()) for j in range(z.shape[1])):
                return True
    counts = unique_rows(z)[3]
    return int(counts.min()) >= k


def _percent(value: float, total: float) -> float:
    return 100.0 * value * (1.0 - _SAFETY) / total if total > 0 else 0.0


def lower_bound_report(
    qi: QIMatrix, protected_z: np.ndarray | None, labels: np.ndarray | None, k: int
) -> dict[str, Any]:
    """The report's ``il_lower_bound`` (per attribute), ``il_lower_bound_best`` (the largest
    bound proved for this release) and ``il_lower_bound_basis`` (how, or why null), in percent
    like ``information_loss``.

    Parameters
    ----------
    qi
        The run's quasi-identifiers (``qi.continuous``: the z-scored original).
    protected_z
        The release's continuous quasi-identifiers on the same z-scale; None when they were
        generalized to text (no SSE, no bound).
    labels
        The run's group labels: a fast check that the release is one k-partition (optional).
    k
        The run's k.
    """
    names = qi.continuous_names
    if not names:
        return _null("none (no continuous quasi-identifier)")
    if protected_z is None or not bool(np.isfinite(protected_z).all()):
        return _null("none (continuous quasi-identifiers generalized to text)")
    z = np.asarray(protected_z, dtype=np.float64)
    original = qi.continuous
    n, d = original.shape
    k = int(k)
    if not 2 <= k <= n:
        return _null(f"none (k = {k} out of range for {n} records)")
    one_partition = _rows_shared_by_k(z, labels, k)
    if not one_partition:
        j = _column_shared_by_fewer(z, k)
        if j >= 0:
            return _null(
                f"none (a released value of {names[j]!r} is shared by fewer than k records: "
                "the release is not a grouping by k, so its SSE may lie below any bound)"
            )
    if n * k * d > _SOLVE_WORK:
        return _null(
            f"none (not computed: the exact univariate optimum costs n·k steps per attribute, "
            f"{n:,} × {k:,} × {d} here, too long beside the run; it is computed up to "
            f"n·k·d = {_SOLVE_WORK:.0e})"
        )
    total = sst(original)
    attribute = _cached("attribute", original, k, current_threads())[0]
    basis = "per attribute: the optimal univariate k-partition of each (Hansen & Mukherjee 2003)"
    best = attribute
    if one_partition and 2 * n * k * d <= _SOLVE_WORK:
        principal, p = _cached("principal", original, k, current_threads())
        best = max(attribute, principal)
        basis += (
            f"; best: also the principal axes, nearest neighbours on the first {p} of {d} "
            "(microgui.core.methods.bound)"
        )
    elif one_partition:
        basis += "; best: the same (the principal-axis bound was not computed: n·k·d too large)"
    else:
        basis += "; best: the same (each attribute grouped on its own, not one k-partition)"
    return {
        "il_lower_bound": _percent(attribute, total),
        "il_lower_bound_best": _percent(best, total),
        "il_lower_bound_basis": basis,
    }


def _null(why: str) -> dict[str, Any]:
    return {"il_lower_bound": None, "il_lower_bound_best": None, "il_lower_bound_basis": why}
