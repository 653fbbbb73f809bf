"""MSTK: k-anonymity by partitioning a minimum spanning tree, with generalization.

Ramana & Valli Kumari, ``004_0ca91c7afa3e094f.txt`` §5-7 and Algorithm 2. Unlike the other
methods, MSTK does not replace a group by its mean: every quasi-identifier of a class is replaced
by the lowest common generalization of its values in that attribute's hierarchy (``[20-30]``,
``1305*``, ``Person``), as in Table 1(b).

**Distance** (§5.2). For a hierarchy of height H, GHD(v, v') = |level(v) - level(v')| / H
(Definition 3); the generalization effort of a tuple is the sum of the GHDs of its attributes
(Definition 4); the hierarchical distance of two records is
HDist(t1, t2) = GE(t1, t12) + GE(t2, t12), t12 their closest common generalization (Definition 5),
i.e. the sum over attributes of 2·level(lowest common generalization)/H. Distances are kept as
exact integers in units of 1/lcm(H_1, ..., H_m), so ties are exact.

**Algorithm** (Algorithm 2)::

    T  = minimum spanning tree of the records under HDist          (§5.3)
    remove the edges of T heavier than the inflexion point mean + σ of T's edge weights (§5.4)
    for each subtree st:
        k <= |st| <= 2k-1:  st is an equivalence class             (line 17, see below)
        |st| > 2k-1:        prune st again with its own mean + σ    (line 20, recursively)
        |st| < k:           st is a small class
    merge small classes, closest pair first, by the class distance of Definition 7
    generalize each class to the lowest common generalization of its values

Reading of the paper's open points:

- Line 17 tests ``|st| > k``; ``k <= |st| <= 2k-1`` is meant (Case 1 of §6). σ is the *sample*
  standard deviation: §5.4's 1.265 for the weights of Table 3 (``papers/README``).
- The MST is over the records. Identical quasi-identifier tuples are at distance 0, so they are
  joined by 0-weight edges that are never pruned; the tree is computed over the u distinct
  tuples and the record tree is that tree plus 0-weight edges. The zeros count in every mean and
  σ, exactly as in the record tree.
- Pruning keeps exactly the edges of weight <= mean + σ, so each subtree is a connected
  component of the graph of record pairs at distance <= mean + σ: the classes do not depend on
  which of several equal-weight minimum spanning trees is built. The tree is therefore computed
  with Prim's algorithm on rows of distances computed on the fly (O(u²) time, O(u) memory)
  instead of Kruskal's sort of all O(u²) pairs; the weights (hence every mean and σ) are the
  same. Tables with more than :data:`MAX_DISTINCT` distinct quasi-identifier tuples are refused
  (measured: full Adult, 18,109 distinct tuples of 8 attributes, about 13 s; 60,000 distinct
  tuples of 4 attributes, about a minute, half of it in the merging of small classes).
- Line 20 recurses "until k-anonymity is satisfied" but a subtree's own mean + σ may prune
  nothing (edges of nearly equal weight). Then its heaviest edges (every edge of the maximum
  weight) are removed; a subtree of identical records (no edge above 0) stays one class.
- Lines 24-27 merge "G_1i, G_1j with minimum distance": the closest pair of small classes is
  merged, repeatedly; a merged class with >= k records leaves the pool, a smaller one stays in it.
  A single small class left at the end joins the nearest class of all (Definition 7 again).
  Ties go to the lower class number.
- Definition 7, CDist(C1, C2) = n1·HDist(t1, t12) + n2·HDist(t2, t12), with t1, t2 the
  generalized tuples of the classes and t12 their closest common generalization; HDist of a tuple
  and its own generalization is the generalization effort between them.
- Classes whose generalized tuples coincide are indistinguishable in the release, so they form
  one equivalence class of the output (one group label); DM and CAVG are measured on these.

**Quality measures** (§7): IL of eqs. 6-9 (numerical attributes: (U_i - L_i)/(U - L) with the
smallest and largest value under the published node and the whole hierarchy's range; categorical
attributes: (L_v - 1)/L with L_v the values under the node and L all values of the hierarchy;
IL_tuple the sum over attributes, IL_T the mean over records). Continuous quasi-identifiers whose
hierarchy values are all numbers count as numerical, the others as categorical. DM = Σ |E|²
(eq. 10), CAVG = n / (classes · k) (eq. 11). They are measures of any generalized release, so they
live in :mod:`microgui.core.metrics.generalization`.

Hierarchies come from ``--hierarchy COL=FILE`` (:func:`microgui.core.table.hierarchy.load_hierarchy`)
or are built automatically (:func:`microgui.core.table.hierarchy.automatic_hierarchy`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.methods.artifacts import CLASSES, SPANNING_TREE, SpanningTree
from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.metrics.generalization import (
    cavg,
    discernibility,
    generalization_information_loss,
)
from microgui.core.metrics.risk import unique_rows
from microgui.core.progress import ProgressFn, Throttle, no_progress, sub_progress
from microgui.core.table.dataset import Dataset, QIMatrix, numeric_column
from microgui.core.table.hierarchy import Hierarchy, automatic_hierarchy
from microgui.core.table.roles import AttributeKind

__all__ = [
    "MAX_DISTINCT",
    "MAX_FANOUT",
    "MERGE_EVALUATIONS_FACTOR",
    "ghd",
    "generalization_effort",
    "hierarchical_distance",
    "class_distance",
    "distance_matrix",
    "inflexion_point",
    "MstkResult",
    "mstk",
    "mstk_release",
    "MSTK",
]

#: Largest number of distinct quasi-identifier tuples accepted (the tree costs O(u²) time).
MAX_DISTINCT = 60_000
#: Largest number of values (or groups) of the data directly under one node of a hierarchy.
#: A nominal column with thousands of categories and no hierarchy (every value under ``*``)
#: leaves thousands of small classes at nearly equal distances, and merging them grows about
#: with the cube of their number (measured, issue 12: 5,000 categories 10 s, 20,000 categories
#: 8.5 minutes); such a column is refused before any long work.
MAX_FANOUT = 5_000
#: Merging small classes (lines 24-27) searches a class's nearest pooled class once at start and
#: again only when a merge invalidated it. With varied distances that costs about the first pass
#: again (full UCI Adult, 8 attributes: 10,535 classes, 26,277 searches, about 1.3e8 distance
#: evaluations, 5.8 s); when nearly all distances tie (a nominal column of thousands of
#: categories under one node) it grows with about the cube of the number of classes (2,500
#: categories: 110 searches per class, 26 s; 5,000: over 5 minutes). A run is stopped with the
#: reason once the merging has made more than max(FREE, FACTOR·n²) evaluations beyond the first
#: pass: about 15 s here at the most (issue 12).
MERGE_EVALUATIONS_FACTOR = 3
MERGE_EVALUATIONS_FREE = 300_000_000
# attributes with at most this many distinct values (or nodes) get a precomputed pair table
# (at most 4096² small integers: 32 MB)
_TABLE_MAX = 4096
# relative tolerance of "weight > mean + σ" (a weight equal to the threshold is kept)
_TOL = 1e-9


# --------------------------------------------------------------------------------------------
# Definitions 3-7 on labels (readable forms; the algorithm uses the integer forms below)
# --------------------------------------------------------------------------------------------


def _level_in_path(h: Hierarchy, value: object, generalization: str) -> int:
    leaf = h.values[int(h.encode([value])[0])]
    for level, label in enumerate((leaf, *h.generalizations[leaf])):
        if label == generalization:
            return level
    raise ValueError(f"{generalization!r} does not generalize {value!r} in {h.name}")


def ghd(hierarchy: Hierarchy, value: object, generalization: str) -> float:
    """GHD of a value and one of its generalizations (``004`` Definition 3, eq. 1): the number
    of levels between them over the height, e.g. GHD(26, [20-30]) = 1/3 in Figure 1(a)."""
    return _level_in_path(hierarchy, value, generalization) / hierarchy.height


def generalization_effort(
    record: Sequence[object], generalized: Sequence[str], hierarchies: Sequence[Hierarchy]
) -> float:
    """GE(t, t') = Σ GHD(a_i, a'_i) (``004`` Definition 4, eq. 2)."""
    return sum(ghd(h, a, g) for h, a, g in zip(hierarchies, record, generalized, strict=True))


def _closest_common(
    a: Sequence[object], b: Sequence[object], hierarchies: Sequence[Hierarchy]
) -> list[str]:
    return [
        h.lowest_common_generalization([x, y]) for h, x, y in zip(hierarchies, a, b, strict=True)
    ]


def hierarchical_distance(
    a: Sequence[object], b: Sequence[object], hierarchies: Sequence[Hierarchy]
) -> float:
    """HDist(t1, t2) = GE(t1, t12) + GE(t2, t12) (``004`` Definition 5, eq. 3)."""
    common = _closest_common(a, b, hierarchies)
    return generalization_effort(a, common, hierarchies) + generalization_effort(
        b, common, hierarchies
    )


def _node_of(h: Hierarchy, label: str) -> int:
    """Node id of ``label`` at the lowest level where it occurs."""
    for g, lab in enumerate(h.node_labels):
        if lab == label:
            return g
    raise ValueError(f"{label!r} is not a node of {h.name}")


def class_distance(
    c1: Sequence[str],
    n1: int,
    c2: Sequence[str],
    n2: int,
    hierarchies: Sequence[Hierarchy],
) -> float:
    """CDist(C1, C2) = n1·HDist(t1, t12) + n2·HDist(t2, t12) (``004`` Definition 7, eq. 5).

    ``c1``, ``c2`` are the generalized tuples of the classes (labels, each taken at the lowest
    level where it occurs), ``n1``, ``n2`` their sizes.
    """
    total = 0.0
    for h, x, y in zip(hierarchies, c1, c2, strict=True):
        a, b = _node_of(h, x), _node_of(h, y)
        top = int(h.node_levels[int(h.lca(a, b))])
        total += (n1 * (top - h.node_levels[a]) + n2 * (top - h.node_levels[b])) / h.height
    return float(total)


def inflexion_point(weights: np.ndarray) -> float:
    """mean + σ of edge weights, σ the sample standard deviation (``004`` §5.4)."""
    w = np.asarray(weights, dtype=np.float64)
    if len(w) == 0:
        return 0.0
    sigma = float(w.std(ddof=1)) if len(w) > 1 else 0.0
    return float(w.mean()) + sigma


# --------------------------------------------------------------------------------------------
# integer distances
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Units:
    """Distances in units of 1/unit: a level step of attribute j weighs ``scale[j]`` units."""

    unit: float
    scale: tuple[int | float, ...]
    dtype: type

    @classmethod
    def of(cls, hierarchies: Sequence[Hierarchy]) -> _Units:
        heights = [h.height for h in hierarchies]
        lcm = math.lcm(*heights) if heights else 1
        if lcm <= 2**31:
            return cls(float(lcm), tuple(lcm // h for h in heights), np.int64)
        return cls(1.0, tuple(1.0 / h for h in heights), np.float64)


def _table_dtype(units: _Units) -> type:
    """The smallest dtype holding one attribute's contribution (at most 2·unit)."""
    if units.dtype is not np.int64:
        return np.float64
    return np.int16 if 2 * units.unit < 2**15 else np.int32 if 2 * units.unit < 2**31 else np.int64


