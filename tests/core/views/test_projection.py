"""Projections, category axes and transition tables for mixed quasi-identifiers (issue 13, item 7).

The embedding's squared Euclidean distance is checked against MDAV-generic's own distance kernel
(``003`` §5.2-5.4), the mixed PCA against the former PCA on all-continuous data and against the
explicit one-hot matrix, and the transition table against hand counts.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.methods.kernels import mixed_distances as _distances
from microgui.core.methods.kernels import ordinal_tables as _ordinal_tables
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.views.projection import (
    JITTER,
    NOMINAL_WEIGHT,
    MixedEmbedding,
    all_category_transitions,
    categorical_qi_names,
    category_axis,
    category_jitter,
    category_transitions,
    mixed_pca,
    numeric_qi_matrix,
    pca_2d,
    protected_codes,
    qi_projection,
    transition_table,
    unchanged_share,
)

QI = AttributeRole.QUASI_IDENTIFIER
SIZES = ("S", "M", "L", "XL")


def _mixed_dataset(n: int = 40, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.lognormal(10, 1, n),
            "size": rng.choice(SIZES, n),
            "colour": rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2]),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(QI, AttributeKind.CONTINUOUS),
            "income": ColumnSpec(QI, AttributeKind.CONTINUOUS),
            "size": ColumnSpec(QI, AttributeKind.ORDINAL, SIZES),
            "colour": ColumnSpec(QI, AttributeKind.NOMINAL),
            "sex": ColumnSpec(QI, AttributeKind.NOMINAL),
        }
    )
    return Dataset.from_frame(frame, roles)


def _kernel_distances(
    qi_cont: np.ndarray, qi_ord: np.ndarray, sizes: np.ndarray, qi_nom: np.ndarray
) -> np.ndarray:
    """All pairwise squared distances as MDAV-generic's kernel computes them."""
    n = len(qi_cont)
    cont = np.ascontiguousarray(qi_cont.T, dtype=np.float64)
    ords = np.ascontiguousarray(qi_ord.T, dtype=np.int64)
    noms = np.ascontiguousarray(qi_nom.T, dtype=np.int64)
    osq, _ = _ordinal_tables(qi_ord, np.asarray(sizes, dtype=np.int64))
    out = np.empty((n, n))
    dist = np.empty(n)
    for p in range(n):
        _distances(
            cont, ords, noms, osq, n, cont[:, p].copy(), ords[:, p].copy(), noms[:, p].copy(), dist
        )
        out[p] = dist
    return out


def _squared_euclidean(x: np.ndarray) -> np.ndarray:
    diff = x[:, None, :] - x[None, :, :]
    out: np.ndarray = (diff * diff).sum(axis=2)
    return out


def test_embedding_distance_is_mdav_generic_distance() -> None:
    qi = prepare_qi(_mixed_dataset())
    emb = MixedEmbedding.of(qi)
    x = emb.matrix(qi.continuous, qi.ordinal, qi.nominal)
    assert x.shape == (40, 2 + 1 + 3 + 2) and emb.dim == 8
    assert emb.columns[:3] == ("age", "income", "size/|D|")
    assert "colour=blue" in emb.columns and "sex=m" in emb.columns
    kernel = _kernel_distances(qi.continuous, qi.ordinal, qi.ordinal_sizes, qi.nominal)
    np.testing.assert_allclose(_squared_euclidean(x), kernel, rtol=1e-12, atol=1e-12)


