"""GSMS, successive group selection (Panagiotakis & Tziritas 2013, IEEE TKDE 25(5)).

- a partition traced by hand where GSMS and MDAV/CBFS differ, and the tie rule,
- the scoring (centroid of the candidate farthest from the centroid of the records left) against
  the literal cost SSE(G) + SSE(R minus G) of the MATLAB port the module follows,
- the kernel against :func:`gsms_reference` label for label (random data, ties, many batches),
- the information loss on the CASC reference sets, recorded (the paper's own table could not be
  read; see the module docstring) and set beside MDAV's,
- hypothesis properties of the full run, progress and cancellation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from method_properties import PASS, QI, check_run, group_sizes, tables
from reference_sets import reference_dataset

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import get_method
from microgui.core.methods import gsms as gsms_module
from microgui.core.methods.cbfs import cbfs_partition
from microgui.core.methods.gsms import gsms_partition, gsms_reference
from microgui.core.methods.mdav import mdav
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

HYPO = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    gsms_module.warm_up()


def _sizes_ok(labels: np.ndarray, k: int) -> np.ndarray:
    return group_sizes(labels, k, at_most=2 * k - 1)


def _sse(x: np.ndarray, labels: np.ndarray) -> float:
    return float(
        sum(((x[labels == g] - x[labels == g].mean(axis=0)) ** 2).sum() for g in set(labels))
    )


def _groups(labels: np.ndarray) -> list[tuple[int, ...]]:
    """The partition as sets of rows, whatever the numbering of the groups."""
    return sorted(tuple(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


# --------------------------------------------------------------------------------------------
# traced by hand
# --------------------------------------------------------------------------------------------

LINE = np.array([[1.0], [4.0], [6.0], [12.0], [13.0]])


def test_traced_by_hand_where_gsms_and_mdav_differ() -> None:
    # k = 2. R = {1, 4, 6, 12, 13}, centroid 7.2. Candidates (seed and its nearest, ties to the
    # smaller row): {1,4} centroid 2.5 (4.7 away), {4,6} 5 (2.2; seeds 4 and 6), {12,13} 12.5
    # (5.3; seeds 12 and 13). {12,13} is farthest: literal cost 0.5 + SSE{1,4,6} = 13.17,
    # against 4.5 + SSE{6,12,13} = 33.17 for {1,4}. Group 0 = {12,13}.
    # R = {1, 4, 6}, centroid 11/3: {1,4} is 7/6 away, {4,6} 4/3: group 1 = {4,6}.
    # 1 is left and joins the nearest centroid, 5 (group 1) rather than 12.5.
    np.testing.assert_array_equal(gsms_partition(LINE, 2), [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(gsms_reference(LINE, 2), [1, 1, 1, 0, 0])
    assert _sse(LINE, gsms_partition(LINE, 2)) == pytest.approx(0.5 + 38 / 3)
    # MDAV and CBFS start from the record farthest from the centroid, 1 (6.2 away, 13 is 5.8):
    # {1,4} then {6,12,13}, SSE 4.5 + 86/3.
    for other in (mdav(LINE, 2), cbfs_partition(LINE, 2)):
        assert _groups(other) == [(0, 1), (2, 3, 4)]
        assert _sse(LINE, other) == pytest.approx(4.5 + 86 / 3)


def test_tie_rule_all_records_equal() -> None:
    # Every score is 0: the seed of smallest row wins and takes the next rows; the record left
    # joins group 0 (equal distances: the group formed first).
    np.testing.assert_array_equal(gsms_partition(np.ones((7, 2)), 3), [0, 0, 0, 1, 1, 1, 0])
    np.testing.assert_array_equal(gsms_reference(np.ones((7, 2)), 3), [0, 0, 0, 1, 1, 1, 0])


def test_tie_rule_between_candidates_and_neighbours() -> None:
    # 0, 1, 2, 10, k = 2 (exact arithmetic). Centroid 3.25. Seed 1 is as near to 0 as to 2: the
    # smaller row wins, {0,1}. Candidates {0,1} (seeds 0, 1; centroid 0.5, 2.75 away), {1,2}
    # (seed 2; 1.75) and {2,10} (seed 10; 6, 2.75 away): {0,1} and {2,10} tie (a candidate and
    # its complement, 2k records left), the smaller seed (row 0) wins; {2,10} is what is left.
    y = np.array([[0.0], [1.0], [2.0], [10.0]])
    np.testing.assert_array_equal(gsms_partition(y, 2), [0, 0, 1, 1])
    np.testing.assert_array_equal(gsms_reference(y, 2), [0, 0, 1, 1])
    # Reversed rows: now 10 is row 0 and seeds the winning candidate.
    np.testing.assert_array_equal(gsms_partition(y[::-1], 2), [0, 0, 1, 1])


def test_direct_call_validation() -> None:
    x = np.zeros((5, 2))
    with pytest.raises(InvalidParameter):
        gsms_partition(x, 1)
    with pytest.raises(InvalidParameter):
        gsms_partition(x, 6)
    assert (gsms_partition(x, 5) == 0).all()
    assert (gsms_partition(x, 3) == 0).all()  # 3 grouped, 2 left join it
    assert (gsms_partition(np.arange(2.0), 2) == 0).all()


def test_input_is_not_modified_whatever_its_memory_order() -> None:
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=(40, 3)), np.asfortranarray(rng.normal(size=(40, 3)))):
        before = x.copy()
        labels = gsms_partition(x, 3)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(labels, gsms_reference(x, 3))


# --------------------------------------------------------------------------------------------
# the scoring against the literal cost of the port
# --------------------------------------------------------------------------------------------


def _literal_gsms(x: np.ndarray, k: int) -> np.ndarray:
    """The MATLAB port GSMS.m transcribed: cost SSE(G_r) + SSE(R minus G_r) for every seed r,
    the smallest taken (first seed on equal cost); left records to the nearest centroid."""

    def sse(rows: np.ndarray) -> float:
        if len(rows) == 0:
            return 0.0
        return float(((x[rows] - x[rows].mean(axis=0)) ** 2).sum())

    n = len(x)
    remaining = np.arange(n)
    groups: list[np.ndarray] = []
    for _ in range(n // k):
        best, best_cost = None, np.inf
        for r in remaining:
            dist = ((x[remaining] - x[r]) ** 2).sum(axis=1)
            dist[remaining == r] = -1.0  # the seed first
            group = remaining[np.argsort(dist, kind="stable")[:k]]
            cost = sse(group) + sse(np.setdiff1d(remaining, group))
            if cost < best_cost:
                best, best_cost = group, cost
        assert best is not None
        groups.append(best)
        remaining = np.setdiff1d(remaining, best)
    labels = np.full(n, -1)
    for g, rows in enumerate(groups):
        labels[rows] = g
    cent = np.array([x[rows].mean(axis=0) for rows in groups])
    for r in remaining:
        labels[r] = int(np.argmin(((cent - x[r]) ** 2).sum(axis=1)))
    return labels


def test_scoring_is_the_literal_cost_of_the_port() -> None:
    # Same partitions; only the numbering of the last two groups may differ when 2k records
    # are left (a candidate and its complement then have the same cost, rounding decides).
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(4, 40))
        k = min(int(rng.integers(2, 6)), n)
        x = rng.normal(size=(n, int(rng.integers(1, 4))))
        assert _groups(gsms_partition(x, k)) == _groups(_literal_gsms(x, k))


# --------------------------------------------------------------------------------------------
# kernel against the reference
# --------------------------------------------------------------------------------------------


def test_kernel_matches_reference_on_random_data() -> None:
    rng = np.random.default_rng(11)
    for i in range(200):
        n = int(rng.integers(2, 70))
        k = min(int(rng.integers(2, 7)), n)
        d = int(rng.integers(1, 5))
        x = rng.normal(size=(n, d)) if i % 2 else rng.integers(-2, 3, size=(n, d)) / 3.0
        labels = gsms_partition(x, k)
        np.testing.assert_array_equal(labels, gsms_reference(x, k))
        _sizes_ok(labels, k)


def test_short_neighbour_lists_are_recomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    # With no spare neighbour beyond the k-1 needed, every lost neighbour forces a pass over the
    # remaining records; the partition must not change (nor with tiny batches of work).
    rng = np.random.default_rng(12)
    x = rng.normal(size=(300, 3))
    expected = gsms_reference(x, 4)
    monkeypatch.setattr(gsms_module, "_LIST_EXTRA", 0)
    np.testing.assert_array_equal(gsms_partition(x, 4), expected)
    monkeypatch.setattr(gsms_module, "_BATCH_WORK", 500)
    np.testing.assert_array_equal(gsms_partition(x, 4), expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 5).flatmap(
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
def test_kernel_matches_reference_on_ties(case: tuple[int, list[list[int]]]) -> None:
    k, rows = case
    x = np.array(rows, dtype=np.float64) / 3.0
    labels = gsms_partition(x, k)
    np.testing.assert_array_equal(labels, gsms_reference(x, k))
    _sizes_ok(labels, k)


# --------------------------------------------------------------------------------------------
# CASC reference sets
# --------------------------------------------------------------------------------------------

#: IL = 100 SSE/SST (%) measured with this implementation (run_protection: z-scores, all 13
#: columns of Census and Tarragona, EIA's 11 literature columns). Census: below MDAV at every
#: k; Tarragona: below MDAV at k = 3, 4, 5, above at k = 10; EIA: below at k = 3, 4, 10, above at
#: k = 5. The paper's table could not be read (module docstring), so these are not checked
#: against it.
RECORDED_IL = {
    ("CASCrefmicrodata.csv", 3): 5.5636,
    ("CASCrefmicrodata.csv", 4): 7.2538,
    ("CASCrefmicrodata.csv", 5): 8.6856,
    ("CASCrefmicrodata.csv", 10): 13.5485,
    ("Tarragona.csv", 3): 16.6097,
    ("Tarragona.csv", 4): 19.0495,
    ("Tarragona.csv", 5): 21.9476,
    ("Tarragona.csv", 10): 33.2342,
    ("EIA.csv", 3): 0.4695,
    ("EIA.csv", 4): 0.6694,
    ("EIA.csv", 5): 1.7126,
    ("EIA.csv", 10): 3.3130,
}

#: MDAV's published IL on the same sets (README of the reference data).
MDAV_IL = {
    ("CASCrefmicrodata.csv", 3): 5.69,
    ("CASCrefmicrodata.csv", 4): 7.49,
    ("CASCrefmicrodata.csv", 5): 9.09,
    ("CASCrefmicrodata.csv", 10): 14.16,
    ("Tarragona.csv", 3): 16.93,
    ("Tarragona.csv", 4): 19.55,
    ("Tarragona.csv", 5): 22.46,
    ("Tarragona.csv", 10): 33.19,
    ("EIA.csv", 3): 0.4829,
    ("EIA.csv", 4): 0.6713,
    ("EIA.csv", 5): 1.6667,
    ("EIA.csv", 10): 3.8397,
}


@pytest.mark.shared
@pytest.mark.parametrize(("name", "k"), sorted(RECORDED_IL))
def test_reference_sets(name: str, k: int) -> None:
    dataset = reference_dataset(name, QI, PASS)
    result = run_protection(dataset, RunSpec.make("gsms", k))
    il = result.report["information_loss"]
    assert il == pytest.approx(RECORDED_IL[(name, k)], abs=5e-4)
    better = (name, k) not in {("Tarragona.csv", 10), ("EIA.csv", 5)}
    assert (il < MDAV_IL[(name, k)]) == better
    _sizes_ok(result.labels, k)
    assert result.report["k_anonymity"] >= k
    assert k_anonymity_level(result.protected, list(result.qi.continuous_names)) >= k
    if name == "EIA.csv":
        for col in ("UTILNAME", "STATE", "YEAR", "MONTH"):
            pd.testing.assert_series_equal(result.protected[col], dataset.frame[col])


@pytest.mark.shared
def test_reference_set_kernel_is_the_reference() -> None:
    # Tarragona has duplicate records (ties); k = 10 keeps the O(n^3) reference short.
    dataset = reference_dataset("Tarragona.csv", QI, PASS)
    result = run_protection(dataset, RunSpec.make("gsms", 10))
    np.testing.assert_array_equal(result.labels, gsms_reference(result.qi.continuous, 10))


# --------------------------------------------------------------------------------------------
# registry and kinds
# --------------------------------------------------------------------------------------------


def test_registered() -> None:
    m = get_method("gsms")
    assert m.kinds == frozenset({AttributeKind.CONTINUOUS})
    assert "Panagiotakis & Tziritas 2013" in m.citation and "Panagiotakis" in m.reference
    assert m.bench_sizes == (10_000,) and "O(n²d)" in m.complexity
    assert m.params == () and m.warm_up is gsms_module.warm_up


def test_refuses_categorical_quasi_identifiers() -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "g": list("abcabcabca")})
    roles = RoleMap.from_dict(
        {"x": QI, "g": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)}
    )
    with pytest.raises(InvalidRoles):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("gsms", 2))


# --------------------------------------------------------------------------------------------
# progress and cancellation
# --------------------------------------------------------------------------------------------


def test_progress_is_monotone_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gsms_module, "_BATCH_WORK", 2_000)
    seen: list[tuple[float, str]] = []
    x = np.random.default_rng(0).normal(size=(300, 4))
    labels = gsms_partition(x, 3, progress=lambda f, s="": seen.append((f, s)))
    fractions = [f for f, _ in seen]
    assert len(seen) > 20
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert {s for _, s in seen} >= {"finding nearest records", "selecting groups"}
    np.testing.assert_array_equal(labels, gsms_reference(x, 3))


@pytest.mark.parametrize("stage", ["finding nearest records", "selecting groups"])
def test_cancellation_stops_the_run(monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    monkeypatch.setattr(gsms_module, "_BATCH_WORK", 2_000)
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    roles = RoleMap.from_dict({"a": QI, "b": QI})
    calls: list[tuple[float, str]] = []

    def progress(fraction: float, status: str = "") -> None:
        calls.append((fraction, status))
        if status == stage and sum(s == stage for _, s in calls) >= 3:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("gsms", 3), progress)
    assert calls[-1][1] == stage  # nothing ran after the cancel
    assert calls[-1][0] < 0.9


# --------------------------------------------------------------------------------------------
# hypothesis properties of a full run
# --------------------------------------------------------------------------------------------


@HYPO
@given(tables())
def test_properties_of_a_run(table: tuple[pd.DataFrame, RoleMap, int]) -> None:
    df, roles, k = table
    result = run_protection(Dataset.from_frame(df, roles), RunSpec.make("gsms", k))
    check_run(df, roles, k, result, at_most=2 * k - 1)
    np.testing.assert_array_equal(result.labels, gsms_reference(result.qi.continuous, k))
