"""MST partitioning: variable-size microaggregation along a minimum spanning tree.

Laszlo & Mukherjee, "Minimum spanning tree partitioning algorithm for microaggregation", IEEE TKDE
17(7), 2005, as described in ``002_f464918b99c38812.txt`` §4.6 (a variable-size method, §3.1.1).

**Algorithm** (on the z-scored continuous quasi-identifiers, Euclidean distance)::

    1. T = the minimum spanning tree of the records
    2. visit the edges of T from the longest to the shortest; cut an edge when both trees it
       would leave behind keep at least k records (a "removable" edge), keep it otherwise
    3. every tree of the resulting forest is a group (>= k records by construction)
    4. every group of 2k or more records is split by MDAV (003 Algorithm 5.1)

Step 2 is a single pass: trees only shrink, so an edge that is not removable when visited never
becomes removable later. Edges of equal length are visited in descending (smaller row, larger
row) order, i.e. exactly the reverse of the strict order (squared distance, smaller row, larger
row) in which the tree is built.

**Group sizes.** Steps 1-3 give groups of k or more records with no upper bound: a star (one
record with many neighbours) has no removable edge, nor has a dense cloud whose long edges all
lead to fewer than k records. The survey's step 4 divides such "oversized clusters" with a
fixed-size method, the diameter-based or the centroid-based one (``002`` §4.6), without saying
from which size on; the original's full text was not available here. microgui splits every tree
of 2k or more records with MDAV (``003`` Algorithm 5.1, :func:`microgui.core.methods.mdav.mdav`),
a centroid-based fixed-size method, on that tree's records only. Every final group therefore has
k..2k-1 records, like MDAV's; the tree decides which records may share a group. (With n < 2k
there is one group.) Trees of k..2k-1 records are kept whole, whatever their shape.

**Exact Euclidean MST without an n x n matrix.** Prim's algorithm on the full distance matrix
(the paper's choice) needs O(n^2) time and, stored, O(n^2) memory. We run Borůvka's algorithm on
a k-d tree instead: in each round every tree of the current forest finds its shortest edge to
any other tree, by nearest-neighbour queries that skip k-d tree nodes holding only records of
the querying tree and nodes farther than the best edge found so far for that tree; all those
edges are added and the trees merged. Each round at least halves the number of trees. The result
is *the* minimum spanning tree under a strict total order of the edges, (squared distance,
smaller row, larger row), so it is exact by Borůvka's theorem, whatever the ties: every edge
added is the minimum edge leaving its tree under that order. (A k-nearest-neighbour graph is not
enough: its minimum spanning forest can hold an edge that the true MST replaces by a chain of
shorter edges outside the graph - in 768 of 3000 random clustered 2-D sets of 40 points with 2-4
neighbours - so no exact merging of its components can repair it afterwards.)

Further details:

- Records with identical z-scores are collapsed first (after ``+ 0.0``, so that -0.0 equals 0.0):
  every copy is joined to the first such row by an edge of length 0. That is exactly what the
  strict order above picks, so the tree equals the order's unique MST of all n records. (Only
  when distinct records are so close that their squared distance underflows to 0 - coordinates
  differing by less than about 1e-154 - may the choice among those length-0 edges differ from
  the order's; the tree is a minimum spanning tree all the same.)
- Each record caches its nearest record outside its tree; while that record stays outside it is
  still the nearest (the outside only shrinks), and once it has joined, its distance is a lower
  bound for the next query. A record is queried only when that lower bound does not exceed the
  best edge its tree already has; queries run in increasing order of the bound.
- Pruning uses squared distances computed coordinate by coordinate in column order, the box
  distance the same way, so the box bound never exceeds a record's distance in floating point
  (rounding is monotone) and no tie is lost.
- Distances are sums of squared z-score differences; ``weights`` are their square roots.

**Cutting in O(n log n).** The tree is rooted at row 0 and laid out in DFS (Euler) order. The
size of the part of a subtree still attached to its root is a range sum of a Fenwick tree:
cutting the edge above c (whose part has s records) adds -s at c's parent and +s at the parent of
the root of the tree being cut (undoing it for every tree above). The root of a record's current
tree is the nearest cut ancestor, found in a segment tree of the cut subtrees' Euler ranges
(the nearest one has the largest DFS number). Laszlo & Mukherjee keep descendant counts and
update them up the path to the root after each removal, O(n x depth): O(n^2) on path-like trees.

**Complexity.** Memory O(n d) (no distance matrix; about 35 MB above the data at 50,000 x 10).
Time: the k-d tree O(n log^2 n); Borůvka at most log2(n) rounds of nearest-neighbour queries,
fast in low intrinsic dimension and close to brute force (O(n^2 d)) from about 20 dimensions on;
cutting O(n log n); MDAV on a tree of m records O(m^2 / k), which matters only when the data hold
a large tree without removable edges (50,000 equal records: 1.5 s). Measured (2 busy cores):
50,000 x 10 correlated, k = 5: 2.6 s; 100,000 x 10: 7-8 s; 50,000 x 20 uniform: 28 s.

Progress: the tree takes 0-60 %, cutting 60-65 %, the MDAV splits 65-100 %. The query kernel
returns to Python after a bounded amount of work, so a :class:`RunCancelled` raised by the
progress function stops the run within a fraction of a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microgui.core.methods.artifacts import SPANNING_TREE, SpanningTree
from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import (
    as_matrix,
    box_distance_of_row,
    build_kdtree,
    check_k,
    fenwick_add,
    fenwick_prefix,
    find_root,
)
from microgui.core.methods.mdav import mdav
from microgui.core.metrics.risk import unique_rows
from microgui.core.progress import ProgressFn, Throttle, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "MstPartition",
    "euclidean_mst",
    "cut_mst",
    "mst_partition",
    "warm_up",
    "MST",
]

#: Records per k-d tree leaf. Large: a leaf's distances are computed in one vectorized sweep,
#: which beats finer pruning in 5-20 dimensions (measured at 50,000 x 10: 16 -> 8 s, 64 -> 4 s,
#: 256 -> 2.9 s, 1024 -> 3.9 s of CPU) and costs nothing measurable in 2-3 dimensions.
_LEAF_SIZE = 256

#: Work units (node visits + coordinate differences) per query-kernel call before returning to
#: Python for progress and cancellation: about 15-30 ms a call (at most 0.33 s between two
#: progress calls measured at 100,000 x 10 on a loaded machine).
_QUERY_WORK = 50_000_000

#: Trees of at least this many records report MDAV's own progress (smaller ones take < 10 ms).
_MDAV_REPORT_SIZE = 2_000

_INT_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True, eq=False)
class MstPartition(SpanningTree):
    """The minimum spanning tree of a run and what the partitioning did with it (for the MST view).

    ``edges``: (n-1, 2) int64 row numbers (smaller first), in increasing (weight, rows) order;
    ``weights``: (n-1,) float64 Euclidean distances on the z-scored quasi-identifiers;
    ``cut``: (n-1,) bool, the edges removed by the partitioning;
    ``components``: (n,) int64 tree of the cut forest per record, numbered by smallest row (the
    groups before the MDAV split of trees with 2k or more records).
    """

    components: np.ndarray

    @property
    def total_weight(self) -> float:
        return float(self.weights.sum())


# --------------------------------------------------------------------------------------------
# k-d tree and Borůvka kernels
# --------------------------------------------------------------------------------------------


@_njit
def _node_components(
    comp: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    out: np.ndarray,
) -> None:
    # out[node] = the tree all of the node's records belong to, or -1 if they are in several.
    for node in range(start.shape[0] - 1, -1, -1):
        if left[node] < 0:
            c = comp[start[node]]
            for t in range(start[node] + 1, end[node]):
                if comp[t] != c:
                    c = -1
                    break
            out[node] = c
        else:
            a = out[left[node]]
            out[node] = a if a == out[right[node]] else -1


@_njit
def _prepare_round(
    comp: np.ndarray,
    ids: np.ndarray,
    cache_j: np.ndarray,
    cache_d: np.ndarray,
    exact: np.ndarray,
    best_d: np.ndarray,
    best_a: np.ndarray,
    best_b: np.ndarray,
    best_p: np.ndarray,
    best_q: np.ndarray,
) -> None:
    # Each tree's best edge among its records' still-valid cached nearest outsiders.
    best_d[:] = np.inf
    best_a[:] = _INT_MAX
    best_b[:] = _INT_MAX
    best_p[:] = -1
    best_q[:] = -1
    for i in range(comp.shape[0]):
        if not exact[i]:
            continue
        j = cache_j[i]
        c = comp[i]
        if comp[j] == c:
            exact[i] = False  # its distance stays as a lower bound
            continue
        dist = cache_d[i]
        a = min(ids[i], ids[j])
        b = max(ids[i], ids[j])
        if dist < best_d[c] or (
            dist == best_d[c] and (a < best_a[c] or (a == best_a[c] and b < best_b[c]))
        ):
            best_d[c] = dist
            best_a[c] = a
            best_b[c] = b
            best_p[c] = i
            best_q[c] = j


@_njit
def _query_batch(
    xs: np.ndarray,
    xst: np.ndarray,
    acc: np.ndarray,
    ids: np.ndarray,
    comp: np.ndarray,
    node_comp: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    queue: np.ndarray,
    pos: int,
    budget: int,
    cache_j: np.ndarray,
    cache_d: np.ndarray,
    exact: np.ndarray,
    best_d: np.ndarray,
    best_a: np.ndarray,
    best_b: np.ndarray,
    best_p: np.ndarray,
    best_q: np.ndarray,
    stack_node: np.ndarray,
    stack_dist: np.ndarray,
) -> int:
    """Query records queue[pos:] until about ``budget`` work is done; returns the next position.

    A query looks for the record outside the querying record's tree that beats the tree's best
    edge in the order (squared distance, smaller row, larger row).
    """
    d = xs.shape[1]
    work = 0
    n_queue = queue.shape[0]
    while pos < n_queue and work < budget:
        i = queue[pos]
        pos += 1
        c = comp[i]
        bd = best_d[c]
        if cache_d[i] > bd:
            continue  # the tree's best edge improved since the queue was made
        ba = best_a[c]
        bb = best_b[c]
        bound = bd
        idi = ids[i]
        found = -1
        stack_node[0] = 0
        stack_dist[0] = 0.0
        sp = 1
        while sp > 0:
            sp -= 1
            node = stack_node[sp]
            if stack_dist[sp] > bd or node_comp[node] == c:
                continue
            work += 1
            if left[node] < 0:
                # Distances to the whole leaf, coordinate by coordinate over the transposed copy
                # (vectorizes across records; each record's sum still runs in column order).
                s0 = start[node]
                cnt = end[node] - s0
                for t in range(cnt):
                    acc[t] = 0.0
                for j in range(d):
                    q = xs[i, j]
                    col = xst[j, s0 : s0 + cnt]
                    for t in range(cnt):
                        diff = q - col[t]
                        acc[t] += diff * diff
                work += cnt * d
                for t in range(cnt):
                    s = acc[t]
                    if s > bd or comp[s0 + t] == c:
                        continue
                    idt = ids[s0 + t]
                    a = min(idi, idt)
                    b = max(idi, idt)
                    if s < bd or a < ba or (a == ba and b < bb):
                        bd = s
                        ba = a
                        bb = b
                        found = s0 + t
            else:
                na = left[node]
                nb = right[node]
                da = box_distance_of_row(xs, i, lo, hi, na)
                db = box_distance_of_row(xs, i, lo, hi, nb)
                if da > db:  # push the farther child first: the nearer one is searched first
                    na, nb = nb, na
                    da, db = db, da
                if db <= bd:
                    stack_node[sp] = nb
                    stack_dist[sp] = db
                    sp += 1
                if da <= bd:
                    stack_node[sp] = na
                    stack_dist[sp] = da
                    sp += 1
        if found >= 0:
            # The best record beating the tree's bound is the record's nearest outsider.
            cache_j[i] = found
            cache_d[i] = bd
            exact[i] = True
            best_d[c] = bd
            best_a[c] = ba
            best_b[c] = bb
            best_p[c] = i
            best_q[c] = found
        else:
            cache_d[i] = bound  # every outsider is at least this far
    return pos


@_njit
def _merge_round(
    comp: np.ndarray,
    n_comp: int,
    best_p: np.ndarray,
    best_q: np.ndarray,
    best_a: np.ndarray,
    best_b: np.ndarray,
    best_d: np.ndarray,
    edge_a: np.ndarray,
    edge_b: np.ndarray,
    edge_d: np.ndarray,
    n_edges: int,
) -> tuple[int, int]:
    # Add every tree's best edge (an edge picked by both of its trees is added once), relabel.
    uf = np.arange(n_comp)
    for c in range(n_comp):
        if best_p[c] < 0:
            continue
        ra = find_root(uf, c)
        rb = find_root(uf, comp[best_q[c]])
        if ra == rb:
            continue
        uf[max(ra, rb)] = min(ra, rb)
        edge_a[n_edges] = best_a[c]
        edge_b[n_edges] = best_b[c]
        edge_d[n_edges] = best_d[c]
        n_edges += 1
    label = np.full(n_comp, -1, dtype=np.int64)
    n_new = 0
    for c in range(n_comp):
        r = find_root(uf, c)
        if label[r] < 0:
            label[r] = n_new
            n_new += 1
        label[c] = label[r]
    for i in range(comp.shape[0]):
        comp[i] = label[comp[i]]
    return n_edges, n_new


# --------------------------------------------------------------------------------------------
# cutting kernel
# --------------------------------------------------------------------------------------------


@_njit
def _cut_kernel(
    n: int, ea: np.ndarray, eb: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Greedy cut of the tree with edges (ea, eb), given in increasing order; returns the cut
    mask, the tree (component) of each record numbered in DFS order from record 0, and the number
    of records the DFS reached (n for a spanning tree; otherwise nothing else is valid)."""
    m = ea.shape[0]
    # Adjacency (CSR).
    deg = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        deg[ea[e] + 1] += 1
        deg[eb[e] + 1] += 1
    for v in range(n):
        deg[v + 1] += deg[v]
    fill = deg[:-1].copy()
    nbr = np.empty(2 * m, dtype=np.int64)
    nbr_edge = np.empty(2 * m, dtype=np.int64)
    for e in range(m):
        a = ea[e]
        b = eb[e]
        nbr[fill[a]] = b
        nbr_edge[fill[a]] = e
        fill[a] += 1
        nbr[fill[b]] = a
        nbr_edge[fill[b]] = e
        fill[b] += 1
    # Iterative DFS from record 0: parent, parent edge, preorder number tin, subtree size.
    parent = np.full(n, -1, dtype=np.int64)
    parent_edge = np.full(n, -1, dtype=np.int64)
    tin = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    stack[0] = 0
    sp = 1
    visited[0] = True
    t = 0
    while sp > 0:
        sp -= 1
        v = stack[sp]
        tin[v] = t
        order[t] = v
        t += 1
        for q in range(deg[v], deg[v + 1]):
            w = nbr[q]
            if not visited[w]:
                visited[w] = True
                parent[w] = v
                parent_edge[w] = nbr_edge[q]
                stack[sp] = w
                sp += 1
    if t != n:
        return np.zeros(m, dtype=np.bool_), np.zeros(n, dtype=np.int64), t
    size = np.ones(n, dtype=np.int64)
    for idx in range(n - 1, 0, -1):
        v = order[idx]
        size[parent[v]] += size[v]
    # Fenwick tree over DFS positions, every record counting 1.
    fen = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        fen[i] += 1
        j = i + (i & (-i))
        if j <= n:
            fen[j] += fen[i]
    # Segment tree: max DFS number of a cut subtree covering a position (-1: none, root's tree).
    seg_size = 1
    while seg_size < n:
        seg_size *= 2
    seg = np.full(2 * seg_size, -1, dtype=np.int64)
    cut = np.zeros(m, dtype=np.bool_)
    for e in range(m - 1, -1, -1):
        a = ea[e]
        b = eb[e]
        if parent[b] == a:
            c = b
            p = a
        else:
            c = a
            p = b
        lo_c = tin[c]
        hi_c = tin[c] + size[c]
        below = fenwick_prefix(fen, hi_c) - fenwick_prefix(fen, lo_c)
        if below < k:
            continue
        # Root of p's current tree: the cut ancestor with the largest DFS number, else record 0.
        pos = tin[p] + seg_size
        best = -1
        while pos >= 1:
            if seg[pos] > best:
                best = seg[pos]
            pos >>= 1
        top = 0 if best < 0 else order[best]
        total = fenwick_prefix(fen, tin[top] + size[top]) - fenwick_prefix(fen, tin[top])
        if total - below < k:
            continue
        cut[e] = True
        fenwick_add(fen, tin[p], -below)
        if top != 0:
            fenwick_add(fen, tin[parent[top]], below)
        lo_s = lo_c + seg_size
        hi_s = hi_c + seg_size
        while lo_s < hi_s:
            if lo_s & 1:
                if seg[lo_s] < lo_c:
                    seg[lo_s] = lo_c
                lo_s += 1
            if hi_s & 1:
                hi_s -= 1
                if seg[hi_s] < lo_c:
                    seg[hi_s] = lo_c
            lo_s >>= 1
            hi_s >>= 1
    component = np.empty(n, dtype=np.int64)
    n_comp = 0
    for idx in range(n):
        v = order[idx]
        if v == 0 or cut[parent_edge[v]]:
            component[v] = n_comp
            n_comp += 1
        else:
            component[v] = component[parent[v]]
    return cut, component, t