def _value_tables(
    hierarchies: Sequence[Hierarchy], units: _Units, leaves: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Per attribute, the (d, d) HDist contribution between its d distinct values."""
    tables: list[np.ndarray] = []
    for h, s, lv in zip(hierarchies, units.scale, leaves, strict=True):
        anc = h.ancestors[lv]
        level = np.full((len(lv), len(lv)), h.height, dtype=np.int32)
        for lev in range(h.height - 1, -1, -1):
            col = anc[:, lev]
            level[col[:, None] == col[None, :]] = lev
        tables.append((level.astype(np.float64) * (2 * s)).astype(_table_dtype(units)))
    return tables


def distance_matrix(codes: np.ndarray, hierarchies: Sequence[Hierarchy]) -> np.ndarray:
    """The n x n matrix of HDist between records (``004`` Definition 6); O(n²) memory.

    ``codes[:, j]`` are leaf ids of ``hierarchies[j]`` (:meth:`Hierarchy.encode`).
    """
    codes = np.asarray(codes, dtype=np.int64)
    units = _Units.of(hierarchies)
    out: np.ndarray = np.zeros((len(codes), len(codes)), dtype=units.dtype)
    for j, h in enumerate(hierarchies):
        leaves, local = np.unique(codes[:, j], return_inverse=True)
        table = _value_tables([h], _Units(units.unit, (units.scale[j],), units.dtype), [leaves])[0]
        out += table[local[:, None], local[None, :]].astype(units.dtype)
    return out.astype(np.float64) / units.unit


class _RowDistance:
    """HDist from one distinct tuple to a block of others, in integer units."""

    def __init__(self, tuples: np.ndarray, hierarchies: Sequence[Hierarchy], units: _Units):
        self.units = units
        self.small: list[tuple[np.ndarray, np.ndarray]] = []  # (table, local codes)
        self.large: list[tuple[np.ndarray, int, int | float]] = []  # (levels, height, scale)
        for j, h in enumerate(hierarchies):
            leaves, local = np.unique(tuples[:, j], return_inverse=True)
            if len(leaves) <= _TABLE_MAX:
                table = _value_tables(
                    [h], _Units(units.unit, (units.scale[j],), units.dtype), [leaves]
                )
                self.small.append((table[0], local.astype(np.int64)))
            else:
                anc = h.ancestors[tuples[:, j]][:, : h.height].T.copy()  # (H, u)
                self.large.append((anc, h.height, units.scale[j]))

    def block(self, idx: np.ndarray) -> list[np.ndarray]:
        """Per-attribute columns of the tuples ``idx`` (kept compact as vertices leave)."""
        cols = [local[idx] for _, local in self.small]
        cols += [anc[:, idx] for anc, _, _ in self.large]
        return cols

    def row(self, x: int, block: list[np.ndarray]) -> np.ndarray:
        out: np.ndarray | None = None
        for (table, local), col in zip(self.small, block, strict=False):
            part = table[local[x]][col]
            if out is None:
                out = part.astype(self.units.dtype)
            else:
                out += part
        for (anc, height, scale), col in zip(self.large, block[len(self.small) :], strict=True):
            same = (col == anc[:, x : x + 1]).sum(axis=0)
            part = (2 * scale * (height - same)).astype(self.units.dtype)
            if out is None:
                out = part
            else:
                out += part
        assert out is not None
        return out


def _prim(
    tuples: np.ndarray,
    hierarchies: Sequence[Hierarchy],
    units: _Units,
    progress: ProgressFn,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A minimum spanning tree of the distinct tuples: (a, b, weight in units), u-1 edges.

    Prim's algorithm from tuple 0; the next vertex is the closest to the tree, ties to the lower
    tuple number; each vertex hangs from the first tree vertex that reached its distance.
    """
    u = len(tuples)
    ea = np.empty(max(u - 1, 0), dtype=np.int64)
    eb = np.empty(max(u - 1, 0), dtype=np.int64)
    ew: np.ndarray = np.zeros(max(u - 1, 0), dtype=units.dtype)
    if u <= 1:
        return ea, eb, ew
    rows = _RowDistance(tuples, hierarchies, units)
    big = np.iinfo(np.int64).max if units.dtype is np.int64 else np.inf
    idx = np.arange(1, u, dtype=np.int64)
    block = rows.block(idx)
    best: np.ndarray = np.full(u - 1, big, dtype=units.dtype)
    parent = np.zeros(u - 1, dtype=np.int64)
    done = np.zeros(u - 1, dtype=bool)
    n_done = 0
    throttle = Throttle(progress, "building the minimum spanning tree")
    cur = 0
    for step in range(u - 1):
        d = rows.row(cur, block)
        closer = (d < best) & ~done
        best[closer] = d[closer]
        parent[closer] = cur
        j = int(np.argmin(best))
        ea[step], eb[step], ew[step] = parent[j], idx[j], best[j]
        cur = int(idx[j])
        done[j] = True
        best[j] = big
        n_done += 1
        if 2 * n_done > len(idx) and len(idx) > 64:
            keep = ~done
            idx, best, parent = idx[keep], best[keep], parent[keep]
            block = [c[..., keep] for c in block]
            done = np.zeros(len(idx), dtype=bool)
            n_done = 0
        left = (u - 2 - step) / (u - 1)
        throttle(1.0 - left * left)
    return ea, eb, ew


# --------------------------------------------------------------------------------------------
# Algorithm 2
# --------------------------------------------------------------------------------------------


def _components(u: int, ea: np.ndarray, eb: np.ndarray, keep: np.ndarray) -> np.ndarray:
    graph = coo_matrix(
        (np.ones(int(keep.sum()), dtype=np.int8), (ea[keep], eb[keep])), shape=(u, u)
    ).tocsr()
    return np.asarray(connected_components(graph, directed=False)[1], dtype=np.int64)


def _split(
    u: int,
    mult: np.ndarray,
    ea: np.ndarray,
    eb: np.ndarray,
    ew: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lines 2-23: prune at the inflexion point, recursively for subtrees > 2k-1.

    Returns (component per tuple, small flag per component, kept-edge mask).
    Components of every pending subtree are processed together, one round per depth.
    """
    keep = np.ones(len(ea), dtype=bool)
    comp = np.zeros(u, dtype=np.int64)
    pending = np.ones(1, dtype=bool)  # per component
    while pending.any():
        nc = len(pending)
        records = np.bincount(comp, weights=mult, minlength=nc)
        tuples = np.bincount(comp, minlength=nc)
        live = keep & pending[comp[ea]]
        ec, w = comp[ea[live]], ew[live].astype(np.float64)
        n_edges = records - 1
        mean = np.bincount(ec, weights=w, minlength=nc).astype(np.float64) / np.maximum(n_edges, 1)
        dev = np.bincount(ec, weights=(w - mean[ec]) ** 2, minlength=nc).astype(np.float64)
        dev += (records - tuples) * mean**2  # the 0-weight edges between identical records
        sigma = np.sqrt(dev / np.maximum(n_edges - 1, 1))
        theta = mean + sigma
        cut = w > theta[ec] + _TOL * np.maximum(1.0, np.abs(theta[ec]))
        cut_per = np.bincount(ec[cut], minlength=nc)
        # a big subtree whose own mean + σ prunes nothing loses its heaviest edges
        stuck = pending & (cut_per == 0) & (records > 2 * k - 1)
        if stuck.any():
            wmax = np.zeros(nc)
            np.maximum.at(wmax, ec, w)
            heavy = stuck[ec] & (w == wmax[ec]) & (w > 0)
            cut |= heavy
            cut_per = np.bincount(ec[cut], minlength=nc)
        where_live = np.flatnonzero(live)
        keep[where_live[cut]] = False
        new = _components(u, ea, eb, keep)
        n_new = int(new.max()) + 1
        rec_new = np.bincount(new, weights=mult, minlength=n_new)
        was = np.zeros(n_new, dtype=np.int64)
        was[new] = comp
        # a pending subtree from which nothing could be cut is final (identical records, or
        # the whole table when it already holds at most 2k-1 records)
        unsplit = pending & (cut_per == 0)
        pend_new = pending[was] & ~unsplit[was] & (rec_new > 2 * k - 1)
        comp, pending = new, pend_new
    records = np.bincount(comp, weights=mult)
    return comp, records < k, keep


def _group_lca(h: Hierarchy, leaves: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Lowest common generalization (node id) of the leaves of each group."""
    anc = h.ancestors[leaves]
    level = np.full(n_groups, h.height, dtype=np.int64)
    big = np.iinfo(np.int64).max
    for lev in range(h.height - 1, -1, -1):
        lo = np.full(n_groups, big, dtype=np.int64)
        hi = np.full(n_groups, -1, dtype=np.int64)
        np.minimum.at(lo, group, anc[:, lev])
        np.maximum.at(hi, group, anc[:, lev])
        level[lo == hi] = lev
    _, first = np.unique(group, return_index=True)  # every group has members
    return np.asarray(anc[first, level], dtype=np.int64)


class _Classes:
    """Generalized tuples (node ids) and sizes of classes, with Definition 7 distances.

    CDist(C1, C2) = Σ_j scale_j·(n1·(top_j - l1_j) + n2·(top_j - l2_j)) with top_j the level of
    the lowest common generalization; it is computed as (n1 + n2)·T - n1·G1 - n2·G2 with
    T = Σ_j scale_j·top_j and G = Σ_j scale_j·l_j the generalization effort of one record.
    Per attribute, the nodes that can occur (ancestors of the values in the data) get a local
    number; with at most ``_TABLE_MAX`` of them, top_j is tabulated for every pair, else it is
    found by comparing ancestors.
    """

    def __init__(
        self,
        hierarchies: Sequence[Hierarchy],
        units: _Units,
        nodes: np.ndarray,
        sizes: np.ndarray,
        leaves: Sequence[np.ndarray],
    ):
        self.h = list(hierarchies)
        self.scale = [float(s) for s in units.scale]
        self.nodes = nodes.copy()
        self.sizes = sizes.astype(np.float64).copy()
        self.local: list[np.ndarray | None] = []
        self.tables: list[np.ndarray | None] = []
        self.codes: list[np.ndarray] = []  # per attribute: local number (or node id) per class
        for j, (h, lv) in enumerate(zip(self.h, leaves, strict=True)):
            used = np.unique(h.ancestors[np.unique(lv)])
            used = used[used >= 0]
            if len(used) > _TABLE_MAX:
                self.local.append(None)
                self.tables.append(None)
                self.codes.append(self.nodes[:, j].copy())
                continue
            local = np.full(len(h.node_labels), -1, dtype=np.int64)
            local[used] = np.arange(len(used))
            anc = h.ancestors[used]
            small_int = np.int8 if h.height < 127 else np.int16
            top = np.full((len(used), len(used)), h.height, dtype=small_int)
            for lev in range(h.height - 1, -1, -1):
                col = anc[:, lev]
                top[(col[:, None] == col[None, :]) & (col >= 0)[:, None]] = lev
            self.local.append(local)
            self.tables.append(top)
            self.codes.append(local[self.nodes[:, j]])
        self.effort = self._effort(self.nodes)

    def _effort(self, nodes: np.ndarray) -> np.ndarray:
        g = np.zeros(len(nodes), dtype=np.float64)
        for j, h in enumerate(self.h):
            g += self.scale[j] * h.node_levels[nodes[:, j]]
        return g

    def distance(self, i: int, others: np.ndarray) -> np.ndarray:
        """CDist (Definition 7, in units) from class ``i`` to the classes ``others``."""
        top = np.zeros(len(others), dtype=np.float64)
        for j, h in enumerate(self.h):
            table = self.tables[j]
            if table is not None:
                top += self.scale[j] * table[self.codes[j][i]][self.codes[j][others]]
            else:
                anc_a = h.ancestors[self.nodes[i, j]]
                same = (h.ancestors[self.codes[j][others]] == anc_a) & (anc_a >= 0)
                top += self.scale[j] * (h.height + 1 - same.sum(axis=1))
        n1, n2 = self.sizes[i], self.sizes[others]
        out: np.ndarray = (n1 + n2) * top - n1 * self.effort[i] - n2 * self.effort[others]
        return out

    def merge(self, i: int, j: int) -> None:
        """Class i becomes the union of classes i and j (its generalization widens)."""
        for a, h in enumerate(self.h):
            node = int(h.lca(int(self.nodes[i, a]), int(self.nodes[j, a])))
            self.nodes[i, a] = node
            local = self.local[a]
            self.codes[a][i] = local[node] if local is not None else node
        self.sizes[i] += self.sizes[j]
        self.effort[i] = self._effort(self.nodes[i : i + 1])[0]


def _merge_small(
    classes: _Classes, small: np.ndarray, k: int, progress: ProgressFn
) -> tuple[np.ndarray, int]:
    """Lines 24-27: merge small classes, closest pair first (Definition 7).

    The pair merged is the closest one; at equal distances, the one with the lowest class
    numbers. Each pooled class keeps the distance to its nearest pooled class, exact or as a
    lower bound: a merge only widens class i and removes class j, so a class whose nearest was i
    or j keeps its old distance as a lower bound, and its nearest is searched again only when
    that bound is the smallest of all (lazy evaluation, as in a priority queue). Searching again
    every class that pointed to i or j (the previous approach) made a nominal attribute with
    thousands of categories, where almost every distance ties, cubic: 5,000 categories took
    72 s (issue 12). Returns ``into`` (for each class the class it ended in) and the number of
    merges.
    """
    n_small = int(np.count_nonzero(small))
    # distance evaluations allowed: the first pass (n_small²) plus the merges' share
    budget = n_small * n_small + max(MERGE_EVALUATIONS_FREE, MERGE_EVALUATIONS_FACTOR * n_small**2)
    searches = [0]
    n = len(classes.sizes)
    into = np.arange(n, dtype=np.int64)
    alive = small.copy()
    pool = np.flatnonzero(alive)
    nn = np.full(n, -1, dtype=np.int64)
    lb = np.full(n, np.inf)  # distance to the nearest pooled class (a lower bound if not exact)
    exact = np.zeros(n, dtype=bool)  # nn and lb are exact (lowest class number at ties)
    throttle = Throttle(progress, "merging classes smaller than k")

    def nearest(x: int, cand: np.ndarray) -> None:
        searches[0] += len(cand)
        if searches[0] > budget:
            raise InvalidInput(
                f"mstk: merging the {n_small:,} classes smaller than k={k} is not converging: "
                "many of them are at equal distances (a column with many categories under one "
                "node of its hierarchy), and merging would take very long. Give hierarchies "
                "that group the values of such columns (--hierarchy COL=FILE), recode them, or "
                "use mdav-generic"
            )
        cand = cand[cand != x]
        exact[x] = True
        if len(cand) == 0:
            nn[x], lb[x] = -1, np.inf
            return
        d = classes.distance(x, cand)
        best = int(np.argmin(d))
        nn[x], lb[x] = cand[best], d[best]

    for done, x in enumerate(pool):
        nearest(int(x), pool)
        throttle(0.5 * (done + 1) / max(len(pool), 1))
    merges = 0
    total = max(len(pool), 1)
    n_alive = len(pool)
    while n_alive >= 2:
        while True:  # the class with the smallest bound; an exact one is the closest pair
            i = int(np.argmin(np.where(alive, lb, np.inf)))
            if exact[i]:
                break
            nearest(i, np.flatnonzero(alive))
        j = int(nn[i])
        i, j = min(i, j), max(i, j)
        classes.merge(i, j)
        alive[j] = False
        into[j] = i
        merges += 1
        n_alive -= 1
        if classes.sizes[i] >= k:
            alive[i] = False
            n_alive -= 1
        # their nearest changed or left: the old distance is now a lower bound
        exact[exact & ((nn == i) | (nn == j))] = False
        if alive[i]:
            others = np.flatnonzero(alive)
            others = others[others != i]
            if len(others):
                d = classes.distance(i, others)
                best = int(np.argmin(d))
                nn[i], lb[i], exact[i] = others[best], d[best], True
                bound = lb[others]
                closer = d < bound  # i is now strictly the nearest: exact
                tie = (d == bound) & exact[others] & (nn[others] > i)
                nn[others[closer | tie]] = i
                lb[others[closer]] = d[closer]
                exact[others[closer]] = True
            else:
                nn[i], lb[i], exact[i] = -1, np.inf, True
        throttle(0.5 + 0.5 * merges / total)
    rest = np.flatnonzero(alive)
    if len(rest):
        # one small class is left: it joins the nearest class of all
        last = int(rest[0])
        roots = np.flatnonzero((into == np.arange(n)) & ~alive)
        if len(roots) == 0:  # pragma: no cover - impossible when k <= n
            raise AssertionError("no class to merge the last small class into")
        target = int(roots[int(np.argmin(classes.distance(last, roots)))])
        classes.merge(target, last)
        into[last] = target
        merges += 1
    while True:  # resolve chains of merges to the surviving class
        nxt = into[into]
        if np.array_equal(nxt, into):
            return into, merges
        into = nxt


@dataclass(frozen=True)
class MstkResult:
    """The outcome of :func:`mstk`.

    ``labels``: class id per record, classes numbered in the order of their first record;
    ``class_nodes``: (classes, attributes) node ids of each class's generalized value (use
    :meth:`generalized` for labels); ``mst_edges``/``mst_weights``: the record tree (n-1 edges,
    record indices, HDist), ``mst_kept``: False for the edges pruned; ``inflexion_point``: mean +
    σ of the whole tree (§5.4).
    """

    labels: np.ndarray
    class_nodes: np.ndarray
    mst_edges: np.ndarray
    mst_weights: np.ndarray
    mst_kept: np.ndarray
    inflexion_point: float
    n_distinct: int
    n_subtrees: int
    n_small: int
    n_merges: int
    hierarchies: tuple[Hierarchy, ...] = field(repr=False, default=())

    @property
    def class_sizes(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=len(self.class_nodes))

    def generalized(self) -> list[np.ndarray]:
        """Per attribute, the generalized label of every record (object arrays)."""
        out = []
        for j, h in enumerate(self.hierarchies):
            labels = np.asarray(h.node_labels, dtype=object)
            out.append(labels[self.class_nodes[:, j]][self.labels])
        return out


def _check_fanout(
    tuples: np.ndarray, hierarchies: Sequence[Hierarchy], columns: Sequence[str] | None
) -> None:
    """Refuse a hierarchy with more than :data:`MAX_FANOUT` data values (or groups) under one node."""
    for j, h in enumerate(hierarchies):
        anc = h.ancestors[np.unique(tuples[:, j])]
        for lev in range(h.height):
            pairs = unique_rows(anc[:, lev : lev + 2])[0]
            counts = np.bincount(pairs[:, 1])
            node = int(np.argmax(counts))
            if counts[node] <= MAX_FANOUT:
                continue
            col = repr(columns[j]) if columns is not None else f"with hierarchy {h.name}"
            what = "values" if lev == 0 else "groups"
            raise InvalidInput(
                f"mstk: column {col} has {int(counts[node]):,} {what} directly under "
                f"{h.node_labels[node]!r} in its hierarchy, more than {MAX_FANOUT:,}; merging the "
                "small classes would take very long (it grows with the cube of that number). "
                f"Give a hierarchy that groups the values (--hierarchy {columns[j] if columns else 'COL'}"
                "=FILE), or use another method (mdav-generic handles nominal columns)"
            )


def mstk(
    codes: np.ndarray,
    hierarchies: Sequence[Hierarchy],
    k: int,
    *,
    progress: ProgressFn = no_progress,
    columns: Sequence[str] | None = None,
) -> MstkResult:
    """MSTK (``004`` Algorithm 2) on records given as leaf ids.

    ``codes[:, j]`` holds the leaf id of each record in ``hierarchies[j]``
    (:meth:`Hierarchy.encode`); ``columns`` names the attributes in messages. Every class has
    at least k records. Raises :class:`InvalidParameter` for k outside 1..n and
    :class:`InvalidInput` above :data:`MAX_DISTINCT` distinct tuples or :data:`MAX_FANOUT`
    values under one node; lets :class:`RunCancelled` from ``progress`` through.
    """
    codes = np.asarray(codes, dtype=np.int64)
    n, m = codes.shape
    if not 1 <= k <= n:
        raise InvalidParameter(f"k={k} must be between 1 and the number of records ({n})")
    hierarchies = tuple(hierarchies)
    units = _Units.of(hierarchies)
    progress(0.0, "finding distinct records")
    # unique_rows, not np.unique(axis=0), which holds the GIL while it sorts (issue 17)
    tuples, first, inverse, mult = unique_rows(codes)
    inverse = inverse.reshape(-1)
    u = len(tuples)
    if u > MAX_DISTINCT:
        raise InvalidInput(
            f"mstk compares every pair of distinct quasi-identifier combinations (O(n²) time); this "
            f"table has {u:,}, more than {MAX_DISTINCT:,}. Use fewer quasi-identifiers or coarser "
            "hierarchies, or protect the table in blocks"
        )
    _check_fanout(tuples, hierarchies, columns)
    ea, eb, ew = _prim(tuples, hierarchies, units, sub_progress(progress, 0.0, 0.8))

    # the record tree: tuple edges between first occurrences, 0-weight edges for the duplicates
    dup = np.setdiff1d(np.arange(n), first, assume_unique=True)
    rec_edges = np.concatenate(
        [np.column_stack([first[ea], first[eb]]), np.column_stack([first[inverse[dup]], dup])]
    ).astype(np.int64)
    rec_w = np.concatenate([ew.astype(np.float64) / units.unit, np.zeros(len(dup))])
    theta = inflexion_point(rec_w)

    progress(0.8, "pruning the tree at its inflexion point")
    comp, small, keep = _split(u, mult.astype(np.float64), ea, eb, ew, k)
    n_comp = len(small)
    rec_kept = np.concatenate([keep, np.ones(len(dup), dtype=bool)])

    # GenClass: the generalized tuple of each subtree
    nodes = (
        np.column_stack(
            [_group_lca(h, tuples[:, j], comp, n_comp) for j, h in enumerate(hierarchies)]
        )
        if m
        else np.zeros((n_comp, 0), dtype=np.int64)
    )
    sizes = np.bincount(comp, weights=mult, minlength=n_comp)
    classes = _Classes(hierarchies, units, nodes, sizes, [tuples[:, j] for j in range(m)])
    into, merges = _merge_small(classes, small, k, sub_progress(progress, 0.85, 0.98))
    progress(0.98, "generalizing")
    # equivalence classes of the release: classes with the same generalized tuple are one
    final_nodes = classes.nodes[into[comp[inverse]]]
    _, first_rec, raw, _ = unique_rows(final_nodes)
    raw = raw.reshape(-1)
    order = np.argsort(first_rec, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    labels = rank[raw].astype(np.int64)
    class_nodes = final_nodes[first_rec[order]]
    progress(1.0, "done")
    return MstkResult(
        labels=labels,
        class_nodes=class_nodes,
        mst_edges=rec_edges,
        mst_weights=rec_w,
        mst_kept=rec_kept,
        inflexion_point=theta,
        n_distinct=u,
        n_subtrees=n_comp,
        n_small=int(small.sum()),
        n_merges=merges,
        hierarchies=hierarchies,
    )


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _hierarchy_for(inp: MethodInput, column: str) -> tuple[Hierarchy, np.ndarray]:
    return _column_hierarchy(inp.dataset, inp.qi, inp.hierarchies, column)


def _column_hierarchy(
    dataset: Dataset, qi: QIMatrix, given_hierarchies: Mapping[str, Any], column: str
) -> tuple[Hierarchy, np.ndarray]:
    """The hierarchy of a quasi-identifier (the one given, else an automatic one) and the leaf
    id of every record in it."""
    frame, roles = dataset.frame, dataset.roles
    kind = roles[column].kind
    given = given_hierarchies.get(column)
    if given is not None:
        if not isinstance(given, Hierarchy):
            raise InvalidInput(f"the hierarchy given for {column!r} is not a Hierarchy")
        return given, given.encode(frame[column], column)  # the Series knows its file lines
    if kind is AttributeKind.CONTINUOUS:
        values = numeric_column(frame, column).tolist()
        h = automatic_hierarchy(values, kind, name=f"automatic ({column})")
        return h, h.encode(values, column)
    values = frame[column].tolist()
    order = None
    if kind is AttributeKind.ORDINAL:
        order = qi.ordinal_orders[qi.ordinal_names.index(column)]
    h = automatic_hierarchy(values, kind, order, name=f"automatic ({column})")
    return h, h.encode(values, column)


def _run_mstk(inp: MethodInput) -> MethodOutput:
    roles = inp.dataset.roles
    qis = roles.quasi_identifiers
    hierarchies: list[Hierarchy] = []
    columns: list[np.ndarray] = []
    for col in qis:
        h, codes = _hierarchy_for(inp, col)
        hierarchies.append(h)
        columns.append(codes)
    codes = np.column_stack(columns)
    result = mstk(codes, hierarchies, inp.k, progress=inp.progress, columns=qis)
    generalized = result.generalized()
    index = inp.dataset.frame.index
    protected = pd.DataFrame(
        {
            col: pd.Series(vals, index=index, dtype=object)
            for col, vals in zip(qis, generalized, strict=True)
        },
        index=index,
    )
    numeric = [roles[c].kind is AttributeKind.CONTINUOUS for c in qis]
    extra: dict[str, Any] = {
        "discernibility": discernibility(result.labels),
        "cavg": cavg(result.labels, inp.k),
        **generalization_information_loss(
            result.labels, result.class_nodes, result.hierarchies, numeric, qis
        ),
        "inflexion_point": round(result.inflexion_point, 6),
        "mst_total_weight": round(float(result.mst_weights.sum()), 6),
        "mst_edges_pruned": int((~result.mst_kept).sum()),
        "distinct_qi_combinations": int(result.n_distinct),
        "subtrees": int(result.n_subtrees),
        "small_subtrees_merged": int(result.n_small),
        "hierarchies": {c: h.description or h.name for c, h in zip(qis, hierarchies, strict=True)},
    }
    unused = sorted(c for c in inp.hierarchies if c not in qis)
    if unused:  # given for columns that are not quasi-identifiers
        extra["hierarchies_unused"] = unused
    table = pd.DataFrame(
        {
            "class": np.arange(len(result.class_nodes), dtype=np.int64),
            "size": result.class_sizes.astype(np.int64),
            **{
                col: np.asarray(h.node_labels, dtype=object)[result.class_nodes[:, j]]
                for j, (col, h) in enumerate(zip(qis, hierarchies, strict=True))
            },
        }
    )
    tree = SpanningTree(result.mst_edges, result.mst_weights, ~result.mst_kept)
    artifacts = {**CLASSES.entry(table), **SPANNING_TREE.entry(tree)}
    return MethodOutput(
        labels=result.labels, protected_qi=protected, extra=extra, artifacts=artifacts
    )


def mstk_release(
    dataset: Dataset, qi: QIMatrix, labels: np.ndarray, hierarchies: Mapping[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The generalized quasi-identifiers of an mstk partition and its classes table (the
    :data:`CLASSES` artifact), from the labels alone: each class is published with the lowest
    common generalization of its records' values (``004`` Algorithm 2, GenClass; a merge of two
    classes takes the LCA of theirs, so it is the LCA of all its records). What a project's
    kept partition rebuilds an mstk run with (issue 30), without the tree or its pruning."""
    labels = np.asarray(labels, dtype=np.int64)
    n_groups = int(labels.max()) + 1 if len(labels) else 0
    index = dataset.frame.index
    generalized: dict[str, pd.Series] = {}
    classes: dict[str, Any] = {
        "class": np.arange(n_groups, dtype=np.int64),
        "size": np.bincount(labels, minlength=n_groups).astype(np.int64),
    }
    for col in dataset.roles.quasi_identifiers:
        h, codes = _column_hierarchy(dataset, qi, hierarchies, col)
        nodes = _group_lca(h, np.asarray(codes, dtype=np.int64), labels, n_groups)
        names = np.asarray(h.node_labels, dtype=object)[nodes]
        generalized[col] = pd.Series(names[labels], index=index, dtype=object)
        classes[col] = names
    return pd.DataFrame(generalized, index=index), pd.DataFrame(classes)


MSTK = register(
    Method(
        name="mstk",
        uses_hierarchies=True,
        artifacts=(CLASSES, SPANNING_TREE),
        title="MSTK (MST k-anonymity)",
        summary="k-anonymity by pruning a minimum spanning tree of hierarchical distances, with "
        "generalization (004 §5-6, Algorithm 2)",
        description=(
            "Builds a minimum spanning tree of the records under the hierarchical distance of "
            "their quasi-identifiers (how far each value must be generalized to meet the other), "
            "cuts the edges longer than the inflexion point mean + σ of the tree's edge weights, "
            "cuts subtrees larger than 2k-1 again, and merges subtrees smaller than k with their "
            "closest ones (Ramana & Valli Kumari). Each class is published with the lowest common "
            "generalization of its values in each attribute's hierarchy ([20-30], 1305*, Person). "
            "Hierarchy files (ARX format) are attached to quasi-identifiers in the roles panel "
            "(Attach hierarchy…), or given with --hierarchy COL=FILE on the command line; other "
            "quasi-identifiers get automatic ones (intervals, digit masking, runs of ordinal "
            "categories, or *)."
        ),
        citation="004_0ca91c7afa3e094f.txt §5-6, Algorithm 2",
        complexity="O(u²·d) for the record MST over u distinct QI tuples (refused above 60,000), O(u) memory",
        kinds=frozenset({AttributeKind.CONTINUOUS, AttributeKind.ORDINAL, AttributeKind.NOMINAL}),
        run=_run_mstk,
        aggregates=False,
    )
)
