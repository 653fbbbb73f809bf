"""Record linkage (distance-based and probabilistic) after local suppression: a suppressed
(missing) key cell matches any value, the rule of k-anonymity and of sdcMicro (issue 31). Before,
a blank continuous or ordinal cell made the record's distances NaN (never linked: the risk
understated); a blank nominal cell was a category of its own, which adds the same distance to
every original (same nearest ones) and is now measured on the present keys alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics.evaluate import evaluate
from microgui.core.metrics.linkage import comparison_levels, prl_details
from microgui.core.metrics.risk import missing_patterns, record_linkage
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

NAN = np.nan


def test_a_missing_coordinate_matches_any_value_by_hand() -> None:
    x = np.array([[0.0, 0.0], [0.0, 3.0], [4.0, 0.0]])
    # record 0's second coordinate blanked: on the first alone originals 0 and 1 tie (1/2)
    y = np.array([[0.0, NAN], [0.0, 3.0], [4.0, 0.0]])
    assert record_linkage(x, y) == pytest.approx(100 * 2.5 / 3)
    # both records of the tie blanked alike: each a draw among two
    y2 = np.array([[0.0, NAN], [0.0, NAN], [4.0, 0.0]])
    assert record_linkage(x, y2) == pytest.approx(100 * 2 / 3)
    # every coordinate blanked: a draw among all three originals
    y3 = np.array([[NAN, NAN], [0.0, 3.0], [4.0, 0.0]])
    assert record_linkage(x, y3) == pytest.approx(100 * (1 / 3 + 2) / 3)
    # a blank never makes a record farther: without the blank it is found exactly
    assert record_linkage(x, x) == pytest.approx(100.0)


def test_missing_patterns_group_rows_by_blanks() -> None:
    p = np.array([[1.0, NAN], [2.0, 3.0], [NAN, NAN], [5.0, NAN]])
    groups = missing_patterns(p)
    assert [r.tolist() for r, _ in groups] == [[1], [0, 3], [2]]  # complete rows first
    assert [c.tolist() for _, c in groups] == [[0, 1], [0], []]


def test_random_blanks_agree_with_brute_force() -> None:
    rng = np.random.default_rng(7)
    for trial in range(20):
        n, d = int(rng.integers(5, 60)), int(rng.integers(1, 4))
        x = rng.integers(0, 3, size=(n, d)).astype(float)  # many ties
        y = x + rng.normal(scale=0.3, size=(n, d)) * rng.integers(0, 2, size=(n, 1))
        y[rng.random((n, d)) < 0.3] = NAN
        credit = 0.0
        for i in range(n):
            present = ~np.isnan(y[i])
            dist = np.sqrt(((x[:, present] - y[i, present]) ** 2).sum(axis=1))
            near = dist.min()
            tied = dist <= near + 1e-9 * max(near, 1.0)
            credit += tied[i] / tied.sum()
        assert record_linkage(x, y) == pytest.approx(100 * credit / n), trial


def test_probabilistic_levels_agree_on_a_blank() -> None:
    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    y = np.array([[NAN, 10.0], [2.0, NAN], [1.0, 30.0]])
    levels, _ = comparison_levels(
        x, y, np.array([0, 1, 2]), np.array([2, 0, 2]), categorical=[True, False]
    )
    assert levels[0, 0] == 0 and levels[1, 1] == 0  # blank: agree with any value
    assert levels[2, 0] == 1  # 1 vs 3: disagree
    result = prl_details(x, y, categorical=[True, False])  # no NaN error, a rate in [0, 100]
    assert 0.0 <= result.rate <= 100.0


def test_evaluate_counts_a_suppressed_cell_as_matching_any_value() -> None:
    """Three nominal keys; one record's region blanked: it ties with the two originals that
    share its other keys (credit 1/2), the other five link exactly."""
    frame = pd.DataFrame(
        {
            "sex": ["f", "f", "m", "m", "f", "m"],
            "region": ["n", "s", "n", "s", "e", "e"],
            "job": ["a", "a", "b", "b", "c", "c"],
        }
    )
    nominal = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
    ds = Dataset.from_frame(frame, RoleMap.from_dict(dict.fromkeys(frame.columns, nominal)))
    released = frame.copy()
    released.loc[0, "region"] = None  # f, ?, a: originals 0 (f n a) and 1 (f s a) tie
    m = evaluate(ds, released)
    assert m["record_linkage"] == pytest.approx(100 * (5 + 0.5) / 6)
    assert m["probabilistic_record_linkage"] is not None


def test_tree_and_scan_give_the_same_linkage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patterns of many records are searched with a k-d tree, of few by a scan: same figure."""
    from microgui.core.metrics import risk

    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, size=(900, 3)).astype(float)
    y = x + rng.normal(scale=0.2, size=x.shape)
    y[rng.random(900) < 0.4, 1] = NAN  # two patterns of hundreds of records
    tree = record_linkage(x, y)
    monkeypatch.setattr(risk, "BRUTE_FORCE_POINTS", 10**9)
    assert record_linkage(x, y) == pytest.approx(tree)
    monkeypatch.setattr(risk, "BRUTE_FORCE_POINTS", 0)
    assert record_linkage(x, y) == pytest.approx(tree)
