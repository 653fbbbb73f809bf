"""MSTK (``004_0ca91c7afa3e094f.txt`` §5-7, Algorithm 2).

- the running example: Table 2 distances, Table 3 tree, the inflexion point of §5.4, the classes
  of Table 1(b) (k = 2) and Table 1(c) (k = 3), DM and CAVG of §7, directly and through
  ``run_protection``;
- validity on Adult (ARX hierarchies) and Census (automatic hierarchies) for k = 3, 5, 10;
- hypothesis properties on random tables with ties, duplicates and constant columns, the tree
  against networkx's Kruskal, and the claim that the classes do not depend on which minimum
  spanning tree is built;
- progress, cancellation, user errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import ADULT_DIR as ADULT
from reference_sets import CENSUS_CSV as CENSUS
from reference_sets import SEED_EXAMPLES as SEED
from scipy.sparse.csgraph import connected_components

from microgui.core.errors import InvalidInput, InvalidRoles
from microgui.core.io import read_table
from microgui.core.methods import get_method
from microgui.core.methods import mstk as mstk_module
from microgui.core.methods.mstk import (
    class_distance,
    distance_matrix,
    generalization_effort,
    ghd,
    hierarchical_distance,
    inflexion_point,
    mstk,
)
from microgui.core.metrics import k_anonymity_level
from microgui.core.metrics.generalization import (
    cavg,
    discernibility,
    generalization_information_loss,
)
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.hierarchy import Hierarchy, build_hierarchy, load_hierarchy
from microgui.core.table.roles import AttributeKind, roles_from_lists

QIS = ["Age", "Sex", "Zipcode"]
HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ``004`` Table 2 (lower triangle, symmetric)
TABLE_2 = np.array(
    [
        [0, 1.333, 4.667, 4.667, 4.000, 6.000, 4.000],
        [1.333, 0, 4.667, 4.667, 4.000, 6.000, 4.000],
        [4.667, 4.667, 0, 1.333, 6.000, 4.000, 6.000],
        [4.667, 4.667, 1.333, 0, 6.000, 4.000, 6.000],
        [4.000, 4.000, 6.000, 6.000, 0, 3.333, 2.000],
        [6.000, 6.000, 4.000, 4.000, 3.333, 0, 4.000],
        [4.000, 4.000, 6.000, 6.000, 2.000, 4.000, 0],
    ]
)  # fmt: skip
# ``004`` Table 3: the tree (1-based records) and its weights
TABLE_3 = {(1, 2): 1.33, (3, 4): 1.33, (3, 6): 4.0, (5, 6): 3.333, (5, 7): 2.0, (1, 5): 4.0}
TABLE_1B = [
    ("[20-30]", "M", "1305*"),
    ("[20-30]", "M", "1305*"),
    ("[31-40]", "F", "1306*"),
    ("[31-40]", "F", "1306*"),
    ("[41-50]", "Person", "148**"),
    ("[41-50]", "Person", "148**"),
    ("[41-50]", "Person", "148**"),
]
TABLE_1C = [("[20-40]", "Person", "130**")] * 4 + [("[41-50]", "Person", "148**")] * 3


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared reference data not available ({path.name})")
    return path


@pytest.fixture(scope="module")
def example() -> tuple[pd.DataFrame, list[Hierarchy], np.ndarray]:
    frame = pd.read_csv(_need(SEED / "mstk_example.csv"), dtype=str)
    hierarchies = [load_hierarchy(SEED / f"mstk_hierarchy_{c.lower()}.csv") for c in QIS]
    codes = np.column_stack(
        [h.encode(frame[c].tolist(), c) for h, c in zip(hierarchies, QIS, strict=True)]
    )
    return frame, hierarchies, codes


def _rows(result_values: list[np.ndarray]) -> list[tuple[str, ...]]:
    return [tuple(str(v) for v in row) for row in zip(*result_values, strict=True)]


# --------------------------------------------------------------------------------------------
# the running example of ``004``
# --------------------------------------------------------------------------------------------


@pytest.mark.shared
def test_definitions_3_to_5(example: Any) -> None:
    _, hs, _ = example
    age, _, zipcode = hs
    assert ghd(age, 26, "[20-30]") == pytest.approx(1 / 3)
    assert ghd(zipcode, "13051", "130**") == pytest.approx(2 / 3)  # §5.2: 2/3
    assert ghd(zipcode, "13051", "*****") == 1.0
    assert ghd(age, 26, "26") == 0.0
    with pytest.raises(ValueError, match="does not generalize"):
        ghd(age, 26, "[31-40]")
    # Definition 4: GE(t2, t2') = 0.666
    assert generalization_effort(["26", "M", "13053"], ["[20-30]", "M", "1305*"], hs) == (
        pytest.approx(2 / 3)
    )
    # Definition 5: HDist(t1, t2) = 1.333
    assert hierarchical_distance(["21", "M", "13051"], ["26", "M", "13053"], hs) == (
        pytest.approx(4 / 3)
    )


@pytest.mark.shared
def test_table_2_distance_matrix(example: Any) -> None:
    frame, hs, codes = example
    d = distance_matrix(codes, hs)
    np.testing.assert_allclose(d, TABLE_2, atol=5e-4)
    np.testing.assert_array_equal(d, d.T)
    records = frame[QIS].values.tolist()
    for i in range(7):
        for j in range(7):
            assert hierarchical_distance(records[i], records[j], hs) == pytest.approx(d[i, j])


@pytest.mark.shared
def test_table_3_tree_and_inflexion_point(example: Any) -> None:
    _, hs, codes = example
    result = mstk(codes, hs, 2)
    assert sorted(np.round(result.mst_weights, 3)) == sorted(
        round(w, 3) for w in (4 / 3, 4 / 3, 4.0, 10 / 3, 2.0, 4.0)
    )
    assert result.mst_weights.sum() == pytest.approx(16.0)
    # the tree is a spanning tree of minimum weight, as is the one of Table 3
    d = distance_matrix(codes, hs)
    graph = nx.Graph()
    graph.add_edges_from(
        (int(a), int(b), {"weight": float(w)})
        for (a, b), w in zip(result.mst_edges, result.mst_weights, strict=True)
    )
    assert nx.is_tree(graph) and graph.number_of_nodes() == 7
    assert sum(d[a - 1, b - 1] for a, b in TABLE_3) == pytest.approx(16.0)
    for (a, b), w in TABLE_3.items():
        assert d[a - 1, b - 1] == pytest.approx(w, abs=5e-3)
    # §5.4: mean 2.667, sample σ 1.265, inflexion point 3.93; the two 4.0 edges are pruned
    assert np.mean(result.mst_weights) == pytest.approx(2.6667, abs=1e-4)
    assert np.std(result.mst_weights, ddof=1) == pytest.approx(1.2649, abs=1e-4)
    assert result.inflexion_point == pytest.approx(3.9316, abs=1e-4)
    assert inflexion_point(result.mst_weights) == result.inflexion_point
    assert sorted(result.mst_weights[~result.mst_kept]) == [4.0, 4.0]


@pytest.mark.shared
def test_table_1b_classes_dm_cavg(example: Any) -> None:
    _, hs, codes = example
    result = mstk(codes, hs, 2)
    assert result.labels.tolist() == [0, 0, 1, 1, 2, 2, 2]  # {t1,t2}, {t3,t4}, {t5,t6,t7}
    assert _rows(result.generalized()) == TABLE_1B
    assert result.n_subtrees == 3 and result.n_small == 0 and result.n_merges == 0
    assert discernibility(result.labels) == 17  # 2² + 2² + 3²
    assert cavg(result.labels, 2) == pytest.approx(7 / (3 * 2))


@pytest.mark.shared
def test_table_1c_for_k_3(example: Any) -> None:
    """§5.5: for k = 3 the classes {t1,t2} and {t3,t4} are merged (Definition 7)."""
    _, hs, codes = example
    result = mstk(codes, hs, 3)
    assert _rows(result.generalized()) == TABLE_1C
    assert result.n_small == 2 and result.n_merges == 1
    assert discernibility(result.labels) == 25
    # Definition 7 for that merge: 2·5/3 + 2·5/3
    assert class_distance(
        ["[20-30]", "M", "1305*"], 2, ["[31-40]", "F", "1306*"], 2, hs
    ) == pytest.approx(20 / 3)


@pytest.mark.shared
def test_float_distances_when_heights_have_a_huge_lcm(
    example: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, hs, codes = example
    float_units = mstk_module._Units(1.0, tuple(1.0 / h.height for h in hs), np.float64)
    monkeypatch.setattr(mstk_module._Units, "of", classmethod(lambda cls, _: float_units))
    assert _rows(mstk(codes, hs, 2).generalized()) == TABLE_1B
    assert _rows(mstk(codes, hs, 3).generalized()) == TABLE_1C
    np.testing.assert_allclose(distance_matrix(codes, hs), TABLE_2, atol=5e-4)


@pytest.mark.shared
def test_information_loss_eqs_6_to_9(example: Any) -> None:
    _, hs, codes = example
    result = mstk(codes, hs, 2)
    il = generalization_information_loss(
        result.labels, result.class_nodes, result.hierarchies, [True, False, False], QIS
    )
    # Age (eq. 6): [20-30] spans 21..26, [31-40] 33..37, [41-50] 45..50 of 21..50
    age = (2 * 5 / 29 + 2 * 4 / 29 + 3 * 5 / 29) / 7
    # Sex (eq. 7): M, F keep 1 of 2 leaves (0), Person has 2 -> (2-1)/2
    sex = 3 * 0.5 / 7
    # Zipcode: 1305* and 1306* have 2 of 7 leaves -> 1/7; 148** has 3 -> 2/7
    zipcode = (4 * (1 / 7) + 3 * (2 / 7)) / 7
    assert il["generalization_il_by_attribute"] == pytest.approx(
        {"Age": age, "Sex": sex, "Zipcode": zipcode}
    )
    assert il["generalization_il_numeric"] == pytest.approx(age)
    assert il["generalization_il_categorical"] == pytest.approx(sex + zipcode)
    assert il["generalization_il"] == pytest.approx(age + sex + zipcode)


def _example_dataset() -> Dataset:
    dataset = read_table(_need(SEED / "mstk_example.csv"))
    roles = roles_from_lists(
        dataset.frame.columns,
        qi=QIS,
        identifiers=["ID"],
        confidential=["Disease"],
        nominal=["Sex", "Zipcode"],
    )
    return dataset.with_roles(roles)


def _example_spec(k: int) -> RunSpec:
    files = {c: str(SEED / f"mstk_hierarchy_{c.lower()}.csv") for c in QIS}
    return RunSpec.make("mstk", k, hierarchies=files, seed=1)


@pytest.mark.shared
def test_run_protection_on_the_example() -> None:
    dataset = _example_dataset()
    result = run_protection(dataset, _example_spec(2))
    assert [tuple(r) for r in result.protected[QIS].itertuples(index=False)] == TABLE_1B
    assert result.protected["Disease"].tolist() == dataset.frame["Disease"].tolist()
    assert "ID" not in result.protected.columns
    report = json.loads(json.dumps(result.report, allow_nan=False))
    assert report["sse"] is None and report["sst"] is None and report["information_loss"] is None
    assert "generalization_il" in report["information_loss_basis"]
    assert report["discernibility"] == 17
    assert report["cavg"] == pytest.approx(7 / 6)
    assert report["k_anonymity"] == 2 and report["n_groups"] == 3
    assert report["citation"] == "Ramana & Valli Kumari 2013, §5-6, Algorithm 2"
    assert report["inflexion_point"] == pytest.approx(3.931578)
    assert report["mst_total_weight"] == pytest.approx(16.0)
    assert report["hierarchies"]["Age"].startswith("file mstk_hierarchy_age.csv")
    for key in ("generalization_il", "generalization_il_numeric", "generalization_il_categorical"):
        assert isinstance(report[key], float)
    assert np.isnan(result.information_loss)
    classes = result.artifacts["classes"]
    assert classes.columns.tolist() == ["class", "size", *QIS]
    assert classes["size"].tolist() == [2, 2, 3]
    assert classes.iloc[2][QIS].tolist() == ["[41-50]", "Person", "148**"]
    assert len(result.artifacts["mst"].edges) == 6
    assert "hierarchies_unused" not in report
    k3 = run_protection(dataset, _example_spec(3))
    assert [tuple(r) for r in k3.protected[QIS].itertuples(index=False)] == TABLE_1C


@pytest.mark.shared
def test_automatic_hierarchies_on_the_example() -> None:
    result = run_protection(_example_dataset(), RunSpec.make("mstk", 2, seed=1))
    hierarchies = result.report["hierarchies"]
    assert hierarchies["Sex"] == "automatic: every value generalizes to *"
    assert "masked" in hierarchies["Zipcode"] and "intervals" in hierarchies["Age"]
    assert k_anonymity_level(result.protected, QIS) >= 2
    json.dumps(result.report, allow_nan=False)


@pytest.mark.shared
def test_value_missing_from_a_given_hierarchy(tmp_path: Path) -> None:
    dataset = _example_dataset()
    short = tmp_path / "age.csv"
    short.write_text("\n".join((SEED / "mstk_hierarchy_age.csv").read_text().splitlines()[:-1]))
    spec = RunSpec.make("mstk", 2, hierarchies={"Age": str(short)})
    with pytest.raises(
        InvalidInput, match=r"column 'Age' of mstk_example.csv holds '50' \(line 8\).*age\.csv"
    ):
        run_protection(dataset, spec)
    sex = str(SEED / "mstk_hierarchy_sex.csv")
    # a hierarchy for a column that is not a quasi-identifier would be ignored: refused (issue 12)
    with pytest.raises(InvalidRoles, match="'Disease', which is not a quasi-identifier"):
        run_protection(dataset, RunSpec.make("mstk", 2, hierarchies={"Disease": sex}))
    with pytest.raises(InvalidRoles, match="not in the table"):
        run_protection(dataset, RunSpec.make("mstk", 2, hierarchies={"Nope": str(short)}))


# --------------------------------------------------------------------------------------------
# Adult and Census
# --------------------------------------------------------------------------------------------


def _check_release(dataset: Dataset, result: RunResult, k: int) -> None:
    qis = dataset.roles.quasi_identifiers
    sizes = np.bincount(result.labels)
    assert sizes.min() >= k
    assert set(np.unique(result.labels)) == set(range(len(sizes)))
    assert k_anonymity_level(result.protected, qis) >= k
    assert result.report["k_anonymity"] >= k
    assert result.protected.index.equals(dataset.frame.index)  # rows not reordered
    for col in dataset.frame.columns:
        if col not in qis and col not in dataset.roles.identifiers:
            assert result.protected[col].tolist() == dataset.frame[col].tolist()
    # each record's generalized tuple is the one of its class
    classes = result.artifacts["classes"]
    np.testing.assert_array_equal(
        result.protected[qis].to_numpy(dtype=object),
        classes[qis].to_numpy(dtype=object)[result.labels],
    )
    report = json.loads(json.dumps(result.report, allow_nan=False))
    assert report["discernibility"] == int((sizes.astype(np.int64) ** 2).sum())
    assert 0 <= report["generalization_il"] <= len(qis)


ADULT_QIS = ["age", "workclass", "sex", "education", "race", "occupation"]  # ``004`` Table 5


def _adult(name: str, qis: list[str]) -> tuple[Dataset, dict[str, str]]:
    dataset = read_table(_need(ADULT / name))
    nominal = [q for q in qis if q != "age"]
    roles = roles_from_lists(dataset.frame.columns, qi=qis, nominal=nominal)
    files = {q: str(ADULT / f"adult_hierarchy_{q}.csv") for q in qis}
    return dataset.with_roles(roles), files


@pytest.mark.shared
@pytest.mark.parametrize("k", [3, 5, 10])
def test_adult_subset(k: int) -> None:
    dataset, files = _adult("adult_subset.csv", ADULT_QIS)
    assert dataset.n_records == 3016
    result = run_protection(dataset, RunSpec.make("mstk", k, hierarchies=files, seed=1))
    _check_release(dataset, result, k)
    ages = set(result.protected["age"])
    age_h = load_hierarchy(ADULT / "adult_hierarchy_age.csv")
    assert ages <= set(age_h.node_labels)
    assert result.report["generalization_il_numeric"] > 0


@pytest.mark.shared
@pytest.mark.slow
def test_full_adult_eight_attributes() -> None:
    qis = [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
    ]
    dataset, files = _adult("adult.csv", qis)
    result = run_protection(dataset, RunSpec.make("mstk", 5, hierarchies=files, seed=1))
    _check_release(dataset, result, 5)
    assert result.report["distinct_qi_combinations"] == 18_109  # adult/README
    assert result.protected["salary-class"].tolist() == dataset.frame["salary-class"].tolist()


@pytest.mark.shared
@pytest.mark.parametrize("k", [3, 5, 10])
def test_census_automatic_hierarchies(k: int) -> None:
    dataset = read_table(_need(CENSUS))
    columns = list(dataset.frame.columns)
    dataset = dataset.with_roles(roles_from_lists(columns, qi=columns))
    result = run_protection(dataset, RunSpec.make("mstk", k, seed=1))
    _check_release(dataset, result, k)
    assert all(d.startswith("automatic: intervals") for d in result.report["hierarchies"].values())
    assert result.report["information_loss"] is None


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------


@st.composite
def tables(draw: Any) -> tuple[np.ndarray, list[Hierarchy], int]:
    n = draw(st.integers(2, 40))
    m = draw(st.integers(1, 3))
    hierarchies: list[Hierarchy] = []
    columns: list[np.ndarray] = []
    for _ in range(m):
        kind = draw(st.sampled_from(["intervals", "flat", "masking", "constant"]))
        if kind == "constant":
            values: list[Any] = [7] * n
            h = build_hierarchy(values, "intervals")
        elif kind == "masking":
            values = draw(
                st.lists(st.sampled_from(["1000", "1001", "1010", "2000"]), min_size=n, max_size=n)
            )
            h = build_hierarchy(values, "masking")
        else:
            values = draw(
                st.lists(st.integers(0, draw(st.integers(1, 60))), min_size=n, max_size=n)
            )
            h = build_hierarchy(values, kind)  # type: ignore[arg-type]
        hierarchies.append(h)
        columns.append(h.encode(values))
    k = draw(st.integers(2, n))
    return np.column_stack(columns), hierarchies, k


def _is_ancestor(h: Hierarchy, node: int, leaf: int) -> bool:
    return bool(h.ancestors[leaf, h.node_levels[node]] == node)


@HYPO
@given(tables())
def test_mstk_properties(table: tuple[np.ndarray, list[Hierarchy], int]) -> None:
    codes, hs, k = table
    result = mstk(codes, hs, k)
    labels = result.labels
    sizes = np.bincount(labels)
    assert sizes.min() >= k
    assert set(labels.tolist()) == set(range(len(result.class_nodes)))
    # classes are numbered in the order of their first record
    firsts = [int(np.flatnonzero(labels == g)[0]) for g in range(len(sizes))]
    assert firsts == sorted(firsts)
    # generalized values: k-anonymous, distinct per class, and each the lowest common
    # generalization of its class's values
    frame = pd.DataFrame({f"q{j}": v for j, v in enumerate(result.generalized())})
    assert k_anonymity_level(frame, list(frame.columns)) >= k
    assert len({tuple(row) for row in result.class_nodes.tolist()}) == len(result.class_nodes)
    for g in range(len(sizes)):
        members = codes[labels == g]
        for j, h in enumerate(hs):
            node = int(result.class_nodes[g, j])
            assert all(_is_ancestor(h, node, int(leaf)) for leaf in members[:, j])
            values = [h.values[int(leaf)] for leaf in members[:, j]]
            assert h.node_labels[node] == h.lowest_common_generalization(values)
    # identical records are never separated
    _, inverse = np.unique(codes, axis=0, return_inverse=True)
    for t in np.unique(inverse):
        assert len(set(labels[inverse.reshape(-1) == t])) == 1
    # the record tree is a minimum spanning tree (networkx Kruskal on the full matrix)
    d = distance_matrix(codes, hs)
    full = nx.Graph()
    full.add_nodes_from(range(len(codes)))
    full.add_weighted_edges_from(
        (i, j, d[i, j]) for i in range(len(codes)) for j in range(i + 1, len(codes))
    )
    kruskal = nx.minimum_spanning_tree(full, algorithm="kruskal")
    ours = sorted(result.mst_weights.tolist())
    theirs = sorted(w for _, _, w in kruskal.edges(data="weight"))
    np.testing.assert_allclose(ours, theirs, atol=1e-9)
    for (a, b), w in zip(result.mst_edges, result.mst_weights, strict=True):
        assert d[a, b] == pytest.approx(w)
    assert discernibility(labels) == int((sizes**2).sum())
    assert cavg(labels, k) == pytest.approx(len(labels) / (len(sizes) * k))
    il = generalization_information_loss(
        result.labels, result.class_nodes, result.hierarchies, [True] * len(hs)
    )
    assert 0 <= il["generalization_il"] <= len(hs) + 1e-12


@HYPO
@given(tables())
def test_first_split_is_the_threshold_graph(table: tuple[np.ndarray, list[Hierarchy], int]) -> None:
    """Pruning at mean + σ leaves the components of the graph of pairs at distance <= mean + σ,
    whichever minimum spanning tree was built (so Prim instead of Kruskal changes nothing)."""
    codes, hs, _ = table
    n = len(codes)
    tuples, mult = np.unique(codes, axis=0, return_counts=True)
    units = mstk_module._Units.of(hs)
    ea, eb, ew = mstk_module._prim(tuples, hs, units, lambda *a: None)
    # k = n: 2k-1 >= n, so only the first pruning happens
    comp, _, _ = mstk_module._split(len(tuples), mult.astype(float), ea, eb, ew, n)
    weights = np.concatenate([ew / units.unit, np.zeros(n - len(tuples))])
    theta = inflexion_point(weights)
    d = distance_matrix(tuples, hs)
    close = d <= theta + 1e-9 * max(1.0, theta)
    _, expected = connected_components(close, directed=False)
    # same partition (up to numbering)
    pairs = {(int(a), int(b)) for a, b in zip(comp, expected, strict=True)}
    assert len(pairs) == len(set(comp.tolist())) == len(set(expected.tolist()))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(tables())
def test_tables_and_ancestor_comparison_agree(
    table: tuple[np.ndarray, list[Hierarchy], int],
) -> None:
    """Attributes with many values compare ancestors instead of using a pair table."""
    codes, hs, k = table
    expected = mstk(codes, hs, k)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mstk_module, "_TABLE_MAX", 1)
        got = mstk(codes, hs, k)
    np.testing.assert_array_equal(got.labels, expected.labels)
    np.testing.assert_array_equal(got.class_nodes, expected.class_nodes)
    np.testing.assert_array_equal(got.mst_weights, expected.mst_weights)


def test_all_identical_records() -> None:
    h = build_hierarchy([1, 2], "intervals")
    codes = np.zeros((9, 1), dtype=np.int64)
    result = mstk(codes, [h], 2)
    assert result.labels.tolist() == [0] * 9
    assert result.generalized()[0].tolist() == ["1"] * 9
    assert result.inflexion_point == 0.0


def test_k_out_of_range() -> None:
    h = build_hierarchy([1, 2], "intervals")
    with pytest.raises(Exception, match="k=5"):
        mstk(np.zeros((3, 1), dtype=np.int64), [h], 5)


# --------------------------------------------------------------------------------------------
# the registered method: progress, cancellation, limits
# --------------------------------------------------------------------------------------------


def test_registration() -> None:
    method = get_method("mstk")
    assert method.aggregates is False
    assert method.kinds == frozenset(AttributeKind)
    assert method.citation == "004_0ca91c7afa3e094f.txt §5-6, Algorithm 2"
    assert method.all_params == ()
    assert "spanning tree" in method.description


def _random_dataset(n: int = 300, seed: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(10, 1, n)),
            "level": rng.choice(["low", "mid", "high"], n),
            "city": rng.choice(["08001", "08002", "08013", "17001"], n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "secret": rng.normal(size=n),
        }
    )
    roles = roles_from_lists(
        frame.columns,
        qi=["age", "income", "level", "city", "colour"],
        ordinal={"level": ["low", "mid", "high"]},
        nominal=["city", "colour"],
        confidential=["secret"],
    )
    return Dataset.from_frame(frame, roles)


def test_mixed_kinds_with_automatic_hierarchies() -> None:
    dataset = _random_dataset()
    result = run_protection(dataset, RunSpec.make("mstk", 4, seed=2))
    _check_release(dataset, result, 4)
    report = result.report
    assert "ordinal" not in report["hierarchies"]["level"]
    assert "runs of consecutive categories" in report["hierarchies"]["level"]
    assert "masked" in report["hierarchies"]["city"]
    assert set(report["generalization_il_by_attribute"]) == {
        "age",
        "income",
        "level",
        "city",
        "colour",
    }
    assert result.protected["secret"].equals(dataset.frame["secret"])


def test_progress_and_cancel() -> None:
    dataset = _random_dataset()
    seen: list[float] = []

    def record(fraction: float, status: str = "") -> None:
        seen.append(fraction)

    run_protection(dataset, RunSpec.make("mstk", 3, seed=1), record)
    assert seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen)
    assert seen == sorted(seen)
    assert 20 <= len(seen) <= 1000

    for stop_at in (0.3, 0.83, 0.9):

        def cancel(fraction: float, status: str = "", stop: float = stop_at) -> None:
            if fraction >= stop:
                raise RunCancelled

        with pytest.raises(RunCancelled):
            run_protection(dataset, RunSpec.make("mstk", 3, seed=1), cancel)


def test_too_many_distinct_tuples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mstk_module, "MAX_DISTINCT", 50)
    with pytest.raises(InvalidInput, match="more than 50"):
        run_protection(_random_dataset(), RunSpec.make("mstk", 3, seed=1))
