"""Entropy, the mutual-information distance and the best dependency tree (``000`` §3.1-3.2).

Sun, Wang, Li & Zhang, ``000_d23cf301593eeda4.txt``:

- entropy H(A) = -sum_x P(A=x) log2 P(A=x) and joint entropy H(A,B) (§3.1, log base 2);
- conditional entropy H(A|B) = H(A,B) - H(B) (Proposition 1(2)). The paper's example writes
  H(A1|A2) = H(A1,A2) - H(A1); by Proposition 1 that difference is H(A2|A1) (0.6363 on Table 1;
  H(A1|A2) = 0.7433). The distance below is symmetric, so this slip does not affect it;
- the distance MI(A,B) = H(A|B) + H(B|A) = 2 H(A,B) - H(A) - H(B) (Definition 2, the "variation of
  information": 0 iff A and B determine each other, H(A) + H(B) iff they are independent);
- the dependency matrix D = (MI(Ai, Aj)) (Definition 3) and the best dependency tree, its minimum
  spanning tree by Kruskal (Algorithm 1);
- the key attributes by vertex degree (Definitions 4 and 5): sort the vertices by decreasing degree
  d1 >= d2 >= ... >= dm and take v1..vN for the N with d1 + ... + d(N-1) < m <= d1 + ... + dN.

**Values to categories.** Entropies are plug-in estimates from the frequencies of the records.
Ordinal and nominal attributes are used as they are: each value is a category. Continuous
attributes are cut into ``bins`` equal-frequency bins (default :data:`DEFAULT_BINS` = 10, deciles):
the distinct values are sorted and a value goes to bin floor(mid_rank * bins / n), mid_rank being
the middle of the ranks its copies occupy, so equal values always share a bin and bins that heavy
ties leave empty are dropped; a column with at most ``bins`` distinct values keeps one category per
value. Why 10: the paper's own data (§4, Table 4) are discrete with 2 to 83 values per attribute,
and 10 bins put a continuous attribute in the middle of that range (H <= log2 10 = 3.32 bits), so it
is neither favoured nor penalized by an arbitrary resolution; equal frequency keeps every bin
populated (equal-width bins leave skewed income-like data in one or two bins); and the plug-in
estimate of a pair's joint entropy over 10 x 10 cells is biased by about (cells - 1) / (2 n ln 2)
bits, below 0.01 bit from n ~ 7,000 records on. Change it with ``--param bins=N``.

**Open points of the paper, and the choices made here:**

- *Constant attributes* (H = 0). MI(C, B) = H(B) for a constant C, which is at most MI(A, B) for
  most A, so a constant attribute would be a spurious hub of the tree, chosen as a key attribute
  although it cannot tell two records apart. Constant attributes are therefore kept in the matrix
  (row = the entropies of the others) but left out of the tree: they are isolated vertices of degree
  0 and are never key attributes. ``m`` in Definition 5 counts the attributes of the tree.
- *Ties in the matrix.* Kruskal takes edges by increasing weight; equal weights (compared after
  rounding to 9 decimals, so floating-point noise between equal entropies does not decide) are taken
  in attribute order: (i, j) before (i', j') when i < i', or i = i' and j < j', positions in the
  order the attributes were given. Entropies are summed over sorted frequencies, so two attributes
  with the same distribution of values get bit-identical entropies.
- *Ties in degrees.* Vertices of equal degree are ranked in attribute order (the order of the
  quasi-identifiers): reorder the attributes to prefer another one.
- *One attribute* (or one non-constant attribute): it is the key attribute (Definition 5 selects
  nothing from a tree without edges).
- *Two attributes*: the tree is one edge, degrees 1 and 1, and Definition 5 selects both.
- *Three attributes*: the tree is a path; Definition 5 selects its middle vertex (degree 2) and one
  end (degree 1), the first end in attribute order.
- *Every attribute constant*: no key attribute (any grouping of the records leaves them unchanged).
- *Theorem 2* states 2 <= N <= m/2. The lower bound holds for m >= 2 (d1 <= m - 1 < m). The upper
  bound holds for even m, but for odd m the rule can select (m + 1)/2 attributes (a path of 5
  vertices has degrees 2, 2, 2, 1, 1: 2 + 2 < 5, so N = 3), and for m = 3 it selects 2 > 3/2.
  In general N <= ceil(m/2) (the larger half of the degrees sums to at least m when m >= 3).
- The paper's Figure 2 (right) draws A5 attached to A2 (deg(A2) = 4, deg(A3) = 2). Kruskal on its
  own matrix attaches A5 to A3 (1.6217 < 1.6680), giving deg(A2) = deg(A3) = 3; the key attributes
  are {A2, A3} either way. Its printed MI(A2, A5) = 1.6681 is 1.66800 to five places.

**Speed.** An attribute is reduced to int64 codes once (``np.unique``/``pd.factorize``); a pair's
joint frequencies are one ``np.bincount`` of the combined codes a * |B| + b (``np.unique`` when
|A||B| is large). 500,000 records x 9 attributes take well under a second.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.dataset import Dataset, QIMatrix, prepare_qi
from microgui.core.table.roles import (
    AttributeKind,
    AttributeRole,
    ColumnSpec,
    RoleMap,
    resolve_columns,
)

__all__ = [
    "DEFAULT_BINS",
    "DependencyTree",
    "equal_frequency_codes",
    "category_codes",
    "entropy",
    "joint_entropy",
    "conditional_entropy",
    "mi_distance",
    "dependency_matrix",
    "best_dependency_tree",
    "choose_key_attributes",
    "tree_from_codes",
    "qi_codes",
    "dependency_tree",
    "dependency_tree_of_qi",
]

#: Default number of equal-frequency bins of a continuous attribute (see the module docstring).
DEFAULT_BINS = 10

#: Decimals kept when ordering Kruskal's edges, so that float noise never breaks a true tie.
_TIE_DECIMALS = 9

_STATUS = "dependency tree"


@dataclass(frozen=True, eq=False)  # holds an array: compared by identity
class DependencyTree:
    """The best dependency tree of a set of attributes (``000`` §3.2, Algorithm 1, Definition 5).

    ``attributes``: names in the order given (the order of the matrix rows and of every tie rule);
    ``matrix``: the (m, m) dependency matrix MI(Ai, Aj) in bits; ``edges``: the tree's edges
    ``(a, b, weight)`` in the order Kruskal took them, ``a`` before ``b`` in attribute order;
    ``degrees``: degree of every attribute in the tree (0 for a constant attribute);
    ``key_attributes``: chosen by Definition 5, in rank order (decreasing degree, then attribute
    order); ``entropies``: H(A) in bits; ``constant_attributes``: those left out of the tree;
    ``bins``: bins used for continuous attributes.
    """

    attributes: tuple[str, ...]
    matrix: np.ndarray
    edges: list[tuple[str, str, float]]
    degrees: dict[str, int]
    key_attributes: list[str]
    entropies: dict[str, float]
    constant_attributes: list[str] = field(default_factory=list)
    bins: int = DEFAULT_BINS

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``microgui dependency-tree --json``): plain lists, dicts and floats."""
        return {
            "attributes": list(self.attributes),
            "matrix": [[float(v) for v in row] for row in self.matrix],
            "edges": [[a, b, float(w)] for a, b, w in self.edges],
            "degrees": {a: int(d) for a, d in self.degrees.items()},
            "key_attributes": list(self.key_attributes),
        }


