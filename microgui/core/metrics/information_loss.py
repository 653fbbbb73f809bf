"""SSE, SST and IL = 100·SSE/SST (``002_f464918b99c38812.txt`` §III; ``000`` §2.1).

All three are computed on the z-scored continuous quasi-identifiers (the original's mean and
sample standard deviation). SSE is the squared distance between each original record and its
protected version; for plain microaggregation that is the within-group sum of squares
Σ_i Σ_{x∈G_i} ||x − x̄_i||², and the form also covers methods whose output is not the group mean
(variance rescaling, synthetic records).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sse", "sst", "information_loss"]


def sse(original_z: np.ndarray, protected_z: np.ndarray) -> float:
    """Σ ||x − x'||² over records and attributes."""
    diff = np.asarray(original_z, dtype=np.float64) - np.asarray(protected_z, dtype=np.float64)
    return float(np.einsum("ij,ij->", diff, diff))


def sst(original_z: np.ndarray) -> float:
    """Σ ||x − x̄||²: the total sum of squares around the global mean."""
    x = np.asarray(original_z, dtype=np.float64)
    centred = x - x.mean(axis=0)
    return float(np.einsum("ij,ij->", centred, centred))


def information_loss(original_z: np.ndarray, protected_z: np.ndarray) -> float:
    """IL = 100·SSE/SST in percent (0 when SST is 0, i.e. nothing to lose)."""
    total = sst(original_z)
    return 100.0 * sse(original_z, protected_z) / total if total > 0 else 0.0