# --------------------------------------------------------------------------------------------
# Python drivers
# --------------------------------------------------------------------------------------------


def _as_matrix(values: np.ndarray) -> np.ndarray:
    # -0.0 becomes 0.0, so equal records compare equal bit for bit
    x = as_matrix(values, plain_zeros=True)
    if x.shape[1] == 0:
        raise ValueError(f"expected an (n, d) array with d >= 1, got shape {x.shape}")
    return x


def euclidean_mst(
    values: np.ndarray, *, leaf_size: int | None = None, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, np.ndarray]:
    """Exact Euclidean minimum spanning tree of the rows of ``values``, in O(n d) memory.

    Parameters
    ----------
    values
        (n, d) array (microgui passes z-scores).
    leaf_size
        Records per k-d tree leaf (default ``_LEAF_SIZE``); changes the speed, not the tree.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    edges, weights
        (n-1, 2) int64 row pairs (smaller row first) and their (n-1,) Euclidean lengths, in
        increasing order of (squared distance, smaller row, larger row). The tree is the unique
        MST for that strict order (Borůvka on a k-d tree; see the module docstring).
    """
    x = _as_matrix(values)
    n = x.shape[0]
    if n < 2:
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64)
    progress(0.0, "building the minimum spanning tree")
    _, first, inverse, _ = unique_rows(x)  # np.unique(axis=0) holds the GIL (issue 17)
    first = first.astype(np.int64)
    inverse = np.asarray(inverse, dtype=np.int64).reshape(-1)
    rep = first[inverse]
    dup = np.flatnonzero(rep != np.arange(n))
    u = len(first)
    edge_a = np.empty(n - 1, dtype=np.int64)
    edge_b = np.empty(n - 1, dtype=np.int64)
    edge_d = np.zeros(n - 1, dtype=np.float64)
    edge_a[: len(dup)] = rep[dup]
    edge_b[: len(dup)] = dup
    n_edges = len(dup)
    if u > 1:
        leaf = _LEAF_SIZE if leaf_size is None else max(int(leaf_size), 1)
        n_edges = _boruvka(x[first], first, leaf, edge_a, edge_b, edge_d, n_edges, progress)
    if n_edges != n - 1:  # cannot happen: Borůvka joins all u distinct records with u-1 edges
        raise RuntimeError(f"spanning tree of {n} records has {n_edges} edges")
    order = np.lexsort((edge_b, edge_a, edge_d))
    edges = np.stack([edge_a[order], edge_b[order]], axis=1)
    progress(1.0, "building the minimum spanning tree")
    return edges, np.sqrt(edge_d[order])


