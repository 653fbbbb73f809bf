"""TFRP, two fixed reference points (``002_f464918b99c38812.txt`` §4.10; Chang, Li & Huang 2007).

- phase I and phase II traced by hand on small tables and on the companies example of
  ``001_3dadf1a6914d9138.txt`` Tables 1-2 (against the optimal partition printed there),
- the survey's claims on phase II: it only reduces the number of groups and improves the data
  quality (SSE never grows), every group stays >= k,
- the information loss on the CASC reference sets (recorded; no paper figures for them here) with
  the kernels checked against :func:`tfrp_reference`,
- hypothesis properties, progress and cancellation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from method_properties import CONF, IDENT, PASS, QI, check_run, group_sizes, tables
from reference_sets import reference_dataset, shared_path

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import get_method
from microgui.core.methods import tfrp as tfrp_module
from microgui.core.methods.tfrp import phase_two, reference_points, tfrp_partition, tfrp_reference
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

HYPO = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    tfrp_module.warm_up()


def _sizes_ok(labels: np.ndarray, k: int, phase2: bool) -> np.ndarray:
    return group_sizes(labels, k, at_most=None if phase2 else 2 * k - 1)


def _sse(z: np.ndarray, labels: np.ndarray) -> float:
    return float(
        sum(((z[labels == g] - z[labels == g].mean(axis=0)) ** 2).sum() for g in set(labels))
    )


# --------------------------------------------------------------------------------------------
# hand-traced partitions
# --------------------------------------------------------------------------------------------

LINE = np.array([[7.0], [8.0], [9.0], [15.0], [17.0], [21.0]])


def test_phase_one_traced_by_hand() -> None:
    """R1 = 7, R2 = 21. From R1: the farthest is 21, with 17 (group 0). From R2: the farthest of
    7, 8, 9, 15 is 7, with 8 (group 1). From R1: the farthest of 9, 15 is 15, with 9 (group 2).

    This pins the survey's "the furthest vector from a reference point" (``002`` §4.10; issue
    16): seeding with the record *nearest* the reference point would give 7 with 8, then 21
    with 17, then 9 with 15, i.e. labels 0, 0, 2, 2, 1, 1."""
    np.testing.assert_array_equal(reference_points(LINE)[0], [7.0])
    np.testing.assert_array_equal(reference_points(LINE)[1], [21.0])
    np.testing.assert_array_equal(tfrp_partition(LINE, 2, phase2=False), [1, 1, 2, 2, 0, 0])
    np.testing.assert_array_equal(tfrp_reference(LINE, 2, phase2=False), [1, 1, 2, 2, 0, 0])


def test_the_nearest_seed_reading_differs_on_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading not taken (issue 16): seeds nearest the reference points, rows by increasing
    distance, give another partition of LINE than the one pinned above."""
    monkeypatch.setattr(
        tfrp_module,
        "seed_order",
        lambda dist: np.lexsort((np.arange(len(dist)), dist)).astype(np.int64),
    )
    np.testing.assert_array_equal(tfrp_reference(LINE, 2, phase2=False), [0, 0, 2, 2, 1, 1])


