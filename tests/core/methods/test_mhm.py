"""MHM: multivariate Hansen-Mukherjee over a path (``001_3dadf1a6914d9138.txt`` §II, Table 3).

- the k-d tree NPN path equals the plain O(n²) NPN (``001`` §II-A), ties included;
- MHM on a path is the best split of it into consecutive groups of k..2k-1 (brute force);
- with an MDAV (MD, CBFS) path MHM is never worse than MDAV (MD, CBFS) itself: on Census,
  Tarragona and EIA at k = 3, 4, 5, 10 and on random data;
- the run contract (invariants, parameter, kinds), progress and cancellation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import reference_dataset

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import get_method
from microgui.core.methods import mhm as mhm_module
from microgui.core.methods.mdav import mdav
from microgui.core.methods.mhm import (
    group_path,
    heuristic_labels,
    mhm,
    mhm_partition,
    npn_path,
    npn_path_reference,
    path_length,
)
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI_CONT = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
CONF = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
IDENT = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _has(module: str, name: str) -> bool:
    import importlib

    return hasattr(importlib.import_module(f"microgui.core.methods.{module}"), name)


#: The paths whose heuristic is available in this build (md and cbfs come from other modules).
AVAILABLE_PATHS = ["mdav"] + [
    p for p, fn in (("md", "md_partition"), ("cbfs", "cbfs_partition")) if _has(p, fn)
]


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    mhm_module.warm_up()


def _sse(x: np.ndarray, labels: np.ndarray) -> float:
    return float(
        sum(((x[labels == g] - x[labels == g].mean(axis=0)) ** 2).sum() for g in set(labels))
    )


def _sizes_ok(labels: np.ndarray, k: int) -> None:
    g = int(labels.max()) + 1
    assert set(np.unique(labels).tolist()) == set(range(g))
    sizes = np.bincount(labels)
    assert sizes.min() >= k
    assert sizes.max() <= 2 * k - 1


def _best_consecutive_split(x: np.ndarray, k: int) -> float:
    """Brute force: every split of the sequence into consecutive groups of k..2k-1 records."""
    n = len(x)
    best = [np.inf] * (n + 1)
    best[n] = 0.0
    for i in range(n - 1, -1, -1):
        for j in range(i + k, min(i + 2 * k - 1, n) + 1):
            g = x[i:j]
            best[i] = min(best[i], float(((g - g.mean(axis=0)) ** 2).sum()) + best[j])
    return best[0]


@st.composite
def records(draw: st.DrawFn, max_n: int = 60) -> tuple[np.ndarray, int]:
    k = draw(st.integers(2, 5))
    n = draw(st.integers(k, max_n))
    d = draw(st.integers(1, 4))
    if draw(st.booleans()):  # a small grid: many ties and duplicate records
        cells = draw(st.lists(st.integers(-2, 2), min_size=n * d, max_size=n * d))
        return np.array(cells, dtype=np.float64).reshape(n, d) / 3.0, k
    cells = draw(
        st.lists(
            st.floats(-100, 100, allow_nan=False, allow_subnormal=False),
            min_size=n * d,
            max_size=n * d,
        )
    )
    return np.array(cells).reshape(n, d), k


# --------------------------------------------------------------------------------------------
# NPN (001 §II-A)
# --------------------------------------------------------------------------------------------


@HYPO
@given(records(max_n=150))
def test_npn_kd_tree_equals_the_plain_algorithm(case: tuple[np.ndarray, int]) -> None:
    x, _ = case
    path = npn_path(x)
    np.testing.assert_array_equal(path, npn_path_reference(x))
    assert sorted(path.tolist()) == list(range(len(x)))


def test_npn_equals_reference_on_larger_clustered_data(monkeypatch: pytest.MonkeyPatch) -> None:
    # Many buckets, boxes shrinking as records leave, duplicates (ties) in every cluster.
    monkeypatch.setattr(mhm_module, "_LEAF_SIZE", 4)
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(6, 3)) * 5
    x = centres[rng.integers(0, 6, 1500)] + np.round(rng.normal(size=(1500, 3)), 1)
    np.testing.assert_array_equal(npn_path(x), npn_path_reference(x))


def test_npn_hand_traced() -> None:
    # Centroid 3.5: the farthest record is 10 (row 3); then always the nearest not yet visited.
    np.testing.assert_array_equal(npn_path(np.array([[0.0], [1.0], [3.0], [10.0]])), [3, 2, 1, 0])
    # Centroid (-1, -1): start at (-5, -5), then (0, 0); from there (0, 1) and (1, 0) are
    # equally near: the smaller row first.
    x = np.array([[-5.0, -5.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(npn_path(x), [0, 3, 1, 2])


def test_npn_all_records_equal() -> None:
    np.testing.assert_array_equal(npn_path(np.ones((50, 3))), np.arange(50))


# --------------------------------------------------------------------------------------------
# MHM on a path (001 §II)
# --------------------------------------------------------------------------------------------


@HYPO
@given(records(max_n=40), st.data())
def test_mhm_is_the_best_consecutive_split_of_its_path(
    case: tuple[np.ndarray, int], data: st.DataObject
) -> None:
    x, k = case
    order = np.array(data.draw(st.permutations(range(len(x)))), dtype=np.int64)
    labels, total = mhm_partition(x, order, k)
    _sizes_ok(labels, k)
    assert (np.diff(labels[order]) >= 0).all()  # groups consecutive on the path, numbered along it
    scale = 1.0 + float((x**2).sum())
    assert _sse(x, labels) == pytest.approx(_best_consecutive_split(x[order], k), abs=1e-9 * scale)
    assert total == pytest.approx(_sse(x, labels), abs=1e-9 * scale)


@HYPO
@given(records(max_n=80), st.sampled_from(AVAILABLE_PATHS))
def test_never_worse_than_the_path_heuristic(case: tuple[np.ndarray, int], path: str) -> None:
    x, k = case
    base = heuristic_labels(x, k, path)
    order = group_path(x, base)
    # the heuristic's groups are consecutive on its path
    starts = np.flatnonzero(np.diff(base[order]) != 0) + 1
    assert len(starts) == int(base.max())
    labels, _ = mhm(x, k, path=path)
    _sizes_ok(labels, k)
    scale = 1.0 + float((x**2).sum())
    assert _sse(x, labels) <= _sse(x, base) + 1e-9 * scale


def test_group_path_starts_each_group_at_its_centre() -> None:
    # MDAV builds its first group around r, the record farthest from the centroid, and adds its
    # nearest records in order of distance: the path visits them in that order.
    x = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [50.0]])
    labels = mdav(x, 2)  # groups {50, 11}, {0, 1}, {2, 3, 10} (test_mdav, hand-traced)
    order = group_path(x, labels)
    np.testing.assert_array_equal(order[:2], [6, 5])
    # second group {0, 1}: of its records, 0 is the farther from the centroid of those left
    # (0, 1, 2, 3, 10: mean 3.2)
    np.testing.assert_array_equal(order[2:4], [0, 1])
    # last group {2, 3, 10}: centroid 5, farthest 10, then 3, then 2
    np.testing.assert_array_equal(order[4:], [4, 3, 2])


def test_path_length() -> None:
    x = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 0.0]])
    assert path_length(x, [0, 1, 2]) == pytest.approx(9.0)
    assert path_length(x, [0, 2, 1]) == pytest.approx(7.0)


# --------------------------------------------------------------------------------------------
# reference data (CASC: Census, Tarragona, EIA)
# --------------------------------------------------------------------------------------------

#: IL (%) of MDAV-MHM and NPN-MHM measured by this implementation (regression values; MDAV's
#: published figures are in test_mdav: MDAV-MHM improves on them only slightly, e.g. Census
#: k = 4 7.4947 -> 7.4928, because consecutive MDAV groups lie far apart).
MHM_IL = {
    ("CASCrefmicrodata.csv", 3): (5.6922, 6.2106),
    ("CASCrefmicrodata.csv", 4): (7.4928, 8.9586),
    ("CASCrefmicrodata.csv", 5): (9.0884, 11.0541),
    ("CASCrefmicrodata.csv", 10): (14.1559, 20.2272),
    ("Tarragona.csv", 3): (16.9326, 17.5258),
    ("Tarragona.csv", 4): (19.5458, 21.6916),
    ("Tarragona.csv", 5): (22.4618, 28.1666),
    ("Tarragona.csv", 10): (33.1928, 38.7184),
    ("EIA.csv", 3): (0.4829, 0.4994),
    ("EIA.csv", 4): (0.6713, 0.6872),
    ("EIA.csv", 5): (1.6667, 0.9990),
    ("EIA.csv", 10): (3.8397, 2.4931),
}


def _reference_dataset(name: str) -> Dataset:
    return reference_dataset(name, QI_CONT, PASS)


@pytest.mark.shared
@pytest.mark.parametrize(("name", "k"), sorted(MHM_IL))
def test_reference_sets(name: str, k: int) -> None:
    dataset = _reference_dataset(name)
    base = run_protection(dataset, RunSpec.make("mdav", k))
    for path, expected in zip(("mdav", "npn"), MHM_IL[(name, k)], strict=True):
        result = run_protection(dataset, RunSpec.make("mhm", k, {"path": path}))
        _sizes_ok(result.labels, k)
        assert result.report["k_anonymity"] >= k
        assert result.report["information_loss"] == pytest.approx(expected, abs=5e-5)
        assert result.report["path"] == path and result.report["path_length"] > 0
        if path == "mdav":
            # the required check: MDAV's partition is one of those MHM searches
            assert result.report["sse"] <= base.report["sse"] * (1 + 1e-12)
            assert result.report["path_heuristic_sse"] == pytest.approx(
                base.report["sse"], rel=1e-9
            )
    if name == "EIA.csv":
        for col in ("UTILNAME", "STATE", "YEAR", "MONTH"):
            pd.testing.assert_series_equal(result.protected[col], dataset.frame[col])


@pytest.mark.shared
@pytest.mark.parametrize("path", [p for p in AVAILABLE_PATHS if p != "mdav"])
@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv", "EIA.csv"])
def test_reference_sets_other_heuristics(name: str, path: str) -> None:
    dataset = _reference_dataset(name)
    for k in (3, 5):
        base = run_protection(dataset, RunSpec.make(path, k))
        result = run_protection(dataset, RunSpec.make("mhm", k, {"path": path}))
        _sizes_ok(result.labels, k)
        assert result.report["sse"] <= base.report["sse"] * (1 + 1e-12)


# --------------------------------------------------------------------------------------------
# the run: parameter, kinds, invariants, progress, cancellation
# --------------------------------------------------------------------------------------------


def test_registered() -> None:
    m = get_method("mhm")
    assert m.kinds == frozenset({AttributeKind.CONTINUOUS})
    assert "001_3dadf1a6914d9138.txt" in m.citation
    assert {p.name for p in m.params} == {"path"}


def test_unknown_path_is_refused() -> None:
    df = pd.DataFrame({"a": np.arange(10.0), "b": np.arange(10.0) % 3})
    roles = RoleMap.from_dict({"a": QI_CONT, "b": QI_CONT})
    with pytest.raises(InvalidParameter, match="npn"):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("mhm", 2, {"path": "tsp"}))
    with pytest.raises(InvalidParameter):
        mhm(np.zeros((10, 2)), 2, path="tsp")


def test_refuses_categorical_quasi_identifiers() -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "colour": list("rgbrgbrgbr")})
    roles = RoleMap.from_dict(
        {"x": QI_CONT, "colour": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)}
    )
    with pytest.raises(InvalidRoles):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("mhm", 2))


@HYPO
@given(records(max_n=50), st.sampled_from(["npn", *AVAILABLE_PATHS]), st.data())
def test_run_invariants(case: tuple[np.ndarray, int], path: str, data: st.DataObject) -> None:
    x, k = case
    n, d = x.shape
    order = data.draw(st.permutations(range(n)))
    columns = {f"q{j}": x[:, j] for j in range(d)}
    columns.update(
        salary=np.arange(n) * 1.5,
        town=np.array([f"t{i % 3}" for i in range(n)]),
        name=np.array([f"person {i}" for i in range(n)]),
    )
    df = pd.DataFrame(columns, index=pd.Index([f"row{i}" for i in order]))
    specs = {f"q{j}": QI_CONT for j in range(d)}
    specs.update(salary=CONF, town=PASS, name=IDENT)
    roles = RoleMap.from_dict(specs)
    result = run_protection(Dataset.from_frame(df, roles), RunSpec.make("mhm", k, {"path": path}))
    _sizes_ok(result.labels, k)
    protected = result.protected
    assert list(protected.index) == list(df.index)
    assert "name" not in protected.columns
    for col in ("salary", "town"):
        pd.testing.assert_series_equal(protected[col], df[col])
    assert k_anonymity_level(protected, roles.quasi_identifiers) >= k
    assert sorted(result.artifacts["path"].tolist()) == list(range(n))


def test_progress_and_cancellation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mhm_module, "_NPN_BATCH", 50)
    x = np.random.default_rng(2).normal(size=(3_000, 4))
    seen: list[tuple[float, str]] = []
    labels, _ = mhm(x, 3, progress=lambda f, s="": seen.append((f, s)))
    fractions = [f for f, _ in seen]
    assert len(seen) > 20 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert {"building the path", "shortest path"} <= {s for _, s in seen}
    monkeypatch.setattr(mhm_module, "_NPN_BATCH", 2_000)
    np.testing.assert_array_equal(labels, mhm(x, 3)[0])  # batching changes nothing

    monkeypatch.setattr(mhm_module, "_NPN_BATCH", 50)
    df = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    roles = RoleMap.from_dict({c: QI_CONT for c in df.columns})
    calls: list[tuple[float, str]] = []

    def cancel(fraction: float, status: str = "") -> None:
        calls.append((fraction, status))
        if status == "building the path" and len(calls) >= 5:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(Dataset.from_frame(df, roles), RunSpec.make("mhm", 3), cancel)
    assert len(calls) == 5 and calls[-1][0] < 0.5
