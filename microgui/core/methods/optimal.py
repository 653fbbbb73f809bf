"""Optimal multivariate microaggregation: the exact minimum-SSE k-partition of a small table.

``002_f464918b99c38812.txt`` §4.3 (after Oganian & Domingo-Ferrer 2001): optimal multivariate
microaggregation is NP-hard, which is why the other methods are heuristics. For a small table
(microgui allows up to ``max_records`` = 25 records by default) it can still be solved exactly,
and ``001_3dadf1a6914d9138.txt`` Table 2 shows such an optimal microaggregation: the eleven
companies of its Table 1, surface and employees as z-scores, k = 3, give {A, B, C, J},
{D, E, I}, {F, G, H, K} - which this method reproduces (an exhaustive search finds it the unique
optimum, says the README of the seed examples; the tests check its SSE against one).

**Search space.** Only groups of k..2k-1 records: some optimal k-partition has no larger group,
because a group of 2k or more records splits into two groups of at least k without raising the
SSE (Domingo-Ferrer & Mateo-Sanz, "Practical data-oriented microaggregation for statistical
disclosure control", IEEE TKDE 14(1), 2002; restated in ``002`` §3.1 and §4.4, which says "every
optimal partition" - strictly "some", since a split whose halves have equal means loses nothing).

**Branch and bound.** A partition is built group by group. At each step the remaining records R
must be partitioned; the record of R that is hardest to place (the largest sum of squared
distances to its k-1 nearest records in R) gets its group first, and every group of k..2k-1
records of R containing it is a branch - so each partition is met exactly once. Bounds:

- the SSE of a group is (1/|G|) * sum of its pairwise squared distances, and it never decreases
  when a record joins, so a partial group already too expensive cuts all its supersets;
- a lower bound on the best partition of the rest R': a record y in a group of s >= k records
  contributes (1/2s) * sum_{z in G} d^2(y, z) >= (1/2s) * (its s-1 smallest squared distances
  in R') >= (1/2k) * (its k-1 smallest) - the last step because the mean of the s-1 smallest
  grows with s; summed over R';
- when fewer than 2k records would remain, they must form one group: its exact SSE is used.

The branches of a step are tried in order of their bound (best first), and the search starts
from the better of NPN-MHM and MDAV-MHM (:mod:`microgui.core.methods.mhm`) as the incumbent, so
most branches are cut at once. A branch is cut when its bound is not below the incumbent; a
solution replaces the incumbent only when strictly better. **Ties:** when several partitions
share the optimal SSE, the one returned is the first met in this search order (deterministic).
Distances are sums of squared coordinate differences of the z-scores; SSEs compared in floating
point, so "optimal" means to within rounding (relative 1e-12 or so).

**Transpositions.** The same set of remaining records is reached through many different
first groups. When every branch for a remaining set R entered at cost c has been explored or
cut, no partition of R costs less than (incumbent - c) - otherwise it would have been found -
so that value is kept in a table (up to 4 million sets) and used as R's bound whenever R comes
up again (measured: a third less time at n = 22, d = 10).

**Cost.** Exponential in the worst case; it depends on how clustered the records are, on d
and on k. Measured (2 shared cores, k = 3): clustered or 2-D data, n = 15, 20, 25 all under
0.05 s; Gaussian data in 5-D 0.01 / 0.08 / 0.25 s; in 10-D 0.01 / 1-3 / 7-15 s. Larger k
is harder: Gaussian 10-D n = 20: k = 4 1.1 s, k = 5 4.6 s; n = 25: k = 4 31 s, k = 5 about
6 minutes (5-D: 12 s and 90 s). Above ``max_records`` (default 25) the run is refused; mhm or
mdav handle tables of any size. The kernel returns to Python after a bounded amount of work,
even in the middle of enumerating a step's branches (the enumeration resumes where it stopped),
so a :class:`~microgui.core.progress.RunCancelled` stops the run within about 0.1 s. Progress is
the share of the first step's branches already explored (it can jump: the first branches take
longest).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import as_matrix, check_k
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = ["MAX_RECORDS", "optimal_partition", "warm_up", "OPTIMAL"]

#: Default limit on the number of records (``--param max_records``); the bitmasks allow 62.
MAX_RECORDS = 25
_HARD_LIMIT = 62

#: Branch-and-bound work units (candidate groups examined) per kernel call.
_BATCH_WORK = 2_000_000

#: Entries of the table of solved remainders (about 100 bytes each).
_MEMO_LIMIT = 4_000_000

_STATUS = "searching partitions"


@_njit
def _bound_and_pick(mask: np.int64, d2: np.ndarray, nbr: np.ndarray, k: int) -> tuple[float, int]:
    # Lower bound on the best partition of the records in `mask` (module docstring) and the
    # record to branch on: the one with the largest sum over its k-1 nearest (smallest row on ties).
    n = d2.shape[0]
    total = 0.0
    worst = -1.0
    pick = -1
    for y in range(n):
        if not (mask >> y) & 1:
            continue
        s = 0.0
        c = 0
        for j in range(n - 1):
            z = nbr[y, j]
            if (mask >> z) & 1:
                s += d2[y, z]
                c += 1
                if c == k - 1:
                    break
        total += s
        if s > worst:
            worst = s
            pick = y
    return total / (2.0 * k), pick


@_njit
def _group_sse(mask: np.int64, d2: np.ndarray) -> float:
    # (1/m) * sum of the pairwise squared distances of the m records in mask
    n = d2.shape[0]
    rows = np.empty(n, dtype=np.int64)
    m = 0
    for a in range(n):
        if (mask >> a) & 1:
            rows[m] = a
            m += 1
    s = 0.0
    for i in range(m):
        ra = rows[i]
        for j in range(i + 1, m):
            s += d2[ra, rows[j]]
    return s / m if m > 0 else 0.0


@_njit
def _popcount(mask: np.int64) -> int:
    c = 0
    while mask:
        mask &= mask - 1
        c += 1
    return c


@_njit
def _generate(
    mask: np.int64,
    cost: float,
    x: int,
    d2: np.ndarray,
    nbr: np.ndarray,
    k: int,
    best: np.ndarray,
    best_groups: np.ndarray,
    chosen_masks: np.ndarray,
    level: int,
    pool_mask: np.ndarray,
    pool_group: np.ndarray,
    pool_sse: np.ndarray,
    pool_bound: np.ndarray,
    pool_pick: np.ndarray,
    top: int,
    work: np.ndarray,
    memo: Any,
    gen: np.ndarray,
    idx: np.ndarray,
    psum: np.ndarray,
    gmask: np.ndarray,
    budget: int,
) -> int:
    # Branches for the records in `mask` (cost so far `cost`): every group of k..2k-1 of them
    # containing x whose bound is below best[0]. Stored at pool[top:]; returns the new top. A
    # group that leaves fewer than 2k records completes a partition at once: checked here.
    # Resumable: returns -1 when the pool is full and -2 when `budget` work is spent, with the
    # enumeration saved in gen = [active, depth, out] and idx/psum/gmask; called again with the
    # same arguments (after the caller grew the pool, or reported progress) it carries on.
    n = d2.shape[0]
    m = _popcount(mask)
    cand = np.empty(n, dtype=np.int64)
    nc = 0
    for j in range(n - 1):
        z = nbr[x, j]
        if (mask >> z) & 1:
            cand[nc] = z
            nc += 1
    cap = pool_mask.shape[0]
    max_size = min(2 * k - 1, m)
    if gen[0]:
        depth = gen[1]
        out: int = gen[2]
    else:
        depth = 0
        idx[0] = -1
        psum[0] = 0.0
        gmask[0] = np.int64(1) << x
        out = top
    gen[0] = 0
    while depth >= 0:
        if work[0] >= budget:
            gen[0] = 1
            gen[1] = depth
            gen[2] = out
            return -2
        idx[depth] += 1
        size = depth + 2  # x and members idx[0..depth]
        if idx[depth] >= nc or size + (nc - idx[depth] - 1) < k:
            depth -= 1
            continue
        work[0] += 1
        y = cand[idx[depth]]
        add = d2[x, y]
        for c in range(depth):
            add += d2[cand[idx[c]], y]
        p = psum[depth] + add
        sse = p / size
        if cost + sse >= best[0]:
            continue
        g = gmask[depth] | (np.int64(1) << y)
        rest = m - size
        if size >= k and (rest == 0 or rest >= k):
            rmask = mask & ~g
            if rest < 2 * k:
                # the rest is one group: a complete partition
                work[0] += rest * rest // 4
                total = cost + sse + (_group_sse(rmask, d2) if rest > 0 else 0.0)
                if total < best[0]:
                    best[0] = total
                    for j in range(level):
                        best_groups[j] = chosen_masks[j]
                    best_groups[level] = g
                    best_groups[level + 1] = rmask
                    for j in range(level + 2 if rest > 0 else level + 1, best_groups.shape[0]):
                        best_groups[j] = 0
            else:
                work[0] += rest
                lb, pick = _bound_and_pick(rmask, d2, nbr, k)
                known = memo.get(rmask, 0.0)
                b = cost + sse + (lb if lb > known else known)
                if b < best[0]:
                    if out >= cap:
                        idx[depth] -= 1  # this group again when resumed
                        gen[0] = 1
                        gen[1] = depth
                        gen[2] = out
                        return -1
                    pool_mask[out] = rmask
                    pool_group[out] = g
                    pool_sse[out] = sse
                    pool_bound[out] = b
                    pool_pick[out] = pick
                    out += 1
        if size < max_size:
            psum[depth + 1] = p
            gmask[depth + 1] = g
            depth += 1
            idx[depth] = idx[depth - 1]
    # best first
    if out - top > 1:
        order = np.argsort(pool_bound[top:out], kind="mergesort")
        pool_mask[top:out] = pool_mask[top:out][order]
        pool_group[top:out] = pool_group[top:out][order]
        pool_sse[top:out] = pool_sse[top:out][order]
        pool_bound[top:out] = pool_bound[top:out][order]
        pool_pick[top:out] = pool_pick[top:out][order]
    return out


@_njit
def _search(
    d2: np.ndarray,
    nbr: np.ndarray,
    k: int,
    best: np.ndarray,
    best_groups: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    pos: np.ndarray,
    cost: np.ndarray,
    chosen_masks: np.ndarray,
    state: np.ndarray,
    pool_mask: np.ndarray,
    pool_group: np.ndarray,
    pool_sse: np.ndarray,
    pool_bound: np.ndarray,
    pool_pick: np.ndarray,
    level_mask: np.ndarray,
    memo: Any,
    memo_limit: int,
    gen: np.ndarray,
    g_idx: np.ndarray,
    g_psum: np.ndarray,
    g_mask: np.ndarray,
    budget: int,
) -> int:
    # Depth-first over the steps; level l's branches are pool[start[l]:end[l]], pos[l] the next.
    # state[0] = current level (-1: not started). Returns 0 when done, 1 when the budget is
    # spent, 2 when the pool must grow (the interrupted enumeration resumes on the next call).
    n = d2.shape[0]
    work = np.zeros(1, dtype=np.int64)
    full = (np.int64(1) << n) - 1 if n < 63 else np.int64(-1)
    if state[0] < 0:
        lb, pick = _bound_and_pick(full, d2, nbr, k)
        if lb >= best[0]:
            return 0
        top = _generate(
            full, 0.0, pick, d2, nbr, k, best, best_groups, chosen_masks, 0,
            pool_mask, pool_group, pool_sse, pool_bound, pool_pick, 0, work, memo,
            gen, g_idx, g_psum, g_mask, budget,
        )  # fmt: skip
        if top == -1:
            return 2
        if top == -2:
            return 1
        start[0] = 0
        end[0] = top
        pos[0] = 0
        cost[0] = 0.0
        level_mask[0] = full
        state[0] = 0
    while True:
        level = state[0]
        if level < 0:
            return 0
        if work[0] >= budget:
            return 1
        if pos[level] >= end[level] or pool_bound[pos[level]] >= best[0]:
            # Every branch of this step is explored or cut (they are sorted by bound): the
            # records left here cannot be partitioned for less than best - cost (module
            # docstring), whatever way they were reached. (An enumeration left unfinished for
            # this step's next branch is dropped: a solution found meanwhile cut the branch.)
            gen[0] = 0
            pos[level] = end[level]
            r = level_mask[level]
            if level > 0 and len(memo) < memo_limit:
                known = memo.get(r, 0.0)
                if best[0] - cost[level] > known:
                    memo[r] = best[0] - cost[level]
            state[0] = level - 1
            continue
        c = pos[level]
        pos[level] = c + 1
        chosen_masks[level] = pool_group[c]
        new_cost = cost[level] + pool_sse[c]
        top = _generate(
            pool_mask[c], new_cost, pool_pick[c], d2, nbr, k, best, best_groups, chosen_masks,
            level + 1, pool_mask, pool_group, pool_sse, pool_bound, pool_pick, end[level], work,
            memo, gen, g_idx, g_psum, g_mask, budget,
        )  # fmt: skip
        if top < 0:
            pos[level] = c  # the same step again on the next call: the enumeration resumes
            return 2 if top == -1 else 1
        work[0] += 1
        start[level + 1] = end[level]
        end[level + 1] = top
        pos[level + 1] = end[level]
        cost[level + 1] = new_cost
        level_mask[level + 1] = pool_mask[c]
        state[0] = level + 1


def _squared_distance_matrix(x: np.ndarray) -> np.ndarray:
    n, d = x.shape
    d2 = np.zeros((n, n))
    for t in range(d):  # column order, every pair the same arithmetic both ways
        u = x[:, t][:, None] - x[:, t][None, :]
        d2 += u * u
    return d2


def _pair_sse(d2: np.ndarray, labels: np.ndarray) -> float:
    total = 0.0
    for g in np.unique(labels):
        rows = np.flatnonzero(labels == g)
        total += float(np.triu(d2[np.ix_(rows, rows)], 1).sum()) / len(rows)
    return total


def optimal_partition(
    values: npt.ArrayLike,
    k: int,
    *,
    max_records: int = MAX_RECORDS,
    progress: ProgressFn = no_progress,
) -> np.ndarray:
    """The exact minimum-SSE k-partition of a small set of records (branch and bound).

    Parameters
    ----------
    values
        (n, d) records, standardized (Euclidean distance and SSE on these values).
    k
        Minimum group size, 2 <= k <= n.
    max_records
        Largest n accepted (the search is exponential); at most 62.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 group label per record, groups numbered in the order of their first record; every
        group has k..2k-1 records. Ties: module docstring.
    """
    x = as_matrix(values, plain_zeros=True)
    n = x.shape[0]
    limit = min(int(max_records), _HARD_LIMIT)
    if n > limit:
        raise InvalidParameter(
            f"optimal searches all partitions, which takes exponential time: it is limited to "
            f"{limit} records and the table has {n}; use mhm or mdav for larger tables (or raise "
            f"--param max_records, up to {_HARD_LIMIT}, and expect a long run)"
        )
    k = check_k(k, n)
    if n < 2 * k:
        return np.zeros(n, dtype=np.int64)
    d2 = _squared_distance_matrix(x)
    # Neighbours of each record by (squared distance, row), itself excluded.
    nbr = np.empty((n, n - 1), dtype=np.int64)
    for i in range(n):
        others = np.delete(np.arange(n), i)
        nbr[i] = others[np.lexsort((others, d2[i, others]))]

    # Incumbent: the better of two MHM partitions (groups of k..2k-1, so inside the search space).
    from microgui.core.methods.mhm import mhm

    incumbent = min(
        (mhm(x, k, path=p)[0] for p in ("npn", "mdav")), key=lambda lab: _pair_sse(d2, lab)
    )
    max_groups = n // k + 1
    best = np.array([_pair_sse(d2, incumbent) * (1.0 + 1e-9) + 1e-300])
    best_groups = np.zeros(max_groups, dtype=np.int64)
    start = np.zeros(max_groups + 1, dtype=np.int64)
    end = np.zeros(max_groups + 1, dtype=np.int64)
    pos = np.zeros(max_groups + 1, dtype=np.int64)
    cost = np.zeros(max_groups + 1, dtype=np.float64)
    chosen = np.zeros(max_groups + 1, dtype=np.int64)
    level_mask = np.zeros(max_groups + 1, dtype=np.int64)
    memo = numba.typed.Dict.empty(numba.types.int64, numba.types.float64)
    state = np.array([-1], dtype=np.int64)
    gen = np.zeros(3, dtype=np.int64)
    g_idx = np.zeros(2 * k, dtype=np.int64)
    g_psum = np.zeros(2 * k + 1, dtype=np.float64)
    g_mask = np.zeros(2 * k + 1, dtype=np.int64)
    cap = 1 << 16
    pool = _new_pool(cap)
    progress(0.0, _STATUS)
    while True:
        status = _search(
            d2, nbr, k, best, best_groups, start, end, pos, cost, chosen, state, *pool,
            level_mask, memo, _MEMO_LIMIT, gen, g_idx, g_psum, g_mask, _BATCH_WORK,
        )  # fmt: skip
        if status == 0:
            break
        if status == 2:
            cap *= 2
            grown = _new_pool(cap)
            for old, new in zip(pool, grown, strict=True):
                new[: len(old)] = old
            pool = grown
        # the share of the first step's branches done (0 while they are still being enumerated;
        # the call still lets a cancel through)
        fraction = 0.0
        if state[0] >= 0:
            fraction = max(0, int(pos[0] - start[0]) - 1) / max(1, int(end[0] - start[0]))
        progress(fraction, _STATUS)
    progress(1.0, _STATUS)
    labels = np.full(n, -1, dtype=np.int64)
    for g, mask in enumerate(best_groups):
        for i in range(n):
            if (int(mask) >> i) & 1:
                labels[i] = g
    if (labels < 0).any():  # nothing strictly better than the incumbent was found
        labels = incumbent
    # number the groups by their first record
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    out: np.ndarray = rank[labels]
    return out


def _new_pool(cap: int) -> tuple[np.ndarray, ...]:
    return (
        np.zeros(cap, dtype=np.int64),
        np.zeros(cap, dtype=np.int64),
        np.zeros(cap, dtype=np.float64),
        np.zeros(cap, dtype=np.float64),
        np.zeros(cap, dtype=np.int64),
    )


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    optimal_partition(np.random.default_rng(0).normal(size=(9, 2)), 2)
    return time.perf_counter() - started


def _too_large(_roles: RoleMap, n_records: int, params: Mapping[str, Any]) -> str:
    """Why optimal refuses a table ("" when it does not): more records than ``max_records``."""
    limit = min(int(params.get("max_records", MAX_RECORDS)), _HARD_LIMIT)
    if n_records <= limit:
        return ""
    return (
        f"limited to {limit} records (exponential search); the table has {n_records:,} "
        "(raise --param max_records, up to 62, or use mhm)"
    )


def _run(inp: MethodInput) -> MethodOutput:
    labels = optimal_partition(
        inp.qi.continuous,
        inp.k,
        max_records=int(inp.params["max_records"]),
        progress=inp.progress,
    )
    return MethodOutput(labels=labels, extra={"exact": True})


OPTIMAL = register(
    Method(
        name="optimal",
        title="Optimal (exact, small tables)",
        summary="The exact minimum-SSE k-partition by branch and bound, for tables of up to about "
        "25 records (002 §4.3; 001 Table 2)",
        description=(
            "Finds the partition into groups of at least k records with the smallest possible "
            "information loss (within-group sum of squares), by an exhaustive branch-and-bound "
            "search over groups of k to 2k-1 records (larger groups are never needed). Optimal "
            "multivariate microaggregation is NP-hard (002 §4.3), so this is for small tables "
            "only - up to 25 records by default - for instance to see how far a heuristic is from "
            "the optimum; 001 Table 2 is such an optimal microaggregation. Continuous "
            "quasi-identifiers only; groups are replaced by their means."
        ),
        citation="002_f464918b99c38812.txt §4.3; 001_3dadf1a6914d9138.txt Table 2",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run,
        table_refusal=_too_large,
        params=(
            ParamSpec(
                "max_records",
                int,
                MAX_RECORDS,
                "Refuse tables with more records than this (the search takes exponential time).",
                minimum=2,
                maximum=_HARD_LIMIT,
            ),
        ),
        complexity="exponential (branch and bound over groups of k..2k-1); limited to "
        "max_records = 25 records by default, so not in the benchmark",
        bench_sizes=(),
        warm_up=warm_up,
    )
)