def _boruvka(
    points: np.ndarray,
    ids: np.ndarray,
    leaf_size: int,
    edge_a: np.ndarray,
    edge_b: np.ndarray,
    edge_d: np.ndarray,
    n_edges: int,
    progress: ProgressFn,
) -> int:
    """Borůvka on distinct points; appends the MST edges (row ids, squared distances)."""
    u = points.shape[0]
    perm, start, end, left, right, _, lo, hi, _, _ = build_kdtree(points, leaf_size)
    xs = np.ascontiguousarray(points[perm])
    xst = np.ascontiguousarray(xs.T)
    acc = np.empty(int((end - start).max()), dtype=np.float64)
    tid = np.ascontiguousarray(ids[perm])
    comp = np.arange(u, dtype=np.int64)
    n_comp = u
    node_comp = np.empty(len(start), dtype=np.int64)
    cache_j = np.full(u, -1, dtype=np.int64)
    cache_d = np.zeros(u, dtype=np.float64)
    exact = np.zeros(u, dtype=np.bool_)
    best_d = np.empty(u, dtype=np.float64)
    best_a = np.empty(u, dtype=np.int64)
    best_b = np.empty(u, dtype=np.int64)
    best_p = np.empty(u, dtype=np.int64)
    best_q = np.empty(u, dtype=np.int64)
    stack_node = np.empty(len(start) + 1, dtype=np.int64)
    stack_dist = np.empty(len(start) + 1, dtype=np.float64)
    log_u = np.log(u)
    status = "building the minimum spanning tree"
    while n_comp > 1:
        # Progress: log of the number of trees, which at least halves every round.
        here = 1.0 - np.log(n_comp) / log_u
        after = 1.0 - np.log(max(n_comp / 2.0, 1.0)) / log_u
        _node_components(comp, start, end, left, right, node_comp)
        nc = n_comp
        _prepare_round(
            comp,
            tid,
            cache_j,
            cache_d,
            exact,
            best_d[:nc],
            best_a[:nc],
            best_b[:nc],
            best_p[:nc],
            best_q[:nc],
        )
        need = np.flatnonzero(~exact & (cache_d <= best_d[comp]))
        queue = need[np.argsort(cache_d[need], kind="stable")]
        pos = 0
        while pos < len(queue):
            pos = _query_batch(
                xs, xst, acc, tid, comp, node_comp, start, end, left, right, lo, hi, queue, pos, _QUERY_WORK,
                cache_j, cache_d, exact, best_d, best_a, best_b, best_p, best_q, stack_node, stack_dist,
            )  # fmt: skip
            progress(here + (after - here) * pos / len(queue), status)
        n_edges, n_comp = _merge_round(
            comp, nc, best_p, best_q, best_a, best_b, best_d, edge_a, edge_b, edge_d, n_edges
        )
        progress(1.0 - np.log(n_comp) / log_u if n_comp > 1 else 1.0, status)
    return int(n_edges)


