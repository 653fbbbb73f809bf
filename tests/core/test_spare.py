"""Arrays a run lends out while nothing reads them (:mod:`microgui.core.spare`): given back or
used as scratch inside the block, written again, the same bits, on leaving it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from microgui.core.spare import borrowed, droppable, dropped

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise: Linux only")


def _spare_array() -> tuple[np.ndarray, np.ndarray, list[int]]:
    """A 4 MB array, its expected contents and a count of its rebuilds."""
    expected = np.random.default_rng(0).standard_normal((50_000, 10))
    array = expected.copy()
    return array, expected, []


def _rebuild(array: np.ndarray, expected: np.ndarray, calls: list[int]) -> None:
    calls.append(1)
    array[...] = expected


@linux
def test_dropped_gives_back_the_pages_of_a_spare_array_and_rebuilds_it() -> None:
    array, expected, calls = _spare_array()
    with droppable(array, lambda: _rebuild(array, expected, calls)):
        with dropped(array) as gone:
            assert gone
            # a page given back reads as zeros (it holds no memory until written)
            assert not array[1000:-1000].any()
        assert calls == [1]
        assert np.array_equal(array, expected)


def test_dropped_and_borrowed_leave_an_array_not_declared_spare_alone() -> None:
    array, expected, calls = _spare_array()
    other = array.copy()
    with droppable(other, lambda: _rebuild(other, expected, calls)):
        with dropped(array) as gone, borrowed(array) as mine:
            assert not gone and not mine
            assert np.array_equal(array, expected)
    assert calls == []
    with borrowed(array) as mine:  # outside any declaration
        assert not mine


def test_a_view_of_part_of_a_spare_array_is_not_lent() -> None:
    array, expected, calls = _spare_array()
    with droppable(array, lambda: _rebuild(array, expected, calls)):
        with borrowed(array[1:]) as mine, borrowed(array[:, :5]) as mine_too:
            assert not mine and not mine_too
        with borrowed(np.asarray(array, dtype=np.float64)) as whole:  # the same buffer
            assert whole
    assert calls == [1]


def test_a_borrowed_array_is_rebuilt_when_the_block_raises_and_lent_once_at_a_time() -> None:
    array, expected, calls = _spare_array()
    with droppable(array, lambda: _rebuild(array, expected, calls)):
        with pytest.raises(KeyboardInterrupt):
            with borrowed(array) as mine:
                assert mine
                array[:] = -1.0  # scratch
                with borrowed(array) as again, dropped(array) as gone:
                    assert not again and not gone  # already lent: nothing nested
                raise KeyboardInterrupt
        assert calls == [1]
        assert np.array_equal(array, expected)
        with borrowed(array) as mine:  # lent again once returned
            assert mine
    assert len(calls) == 2


def test_only_an_array_owning_a_writable_contiguous_buffer_is_declared() -> None:
    array, expected, calls = _spare_array()
    for candidate in (array[::2], np.asfortranarray(array), array.view()):
        with droppable(candidate, lambda: calls.append(1)), borrowed(candidate) as mine:
            assert not mine
    frozen = array.copy()
    frozen.flags.writeable = False
    with droppable(frozen, lambda: calls.append(1)), borrowed(frozen) as mine:
        assert not mine
    assert calls == []
