"""How far each record moved in a plot, and a group's members before and after (issue 29).

Plain numpy and pandas, no Qt: the groups plot (:mod:`microgui.qt.plots.cluster_scatter`) colours
records by how far protection moved them when too many groups are in view to colour by group,
and lists a clicked record's group.

**Distance moved, in the plot's standardized space.** On a continuous axis (a quasi-identifier in
original units, or a principal component) the move is ``(released − original) / s``, ``s`` the
standard deviation of the original values on that axis; on a category axis it is 1 when the
released category differs from the original one, else 0 (the equality distance of MDAV-generic
for nominal attributes, ``003`` §5.4). The record's distance is the Euclidean norm of its two
moves, so 1 reads as "one standard deviation, or one category changed". A record whose released
value has no place on an axis (a generalized value such as ``[20-30]``) has no distance (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from microgui.core.runs.spec import RunResult
from microgui.core.views.projection import categorical_qi_names, category_axis

__all__ = [
    "MOVE_EDGES",
    "axis_moves",
    "distance_moved",
    "move_classes",
    "move_class_labels",
    "group_members",
]

#: Class edges of the distance moved (standard deviations; a changed category counts 1).
MOVE_EDGES: tuple[float, ...] = (0.05, 0.25, 0.5, 1.0)


def axis_moves(original: np.ndarray, released: np.ndarray, categorical: bool) -> np.ndarray:
    """Each record's move along one axis (see the module docstring); NaN where either value is
    missing. ``original`` and ``released`` are slots (unjittered) on a category axis."""
    original = np.asarray(original, dtype=np.float64)
    released = np.asarray(released, dtype=np.float64)
    ok = np.isfinite(original) & np.isfinite(released)
    out = np.full(len(original), np.nan)
    if categorical:
        out[ok] = (original[ok] != released[ok]).astype(np.float64)
        return out
    finite = original[np.isfinite(original)]
    scale = float(finite.std()) if len(finite) > 1 else 0.0
    out[ok] = (released[ok] - original[ok]) / (scale if scale > 0 else 1.0)
    return out


def distance_moved(move_x: np.ndarray, move_y: np.ndarray) -> np.ndarray:
    """Euclidean norm of the two moves (NaN when either is)."""
    return np.hypot(np.asarray(move_x, dtype=np.float64), np.asarray(move_y, dtype=np.float64))


def move_classes(distance: np.ndarray, edges: Sequence[float] = MOVE_EDGES) -> np.ndarray:
    """Class of each distance: 0 below ``edges[0]`` … ``len(edges)`` at or above the last edge;
    ``len(edges) + 1`` for NaN (not placed).

    >>> move_classes(np.array([0.0, 0.1, 0.3, 0.7, 2.0, np.nan])).tolist()
    [0, 1, 2, 3, 4, 5]
    """
    distance = np.asarray(distance, dtype=np.float64)
    out = np.searchsorted(np.asarray(edges, dtype=np.float64), distance, side="right")
    out[~np.isfinite(distance)] = len(edges) + 1
    return out.astype(np.int64)


def move_class_labels(edges: Sequence[float] = MOVE_EDGES) -> list[str]:
    """Legend texts of :func:`move_classes` (units: standard deviations)."""
    e = [f"{v:g}" for v in edges]
    labels = [f"moved under {e[0]} SD"]  # no "<": legends are rich text
    labels += [f"{e[i]}–{e[i + 1]} SD" for i in range(len(e) - 1)]
    labels += [f"≥ {e[-1]} SD or new category", "not placed"]
    return labels


def group_members(result: RunResult, row: int, max_rows: int = 25) -> pd.DataFrame:
    """The members of ``row``'s group (at most ``max_rows``): for each quasi-identifier, the
    original value and the released one, as text (columns ``"<name>"`` and ``"<name> →"``).

    For the screen only: it holds record values and must never reach a report or a log.
    """
    labels = np.asarray(result.labels)
    members = np.flatnonzero(labels == labels[row])[:max_rows]
    qi = result.qi
    data: dict[str, list[str]] = {}
    categorical = set(categorical_qi_names(qi))
    for name in qi.names:
        if name in categorical:
            axis = category_axis(qi, name)
            orig = [axis.labels[int(s)] for s in axis.original[members]]
        elif name in qi.continuous_names:
            j = qi.continuous_names.index(name)
            values = qi.continuous[members, j] * qi.cont_std[j] + qi.cont_mean[j]
            orig = [f"{v:.6g}" for v in values]
        else:
            continue
        released = result.protected[name].iloc[members] if name in result.protected else None
        data[name] = orig
        data[f"{name} →"] = (
            ["" for _ in members] if released is None else [_text(v) for v in released]
        )
    return pd.DataFrame(data, index=members)


def _text(value: object) -> str:
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.6g}"
    return "" if value is None else str(value)