def test_embedding_distance_by_hand_on_two_records() -> None:
    # 003 §5.3: d_ORD(S, XL) = 3/4 categories; §5.4: red != blue -> 1, f == f -> 0
    frame = pd.DataFrame(
        {"size": ["S", "XL"], "colour": ["red", "blue"], "sex": ["f", "f"], "x": [0.0, 2.0]}
    )
    roles = RoleMap.from_dict(
        {
            "x": ColumnSpec(QI, AttributeKind.CONTINUOUS),
            "size": ColumnSpec(QI, AttributeKind.ORDINAL, SIZES),
            "colour": ColumnSpec(QI, AttributeKind.NOMINAL),
            "sex": ColumnSpec(QI, AttributeKind.NOMINAL),
        }
    )
    qi = prepare_qi(Dataset.from_frame(frame, roles))
    x = MixedEmbedding.of(qi).matrix(qi.continuous, qi.ordinal, qi.nominal)
    z = qi.continuous[:, 0]
    expected = (z[0] - z[1]) ** 2 + (3 / 4) ** 2 + 1.0 + 0.0
    assert _squared_euclidean(x)[0, 1] == pytest.approx(expected)
    assert NOMINAL_WEIGHT == pytest.approx(2**-0.5)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 25),
    seed=st.integers(0, 2**31),
    dc=st.integers(0, 2),
    ordinal_sizes=st.lists(st.integers(2, 6), max_size=2),
    nominal_sizes=st.lists(st.integers(2, 5), max_size=2),
)
def test_embedding_matches_the_kernel_on_random_mixed_tables(
    n: int, seed: int, dc: int, ordinal_sizes: list[int], nominal_sizes: list[int]
) -> None:
    if dc + len(ordinal_sizes) + len(nominal_sizes) == 0:
        dc = 1
    rng = np.random.default_rng(seed)
    cont = rng.normal(size=(n, dc))
    ords = np.column_stack([rng.integers(0, s, n) for s in ordinal_sizes] or [np.empty((n, 0))])
    ords = ords.astype(np.int64).reshape(n, len(ordinal_sizes))
    noms = np.column_stack([rng.integers(0, s, n) for s in nominal_sizes] or [np.empty((n, 0))])
    noms = noms.astype(np.int64).reshape(n, len(nominal_sizes))
    emb = MixedEmbedding(
        continuous_names=tuple(f"c{i}" for i in range(dc)),
        ordinal_names=tuple(f"o{i}" for i in range(len(ordinal_sizes))),
        ordinal_sizes=tuple(ordinal_sizes),
        nominal_names=tuple(f"n{i}" for i in range(len(nominal_sizes))),
        nominal_categories=tuple(tuple(range(s)) for s in nominal_sizes),
    )
    x = emb.matrix(cont, ords, noms)
    kernel = _kernel_distances(cont, ords, np.asarray(ordinal_sizes), noms)
    np.testing.assert_allclose(_squared_euclidean(x), kernel, rtol=1e-10, atol=1e-10)


