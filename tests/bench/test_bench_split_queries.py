"""The probe of splitting one MDAV query over two threads (microgui.bench.split_queries)."""

from __future__ import annotations

import numpy as np

from microgui.bench.data import correlated_data
from microgui.bench.split_queries import barrier_ns, knn_split, nearest_split
from microgui.core.methods.kernels import load_mixed_point, ordinal_tables
from microgui.core.methods.spatial import block_nearest, build_blocks, work_arrays
from microgui.core.methods.threads import max_threads


def test_split_halves_merge_to_the_serial_nearest() -> None:
    # Both ways of splitting with the final k-1-th distance as bound, and the lock-step halves
    # sharing their bounds: the k-1 smallest (distance, row) pairs of the two halves are
    # block_nearest's (the probe counts misses).
    us, counts, wrong = knn_split(n=3_000, queries=200, repeats=1)
    assert wrong == 0
    assert us.shape == (200, 6) and counts.shape == (200, 4)
    # a half never computes more than the whole search with the final bound... and the shared
    # bound prunes at least as much as each half's own
    assert (counts[:, 1] <= counts[:, 0]).all()
    assert counts[:, 3].sum() <= counts[:, 2].sum()


def test_one_part_without_bound_is_block_nearest() -> None:
    n = 2_000
    x = correlated_data(n, 6).continuous
    x[::7] = x[1]  # duplicates: ties settled by row
    empty = np.empty((n, 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    osq, _ = ordinal_tables(empty, sizes)
    index = build_blocks(x, empty, sizes, empty, block_size=16)
    work = work_arrays(index)
    xcol, ocol, ncol = index.records[:3]
    pc, po, pn = np.empty(6), np.empty(0, np.int64), np.empty(0, np.int64)
    for p in range(0, n, 97):
        load_mixed_point(xcol, ocol, ncol, p, pc, po, pn)
        hd, hx, hp = np.empty(4), np.empty(4, np.int64), np.empty(4, np.int64)
        block_nearest(index.records, index.blocks, index.supers, osq, pc, po, pn, p, 4, hd, hx,
                      hp, work)  # fmt: skip
        gd, gx, gp = np.empty(4), np.empty(4, np.int64), np.empty(4, np.int64)
        size, done = nearest_split(
            index.records, index.blocks, index.supers, osq, pc, po, pn, p, 4, gd, gx, gp, work,
            0, 1, False, np.inf,
        )  # fmt: skip
        assert size == 4 and done > 0
        assert sorted(gx) == sorted(hx)


def test_barrier_crossings_are_timed() -> None:
    ns = barrier_ns(rounds=2_000)
    if max_threads() < 2:
        assert ns.size == 0
    else:
        assert ns.shape == (2_000,) and (ns >= 0).all()
