"""MDAV and MDAV-generic (``003_309fe4adb430bc25.txt`` Algorithm 5.1, §5.2-5.4).

- the published information loss of MDAV on the CASC reference sets (through ``run_protection``),
- hand-traced partitions (tie rule included) and ``003`` Table 1 for MDAV-generic,
- hypothesis properties of the full run, and the numba kernel against the numpy reference,
- progress and cancellation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from method_properties import (
    IDENT,
    PASS,
    QI,
    check_run,
    continuous_column,
    group_sizes,
    with_bystanders,
)
from reference_sets import reference_dataset, shared_path

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import get_method
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods.mdav import (
    mdav,
    mdav_generic,
    mdav_generic_reference,
    mdav_reference,
)
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    mdav_module.warm_up()  # compile (or load numba's cache) once, outside any example


def _sizes_ok(labels: np.ndarray, k: int) -> np.ndarray:
    return group_sizes(labels, k, at_most=2 * k - 1)


# --------------------------------------------------------------------------------------------
# published information loss (sdcMicro reference sets; README of shared/data/sdc-reference)
# --------------------------------------------------------------------------------------------

REFERENCE_IL = {
    ("CASCrefmicrodata.csv", 3): 5.6922,
    ("CASCrefmicrodata.csv", 4): 7.4947,
    ("CASCrefmicrodata.csv", 5): 9.0884,
    ("CASCrefmicrodata.csv", 10): 14.1559,
    ("Tarragona.csv", 3): 16.9326,
    ("Tarragona.csv", 4): 19.5460,
    ("Tarragona.csv", 5): 22.4619,
    ("Tarragona.csv", 10): 33.1929,
    ("EIA.csv", 3): 0.4829,
    ("EIA.csv", 4): 0.6713,
    ("EIA.csv", 5): 1.6667,
    ("EIA.csv", 10): 3.8397,
}


def _reference_dataset(name: str) -> Dataset:
    return reference_dataset(name, QI, PASS)


@pytest.mark.shared
@pytest.mark.parametrize(("name", "k"), sorted(REFERENCE_IL))
def test_published_information_loss(name: str, k: int) -> None:
    dataset = _reference_dataset(name)
    result = run_protection(dataset, RunSpec.make("mdav", k))
    assert result.report["information_loss"] == pytest.approx(REFERENCE_IL[(name, k)], abs=5e-4)
    # issue 13: the headline over every quasi-identifier is this very figure here
    assert result.report["information_loss_all_qi"] == result.report["information_loss"]
    _sizes_ok(result.labels, k)
    assert result.report["k_anonymity"] >= k
    # The fast kernel builds the textbook partition, label for label.
    np.testing.assert_array_equal(result.labels, mdav_reference(result.qi.continuous, k))
    if name == "EIA.csv":  # the non-QI columns pass through untouched
        for col in ("UTILNAME", "STATE", "YEAR", "MONTH"):
            pd.testing.assert_series_equal(result.protected[col], dataset.frame[col])


@pytest.mark.shared
def test_mdav_generic_on_continuous_reference_set_is_mdav() -> None:
    dataset = _reference_dataset("Tarragona.csv")  # has duplicate records, so ties
    a = run_protection(dataset, RunSpec.make("mdav", 3))
    b = run_protection(dataset, RunSpec.make("mdav-generic", 3))
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.report["information_loss"] == b.report["information_loss"]


# --------------------------------------------------------------------------------------------
# an independent, literal textbook MDAV (issue 6: the fast kernel builds the textbook partition)
# --------------------------------------------------------------------------------------------


def _textbook_mdav(x: np.ndarray, k: int) -> np.ndarray:
    """``003`` Algorithm 5.1 written literally, sharing no code or bookkeeping with the kernel
    or with ``mdav_reference``: the average recomputed from the remaining records each round,
    every choice made by sorting (distance, row) pairs, removed records deleted. Only the
    documented tie rule is common: farthest = largest distance then smallest row; nearest =
    smallest (distance, row) pairs; s = the farthest record of R outside r's group."""
    x = np.asarray(x, dtype=np.float64)
    labels = np.full(len(x), -1, dtype=np.int64)
    rest = np.arange(len(x))  # original rows still ungrouped, ascending
    label = 0

    def dist(point: np.ndarray) -> np.ndarray:
        d = np.zeros(len(rest))
        for j in range(x.shape[1]):  # column by column, as the module docstring says
            d += (x[rest, j] - point[j]) ** 2
        return d

    def farthest(d: np.ndarray, among: np.ndarray) -> int:
        return int(among[np.lexsort((rest[among], -d[among]))[0]])

    def group(d: np.ndarray, centre: int) -> np.ndarray:
        others = np.flatnonzero(np.arange(len(rest)) != centre)
        nearest = others[np.lexsort((rest[others], d[others]))[: k - 1]]
        return np.concatenate([[centre], nearest])

    def take(positions: np.ndarray) -> None:
        nonlocal rest, label
        labels[rest[positions]] = label
        label += 1
        rest = np.delete(rest, positions)

    while len(rest) >= 3 * k:
        everyone = np.arange(len(rest))
        r = farthest(dist(x[rest].mean(axis=0)), everyone)
        d_r = dist(x[rest[r]])
        g_r = group(d_r, r)
        s_row = rest[farthest(d_r, np.setdiff1d(everyone, g_r))]
        take(g_r)
        s = int(np.flatnonzero(rest == s_row)[0])
        take(group(dist(x[s_row]), s))
    if len(rest) >= 2 * k:
        r = farthest(dist(x[rest].mean(axis=0)), np.arange(len(rest)))
        take(group(dist(x[rest[r]]), r))
    labels[rest] = label
    return labels