def test_phase_two_traced_by_hand() -> None:
    """GSE: {9, 15} 18, {17, 21} 8, {7, 8} 0.5, examined in that order. {9, 15}: 9 is nearest to
    the centroid 7.5, 15 to 19 (4 vs 7.5). The move changes SSE by 2·1/3·1.5² + 2·1/3·4² - (3² + 3²)
    = 1.5 + 10.67 - 18 < 0: the group is dissolved. {15, 17, 21} then has only {7, 8, 9} to go
    to (change 1.5·9.67² - 0 > 0): kept, as is {7, 8, 9}. SSE 26.5 -> 20.67; survivors renumbered
    in their order (0: {15, 17, 21}, 1: {7, 8, 9})."""
    first = tfrp_partition(LINE, 2, phase2=False)
    labels = tfrp_partition(LINE, 2)
    np.testing.assert_array_equal(labels, [1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(phase_two(LINE, first), labels)
    np.testing.assert_array_equal(tfrp_reference(LINE, 2), labels)
    assert _sse(LINE, first) == pytest.approx(26.5)
    assert _sse(LINE, labels) == pytest.approx(20.0 + 2.0 / 3.0)


def test_phase_two_keeps_groups_whose_move_changes_nothing() -> None:
    # All records equal: every move changes SSE by exactly 0, so nothing is dissolved (the
    # 1e-12 guard keeps rounding from deciding).
    x = np.ones((9, 2)) / 3.0
    np.testing.assert_array_equal(tfrp_partition(x, 3), [0, 0, 0, 1, 1, 1, 2, 2, 2])


@pytest.mark.shared
def test_companies_example_traced_by_hand() -> None:
    """``001`` Table 1 (surface, employees as z-scores; k = 3). R1 = (-2.079, -1.432), R2 =
    (1.351, 1.236). From R1 the farthest is A (15.07), with J and B; from R2, K (16.6), with F and
    I; from R1, E (11.8 among C, D, E, G, H), with D and C. G and H are left: both nearest to
    {A, B, J}'s centroid. Phase II dissolves nothing. SSE 6.9983, above the optimum 6.8044 of
    ``001`` Table 2."""
    path = shared_path("seed-examples", "companies.csv")
    df = pd.read_csv(path)
    roles = RoleMap.from_dict(
        {
            "Company name": IDENT,
            "Surface": QI,
            "Employees": QI,
            "Turnover": CONF,
            "Net profit": CONF,
        }
    )
    names = [name[0] for name in df["Company name"]]
    optimal = np.array([0, 0, 0, 1, 1, 2, 2, 2, 1, 0, 2])
    for phase2 in (False, True):
        result = run_protection(
            Dataset.from_frame(df, roles), RunSpec.make("tfrp", 3, {"phase2": phase2})
        )
        groups = ["".join(names[i] for i in np.flatnonzero(result.labels == g)) for g in range(3)]
        assert groups == ["ABGHJ", "FIK", "CDE"]
        z = result.qi.continuous
        assert _sse(z, result.labels) == pytest.approx(6.9983, abs=1e-4)
        assert _sse(z, result.labels) >= _sse(z, optimal)
        assert result.report["tfrp_phase2"] is phase2
    assert result.report["tfrp_groups_dissolved"] == 0


def test_direct_call_validation() -> None:
    x = np.zeros((5, 2))
    with pytest.raises(InvalidParameter):
        tfrp_partition(x, 1)
    with pytest.raises(InvalidParameter):
        tfrp_partition(x, 6)
    assert (tfrp_partition(x, 5) == 0).all()
    assert (tfrp_partition(x, 3) == 0).all()


def test_input_is_not_modified() -> None:
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=(40, 3)), np.asfortranarray(rng.normal(size=(40, 3)))):
        before = x.copy()
        labels = tfrp_partition(x, 3)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(labels, tfrp_reference(x, 3))


# --------------------------------------------------------------------------------------------
# CASC reference sets
# --------------------------------------------------------------------------------------------

#: IL = 100 SSE/SST (%) measured with this implementation, phase I only / with phase II (MDAV's:
#: 5.69/7.49/9.09/14.16, 16.93/19.55/22.46/33.19, 0.48/0.67/1.67/3.84). Seeds farthest from the
#: reference points (issue 16 checked the nearest: the module docstring gives its figures).
RECORDED_IL = {
    ("CASCrefmicrodata.csv", 3): (5.9651, 5.8057),
    ("CASCrefmicrodata.csv", 4): (7.9437, 7.6736),
    ("CASCrefmicrodata.csv", 5): (9.2682, 8.9804),
    ("CASCrefmicrodata.csv", 10): (14.4630, 13.9752),
    ("Tarragona.csv", 3): (17.0794, 16.7156),
    ("Tarragona.csv", 4): (19.9719, 19.5987),
    ("Tarragona.csv", 5): (23.4013, 23.1092),
    ("Tarragona.csv", 10): (33.5491, 33.3636),
    ("EIA.csv", 3): (0.5129, 0.4160),
    ("EIA.csv", 4): (0.6803, 0.6075),
    ("EIA.csv", 5): (1.7692, 1.0108),
    ("EIA.csv", 10): (3.5473, 2.6636),
}


def _reference_dataset(name: str) -> Dataset:
    return reference_dataset(name, QI, PASS)


@pytest.mark.shared
@pytest.mark.parametrize(("name", "k"), sorted(RECORDED_IL))
def test_reference_sets(name: str, k: int) -> None:
    dataset = _reference_dataset(name)
    losses = []
    for phase2, expected in zip((False, True), RECORDED_IL[(name, k)], strict=True):
        result = run_protection(dataset, RunSpec.make("tfrp", k, {"phase2": phase2}))
        assert result.report["information_loss"] == pytest.approx(expected, abs=5e-4)
        losses.append(result.report["information_loss"])
        _sizes_ok(result.labels, k, phase2)
        assert result.report["k_anonymity"] >= k
        assert k_anonymity_level(result.protected, list(result.qi.continuous_names)) >= k
        if name != "EIA.csv" or k == 5:  # the plain numpy reference is slow on EIA
            np.testing.assert_array_equal(
                result.labels, tfrp_reference(result.qi.continuous, k, phase2=phase2)
            )
    assert losses[1] <= losses[0]  # phase II lowers SSE


