"""Drawing layouts for the app's tree views: computed here, in the worker, never in the GUI thread.

Plain numpy and networkx, no Qt (STYLE.md §1, §7).

- :func:`dependency_tree_layout`: positions of the attributes of an AMA dependency tree
  (:class:`~microgui.core.dependency.DependencyTree`) as a layered ("tidy") tree drawn top-down.
  The root is the tree's centre (smallest eccentricity), so the drawing is as shallow as the tree
  allows; ties go to the key attribute ranked first, then to attribute order. Leaves take
  consecutive x positions in depth-first order and a parent sits midway between its first and
  last child, so no two subtrees overlap. Constant attributes, which are not in the tree, go on
  a row of their own below it.
- :func:`mst_layout`: what the MST partition view draws of a run of ``mst`` or ``mstk``: the
  record tree's edges, which of them the partitioning cut, the group each kept edge lies in and
  the documented edge subsample (:func:`edge_sample`).
- :func:`axis_values`: the record coordinates of one axis choice (PC1/PC2 of the run's
  projection, or a continuous quasi-identifier in its original units), the same choices as the
  cluster scatter plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from microgui.core.artifacts import SPANNING_TREE
from microgui.core.dataset import QIMatrix
from microgui.core.dependency import DependencyTree
from microgui.core.projection import QIProjection
from microgui.core.runs import RunResult

__all__ = [
    "DEFAULT_MAX_EDGES",
    "PC1",
    "PC2",
    "TreeLayout",
    "tree_layout",
    "dependency_tree_layout",
    "EdgeSample",
    "edge_sample",
    "MstLayout",
    "mst_layout",
    "axis_choices",
    "axis_values",
]

#: Above this many tree edges the MST view draws a seeded subsample (see :func:`edge_sample`).
DEFAULT_MAX_EDGES = 5_000

PC1 = "PC1"
PC2 = "PC2"


# --------------------------------------------------------------------------------------------
# dependency tree
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TreeLayout:
    """Positions of the vertices of a tree (or forest) for a top-down drawing.

    ``x``: horizontal position (leaves one unit apart); ``depth``: 0 for the root, 1 for its
    neighbours, ...; vertices without an edge (``isolated``) are on row ``max depth + 1``.
    ``edges``: (e, 2) int64 vertex positions, ``weights``: (e,) the edges' weights, in the order
    given. ``root`` is None when there is no edge.
    """

    names: tuple[str, ...]
    x: np.ndarray
    depth: np.ndarray
    edges: np.ndarray
    weights: np.ndarray
    root: int | None
    isolated: tuple[int, ...]

    @property
    def n_levels(self) -> int:
        return int(self.depth.max()) + 1 if len(self.depth) else 0


def tree_layout(
    names: Sequence[str],
    edges: Sequence[tuple[int, int]],
    weights: Sequence[float] | None = None,
    *,
    root_preference: Sequence[int] | None = None,
) -> TreeLayout:
    """Layered layout of a forest whose edges join a subset of ``names`` into one tree.

    Parameters
    ----------
    names
        Vertex names (positions 0..m-1).
    edges
        (i, j) vertex positions of the tree's edges; vertices on no edge are isolated.
    weights
        Weight of each edge (recorded only; default 0).
    root_preference
        Vertex positions in order of preference for the root among the tree's centres (default:
        position order).

    Raises
    ------
    ValueError
        The edges are not a tree on the vertices they touch (a cycle, or two components).
    """
    m = len(names)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    w = (
        np.zeros(len(e), dtype=np.float64)
        if weights is None
        else np.asarray(weights, dtype=np.float64).reshape(-1)
    )
    if len(w) != len(e):
        raise ValueError("one weight per edge is needed")
    x = np.zeros(m, dtype=np.float64)
    depth = np.zeros(m, dtype=np.int64)
    graph = nx.Graph()
    graph.add_edges_from((int(a), int(b)) for a, b in e)
    in_tree = sorted(graph.nodes)
    root: int | None = None
    if in_tree:
        if not nx.is_tree(graph):
            raise ValueError("the edges do not form a single tree")
        rank = {v: r for r, v in enumerate(root_preference or ())}
        centres = nx.center(graph)
        root = min(centres, key=lambda v: (rank.get(v, len(rank)), v))
        children: dict[int, list[int]] = {v: [] for v in in_tree}
        parent = {root: -1}
        order = [root]
        # Breadth first from the root; neighbours in position order, so the picture is stable.
        for v in order:
            for u in sorted(graph.neighbors(v)):
                if u not in parent:
                    parent[u] = v
                    depth[u] = depth[v] + 1
                    children[v].append(u)
                    order.append(u)
        next_leaf = 0.0
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:  # iterative post-order: leaves left to right, parents over their children
            v, done = stack.pop()
            kids = children[v]
            if not kids:
                x[v] = next_leaf
                next_leaf += 1.0
            elif done:
                x[v] = 0.5 * (x[kids[0]] + x[kids[-1]])
            else:
                stack.append((v, True))
                stack.extend((c, False) for c in reversed(kids))
    isolated = tuple(v for v in range(m) if v not in graph)
    if isolated:
        width = float(x[in_tree].max()) if in_tree else 0.0
        row = int(depth[in_tree].max()) + 1 if in_tree else 0
        start = 0.5 * (width - (len(isolated) - 1))
        for i, v in enumerate(isolated):
            x[v] = start + i
            depth[v] = row
    return TreeLayout(
        names=tuple(str(n) for n in names),
        x=x,
        depth=depth,
        edges=e,
        weights=w,
        root=root,
        isolated=isolated,
    )


def dependency_tree_layout(tree: DependencyTree) -> TreeLayout:
    """The :class:`TreeLayout` of an AMA dependency tree (root: its centre, key attributes first)."""
    names = list(tree.attributes)
    pos = {a: i for i, a in enumerate(names)}
    edges = [(pos[a], pos[b]) for a, b, _ in tree.edges]
    weights = [float(w) for _, _, w in tree.edges]
    preference = [pos[a] for a in tree.key_attributes]
    return tree_layout(names, edges, weights, root_preference=preference)


# --------------------------------------------------------------------------------------------
# MST partition
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class EdgeSample:
    """The edges a view draws of a tree with ``n_edges`` edges, ``n_cut`` of them cut.

    ``indices``: sorted edge positions drawn; ``seed``: the seed of the subsample.
    """

    indices: np.ndarray
    n_edges: int
    n_cut: int
    seed: int

    @property
    def sampled(self) -> bool:
        return len(self.indices) < self.n_edges


def edge_sample(cut: np.ndarray, max_edges: int = DEFAULT_MAX_EDGES, seed: int = 0) -> EdgeSample:
    """Which edges to draw: all of them up to ``max_edges``, else a seeded subsample.

    The subsample keeps every cut edge first (they show where the groups were separated); if
    there are more cut edges than ``max_edges``, a uniform seeded sample of ``max_edges`` cut
    edges is drawn and no kept edge. Otherwise the remaining budget is a uniform seeded sample of
    the kept edges. The generator is ``numpy.random.default_rng(seed)``.

    >>> s = edge_sample(np.array([False] * 8 + [True] * 2), max_edges=5, seed=0)
    >>> (len(s.indices), bool(s.sampled), {8, 9} <= set(s.indices.tolist()))
    (5, True, True)
    """
    cut = np.asarray(cut, dtype=bool).reshape(-1)
    n = len(cut)
    max_edges = max(int(max_edges), 0)
    n_cut = int(cut.sum())
    if n <= max_edges:
        return EdgeSample(np.arange(n, dtype=np.int64), n, n_cut, seed)
    rng = np.random.default_rng(seed)
    cut_idx = np.flatnonzero(cut)
    kept_idx = np.flatnonzero(~cut)
    if n_cut >= max_edges:
        chosen = rng.choice(cut_idx, size=max_edges, replace=False)
    else:
        rest = rng.choice(kept_idx, size=max_edges - n_cut, replace=False)
        chosen = np.concatenate([cut_idx, rest])
    return EdgeSample(np.sort(chosen).astype(np.int64), n, n_cut, seed)


@dataclass(frozen=True, eq=False)
class MstLayout:
    """What the MST partition view draws of a run (all arrays read-only views of the run's).

    ``edges``: (n-1, 2) record rows; ``cut``: (n-1,) bool, edge removed by the partitioning;
    ``edge_group``: (n-1,) int64, the final group of both ends of a kept edge, -1 for a cut edge
    or a kept edge whose ends ended in different groups (``mst`` splits trees of 2k or more
    records by MDAV); ``sample``: the edges drawn; ``source``: the method that made the tree
    (``"mst"`` or ``"mstk"``).
    """

    source: str
    edges: np.ndarray
    cut: np.ndarray
    edge_group: np.ndarray
    sample: EdgeSample

    @property
    def n_edges(self) -> int:
        return int(len(self.edges))

    @property
    def n_cut(self) -> int:
        return int(self.cut.sum())


def mst_layout(
    result: RunResult, *, max_edges: int = DEFAULT_MAX_EDGES, seed: int = 0
) -> MstLayout | None:
    """The :class:`MstLayout` of a run that left a spanning tree (artifact
    :data:`~microgui.core.artifacts.SPANNING_TREE`: ``mst``, ``mstk``); None for other runs."""
    tree = SPANNING_TREE.of(result.artifacts)
    if tree is None:
        return None
    cut = np.asarray(tree.cut, dtype=bool)
    edges = np.asarray(tree.edges, dtype=np.int64).reshape(-1, 2)
    if len(cut) != len(edges):
        raise ValueError(f"{len(edges)} tree edges but {len(cut)} cut flags")
    labels = np.asarray(result.labels, dtype=np.int64)
    a, b = labels[edges[:, 0]], labels[edges[:, 1]]
    group = np.where(~cut & (a == b), a, -1).astype(np.int64)
    return MstLayout(
        source=result.spec.method,
        edges=edges,
        cut=cut,
        edge_group=group,
        sample=edge_sample(cut, max_edges, seed),
    )


# --------------------------------------------------------------------------------------------
# record coordinates
# --------------------------------------------------------------------------------------------


def axis_choices(qi: QIMatrix, projection: QIProjection | None) -> list[str]:
    """The axes a record plot offers: PC1 and PC2 (when projected), then the continuous QIs."""
    return ([PC1, PC2] if projection is not None else []) + list(qi.continuous_names)


def axis_values(qi: QIMatrix, projection: QIProjection | None, name: str) -> tuple[np.ndarray, str]:
    """The original records' coordinate on one axis choice, and the axis label."""
    if name in (PC1, PC2):
        if projection is None:
            raise KeyError(name)
        i = 0 if name == PC1 else 1
        return projection.original[:, i], projection.axis_label(i)
    j = qi.continuous_names.index(name)
    values: np.ndarray = qi.continuous[:, j] * qi.cont_std[j] + qi.cont_mean[j]
    return values, f"{name} (original units)"
