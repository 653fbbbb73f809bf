"""Disclosure-risk measures (issue 5): hand cases, k-anonymous bounds on Census."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics.risk import (
    entropy_l_diversity,
    interval_disclosure,
    record_linkage,
    reidentification_risk,
    sample_uniques,
    score,
)
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset


def test_record_linkage_by_hand() -> None:
    x = np.array([[0.0], [2.0], [5.0]])
    # record 0 released at 1: originals 0 and 2 equally near -> credit 1/2; the others exact
    y = np.array([[1.0], [2.0], [5.0]])
    assert record_linkage(x, y) == pytest.approx(100 * 2.5 / 3)
    assert record_linkage(x, x) == pytest.approx(100.0)
    # released far from its own record: record 0 at 4.9 links to record 2
    assert record_linkage(x, np.array([[4.9], [2.0], [5.0]])) == pytest.approx(200 / 3)
    # ten identical originals: each of their releases is a draw among ten (more than the probe)
    dup = np.array([[0.0]] * 10 + [[5.0]])
    assert record_linkage(dup, dup) == pytest.approx(100 * (10 * 0.1 + 1) / 11)


def test_record_linkage_unprotected_copy_is_100() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2000, 4))
    assert record_linkage(x, x.copy()) == pytest.approx(100.0)


def test_interval_disclosure_by_hand() -> None:
    x = np.arange(1.0, 11.0).reshape(-1, 1)
    assert interval_disclosure(x, x, percents=(10,)) == pytest.approx(100.0)
    # reversed: p = 10 % of 10 records is one rank each side, [v-1, v+1] holds x_i only for i = 5, 6
    assert interval_disclosure(x, x[::-1], percents=(10,)) == pytest.approx(20.0)
    # p = 1 % of 10 records is 0 ranks: only exact values count
    assert interval_disclosure(x, x + 0.5, percents=(1,)) == pytest.approx(0.0)


def test_reidentification_and_sample_uniques_by_hand() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3], "b": ["x", "x", "y", "z", "z", "z"]})
    high, mean = reidentification_risk(frame, ["a"])
    assert high == pytest.approx(100.0)
    assert mean == pytest.approx((50 + 50 + 100 + 100) / 6)
    assert sample_uniques(frame, ["b"]) == 1
    assert sample_uniques(frame, []) == 0


def test_entropy_l_diversity_by_hand() -> None:
    frame = pd.DataFrame({"q": [1, 1, 1, 1, 2, 2, 2], "s": ["a", "a", "b", "b", "a", "b", "c"]})
    assert entropy_l_diversity(frame, ["q"], "s") == pytest.approx(2.0)
    assert entropy_l_diversity(frame, np.array([0, 0, 0, 0, 0, 0, 0]), "s") == pytest.approx(
        math.exp(-(3 / 7 * math.log(3 / 7) * 2 + 1 / 7 * math.log(1 / 7)))
    )


def test_score() -> None:
    assert score(10.0, 20.0) == pytest.approx(15.0)
    assert score(10.0, 20.0, w_il=1.0) == pytest.approx(10.0)
    with pytest.raises(ValueError):
        score(1.0, 1.0, w_il=1.5)


@pytest.mark.slow
def test_census_linkage_bounded_and_interval_disclosure_falls(census: pd.DataFrame) -> None:
    ds = Dataset.from_frame(census)
    x = census.to_numpy(dtype=np.float64)
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    previous = 100.0
    assert record_linkage(z, z) == pytest.approx(100.0)
    for k in (3, 5, 10):
        result = run_protection(ds, RunSpec.make("mdav", k, seed=1))
        y = result.protected[list(census.columns)].to_numpy(dtype=np.float64)
        zy = (y - x.mean(axis=0)) / x.std(axis=0, ddof=1)
        assert record_linkage(z, zy) <= 100.0 / k + 1e-9
        disclosure = interval_disclosure(x, y)
        assert disclosure < previous
        previous = disclosure


# agreement with pycanon: tests/core/metrics/test_pycanon.py (in a venv of its own)


def test_unique_rows_matches_numpy_unique() -> None:
    from microgui.core.metrics.risk import unique_rows

    rng = np.random.default_rng(8)
    for n, d in ((0, 3), (1, 2), (50, 1), (400, 3), (300, 0)):
        a = rng.integers(0, 3, size=(n, d)).astype(float)
        if n and d:
            a[0, 0] = -0.0  # equal to 0.0, as numpy compares it
        got = unique_rows(a)
        if n == 0 or d == 0:
            assert len(got[2]) == n
            continue
        want = np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2].reshape(-1))
        np.testing.assert_array_equal(got[3], want[3])