@pytest.mark.shared
@pytest.mark.parametrize(("name", "k"), sorted(REFERENCE_IL))
def test_reference_sets_get_the_textbook_partition(name: str, k: int) -> None:
    # Label for label, on z-scores whose mean is recomputed each round (not the kernel's running
    # sum): Tarragona and EIA have duplicate records, so the tie rule is exercised too.
    result = run_protection(_reference_dataset(name), RunSpec.make("mdav", k))
    np.testing.assert_array_equal(result.labels, _textbook_mdav(result.qi.continuous, k))


@HYPO
@given(
    st.integers(2, 5),
    st.integers(1, 4),
    st.sampled_from([1.0, 4.0]),
    st.integers(0, 2**32 - 1),
    st.integers(2, 300),
)
def test_kernel_is_the_textbook_partition_with_ties(
    k: int, dim: int, scale: float, seed: int, n: int
) -> None:
    # Few distinct values (integers, or quarters: exact in binary) make ties everywhere, and
    # exact arithmetic makes the partition independent of how the average is accumulated.
    x = np.random.default_rng(seed).integers(-2, 3, (max(n, k), dim)) / scale
    labels = mdav(x, k)
    np.testing.assert_array_equal(labels, _textbook_mdav(x, k))
    _sizes_ok(labels, k)


def test_textbook_partition_across_many_kernel_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tiny work budget makes the kernel return to Python and resume after a few groups, many
    # times over; 3,000 records on a 5 x 5 x 5 grid are full of equidistant records.
    monkeypatch.setattr(mdav_module, "_BATCH_WORK", 20_000)
    x = np.random.default_rng(7).integers(-2, 3, (3_000, 3)).astype(np.float64)
    for k in (2, 5):
        np.testing.assert_array_equal(mdav(x, k), _textbook_mdav(x, k))


# --------------------------------------------------------------------------------------------
# hand-traced partitions
# --------------------------------------------------------------------------------------------


def test_hand_traced_one_dimensional() -> None:
    # mean 11: r = 50 (row 6) with its nearest 11; s = farthest from 50 = 0 with its nearest 1;
    # 3 records left < 2k = 4: one group. Groups numbered in the order formed.
    x = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [50.0]])
    expected = [1, 1, 2, 2, 2, 0, 0]
    np.testing.assert_array_equal(mdav(x, 2), expected)
    np.testing.assert_array_equal(mdav_reference(x, 2), expected)


def test_step_two_between_2k_and_3k_minus_1() -> None:
    # 5 records, k = 2: no round of the loop (5 < 3k); 5 >= 2k: a group around the record
    # farthest from the mean (row 0, value -10) with its nearest (row 1), the rest one group.
    x = np.array([[-10.0], [-1.0], [0.0], [1.0], [2.0]])
    np.testing.assert_array_equal(mdav(x, 2), [0, 0, 1, 1, 1])


def test_tie_rule_all_records_equal() -> None:
    # Every distance is 0. r = row 0 (smallest row among the farthest); its nearest: row 1.
    # The farthest from r is row 0 itself, which is in r's group: s is the farthest record
    # outside it, row 2, grouped with row 3; 3 left < 2k: one group.
    expected = [0, 0, 1, 1, 2, 2, 2]
    x = np.ones((7, 3))
    np.testing.assert_array_equal(mdav(x, 2), expected)
    np.testing.assert_array_equal(mdav_reference(x, 2), expected)
    nominal = np.zeros((7, 1), dtype=np.int64)
    np.testing.assert_array_equal(mdav_generic(None, None, None, nominal, 2), expected)


