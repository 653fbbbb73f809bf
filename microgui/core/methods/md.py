"""MD: Maximum Distance microaggregation, fixed-size groups around the two most distant records.

Domingo-Ferrer & Mateo-Sanz, "Practical data-oriented microaggregation for statistical disclosure
control", IEEE TKDE 14(1), 2002, as described in ``002_f464918b99c38812.txt`` §4.2 (MD) and named
with its cost O(n³/12k) for MD-MHM in ``001_3dadf1a6914d9138.txt`` Table 3. The partition, on the
z-scored continuous quasi-identifiers with the Euclidean distance::

    R = all records
    while |R| >= 3k:
        r, s = the two most distant records of R
        G_r = r and its k-1 nearest records in R             (numbered first)
        G_s = s and its k-1 nearest records in R minus G_r   (numbered next)
        R = R minus G_r minus G_s
    if 2k <= |R| <= 3k-1:
        r, s as above; G_r = r and its k-1 nearest records in R; the rest is one group
    else (k <= |R| < 2k): R is one group

The survey's §4.2 stops at "if there exist any records which do not belong to any of the groups,
implement the same strategy iteratively" and leaves the end open (two groups of k cannot be made
from fewer than 2k records). microgui ends the way MDAV does (``003`` Algorithm 5.1, the "3k rule";
MDAV is MD with the pair replaced by the record farthest from the centroid and the record farthest
from it), so every group has k..2k-1 records and none is "added to the closest group".

**Which pair, which record first** (ties; cf. :mod:`microgui.core.methods.mdav`). Among all pairs
at the largest distance, r is the smallest row that belongs to such a pair and s the smallest row
among the records at that distance from r; r's group is formed first. The k-1 nearest are the k-1
smallest (distance, row) pairs. If ties put s into G_r (only possible when every record of R is at
the same distance from r), s is taken as the farthest record outside G_r (largest distance, then
smallest row).

**Cost, and how it is avoided.** Found naively, the most distant pair costs O(m²d) for m records,
and MD needs it n/2k times: O(n³d/k) in all (``001`` Table 3's O(n³/12k) is that count; 2·10¹²
distances at n = 50,000, k = 5). It has to be *the* farthest pair, not an approximation: another
pair gives other groups. The kernel finds it exactly with bounds:

- the records left are sorted by decreasing distance ρ to their centroid; every pair is looked at
  from its endpoint that comes first in that order, so the pair distance is D = max_i F(i) with
  F(i) = the largest distance from i to a record after it;
- F(i) can only decrease as records leave, so a value once measured stays an upper bound on it,
  and stays exact while the record that achieved it (its partner) is left; all bounds sit in a
  max-heap;
- d(i, j) <= ρ(i) + ρ(j), so F(i) <= ρ(i) + ρ(first record after i), and measuring F(i) visits
  the records after i only until ρ(i) + ρ(j) falls below the farthest distance found (grouped
  records are skipped through a path-compressed "next record left" array). When the first
  principal axis holds at least 40 % of the variance of the records left (skewed data such as
  Census, Tarragona, EIA: 59-69 %), a record j is measured only if
  (p(i) - p(j))² + (q(i) + q(j))² >= that distance, p being the coordinate along the axis and q the
  distance to it, another upper bound on d(i, j)².

Each step pops bounds in decreasing order: a record whose partner is still there has its exact
F(i); a stale bound is first lowered to the ρ bound, and measured only if still on top. The step
ends when the top bound is below the best pair distance found (equal bounds are all measured, so
that r is the smallest row over every pair at that distance); s is then the smallest row at that
distance from r, read off the pass that finds r's neighbours. The sorted order is rebuilt around
the centroid of the records left whenever they have shrunk by 10 % (on skewed data the first
groups take the outliers and the bulk left behind sits far from the original centroid, where the
ρ bound prunes nothing); the bounds are then reset to the ρ bounds. Every distance measured is
the same sum of squared coordinate differences in column order that :func:`md_reference` uses,
and every bound carries a margin against rounding (relative 1e-10, and 1e-9 (ρ(i) + ρ(j))² for the
axis bound), so the pair is exactly the brute-force pair, ties included. The groups cost two
passes over the records left per step, as in MDAV.

Measured (CPU time, 2 cores shared with other jobs), 50,000 x 10, k = 5: 2.4-3.3 s on the
benchmark's correlated data, 2.1-3.7 s on isotropic Gaussian, uniform and many-duplicates data,
4.4 s on correlated lognormal data (10,000: 0.3 s; 20,000: 1.0 s); EIA (4092 x 11) 0.05 s.
Ruled out on the way: scanning from the top of the sorted order (each pair seen from both ends)
rescans the dense side of every diameter at every step (on 50,000 lognormal records, 540 scans
per step instead of 12, 11.8 s instead of 7.1 s before the axis test); stopping a scan
as soon as it cannot beat the step's best pair leaves a bound just below the diameter and the
record is scanned again at the next step; keeping each record's 4-16 farthest partners does not
avoid the rescans. Worst case: when all records are nearly equidistant from the centroid (points
on a sphere) the ρ bound prunes little and a step costs up to O(m²d), the naive cost: 10,000
points on a 10-d sphere take about 3.3 s, 20,000 about 13 s.

:func:`md_reference` is the plain numpy algorithm (all pairwise distances of the records left,
every step): the oracle of the tests. The kernel returns to Python after a bounded amount of work
for progress and cancellation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.methods.jit_cache import first_call_compiles, njit
from microgui.core.methods.kernels import (
    as_matrix,
    check_k,
    column_sums,
    distances_pass,
    farthest,
    find_root,
    load_point,
    nearest_and_farthest,
    squared_distances_to,
    take_group,
)
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.roles import AttributeKind

__all__ = ["md_partition", "md_reference", "warm_up", "MD"]

_BATCH_WORK = 60_000_000
_STATUS = "forming groups"
#: Relative margin of the rho bounds against rounding.
_MARGIN = 1e-10
#: Margin of the principal-axis bound, times (rho(i) + rho(j))^2.
_AXIS_MARGIN = 1e-9
#: The principal-axis test is used when the axis holds at least this share of the variance.
_AXIS_SHARE = 0.4
#: The sorted order is re-centred each time the records left fall to this fraction.
_RECENTRE = 0.9


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@njit
def _above(ka: float, ra: int, kb: float, rb: int) -> bool:
    # Heap order: larger bound first, then smaller row.
    return ka > kb or (ka == kb and ra < rb)


@njit
def _heap_push(hk: np.ndarray, hr: np.ndarray, size: int, key: float, row: int) -> int:
    i = size
    hk[i] = key
    hr[i] = row
    while i > 0:
        parent = (i - 1) // 2
        if _above(hk[i], hr[i], hk[parent], hr[parent]):
            hk[i], hk[parent] = hk[parent], hk[i]
            hr[i], hr[parent] = hr[parent], hr[i]
            i = parent
        else:
            break
    return size + 1


@njit
def _heap_pop(hk: np.ndarray, hr: np.ndarray, size: int) -> int:
    size -= 1
    hk[0] = hk[size]
    hr[0] = hr[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        top = left
        right = left + 1
        if right < size and _above(hk[right], hr[right], hk[left], hr[left]):
            top = right
        if _above(hk[top], hr[top], hk[i], hr[i]):
            hk[i], hk[top] = hk[top], hk[i]
            hr[i], hr[top] = hr[top], hr[i]
            i = top
        else:
            break
    return size


@njit
def _pair_sq(xs: np.ndarray, a: int, b: int) -> float:
    s = 0.0
    for j in range(xs.shape[1]):
        t = xs[a, j] - xs[b, j]
        s += t * t
    return s


@njit
def _farthest_pair(
    xs: np.ndarray,
    rho: np.ndarray,
    axis_p: np.ndarray,
    axis_q: np.ndarray,
    use_axis: bool,
    srow: np.ndarray,
    spos: np.ndarray,
    nxt: np.ndarray,
    labels: np.ndarray,
    ub: np.ndarray,
    partner: np.ndarray,
    hk: np.ndarray,
    hr: np.ndarray,
    hsize: np.ndarray,
    held: np.ndarray,
    counter: np.ndarray,
) -> int:
    """Row r of the most distant pair of the records left (module docstring).

    ``counter[0]`` accumulates the records visited by the scans (for the work budget).
    """
    n = xs.shape[0]
    size = hsize[0]
    best = -1.0
    r = -1
    n_held = 0
    grow = 1.0 + _MARGIN
    while size > 0:
        i = hr[0]
        u = hk[0]
        if labels[i] >= 0:
            size = _heap_pop(hk, hr, size)  # grouped already: drop it
            continue
        if r >= 0 and u < best:
            break
        size = _heap_pop(hk, hr, size)
        pa = partner[i]
        if pa < 0 or labels[pa] >= 0:
            pi = spos[i]
            ri = rho[pi]
            first = find_root(nxt, pi + 1)
            if first >= n:
                # No record after i: it starts no pair (it stays out of the heap).
                ub[i] = -1.0
                partner[i] = -1
                continue
            cap = (ri + rho[first]) * grow
            cap = cap * cap
            if cap < u:
                ub[i] = cap
                partner[i] = -1
                size = _heap_push(hk, hr, size, cap, i)
                continue
            # Measure F(i): past the point where rho(i) + rho(j) falls below the farthest
            # distance found, no record can be farther (rho decreases along the order).
            far = -1.0
            pj = -1
            p = first
            visited = 0
            while p < n:
                visited += 1
                if pj >= 0:
                    lim = (ri + rho[p]) * grow
                    if lim * lim < far:
                        break
                    if use_axis:
                        dp = axis_p[pi] - axis_p[p]
                        dq = axis_q[pi] + axis_q[p]
                        sr = ri + rho[p]
                        if dp * dp + dq * dq + _AXIS_MARGIN * sr * sr < far:
                            p = find_root(nxt, p + 1)
                            continue
                dsq = _pair_sq(xs, pi, p)
                j = srow[p]
                if dsq > far or (dsq == far and j < pj):
                    far = dsq
                    pj = j
                p = find_root(nxt, p + 1)
            counter[0] += visited
            ub[i] = far
            partner[i] = pj
            u = far
        # F(i) = u exactly; its pairs at that distance have i and partner[i] (the smallest row
        # among the records after i at that distance) as their smallest rows.
        end = i if i < partner[i] else partner[i]
        if u > best or (u == best and end < r):
            best = u
            r = end
        held[n_held] = i
        n_held += 1
    for a in range(n_held):
        row = held[a]
        size = _heap_push(hk, hr, size, ub[row], row)
    hsize[0] = size
    return r


@njit
def _retire(rows: np.ndarray, g: int, spos: np.ndarray, nxt: np.ndarray) -> None:
    for a in range(g):
        p = spos[rows[a]]
        nxt[p] = p + 1


@njit
def _md_batch(
    cont: np.ndarray,
    idx: np.ndarray,
    where: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    xs: np.ndarray,
    rho: np.ndarray,
    axis_p: np.ndarray,
    axis_q: np.ndarray,
    use_axis: bool,
    srow: np.ndarray,
    spos: np.ndarray,
    nxt: np.ndarray,
    ub: np.ndarray,
    partner: np.ndarray,
    hk: np.ndarray,
    hr: np.ndarray,
    hsize: np.ndarray,
    held: np.ndarray,
    state: np.ndarray,
    k: int,
    budget: int,
) -> None:
    """Advance by about ``budget`` coordinate operations, or until m <= state[2] (time to
    re-centre the sorted order); state = [m, next label, m at which to return]."""
    m = state[0]
    label = state[1]
    d = cont.shape[0]
    kk = k - 1
    p = np.empty(d)
    hd = np.empty(max(kk, 1))
    hx = np.empty(max(kk, 1), dtype=np.int64)
    hp = np.empty(max(kk, 1), dtype=np.int64)
    group = np.empty(k, dtype=np.int64)
    rows = np.empty(k, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    no_sum = np.empty(0)
    no_codes = np.empty((0, 0), dtype=np.int64)
    work = 0
    while m >= 2 * k and work < budget and m > state[2]:
        counter[0] = 0
        r_row = _farthest_pair(
            xs,
            rho,
            axis_p,
            axis_q,
            use_axis,
            srow,
            spos,
            nxt,
            labels,
            ub,
            partner,
            hk,
            hr,
            hsize,
            held,
            counter,
        )
        work += counter[0] * d
        # G_r: r and its k-1 nearest; s = the farthest from r (largest distance, smallest row).
        r = where[r_row]
        load_point(cont, r, p)
        distances_pass(cont, m, p, dist)
        s = nearest_and_farthest(dist, idx, m, r, kk, hd, hx, hp)
        group[0] = r
        for a in range(kk):
            group[1 + a] = hp[a]
        for a in range(k):
            rows[a] = idx[group[a]]
        s = take_group(
            group, k, label, m, s, cont, no_codes, no_codes, idx, no_sum, no_codes, no_codes,
            labels, dist, where,
        )  # fmt: skip
        _retire(rows, k, spos, nxt)
        label += 1
        m -= k
        work += m * (d + 1)
        if m < 2 * k:
            # Tail (2k <= |R| <= 3k-1 before G_r): the rest is one group.
            for i in range(m):
                labels[idx[i]] = label
            label += 1
            m = 0
            break
        if s < 0:
            # Ties put s into G_r: the farthest from r outside it (dist still holds d(., r)).
            s = farthest(dist, idx, m)
        load_point(cont, s, p)
        distances_pass(cont, m, p, dist)
        nearest_and_farthest(dist, idx, m, s, kk, hd, hx, hp)
        group[0] = s
        for a in range(kk):
            group[1 + a] = hp[a]
        for a in range(k):
            rows[a] = idx[group[a]]
        take_group(
            group, k, label, m, -1, cont, no_codes, no_codes, idx, no_sum, no_codes, no_codes,
            labels, dist, where,
        )  # fmt: skip
        _retire(rows, k, spos, nxt)
        label += 1
        m -= k
        work += m * (d + 1)
    if 0 < m < 2 * k:
        # k <= |R| < 2k: the rest is one group.
        for i in range(m):
            labels[idx[i]] = label
        label += 1
        m = 0
    state[0] = m
    state[1] = label


# --------------------------------------------------------------------------------------------
# Python driver
# --------------------------------------------------------------------------------------------


class _Sorted(NamedTuple):
    """The records left, sorted by decreasing rho (equal: smaller row first)."""

    xs: np.ndarray  # their coordinates, in that order
    rho: np.ndarray  # distance to their centroid
    axis_p: np.ndarray  # coordinate along their first principal axis
    axis_q: np.ndarray  # distance to that axis
    use_axis: bool  # whether the axis holds enough of the variance to be worth the test
    srow: np.ndarray  # original rows
    spos: np.ndarray  # sorted position of every row (-1 for the others), length n
    nxt: np.ndarray  # "next record left" over the sorted positions, length m + 1


def _sorted(data: np.ndarray, rows: np.ndarray) -> _Sorted:
    sub = data[rows]
    centre = column_sums(sub) / len(rows)
    rho = np.sqrt(squared_distances_to(sub, centre))
    centred = sub - centre
    values, vectors = np.linalg.eigh(centred.T @ centred)
    axis = vectors[:, -1]
    along = centred @ axis
    off = np.sqrt(((centred - along[:, None] * axis[None, :]) ** 2).sum(axis=1))
    total = float(values.sum())
    use_axis = bool(total > 0.0 and values[-1] >= _AXIS_SHARE * total)
    order = np.lexsort((rows, -rho))
    srow = np.ascontiguousarray(rows[order], dtype=np.int64)
    spos = np.full(data.shape[0], -1, dtype=np.int64)
    spos[srow] = np.arange(len(rows))
    return _Sorted(
        xs=np.ascontiguousarray(data[srow]),
        rho=np.ascontiguousarray(rho[order]),
        axis_p=np.ascontiguousarray(along[order]),
        axis_q=np.ascontiguousarray(off[order]),
        use_axis=use_axis,
        srow=srow,
        spos=spos,
        nxt=np.arange(len(rows) + 1, dtype=np.int64),
    )


def _reset_bounds(
    srt: _Sorted,
    ub: np.ndarray,
    partner: np.ndarray,
    hk: np.ndarray,
    hr: np.ndarray,
    hsize: np.ndarray,
) -> None:
    """Bounds F(i) <= rho(i) + rho(next record), none exact; the heap of all but the last."""
    grow = 1.0 + _MARGIN
    m = len(srt.srow)
    cap = ((srt.rho[:-1] + srt.rho[1:]) * grow) ** 2
    ub[srt.srow[:-1]] = cap
    ub[srt.srow[-1]] = -1.0
    partner[srt.srow] = -1
    order = np.lexsort((srt.srow[:-1], -cap))  # sorted: a valid heap
    hr[: m - 1] = srt.srow[:-1][order]
    hk[: m - 1] = cap[order]
    hsize[0] = m - 1


def md_partition(x: np.ndarray, k: int, *, progress: ProgressFn = no_progress) -> np.ndarray:
    """MD partition of continuous records (Domingo-Ferrer & Mateo-Sanz 2002; ``002`` §4.2).

    Parameters
    ----------
    x
        (n, d) array, already standardized (Euclidean distance on these values).
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    numpy.ndarray
        int64 group label per record (row order), groups numbered 0..g-1 in the order formed;
        every group has k..2k-1 records. Ties: see the module docstring.
    """
    data = as_matrix(x)
    n = data.shape[0]
    k = check_k(k, n)
    labels = np.full(n, -1, dtype=np.int64)
    if n < 2 * k:
        labels[:] = 0  # k <= n < 2k: one group
        progress(1.0, _STATUS)
        return labels
    srt = _sorted(data, np.arange(n, dtype=np.int64))
    ub = np.empty(n)
    partner = np.full(n, -1, dtype=np.int64)
    hk = np.empty(n)
    hr = np.empty(n, dtype=np.int64)
    hsize = np.zeros(1, dtype=np.int64)
    _reset_bounds(srt, ub, partner, hk, hr, hsize)
    held = np.empty(n, dtype=np.int64)
    cont = np.array(data.T, dtype=np.float64, order="C", copy=True)
    idx = np.arange(n, dtype=np.int64)
    where = np.arange(n, dtype=np.int64)
    dist = np.empty(n)
    state = np.array([n, 0, int(n * _RECENTRE)], dtype=np.int64)
    if first_call_compiles(_md_batch):
        progress(0.0, "compiling the MD kernel (first run only)")
    progress(0.0, _STATUS)
    while state[0] > 0:
        _md_batch(
            cont,
            idx,
            where,
            labels,
            dist,
            srt.xs,
            srt.rho,
            srt.axis_p,
            srt.axis_q,
            srt.use_axis,
            srt.srow,
            srt.spos,
            srt.nxt,
            ub,
            partner,
            hk,
            hr,
            hsize,
            held,
            state,
            k,
            _BATCH_WORK,
        )
        m = int(state[0])
        if m >= 2 * k and m <= state[2]:
            # Re-centre (module docstring): sorted order and bounds around the records left.
            srt = _sorted(data, idx[:m].copy())
            _reset_bounds(srt, ub, partner, hk, hr, hsize)
            state[2] = int(m * _RECENTRE)
        progress(1.0 - (m / n) ** 2, _STATUS)
    return labels


def md_reference(x: npt.ArrayLike, k: int) -> np.ndarray:
    """Textbook MD in plain numpy: all pairwise distances of the records left, every step.

    Same partition, labels and tie rule as :func:`md_partition`; O(n²) memory (tests only).
    """
    data = as_matrix(x)
    n = data.shape[0]
    k = check_k(k, n)
    full = np.zeros((n, n))
    for j in range(data.shape[1]):
        t = data[:, j][None, :] - data[:, j][:, None]
        full += t * t
    labels = np.full(n, -1, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    label = 0

    def pair() -> tuple[int, int]:
        rows = np.flatnonzero(alive)
        sub = full[np.ix_(rows, rows)]
        top = sub.max()
        r = int(rows[np.flatnonzero((sub == top).any(axis=1))[0]])
        rows = rows[rows != r]
        s = int(rows[np.flatnonzero(full[r, rows] == top)[0]])
        return r, s

    def around(centre: int) -> np.ndarray:
        others = np.flatnonzero(alive)
        others = others[others != centre]
        near = others[np.argsort(full[centre, others], kind="stable")[: k - 1]]
        return np.concatenate([[centre], near])

    def take(group: np.ndarray) -> None:
        nonlocal label
        labels[group] = label
        alive[group] = False
        label += 1

    while alive.sum() >= 3 * k:
        r, s = pair()
        group_r = around(r)
        take(group_r)
        if not alive[s]:
            rows = np.flatnonzero(alive)
            s = int(rows[np.argmax(full[r, rows])])
        take(around(s))
    if alive.sum() >= 2 * k:
        r, _ = pair()
        take(around(r))
    if alive.any():
        take(np.flatnonzero(alive))
    return labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernel; returns the seconds it took."""
    import time

    started = time.perf_counter()
    md_partition(np.random.default_rng(0).normal(size=(17, 2)), 2)
    return time.perf_counter() - started


