"""Layouts of the tree views (``microgui.core.views.layout``): tidy tree, edge subsample, MST layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.dependency import dependency_tree
from microgui.core.table.roles import roles_from_lists
from microgui.core.views.layout import (
    DEFAULT_MAX_EDGES,
    PC1,
    PC2,
    axis_choices,
    axis_values,
    dependency_tree_layout,
    edge_sample,
    mst_layout,
    tree_layout,
)
from microgui.core.views.projection import qi_projection


def _no_overlap(layout_x: np.ndarray, depth: np.ndarray) -> bool:
    for level in np.unique(depth):
        row = np.sort(layout_x[depth == level])
        if len(row) > 1 and np.diff(row).min() < 1.0 - 1e-9:
            return False
    return True


def test_a_star_is_rooted_at_its_hub_with_leaves_one_unit_apart() -> None:
    names = ["a", "hub", "b", "c", "d"]
    layout = tree_layout(names, [(1, 0), (1, 2), (1, 3), (1, 4)], [0.5, 1.0, 1.5, 2.0])
    assert layout.root == 1
    assert layout.depth.tolist() == [1, 0, 1, 1, 1]
    assert sorted(layout.x[[0, 2, 3, 4]].tolist()) == [0.0, 1.0, 2.0, 3.0]
    assert layout.x[1] == pytest.approx(1.5)  # over the middle of its children
    assert layout.isolated == () and layout.n_levels == 2
    assert layout.weights.tolist() == [0.5, 1.0, 1.5, 2.0]


def test_a_path_is_rooted_at_its_centre() -> None:
    layout = tree_layout(list("abcde"), [(0, 1), (1, 2), (2, 3), (3, 4)])
    assert layout.root == 2
    assert layout.depth.tolist() == [2, 1, 0, 1, 2]
    assert layout.n_levels == 3


def test_root_preference_breaks_ties_between_two_centres() -> None:
    edges = [(0, 1), (1, 2), (2, 3)]  # a path of 4: centres 1 and 2
    assert tree_layout(list("abcd"), edges).root == 1
    assert tree_layout(list("abcd"), edges, root_preference=[2, 1]).root == 2


def test_isolated_vertices_go_on_a_row_below_the_tree() -> None:
    layout = tree_layout(list("abcde"), [(0, 1), (1, 2)])
    assert layout.isolated == (3, 4)
    assert layout.depth[3] == layout.depth[4] == layout.depth[[0, 1, 2]].max() + 1
    no_edges = tree_layout(["only"], [])
    assert no_edges.root is None and no_edges.isolated == (0,) and no_edges.depth.tolist() == [0]


def test_edges_that_are_not_a_tree_are_refused() -> None:
    with pytest.raises(ValueError):
        tree_layout(list("abc"), [(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ValueError):
        tree_layout(list("abcd"), [(0, 1), (2, 3)])


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=40), st.integers(min_value=0, max_value=10_000))
def test_random_trees_never_overlap(m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = [(int(rng.integers(0, i)), i) for i in range(1, m)]  # a random recursive tree
    layout = tree_layout([f"v{i}" for i in range(m)], edges)
    assert _no_overlap(layout.x, layout.depth)
    # every child is one level below its parent
    for a, b in edges:
        assert abs(int(layout.depth[a]) - int(layout.depth[b])) == 1
    # a parent lies between its first and last child
    for v in range(m):
        kids = [b if layout.depth[b] > layout.depth[v] else a for a, b in edges if v in (a, b)]
        kids = [k for k in kids if k != v and layout.depth[k] > layout.depth[v]]
        if kids:
            assert min(layout.x[kids]) - 1e-9 <= layout.x[v] <= max(layout.x[kids]) + 1e-9


def test_dependency_tree_layout_follows_the_tree() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, size=500)
    frame = pd.DataFrame(
        {
            "a": base,
            "b": base + rng.integers(0, 2, size=500),
            "c": rng.integers(0, 3, size=500),
            "constant": np.zeros(500, dtype=int),
        }
    ).astype(str)
    tree = dependency_tree(frame, ["a", "b", "c", "constant"])
    layout = dependency_tree_layout(tree)
    assert layout.names == tree.attributes
    assert [tuple(e) for e in layout.edges.tolist()] == [
        (tree.attributes.index(a), tree.attributes.index(b)) for a, b, _ in tree.edges
    ]
    np.testing.assert_allclose(layout.weights, [w for _, _, w in tree.edges])
    assert layout.isolated == (3,)  # the constant attribute is not in the tree
    assert layout.root in {tree.attributes.index(k) for k in tree.key_attributes} | {0, 1, 2}


def test_edge_sample_keeps_everything_below_the_threshold() -> None:
    cut = np.array([True, False, False, True])
    sample = edge_sample(cut, max_edges=10)
    assert sample.indices.tolist() == [0, 1, 2, 3] and not sample.sampled
    assert sample.n_edges == 4 and sample.n_cut == 2


def test_edge_sample_takes_every_cut_edge_first_then_kept_ones() -> None:
    rng = np.random.default_rng(1)
    cut = rng.random(49_999) < 0.02
    sample = edge_sample(cut, max_edges=DEFAULT_MAX_EDGES, seed=7)
    assert sample.sampled and len(sample.indices) == DEFAULT_MAX_EDGES
    assert np.all(np.diff(sample.indices) > 0)
    assert set(np.flatnonzero(cut)) <= set(sample.indices.tolist())
    again = edge_sample(cut, max_edges=DEFAULT_MAX_EDGES, seed=7)
    np.testing.assert_array_equal(sample.indices, again.indices)  # seeded
    other = edge_sample(cut, max_edges=DEFAULT_MAX_EDGES, seed=8)
    assert not np.array_equal(sample.indices, other.indices)


def test_edge_sample_with_more_cut_edges_than_room_samples_the_cut_edges() -> None:
    cut = np.ones(100, dtype=bool)
    cut[:10] = False
    sample = edge_sample(cut, max_edges=20, seed=0)
    assert len(sample.indices) == 20 and cut[sample.indices].all()


def _mst_dataset(n: int = 300) -> Dataset:
    rng = np.random.default_rng(3)
    centres = rng.normal(scale=6.0, size=(6, 2))
    points = centres[rng.integers(0, 6, size=n)] + rng.normal(size=(n, 2))
    return Dataset.from_frame(pd.DataFrame(points, columns=["x", "y"]))


def test_mst_layout_of_an_mst_run() -> None:
    result = run_protection(_mst_dataset(), RunSpec.make("mst", 4, seed=0))
    part = result.artifacts["mst"]
    layout = mst_layout(result)
    assert layout is not None and layout.source == "mst"
    assert layout.n_edges == 299 and layout.n_cut == int(part.cut.sum())
    np.testing.assert_array_equal(layout.edges, part.edges)
    labels = result.labels
    same = labels[layout.edges[:, 0]] == labels[layout.edges[:, 1]]
    # kept edges inside one group carry its label; cut edges and edges between groups are -1
    inside = ~layout.cut & same
    np.testing.assert_array_equal(layout.edge_group[inside], labels[layout.edges[inside, 0]])
    assert (layout.edge_group[~inside] == -1).all()
    # a cut edge always joins two groups
    assert not same[layout.cut].any()
    small = mst_layout(result, max_edges=50, seed=2)
    assert small is not None and len(small.sample.indices) == 50


def test_mst_layout_of_an_mstk_run_and_of_other_runs() -> None:
    frame = pd.DataFrame(
        {
            "Age": [21, 26, 33, 37, 45, 48, 50],
            "Sex": list("MMFFMFM"),
            "Zipcode": ["13051", "13053", "13063", "13068", "14851", "14856", "14865"],
        }
    )
    roles = roles_from_lists(
        frame.columns, qi=["Age", "Sex", "Zipcode"], nominal=["Sex", "Zipcode"]
    )
    dataset = Dataset.from_frame(frame, roles)
    result = run_protection(dataset, RunSpec.make("mstk", 2, seed=1))
    layout = mst_layout(result)
    assert layout is not None and layout.source == "mstk"
    np.testing.assert_array_equal(layout.cut, result.artifacts["mst"].cut)
    assert layout.n_edges == 6
    mdav = run_protection(dataset, RunSpec.make("mdav-generic", 2, seed=1))
    assert mst_layout(mdav) is None


def test_axis_values_are_the_projection_or_the_original_units() -> None:
    dataset = _mst_dataset(50)
    result = run_protection(dataset, RunSpec.make("mdav", 5, seed=0))
    projection = qi_projection(result)
    qi = prepare_qi(dataset)
    assert axis_choices(qi, projection) == [PC1, PC2, "x", "y"]
    assert axis_choices(qi, None) == ["x", "y"]
    values, label = axis_values(qi, projection, "x")
    np.testing.assert_allclose(values, dataset.frame["x"].to_numpy())
    assert label == "x (original units)"
    assert projection is not None
    pc2, label2 = axis_values(qi, projection, PC2)
    np.testing.assert_array_equal(pc2, projection.original[:, 1])
    assert label2.startswith("PC2 (")
    with pytest.raises(KeyError):
        axis_values(qi, None, PC1)


def test_edges_in_view_keeps_the_lowest_ranks_and_nests() -> None:
    """Issue 29: at most max_edges of the edges with both ends in view, a seeded sample that a
    smaller view keeps (the MST view draws 300 of 30,000 edges, not 5,000)."""
    from microgui.core.views.layout import MstLayout, edge_sample, edges_in_view

    n = 1000
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    edges = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    cut = np.zeros(n - 1, dtype=bool)
    rank = rng.permutation(n - 1)
    lay = MstLayout("mst", edges, cut, np.zeros(n - 1, dtype=np.int64), edge_sample(cut), rank)
    big = edges_in_view(lay, x, y, (0.0, 1.0), (0.0, 1.0), max_edges=50)
    assert big.in_view == n - 1 and big.total == n - 1 and len(big.indices) == 50 and big.sampled
    assert set(big.indices) == set(np.argsort(rank)[:50])
    small = edges_in_view(lay, x, y, (0.0, 0.5), (0.0, 0.5), max_edges=50)
    inside = (x <= 0.5) & (y <= 0.5)
    assert small.in_view == int((inside[:-1] & inside[1:]).sum())
    assert all(inside[edges[i, 0]] and inside[edges[i, 1]] for i in small.indices)
    # nested: the big view's edges that lie in the small view are drawn there too
    kept = [i for i in big.indices if inside[edges[i, 0]] and inside[edges[i, 1]]]
    assert set(kept) <= set(small.indices)
    none = edges_in_view(lay, x, y, (5.0, 6.0), (5.0, 6.0))
    assert none.in_view == 0 and len(none.indices) == 0