def test_tie_rule_prefers_smaller_rows_for_neighbours() -> None:
    # r = row 4 (value 9, farthest from the mean 9/7). All other rows are at distance 9 from it:
    # its neighbour is row 0. The farthest from r (smallest row among equals) is row 0, already in
    # r's group, so s is row 1, grouped with row 2; rows 3, 5, 6 form the last group.
    x = np.array([[0.0], [0.0], [0.0], [0.0], [9.0], [0.0], [0.0]])
    np.testing.assert_array_equal(mdav(x, 2), [0, 1, 1, 2, 0, 2, 2])
    np.testing.assert_array_equal(mdav_reference(x, 2), [0, 1, 1, 2, 0, 2, 2])


def test_input_is_not_modified_whatever_its_memory_order() -> None:
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=(40, 3)), np.asfortranarray(rng.normal(size=(40, 3)))):
        before = x.copy()
        labels = mdav(x, 3)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(labels, mdav_reference(x, 3))


def test_direct_call_validates_k() -> None:
    x = np.zeros((5, 2))
    with pytest.raises(InvalidParameter):
        mdav(x, 1)
    with pytest.raises(InvalidParameter):
        mdav(x, 6)
    assert (mdav(x, 5) == 0).all()


def _table1() -> pd.DataFrame:
    path = shared_path("seed-examples", "ordinal_nominal_example.csv")
    return pd.read_csv(path)


@pytest.mark.shared
def test_mdav_generic_hand_traced_on_003_table1() -> None:
    """``003`` Table 1 with V1 (a<...<e) and V2 (r<...<v) ordinal, k = 3, traced by hand.

    Medians (c, t): r = r1 (distance^2 8/25, tied with r4, r7, r10: smallest row); s = r7;
    r1's nearest r2 (1/25) and r3 (4/25, tied with r12); r7's nearest r8, r6 (tied with r9);
    6 = 2k left, medians (a, t): r = r4 with r5 and r9 (tied with r12), the rest one group.
    """
    df = _table1()
    roles = RoleMap.from_dict(
        {
            "Record": IDENT,
            "V1": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, tuple("abcde")),
            "V2": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, tuple("rstuv")),
        }
    )
    result = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav-generic", 3))
    np.testing.assert_array_equal(result.labels, [0, 0, 0, 2, 2, 1, 1, 1, 2, 3, 3, 3])
    assert "Record" not in result.protected.columns
    pairs = list(zip(result.protected["V1"], result.protected["V2"], strict=True))
    expected = (
        [("b", "r")] * 3 + [("e", "s")] * 2 + [("e", "v")] * 3 + [("e", "s")] + [("a", "u")] * 3
    )
    assert pairs == expected
    assert k_anonymity_level(result.protected, ["V1", "V2"]) == 3


# --------------------------------------------------------------------------------------------
# registry, kinds and errors
# --------------------------------------------------------------------------------------------


def test_registered_methods() -> None:
    m = get_method("mdav")
    g = get_method("mdav-generic")
    assert m.kinds == frozenset({AttributeKind.CONTINUOUS})
    assert g.kinds == frozenset(AttributeKind)
    assert "003_309fe4adb430bc25.txt" in m.citation and "003_309fe4adb430bc25.txt" in g.citation


def test_mdav_refuses_categorical_quasi_identifiers() -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "grade": list("abcabcabca")})
    roles = RoleMap.from_dict(
        {
            "x": QI,
            "grade": ColumnSpec(
                AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, ("a", "b", "c")
            ),
        }
    )
    with pytest.raises(InvalidRoles, match="mdav-generic"):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav", 2))
    result = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav-generic", 2))
    _sizes_ok(result.labels, 2)


# --------------------------------------------------------------------------------------------
# progress and cancellation
# --------------------------------------------------------------------------------------------


def test_progress_is_monotone_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mdav_module, "_BATCH_WORK", 2_000)
    seen: list[float] = []
    x = np.random.default_rng(0).normal(size=(300, 4))
    labels = mdav(x, 3, progress=lambda f, s="": seen.append(f))
    assert len(seen) > 10
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    np.testing.assert_array_equal(labels, mdav_reference(x, 3))  # batching changes nothing


def test_progress_is_reported_repeatedly_on_a_large_table() -> None:
    # No timing assertion: the kernel's work per call is bounded, so a run of 30,000 records
    # returns to Python (and to the cancel check) many times.
    calls: list[float] = []
    mdav(
        np.random.default_rng(1).normal(size=(30_000, 10)),
        5,
        progress=lambda f, s="": calls.append(f),
    )
    assert len(calls) >= 10


@pytest.mark.parametrize("method", ["mdav", "mdav-generic"])
def test_cancellation_stops_the_run(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    monkeypatch.setattr(mdav_module, "_BATCH_WORK", 2_000)
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    roles = RoleMap.from_dict({"a": QI, "b": QI})
    calls: list[tuple[float, str]] = []

    def progress(fraction: float, status: str = "") -> None:
        calls.append((fraction, status))
        if status == "forming groups" and len(calls) >= 4:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make(method, 3), progress)
    assert len(calls) == 4  # nothing ran after the cancel
    assert calls[-1][0] < 0.9


