"""Optimal univariate microaggregation: Hansen & Mukherjee's shortest path.

Hansen & Mukherjee, "A polynomial algorithm for optimal univariate microaggregation", IEEE TKDE
15(4), 2003, as summarized in ``002_f464918b99c38812.txt`` §4.3-4.4 and, in its multivariate form
(the graph is the same), in ``001_3dadf1a6914d9138.txt`` §II ("The MHM algorithm").

**Two facts make the problem polynomial** (``002`` §4.4):

1. in an optimal k-partition of real numbers the groups are contiguous in sorted order (any two
   groups whose ranges interleave can swap values to lower the SSE; with equal values, a
   partition whose groups only *share* a value is contiguous after reordering the ties);
2. some optimal partition has only groups of k..2k-1 values (a group of 2k or more values can be
   split into two groups of at least k without increasing the SSE; Domingo-Ferrer & Mateo-Sanz,
   IEEE TKDE 14(1), 2002). ``002`` §4.4 states "in every optimal partition"; strictly, a group of
   2k or more splits into two halves with equal means without loss, so only *some* optimal
   partition is guaranteed to have this shape - which is all the algorithm needs.

**The graph.** Sort the values x_(1) <= ... <= x_(n). Nodes 0..n; an arc (i, j) for every
i + k <= j < i + 2k stands for the group {x_(i+1), ..., x_(j)} and its length is that group's
within-group sum of squares. A shortest path from 0 to n is an optimal k-partition; every node
j >= k is reachable (sizes k..2k-1 make up any total of at least k). Shortest path by dynamic
programming over the nodes in order: O(nk) after the O(n log n) sort.

**Arc lengths.** ``001`` and the original use prefix sums (SSE = S2 - S1^2/m). Prefix sums of
squares cancel catastrophically on data with a large mean or spread: the SSE of a tight group is
the difference of two large prefix totals. Here each node j grows its candidate groups backwards
(x_(j), x_(j-1), ...) with Welford's update of the mean and the sum of squares, so each of the
k arcs into j costs O(1) per attribute - the same O(nk) (O(nkd) for d attributes) - and every
arc length is computed from its own values only.

**Ties.** Equal values are sorted by row number (stable sort). Among equally short paths the DP
keeps, at each node, the arc from the *largest* predecessor, i.e. the *smallest* last group
(arcs are tried in order of group size k, k+1, ..., 2k-1 and only a strictly shorter one
replaces the best). Any optimal partition is a correct answer; this rule makes the answer
deterministic. Values that are equal may end up in two different groups (they still share their
group's mean with at least k-1 others, so k-anonymity holds).

The DP kernel :func:`hansen_mukherjee` works on any ordered sequence of d-dimensional records;
:mod:`microgui.core.methods.mhm` runs it on a multivariate path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidRoles
from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import check_k
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = [
    "hansen_mukherjee",
    "hansen_mukherjee_sse",
    "optimal_univariate",
    "warm_up",
    "OPTIMAL_UNIVARIATE",
]

#: Arc-attribute operations per kernel call before returning to Python (progress and cancel).
#: About 10-20 ms of work.
_BATCH_WORK = 20_000_000

_STATUS = "shortest path"


@_njit
def _hm_batch(x: np.ndarray, k: int, lo: int, hi: int, cost: np.ndarray, pred: np.ndarray) -> None:
    # Shortest distances of nodes lo..hi-1 (node j = the first j records). Arcs into j come from
    # i = j-k down to j-2k+1: the group rows i..j-1, grown backwards from row j-1 with Welford's
    # update (count c, mean, sum of squared deviations m2).
    d = x.shape[1]
    mean = np.empty(d, dtype=np.float64)
    for j in range(lo, hi):
        best = np.inf
        arg = -1
        m2 = 0.0
        for t in range(d):
            mean[t] = 0.0
        c = 0
        while c < 2 * k - 1 and c < j:
            row = j - 1 - c
            c += 1
            for t in range(d):
                v = x[row, t]
                delta = v - mean[t]
                mean[t] += delta / c
                m2 += delta * (v - mean[t])
            if c >= k:
                i = j - c
                if cost[i] < np.inf:
                    cand = cost[i] + m2
                    if cand < best:  # strict: on ties the smallest last group wins
                        best = cand
                        arg = i
        cost[j] = best
        pred[j] = arg


def hansen_mukherjee(
    ordered: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, float]:
    """The best k-partition of an *ordered* sequence into consecutive groups of k..2k-1 records.

    Hansen & Mukherjee's graph (``001`` §II, ``002`` §4.4): arcs (i, j) with i + k <= j < i + 2k,
    arc length the within-group sum of squares; the shortest path from node 0 to node n.

    Parameters
    ----------
    ordered
        (n,) values or (n, d) records, in the order of the path.
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    (labels, sse)
        int64 group label per position of ``ordered`` (0, 0, .., 1, 1, ..: groups numbered along
        the sequence) and the length of the shortest path (the partition's SSE). Ties: the
        smallest last group (module docstring).
    """
    cost, pred = _shortest_path(ordered, k, progress)
    n = len(cost) - 1
    # Walk back from node n: the arcs of the shortest path, last group first.
    bounds = [n]
    j = n
    while j > 0:
        j = int(pred[j])
        bounds.append(j)
    bounds.reverse()
    sizes: np.ndarray = np.diff(np.asarray(bounds, dtype=np.int64)).astype(np.int64)
    labels = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return labels, float(cost[n])


def hansen_mukherjee_sse(
    ordered: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> float:
    """The length of :func:`hansen_mukherjee`'s shortest path (the least SSE of a k-partition
    of the ordered sequence into consecutive groups), the very float, without its groups: no
    walk back and no labels (issue 33: the run report's IL bound needs the SSE of each column
    and axis only; at 1,000,000 records the labels and the walk were 17 MB and 0.05 s each)."""
    cost, _pred = _shortest_path(ordered, k, progress)
    return float(cost[-1])


def _shortest_path(
    ordered: npt.ArrayLike, k: int, progress: ProgressFn
) -> tuple[np.ndarray, np.ndarray]:
    """Hansen & Mukherjee's shortest distances to every node and each node's predecessor."""
    x = np.asarray(ordered, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D array, got shape {x.shape}")
    x = np.ascontiguousarray(x)
    n, d = x.shape
    k = check_k(k, n)
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    pred = np.full(n + 1, -1, dtype=np.int64)
    step = max(1, _BATCH_WORK // max(1, (2 * k - 1) * max(d, 1)))
    progress(0.0, _STATUS)
    for lo in range(1, n + 1, step):
        hi = min(lo + step, n + 1)
        _hm_batch(x, k, lo, hi, cost, pred)
        progress((hi - 1) / n, _STATUS)
    return cost, pred


def optimal_univariate(
    values: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> np.ndarray:
    """Optimal (minimum-SSE) k-partition of real numbers (Hansen & Mukherjee 2003).

    Parameters
    ----------
    values
        (n,) values (or an (n, 1) array).
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 group label per value (input order); groups numbered from the smallest values up,
        each of k..2k-1 values. Ties: equal values in row order, then the smallest last group
        (module docstring).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        raise ValueError(f"expected one column of values, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("values must be finite")
    order = np.argsort(v, kind="stable")
    sorted_labels, _ = hansen_mukherjee(v[order], k, progress=progress)
    labels = np.empty(len(v), dtype=np.int64)
    labels[order] = sorted_labels
    return labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernel; returns the seconds it took."""
    import time

    started = time.perf_counter()
    hansen_mukherjee(np.arange(8.0), 2)
    hansen_mukherjee(np.arange(16.0).reshape(8, 2), 2)
    return time.perf_counter() - started


def _one_attribute(roles: RoleMap, _n_records: int, _params: Mapping[str, Any]) -> str:
    """Why optimal-univariate cannot run on these roles ("" when it can): one attribute only."""
    count = len(roles.qi_of_kind(AttributeKind.CONTINUOUS))
    if count == 1:
        return ""
    return (
        f"needs exactly one continuous quasi-identifier, but {count} are tagged; for several, "
        "use individual-ranking (each attribute on its own) or mhm (multivariate)"
    )


def _run(inp: MethodInput) -> MethodOutput:
    names = inp.qi.continuous_names
    why = _one_attribute(inp.dataset.roles, inp.dataset.n_records, inp.params)
    if why:
        raise InvalidRoles(f"optimal-univariate {why}")
    labels = optimal_univariate(inp.qi.continuous[:, 0], inp.k, progress=inp.progress)
    return MethodOutput(labels=labels, extra={"sorted_by": names[0]})


OPTIMAL_UNIVARIATE = register(
    Method(
        name="optimal-univariate",
        title="Optimal univariate (Hansen-Mukherjee)",
        summary="The exact minimum-SSE k-partition of one continuous attribute by a shortest path "
        "(Hansen & Mukherjee 2003; 002 §4.3-4.4)",
        description=(
            "Exact microaggregation of a single continuous quasi-identifier (Hansen & Mukherjee "
            "2003, in 002 §4.4). In one dimension an optimal partition groups consecutive sorted "
            "values, k to 2k-1 at a time, so sorting the values and finding a shortest path in the "
            "graph whose arcs are those candidate groups (length: the group's sum of squares) gives "
            "the partition with the least information loss, in time O(nk) after sorting. Needs "
            "exactly one continuous quasi-identifier; several attributes call for "
            "individual-ranking or mhm. Groups are replaced by their means."
        ),
        citation="002_f464918b99c38812.txt §4.3-4.4; 001_3dadf1a6914d9138.txt §II "
        "(Hansen & Mukherjee 2003)",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run,
        table_refusal=_one_attribute,
        complexity="O(n log n) sort + O(nk) shortest path; not in the d = 10 benchmark (it takes "
        "exactly one attribute): 50,000 values in a few milliseconds",
        bench_sizes=(),
        warm_up=warm_up,
    )
)
