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
from dataclasses import replace

import numpy as np
import pandas as pd

from microgui.core.runs.spec import RunResult
from microgui.core.views.projection import (
    PC1,
    PC2,
    VIEW_QUANTILE,
    PairMoves,
    QIProjection,
    categorical_qi_names,
    category_axis,
    default_axes,
    plot_axis_choices,
    qi_projection,
    released_numbers,
    tail_quantiles,
)

__all__ = [
    "MOVE_EDGES",
    "axis_moves",
    "distance_moved",
    "move_classes",
    "move_class_labels",
    "group_members",
    "group_mean_moves",
    "first_of_groups",
    "PairMoves",
    "pair_moves",
    "axis_move_values",
    "with_plot_defaults",
    "plot_projection",
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


def first_of_groups(labels: np.ndarray) -> np.ndarray:
    """Row of the first record of each group, by increasing label: ``np.unique(labels,
    return_index=True)[1]``, in linear time for non-negative integer labels (a sort of 350,000
    labels takes about 30 ms of the GUI thread)."""
    labels = np.asarray(labels)
    n = len(labels)
    if not n or labels.dtype.kind not in "iu" or int(labels.min()) < 0:
        return np.unique(labels, return_index=True)[1]
    first = np.full(int(labels.max()) + 1, n, dtype=np.intp)
    np.minimum.at(first, labels, np.arange(n, dtype=np.intp))
    return first[first < n]


def group_mean_moves(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of the finite values of each group (NaN for a group without one): a group's
    distance moved, which colours its aggregate over a density image."""
    ok = np.isfinite(values)
    n_groups = int(labels.max()) + 1 if len(labels) else 0
    total = np.bincount(labels[ok], weights=values[ok], minlength=n_groups)
    count = np.bincount(labels[ok], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out


def pair_moves(
    axes: tuple[str, str], move_x: np.ndarray, move_y: np.ndarray, labels: np.ndarray
) -> PairMoves:
    """The :class:`PairMoves` of two axes' moves (:func:`axis_moves`) for a run's ``labels``."""
    distance = distance_moved(move_x, move_y)
    classes = move_classes(distance)
    labels = np.asarray(labels)
    groups = move_classes(group_mean_moves(distance, labels)) if len(labels) else classes[:0]
    return PairMoves(
        axes,
        distance,
        classes.astype(np.int8),
        groups.astype(np.int8),
        np.bincount(classes, minlength=len(MOVE_EDGES) + 2),
    )


def axis_move_values(
    result: RunResult, projection: QIProjection, name: str
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Where axis choice ``name`` places the original records and their released values,
    unjittered (slots on a category axis), and whether it is a category axis: what
    :func:`axis_moves` compares, as the groups plot places them."""
    if name in (PC1, PC2):
        i = 0 if name == PC1 else 1
        return projection.original[:, i], projection.protected[:, i], False
    qi = result.qi
    if name in qi.continuous_names:
        j = qi.continuous_names.index(name)
        original = qi.continuous[:, j] * qi.cont_std[j] + qi.cont_mean[j]
        ready = projection.released_numbers.get(name)
        protected = ready if ready is not None else released_numbers(result.protected, name)
        return original, protected, False
    axis = projection.category_axes.get(name) or category_axis(qi, name)
    slots = projection.released_slots.get(name)
    if slots is None:
        slots = axis.slots_of(result.protected[name])
    return axis.original, slots, True


def plot_projection(result: RunResult) -> QIProjection | None:
    """The run's :func:`~microgui.core.views.projection.qi_projection` with what its plots read
    when they show it (:func:`with_plot_defaults`): what a run's worker computes for the app."""
    projection = qi_projection(result)
    return None if projection is None else with_plot_defaults(result, projection)


def with_plot_defaults(result: RunResult, projection: QIProjection) -> QIProjection:
    """``projection`` with what the groups plot reads when it shows the run, computed here (in
    the run's worker) rather than in the GUI thread (issue 30): the :class:`PairMoves` of the
    axes it opens on (:func:`~microgui.core.views.projection.default_axes`) and the
    :data:`~microgui.core.views.projection.VIEW_QUANTILE` quantiles of the records on every
    continuous and PC axis (:func:`~microgui.core.views.projection.tail_quantiles`), and the
    row of each group's first record (:func:`first_of_groups`: where its aggregate is drawn)."""
    choices = plot_axis_choices(result, True)
    if len(choices) < 2:
        return projection
    x_name, y_name = default_axes(result, projection, choices)
    moves = []
    for name in (x_name, y_name):
        original, released, on_slots = axis_move_values(result, projection, name)
        moves.append(axis_moves(original, released, on_slots))
    moved = pair_moves((x_name, y_name), moves[0], moves[1], result.labels)
    categorical = set(categorical_qi_names(result.qi))
    spans: dict[str, tuple[float, float]] = {}
    for name in choices:
        if name in categorical:
            continue  # a category axis spans its slots
        values, _released, _c = axis_move_values(result, projection, name)
        finite = values[np.isfinite(values)]
        if len(finite) > 100:  # as the plot's span: all records below
            spans[name] = tail_quantiles(finite, VIEW_QUANTILE)
    return replace(
        projection,
        moved=moved,
        spans=spans,
        span_quantile=VIEW_QUANTILE,
        group_firsts=first_of_groups(result.labels),
    )


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
