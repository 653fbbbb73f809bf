"""Drawing layouts for the app's tree views: computed here, in the worker, never in the GUI thread.

Plain numpy and networkx, no Qt (STYLE.md §1, §7).

- :func:`dependency_tree_layout`: positions of the attributes of an AMA dependency tree
  (:class:`~microgui.core.table.dependency.DependencyTree`) as a layered ("tidy") tree drawn top-down.
  The root is the tree's centre (smallest eccentricity), so the drawing is as shallow as the tree
  allows; ties go to the key attribute ranked first, then to attribute order. Leaves take
  consecutive x positions in depth-first order and a parent sits midway between its first and
  last child, so no two subtrees overlap. Constant attributes, which are not in the tree, go on
  a row of their own below it.
- :func:`tree_points` and :func:`place_tree_labels`: the same tree drawn in a box of pixels, top-down
  or left-to-right, and where its attribute names and edge weights go so that no label covers
  another label or a vertex, and none leaves the box (issue 15: FEDTAX was hidden under an edge
  label on Census).
- :func:`mst_layout`: what the MST partition view draws of a run of ``mst`` or ``mstk``: the
  record tree's edges, which of them the partitioning cut, the group each kept edge lies in and
  the documented edge subsample (:func:`edge_sample`).
- :func:`axis_values`: the record coordinates of one axis choice (PC1/PC2 of the run's
  projection, or a continuous quasi-identifier in its original units), the same choices as the
  cluster scatter plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from microgui.core.methods.artifacts import SPANNING_TREE
from microgui.core.runs.spec import RunResult
from microgui.core.table.dataset import QIMatrix
from microgui.core.table.dependency import DependencyTree
from microgui.core.views.projection import PC1, PC2, QIProjection

__all__ = [
    "DEFAULT_MAX_EDGES",
    "NEAR_PX",
    "PC1",
    "PC2",
    "TreeLayout",
    "tree_layout",
    "dependency_tree_layout",
    "tree_points",
    "LabelPlacement",
    "place_tree_labels",
    "boxes_overlap",
    "EdgeSample",
    "edge_sample",
    "MstLayout",
    "MAX_VIEW_EDGES",
    "ViewEdges",
    "edges_in_view",
    "mst_layout",
    "axis_choices",
    "axis_values",
]

#: Above this many tree edges the MST view draws a seeded subsample (see :func:`edge_sample`).
DEFAULT_MAX_EDGES = 5_000
#: The MST view draws at most this many edges of those in view (issue 29): 5,000 edges of a
#: 30,000-record tree drawn at once were a hairball nobody could follow.
MAX_VIEW_EDGES = 300


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


def tree_points(
    layout: TreeLayout, direction: str, box: tuple[float, float, float, float]
) -> np.ndarray:
    """Pixel positions (x right, y down) of the vertices of ``layout`` drawn in ``box`` (left,
    top, right, bottom): ``"down"`` puts the root on top and the levels below it, ``"right"``
    puts the root on the left and the levels to its right. A single level or a single slot
    is centred."""
    left, top, right, bottom = box
    m = len(layout.x)
    if not m:
        return np.zeros((0, 2))
    x = layout.x.astype(np.float64)
    depth = layout.depth.astype(np.float64)
    x0, x1 = float(x.min()), float(x.max())
    levels = max(layout.n_levels - 1, 0)
    across = (x - x0) / (x1 - x0) if x1 > x0 else np.full(m, 0.5)
    along = depth / levels if levels else np.full(m, 0.5)
    if direction == "down":
        return np.column_stack([left + across * (right - left), top + along * (bottom - top)])
    if direction == "right":
        return np.column_stack([left + along * (right - left), top + across * (bottom - top)])
    raise ValueError(f"direction must be 'down' or 'right', not {direction!r}")


@dataclass(frozen=True, eq=False)
class LabelPlacement:
    """Where a drawn tree's labels go, in pixels (x right, y down).

    ``node_boxes`` (m, 4) and ``edge_boxes`` (e, 4): (left, top, right, bottom) of each vertex's
    and each edge's label; ``conflicts``: how many labels could only be put where they cover
    another label, a vertex, the legend or leave the box (0 when every label fits);
    ``crossings``: how many labels an edge line passes through (drawn, but less readable).
    """

    node_boxes: np.ndarray
    edge_boxes: np.ndarray
    conflicts: int
    crossings: int
    #: (m,) True for a vertex label that could not sit next to its vertex (within
    #: :data:`NEAR_PX`, nearer to it than to any other vertex): drawn with a leader line.
    leaders: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _gaps(boxes: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Pixels between each box (n, 4) and each disc (m centres, radii): an (n, m) array, 0
    where they touch or overlap."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    cx, cy = centres[None, :, 0], centres[None, :, 1]
    dx = np.maximum(np.maximum(b[:, 0, None] - cx, cx - b[:, 2, None]), 0.0)
    dy = np.maximum(np.maximum(b[:, 1, None] - cy, cy - b[:, 3, None]), 0.0)
    gaps: np.ndarray = np.maximum(np.hypot(dx, dy) - radii[None, :], 0.0)
    return gaps


def _as_near_another(gaps: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Whether, for each row of ``gaps`` (boxes × vertices, :func:`_gaps`), a vertex other than
    the row's ``own`` is as near (within 2 px) as that one."""
    rows = np.arange(len(gaps))
    mine = gaps[rows, own]
    others = gaps.copy()
    others[rows, own] = np.inf
    near: np.ndarray = others.min(axis=1) <= mine + 2.0
    return near


