"""Median-based microaggregation (``002_f464918b99c38812.txt`` §4.14; MDAV partition of ``003``
Algorithm 5.1 around medians).

- a hand-traced partition where the median and the mean pick different records,
- group medians and ADM, and the survey's slip ("ADM is always less than SSE"),
- the numba kernel against the numpy reference (ties, both distances), invariants of the run,
- the CASC reference sets, progress and cancellation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import reference_dataset

from microgui.core.errors import InvalidParameter
from microgui.core.methods import get_method
from microgui.core.methods import median as median_module
from microgui.core.methods.mdav import mdav
from microgui.core.methods.median import (
    absolute_deviation_from_median,
    group_medians,
    median_partition,
    median_partition_reference,
)
from microgui.core.metrics import k_anonymity_level, sse
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
IDENT = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    median_module.warm_up()


def _sizes_ok(labels: np.ndarray, k: int) -> None:
    g = int(labels.max()) + 1
    assert set(np.unique(labels).tolist()) == set(range(g))
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1


# --------------------------------------------------------------------------------------------
# hand-traced
# --------------------------------------------------------------------------------------------

# 0 0 0 6 6 6 6 10 (k = 2): median 6, mean 4.25. Around the median the farthest record is a 0
# (row 0, smallest row of the three), grouped with row 1; s = row 7 (10) with its nearest, row 3
# (6, smallest row of the 6s). Left: rows 2, 4, 5, 6 (0, 6, 6, 6): 2k <= 4 <= 3k-1, median 6,
# r = row 2 with row 4, the rest (5, 6) one group. MDAV starts from 10 instead (mean 4.25).
VALUES = np.array([[0.0], [0.0], [0.0], [6.0], [6.0], [6.0], [6.0], [10.0]])


def test_hand_traced_partition() -> None:
    expected = [0, 0, 2, 1, 2, 3, 3, 1]
    np.testing.assert_array_equal(median_partition(VALUES, 2), expected)
    np.testing.assert_array_equal(median_partition_reference(VALUES, 2), expected)
    np.testing.assert_array_equal(mdav(VALUES, 2), [1, 1, 2, 0, 2, 3, 3, 0])  # 10's group first


def test_group_medians_and_adm() -> None:
    labels = np.array([0, 0, 2, 1, 2, 3, 3, 1])
    # groups {0, 0}, {6, 10}, {0, 6}, {6, 6}: medians 0, 8, 3, 6 (means of the middle pair)
    np.testing.assert_array_equal(group_medians(VALUES, labels)[:, 0], [0, 8, 3, 6])
    assert absolute_deviation_from_median(VALUES, labels) == 10.0  # 0 + 2+2 + 3+3 + 0
    odd = np.array([[1.0], [5.0], [2.0], [9.0], [9.0]])
    assert group_medians(odd, np.array([0, 0, 0, 1, 1]))[:, 0].tolist() == [2.0, 9.0]


def test_survey_slip_adm_is_not_always_below_sse() -> None:
    # 002 §4.14: "ADM ... is always less than ... SSE". With deviations below 1 it is larger:
    # |d| > d^2 for 0 < |d| < 1. What holds: the median minimizes the absolute deviations.
    x = np.array([[0.0], [0.2], [0.6], [1.0]])
    labels = np.array([0, 0, 1, 1])
    adm = absolute_deviation_from_median(x, labels)
    means = np.array([0.1, 0.8])[labels][:, None]
    assert adm == pytest.approx(0.6)
    assert adm > sse(x, means)  # 0.6 > 0.1
    assert adm <= np.abs(x - means).sum() + 1e-12


def test_direct_call_validates_arguments() -> None:
    with pytest.raises(InvalidParameter):
        median_partition(np.zeros((5, 2)), 1)
    with pytest.raises(InvalidParameter):
        median_partition(np.zeros((5, 2)), 6)
    with pytest.raises(InvalidParameter):
        median_partition(np.zeros((5, 2)), 2, distance="cosine")
    assert (median_partition(np.zeros((5, 2)), 5) == 0).all()


# --------------------------------------------------------------------------------------------
# kernel against reference
# --------------------------------------------------------------------------------------------


@HYPO
@given(
    st.integers(2, 5).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.integers(k, 60).flatmap(
                lambda n: st.lists(
                    st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=n, max_size=n
                )
            ),
            st.sampled_from(["euclidean", "manhattan"]),
        )
    )
)
def test_kernel_matches_reference_on_ties(case: tuple[int, list[list[int]], str]) -> None:
    k, rows, distance = case
    x = np.array(rows, dtype=np.float64) / 3.0  # few distinct values: many ties
    labels = median_partition(x, k, distance=distance)
    np.testing.assert_array_equal(labels, median_partition_reference(x, k, distance=distance))
    _sizes_ok(labels, k)


def test_kernel_matches_reference_on_continuous_data() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(700, 4)) * [1, 3, 0.1, 10]
    for distance in ("euclidean", "manhattan"):
        a = median_partition(x, 4, distance=distance)
        np.testing.assert_array_equal(a, median_partition_reference(x, 4, distance=distance))


# --------------------------------------------------------------------------------------------
# through run_protection
# --------------------------------------------------------------------------------------------


def _dataset(n: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.lognormal(10, 1, n),
            "town": [f"t{i % 4}" for i in range(n)],
            "name": [f"p{i}" for i in range(n)],
        },
        index=[f"row{i}" for i in rng.permutation(n)],
    )
    roles = RoleMap.from_dict({"age": QI, "income": QI, "town": PASS, "name": IDENT})
    return Dataset.from_frame(df, roles)


@pytest.mark.parametrize("distance", ["euclidean", "manhattan"])
def test_run_publishes_group_medians(distance: str) -> None:
    dataset = _dataset(203, 1)
    k = 4
    result = run_protection(dataset, RunSpec.make("median", k, {"distance": distance}))
    _sizes_ok(result.labels, k)
    protected = result.protected
    assert list(protected.index) == list(dataset.frame.index)
    assert "name" not in protected.columns
    pd.testing.assert_series_equal(protected["town"], dataset.frame["town"])
    assert k_anonymity_level(protected, ["age", "income"]) >= k
    assert result.report["k_anonymity"] >= k
    original = dataset.frame[["age", "income"]].to_numpy()
    np.testing.assert_array_equal(
        protected[["age", "income"]].to_numpy(),
        group_medians(original, result.labels)[result.labels],
    )
    np.testing.assert_array_equal(
        result.labels, median_partition(result.qi.continuous, k, distance=distance)
    )
    # ADM on the z-scale, and the median's optimality: ADM <= absolute deviations from the means
    z = result.qi.continuous
    assert result.report["adm"] == pytest.approx(absolute_deviation_from_median(z, result.labels))
    means = np.stack([z[result.labels == g].mean(axis=0) for g in range(result.n_groups)])
    assert result.report["adm"] <= np.abs(z - means[result.labels]).sum() + 1e-9
    for j, col in enumerate(["age", "income"]):
        assert result.report["adm_per_attribute"][col] == pytest.approx(
            np.abs(original[:, j] - protected[col].to_numpy()).sum()
        )


def test_registered() -> None:
    method = get_method("median")
    assert method.kinds == frozenset({AttributeKind.CONTINUOUS})
    assert not method.aggregates
    assert "002_f464918b99c38812.txt §4.14" in method.citation


@pytest.mark.shared
@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv", "EIA.csv"])
def test_reference_sets(name: str) -> None:
    dataset = reference_dataset(name, QI, PASS)
    for k in (3, 10):
        result = run_protection(dataset, RunSpec.make("median", k))
        _sizes_ok(result.labels, k)
        assert result.report["k_anonymity"] >= k
        np.testing.assert_array_equal(
            result.labels, median_partition_reference(result.qi.continuous, k)
        )
        assert 0 < result.report["information_loss"] < 100


# --------------------------------------------------------------------------------------------
# progress and cancellation
# --------------------------------------------------------------------------------------------


def test_progress_is_monotone_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(median_module, "_BATCH_WORK", 2_000)
    seen: list[float] = []
    x = np.random.default_rng(0).normal(size=(300, 3))
    labels = median_partition(x, 3, progress=lambda f, s="": seen.append(f))
    assert len(seen) > 10
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    np.testing.assert_array_equal(labels, median_partition_reference(x, 3))


def test_cancellation_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(median_module, "_BATCH_WORK", 2_000)
    calls: list[float] = []

    def progress(fraction: float, status: str = "") -> None:
        calls.append(fraction)
        if status == "forming groups around medians" and len(calls) >= 4:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(_dataset(500, 2), RunSpec.make("median", 3), progress)
    assert len(calls) == 4 and calls[-1] < 0.9