# --------------------------------------------------------------------------------------------
# hypothesis properties
# --------------------------------------------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn, mixed: bool) -> tuple[pd.DataFrame, RoleMap, int]:
    k = draw(st.integers(2, 5))
    n = draw(st.integers(k, 60))
    n_cont = draw(st.integers(1 if not mixed else 0, 3))
    n_ord = draw(st.integers(0, 2)) if mixed else 0
    n_nom = draw(st.integers(0 if n_cont + n_ord else 1, 2)) if mixed else 0
    columns: dict[str, Any] = {}
    specs: dict[str, ColumnSpec] = {}
    for j in range(n_cont):
        columns[f"c{j}"] = draw(continuous_column(n))
        specs[f"c{j}"] = QI
    for j in range(n_ord):
        size = draw(st.integers(1, 5))
        order = tuple(f"L{v}" for v in range(size))
        ranks = draw(st.lists(st.integers(0, size - 1), min_size=n, max_size=n))
        columns[f"o{j}"] = [order[r] for r in ranks]
        specs[f"o{j}"] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, order)
    for j in range(n_nom):
        columns[f"n{j}"] = draw(
            st.lists(st.sampled_from(["red", "green", "blue"]), min_size=n, max_size=n)
        )
        specs[f"n{j}"] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
    return with_bystanders(draw, columns, specs, n, k)


def _check_run(df: pd.DataFrame, roles: RoleMap, k: int, result: RunResult) -> None:
    check_run(df, roles, k, result, at_most=2 * k - 1)
    protected = result.protected
    for col in roles.qi_of_kind(AttributeKind.CONTINUOUS):
        original = df[col].to_numpy()
        scale = float(np.abs(original).max()) + 1.0
        # 003 §5.2: microaggregation by group means preserves the means exactly.
        np.testing.assert_allclose(
            protected[col].mean(), original.mean(), rtol=1e-9, atol=1e-9 * scale
        )


@HYPO
@given(tables(mixed=False))
def test_mdav_properties(table: tuple[pd.DataFrame, RoleMap, int]) -> None:
    df, roles, k = table
    result = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav", k))
    _check_run(df, roles, k, result)
    np.testing.assert_array_equal(result.labels, mdav_reference(result.qi.continuous, k))
    generic = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav-generic", k))
    np.testing.assert_array_equal(generic.labels, result.labels)


@HYPO
@given(tables(mixed=False))
def test_variance_rescaling_preserves_variances(table: tuple[pd.DataFrame, RoleMap, int]) -> None:
    df, roles, k = table
    result = run_protection(
        Dataset.from_frame(df, roles), RunSpec.make("mdav", k, {"rescale_variance": True})
    )
    _check_run(df, roles, k, result)
    for col in roles.qi_of_kind(AttributeKind.CONTINUOUS):
        original = df[col].to_numpy()
        plain = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mdav", k)).protected[
            col
        ]
        if plain.var(ddof=0) > 1e-12 * (original.var(ddof=0) + 1.0):
            scale = float(np.abs(original).max()) ** 2 + 1.0
            np.testing.assert_allclose(
                result.protected[col].var(ddof=0),
                original.var(ddof=0),
                rtol=1e-7,
                atol=1e-9 * scale,
            )


@HYPO
@given(tables(mixed=True), st.sampled_from(["median", "convex-median"]))
def test_mdav_generic_properties(table: tuple[pd.DataFrame, RoleMap, int], average: str) -> None:
    df, roles, k = table
    result = run_protection(
        Dataset.from_frame(df, roles), RunSpec.make("mdav-generic", k, {"ordinal_average": average})
    )
    _check_run(df, roles, k, result)
    qi = result.qi
    expected = mdav_generic_reference(
        qi.continuous, qi.ordinal, qi.ordinal_sizes, qi.nominal, k, ordinal_average=average
    )
    np.testing.assert_array_equal(result.labels, expected)


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
    x = np.array(rows, dtype=np.float64) / 3.0  # few distinct values, inexact in binary
    np.testing.assert_array_equal(mdav(x, k), mdav_reference(x, k))
    ords = np.array(rows, dtype=np.int64)[:, :2] + 3
    noms = (np.array(rows, dtype=np.int64)[:, 2:] + 3) % 3
    a = mdav_generic(x[:, :1], ords, [7, 7], noms, k, ordinal_average="convex-median")
    b = mdav_generic_reference(x[:, :1], ords, [7, 7], noms, k, ordinal_average="convex-median")
    np.testing.assert_array_equal(a, b)
    _sizes_ok(a, k)