def boxes_overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Overlap area of each box of ``a`` (n, 4) with each box of ``b`` (k, 4): an (n, k) array
    (boxes as left, top, right, bottom; touching boxes do not overlap)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    area: np.ndarray = np.clip(w, 0.0, None) * np.clip(h, 0.0, None)
    return area


#: An edge line through a label costs as much as this many pixels between label and vertex.
_CROSSING_PX = 35.0
#: A vertex label at most this many pixels from its vertex's disc sits "next to" it (and needs
#: no leader line) when no other vertex is as near.
NEAR_PX = 8.0
#: A label as near another vertex as its own (which vertex it names is a guess) costs as much
#: as this many pixels between label and vertex (issue 30: labels ~100 px from their vertex,
#: nearer a neighbour, on Adult at 1366 × 768).
_AMBIGUOUS_PX = 60.0
#: Points sampled along each edge to count the labels it passes through.
_EDGE_SAMPLES = 16


def _outside_area(boxes: np.ndarray, bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Area of each box outside ``bounds``."""
    inside = boxes_overlap(boxes, np.asarray(bounds, dtype=np.float64))[:, 0]
    outside: np.ndarray = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) - inside
    return outside


def place_tree_labels(
    points: np.ndarray,
    radii: np.ndarray,
    node_sizes: np.ndarray,
    edges: np.ndarray,
    edge_sizes: np.ndarray,
    bounds: tuple[float, float, float, float],
    *,
    node_sides: Sequence[Sequence[str]] | None = None,
    obstacles: np.ndarray | None = None,
    gap: float = 3.0,
) -> LabelPlacement:
    """Put each vertex's label beside its vertex and each edge's label on or beside its edge,
    covering no other label, no vertex and no ``obstacles`` (the legend), inside ``bounds``.

    Greedy, vertex labels first (in order), then edge labels (in order): each takes the first of
    its candidate places, in order of preference, that covers nothing; when none is free, the
    one covering the least area. A place that an edge line passes through is taken only when
    no free place avoids the lines.

    Parameters
    ----------
    points, radii
        (m, 2) pixel centres of the vertices (x right, y down) and their radii in pixels.
    node_sizes, edge_sizes
        (m, 2) and (e, 2) widths and heights of the labels in pixels.
    edges
        (e, 2) vertex positions of the edges.
    bounds
        (left, top, right, bottom) of the drawing; no label leaves it.
    node_sides
        Per vertex, the sides in order of preference among "below", "above", "right", "left"
        (default: below, above, right, left); the other places (corners, further out) follow.
    obstacles
        (k, 4) boxes nothing may cover (the legend).
    gap
        Pixels between a vertex and its label.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    r = np.asarray(radii, dtype=np.float64).reshape(-1)
    nsz = np.asarray(node_sizes, dtype=np.float64).reshape(-1, 2)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    esz = np.asarray(edge_sizes, dtype=np.float64).reshape(-1, 2)
    m, n_edges = len(pts), len(e)
    vertex_boxes = np.column_stack([pts - r[:, None], pts + r[:, None]]) if m else np.zeros((0, 4))
    fixed = [vertex_boxes]

    def _ambiguous(boxes: np.ndarray, own: int) -> np.ndarray:
        """Whether another vertex is as near each of ``boxes`` (within 2 px) as ``own``."""
        if m < 2:
            return np.zeros(len(boxes), dtype=bool)
        return _as_near_another(_gaps(boxes, pts, r), np.full(len(boxes), own))

    if obstacles is not None and len(obstacles):
        fixed.append(np.asarray(obstacles, dtype=np.float64).reshape(-1, 4))
    blocked = np.concatenate(fixed)
    n_vertex_rows = m
    # sample points along every edge, for the crossings
    t = np.linspace(0.08, 0.92, _EDGE_SAMPLES)
    if n_edges:
        a, b = pts[e[:, 0]], pts[e[:, 1]]
        samples = a[:, None, :] + t[None, :, None] * (b - a)[:, None, :]  # (e, s, 2)
    else:
        samples = np.zeros((0, _EDGE_SAMPLES, 2))

    def crossings(boxes: np.ndarray, skip_edge: int = -1) -> np.ndarray:
        if not n_edges:
            return np.zeros(len(boxes))
        sx, sy = samples[..., 0], samples[..., 1]  # (e, s)
        within = (
            (sx[None] > boxes[:, 0, None, None])
            & (sx[None] < boxes[:, 2, None, None])
            & (sy[None] > boxes[:, 1, None, None])
            & (sy[None] < boxes[:, 3, None, None])
        )
        inside = np.asarray(np.any(within, axis=2), dtype=bool)  # (candidates, edges)
        if skip_edge >= 0:
            inside[:, skip_edge] = False
        return np.asarray(inside.sum(axis=1), dtype=np.float64)

    placed: list[np.ndarray] = []
    conflicts = 0
    n_crossing = 0

    def choose(
        candidates: np.ndarray, home: np.ndarray, own_vertex: int = -1, own_edge: int = -1
    ) -> np.ndarray:
        nonlocal conflicts, n_crossing
        keep = np.ones(len(blocked), dtype=bool)
        if 0 <= own_vertex < n_vertex_rows:
            keep[own_vertex] = False  # its own vertex: touched at most, by construction
        others = np.concatenate([blocked[keep], *placed]) if placed else blocked[keep]
        # a pixel of air between labels
        padded = candidates + np.array([-1.0, -1.0, 1.0, 1.0])
        hard = boxes_overlap(padded, others).sum(axis=1) + _outside_area(candidates, bounds)
        if 0 <= own_vertex < n_vertex_rows:  # its own vertex may be touched, never covered
            hard += boxes_overlap(candidates, vertex_boxes[own_vertex]).sum(axis=1)
        cross = crossings(candidates, own_edge)
        # near its vertex (or its edge's middle), in the order of preference on a tie; an edge
        # line through a label costs as much as moving it _CROSSING_PX further away
        dx = np.clip(np.maximum(candidates[:, 0] - home[0], home[0] - candidates[:, 2]), 0, None)
        dy = np.clip(np.maximum(candidates[:, 1] - home[1], home[1] - candidates[:, 3]), 0, None)
        order = np.arange(len(candidates), dtype=np.float64)
        soft = np.hypot(dx, dy) + _CROSSING_PX * cross + 0.5 * order
        if 0 <= own_vertex < m:  # a vertex label as near another vertex names it ambiguously
            soft += _AMBIGUOUS_PX * _ambiguous(candidates, own_vertex)
        score = np.where(hard > 0.0, 1e9 + hard * 1e3, 0.0) + soft
        best = int(np.argmin(score))
        if hard[best] > 0.0:
            conflicts += 1
        if cross[best] > 0:
            n_crossing += 1
        box: np.ndarray = candidates[best]
        placed.append(box[None, :])
        return box

    default_sides = ("below", "above", "right", "left")
    node_boxes = np.zeros((m, 4))
    for i in range(m):
        (cx, cy), ri = pts[i], r[i]
        w, h = nsz[i]
        sides = list(node_sides[i]) if node_sides is not None else list(default_sides)
        sides += [s for s in default_sides if s not in sides]
        spots: list[tuple[float, float]] = []  # top-left corners
        d = ri + gap
        base = {
            "below": (cx - w / 2, cy + d),
            "above": (cx - w / 2, cy - d - h),
            "right": (cx + d, cy - h / 2),
            "left": (cx - d - w, cy - h / 2),
        }
        spots += [base[s] for s in sides]
        # corners, then along each side, then further out
        c = 0.7 * ri + gap
        spots += [
            (cx + c, cy + c),
            (cx + c, cy - c - h),
            (cx - c - w, cy + c),
            (cx - c - w, cy - c - h),
        ]
        for s in sides:
            x0, y0 = base[s]
            if s in ("below", "above"):
                spots += [(x0 + w / 2 - 6, y0), (x0 - w / 2 + 6, y0)]
            else:
                spots += [(x0, y0 - h / 2 - 2), (x0, y0 + h / 2 + 2)]
        for s in sides:
            x0, y0 = base[s]
            step = {"below": (0, h), "above": (0, -h), "right": (12, 0), "left": (-12, 0)}[s]
            spots += [(x0 + step[0] * f, y0 + step[1] * f) for f in (1.0, 2.0)]
        corners = np.array(spots)
        cand = np.column_stack([corners, corners + np.array([w, h])])
        node_boxes[i] = choose(cand, pts[i], own_vertex=i)

    edge_boxes = np.zeros((n_edges, 4))
    for j in range(n_edges):
        a, b = pts[e[j, 0]], pts[e[j, 1]]
        w, h = esz[j]
        direction = b - a
        length = float(np.hypot(*direction)) or 1.0
        normal = np.array([-direction[1], direction[0]]) / length
        # off the line: far enough that the box clears it whatever the edge's slope
        off = 0.5 * (abs(normal[0]) * w + abs(normal[1]) * h) + 3.0
        centres = []
        for tt in (0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78):
            centres.append(a + tt * direction)
        for tt in (0.5, 0.35, 0.65, 0.25, 0.75):
            centres += [a + tt * direction + off * normal, a + tt * direction - off * normal]
        cen = np.array(centres)
        cand = np.column_stack([cen - [w / 2, h / 2], cen + [w / 2, h / 2]])
        edge_boxes[j] = choose(cand, a + 0.5 * direction, own_edge=j)
    own = np.arange(m)
    gaps = _gaps(node_boxes, pts, r)
    leaders = gaps[own, own] > NEAR_PX
    if m >= 2:
        leaders |= _as_near_another(gaps, own)
    return LabelPlacement(node_boxes, edge_boxes, conflicts, n_crossing, leaders)


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
    #: A seeded random rank of each edge (a permutation of 0..n-1): the edges in view drawn
    #: first are those of lowest rank, so that zooming in only adds edges (:func:`edges_in_view`).
    rank: np.ndarray | None = None

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
    :data:`~microgui.core.methods.artifacts.SPANNING_TREE`: ``mst``, ``mstk``); None for other runs."""
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
        rank=np.random.default_rng(seed).permutation(len(edges)).astype(np.int64),
    )


@dataclass(frozen=True)
class ViewEdges:
    """The edges to draw for one view: ``indices`` (edge positions, increasing), how many edges
    have both ends in the view (``in_view``) and in the tree (``total``)."""

    indices: np.ndarray
    in_view: int
    total: int

    @property
    def sampled(self) -> bool:
        return len(self.indices) < self.in_view


def edges_in_view(
    layout: MstLayout,
    x: np.ndarray,
    y: np.ndarray,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    max_edges: int = MAX_VIEW_EDGES,
) -> ViewEdges:
    """The tree edges with both ends inside the view rectangle and, when more than
    ``max_edges``, the ``max_edges`` of them with the lowest :attr:`MstLayout.rank` (a seeded
    uniform sample, nested: a smaller view keeps the edges a larger one drew there).

    ``x``, ``y``: every record's coordinates on the plot's axes. Linear in the number of edges.

    >>> lay = MstLayout("mst", np.array([[0, 1], [1, 2]]), np.array([False, True]),
    ...                 np.array([0, -1]), edge_sample(np.array([False, True])), np.array([1, 0]))
    >>> v = edges_in_view(lay, np.array([0., 1., 5.]), np.zeros(3), (-1., 2.), (-1., 1.))
    >>> (v.indices.tolist(), v.in_view, v.total)
    ([0], 1, 2)
    """
    edges = layout.edges
    (x0, x1), (y0, y1) = x_range, y_range
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)  # NaN: outside
    both = inside[edges[:, 0]] & inside[edges[:, 1]] if len(edges) else np.zeros(0, dtype=bool)
    candidates = np.flatnonzero(both)
    in_view = len(candidates)
    limit = max(int(max_edges), 0)
    if in_view > limit:
        rank = layout.rank if layout.rank is not None else np.arange(len(edges))
        keep = np.argpartition(rank[candidates], limit)[:limit] if limit else candidates[:0]
        candidates = np.sort(candidates[keep])
    return ViewEdges(candidates.astype(np.int64), in_view, len(edges))


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