# --------------------------------------------------------------------------------------------
# values to codes
# --------------------------------------------------------------------------------------------


def equal_frequency_codes(values: np.ndarray, bins: int = DEFAULT_BINS) -> np.ndarray:
    """Codes 0..c-1 (c <= bins) of ``bins`` equal-frequency bins of a numeric column.

    A distinct value goes to bin floor(mid_rank * bins / n) (mid_rank: the middle of the ranks its
    copies occupy), so equal values share a bin; empty bins are dropped. At most ``bins`` distinct
    values: one code per value, in increasing order.

    >>> equal_frequency_codes(np.array([5.0, 1.0, 1.0, 3.0]), 2).tolist()
    [1, 0, 0, 1]
    """
    if bins < 2:
        raise InvalidParameter(f"bins={bins} must be at least 2")
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    uniq, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    if len(uniq) <= bins:
        return inverse
    mid = np.cumsum(counts) - counts / 2.0
    bin_of = np.minimum((mid * bins / len(x)).astype(np.int64), bins - 1)
    _, compact = np.unique(bin_of, return_inverse=True)
    return np.asarray(compact.reshape(-1), dtype=np.int64)[inverse]


def category_codes(values: np.ndarray | pd.Series) -> np.ndarray:
    """Codes 0..c-1 of the distinct values of a column (each value one category)."""
    codes, _ = pd.factorize(pd.Series(values) if not isinstance(values, pd.Series) else values)
    return np.asarray(codes, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# entropies
# --------------------------------------------------------------------------------------------


def _entropy_of_counts(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0]
    if n == 0 or len(c) <= 1:
        return 0.0
    # Sorted, so equal frequency multisets give bit-identical entropies (ties stay ties).
    c = np.sort(c).astype(np.float64)
    return float(np.log2(n) - np.dot(c, np.log2(c)) / n)


def _cardinality(codes: np.ndarray) -> int:
    return int(codes.max()) + 1 if len(codes) else 1


def entropy(codes: np.ndarray) -> float:
    """H(A) in bits of integer codes (``000`` §3.1); 0 for a constant or empty column."""
    a = np.asarray(codes, dtype=np.int64).reshape(-1)
    return _entropy_of_counts(np.bincount(a), len(a)) if len(a) else 0.0


def _joint_counts(a: np.ndarray, b: np.ndarray, size_a: int, size_b: int) -> np.ndarray:
    combined = a * size_b + b
    cells = size_a * size_b
    if cells <= max(4 * len(a), 1 << 16):
        return np.bincount(combined, minlength=cells)
    return np.unique(combined, return_counts=True)[1]


def joint_entropy(a: np.ndarray, b: np.ndarray) -> float:
    """H(A, B) in bits of two integer code columns of equal length."""
    a = np.asarray(a, dtype=np.int64).reshape(-1)
    b = np.asarray(b, dtype=np.int64).reshape(-1)
    if len(a) != len(b):
        raise ValueError("the two columns differ in length")
    if not len(a):
        return 0.0
    return _entropy_of_counts(_joint_counts(a, b, _cardinality(a), _cardinality(b)), len(a))


def conditional_entropy(a: np.ndarray, given: np.ndarray) -> float:
    """H(A | B) = H(A, B) - H(B) (``000`` Proposition 1(2)); B is ``given``."""
    return max(joint_entropy(a, given) - entropy(given), 0.0)


def mi_distance(a: np.ndarray, b: np.ndarray) -> float:
    """MI(A, B) = H(A|B) + H(B|A) = 2 H(A,B) - H(A) - H(B) (``000`` Definition 2)."""
    return max(2.0 * joint_entropy(a, b) - (entropy(a) + entropy(b)), 0.0)


def dependency_matrix(
    codes: Sequence[np.ndarray], *, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, np.ndarray]:
    """The dependency matrix (``000`` Definition 3) and the entropies of integer code columns.

    Returns ``(matrix, entropies)``: ``matrix[i, j] = MI(Ai, Aj)``, symmetric, zero diagonal.
    ``progress`` is called after each pair (it may raise ``RunCancelled``).
    """
    cols = [np.ascontiguousarray(c, dtype=np.int64).reshape(-1) for c in codes]
    m = len(cols)
    n = len(cols[0]) if m else 0
    if any(len(c) != n for c in cols):
        raise ValueError("the code columns differ in length")
    sizes = [_cardinality(c) for c in cols]
    h = np.array([_entropy_of_counts(np.bincount(c), n) if n else 0.0 for c in cols])
    matrix = np.zeros((m, m), dtype=np.float64)
    pairs = m * (m - 1) // 2
    done = 0
    progress(0.0, _STATUS)
    for i in range(m):
        for j in range(i + 1, m):
            if sizes[i] == 1 or sizes[j] == 1 or n == 0:
                # A constant column: H(A, C) = H(A), MI = H(A) exactly.
                hij = max(h[i], h[j])
            else:
                hij = _entropy_of_counts(_joint_counts(cols[i], cols[j], sizes[i], sizes[j]), n)
            matrix[i, j] = matrix[j, i] = max(2.0 * hij - (h[i] + h[j]), 0.0)
            done += 1
            progress(done / pairs, _STATUS)
    return matrix, h


# --------------------------------------------------------------------------------------------
# tree and key attributes
# --------------------------------------------------------------------------------------------


def best_dependency_tree(
    matrix: np.ndarray, vertices: Sequence[int] | None = None
) -> list[tuple[int, int, float]]:
    """Kruskal's minimum spanning tree of the dependency matrix (``000`` Algorithm 1).

    ``vertices``: the positions to span (default all), in attribute order. Returns the edges
    ``(i, j, weight)`` with i < j, in the order Kruskal took them. Ties (equal weights to
    ``_TIE_DECIMALS`` decimals) go in attribute order of (i, j), as the module docstring says.
    """
    w = np.asarray(matrix, dtype=np.float64)
    verts = list(range(w.shape[0])) if vertices is None else sorted(int(v) for v in vertices)
    graph = nx.Graph()
    graph.add_nodes_from(verts)
    # networkx sorts the edges by weight with Python's stable sort, in the graph's edge order,
    # which is this insertion order: (i, j) lexicographic in attribute order.
    for a, i in enumerate(verts):
        for j in verts[a + 1 :]:
            graph.add_edge(i, j, key=round(float(w[i, j]), _TIE_DECIMALS), weight=float(w[i, j]))
    tree = nx.minimum_spanning_edges(graph, algorithm="kruskal", weight="key", data=True)
    return [(min(u, v), max(u, v), float(d["weight"])) for u, v, d in tree]


def choose_key_attributes(degrees: Sequence[int]) -> list[int]:
    """Positions of the key attributes by ``000`` Definition 5, in rank order.

    Vertices are ranked by decreasing degree, equal degrees in position order; with
    m = len(degrees), the first N are taken where N is the smallest count whose degrees sum to at
    least m (so the first N-1 sum to less than m). A single vertex is its own key attribute.
    """
    m = len(degrees)
    if m == 0:
        return []
    if m == 1:
        return [0]
    ranked = sorted(range(m), key=lambda i: (-int(degrees[i]), i))
    total = 0
    for count, i in enumerate(ranked, start=1):
        total += int(degrees[i])
        if total >= m:
            return ranked[:count]
    return ranked  # not reached for a tree: its degrees sum to 2(m - 1) >= m


def tree_from_codes(
    attributes: Sequence[str],
    codes: Sequence[np.ndarray],
    *,
    bins: int = DEFAULT_BINS,
    progress: ProgressFn = no_progress,
) -> DependencyTree:
    """The :class:`DependencyTree` of attributes already reduced to integer codes.

    ``bins`` is only recorded (the codes are already discrete). See the module docstring for
    constant attributes and tie rules.
    """
    names = tuple(str(a) for a in attributes)
    if len(names) != len(codes):
        raise ValueError("one code column per attribute is needed")
    matrix, h = dependency_matrix(codes, progress=progress)
    varying = [i for i, c in enumerate(codes) if not _is_constant(c)]
    edges = best_dependency_tree(matrix, varying)
    degree = [0] * len(names)
    for i, j, _ in edges:
        degree[i] += 1
        degree[j] += 1
    keys = [varying[p] for p in choose_key_attributes([degree[i] for i in varying])]
    varying_set = set(varying)
    return DependencyTree(
        attributes=names,
        matrix=matrix,
        edges=[(names[i], names[j], w) for i, j, w in edges],
        degrees={names[i]: degree[i] for i in range(len(names))},
        key_attributes=[names[i] for i in keys],
        entropies={names[i]: float(h[i]) for i in range(len(names))},
        constant_attributes=[names[i] for i in range(len(names)) if i not in varying_set],
        bins=int(bins),
    )


def _is_constant(codes: np.ndarray) -> bool:
    c = np.asarray(codes)
    return len(c) == 0 or bool((c == c[0]).all())


# --------------------------------------------------------------------------------------------
# from a table
# --------------------------------------------------------------------------------------------


def qi_codes(qi: QIMatrix, attributes: Sequence[str], bins: int = DEFAULT_BINS) -> list[np.ndarray]:
    """Integer codes of quasi-identifiers from their :class:`QIMatrix` form, in ``attributes`` order.

    Continuous: equal-frequency bins of the z-scores (an increasing transform of the values, so the
    same bins); ordinal: the category ranks; nominal: the category codes.
    """
    out: list[np.ndarray] = []
    for name in attributes:
        if name in qi.continuous_names:
            out.append(
                equal_frequency_codes(qi.continuous[:, qi.continuous_names.index(name)], bins)
            )
        elif name in qi.ordinal_names:
            out.append(category_codes(qi.ordinal[:, qi.ordinal_names.index(name)]))
        elif name in qi.nominal_names:
            out.append(np.asarray(qi.nominal[:, qi.nominal_names.index(name)], dtype=np.int64))
        else:
            raise KeyError(name)
    return out


def dependency_tree_of_qi(
    qi: QIMatrix,
    attributes: Sequence[str],
    *,
    bins: int = DEFAULT_BINS,
    progress: ProgressFn = no_progress,
) -> DependencyTree:
    """The dependency tree of quasi-identifiers already prepared by :func:`prepare_qi`."""
    if bins < 2:
        raise InvalidParameter(f"bins={bins} must be at least 2")
    return tree_from_codes(attributes, qi_codes(qi, attributes, bins), bins=bins, progress=progress)


def _looks_numeric(series: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    text = series.dropna().astype("string").str.strip()
    return bool(len(text)) and bool(pd.to_numeric(text, errors="coerce").notna().all())


def dependency_tree(
    frame: pd.DataFrame,
    attributes: Sequence[str],
    *,
    bins: int = DEFAULT_BINS,
    kinds: Mapping[str, AttributeKind] | None = None,
    progress: ProgressFn = no_progress,
) -> DependencyTree:
    """The best dependency tree and key attributes of ``attributes`` of ``frame`` (``000`` §3.2).

    Parameters
    ----------
    frame
        The table (not modified).
    attributes
        Distinct column names; their order is the matrix order and decides ties.
    bins
        Equal-frequency bins of a continuous attribute (>= 2).
    kinds
        Kind of each attribute. Missing (or None): a column whose every value is a number is
        continuous, any other is nominal. Ordinal and nominal values are categories.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled`.

    Raises
    ------
    InvalidRoles
        No attribute, a repeated one, or one that is not a column of ``frame``.
    InvalidParameter
        ``bins`` < 2.
    InvalidInput
        A missing value, or a non-number in a continuous attribute (as for a protection run).
    """
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 2:
        raise InvalidParameter(
            f"bins={bins!r} must be a whole number, at least 2 (equal-frequency bins per "
            "continuous attribute)"
        )
    names = [str(a) for a in attributes]
    if not names:
        raise InvalidRoles("no attribute given; name at least one column")
    # matched like every user-given column name: exact, else unique after normalisation
    names = resolve_columns(names, [str(c) for c in frame.columns], "--attributes")
    if len(set(names)) != len(names):
        twice = next(a for a in names if names.count(a) > 1)
        raise InvalidRoles(f"attribute {twice!r} is named twice")
    kinds = dict(kinds or {})
    wanted = set(names)  # once: per column it was quadratic
    sub = frame.loc[:, [c for c in frame.columns if str(c) in wanted]]
    sub.columns = [str(c) for c in sub.columns]
    specs = {}
    for name in sub.columns:
        kind = kinds.get(name)
        if kind is None:
            kind = AttributeKind.CONTINUOUS if _looks_numeric(sub[name]) else AttributeKind.NOMINAL
        specs[name] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind(kind))
    qi = prepare_qi(Dataset(sub, RoleMap.from_dict(specs)))
    return dependency_tree_of_qi(qi, names, bins=bins, progress=progress)
