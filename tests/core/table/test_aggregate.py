"""The aggregation step (``003_309fe4adb430bc25.txt`` §5.2-5.4): means, medians, convex medians,
modes, variance rescaling, and the protected table built from a partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.table.aggregate import (
    aggregate,
    convex_frequencies,
    convex_median,
    group_means,
    mode,
    ordinal_median,
    rescale_variance,
    weighted_lower_median,
)
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap


def test_median_example_of_003_section_5_3() -> None:
    # 003 Definition 5.2: "the median of S = {1, 2, 2, 5, 6} is 2".
    assert ordinal_median(np.array([1, 2, 2, 5, 6]), 8) == 2


def test_convex_median_example_of_003_section_5_3() -> None:
    # 003 §5.3: on the integer scale 0..7, "the median of {1, 2, 7} is 2, while the convex median is 4".
    assert ordinal_median(np.array([1, 2, 7]), 8) == 2
    assert convex_median(np.array([1, 2, 7]), 8) == 4


def test_convex_frequencies_of_003_figure_2() -> None:
    # S = {1, 2, 2, 5, 6} on C = {0..7}: f = 0,1,2,0,0,1,1,0; f'(c) = min(max_{j<=c} f, max_{j>=c} f).
    f = np.bincount([1, 2, 2, 5, 6], minlength=8)
    np.testing.assert_array_equal(convex_frequencies(f), [0, 1, 2, 1, 1, 1, 1, 0])
    assert (
        convex_median(np.array([1, 2, 2, 5, 6]), 8) == 3
    )  # cumulative 0,1,3,4 of 7 reaches 3.5 at 3


def test_tie_rules() -> None:
    # Even count: the lower of the two central categories.
    assert ordinal_median(np.array([0, 1, 2, 3]), 4) == 1
    assert weighted_lower_median(np.array([1, 1])) == 0
    # Mode: the smallest code among the most frequent.
    assert mode(np.array([2, 2, 1, 1, 3]), 4) == 1
    assert mode(np.array([3]), 4) == 3


def test_group_means() -> None:
    values = np.array([[1.0, 10.0], [3.0, 20.0], [5.0, 0.0]])
    np.testing.assert_allclose(
        group_means(values, np.array([0, 0, 1]), 2), [[2.0, 15.0], [5.0, 0.0]]
    )


def test_rescale_variance_preserves_mean_and_variance() -> None:
    rng = np.random.default_rng(0)
    original = rng.normal(3.0, 2.0, size=(60, 2))
    labels = np.repeat(np.arange(20), 3)
    protected = group_means(original, labels, 20)[labels]
    rescaled = rescale_variance(protected, original)
    np.testing.assert_allclose(rescaled.mean(axis=0), original.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(rescaled.var(axis=0), original.var(axis=0), rtol=1e-12)
    # Records of a group stay equal (k-anonymity is kept).
    assert (rescaled[0::3] == rescaled[1::3]).all() and (rescaled[0::3] == rescaled[2::3]).all()


def test_rescale_variance_leaves_one_group_alone() -> None:
    # Regression: identical protected values have a computed variance of ~1e-34 (their mean
    # rounds); dividing by it moved the whole column by one standard deviation.
    original = np.array([[0.0], [0.0], [0.0], [0.0], [0.0], [0.0], [1.0]])
    protected = np.full_like(original, original.mean())
    assert protected.var() > 0  # the rounding that used to trigger the bug
    rescaled = rescale_variance(protected, original)
    assert (rescaled == rescaled[0]).all()
    assert rescaled[0, 0] == pytest.approx(original.mean(), rel=1e-12)


@pytest.fixture
def small() -> Dataset:
    frame = pd.DataFrame(
        {
            "id": ["p1", "p2", "p3", "p4", "p5"],
            "x": [1.0, 2.0, 3.0, 10.0, 20.0],
            "grade": ["low", "mid", "high", "high", "low"],
            "colour": ["red", "blue", "blue", "green", "red"],
            "note": ["n1", "n2", None, "n4", "n5"],
        },
        index=[50, 40, 30, 20, 10],
    )
    roles = RoleMap.from_dict(
        {
            "id": ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
            "x": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "grade": ColumnSpec(
                AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, ("low", "mid", "high")
            ),
            "colour": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "note": ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL),
        }
    )
    return Dataset.from_frame(frame, roles)


def test_aggregate_replaces_each_group_by_its_average(small: Dataset) -> None:
    labels = np.array([0, 0, 0, 1, 1])
    # 003 §5.3-5.4 aggregate each attribute on its own; group 1 then publishes (low, green),
    # which neither of its records has (joint: tests/core/table/test_joint_aggregate.py)
    params = {
        "rescale_variance": False,
        "ordinal_average": "median",
        "categorical_aggregate": "independent",
    }
    out = aggregate(small, prepare_qi(small), labels, params)
    assert list(out.columns) == ["x", "grade", "colour", "note"]  # identifier removed, order kept
    assert list(out.index) == [50, 40, 30, 20, 10]
    np.testing.assert_allclose(out["x"].to_numpy(dtype=float), [2, 2, 2, 15, 15], rtol=1e-12)
    # Medians: {low, mid, high} -> mid; {high, low} -> low (the lower central category).
    assert list(out["grade"]) == ["mid", "mid", "mid", "low", "low"]
    # Modes: {red, blue, blue} -> blue; {green, red} tie -> green (smallest in sorted order).
    assert list(out["colour"]) == ["blue", "blue", "blue", "green", "green"]
    pd.testing.assert_series_equal(out["note"], small.frame["note"])


def test_aggregate_convex_median_and_rescaling(small: Dataset) -> None:
    labels = np.array([0, 0, 0, 1, 1])
    out = aggregate(
        small,
        prepare_qi(small),
        labels,
        {
            "rescale_variance": True,
            "ordinal_average": "convex-median",
            "categorical_aggregate": "independent",  # 003 §5.3 per attribute
        },
    )
    # {high, low}: f = 1,0,1 becomes f' = 1,1,1, whose lower median is mid.
    assert list(out["grade"]) == ["mid", "mid", "mid", "mid", "mid"]
    x = small.frame["x"].to_numpy()
    protected = out["x"].to_numpy(dtype=float)
    assert protected.mean() == pytest.approx(x.mean(), rel=1e-12)
    assert protected.var() == pytest.approx(x.var(), rel=1e-12)
    assert protected[0] == protected[1] == protected[2] and protected[3] == protected[4]