def _run_md(inp: MethodInput) -> MethodOutput:
    return MethodOutput(labels=md_partition(inp.qi.continuous, inp.k, progress=inp.progress))


MD = register(
    Method(
        name="md",
        title="MD",
        summary="Maximum Distance: fixed-size groups of k around the two most distant records, "
        "repeatedly (Domingo-Ferrer & Mateo-Sanz 2002; 002 §4.2)",
        description=(
            "Repeatedly finds the two most distant records of those not yet grouped and groups "
            "each with its k-1 nearest records, until fewer than 3k records remain; then one more "
            "group around a most distant record and the rest, as in MDAV (Domingo-Ferrer & "
            "Mateo-Sanz 2002, as described in 002 §4.2). Groups of k to 2k-1 records; continuous "
            "quasi-identifiers, standardized, Euclidean distance. The exact most distant pair is "
            "found with distance bounds instead of all n² distances."
        ),
        citation="002_f464918b99c38812.txt §4.2 (Domingo-Ferrer & Mateo-Sanz 2002); "
        "001_3dadf1a6914d9138.txt Table 3",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_md,
        complexity="O(n³d/k) naively (the most distant pair, n/2k times); the exact search with "
        "distance bounds costs two passes per pair of groups plus short scans on real data, up "
        "to O(n³d/k) when all records are equidistant from the centroid",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
    )
)