def test_projection_equals_the_former_pca_on_continuous_data() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        rng.normal(size=(200, 3)) @ [[1, 0.5, 0], [0, 1, 0.3], [0, 0, 1]], columns=list("abc")
    )
    dataset = Dataset.from_frame(
        frame, RoleMap.from_dict({c: ColumnSpec(QI, AttributeKind.CONTINUOUS) for c in "abc"})
    )
    result = run_protection(dataset, RunSpec.make("mdav", 4, seed=0))
    proj = qi_projection(result)
    assert proj is not None and not proj.mixed and proj.columns == ("a", "b", "c")
    # the former projection: pca_2d of the z-scores, protected values on the same scale
    matrix, _, _, _ = numeric_qi_matrix(result.qi)
    old = pca_2d(matrix)
    np.testing.assert_array_equal(proj.original, old.transform(matrix))
    z, _, _ = protected_codes(result.protected, result.qi)
    np.testing.assert_allclose(proj.protected, old.transform(z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(proj.explained_ratio, old.explained_ratio)
    assert "z-score" in proj.axis_label(0) and proj.axis_label(1).startswith("PC2 (")


def test_mixed_pca_is_the_pca_of_the_explicit_embedding() -> None:
    result = run_protection(_mixed_dataset(300, seed=1), RunSpec.make("mdav-generic", 5, seed=0))
    qi = result.qi
    pca = mixed_pca(qi)
    x = pca.embedding.matrix(qi.continuous, qi.ordinal, qi.nominal)
    cov = np.cov(x.T)
    eigval = np.sort(np.linalg.eigvalsh(cov))[::-1]
    np.testing.assert_allclose(pca.total_variance, np.trace(cov), rtol=1e-12)
    np.testing.assert_allclose(pca.explained_ratio, eigval[:2] / eigval.sum(), rtol=1e-9)
    np.testing.assert_allclose(pca.mean, x.mean(axis=0), atol=1e-14)
    scores = pca.transform(qi.continuous, qi.ordinal, qi.nominal)
    np.testing.assert_allclose(scores, (x - x.mean(axis=0)) @ pca.components.T, atol=1e-12)
    # components are orthonormal eigenvectors of the covariance
    np.testing.assert_allclose(pca.components @ pca.components.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(cov @ pca.components[0], eigval[0] * pca.components[0], atol=1e-9)
    # without forming the covariance (the path for thousands of categories): the same plane
    iterative = mixed_pca(qi, max_dense_dim=0)
    np.testing.assert_allclose(iterative.explained_ratio, pca.explained_ratio, rtol=1e-9)
    np.testing.assert_allclose(
        np.abs(iterative.components @ pca.components.T), np.eye(2), atol=1e-6
    )

    proj = qi_projection(result)
    assert proj is not None and proj.mixed and proj.dimension == pca.embedding.dim
    assert proj.columns == ("age", "income", "size", "colour", "sex")
    np.testing.assert_allclose(proj.original, scores)
    assert np.isfinite(proj.protected).all()
    # members of a group share one released position
    labels = result.labels
    for g in range(3):
        members = np.flatnonzero(labels == g)
        assert np.ptp(proj.protected[members], axis=0).max() < 1e-9
    assert "mixed-distance embedding" in proj.axis_label(0) and "of variance" in proj.axis_label(0)
    assert "1/√2" in proj.explanation()


def test_a_released_value_that_is_no_category_is_not_placed() -> None:
    result = run_protection(_mixed_dataset(30), RunSpec.make("mdav-generic", 3, seed=0))
    protected = result.protected.copy()
    protected.loc[0, "colour"] = "red|blue"  # a generalized value
    protected.loc[1, "size"] = "*"
    z, ranks, codes = protected_codes(protected, result.qi)
    assert codes[0, 0] == -1 and np.isnan(ranks[1, 0])
    pca = mixed_pca(result.qi)
    scores = pca.transform(z, ranks, codes)
    assert np.isnan(scores[:2]).all() and np.isfinite(scores[2:]).all()


def test_category_axis_orders_and_jitter() -> None:
    qi = prepare_qi(_mixed_dataset(200, seed=2))
    ordinal = category_axis(qi, "size")
    assert ordinal.labels == SIZES and ordinal.kind == "ordinal"
    np.testing.assert_array_equal(ordinal.original, qi.ordinal[:, 0])
    nominal = category_axis(qi, "colour")
    counts = pd.Series(
        np.asarray(qi.nominal_categories[0], dtype=object)[qi.nominal[:, 0]]
    ).value_counts()
    assert list(nominal.labels) == list(counts.index)  # most frequent first
    assert "frequency" in nominal.order_rule
    assert [nominal.labels[s] for s in nominal.original[:5]] == [
        qi.nominal_categories[0][c] for c in qi.nominal[:5, 0]
    ]
    np.testing.assert_array_equal(
        nominal.slots_of(pd.Series(["blue", "nope", "red"])),
        [nominal.labels.index("blue"), np.nan, nominal.labels.index("red")],
    )
    with pytest.raises(KeyError):
        category_axis(qi, "age")
    assert categorical_qi_names(qi) == ("size", "colour", "sex")
    # ties: alphabetical
    tie = prepare_qi(
        Dataset.from_frame(
            pd.DataFrame({"c": ["b", "a", "c", "a", "b", "c"]}),
            RoleMap.from_dict({"c": ColumnSpec(QI, AttributeKind.NOMINAL)}),
        )
    )
    assert category_axis(tie, "c").labels == ("a", "b", "c")

    jitter = category_jitter(5000, 7, "colour")
    assert np.abs(jitter).max() <= JITTER and np.abs(jitter).max() > 0.34
    np.testing.assert_array_equal(jitter, category_jitter(5000, 7, "colour"))
    assert not np.array_equal(jitter, category_jitter(5000, 7, "size"))
    assert not np.array_equal(jitter, category_jitter(5000, 8, "colour"))
    assert abs(float(np.corrcoef(jitter, category_jitter(5000, 7, "size"))[0, 1])) < 0.05


def test_transition_table_by_hand() -> None:
    original = ["a", "a", "b", "b", "b", "c"]
    released = ["a", "b", "b", "b", "a", "*"]
    table = transition_table(original, released, ["a", "b", "c", "d"])
    expected = pd.DataFrame(
        [[1, 1, 0, 0, 0], [1, 2, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]],
        index=pd.Index(["a", "b", "c", "d"], name="original"),
        columns=pd.Index(["a", "b", "c", "d", "*"], name="released"),
    )
    pd.testing.assert_frame_equal(table, expected, check_index_type=False, check_column_type=False)
    assert table.dtypes.unique().tolist() == [np.dtype(np.int64)]
    assert unchanged_share(table) == pytest.approx(3 / 6)
    # default order: by decreasing frequency, ties alphabetical; missing cells as "(missing)"
    table = transition_table(["y", "x", "y", None], ["y", "y", None, "x"])
    assert list(table.index) == ["y", "x", "(missing)"]
    assert list(table.columns) == ["y", "x", "(missing)"]
    assert table.loc["y", "(missing)"] == 1 and table.loc["(missing)", "x"] == 1
    assert int(table.to_numpy().sum()) == 4
    with pytest.raises(ValueError, match="4 original values but 3"):
        transition_table(["a"] * 4, ["a"] * 3)
    # numbers read back as text still match their category
    table = transition_table(pd.Series([1, 2, 2]), pd.Series(["1", "2", 2.0]), [1, 2])
    assert table.to_numpy().tolist() == [[1, 0], [0, 2]]


def test_category_transitions_of_a_run() -> None:
    dataset = _mixed_dataset(120, seed=4)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 4, seed=0))
    tables = all_category_transitions(result)
    assert list(tables) == ["size", "colour", "sex"]
    for name, table in tables.items():
        assert int(table.to_numpy().sum()) == 120
        pd.testing.assert_frame_equal(table, category_transitions(result, name))
        crosstab = pd.crosstab(dataset.frame[name], result.protected[name])
        for o in table.index:
            for r in table.columns:
                got = (
                    int(crosstab.loc[o, r]) if o in crosstab.index and r in crosstab.columns else 0
                )
                assert table.loc[o, r] == got
    assert list(tables["size"].index) == list(SIZES)
    share = unchanged_share(tables["sex"])
    assert share == pytest.approx(float((dataset.frame["sex"] == result.protected["sex"]).mean()))
    with pytest.raises(KeyError):
        category_transitions(result, "age")


def test_no_categorical_quasi_identifier_has_no_transitions() -> None:
    frame = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) ** 2})
    roles = RoleMap.from_dict({c: ColumnSpec(QI, AttributeKind.CONTINUOUS) for c in "ab"})
    result = run_protection(Dataset.from_frame(frame, roles), RunSpec.make("mdav", 4, seed=0))
    assert all_category_transitions(result) == {}


