"""Issue 33: the pruned MDAV's blocked layout and the report's IL bound hold no (n, d)
temporaries beyond their own arrays, measured with tracemalloc in proportion to the input
(never timed)."""

from __future__ import annotations

import tracemalloc
import weakref

import numpy as np
import pytest

from microgui.core.methods import bound
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods.spatial import build_blocks
from microgui.core.spare import droppable


def _peak(run: object) -> int:
    tracemalloc.start()
    try:
        run()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_blocked_layout_takes_about_its_own_arrays() -> None:
    """build_blocks keeps the records twice (as read and along the principal axes, column-major)
    plus four position arrays: 2.4x the input; its peak stays under 4.5x (measured 3.5x; the
    gathered copies, the stacked split and the squared rows made it 5.5x)."""
    x = np.random.default_rng(0).standard_normal((20_000, 10))
    none = np.empty((len(x), 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    build_blocks(x, none, sizes, none)  # the kernels loaded (their cache is not the layout's)
    peak = _peak(lambda: build_blocks(x, none, sizes, none))
    assert peak < 4.5 * x.nbytes, peak / x.nbytes


def test_the_release_check_of_the_bound_compares_column_by_column() -> None:
    """_rows_shared_by_k on a release of groups of k: the same answer as comparing whole rows,
    without the sorted copy and its comparison (2x the table more)."""
    rng = np.random.default_rng(1)
    n, d, k = 30_000, 8, 5
    labels = rng.permutation(np.arange(n) // k)
    z = rng.standard_normal((n // k, d))[labels]
    assert bound._rows_shared_by_k(z, labels, k)
    peak = _peak(lambda: bound._rows_shared_by_k(z, labels, k))
    assert peak < 0.8 * z.nbytes, peak / z.nbytes
    z2 = z.copy()
    z2[7, 3] += 1.0  # one record off its group's values: counted by rows, and below k
    assert not bound._rows_shared_by_k(z2, labels, k)


def test_the_attribute_bound_copies_one_column_at_a_time() -> None:
    """The report's per-attribute lower bound solves each column on its own copy, made when its
    turn comes: the copies of every column at once were the whole table again (80 MB at
    1,000,000 x 10, in the 1M command's peak: issue 33). Same value either way."""
    x = np.random.default_rng(0).normal(size=(200_000, 10))
    bound.univariate_optimum_sse(x[:1000, 0], 5)  # compiled before measuring
    tracemalloc.start()
    try:
        value = bound.attribute_bound_sse(x, 5, 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.8 * x.nbytes  # the old way: 1.53 x
    expected = sum(bound.univariate_optimum_sse(np.sort(x[:, j]), 5) for j in range(10))
    assert value == expected


def test_the_principal_bound_centres_spare_z_scores_in_their_own_buffer() -> None:
    """The principal-axis bound on a run's z-scores declared spare (:mod:`microgui.core.spare`)
    centres and projects them in their own buffer, then has them written again: no (n, d) array
    of its own (issue 33: 80 MB at the 1,000,000 x 10 command's peak). The same value, and the
    same z-scores after, bit for bit."""
    n, d, k = 100_000, 10, 50
    # no axis gets the nearest-neighbour bound here, as at 1,000,000 x 10 with k = 5 (its
    # query's distances and indices would be the peak, whoever holds the z-scores)
    assert bound.principal_axes_searched(n, d, k) == 0
    x = np.random.default_rng(2).normal(size=(n, d))
    kept = x.copy()
    expected = bound.principal_bound_sse(x, k, 1)  # also compiles before measuring
    rebuilt: list[int] = []

    def rebuild() -> None:
        rebuilt.append(1)
        x[...] = kept

    with droppable(x, rebuild):
        tracemalloc.start()
        try:
            value = bound.principal_bound_sse(x, k, 1)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < x.nbytes, peak / x.nbytes  # measured 0.66x; with its own centred copy 1.66x
    assert rebuilt == [1]
    assert value == expected
    assert np.array_equal(x, kept)


@pytest.mark.parametrize("search", ["pruned", "brute"])
def test_mdav_frees_its_arrays_before_lent_zscores_are_written_again(
    monkeypatch: pytest.MonkeyPatch, search: str
) -> None:
    """MDAV on z-scores lent out (:mod:`microgui.core.spare`) gives their pages back during its
    loop; they are written again only once its own arrays are freed, else both are held at once
    at the loop's end (the kernel's peak of the 1,000,000 x 10 command stayed where it was)."""
    x = np.random.default_rng(3).standard_normal((3_000, 4))
    kept = x.copy()
    expected = mdav_module.mdav(x, 3, search=search)
    own: list[weakref.ref[np.ndarray]] = []
    build_blocks_ = mdav_module.build_blocks
    piece_buffers = mdav_module.piece_buffers

    def blocks(*args: object) -> object:
        index = build_blocks_(*args)  # type: ignore[arg-type]
        own.append(weakref.ref(index.records[0]))  # the records in block order
        return index

    def pieces(*args: object) -> object:
        buffers = piece_buffers(*args)  # type: ignore[arg-type]
        own.append(weakref.ref(buffers[1]))
        return buffers

    monkeypatch.setattr(mdav_module, "build_blocks", blocks)
    monkeypatch.setattr(mdav_module, "piece_buffers", pieces)
    alive_at_rebuild: list[bool] = []

    def rebuild() -> None:
        alive_at_rebuild.append(any(ref() is not None for ref in own))
        x[...] = kept

    with droppable(x, rebuild):
        labels = mdav_module.mdav(x, 3, search=search)
    assert len(own) == 1
    assert alive_at_rebuild == [False]
    assert np.array_equal(labels, expected)
    assert np.array_equal(x, kept)
