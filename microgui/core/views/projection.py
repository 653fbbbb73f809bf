"""Two-dimensional views of the quasi-identifiers, for the app's plots.

Plain numpy (and pandas for reading released values), no Qt: the app computes the projection
and the transition tables in its run worker, never in the GUI thread.

**Projection: PCA on the embedding of the mixed distance.** Every quasi-identifier, whatever
its kind, is mapped to coordinates whose squared Euclidean distance is exactly the distance
MDAV-generic partitions with (``003_309fe4adb430bc25.txt`` §5.2-5.4, as built in
:mod:`microgui.core.methods.mdav`)::

    continuous  z-score                                   (z_x - z_y)^2               §5.2
    ordinal     rank / |D(V)|                             d_ORD(x, y)^2, eq. (1)      §5.3
    nominal     one indicator per category, times 1/√2    [x != y]  (½ + ½)           §5.4

and the plane shown is spanned by the first two principal components of these coordinates
(:func:`mixed_pca`). So PC1/PC2 are the best least-squares picture of the geometry the method
partitions, in its own distance units, and with only continuous quasi-identifiers they are the
PCA of their z-scores, as before. We chose this over a factor analysis of mixed data (FAMD):
FAMD weights each category indicator by 1/p (the χ² metric), which blows rare categories up
and is not the distance any microgui method uses. A nominal attribute contributes its
indicators' variance Σ p(1-p)/2 ≤ ½ to the total, an ordinal one at most ¼, a continuous one
1: the "% of variance" of a component is its share of that total inertia.

The protected records are embedded with the original's scaling and projected on the original's
components, so an original record and its group's aggregate are compared on the same axes.
A released value that is not a category of the original (a generalized value such as an
interval or ``*``) has no place in the embedding: its record's coordinates are NaN.

**Category axes** (:func:`category_axis`): an ordinal quasi-identifier in its declared order, a
nominal one by decreasing frequency of the original records (ties alphabetical), so that the
bulk of the data sits together; slot i of the axis is the i-th category. :func:`category_jitter`
spreads the records of a slot over ±0.35 around it, seeded and per column.

**Transitions** (:func:`transition_table`, :func:`category_transitions`): for a categorical
quasi-identifier, how many records of each original category were released with each
category, as a table of counts.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microgui.core.references import readable
from microgui.core.runs.spec import RunResult
from microgui.core.table.aggregate import protected_continuous_z
from microgui.core.table.dataset import QIMatrix

__all__ = [
    "PCA2",
    "pca_2d",
    "QIProjection",
    "PairMoves",
    "qi_projection",
    "numeric_qi_matrix",
    "NOMINAL_WEIGHT",
    "JITTER",
    "MissingCategory",
    "MixedEmbedding",
    "MixedPCA",
    "mixed_pca",
    "protected_codes",
    "CategoryAxis",
    "category_axis",
    "categorical_qi_names",
    "category_jitter",
    "transition_table",
    "category_transitions",
    "all_category_transitions",
    "unchanged_share",
    "PC1",
    "PC2",
    "VIEW_QUANTILE",
    "plot_axis_choices",
    "default_axes",
    "SPAN_SAMPLE",
    "tail_quantiles",
    "released_numbers",
]

#: Weight of each category indicator of a nominal quasi-identifier in the embedding: records
#: with different categories differ in two indicators, (1/√2)² + (1/√2)² = 1, the equality
#: distance of ``003`` §5.4; equal categories differ in none.
NOMINAL_WEIGHT = float(1.0 / np.sqrt(2.0))
#: Records of one category are spread uniformly over ±JITTER around its slot: bands of 0.7 with
#: gaps of 0.3 between neighbouring categories, so that no record looks like the next category.
JITTER = 0.35
#: Up to this many embedding coordinates the covariance matrix is formed and diagonalized
#: (at most 18 MB, well under a second); above (nominal attributes with thousands of
#: categories), the two components are found by subspace iteration without forming it.
MAX_DENSE_DIM = 1500
#: Subspace iterations at most (each one product with the covariance through the records).
MAX_ITERATIONS = 300
#: The label of missing cells on a category axis and in a transition table.
MISSING_LABEL = "(missing)"


@dataclass(frozen=True)
class PairMoves:
    """How far protection moved each record on one pair of plot axes, and the classes that
    colour it: computed in the run's worker with the projection, so that the plot showing the
    run only indexes brushes with them (issue 30).

    ``distance`` is :func:`~microgui.core.views.moves.distance_moved` of the two axes' moves, ``classes`` its
    :func:`~microgui.core.views.moves.move_classes`, ``group_classes`` the class of each group's mean distance
    (:func:`~microgui.core.views.moves.group_mean_moves`; indexed by label) and ``class_counts`` the records per class.
    """

    axes: tuple[str, str]
    distance: np.ndarray
    classes: np.ndarray
    group_classes: np.ndarray
    class_counts: np.ndarray


@dataclass(frozen=True)
class PCA2:
    """A fitted two-component PCA: ``transform(x) = (x - mean) @ components.T``.

    ``explained_ratio`` is each component's share of the total variance (0 when there is none).
    With a single input column the second component is all zeros.
    """

    mean: np.ndarray
    components: np.ndarray
    explained_ratio: np.ndarray

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Scores (n, 2) of the rows of ``x`` (n, d)."""
        scores: np.ndarray = (np.asarray(x, dtype=np.float64) - self.mean) @ self.components.T
        return scores