# --------------------------------------------------------------------------------------------
# registry, parameters and kinds
# --------------------------------------------------------------------------------------------


def test_registered() -> None:
    m = get_method("tfrp")
    assert m.kinds == frozenset({AttributeKind.CONTINUOUS})
    assert "002_f464918b99c38812.txt §4.10" in m.citation
    assert m.bench_sizes == (10_000, 50_000) and m.complexity
    (phase2,) = m.params
    assert phase2.name == "phase2" and phase2.default is True


def test_phase2_parameter_is_parsed() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    dataset = Dataset.from_frame(df, RoleMap.from_dict({"a": QI, "b": QI}))
    off = run_protection(dataset, RunSpec.make("tfrp", 3, {"phase2": "false"}))
    assert off.report["tfrp_phase2"] is False
    np.testing.assert_array_equal(off.labels, tfrp_partition(off.qi.continuous, 3, phase2=False))
    with pytest.raises(InvalidParameter, match="phase2"):
        run_protection(dataset, RunSpec.make("tfrp", 3, {"phase2": "maybe"}))


def test_refuses_categorical_quasi_identifiers() -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "g": list("abcabcabca")})
    roles = RoleMap.from_dict(
        {"x": QI, "g": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)}
    )
    with pytest.raises(InvalidRoles):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("tfrp", 2))


# --------------------------------------------------------------------------------------------
# progress and cancellation
# --------------------------------------------------------------------------------------------


def test_progress_is_monotone_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tfrp_module, "_BATCH_WORK", 2_000)
    seen: list[float] = []
    x = np.random.default_rng(0).normal(size=(300, 4))
    labels = tfrp_partition(x, 3, progress=lambda f, s="": seen.append(f))
    assert len(seen) > 20
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    np.testing.assert_array_equal(labels, tfrp_reference(x, 3))


@pytest.mark.parametrize("stage", ["phase I", "phase II"])
def test_cancellation_stops_the_run(monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    monkeypatch.setattr(tfrp_module, "_BATCH_WORK", 2_000)
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    roles = RoleMap.from_dict({"a": QI, "b": QI})
    calls: list[tuple[float, str]] = []

    def progress(fraction: float, status: str = "") -> None:
        calls.append((fraction, status))
        if status.startswith(stage) and sum(s.startswith(stage) for _, s in calls) >= 3:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("tfrp", 3), progress)
    assert calls[-1][1].startswith(stage)
    assert calls[-1][0] < 0.9


# --------------------------------------------------------------------------------------------
# hypothesis properties
# --------------------------------------------------------------------------------------------


@HYPO
@given(tables())
def test_properties_of_a_run(table: tuple[pd.DataFrame, RoleMap, int]) -> None:
    df, roles, k = table
    dataset = Dataset.from_frame(df, roles)
    first = run_protection(dataset, RunSpec.make("tfrp", k, {"phase2": False}))
    second = run_protection(dataset, RunSpec.make("tfrp", k))
    check_run(df, roles, k, first, at_most=2 * k - 1)
    check_run(df, roles, k, second, at_most=None)
    z = first.qi.continuous
    np.testing.assert_array_equal(first.labels, tfrp_reference(z, k, phase2=False))
    np.testing.assert_array_equal(second.labels, tfrp_reference(z, k))
    # 002 §4.10: phase II only reduces the number of groups and the SSE ...
    assert second.n_groups <= first.n_groups
    assert _sse(z, second.labels) <= _sse(z, first.labels) + 1e-9 * (1.0 + _sse(z, first.labels))
    # ... by dissolving whole groups: every final group holds a whole phase I group.
    for g in range(second.n_groups):
        inside = second.labels == g
        assert any((inside[first.labels == h]).all() for h in np.unique(first.labels[inside]))


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
        )
    )
)
def test_kernel_matches_reference_on_ties(case: tuple[int, list[list[int]]]) -> None:
    k, rows = case
    x = np.array(rows, dtype=np.float64) / 3.0
    for phase2 in (False, True):
        labels = tfrp_partition(x, k, phase2=phase2)
        np.testing.assert_array_equal(labels, tfrp_reference(x, k, phase2=phase2))
        _sizes_ok(labels, k, phase2)
