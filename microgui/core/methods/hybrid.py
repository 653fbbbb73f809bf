"""Microaggregation-based hybrid data: each MDAV cluster replaced by a synthetic cluster.

Sulekha & Arumugam, ``002_f464918b99c38812.txt`` §4.12, summarizing Domingo-Ferrer &
González-Nicolás, "Hybrid microdata using microaggregation", Information Sciences 180(15), 2010
("MicroHybrid"). The three steps of ``002`` §4.12:

1. group the records into clusters of k..2k-1 records — here MDAV (``003`` Algorithm 5.1, the
   first of the two partitions ``002`` names; :func:`microgui.core.methods.mdav.mdav`);
2. generate a synthetic version of each cluster with a synthetic data generator;
3. replace the original records of each cluster by the records of its synthetic cluster.

**Synthetic data generator.** The paper lets any generator be plugged in and uses one that
preserves means and covariances exactly (IPSO, Burridge 2003: the synthetic data share the
original's sufficient statistics). Here: a sample from a multivariate normal distribution
*conditioned on* having exactly the cluster's mean vector and covariance matrix. For a normal
sample, the sample given its mean and covariance is uniformly (rotation-invariantly) distributed
over all samples with those statistics; such a sample is drawn by rotating the centred cluster
with a random orthogonal matrix in the (c-1)-dimensional space of record weights orthogonal to
the all-ones vector (c = cluster size)::

    Y = mean + B Q Bᵀ (X - mean)

with B (c × (c-1)) an orthonormal basis orthogonal to 1 and Q a Haar-random orthogonal matrix
(QR of a standard normal matrix, signs fixed by R's diagonal, seeded by the run's generator).
Then 1ᵀ(Y - mean) = 0 and (Y - mean)ᵀ(Y - mean) = (X - mean)ᵀ B Bᵀ (X - mean) = (X - mean)ᵀ(X -
mean): the synthetic cluster has *exactly* the cluster's mean and covariance (to rounding). Unlike
"draw N(mean, S) then adjust by Cholesky factors", it needs no inverse, so it also works for the
usual case here of clusters with fewer records than attributes (c - 1 < d, singular covariance),
and for clusters of identical records (Y = X). Computed per attribute in the original units,
after centring each cluster (no cancellation on large values).

**Not k-anonymity.** Every synthetic record differs from the others, so the protected table is
not k-anonymous in the sense of identical quasi-identifier combinations (its level is usually 1).
Protection comes from the records being synthetic within clusters of at least k; the report says
``k_anonymity_guaranteed: false`` with a note, and the export check refuses the table unless the
user overrides it. The run's labels are the MDAV clusters. Numbering of the random draws: cluster
sizes ascending, clusters in label order within a size.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from microgui.core.methods.base import Method, MethodInput, MethodOutput, register
from microgui.core.methods.mdav import mdav, warm_up
from microgui.core.progress import sub_progress
from microgui.core.references import readable
from microgui.core.table.dataset import numeric_column
from microgui.core.table.roles import AttributeKind

__all__ = ["centred_basis", "random_rotation", "synthetic_clusters", "HYBRID"]

_NOTE = (
    "Hybrid data: every record is synthetic, drawn within its MDAV cluster of at least k records "
    "to keep the cluster's mean and covariance exactly. Synthetic records differ from each other, "
    "so the table is not k-anonymous on identical quasi-identifier values; the export check "
    "refuses it unless overridden."
)


def centred_basis(c: int) -> np.ndarray:
    """An orthonormal basis (c × (c-1)) of the vectors orthogonal to the all-ones vector."""
    first = np.column_stack([np.ones(c), np.eye(c)[:, : c - 1]])
    q, _ = np.linalg.qr(first)
    return np.asarray(q[:, 1:])


def random_rotation(rng: np.random.Generator, count: int, size: int) -> np.ndarray:
    """``count`` Haar-random orthogonal matrices of order ``size`` (QR of normal matrices)."""
    g = rng.standard_normal((count, size, size))
    q, r = np.linalg.qr(g)
    signs = np.sign(np.diagonal(r, axis1=1, axis2=2))
    signs[signs == 0] = 1.0
    return np.asarray(q * signs[:, None, :])


def synthetic_clusters(
    values: npt.ArrayLike, labels: npt.ArrayLike, rng: np.random.Generator
) -> np.ndarray:
    """Replace each cluster by a synthetic one with exactly its mean and covariance.

    Parameters
    ----------
    values
        (n, d) records (any units).
    labels
        int group label per record, 0..g-1.
    rng
        The generator; the draws go cluster size ascending, clusters in label order.

    Returns
    -------
    numpy.ndarray
        (n, d) synthetic records, in the input's row order.
    """
    x = np.asarray(values, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.int64)
    out = x.copy()
    if len(lab) == 0:
        return out
    sizes = np.bincount(lab)
    order = np.argsort(lab, kind="stable")  # rows of each cluster, ascending
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for c in np.unique(sizes):
        c = int(c)
        if c < 2:
            continue  # a single record has no covariance to keep; it stays as it is
        groups = np.flatnonzero(sizes == c)
        rows = order[starts[groups][:, None] + np.arange(c)]  # (g_c, c)
        block = x[rows]  # (g_c, c, d)
        mean = block.mean(axis=1, keepdims=True)
        basis = centred_basis(c)
        rot = random_rotation(rng, len(groups), c - 1)
        # Y = mean + B Q Bᵀ (X - mean), batched over the clusters of this size.
        inner = np.einsum("ia,gid->gad", basis, block - mean)
        turned = np.einsum("gab,gbd->gad", rot, inner)
        out[rows] = mean + np.einsum("ia,gad->gid", basis, turned)
    return out


def _run_hybrid(inp: MethodInput) -> MethodOutput:
    qi = inp.qi
    labels = mdav(qi.continuous, inp.k, progress=sub_progress(inp.progress, 0.0, 0.9))
    inp.progress(0.9, "drawing synthetic clusters")
    names = list(qi.continuous_names)
    original = np.column_stack([numeric_column(inp.dataset.frame, c) for c in names]).reshape(
        len(labels), len(names)
    )
    synthetic = synthetic_clusters(original, labels, inp.rng)
    inp.progress(1.0, "drawing synthetic clusters")
    extra = {
        "k_anonymity_guaranteed": False,
        "note": _NOTE,
        "partition": readable("MDAV (003 Algorithm 5.1)"),
        "synthetic_generator": (
            "normal sample conditioned on each cluster's exact mean and covariance (random "
            "rotation of the centred cluster orthogonal to the ones vector)"
        ),
    }
    frame = pd.DataFrame(synthetic, columns=names, index=inp.dataset.frame.index)
    return MethodOutput(labels=labels, protected_qi=frame, extra=extra)


HYBRID = register(
    Method(
        name="hybrid",
        title="Hybrid data (MicroHybrid)",
        summary="MDAV clusters replaced by synthetic records with each cluster's exact mean and "
        "covariance (002 §4.12; Domingo-Ferrer & González-Nicolás 2010)",
        description=(
            "Microaggregation-based hybrid data (Domingo-Ferrer & González-Nicolás 2010, in "
            "Sulekha & Arumugam §4.12): MDAV forms clusters of k to 2k-1 records, then every "
            "cluster is replaced by synthetic records drawn (seeded by --seed) so that the "
            "cluster keeps exactly its mean vector and covariance matrix. Means, variances and "
            "covariances of the whole table are preserved; records are synthetic, so the table "
            "is not k-anonymous on identical values and the export check refuses it unless "
            "overridden."
        ),
        citation="002_f464918b99c38812.txt §4.12; 003_309fe4adb430bc25.txt Algorithm 5.1",
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_hybrid,
        aggregates=False,
        complexity="O(n²·d/k) for the MDAV partition, then O(n·k·(k + d)) for the synthetic "
        "clusters",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,  # mdav's kernels
    )
)
