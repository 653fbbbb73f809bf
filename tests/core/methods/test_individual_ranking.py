"""Individual ranking and its differentially private release (``002_f464918b99c38812.txt`` §3.1.2,
§4.17).

- a hand-traced example (groups of k consecutive sorted values, remainder in the last group),
- the partition induced by the per-attribute groups, and that the table is *not* k-anonymous: the
  report says so and the export check refuses it with a clear message,
- the Laplace noise of the DP release: one draw per group, scale m·Δ(A)/(k·ε) (Kolmogorov-Smirnov
  test on the noise, seeded), reproducible by seed,
- hypothesis properties and cancellation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import census
from scipy import stats

from microgui.core.errors import ExportRefused, InvalidParameter
from microgui.core.methods import get_method
from microgui.core.methods.individual_ranking import (
    combined_labels,
    dp_noise,
    individual_ranking,
    laplace_scales,
)
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.release.check import check_export, export_run
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
IDENT = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)

HYPO = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _dataset(columns: dict[str, np.ndarray], extra: bool = True) -> Dataset:
    df = pd.DataFrame(columns)
    specs = {c: QI for c in columns}
    if extra:
        n = len(df)
        df["town"] = [f"t{i % 3}" for i in range(n)]
        df["name"] = [f"person {i}" for i in range(n)]
        specs.update(town=PASS, name=IDENT)
    return Dataset.from_frame(df, RoleMap.from_dict(specs))


# --------------------------------------------------------------------------------------------
# individual ranking, traced by hand
# --------------------------------------------------------------------------------------------


def test_hand_traced_groups_and_means() -> None:
    # a sorted: 0(r5) 1(r1) | 2(r3) 3(r2) | 4(r4) 5(r0) 6(r6)  -> 7 = 3·2 + 1: last group of 3
    # b sorted: 0(r6) 1(r0) | 2(r1) 3(r2) | 4(r3) 5(r4) 6(r5)
    x = np.array([[5.0, 1], [1, 2], [3, 3], [2, 4], [4, 5], [0, 6], [6, 0]])
    protected, groups = individual_ranking(x, 2)
    np.testing.assert_array_equal(groups[:, 0], [2, 0, 1, 1, 2, 0, 2])
    np.testing.assert_array_equal(groups[:, 1], [0, 1, 1, 2, 2, 2, 0])
    np.testing.assert_array_equal(protected[:, 0], [5, 0.5, 2.5, 2.5, 5, 0.5, 5])
    np.testing.assert_array_equal(protected[:, 1], [0.5, 2.5, 2.5, 5, 5, 5, 0.5])
    # records 0 and 6 share both groups; every other combination is unique
    np.testing.assert_array_equal(combined_labels(groups), [0, 1, 2, 3, 4, 5, 0])


def test_ties_keep_row_order_and_remainder_goes_last() -> None:
    # 10 equal values, k = 3: groups by row order 0-2, 3-5, 6-9 (the last takes the remainder).
    x = np.zeros((10, 1))
    _, groups = individual_ranking(x, 3)
    np.testing.assert_array_equal(groups[:, 0], [0, 0, 0, 1, 1, 1, 2, 2, 2, 2])


def test_direct_call_validates_k() -> None:
    with pytest.raises(InvalidParameter):
        individual_ranking(np.zeros((4, 2)), 1)
    with pytest.raises(InvalidParameter):
        individual_ranking(np.zeros((4, 2)), 5)


# --------------------------------------------------------------------------------------------
# through run_protection: not k-anonymous, said so, and refused at export
# --------------------------------------------------------------------------------------------


def _correlated(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(50, 10, n)
    return {"a": a, "b": rng.normal(0, 1, n) * 3 - a, "c": rng.exponential(100, n)}


def test_run_report_and_export_refusal(tmp_path: Path) -> None:
    dataset = _dataset(_correlated(200, 1))
    result = run_protection(dataset, RunSpec.make("individual-ranking", 4))
    report = result.report
    assert report["k_anonymity_guaranteed"] is False
    assert "not k-anonymous" in report["note"]
    assert report["groups_per_attribute"] == {"a": 50, "b": 50, "c": 50}
    # each attribute on its own is 4-anonymous, the combination is not
    for col in "abc":
        assert k_anonymity_level(result.protected, [col]) >= 4
    assert report["k_anonymity"] < 4
    assert report["min_group_size"] < 4  # the induced partition has small groups
    check = check_export(result)
    assert not check.ok
    assert any("below the chosen k = 4" in p for p in check.problems)
    with pytest.raises(ExportRefused, match="anonymous on its quasi-identifiers"):
        export_run(dataset, result, tmp_path / "out.csv")
    written = export_run(
        dataset, result, tmp_path / "out.csv", override="masking release, reviewed"
    )
    assert written["export_override"]["reason"] == "masking release, reviewed"


def test_run_keeps_rows_other_columns_and_means() -> None:
    data = _correlated(101, 2)
    dataset = _dataset(data)
    result = run_protection(dataset, RunSpec.make("individual-ranking", 5))
    protected = result.protected
    assert list(protected.index) == list(dataset.frame.index)
    assert "name" not in protected.columns
    pd.testing.assert_series_equal(protected["town"], dataset.frame["town"])
    for col, values in data.items():
        np.testing.assert_allclose(protected[col].mean(), values.mean(), rtol=1e-12)
        # the protected values are the group means of this attribute's own ranking
        expected, _ = individual_ranking(values[:, None], 5)
        np.testing.assert_allclose(protected[col].to_numpy(), expected[:, 0], rtol=1e-12)
    # records with one label have the same protected values, and the labels are that partition
    qi = protected[list(data)].to_numpy()
    for g in range(result.n_groups):
        members = qi[result.labels == g]
        assert (members == members[0]).all()
    assert result.report["information_loss"] < 5.0  # much lower than multivariate methods


def test_registered() -> None:
    for name in ("individual-ranking", "dp-individual-ranking"):
        method = get_method(name)
        assert method.kinds == frozenset({AttributeKind.CONTINUOUS})
        assert not method.aggregates
        assert "002_f464918b99c38812.txt" in method.citation


# --------------------------------------------------------------------------------------------
# differentially private release
# --------------------------------------------------------------------------------------------


def test_laplace_scale_formula() -> None:
    x = np.array([[0.0, 10.0], [4.0, 30.0], [2.0, 20.0], [1.0, 15.0]])
    scales, ranges, per_attribute = laplace_scales(x, 2, 0.5)
    np.testing.assert_array_equal(ranges, [4.0, 20.0])
    assert per_attribute == 0.25  # ε/m with m = 2
    np.testing.assert_allclose(scales, [4.0 / (2 * 0.25), 20.0 / (2 * 0.25)])
    scales_attr, _, per_attr = laplace_scales(x, 2, 0.5, "attribute")
    assert per_attr == 0.5
    np.testing.assert_allclose(scales_attr, scales / 2)
    with pytest.raises(InvalidParameter, match="epsilon"):
        laplace_scales(x, 2, 0.0)


def _noise_per_group(n: int, m: int, k: int, epsilon: float, seed: int, scope: str = "release"):
    rng = np.random.default_rng(7)
    data = {f"q{j}": rng.uniform(0, 10 * (j + 1), n) for j in range(m)}
    dataset = _dataset(data, extra=False)
    params = {"epsilon": epsilon, "epsilon_scope": scope}
    dp = run_protection(dataset, RunSpec.make("dp-individual-ranking", k, params, seed=seed))
    plain = run_protection(dataset, RunSpec.make("individual-ranking", k))
    x = np.column_stack(list(data.values()))
    _, groups = individual_ranking(x, k)
    noise = dp.protected[list(data)].to_numpy() - plain.protected[list(data)].to_numpy()
    return x, groups, noise, dp


def test_noise_is_one_laplace_draw_per_group_with_the_documented_scale() -> None:
    n, m, k, epsilon = 20_000, 2, 2, 1.0
    x, groups, noise, dp = _noise_per_group(n, m, k, epsilon, seed=11)
    ranges = x.max(axis=0) - x.min(axis=0)
    for j in range(m):
        scale = m * ranges[j] / (k * epsilon)  # Δ(A)/(k·ε/m)
        assert dp.report["laplace_scale"][f"q{j}"] == pytest.approx(scale)
        # the same draw on every record of a group
        first = np.full(n // k, np.nan)
        first[groups[:, j]] = noise[:, j]
        np.testing.assert_allclose(noise[:, j], first[groups[:, j]], rtol=0, atol=1e-9 * scale)
        # one draw per group: Laplace(0, scale) (KS test, fixed seed: deterministic)
        assert stats.kstest(first, "laplace", args=(0.0, scale)).pvalue > 0.01
        # and the test has power: the per-attribute reading (scale / m) is rejected
        assert stats.kstest(first, "laplace", args=(0.0, scale / m)).pvalue < 1e-6
    assert dp.report["epsilon_total"] == epsilon
    assert dp.report["k_anonymity_guaranteed"] is False
    assert not check_export(dp).ok


def test_attribute_scope_gives_each_attribute_the_full_epsilon() -> None:
    n, m, k, epsilon = 4_000, 2, 2, 2.0
    x, groups, noise, dp = _noise_per_group(n, m, k, epsilon, seed=3, scope="attribute")
    ranges = x.max(axis=0) - x.min(axis=0)
    first = np.full(n // k, np.nan)
    first[groups[:, 0]] = noise[:, 0]
    scale = ranges[0] / (k * epsilon)
    assert stats.kstest(first, "laplace", args=(0.0, scale)).pvalue > 0.01
    assert dp.report["epsilon_total"] == m * epsilon
    assert dp.report["epsilon_per_attribute"] == epsilon


def test_seed_reproduces_and_different_seeds_differ() -> None:
    dataset = _dataset(_correlated(300, 4))
    spec = RunSpec.make("dp-individual-ranking", 3, {"epsilon": 2.0}, seed=42)
    a = run_protection(dataset, spec).protected
    b = run_protection(dataset, spec).protected
    c = run_protection(dataset, RunSpec.make("dp-individual-ranking", 3, {"epsilon": 2.0}, seed=43))
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["a"].to_numpy(), c.protected["a"].to_numpy())


def test_dp_noise_draw_order() -> None:
    groups = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    noise = dp_noise(groups, np.array([1.0, 2.0]), np.random.default_rng(5))
    draws = np.random.default_rng(5)
    first = draws.laplace(0, 1.0, 2)
    second = draws.laplace(0, 2.0, 2)
    np.testing.assert_array_equal(noise[:, 0], first[groups[:, 0]])
    np.testing.assert_array_equal(noise[:, 1], second[groups[:, 1]])


def test_bad_epsilon_is_a_user_error() -> None:
    dataset = _dataset(_correlated(20, 5))
    with pytest.raises(InvalidParameter, match="epsilon"):
        run_protection(dataset, RunSpec.make("dp-individual-ranking", 2, {"epsilon": "0"}))
    with pytest.raises(InvalidParameter, match="epsilon_scope"):
        run_protection(dataset, RunSpec.make("dp-individual-ranking", 2, {"epsilon_scope": "x"}))


# --------------------------------------------------------------------------------------------
# properties, reference data, cancellation
# --------------------------------------------------------------------------------------------


@HYPO
@given(
    st.integers(2, 6).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.integers(k, 50).flatmap(
                lambda n: st.lists(
                    st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=n, max_size=n
                )
            ),
        )
    )
)
def test_properties(case: tuple[int, list[list[int]]]) -> None:
    k, rows = case
    x = np.array(rows, dtype=np.float64) / 3.0
    n = len(x)
    protected, groups = individual_ranking(x, k)
    for j in range(x.shape[1]):
        sizes = np.bincount(groups[:, j])
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
        assert (sizes[:-1] == k).all()  # fixed size but the last group
        # groups are contiguous in sorted order: no value of a group exceeds the next group's
        lows = [x[groups[:, j] == g, j].min() for g in range(len(sizes))]
        highs = [x[groups[:, j] == g, j].max() for g in range(len(sizes))]
        assert all(h <= lo for h, lo in zip(highs[:-1], lows[1:], strict=True))
        np.testing.assert_allclose(protected[:, j].sum(), x[:, j].sum(), atol=1e-9 * n)
        _, counts = np.unique(protected[:, j], return_counts=True)
        assert counts.min() >= k  # each attribute is k-anonymous on its own
    labels = combined_labels(groups)
    assert set(labels.tolist()) == set(range(labels.max() + 1))
    for g in range(labels.max() + 1):
        assert (groups[labels == g] == groups[labels == g][0]).all()


@pytest.mark.shared
def test_census_information_loss_is_low() -> None:
    df = census()
    dataset = Dataset.from_frame(df, RoleMap.from_dict({str(c): QI for c in df.columns}))
    expected = {3: 0.1073, 4: 0.2417, 5: 0.3375, 10: 0.8951}
    for k, il in expected.items():
        result = run_protection(dataset, RunSpec.make("individual-ranking", k))
        assert result.report["information_loss"] == pytest.approx(il, abs=5e-4)
        assert result.report["k_anonymity"] < k  # the combination is nearly unique


def test_cancellation_propagates() -> None:
    dataset = _dataset(_correlated(50, 6))
    calls: list[str] = []

    def progress(fraction: float, status: str = "") -> None:
        calls.append(status)
        if status == "ranking attributes":
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(dataset, RunSpec.make("individual-ranking", 3), progress)
    assert calls[-1] == "ranking attributes"
