"""Quality measures of a generalized release: DM, CAVG and the generalization information loss.

Ramana & Valli Kumari, ``004_0ca91c7afa3e094f.txt`` §7. A release's equivalence classes are
given as ``labels`` (class id per record, 0..classes-1); for the information loss, each class's
published value in every attribute is a node of that attribute's hierarchy (``class_nodes``).
Used by :mod:`microgui.core.methods.mstk` for its run report and by
:mod:`microgui.core.metrics.evaluate` for any release read with its hierarchies.

IL of eqs. 6-9: numerical attributes (U_i - L_i)/(U - L), with the smallest and largest value
under the published node and the whole hierarchy's range; categorical attributes (L_v - 1)/L,
with L_v the values under the node and L all values of the hierarchy; IL_tuple the sum over
attributes, IL_T the mean over records. DM = Σ |E|² (eq. 10), CAVG = n / (classes · k) (eq. 11).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from microgui.core.table.hierarchy import Hierarchy

__all__ = ["generalization_information_loss", "discernibility", "cavg"]


def generalization_information_loss(
    labels: np.ndarray,
    class_nodes: np.ndarray,
    hierarchies: Sequence[Hierarchy],
    numeric: Sequence[bool],
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """IL of ``004`` eqs. 6-9: total, numerical part, categorical part and per attribute.

    ``labels``: class id of every record; ``class_nodes``: (classes, attributes) node id of each
    class's published value in ``hierarchies[j]``; ``names`` name the attributes (default: the
    hierarchies' names). ``numeric[j]``: attribute j is numerical (eq. 6) when True and its
    hierarchy's values are all numbers, else categorical (eq. 7). Each value is the mean over
    records (eq. 9) of the attribute's IL, so the total lies between 0 and the number of
    attributes.
    """
    names = list(names) if names is not None else [h.name for h in hierarchies]
    labels = np.asarray(labels, dtype=np.int64)
    n = len(labels)
    by_attr: dict[str, float] = {}
    num_total = cat_total = 0.0
    sizes = np.bincount(labels, minlength=len(class_nodes)).astype(np.float64)
    for j, h in enumerate(hierarchies):
        nodes = class_nodes[:, j]
        span = h.node_numeric_span if numeric[j] else None
        if span is not None:
            domain = float(span[:, 1].max() - span[:, 0].min())
            il = (span[nodes, 1] - span[nodes, 0]) / domain if domain > 0 else np.zeros(len(nodes))
        else:
            il = (h.node_leaf_counts[nodes] - 1) / len(h)
        mean = float((il * sizes).sum() / n) if n else 0.0
        by_attr[names[j]] = mean
        if span is not None:
            num_total += mean
        else:
            cat_total += mean
    return {
        "generalization_il": num_total + cat_total,
        "generalization_il_numeric": num_total,
        "generalization_il_categorical": cat_total,
        "generalization_il_by_attribute": by_attr,
    }


def discernibility(labels: np.ndarray) -> int:
    """DM = Σ |E|² over the equivalence classes (``004`` eq. 10)."""
    sizes = np.bincount(np.asarray(labels, dtype=np.int64))
    return int((sizes.astype(np.int64) ** 2).sum())


def cavg(labels: np.ndarray, k: int) -> float:
    """CAVG = records / (classes · k) (``004`` eq. 11)."""
    labels = np.asarray(labels, dtype=np.int64)
    classes = len(np.unique(labels))
    return float(len(labels) / (classes * k)) if classes else 0.0