def pca_2d(x: np.ndarray) -> PCA2:
    """Fit the first two principal components of ``x`` (n, d), d >= 1.

    Uses the d × d covariance matrix (O(n·d²)), so a million rows take well under a second.
    Component signs are fixed so that the largest loading of each component is positive, which
    keeps the picture stable from one run to the next.

    >>> p = pca_2d(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    >>> np.round(p.explained_ratio, 6).tolist()
    [1.0, 0.0]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError("pca_2d needs a 2-D array with at least one column")
    n, d = x.shape
    mean = x.mean(axis=0) if n else np.zeros(d)
    centred = x - mean
    cov = centred.T @ centred / max(n - 1, 1)
    eigval, eigvec = np.linalg.eigh(cov)
    order = np.argsort(eigval)[::-1]
    eigval = np.clip(eigval[order], 0.0, None)
    eigvec = eigvec[:, order]
    components = np.zeros((2, d))
    m = min(2, d)
    components[:m] = eigvec[:, :m].T
    for i in range(m):
        if components[i, np.argmax(np.abs(components[i]))] < 0:
            components[i] = -components[i]
    total = float(eigval.sum())
    ratio = np.zeros(2)
    if total > 0:
        ratio[:m] = eigval[:m] / total
    return PCA2(mean=mean, components=components, explained_ratio=ratio)


def _standardize(values: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    out: np.ndarray = (values - mean) / std
    return out


def numeric_qi_matrix(qi: QIMatrix) -> tuple[np.ndarray, tuple[str, ...], np.ndarray, np.ndarray]:
    """The numeric quasi-identifiers as one (n, d) matrix: continuous z-scores, then ordinal ranks
    standardized. Returns the matrix, its column names and the ordinal ranks' mean and std (to
    put protected ranks on the same scale)."""
    ranks = qi.ordinal.astype(np.float64)
    r_mean = ranks.mean(axis=0) if len(ranks) else np.zeros(ranks.shape[1])
    r_std = ranks.std(axis=0, ddof=1) if len(ranks) > 1 else np.ones(ranks.shape[1])
    r_std = np.where(r_std > 0, r_std, 1.0)
    matrix = np.hstack([qi.continuous, _standardize(ranks, r_mean, r_std)])
    return matrix, qi.continuous_names + qi.ordinal_names, r_mean, r_std


class MissingCategory:
    """Stands for a missing cell among the categories of an axis or transition table."""

    def __repr__(self) -> str:
        return MISSING_LABEL

    def __str__(self) -> str:
        return MISSING_LABEL


_MISSING = MissingCategory()


# --------------------------------------------------------------------------------------------
# the embedding of the mixed distance and its PCA
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixedEmbedding:
    """Coordinates whose squared Euclidean distance is MDAV-generic's distance (module docstring).

    Coordinate order: the continuous z-scores, the ordinal ranks over |D(V)|, then for each
    nominal attribute one indicator per category (in the order of ``nominal_categories``),
    times :data:`NOMINAL_WEIGHT`.
    """

    continuous_names: tuple[str, ...]
    ordinal_names: tuple[str, ...]
    ordinal_sizes: tuple[int, ...]
    nominal_names: tuple[str, ...]
    nominal_categories: tuple[tuple[object, ...], ...]

    @classmethod
    def of(cls, qi: QIMatrix) -> MixedEmbedding:
        """The embedding of a run's quasi-identifiers."""
        return cls(
            continuous_names=qi.continuous_names,
            ordinal_names=qi.ordinal_names,
            ordinal_sizes=tuple(int(s) for s in qi.ordinal_sizes),
            nominal_names=qi.nominal_names,
            nominal_categories=qi.nominal_categories,
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The quasi-identifiers embedded."""
        return self.continuous_names + self.ordinal_names + self.nominal_names

    @property
    def n_numeric(self) -> int:
        """Coordinates of the continuous and ordinal attributes (one each)."""
        return len(self.continuous_names) + len(self.ordinal_names)

    @property
    def nominal_sizes(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.nominal_categories)

    @property
    def dim(self) -> int:
        """Number of coordinates."""
        return self.n_numeric + sum(self.nominal_sizes)

    @property
    def all_continuous(self) -> bool:
        return not self.ordinal_names and not self.nominal_names

    @property
    def columns(self) -> tuple[str, ...]:
        """A name per coordinate: ``age``, ``education/|D|``, ``sex=Male``."""
        nominal = tuple(
            f"{name}={category}"
            for name, cats in zip(self.nominal_names, self.nominal_categories, strict=True)
            for category in cats
        )
        return self.continuous_names + tuple(f"{o}/|D|" for o in self.ordinal_names) + nominal

    def numeric_block(self, continuous: np.ndarray, ordinal: np.ndarray) -> np.ndarray:
        """The continuous z-scores and the ordinal ranks over |D(V)| as one (n, n_numeric) block
        (ranks may be float with NaN for values outside the order)."""
        continuous = np.asarray(continuous, dtype=np.float64)
        ranks = np.asarray(ordinal, dtype=np.float64)
        continuous = continuous.reshape(len(continuous), len(self.continuous_names))
        ranks = ranks.reshape(len(ranks), len(self.ordinal_names))
        sizes = np.asarray(self.ordinal_sizes, dtype=np.float64)
        block: np.ndarray = np.hstack([continuous, ranks / np.where(sizes > 0, sizes, 1.0)])
        return block

    def matrix(
        self, continuous: np.ndarray, ordinal: np.ndarray, nominal: np.ndarray
    ) -> np.ndarray:
        """The full (n, dim) coordinates. Negative nominal codes (a value that is no category of
        the original) make the record's row NaN. Builds the one-hot blocks: for tests and small
        tables; :func:`mixed_pca` never forms it."""
        numeric = self.numeric_block(continuous, ordinal)
        n = numeric.shape[0]
        codes = np.asarray(nominal, dtype=np.int64).reshape(n, len(self.nominal_names))
        parts = [numeric]
        unknown = np.zeros(n, dtype=bool)
        for j, size in enumerate(self.nominal_sizes):
            block = np.zeros((n, size))
            ok = codes[:, j] >= 0
            block[np.flatnonzero(ok), codes[ok, j]] = NOMINAL_WEIGHT
            unknown |= ~ok
            parts.append(block)
        out = np.hstack(parts)
        out[unknown] = np.nan
        return out


@dataclass(frozen=True)
class MixedPCA:
    """The first two principal components of a :class:`MixedEmbedding` of the original records.

    ``mean`` (dim,) and ``components`` (2, dim) are in the embedding's coordinates;
    ``explained_ratio`` is each component's share of ``total_variance``, the sum of the
    coordinates' variances (the inertia of the mixed distance, divided by n - 1).
    """

    embedding: MixedEmbedding
    mean: np.ndarray
    components: np.ndarray
    explained_ratio: np.ndarray
    total_variance: float

    def transform(
        self, continuous: np.ndarray, ordinal: np.ndarray, nominal: np.ndarray
    ) -> np.ndarray:
        """Scores (n, 2) of records given as the z-scores (n, dc), ordinal ranks (n, do; float
        with NaN allowed) and nominal codes (n, dn; negative: not a category, NaN scores)."""
        emb = self.embedding
        numeric = emb.numeric_block(continuous, ordinal)
        m = emb.n_numeric
        scores: np.ndarray = (numeric - self.mean[:m]) @ self.components[:, :m].T
        codes = np.asarray(nominal, dtype=np.int64).reshape(len(numeric), len(emb.nominal_names))
        offset = m
        for j, size in enumerate(emb.nominal_sizes):
            comp = self.components[:, offset : offset + size]  # (2, size)
            mean = self.mean[offset : offset + size]
            # each category's contribution to the scores, centring included: (size, 2)
            per_category = NOMINAL_WEIGHT * comp.T - comp @ mean
            col = codes[:, j]
            ok = col >= 0
            scores += per_category[np.where(ok, col, 0)]
            scores[~ok] = np.nan
            offset += size
        return scores


def _nominal_weights(values: np.ndarray, codes: np.ndarray, size: int) -> np.ndarray:
    """Sums of the columns of ``values`` (n, b) per category: (size, b)."""
    out = np.empty((size, values.shape[1]))
    for c in range(values.shape[1]):
        out[:, c] = np.bincount(codes, weights=values[:, c], minlength=size)
    return out


def _signed(components: np.ndarray) -> np.ndarray:
    """Each component with its largest loading positive (a stable picture run to run)."""
    for i in range(len(components)):
        if components[i, np.argmax(np.abs(components[i]))] < 0:
            components[i] = -components[i]
    return components


def mixed_pca(qi: QIMatrix, *, max_dense_dim: int = MAX_DENSE_DIM) -> MixedPCA:
    """PCA of the original records in the embedding of the mixed distance (module docstring).

    The covariance of the embedding is assembled block by block without forming the one-hot
    matrix: continuous/ordinal cross products by a matrix product, their sums per category and
    the category co-occurrence counts by ``bincount`` (O(n·d²) for d attributes, not for d
    coordinates). Up to ``max_dense_dim`` coordinates it is diagonalized exactly (with only
    continuous attributes this is :func:`pca_2d` of their z-scores, bit for bit); above, the two
    leading components come from subspace iteration on products with the implicit matrix.
    Component signs: the largest loading is positive.
    """
    emb = MixedEmbedding.of(qi)
    if emb.dim == 0:
        raise ValueError("mixed_pca needs at least one quasi-identifier")
    numeric = emb.numeric_block(qi.continuous, qi.ordinal)
    n = numeric.shape[0]
    codes = [np.asarray(qi.nominal[:, j], dtype=np.intp) for j in range(len(emb.nominal_names))]
    sizes = emb.nominal_sizes
    m = emb.n_numeric
    offsets = np.cumsum((m, *sizes))
    w = NOMINAL_WEIGHT
    num_mean = numeric.mean(axis=0) if n else np.zeros(m)
    centred = numeric - num_mean
    counts = [
        np.bincount(c, minlength=s).astype(np.float64) for c, s in zip(codes, sizes, strict=True)
    ]
    nom_means = [w * cnt / max(n, 1) for cnt in counts]
    mean = np.concatenate([num_mean, *nom_means])
    scale = 1.0 / max(n - 1, 1)
    variances = np.concatenate(
        [
            (centred * centred).sum(axis=0) * scale,
            *[
                (w * w * cnt - n * nm * nm) * scale
                for cnt, nm in zip(counts, nom_means, strict=True)
            ],
        ]
    )
    total = float(variances.sum())
    d = emb.dim

    if d <= max_dense_dim:
        cov = np.zeros((d, d))
        cov[:m, :m] = centred.T @ centred
        col_sums = centred.sum(axis=0)
        for j, (c, size) in enumerate(zip(codes, sizes, strict=True)):
            lo, hi = offsets[j], offsets[j + 1]
            # (w N_j - 1 μ_j)ᵀ Ã = w N_jᵀ Ã - μ_j (1ᵀ Ã)
            cross = w * _nominal_weights(centred, c, size) - np.outer(nom_means[j], col_sums)
            cov[lo:hi, :m] = cross
            cov[:m, lo:hi] = cross.T
            for i in range(j + 1):
                lo_i, hi_i = offsets[i], offsets[i + 1]
                pair = np.bincount(codes[i] * size + c, minlength=sizes[i] * size)
                block = w * w * pair.reshape(sizes[i], size) - n * np.outer(
                    nom_means[i], nom_means[j]
                )
                cov[lo_i:hi_i, lo:hi] = block
                cov[lo:hi, lo_i:hi_i] = block.T
        cov /= max(n - 1, 1)  # divided, as pca_2d does: the same bits on continuous data
        eigval, eigvec = np.linalg.eigh(cov)
        order = np.argsort(eigval)[::-1]
        eigval = np.clip(eigval[order], 0.0, None)
        top = eigvec[:, order[:2]].T
        values = eigval[:2]
    else:
        top, values = _subspace_top2(centred, codes, sizes, nom_means, scale, d)
    components = np.zeros((2, d))
    k = min(2, d)
    components[:k] = top[:k]
    ratio = np.zeros(2)
    if total > 0:
        ratio[:k] = np.clip(values[:k], 0.0, None) / total
    return MixedPCA(
        embedding=emb,
        mean=mean,
        components=_signed(components),
        explained_ratio=ratio,
        total_variance=total,
    )


def _subspace_top2(
    centred: np.ndarray,
    codes: Sequence[np.ndarray],
    sizes: Sequence[int],
    nom_means: Sequence[np.ndarray],
    scale: float,
    d: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The two leading eigenvectors (2, d) and eigenvalues of the embedding's covariance, by
    orthogonal iteration with a Rayleigh-Ritz step on a block of 8 vectors; products with the
    covariance go through the records (O(n·attributes) each), never through a d × d matrix."""
    m = centred.shape[1]
    w = NOMINAL_WEIGHT
    offsets = np.cumsum((m, *sizes))

    def times_cov(v: np.ndarray) -> np.ndarray:
        y = centred @ v[:m]  # centred embedding times v, one record per row
        for j, c in enumerate(codes):
            vj = v[offsets[j] : offsets[j + 1]]
            y += w * vj[c] - nom_means[j] @ vj
        out = np.empty_like(v)
        out[:m] = centred.T @ y
        y_sum = y.sum(axis=0)
        for j, c in enumerate(codes):
            out[offsets[j] : offsets[j + 1]] = w * _nominal_weights(y, c, sizes[j]) - np.outer(
                nom_means[j], y_sum
            )
        return out * scale

    block = min(8, d)
    rng = np.random.default_rng(0)  # fixed: the same picture every time
    q, _ = np.linalg.qr(rng.normal(size=(d, block)))
    previous = np.full(2, np.inf)
    vals = np.zeros(block)
    vecs = q
    for _ in range(MAX_ITERATIONS):
        z = times_cov(q)  # one product with the covariance per iteration
        small = q.T @ z  # Rayleigh-Ritz on the current subspace
        vals, rot = np.linalg.eigh((small + small.T) / 2)
        order = np.argsort(vals)[::-1]
        vals, rot = vals[order], rot[:, order]
        vecs = q @ rot
        if np.all(np.abs(vals[:2] - previous) <= 1e-10 * max(float(vals[0]), 1e-300)):
            break
        previous = vals[:2].copy()
        q, _ = np.linalg.qr(z @ rot)
    return vecs[:, :2].T.copy(), vals[:2]


def protected_codes(
    protected: pd.DataFrame, qi: QIMatrix
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A released table in the form of :class:`QIMatrix`: continuous z-scores on the original's
    scale, ordinal ranks (float, NaN outside the order) and nominal codes (-1 for a value that
    is no category of the original, e.g. a generalized one)."""
    z = protected_continuous_z(protected, qi)
    ranks = np.empty((len(protected), len(qi.ordinal_names)), dtype=np.float64)
    for j, col in enumerate(qi.ordinal_names):
        ranks[:, j] = _slots(protected[col], qi.ordinal_orders[j])
    codes = np.empty((len(protected), len(qi.nominal_names)), dtype=np.int64)
    for j, col in enumerate(qi.nominal_names):
        slots = _slots(protected[col], qi.nominal_categories[j])
        codes[:, j] = np.where(np.isnan(slots), -1, slots).astype(np.int64)
    return z, ranks, codes


def _slots(values: pd.Series, categories: Sequence[object]) -> np.ndarray:
    """Position of each value among ``categories`` (float; NaN when it is none of them).

    Matched by value first, then by text (a category ``1`` read back as ``"1"``, an ordinal
    order written as text), then by stripped text (``" high"`` against ``high``), as
    :func:`microgui.core.table.dataset.prepare_qi` matches ordinal values. A missing cell matches a
    :class:`MissingCategory` among the categories."""
    by_value: dict[object, int] = {}
    by_text: dict[str, int] = {}
    by_stripped: dict[str, int] = {}
    missing_slot: int | None = None
    for i, cat in enumerate(categories):
        if isinstance(cat, MissingCategory) or (isinstance(cat, float) and np.isnan(cat)):
            missing_slot = i if missing_slot is None else missing_slot
            continue
        try:
            by_value.setdefault(cat, i)
        except TypeError:  # unhashable: by text only
            pass
        by_text.setdefault(str(cat), i)
        by_stripped.setdefault(str(cat).strip(), i)
    # object: pandas 3 would infer Arrow str from the Python strings (time in the run's worker)
    raw = pd.Series(values.to_numpy(dtype=object), dtype=object)
    codes, labels = pd.factorize(raw, use_na_sentinel=True)
    slot_of_unique = np.full(len(labels), np.nan)
    for u, value in enumerate(labels.tolist()):
        slot = None
        try:
            slot = by_value.get(value)
        except TypeError:
            slot = None
        if slot is None:
            slot = by_text.get(str(value))
        if slot is None:
            slot = by_stripped.get(str(value).strip())
        if slot is not None:
            slot_of_unique[u] = slot
    out = np.full(len(raw), np.nan)
    present = codes >= 0
    out[present] = slot_of_unique[codes[present]]
    if missing_slot is not None:
        out[~present] = missing_slot
    return out


@dataclass(frozen=True)
class QIProjection:
    """Scores of the original and protected records on the first two principal components.

    ``original`` and ``protected`` are (n, 2) in the table's row order; ``columns`` names the
    quasi-identifiers that entered the PCA; ``explained_ratio`` gives each component's share of
    their variance. Protected values that cannot be placed (a released value that is no
    category of the original) are NaN. ``mixed``: the projection is of the mixed-distance
    embedding (some quasi-identifier is ordinal or nominal), else of the z-scores;
    ``dimension``: its number of coordinates.
    """

    columns: tuple[str, ...]
    original: np.ndarray
    protected: np.ndarray
    explained_ratio: tuple[float, float]
    mixed: bool = False
    dimension: int = 0
    # Each quasi-identifier's axis as the groups plot draws it, computed with the projection in
    # the run's worker so that the GUI thread only hands arrays to pyqtgraph (issue 29): the
    # category axis of an ordinal/nominal one with its released values' slots, and the released
    # numbers of a continuous one. Empty for a projection made without them.
    category_axes: Mapping[str, CategoryAxis] = field(default_factory=dict)
    released_slots: Mapping[str, np.ndarray] = field(default_factory=dict)
    released_numbers: Mapping[str, np.ndarray] = field(default_factory=dict)
    # What the groups plot reads when it shows the run, also computed in the worker (issue 30:
    # ~50 ms of a 350,000-record result's drawing turn): how far each record moved on the axes
    # the plot opens on (:func:`default_axes`; None: not computed), and the
    # ``span_quantile`` quantiles of the records on each continuous and PC axis
    # (:func:`tail_quantiles`; the initial view), the row of each group's first record (where
    # its aggregate is drawn). Filled by :func:`qi_projection`.
    moved: PairMoves | None = None
    spans: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    span_quantile: float = 0.0
    group_firsts: np.ndarray | None = None

    def axis_label(self, i: int) -> str:
        """The axis title of component ``i`` (0: PC1, 1: PC2)."""
        name = f"PC{i + 1}"
        ratio = self.explained_ratio[i]
        if self.mixed:
            return (
                f"{name} of the mixed-distance embedding ({ratio:.0%} of variance) · "
                f"{len(self.columns)} QIs"
            )
        return (
            f"{name} ({ratio:.0%} of variance) · PCA of {len(self.columns)} standardized QIs "
            "(z-score units)"
        )

    def explanation(self) -> str:
        """What the components are, in a sentence or two (for tooltips)."""
        cols = ", ".join(self.columns)
        if not self.mixed:
            return readable(
                f"Principal components of the z-scores of {cols}: Euclidean distance on "
                "standardized values, as the methods use (003 §5.2)."
            )
        return readable(
            f"Principal components of {cols} embedded in {self.dimension} coordinates whose "
            "Euclidean distance is MDAV-generic's mixed distance (003 §5.2-5.4): continuous as "
            "z-scores, ordinal as rank/|D| (d_ORD), nominal as one indicator per category "
            "times 1/√2 (equality distance 0/1). Units: that distance. % of variance: share of "
            "the embedding's total inertia. Protected values that are no category of the "
            "original (generalized values) are not placed."
        )


def qi_projection(result: RunResult) -> QIProjection | None:
    """Project a run's original and protected records onto PC1/PC2 of the mixed-distance
    embedding of its quasi-identifiers (:func:`mixed_pca`); None when it has none."""
    qi = result.qi
    if not qi.names:
        return None
    pca = mixed_pca(qi)
    z, ranks, codes = protected_codes(result.protected, qi)
    emb = pca.embedding
    axes = {name: category_axis(qi, name) for name in categorical_qi_names(qi)}
    projection = QIProjection(
        columns=emb.names,
        original=pca.transform(qi.continuous, qi.ordinal, qi.nominal),
        protected=pca.transform(z, ranks, codes),
        explained_ratio=(float(pca.explained_ratio[0]), float(pca.explained_ratio[1])),
        mixed=not emb.all_continuous,
        dimension=emb.dim,
        category_axes=axes,
        released_slots={name: axis.slots_of(result.protected[name]) for name, axis in axes.items()},
        released_numbers={
            name: released_numbers(result.protected, name) for name in qi.continuous_names
        },
    )
    return projection


#: The axis choices of the principal components.
PC1 = "PC1"
PC2 = "PC2"
#: The records' quantiles the groups plot's initial view spans (``ScatterOptions.view_quantile``).
VIEW_QUANTILE = 0.005


def plot_axis_choices(result: RunResult, with_components: bool) -> list[str]:
    """The axes a plot of ``result``'s records offers: PC1/PC2 (``with_components``: the run
    has a projection), then every quasi-identifier in the table's column order."""
    qi_names = set(result.qi.names)
    qis = [c for c in result.roles.quasi_identifiers if c in qi_names]
    qis += [c for c in result.qi.names if c not in qis]
    return ([PC1, PC2] if with_components else []) + qis


def default_axes(
    result: RunResult, projection: QIProjection | None, choices: Sequence[str]
) -> tuple[str, str]:
    """The axes a plot of ``result``'s records opens on, among ``choices``: the data's own
    axes when some quasi-identifier is categorical (across, a continuous one; up, the
    categorical one with the most categories that can all be labelled, ≤ 20) or when there are
    exactly two continuous ones; PC1/PC2 otherwise (the groups plot and the compared runs'
    plots alike, issue 29)."""
    choices = list(choices)
    cont = [c for c in result.qi.continuous_names if c in choices]
    cats = [c for c in choices if c in result.qi.ordinal_names + result.qi.nominal_names]
    if len(cont) == 2 and not result.qi.ordinal_names:
        return cont[0], cont[1]  # the two variables themselves read better than their PCs
    if cats and (cont or len(cats) > 1):
        # The data's own axes: a PCA of a mixed embedding is no variable (issue 29).
        x = cont[0] if cont else cats[0]
        ready = projection.category_axes if projection is not None else {}
        sizes = {
            c: len((ready.get(c) or category_axis(result.qi, c)).labels) for c in cats if c != x
        }
        fits = [c for c in sizes if sizes[c] <= 20]
        y = max(fits, key=lambda c: sizes[c]) if fits else next(iter(sizes))
        return x, y
    if projection is not None and PC1 in choices and PC2 in choices:
        return PC1, PC2
    return choices[0], choices[1] if len(choices) > 1 else choices[0]


#: Above this many records an axis's quantile span is found in its tails only (see
#: :func:`tail_quantiles`): the 0.5 % quantiles of 350,000 records by ``np.quantile`` (a
#: partition of every record) held the GUI thread 15-38 ms of the result's drawing turn (issue 30).
SPAN_SAMPLE = 65_536


def tail_quantiles(finite: np.ndarray, q: float) -> tuple[float, float]:
    """``np.quantile(finite, [q, 1 - q])`` (linear interpolation), exactly, without partitioning
    every value when ``q`` is small: thresholds a little inside the tails are read off every m-th
    value (a sample of :data:`SPAN_SAMPLE`), the values beyond them are kept (one comparison
    per value) and only those are partitioned. The first ``c`` values of the sorted array are
    the values ≤ a threshold when ``c`` of them are, ties included, so the order statistics are
    those of the full array; when a tail holds too few values, ``np.quantile`` of all."""
    n = len(finite)
    step = -(-n // SPAN_SAMPLE)
    if step <= 1 or not 0.0 < q < 0.25:
        lo, hi = np.quantile(finite, [q, 1.0 - q])
        return float(lo), float(hi)
    sample = finite[::step]
    # a margin of several standard errors of the sample quantile, in probability
    margin = 6.0 * float(np.sqrt(q * (1.0 - q) / len(sample))) + 2.0 / len(sample)
    lo_t, hi_t = np.quantile(sample, [min(q + margin, 0.5), max(1.0 - q - margin, 0.5)])
    low = finite[finite <= lo_t]
    high = finite[finite >= hi_t]
    out = []
    for pos, tail, offset in (
        (q * (n - 1), low, 0),
        ((1.0 - q) * (n - 1), high, n - len(high)),
    ):
        k0, k1 = int(np.floor(pos)), int(np.ceil(pos))
        if not (0 <= k0 - offset and k1 - offset < len(tail)):
            lo, hi = np.quantile(finite, [q, 1.0 - q])
            return float(lo), float(hi)
        part = np.partition(tail, [k0 - offset, k1 - offset])
        a, b = float(part[k0 - offset]), float(part[k1 - offset])
        out.append(a + (b - a) * (pos - k0))
    return out[0], out[1]


def released_numbers(protected: pd.DataFrame, name: str) -> np.ndarray:
    """A released continuous column as float64 (NaN where a cell is no number)."""
    return pd.to_numeric(protected[name], errors="coerce").to_numpy(dtype=np.float64)


# --------------------------------------------------------------------------------------------
# category axes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CategoryAxis:
    """A categorical quasi-identifier laid out on an axis: slot i shows ``labels[i]``.

    ``categories`` are the values in slot order (as in the data; a :class:`MissingCategory`
    for missing cells), ``original`` the slot of each original record, ``order_rule`` how the
    slots are ordered, in words.
    """

    name: str
    kind: str
    categories: tuple[object, ...]
    labels: tuple[str, ...]
    original: np.ndarray
    order_rule: str

    def slots_of(self, values: pd.Series) -> np.ndarray:
        """Slot of each value (float; NaN when it is no category of the axis)."""
        return _slots(values, self.categories)


def categorical_qi_names(qi: QIMatrix) -> tuple[str, ...]:
    """The ordinal and nominal quasi-identifiers of a run."""
    return qi.ordinal_names + qi.nominal_names


def category_axis(qi: QIMatrix, name: str) -> CategoryAxis:
    """The axis of an ordinal (declared order) or nominal (by decreasing frequency, ties
    alphabetical) quasi-identifier. KeyError when ``name`` is not one."""
    if name in qi.ordinal_names:
        j = qi.ordinal_names.index(name)
        order = tuple(qi.ordinal_orders[j])
        codes = np.asarray(qi.ordinal[:, j], dtype=np.int64)
        cats: tuple[object, ...] = order
        kind, rule = "ordinal", "in their declared order"
        slot_of_code = np.arange(len(order), dtype=np.int64)
    elif name in qi.nominal_names:
        j = qi.nominal_names.index(name)
        cats_all = tuple(qi.nominal_categories[j])
        codes = np.asarray(qi.nominal[:, j], dtype=np.int64)
        counts = np.bincount(codes[codes >= 0], minlength=len(cats_all))
        by_freq = sorted(range(len(cats_all)), key=lambda c: (-int(counts[c]), str(cats_all[c])))
        cats = tuple(cats_all[c] for c in by_freq)
        slot_of_code = np.empty(len(cats_all), dtype=np.int64)
        slot_of_code[by_freq] = np.arange(len(cats_all))
        kind, rule = "nominal", "by decreasing frequency, ties alphabetical"
    else:
        raise KeyError(f"{name!r} is not an ordinal or nominal quasi-identifier")
    original = np.empty(len(codes), dtype=np.int64)
    ok = codes >= 0
    original[ok] = slot_of_code[codes[ok]]
    if not ok.all():  # missing cells kept as a category (never in a run that refused them)
        cats = (*cats, _MISSING)
        original[~ok] = len(cats) - 1
    return CategoryAxis(
        name=name,
        kind=kind,
        categories=cats,
        labels=tuple(str(c) for c in cats),
        original=original,
        order_rule=rule,
    )


def category_jitter(n: int, seed: int, key: str, width: float = JITTER) -> np.ndarray:
    """``n`` offsets drawn uniformly from [-width, width], the same for the same seed and key
    (the column name), different between columns (two categorical axes must not move a record
    along a diagonal)."""
    rng = np.random.default_rng([int(seed), zlib.crc32(key.encode("utf-8"))])
    out: np.ndarray = rng.uniform(-width, width, size=n)
    return out


# --------------------------------------------------------------------------------------------
# transitions
# --------------------------------------------------------------------------------------------


def transition_table(
    original: Sequence[object] | pd.Series,
    released: Sequence[object] | pd.Series,
    categories: Sequence[object] | None = None,
) -> pd.DataFrame:
    """Counts of records by original category (rows) and released category (columns).

    Rows are ``categories`` (default: the original values by decreasing frequency, ties
    alphabetical), every one of them even when no record has it; columns are the same
    categories, so the diagonal is "unchanged", followed by released values that are none of
    them (generalized values, ``*``), by decreasing frequency. Missing cells count as the
    category ``(missing)``. Index and columns hold the labels as text, named ``original`` and
    ``released``; cells are int64 and sum to the number of records.
    """
    orig = pd.Series(
        np.asarray(original, dtype=object)
        if not isinstance(original, pd.Series)
        else original.to_numpy(dtype=object)
    )
    rel = pd.Series(
        np.asarray(released, dtype=object)
        if not isinstance(released, pd.Series)
        else released.to_numpy(dtype=object)
    )
    if len(orig) != len(rel):
        raise ValueError(f"{len(orig)} original values but {len(rel)} released values")
    if categories is None:
        codes, uniques = pd.factorize(orig, use_na_sentinel=True)
        counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
        ranked = sorted(range(len(uniques)), key=lambda c: (-int(counts[c]), str(uniques[c])))
        categories = [uniques[c] for c in ranked]
        if (codes < 0).any():
            categories.append(_MISSING)
    cats = list(categories)
    rows = _slots(orig, cats)
    if np.isnan(rows).any():
        cats.append(_MISSING)  # a missing original cell with no category for it
        rows = _slots(orig, cats)
        if np.isnan(rows).any():
            bad = orig[np.isnan(rows)].iloc[0]
            raise ValueError(f"original value {bad!r} is not among the categories given")
    return _transition_counts(rows, rel, cats)


def _transition_counts(rows: np.ndarray, released: pd.Series, cats: list[object]) -> pd.DataFrame:
    """:func:`transition_table` from the original records' slots among ``cats``."""
    rel = released
    cols = _slots(rel, cats)
    extra_mask = np.isnan(cols)
    extra: list[object] = []
    if extra_mask.any():
        codes, uniques = pd.factorize(rel[extra_mask], use_na_sentinel=True)
        counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
        ranked = sorted(range(len(uniques)), key=lambda c: (-int(counts[c]), str(uniques[c])))
        slot_of = np.empty(len(uniques), dtype=np.float64)
        slot_of[ranked] = len(cats) + np.arange(len(uniques))
        extra = [uniques[c] for c in ranked]
        filled = np.full(len(codes), np.nan)
        filled[codes >= 0] = slot_of[codes[codes >= 0]]
        if (codes < 0).any():
            extra.append(_MISSING)
            filled[codes < 0] = len(cats) + len(uniques)
        cols[extra_mask] = filled
    n_rows, n_cols = len(cats), len(cats) + len(extra)
    flat = rows.astype(np.int64) * n_cols + cols.astype(np.int64)
    table = np.bincount(flat, minlength=n_rows * n_cols).reshape(n_rows, n_cols)
    return pd.DataFrame(
        table.astype(np.int64),
        index=pd.Index([str(c) for c in cats], name="original", dtype=object),
        columns=pd.Index([str(c) for c in cats + extra], name="released", dtype=object),
    )


def category_transitions(result: RunResult, name: str) -> pd.DataFrame:
    """:func:`transition_table` of one ordinal or nominal quasi-identifier of a run, its rows and
    columns in the order of :func:`category_axis`. KeyError when ``name`` is not one."""
    axis = category_axis(result.qi, name)
    released = pd.Series(result.protected[name].to_numpy(dtype=object), dtype=object)
    if len(released) != len(axis.original):
        raise ValueError(
            f"{len(axis.original)} original values but {len(released)} released values"
        )
    return _transition_counts(axis.original.astype(np.float64), released, list(axis.categories))


def all_category_transitions(result: RunResult) -> dict[str, pd.DataFrame]:
    """:func:`category_transitions` of every ordinal and nominal quasi-identifier of a run (for
    the worker: a few milliseconds per 100,000 records and column)."""
    return {name: category_transitions(result, name) for name in categorical_qi_names(result.qi)}


def unchanged_share(table: pd.DataFrame) -> float:
    """Share of the records of a :func:`transition_table` released with their own category
    (its diagonal over its total; NaN for an empty table)."""
    total = int(table.to_numpy().sum())
    k = min(table.shape)
    diagonal = int(np.trace(table.to_numpy()[:k, :k]))
    return diagonal / total if total else float("nan")