def cut_mst(edges: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The edge-cutting phase of Laszlo & Mukherjee (``002`` §4.6 step 2) on a spanning tree.

    Parameters
    ----------
    edges
        (n-1, 2) row pairs of a spanning tree of n records, in increasing order of length (ties
        already ordered); edges are visited from the last to the first.
    n
        Number of records.
    k
        Minimum number of records per tree.

    Returns
    -------
    cut, components
        Bool mask of the removed edges, and the tree of each record (int64, numbered by smallest
        row). An edge is removed when both trees it leaves behind keep at least k records.
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if len(e) != n - 1:
        raise ValueError(f"a spanning tree of {n} records has {n - 1} edges, got {len(e)}")
    if n == 1:
        return np.zeros(0, dtype=bool), np.zeros(1, dtype=np.int64)
    if e.min() < 0 or e.max() >= n:
        raise ValueError(f"edge ends must be row numbers 0..{n - 1}")
    cut, component, reached = _cut_kernel(
        n, np.ascontiguousarray(e[:, 0]), np.ascontiguousarray(e[:, 1]), int(k)
    )
    if reached != n:  # n-1 edges reaching all n records: a spanning tree
        raise ValueError("the edges do not form a spanning tree (they leave records unreached)")
    # Renumber the trees by their smallest row.
    _, first = np.unique(component, return_index=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return cut, rank[component]


def mst_partition(
    values: np.ndarray, k: int, *, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, MstPartition]:
    """MST partition of continuous records (Laszlo & Mukherjee 2005; ``002`` §4.6).

    Parameters
    ----------
    values
        (n, d) array, already standardized (Euclidean distance on these values).
    k
        Minimum group size, 2 <= k <= n.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled` to stop.

    Returns
    -------
    labels, partition
        int64 group label per record (row order), 0..g-1: the cut forest's trees by smallest row,
        a tree of 2k or more records replaced by its MDAV groups in MDAV's order; every group has
        k..2k-1 records. ``partition`` holds the tree, the cut mask and the trees before MDAV.
    """
    x = _as_matrix(values)
    n = x.shape[0]
    k = check_k(k, n)
    edges, weights = euclidean_mst(x, progress=sub_progress(progress, 0.0, 0.6))
    progress(0.6, "cutting tree edges")
    cut, components = cut_mst(edges, n, k)
    progress(0.65, "cutting tree edges")
    sizes = np.bincount(components)
    order = np.argsort(components, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    # MDAV costs about m^2 on a tree of m records: progress 65-100 % in proportion to that.
    work = np.where(sizes >= 2 * k, sizes.astype(np.float64) ** 2, 0.0)
    done = np.concatenate([[0.0], np.cumsum(work)]) / max(float(work.sum()), 1.0)
    status = "splitting large groups (MDAV)"
    throttled = Throttle(progress, status)
    labels = np.empty(n, dtype=np.int64)
    next_label = 0
    for c in range(len(sizes)):
        rows = order[bounds[c] : bounds[c + 1]]
        if sizes[c] < 2 * k:
            labels[rows] = next_label
            next_label += 1
            continue
        lo, hi = 0.65 + 0.35 * done[c], 0.65 + 0.35 * done[c + 1]
        # Small trees report through the throttle once done; large ones report (and can be
        # cancelled) from inside MDAV.
        inner = sub_progress(progress, lo, hi) if sizes[c] >= _MDAV_REPORT_SIZE else no_progress
        sub = mdav(x[rows], k, progress=inner)
        throttled(hi)
        labels[rows] = sub + next_label
        next_label += int(sub.max()) + 1
    progress(1.0, "done")
    partition = MstPartition(edges=edges, weights=weights, cut=cut, components=components)
    for arr in (edges, weights, cut, components):
        arr.setflags(write=False)
    return labels, partition


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    x[10:20] = x[3]  # a star of 11 equal records: a tree of >= 2k, so MDAV runs too
    mst_partition(x, 3)
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run_mst(inp: MethodInput) -> MethodOutput:
    labels, part = mst_partition(inp.qi.continuous, inp.k, progress=inp.progress)
    sizes = np.bincount(part.components)
    extra = {
        "mst_total_weight": part.total_weight,
        "n_mst_edges": int(len(part.weights)),
        "n_cut_edges": int(part.cut.sum()),
        "n_mst_components": int(len(sizes)),
        "largest_mst_component": int(sizes.max()),
        "n_components_split_by_mdav": int((sizes >= 2 * inp.k).sum()),
    }
    return MethodOutput(labels=labels, extra=extra, artifacts=SPANNING_TREE.entry(part))


MST = register(
    Method(
        name="mst",
        title="MST partitioning",
        summary="Groups cut from the minimum spanning tree of the records, large ones split by MDAV "
        "(Laszlo & Mukherjee 2005; 002 §4.6)",
        description=(
            "Builds the minimum spanning tree of the records (Euclidean distance on the "
            "standardized quasi-identifiers), then visits its edges from the longest to the "
            "shortest and cuts every edge that leaves at least k records on both sides (Laszlo & "
            "Mukherjee 2005). Each remaining tree is a group; trees of 2k or more records are split "
            "by MDAV, so every group has k to 2k-1 records. Well-separated clusters in the data are "
            "never mixed in one group. Continuous quasi-identifiers only; groups are replaced by "
            "their means."
        ),
        citation="002_f464918b99c38812.txt §4.6 (Laszlo & Mukherjee 2005)",
        complexity="Boruvka MST on a k-d tree: about O(n log² n) for small d (near O(n²) above d ≈ 20); O(n) memory",
        bench_sizes=(10_000, 50_000, 100_000),
        warm_up=warm_up,
        artifacts=(SPANNING_TREE,),
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_mst,
    )
)
