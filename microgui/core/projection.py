"""Two-dimensional projections of the quasi-identifiers, for the app's cluster scatter plot.

Plain numpy, no Qt: the app computes the projection in its run worker, never in the GUI thread.

The plane is spanned by the first two principal components of the *numeric* quasi-identifiers:
the continuous ones on the z-scale the methods use (``003`` §5.2), and the ordinal ones as their
category ranks, standardized the same way. Nominal quasi-identifiers have no geometry and are
left out. The protected records are projected with the original's components, so an original
record and its group's aggregate can be compared on the same axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.aggregate import protected_continuous_z
from microgui.core.dataset import QIMatrix
from microgui.core.runs import RunResult

__all__ = ["PCA2", "pca_2d", "QIProjection", "qi_projection", "numeric_qi_matrix"]


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


@dataclass(frozen=True)
class QIProjection:
    """Scores of the original and protected records on the first two principal components.

    ``original`` and ``protected`` are (n, 2) in the table's row order; ``columns`` names the
    quasi-identifiers that entered the PCA; ``explained_ratio`` gives each component's share of
    their variance. Protected values that cannot be placed (an ordinal value outside the order)
    are NaN.
    """

    columns: tuple[str, ...]
    original: np.ndarray
    protected: np.ndarray
    explained_ratio: tuple[float, float]


def qi_projection(result: RunResult) -> QIProjection | None:
    """Project a run's original and protected records onto PC1/PC2 of the numeric
    quasi-identifiers; None when there is no continuous or ordinal quasi-identifier."""
    qi = result.qi
    matrix, names, r_mean, r_std = numeric_qi_matrix(qi)
    if matrix.shape[1] == 0:
        return None
    pca = pca_2d(matrix)
    protected = result.protected
    z_cont = protected_continuous_z(protected, qi)
    prot_ranks = np.empty((len(protected), len(qi.ordinal_names)), dtype=np.float64)
    for j, col in enumerate(qi.ordinal_names):
        rank = {v: float(i) for i, v in enumerate(qi.ordinal_orders[j])}
        mapped = pd.Series(protected[col].to_numpy(dtype=object)).astype(str).map(rank)
        prot_ranks[:, j] = mapped.to_numpy(dtype=np.float64, na_value=np.nan)
    prot_matrix = np.hstack([z_cont, _standardize(prot_ranks, r_mean, r_std)])
    return QIProjection(
        columns=names,
        original=pca.transform(matrix),
        protected=pca.transform(prot_matrix),
        explained_ratio=(float(pca.explained_ratio[0]), float(pca.explained_ratio[1])),
    )