def test_projection_carries_the_groups_plot_axes() -> None:
    """The worker lays out every quasi-identifier's axis with the projection (issue 29: the GUI
    thread only hands arrays to pyqtgraph): the same axes, released slots and released numbers
    as computed from the run directly, and a released value that is no category is unplaced."""
    dataset = _mixed_dataset(120, seed=5)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 4, seed=0))
    proj = qi_projection(result)
    assert proj is not None
    assert list(proj.category_axes) == ["size", "colour", "sex"]
    assert list(proj.released_numbers) == ["age", "income"]
    for name, axis in proj.category_axes.items():
        direct = category_axis(result.qi, name)
        assert axis.categories == direct.categories
        np.testing.assert_array_equal(axis.original, direct.original)
        np.testing.assert_array_equal(
            proj.released_slots[name], direct.slots_of(result.protected[name])
        )
        slots = proj.released_slots[name]
        released = result.protected[name].astype(str).to_numpy()
        assert [axis.labels[int(s)] for s in slots] == list(released)
    for name, values in proj.released_numbers.items():
        np.testing.assert_allclose(values, result.protected[name].to_numpy(dtype=float))
    generalized = result.protected.copy()
    generalized.loc[0, "colour"] = "red-or-green"
    other = qi_projection(dataclasses.replace(result, protected=generalized))
    assert other is not None
    assert np.isnan(other.released_slots["colour"][0])
    assert not np.isnan(other.released_slots["colour"][1:]).any()
