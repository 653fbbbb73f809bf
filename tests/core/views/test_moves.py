"""Distance moved in the groups plot and a group's members (issue 29; core.views.moves)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.views.moves import (
    MOVE_EDGES,
    axis_move_values,
    axis_moves,
    distance_moved,
    group_mean_moves,
    group_members,
    move_class_labels,
    move_classes,
    plot_projection,
)
from microgui.core.views.projection import (
    VIEW_QUANTILE,
    default_axes,
    plot_axis_choices,
)


def test_continuous_moves_are_in_standard_deviations() -> None:
    original = np.array([0.0, 2.0, 4.0, 6.0])  # population SD sqrt(5)
    released = np.array([1.0, 1.0, 5.0, np.nan])
    moves = axis_moves(original, released, categorical=False)
    sd = np.sqrt(5.0)
    np.testing.assert_allclose(moves[:3], [1 / sd, -1 / sd, 1 / sd])
    assert np.isnan(moves[3])  # a value with no place has no move


def test_a_changed_category_moves_by_one() -> None:
    moves = axis_moves(np.array([0, 1, 2]), np.array([0, 2, np.nan]), categorical=True)
    np.testing.assert_array_equal(moves[:2], [0.0, 1.0])
    assert np.isnan(moves[2])
    np.testing.assert_allclose(distance_moved(np.array([3.0, 1.0]), np.array([4.0, 0.0])), [5, 1])


def test_classes_and_their_labels_agree() -> None:
    d = np.array([0.0, 0.04, 0.05, 0.3, 0.99, 1.0, 7.0, np.nan])
    np.testing.assert_array_equal(move_classes(d), [0, 0, 1, 2, 3, 4, 4, 5])
    labels = move_class_labels()
    assert len(labels) == len(MOVE_EDGES) + 2 and "SD" in labels[0]


def test_group_members_lists_the_clicked_records_group_before_and_after() -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {"age": rng.integers(20, 70, 40).astype(float), "sex": rng.choice(["f", "m"], 40)}
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "sex": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
        }
    )
    result = run_protection(
        Dataset.from_frame(frame, roles), RunSpec.make("mdav-generic", 4, seed=0)
    )
    table = group_members(result, 7)
    members = np.flatnonzero(result.labels == result.labels[7])
    assert list(table.index) == list(members)
    assert list(table.columns) == ["age", "age →", "sex", "sex →"]
    np.testing.assert_allclose(table["age"].astype(float), frame["age"].to_numpy()[members])
    assert list(table["sex"]) == list(frame["sex"].to_numpy()[members])
    released = result.protected["age"].to_numpy()[members]
    np.testing.assert_allclose(table["age →"].astype(float), released, rtol=1e-5)
    assert len(group_members(result, 7, max_rows=2)) == 2


def test_the_projection_carries_the_opening_axes_moves_spans_and_group_firsts() -> None:
    """What the plots read when they show a run, computed with the projection (in the worker):
    the same numbers as computed from the axes' values on the spot."""
    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(float),
            "income": rng.lognormal(8, 1, n),
            "region": rng.choice(["n", "s", "e", "w"], n),
        }
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "income": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "region": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
        }
    )
    result = run_protection(
        Dataset.from_frame(frame, roles), RunSpec.make("mdav-generic", 5, seed=0)
    )
    projection = plot_projection(result)
    assert projection is not None and projection.moved is not None
    choices = plot_axis_choices(result, True)
    axes = default_axes(result, projection, choices)
    assert projection.moved.axes == axes == ("age", "income")  # two continuous: themselves
    move = [axis_moves(*axis_move_values(result, projection, name)) for name in axes]
    distance = distance_moved(*move)
    np.testing.assert_array_equal(projection.moved.distance, distance)
    np.testing.assert_array_equal(projection.moved.classes, move_classes(distance))
    np.testing.assert_array_equal(
        projection.moved.group_classes, move_classes(group_mean_moves(distance, result.labels))
    )
    np.testing.assert_array_equal(
        projection.moved.class_counts, np.bincount(move_classes(distance), minlength=6)
    )
    assert set(projection.spans) == {"PC1", "PC2", "age", "income"}  # no category axis
    age = frame["age"].to_numpy()
    assert projection.spans["age"] == tuple(
        float(v) for v in np.quantile(age, [VIEW_QUANTILE, 1 - VIEW_QUANTILE])
    )
    assert projection.group_firsts is not None
    np.testing.assert_array_equal(
        projection.group_firsts, np.unique(result.labels, return_index=True)[1]
    )
