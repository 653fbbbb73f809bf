"""Information loss (``002_f464918b99c38812.txt`` §III) and the k-anonymity level (``003`` §3.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics import group_sizes, information_loss, k_anonymity_level, sse, sst


def test_sse_sst_il_hand_computed() -> None:
    # Column 1: groups {0, 2} -> 1 and {4, 6} -> 5: SSE = 1+1+1+1 = 4; mean 3: SST = 9+1+1+9 = 20.
    # Column 2 is constant: it adds nothing to either sum. IL = 100 * 4 / 20 = 20 %.
    original = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0], [6.0, 1.0]])
    protected = np.array([[1.0, 1.0], [1.0, 1.0], [5.0, 1.0], [5.0, 1.0]])
    assert sse(original, protected) == pytest.approx(4.0)
    assert sst(original) == pytest.approx(20.0)
    assert information_loss(original, protected) == pytest.approx(20.0)


def test_information_loss_bounds() -> None:
    x = np.array([[0.0], [2.0], [4.0], [6.0]])
    assert information_loss(x, x) == 0.0
    # Everything in one group: SSE = SST, IL = 100 %.
    assert information_loss(x, np.full_like(x, 3.0)) == pytest.approx(100.0)
    # Nothing varies: nothing to lose.
    assert information_loss(np.ones((3, 2)), np.ones((3, 2))) == 0.0


def test_k_anonymity_level_hand_made() -> None:
    frame = pd.DataFrame(
        {
            "age": [30, 30, 40, 40, 40, 50, 50],
            "zip": ["A", "A", "B", "B", "B", "C", "C"],
            "salary": [1, 2, 3, 4, 5, 6, 7],
        }
    )
    assert k_anonymity_level(frame, ["age", "zip"]) == 2
    assert k_anonymity_level(frame, ["zip"]) == 2
    assert k_anonymity_level(frame, ["age", "zip", "salary"]) == 1
    assert k_anonymity_level(frame, []) == 7
    assert k_anonymity_level(frame.iloc[:0], ["age"]) == 0
    # Missing values count as one value.
    with_nan = pd.DataFrame({"a": [1.0, np.nan, np.nan, 1.0]})
    assert k_anonymity_level(with_nan, ["a"]) == 2
    # Floats are compared by value.
    assert k_anonymity_level(pd.DataFrame({"m": [0.1 + 0.2, 0.3]}), ["m"]) == 1


def test_group_sizes() -> None:
    np.testing.assert_array_equal(group_sizes(np.array([1, 0, 1, 2, 2, 2])), [1, 2, 3])
