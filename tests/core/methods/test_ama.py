"""AMA: MDAV on the key attributes of the best dependency tree (``000_d23cf301593eeda4.txt`` §3).

- ``000`` Table 1 through a full run: key attributes {A2, A3}, the report and the artifact;
- valid releases on the CASC Census set (13 continuous QIs, k = 3, 5, 10) and on Adult (age
  continuous, eight nominal QIs): groups of k..2k-1, k-anonymity, row order, untouched non-QIs;
- hypothesis properties on random mixed tables with ties, duplicates and constant columns;
- the open points (1, 2, 3 and only constant quasi-identifiers), parameters, progress, cancel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import adult_frame, reference_frame, shared_path

from microgui.core.errors import InvalidParameter
from microgui.core.methods import get_method
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods.ama import ama_partition, key_attribute_blocks
from microgui.core.methods.mdav import mdav_generic
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.dependency import DependencyTree, dependency_tree
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI_CONT = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
QI_ORD = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL)
QI_NOM = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
IDENT = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    mdav_module.warm_up()


def _check_release(dataset: Dataset, result: RunResult, k: int) -> None:
    """Every group has k..2k-1 records, the release is k-anonymous, rows stay in place and every
    column that is not a quasi-identifier is unchanged."""
    qis = dataset.roles.quasi_identifiers
    labels = result.labels
    sizes = np.bincount(labels)
    assert len(labels) == dataset.n_records
    assert set(np.unique(labels).tolist()) == set(range(len(sizes)))
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert k_anonymity_level(result.protected, qis) >= k
    assert result.report["k_anonymity"] >= k
    assert result.protected.index.equals(dataset.frame.index)
    for col in dataset.frame.columns:
        if col not in qis and col not in dataset.roles.identifiers:
            pd.testing.assert_series_equal(result.protected[col], dataset.frame[col])
    # every QI value of a group is one value (the group's aggregate)
    for col in qis:
        per_group = result.protected.groupby(labels, sort=False)[col].nunique(dropna=False)
        assert (per_group == 1).all()
    report = result.report
    assert set(report["key_attributes"]) <= set(qis)
    assert len(report["dependency_matrix"]) == len(qis)
    assert all(len(row) == len(qis) for row in report["dependency_matrix"])
    tree = result.artifacts["dependency_tree"]
    assert isinstance(tree, DependencyTree)
    assert list(tree.attributes) == qis
    assert report["tree_edges"] == [[a, b, w] for a, b, w in tree.edges]
    assert len(tree.edges) == max(len(qis) - len(tree.constant_attributes) - 1, 0)
    # Algorithm 2: the partition is MDAV(-generic) on the key attributes alone.
    keys = tree.key_attributes or qis
    cont, ords, osizes, noms = key_attribute_blocks(result.qi, keys)
    np.testing.assert_array_equal(labels, mdav_generic(cont, ords, osizes, noms, k))


# --------------------------------------------------------------------------------------------
# 000 Table 1 through a run
# --------------------------------------------------------------------------------------------


@pytest.mark.shared
def test_running_example_run() -> None:
    frame = pd.read_csv(shared_path("seed-examples", "ama_running_example.csv"), dtype=str)
    roles = RoleMap.from_dict({"ID": IDENT, **{f"A{i}": QI_NOM for i in range(1, 7)}})
    dataset = Dataset(frame, roles)
    result = run_protection(dataset, RunSpec.make("ama", 3))
    assert result.report["key_attributes"] == ["A2", "A3"]
    assert round(result.report["dependency_matrix"][1][5], 4) == 1.3180
    assert result.report["tree_edges"][0][:2] == ["A2", "A6"]
    # the report names authors and year (issue 15); the method keeps the paper file's name
    assert result.report["citation"] == "Sun, Wang, Li & Zhang 2012, §3, Algorithms 1–2"
    assert "ID" not in result.protected.columns
    _check_release(dataset, result, 3)
    # as continuous 0/1 attributes (2 values <= 10 bins: categories) the tree is the same
    cont = Dataset(
        frame, RoleMap.from_dict({"ID": IDENT, **{f"A{i}": QI_CONT for i in range(1, 7)}})
    )
    assert run_protection(cont, RunSpec.make("ama", 3)).report["key_attributes"] == ["A2", "A3"]


# --------------------------------------------------------------------------------------------
# reference data sets
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def census() -> Dataset:
    frame = reference_frame("CASCrefmicrodata.csv")
    frame["row"] = np.arange(len(frame))  # a pass-through column, to check row order
    roles = RoleMap.from_dict({str(c): (PASS if c == "row" else QI_CONT) for c in frame.columns})
    return Dataset(frame, roles)


@pytest.mark.shared
@pytest.mark.parametrize("k", [3, 5, 10])
def test_census(census: Dataset, k: int) -> None:
    result = run_protection(census, RunSpec.make("ama", k))
    _check_release(census, result, k)
    keys = result.report["key_attributes"]
    assert 2 <= len(keys) <= 7  # Theorem 2 (corrected): at most ceil(13 / 2)
    mdav_il = run_protection(census, RunSpec.make("mdav", k)).report["information_loss"]
    assert mdav_il <= result.report["information_loss"] < 100.0


@pytest.fixture(scope="module")
def adult() -> Dataset:
    frame = adult_frame(dtype=str)
    frame["row"] = np.arange(len(frame)).astype(str)
    specs = {str(c): QI_NOM for c in frame.columns}
    specs["age"] = QI_CONT
    specs["row"] = PASS
    return Dataset(frame, RoleMap.from_dict(specs))


@pytest.mark.shared
@pytest.mark.parametrize("k", [5, 20])
def test_adult(adult: Dataset, k: int) -> None:
    result = run_protection(adult, RunSpec.make("ama", k))
    _check_release(adult, result, k)
    assert len(result.report["dependency_matrix"]) == 9


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------


@st.composite
def mixed_tables(draw: st.DrawFn) -> tuple[Dataset, int]:
    n = draw(st.integers(2, 40))
    k = draw(st.integers(2, min(n, 6)))
    ncols = draw(st.integers(1, 6))
    cols: dict[str, object] = {}
    specs: dict[str, ColumnSpec] = {}
    for j in range(ncols):
        kind = draw(st.sampled_from(["cont", "ord", "nom", "const", "dup"]))
        name = f"q{j}"
        if kind == "cont":
            # few distinct values: ties and duplicate records
            cols[name] = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
            specs[name] = QI_CONT
        elif kind == "ord":
            cols[name] = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
            specs[name] = QI_ORD
        elif kind == "nom":
            cols[name] = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
            specs[name] = QI_NOM
        elif kind == "const":
            cols[name] = [1.5] * n
            specs[name] = QI_CONT
        else:  # a copy of the previous column, or of a fresh one
            prev = cols.get(f"q{j - 1}") or draw(
                st.lists(st.floats(-10, 10, allow_nan=False), min_size=n, max_size=n)
            )
            cols[name] = list(prev)  # type: ignore[call-overload]
            specs[name] = specs.get(f"q{j - 1}", QI_CONT)
    cols["keep"] = draw(st.lists(st.text("xyz", max_size=3), min_size=n, max_size=n))
    specs["keep"] = PASS
    return Dataset(pd.DataFrame(cols), RoleMap.from_dict(specs)), k


@HYPO
@given(mixed_tables(), st.integers(2, 12))
def test_random_tables_give_valid_releases(case: tuple[Dataset, int], bins: int) -> None:
    dataset, k = case
    before = dataset.frame.copy()
    result = run_protection(dataset, RunSpec.make("ama", k, {"bins": bins}))
    _check_release(dataset, result, k)
    pd.testing.assert_frame_equal(dataset.frame, before)  # the input is not modified
    tree = result.artifacts["dependency_tree"]
    qis = dataset.roles.quasi_identifiers
    varying = [c for c in qis if c not in tree.constant_attributes]
    if varying:
        assert set(tree.key_attributes) <= set(varying) and tree.key_attributes
    else:
        assert tree.key_attributes == []
    if len(varying) >= 2:
        assert 2 <= len(tree.key_attributes) <= max(2, -(-len(varying) // 2))
    # the tree of the run is the one the standalone function gives on the same kinds
    kinds = {c: dataset.roles[c].kind for c in qis}
    alone = dependency_tree(dataset.frame, qis, bins=bins, kinds=kinds)
    assert alone.key_attributes == tree.key_attributes
    assert alone.edges == tree.edges


# --------------------------------------------------------------------------------------------
# open points, parameters, progress
# --------------------------------------------------------------------------------------------


def _dataset(frame: pd.DataFrame, spec: ColumnSpec = QI_CONT) -> Dataset:
    return Dataset(frame, RoleMap.from_dict({str(c): spec for c in frame.columns}))


def test_one_two_three_and_constant_quasi_identifiers() -> None:
    rng = np.random.default_rng(5)
    base = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    one = run_protection(_dataset(base[["a"]]), RunSpec.make("ama", 3))
    assert one.report["key_attributes"] == ["a"] and one.report["tree_edges"] == []
    two = run_protection(_dataset(base[["b", "a"]]), RunSpec.make("ama", 3))
    assert two.report["key_attributes"] == ["b", "a"]
    three = run_protection(_dataset(base), RunSpec.make("ama", 3))
    tree = three.artifacts["dependency_tree"]
    middle = next(a for a, d in tree.degrees.items() if d == 2)
    assert three.report["key_attributes"][0] == middle and len(three.report["key_attributes"]) == 2
    constant = base.assign(c=0.0)
    with_const = run_protection(_dataset(constant), RunSpec.make("ama", 3))
    assert "c" not in with_const.report["key_attributes"]
    assert with_const.report["key_attributes"] == ["a", "b"]
    all_const = pd.DataFrame({"x": [2.0] * 7, "y": ["u"] * 7})
    specs = RoleMap.from_dict({"x": QI_CONT, "y": QI_NOM})
    run = run_protection(Dataset(all_const, specs), RunSpec.make("ama", 3))
    assert run.report["key_attributes"] == []
    assert np.bincount(run.labels).tolist() == [3, 4]
    pd.testing.assert_frame_equal(run.protected, all_const, check_dtype=False)


def test_method_registration_and_bins_parameter() -> None:
    method = get_method("ama")
    assert method.kinds == frozenset(AttributeKind)
    assert method.citation == "000_d23cf301593eeda4.txt §3, Algorithms 1–2"
    assert [p.name for p in method.params] == ["bins"] and method.params[0].default == 10
    rng = np.random.default_rng(6)
    x = rng.normal(size=200)
    frame = pd.DataFrame({"x": x, "y": x + rng.normal(size=200), "z": rng.normal(size=200)})
    dataset = _dataset(frame)
    coarse = run_protection(dataset, RunSpec.make("ama", 4, {"bins": "2"}))
    tree = coarse.artifacts["dependency_tree"]
    assert tree.bins == 2 and max(tree.entropies.values()) == pytest.approx(1.0)
    with pytest.raises(InvalidParameter, match="bins"):
        run_protection(dataset, RunSpec.make("ama", 4, {"bins": 1}))


def test_ama_partition_direct_call_and_progress() -> None:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(rng.normal(size=(300, 6)), columns=list("abcdef"))
    qi = prepare_qi(_dataset(frame))
    seen: list[tuple[float, str]] = []
    labels, tree = ama_partition(qi, 5, progress=lambda f, s="": seen.append((f, s)))
    assert np.bincount(labels).min() >= 5
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert {"dependency tree", "forming groups"} <= {s for _, s in seen}
    assert tree.attributes == tuple("abcdef")


@pytest.mark.parametrize("stage", ["dependency tree", "forming groups"])
def test_cancel_propagates(stage: str) -> None:
    rng = np.random.default_rng(8)
    dataset = _dataset(pd.DataFrame(rng.normal(size=(500, 4)), columns=list("abcd")))

    calls: list[float] = []

    def progress(fraction: float, status: str = "") -> None:
        if status == stage:
            calls.append(fraction)
            if len(calls) == 2:  # the stage has started and reports again
                raise RunCancelled

    with pytest.raises(RunCancelled):
        run_protection(dataset, RunSpec.make("ama", 3), progress)
