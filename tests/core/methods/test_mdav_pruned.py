"""Exact MDAV with spatial pruning (issue 17): ``search="pruned"`` gives the partition of the
brute-force kernel, label for label, ties included.

The brute-force kernel is the reference (itself checked against the textbook numpy
implementation in ``test_mdav.py``). Cases: random continuous data, heavy ties (integer grids,
duplicated records, constant columns, every record equal), mixed kinds, sizes around the
kernel's special cases (n < 2k, 2k <= n < 3k) and the index's (one block, one superblock), the
CASC reference sets, hypothesis-drawn tables; the ``search`` parameter through a whole run;
progress and cancellation on the pruned path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference_sets import REFERENCE_FILES, reference_dataset

from microgui.core.errors import InvalidParameter
from microgui.core.methods import get_method
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods.mdav import choose_search, mdav, mdav_generic
from microgui.core.methods.spatial import BLOCK_SIZE, SUPER_BLOCKS
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

HYPO = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    mdav_module.warm_up()


def _same(x: np.ndarray, k: int) -> None:
    brute = mdav(x, k, search="brute")
    pruned = mdav(x, k, search="pruned")
    np.testing.assert_array_equal(pruned, brute)


def _same_generic(
    cont: np.ndarray | None,
    ords: np.ndarray | None,
    sizes: list[int] | None,
    noms: np.ndarray | None,
    k: int,
    average: str = "median",
) -> None:
    args = (cont, ords, sizes, noms, k)
    brute = mdav_generic(*args, ordinal_average=average, search="brute")
    pruned = mdav_generic(*args, ordinal_average=average, search="pruned")
    np.testing.assert_array_equal(pruned, brute)


@pytest.mark.parametrize("n", [5, 9, 10, 14, 15, 16, 63, 64, 65, 600, 3_000])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_sizes_around_special_cases(n: int, k: int) -> None:
    if n < k:
        return
    x = np.random.default_rng(n * 7 + k).normal(size=(n, 3))
    _same(x, k)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 10])
def test_random_continuous(k: int) -> None:
    rng = np.random.default_rng(k)
    _same(rng.normal(size=(4_000, 6)), k)


def test_index_spans_several_superblocks() -> None:
    n = BLOCK_SIZE * SUPER_BLOCKS * 6 + 17
    x = np.random.default_rng(3).standard_t(3, size=(n, 4))
    _same(x, 3)


@pytest.mark.parametrize("levels", [2, 3, 5])
def test_integer_grids_full_of_ties(levels: int) -> None:
    rng = np.random.default_rng(levels)
    x = rng.integers(0, levels, size=(3_000, 4)).astype(float)
    _same(x, 3)
    _same(x, 5)


def test_duplicated_records_and_constant_columns() -> None:
    rng = np.random.default_rng(11)
    base = rng.normal(size=(300, 3))
    x = np.vstack([base] * 7)[rng.permutation(2_100)]
    x = np.column_stack([x, np.full(len(x), 2.5)])
    _same(x, 4)


def test_every_record_equal() -> None:
    _same(np.ones((2_500, 3)), 3)


def test_one_dimension_and_wide_tables() -> None:
    rng = np.random.default_rng(5)
    _same(rng.exponential(size=(2_500, 1)), 3)
    _same(rng.normal(size=(2_500, 40)), 3)


def test_heavy_tails_and_clusters() -> None:
    rng = np.random.default_rng(8)
    lognormal = np.exp(rng.normal(size=(3_000, 5)) * 1.5)
    _same((lognormal - lognormal.mean(0)) / lognormal.std(0), 5)
    centres = rng.normal(scale=8.0, size=(12, 5))
    clustered = centres[rng.integers(0, 12, 3_000)] + rng.normal(size=(3_000, 5))
    _same(clustered, 5)


def test_mixed_kinds() -> None:
    rng = np.random.default_rng(13)
    n = 3_000
    cont = rng.normal(size=(n, 3))
    ords = np.column_stack([rng.integers(0, 5, n), rng.integers(0, 3, n)])
    noms = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 2, n)])
    for average in ("median", "convex-median"):
        _same_generic(cont, ords, [5, 3], noms, 3, average)
    _same_generic(None, ords, [5, 3], noms, 4)  # categorical only: ties everywhere
    _same_generic(None, None, None, noms, 5)
    _same_generic(cont, None, None, noms, 3)


@given(
    x=hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 160), st.integers(1, 4)),
        elements=st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]),
    ),
    k=st.integers(2, 6),
)
@HYPO
def test_hypothesis_tie_ridden_tables(x: np.ndarray, k: int) -> None:
    if len(x) < k:
        return
    _same(x, k)


@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 300),
    dn=st.integers(0, 2),
    do=st.integers(0, 2),
    dc=st.integers(0, 2),
    k=st.integers(2, 5),
)
@HYPO
def test_hypothesis_mixed(seed: int, n: int, dn: int, do: int, dc: int, k: int) -> None:
    if dn + do + dc == 0 or n < k:
        return
    rng = np.random.default_rng(seed)
    cont = rng.integers(-2, 3, (n, dc)).astype(float) if dc else None
    ords = rng.integers(0, 4, (n, do)) if do else None
    noms = rng.integers(0, 3, (n, dn)) if dn else None
    _same_generic(cont, ords, [4] * do if do else None, noms, k)


@pytest.mark.shared
@pytest.mark.parametrize("name", ["Census", "Tarragona", "EIA"])
def test_reference_sets(name: str) -> None:
    # Through whole runs (the z-scores the app uses); Tarragona and EIA have duplicate records.
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    other = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
    dataset = reference_dataset(REFERENCE_FILES[name], qi, other)
    for k in (3, 4, 5, 10):
        labels = {
            search: run_protection(dataset, RunSpec.make("mdav", k, params={"search": search}))
            for search in ("pruned", "brute")
        }
        np.testing.assert_array_equal(labels["pruned"].labels, labels["brute"].labels)


def test_search_parameter_through_a_run() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(3_000, 3)), columns=["a", "b", "c"])
    roles = RoleMap.from_dict(
        {c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS) for c in "abc"}
    )
    dataset = Dataset.from_frame(frame, roles)
    runs = {
        search: run_protection(dataset, RunSpec.make("mdav", 4, params={"search": search}))
        for search in ("auto", "pruned", "brute")
    }
    for run in runs.values():
        np.testing.assert_array_equal(run.labels, runs["brute"].labels)
        pd.testing.assert_frame_equal(run.protected, runs["brute"].protected)
    for name in ("mdav", "mdav-generic"):
        assert "search" in {p.name for p in get_method(name).params}
    with pytest.raises(InvalidParameter, match="search"):
        run_protection(dataset, RunSpec.make("mdav", 4, params={"search": "fast"}))


def test_bad_search_value_in_the_function() -> None:
    with pytest.raises(InvalidParameter, match="search='kd'"):
        mdav(np.zeros((10, 2)), 2, search="kd")


def test_auto_is_one_of_the_kernels() -> None:
    for n in (10, 1_000, 100_000, 10_000_000):
        for d in (1, 10, 100):
            assert choose_search(n, d, 5) in ("pruned", "brute")


def test_pruned_progress_and_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mdav_module, "_PRUNED_BATCH_WORK", 20_000)
    x = np.random.default_rng(4).normal(size=(6_000, 4))
    seen: list[float] = []
    mdav(x, 3, search="pruned", progress=lambda f, _s="": seen.append(f))
    assert len(seen) > 5 and seen == sorted(seen) and seen[-1] == 1.0

    def stop(fraction: float, _status: str = "") -> None:
        if fraction > 0.2:
            raise RunCancelled()

    with pytest.raises(RunCancelled):
        mdav(x, 3, search="pruned", progress=stop)


@pytest.mark.parametrize("dims", [1, 3])
def test_block_queries_match_the_passes(dims: int) -> None:
    # The index's nearest query against the brute-force primitive, on a table full of ties,
    # before and after records leave it; with 3 columns the boxes are rotated (principal axes),
    # with 1 they are not.
    from microgui.core.methods.kernels import nearest_and_farthest, ordinal_tables
    from microgui.core.methods.spatial import (
        block_nearest,
        block_remove,
        build_blocks,
        work_arrays,
    )

    rng = np.random.default_rng(21)
    n = 5_000
    x = rng.integers(-3, 4, (n, dims)).astype(float)
    empty = np.empty((n, 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    osq, _ = ordinal_tables(empty, sizes)
    index = build_blocks(x, empty, sizes, empty)
    assert (index.blocks[10][0] == 1.0) == (dims > 1)
    work = work_arrays(index)
    none = np.empty(0, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    hd, hx, hp = np.empty(4), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int64)
    rowat, where = index.records[3], index.records[4]
    for _ in range(40):
        rows = np.flatnonzero(alive)
        me = int(rng.choice(rows))
        qm = x[me].copy()
        block_nearest(
            index.records, index.blocks, index.supers, osq, qm, none, none, where[me], 4, hd, hx, hp,
            work,
        )  # fmt: skip
        dist = ((x[rows] - qm) ** 2).sum(axis=1)
        bh = np.empty(4), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int64)
        nearest_and_farthest(dist, rows, len(rows), int(np.flatnonzero(rows == me)[0]), 4, *bh)
        assert sorted(rowat[hp].tolist()) == sorted(rows[bh[2]].tolist())
        gone = rng.choice(rows, 100, replace=False)
        alive[gone] = False
        block_remove(
            index.records,
            index.blocks,
            index.supers,
            gone,
            len(gone),
            np.empty(100, dtype=np.int64),
        )


def test_nearest_query_skips_blocks_without_a_candidate_and_keeps_ties() -> None:
    # block_nearest passes over the per-record heap step of a visited block none of whose
    # distances is at most the current k-1-th (counter[1]); a record at exactly that distance
    # must still be looked at (it enters by a smaller row). On an integer grid most distances
    # are tied: the answers equal the brute-force primitive's, and blocks were skipped.
    from microgui.core.methods.kernels import nearest_and_farthest, ordinal_tables
    from microgui.core.methods.spatial import block_nearest, build_blocks, work_arrays

    rng = np.random.default_rng(5)
    n = 20_000
    x = rng.integers(-4, 5, (n, 4)).astype(float)
    x[::7] = rng.normal(size=(len(x[::7]), 4)) * 3.0
    empty = np.empty((n, 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    osq, _ = ordinal_tables(empty, sizes)
    index = build_blocks(x, empty, sizes, empty)
    work = work_arrays(index)
    none = np.empty(0, dtype=np.int64)
    rowat, where = index.records[3], index.records[4]
    rows = np.arange(n)
    for kk in (1, 4, 9):
        hd, hx, hp = np.empty(kk), np.empty(kk, dtype=np.int64), np.empty(kk, dtype=np.int64)
        for me in rng.choice(n, 60, replace=False):
            qm = x[me].copy()
            block_nearest(
                index.records, index.blocks, index.supers, osq, qm, none, none, where[me], kk, hd,
                hx, hp, work,
            )  # fmt: skip
            dist = ((x - qm) ** 2).sum(axis=1)
            bh = np.empty(kk), np.empty(kk, dtype=np.int64), np.empty(kk, dtype=np.int64)
            nearest_and_farthest(dist, rows, n, int(me), kk, *bh)
            assert sorted(rowat[hp].tolist()) == sorted(bh[2].tolist())
    assert work[3][1] > 0


@pytest.mark.parametrize("case", ["grid 8", "normal 10", "mixed"])
def test_index_rebuilt_mid_run_gives_the_same_partition(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pruned run re-makes its blocks around the records left each time they halve
    # (rebuild_blocks, between batches; in a real run from 5,000 records left, here from 40 and
    # with small batches): the partition stays
    # the brute-force one, ties included, on wide tables (staged sums, 128-record blocks) and
    # narrow or mixed ones.
    from microgui.core.methods import spatial

    calls: list[int] = []
    original = spatial.rebuild_blocks

    def spy(index, sizes, block_size=spatial.BLOCK_SIZE):  # type: ignore[no-untyped-def]
        calls.append(int((index.records[4] >= 0).sum()))
        return original(index, sizes, block_size)

    monkeypatch.setattr(mdav_module, "_REBUILD_MIN", 40)
    monkeypatch.setattr(mdav_module, "_PRUNED_BATCH_WORK", 20_000)  # checked between batches
    monkeypatch.setattr(mdav_module, "rebuild_blocks", spy)
    rng = np.random.default_rng(8)
    n = 2_500
    if case == "grid 8":
        x = rng.integers(-2, 3, (n, 8)).astype(float)
        x[::5] = x[1::5]
        _same(x, 3)
    elif case == "normal 10":
        _same(rng.normal(size=(n, 10)), 5)
    else:
        _same_generic(
            rng.integers(-3, 4, (n, 7)).astype(float),
            rng.integers(0, 4, (n, 1)),
            [4],
            rng.integers(0, 3, (n, 1)),
            4,
        )
    assert len(calls) >= 4 and calls == sorted(calls, reverse=True)


def _farthest_by_pass(index, osq, pc, po, pn) -> int:  # type: ignore[no-untyped-def]
    """The remaining record farthest from the point, by a pass with the kernels' arithmetic:
    the largest distance, the smallest original row among equal ones (its position)."""
    from microgui.core.methods.kernels import mixed_distances_block

    xcol, ocol, ncol, rowat, _where, _posblock = index.records
    starts, counts = index.blocks[0], index.blocks[1]
    dist = np.empty(xcol.shape[1] if xcol.shape[0] else ocol.shape[1])
    alive = np.concatenate([np.arange(a, a + c) for a, c in zip(starts, counts, strict=True)])
    for a, c in zip(starts, counts, strict=True):
        mixed_distances_block(xcol, ocol, ncol, osq, a, a + c, pc, po, pn, dist)
    d = dist[alive]
    tied = alive[d == d.max()]
    return int(tied[np.argmin(rowat[tied])])


@pytest.mark.parametrize("case", ["grid 1", "grid 3", "far grid 3", "clusters 4", "mixed"])
def test_box_farthest_matches_the_pass(case: str) -> None:
    """The boxes' farthest query (issue 33 item 4: clustered data) finds the pass's record, ties
    by row included, before and after records leave; with 3+ columns the boxes are rotated
    (their margin is tested far from the origin), with categorical columns the bound takes
    ranks and codes."""
    from microgui.core.methods.kernels import ordinal_tables
    from microgui.core.methods.spatial import (
        block_farthest,
        block_remove,
        build_blocks,
        work_arrays,
    )

    rng = np.random.default_rng(5)
    n = 4_000
    kind, _, dims = case.rpartition(" ")
    ords = np.empty((n, 0), dtype=np.int64)
    noms = np.empty((n, 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    if case == "mixed":
        x = rng.integers(-2, 3, (n, 2)).astype(float)
        ords = rng.integers(0, 4, (n, 2))
        sizes = np.array([4, 4])
        noms = rng.integers(0, 3, (n, 1))
    elif kind == "clusters":
        centres = rng.normal(scale=6.0, size=(8, int(dims)))
        x = np.round(centres[rng.integers(0, 8, n)] + rng.normal(size=(n, int(dims))), 1)
    else:
        x = rng.integers(-3, 4, (n, int(dims))).astype(float)
        if kind == "far grid":
            x += 1e9
    osq, _ = ordinal_tables(ords, sizes)
    index = build_blocks(x, ords, sizes, noms)
    work = work_arrays(index)
    alive = np.ones(n, dtype=bool)
    where = index.records[4]
    for _ in range(30):
        rows = np.flatnonzero(alive)
        me = int(rng.choice(rows))
        pc, po, pn = x[me].copy(), ords[me].copy(), noms[me].copy()
        found, computed = block_farthest(
            index.records, index.blocks, index.supers, osq, pc, po, pn, work
        )
        assert found == _farthest_by_pass(index, osq, pc, po, pn)
        assert 0 < computed <= len(rows)
        gone = rng.choice(rows, 120, replace=False)
        alive[gone] = False
        block_remove(
            index.records, index.blocks, index.supers, gone, len(gone), np.empty(120, np.int64)
        )
    assert where[gone[0]] == -1


def test_the_farthest_query_takes_the_cheaper_search() -> None:
    """pruned_farthest measures both searches and then takes the one that computes fewer
    distances: the boxes on clustered data, the anchor walk on a standard normal cloud; the
    answer is the same either way."""
    from microgui.core.methods.kernels import ordinal_tables
    from microgui.core.methods.spatial import (
        anchor_farthest,
        build_blocks,
        make_anchor,
        pruned_farthest,
        set_anchor,
        work_arrays,
    )

    rng = np.random.default_rng(3)
    n, d = 20_000, 10
    centres = rng.normal(scale=4.0, size=(20, d))  # as the benchmark's clustered table
    data = {
        "clustered": centres[rng.integers(0, 20, n)] + rng.normal(size=(n, d)),
        "normal": rng.normal(size=(n, d)),
    }
    took = {}
    for name, x in data.items():
        x = (x - x.mean(0)) / x.std(0)
        none = np.empty((n, 0), dtype=np.int64)
        sizes = np.empty(0, dtype=np.int64)
        osq, _ = ordinal_tables(none, sizes)
        index = build_blocks(x, none, sizes, none)
        work = work_arrays(index)
        anchor = make_anchor(n, x, 0, 0)
        e = np.empty(0, dtype=np.int64)
        set_anchor(index.records, osq, anchor, x.mean(0), e, e)
        cost = np.zeros(3)
        # from records on the rim, as MDAV's r (the farthest from the average) is
        rim = np.argsort(-(x**2).sum(axis=1))[: n // 20]
        for me in rng.choice(rim, 40, replace=False):
            q = x[me].copy()
            s, _ = pruned_farthest(
                index.records, index.blocks, index.supers, anchor, osq, q, e, e, work, cost
            )
            assert s == anchor_farthest(index.records, osq, anchor, q, e, e)[0]
        assert cost[0] > 0 and cost[1] > 0  # both were measured
        took[name] = "boxes" if cost[1] < cost[0] else "walk"
    assert took == {"clustered": "boxes", "normal": "walk"}


# --------------------------------------------------------------------------------------------
# the adversarial review's cases (issue 17): each broke a first version of the anchor walk
# --------------------------------------------------------------------------------------------


def test_records_tied_in_the_last_bit_near_the_anchor() -> None:
    # 2,500 records within one ulp of 0 (their distances to the drifting average tie in the last
    # bit), 6,000 at -1 and 3,000 at +2: the walk's stop had its margin on a difference that
    # cancelled, and stopped before the tied record with the smallest row.
    ulp = 2.0**-53
    tied = 0.51 * ulp + np.arange(2_500) * (0.45 * ulp / 2_500)
    x = np.concatenate([tied, -np.ones(6_000), 2 * np.ones(3_000)])[:, None]
    _same(x, 500)
    nominal = np.zeros((len(x), 1), dtype=np.int64)
    _same_generic(x, None, None, nominal, 500)


@pytest.mark.parametrize("seed", range(12))
def test_a_record_almost_on_the_principal_axes(seed: int) -> None:
    # The part of a record off the filter's axes, sqrt(rho^2 - sum alpha^2), cancelled to 0 where
    # it was 1e-8 of rho; the filter then ruled out the true farthest record.
    rng = np.random.default_rng(seed)
    delta, w, u, nb = 1.5e-8, 1e-8, 1.01, 400
    f = rng.normal(size=(1_100, 3))
    f /= np.linalg.norm(f, axis=1)[:, None]
    f *= np.sqrt(1 + rng.uniform(0.05, 0.9, 1_100) * delta)[:, None]
    z = rng.normal(size=3)
    z *= np.sqrt(1 + delta) / np.linalg.norm(z)
    y = rng.normal(size=(1, 3))
    y /= np.linalg.norm(y, axis=1)[:, None]
    b = rng.uniform(-0.5, 0.5, size=(nb, 3))
    c = u / (2 * nb)
    x = np.vstack([
        np.c_[y, -w * np.ones(1)], np.c_[-y, -w * np.ones(1)],
        np.r_[z, 0.0][None], np.r_[-z, 0.0][None],
        np.c_[f, np.zeros(1_100)], np.c_[-f, np.zeros(1_100)],
        np.c_[b, -c * np.ones(nb)], np.c_[-b, -c * np.ones(nb)],
        np.array([[0, 0, 0, u + 2 * w]]),
    ])  # fmt: skip
    _same(x, 2)


def test_huge_values_and_non_finite_input() -> None:
    x = np.random.default_rng(0).normal(size=(100, 3)) * 1e155  # its covariance overflows
    _same(x, 3)
    x[5, 1] = np.nan
    for search in ("brute", "pruned"):
        with pytest.raises(InvalidParameter, match="column 1 holds NaN"):
            mdav(x, 3, search=search)


# --------------------------------------------------------------------------------------------
# CBFS on the same searches (its farthest-from-the-centroid and k-1 nearest queries)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("centroid", ["remaining", "fixed"])
def test_cbfs_pruned_is_cbfs(centroid: str) -> None:
    from microgui.core.methods.cbfs import cbfs_partition

    rng = np.random.default_rng(17)
    cases = [
        (rng.normal(size=(4_000, 5)), 3),
        (rng.integers(-2, 3, (3_000, 3)).astype(float), 4),  # ties everywhere
        (np.ones((700, 2)), 3),
        (rng.normal(size=(17, 2)), 5),  # leftovers join groups afterwards
        (np.exp(rng.normal(size=(3_000, 4)) * 1.5), 2),
    ]
    for x, k in cases:
        pruned = cbfs_partition(x, k, centroid=centroid, search="pruned")
        brute = cbfs_partition(x, k, centroid=centroid, search="brute")
        np.testing.assert_array_equal(pruned, brute)


@given(
    x=hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 120), st.integers(1, 3)),
        elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
    ),
    k=st.integers(2, 5),
    fixed=st.booleans(),
)
@HYPO
def test_cbfs_hypothesis_tie_ridden(x: np.ndarray, k: int, fixed: bool) -> None:
    from microgui.core.methods.cbfs import cbfs_partition

    if len(x) < k:
        return
    centroid = "fixed" if fixed else "remaining"
    np.testing.assert_array_equal(
        cbfs_partition(x, k, centroid=centroid, search="pruned"),
        cbfs_partition(x, k, centroid=centroid, search="brute"),
    )
    assert "search" in {p.name for p in get_method("cbfs").params}


# --------------------------------------------------------------------------------------------
# boxes along the principal axes (their bounds carry the rotation's rounding: a margin)
# --------------------------------------------------------------------------------------------


def test_rotated_boxes_are_used_and_orthonormal() -> None:
    from microgui.core.methods.spatial import build_blocks, principal_rotation

    rng = np.random.default_rng(3)
    x = rng.standard_normal((4_000, 5)) @ rng.standard_normal((5, 5))
    rot = principal_rotation(x)
    assert rot is not None
    np.testing.assert_allclose(rot.T @ rot, np.eye(5), atol=1e-13)
    # largest variance first
    var = (x @ rot).var(axis=0)
    assert (np.diff(var) <= 1e-9 * var[0]).all()
    empty = np.empty((len(x), 0), dtype=np.int64)
    index = build_blocks(x, empty, np.empty(0, dtype=np.int64), empty)
    assert index.blocks[10][0] == 1.0 and index.blocks[10][1] > 0.0
    assert principal_rotation(x[:, :1]) is None
    assert principal_rotation(np.full((50, 3), 1e200)) is None


@pytest.mark.parametrize("offset", [0.0, 1e6, 1e12])
def test_rotated_boxes_on_a_correlated_grid_far_from_the_origin(offset: float) -> None:
    # Integer grids sheared so that the principal axes are oblique: many exact ties between
    # records of different boxes; far from the origin the rotated coordinates lose most of
    # their digits, and the margin (relative to the records' length) must cover it.
    rng = np.random.default_rng(int(offset) % 97)
    g = rng.integers(0, 5, (6_000, 2)).astype(float)
    x = np.column_stack([g[:, 0], g[:, 0] + g[:, 1], g[:, 1] - g[:, 0]]) + offset
    _same(x, 3)
    _same(x, 5)


@pytest.mark.parametrize("seed", range(4))
def test_rotated_boxes_with_ties_in_the_last_bit(seed: int) -> None:
    # Clouds of records one ulp apart along an oblique line, with duplicates: the k-1th
    # distance ties across boxes whose rotated bounds are within rounding of it.
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((400, 4)) @ rng.standard_normal((4, 4))
    steps = rng.integers(0, 3, (len(base), 1)) * np.spacing(np.abs(base).max())
    x = np.vstack([base, base + steps, base[::-1] + steps, base])
    _same(x, 3)
    _same(x, 4)


# --------------------------------------------------------------------------------------------
# V-MDAV on the pruned searches: the same partition as its passes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.1, 1e9])
@pytest.mark.parametrize("case", ["gaussian", "grid", "duplicates", "one column", "clusters"])
def test_vmdav_pruned_is_vmdav(case: str, gamma: float) -> None:
    from microgui.core.methods.vmdav import vmdav_partition

    rng = np.random.default_rng(len(case))
    n = 4_000
    if case == "gaussian":
        x = rng.standard_normal((n, 6)) @ rng.standard_normal((6, 6))
    elif case == "grid":
        x = rng.integers(-2, 3, (n, 3)).astype(float)
    elif case == "duplicates":
        x = np.repeat(rng.standard_normal((n // 4, 4)), 4, axis=0)[rng.permutation(n)]
    elif case == "one column":
        x = rng.integers(0, 40, (n, 1)).astype(float)
    else:
        x = rng.standard_normal((20, 5))[rng.integers(0, 20, n)] * 4 + rng.standard_normal((n, 5))
    for k in (2, 3, 5):
        np.testing.assert_array_equal(
            vmdav_partition(x, k, gamma=gamma, search="pruned"),
            vmdav_partition(x, k, gamma=gamma, search="brute"),
        )


@given(
    x=hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 150), st.integers(1, 3)),
        elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
    ),
    k=st.integers(2, 5),
    gamma=st.sampled_from([0.0, 0.2, 0.5, 1.0, 1.1, 3.0]),
)
@HYPO
def test_vmdav_hypothesis_tie_ridden(x: np.ndarray, k: int, gamma: float) -> None:
    from microgui.core.methods.vmdav import vmdav_partition

    if len(x) < k:
        return
    np.testing.assert_array_equal(
        vmdav_partition(x, k, gamma=gamma, search="pruned"),
        vmdav_partition(x, k, gamma=gamma, search="brute"),
    )


def test_vmdav_search_parameter() -> None:
    from microgui.core.methods.vmdav import choose_search, vmdav_partition

    assert "search" in {p.name for p in get_method("vmdav").params}
    assert choose_search(10_000, 10) == "brute" and choose_search(100_000, 10) == "pruned"
    assert choose_search(100_000, 20) == "brute"
    with pytest.raises(InvalidParameter, match="search"):
        vmdav_partition(np.zeros((10, 2)), 3, search="fast")
    with pytest.raises(ValueError, match="finite"):  # as_matrix refuses it before any search
        vmdav_partition(np.array([[0.0], [np.nan], [1.0], [2.0]]), 2, search="pruned")
