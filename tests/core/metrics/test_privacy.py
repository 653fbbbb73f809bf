"""p-sensitivity, distinct l-diversity and t-closeness (``microgui.core.metrics.privacy``).

- the EMD formulas on hand-computed cases, among them Li, Li & Venkatasubramanian's ICDE 2007
  Example 3 (salaries 3k..11k): {3k, 4k, 5k} -> 0.375 and {6k, 8k, 11k} -> 0.167, and ARX's
  t = 0.3751 for the generalization of their Table 3 (README of shared/data/arx-small),
- the vectorized per-group EMD against the definition (hypothesis),
- p-sensitivity and distinct l-diversity on hand-made tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_sets import ARX_SMALL

from microgui.core.metrics import (
    distinct_l_diversity,
    emd_equal,
    emd_ordered,
    p_sensitivity,
    t_closeness,
)
from microgui.core.metrics.privacy import (
    distinct_by_group,
    emd_by_group,
    nominal_codes,
    p_sensitivity_by_attribute,
    rank_codes,
    t_closeness_by_attribute,
)
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec

SALARIES = [3, 4, 5, 6, 7, 8, 9, 10, 11]  # Li et al. 2007, Example 3 (in thousands)


def _definition_ordered(group: np.ndarray, table: np.ndarray) -> float:
    """EMD = (1/(m-1)) Σ_i |Σ_{j<=i} (p_j - q_j)| written out value by value (Li et al. §4.2)."""
    domain = sorted(set(table.tolist()))
    m = len(domain)
    if m == 1:
        return 0.0
    total, running = 0.0, 0.0
    for v in domain:
        running += np.mean(group == v) - np.mean(table == v)
        total += abs(running)
    return total / (m - 1)


# --------------------------------------------------------------------------------------------
# EMD: hand-computed cases
# --------------------------------------------------------------------------------------------


def test_li_et_al_example_3_ordered_distance() -> None:
    # Li et al. 2007 §4.2: P1 = {3k, 4k, 5k}: cumulative differences 2/9, 4/9, 6/9, 5/9, 4/9,
    # 3/9, 2/9, 1/9 sum to 3, over m - 1 = 8: 0.375. P2 = {6k, 8k, 11k}: 12/9 / 8 = 1/6.
    assert emd_ordered([3, 4, 5], SALARIES) == pytest.approx(0.375)
    assert emd_ordered([6, 8, 11], SALARIES) == pytest.approx(1 / 6)
    # Their Table 3's third class {7k, 9k, 10k}: 1+2+3+4+2+3+1+1 = 17 ninths, over 8.
    assert emd_ordered([7, 9, 10], SALARIES) == pytest.approx(17 / 72)
    # Their Table 4 (0.167-closeness): {3k, 5k, 9k} -> 1/6, {4k, 7k, 10k} -> 1/12.
    assert emd_ordered([3, 5, 9], SALARIES) == pytest.approx(1 / 6)
    assert emd_ordered([4, 7, 10], SALARIES) == pytest.approx(1 / 12)


def test_ordered_distance_small_hand_cases() -> None:
    # Two values, half each; a group of the first only: |1 - 1/2| over m - 1 = 1.
    assert emd_ordered([0], [0, 1]) == pytest.approx(0.5)
    # Ties in the table: Q = (1/2, 3/4, 1), a group of 1s: P = (1, 1, 1) -> (1/2 + 1/4) / 2.
    assert emd_ordered([1, 1], [1, 1, 2, 3]) == pytest.approx(0.375)
    # The extreme: all mass at one end of 2 equally likely values is EMD 1/2; of n values at the
    # lowest one, (1/(n-1)) Σ_{i<n} (1 - i/n) = 1/2 as well.
    assert emd_ordered([1], range(1, 11)) == pytest.approx(0.5)
    # The whole table, and a one-valued table.
    assert emd_ordered(SALARIES, SALARIES) == pytest.approx(0.0)
    assert emd_ordered([5, 5], [5, 5, 5]) == 0.0
    # Distances use ranks, not values: {1, 100} of {1, 2, 100} is {a, c} of {a, b, c}.
    assert emd_ordered([1, 100], [1, 2, 100]) == pytest.approx(emd_ordered([0, 2], [0, 1, 2]))
    # Numbers given as text are ordered as numbers (10 > 9).
    assert emd_ordered(["10", "11"], ["9", "10", "11"]) == pytest.approx(
        emd_ordered([10, 11], [9, 10, 11])
    )


def test_ordered_distance_with_a_declared_order() -> None:
    order = ("low", "mid", "high", "top")  # "top" is absent from the table: not in m
    table = ["low", "mid", "high", "high"]
    # ranks 0, 1, 2, 2 of m = 3; group {high, high}: P = (0, 0, 1), Q = (1/4, 1/2, 1).
    assert emd_ordered(["high", "high"], table, order) == pytest.approx((0.25 + 0.5) / 2)
    # Text order would put "high" first; the declared order decides.
    assert emd_ordered(["low"], table, order) == pytest.approx((0.75 + 0.5) / 2)


def test_equal_distance_hand_cases() -> None:
    assert emd_equal(["a", "a"], ["a", "a", "b", "b"]) == pytest.approx(0.5)
    assert emd_equal(["a", "b"], ["a", "a", "b", "b"]) == pytest.approx(0.0)
    # Li et al.'s Disease column, class {gastric ulcer, gastritis, stomach cancer} of the table
    # (1, 2, 2, 1, 2, 1 of 9): |p - q| = 2/9, 1/9, 1/9, 1/9, 2/9, 1/9 -> ½ · 8/9 = 4/9.
    disease = [
        "gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu",
        "bronchitis", "bronchitis", "pneumonia", "stomach cancer",
    ]  # fmt: skip
    assert emd_equal(disease[:3], disease) == pytest.approx(4 / 9)


def test_emd_rejects_foreign_and_missing_values() -> None:
    with pytest.raises(ValueError, match="not in the whole table"):
        emd_ordered([12], SALARIES)
    with pytest.raises(ValueError, match="not in the whole table"):
        emd_equal(["x"], ["a", "b"])
    with pytest.raises(ValueError, match="missing"):
        emd_ordered([1.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="not in the declared order"):
        rank_codes(["low", "odd"], ("low", "high"))
    with pytest.raises(ValueError, match="empty"):
        emd_equal([], ["a"])


# --------------------------------------------------------------------------------------------
# per-group EMD against the definition
# --------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.integers(0, 6), min_size=1, max_size=40),
    data=st.data(),
)
def test_emd_by_group_matches_the_definition(values: list[int], data: st.DataObject) -> None:
    table = np.array(values)
    raw = np.array(data.draw(st.lists(st.integers(0, 4), min_size=len(table), max_size=len(table))))
    _, labels = np.unique(raw, return_inverse=True)
    ranks, m = rank_codes(table)
    codes, mv = nominal_codes(table)
    ordered = emd_by_group(ranks, labels, m, ordered=True)
    equal = emd_by_group(codes, labels, mv, ordered=False)
    for g in range(int(labels.max()) + 1):
        group = table[labels == g]
        assert ordered[g] == pytest.approx(_definition_ordered(group, table), abs=1e-12)
        assert ordered[g] == pytest.approx(emd_ordered(group, table), abs=1e-12)
        assert equal[g] == pytest.approx(emd_equal(group, table), abs=1e-12)
        assert 0.0 <= ordered[g] <= 1.0 and 0.0 <= equal[g] <= 1.0


def test_emd_by_group_on_li_et_al_table_4() -> None:
    ranks, m = rank_codes([3, 4, 5, 6, 11, 8, 7, 9, 10])  # rows of test2.csv
    labels = np.array([0, 2, 0, 1, 1, 1, 2, 0, 2])  # Table 4: {3k,5k,9k}, {6k,11k,8k}, {4k,7k,10k}
    np.testing.assert_allclose(emd_by_group(ranks, labels, m, ordered=True), [1 / 6, 1 / 6, 1 / 12])


# --------------------------------------------------------------------------------------------
# t-closeness of a table
# --------------------------------------------------------------------------------------------


def _arx_table() -> pd.DataFrame:
    path = ARX_SMALL / "test2.csv"
    if not path.exists():
        pytest.skip("shared/data/arx-small is absent")
    return pd.read_csv(path, sep=";")


def _hierarchy(name: str) -> dict[str, list[str]]:
    rows = (ARX_SMALL / f"test2_hierarchy_{name}.csv").read_text().split("\n")
    return {r.split(";")[0].strip(): [c.strip() for c in r.split(";")] for r in rows if r.strip()}


def test_arx_generalization_of_li_et_al_table_3() -> None:
    # ARX's Example48: ZIPCode and Age generalized with the shipped hierarchies, Salary
    # sensitive with ordered-distance t-closeness at t = 0.3751. Li et al.'s Table 3 is ZIPCode at
    # level 2 (476**, 479**) and Age at level 1 ([20,30[, [30,40[, >=40): its classes hold
    # {3k,4k,5k}, {6k,11k,8k} and {7k,9k,10k}, and their largest EMD, 0.375, is within t.
    frame = _arx_table()
    zips, ages = _hierarchy("ZIPCode"), _hierarchy("Age")
    released = frame.assign(
        ZIPCode=frame["ZIPCode"].astype(str).map(lambda v: zips[v][2]),
        Age=frame["Age"].astype(str).map(lambda v: ages[v][1]),
    )
    qis = ["ZIPCode", "Age"]
    kinds = {"Salary": AttributeKind.CONTINUOUS, "Disease": AttributeKind.NOMINAL}
    t = t_closeness(released, qis, "Salary", kinds)
    assert t == pytest.approx(0.375)
    assert t <= 0.3751
    # With the equal distance, every class of Table 3 is 4/9 from the table's Disease.
    by_attr = t_closeness_by_attribute(released, qis, ["Salary", "Disease"], kinds)
    assert by_attr == pytest.approx({"Salary": 0.375, "Disease": 4 / 9})
    # Labels give the same answer as quasi-identifier names.
    labels = released.groupby(qis, sort=False).ngroup().to_numpy()
    assert t_closeness(released, labels, "Salary", kinds) == pytest.approx(0.375)
    # Nothing generalized: every class is one record, the worst at an end of the salary range.
    assert t_closeness(frame, qis, "Salary", kinds) == pytest.approx(emd_ordered([11], SALARIES))


def test_t_closeness_kinds_and_degenerate_groupings() -> None:
    frame = pd.DataFrame({"q": [1, 1, 2, 2], "grade": ["b", "b", "a", "c"], "level": [1, 1, 2, 3]})
    spec = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.ORDINAL, ("c", "b", "a"))
    # Ordinal with its declared order: ranks c=0, b=1, a=2; group q=1 holds b, b:
    # P = (0, 1, 1), Q = (1/4, 3/4, 1) -> (1/4 + 1/4) / 2.
    assert t_closeness(frame, ["q"], "grade", {"grade": spec}) == pytest.approx(0.25)
    # The same column read as nominal: ½ (|1 - 1/2| + 1/4 + 1/4).
    assert t_closeness(frame, ["q"], "grade", {"grade": "nominal"}) == pytest.approx(0.5)
    # The command line tags every confidential column continuous: text is then read as nominal
    # (not ranked in text order), numbers given as text as numbers.
    assert t_closeness(frame, ["q"], "grade", {"grade": "continuous"}) == pytest.approx(0.5)
    as_text = frame.assign(level=frame["level"].astype(str))
    assert t_closeness(as_text, ["q"], "level", {"level": "continuous"}) == pytest.approx(
        t_closeness(frame, ["q"], "level", {"level": "continuous"})
    )
    # No quasi-identifier: one group, the whole table: EMD 0.
    assert t_closeness(frame, [], ["grade", "level"], {"grade": spec, "level": "continuous"}) == (
        pytest.approx(0.0)
    )
    with pytest.raises(ValueError, match="no kind"):
        t_closeness(frame, ["q"], "level", {})


# --------------------------------------------------------------------------------------------
# p-sensitivity and distinct l-diversity
# --------------------------------------------------------------------------------------------


def test_p_sensitivity_and_distinct_l_diversity_hand_made() -> None:
    frame = pd.DataFrame(
        {
            "zip": ["A", "A", "A", "B", "B", "B"],
            "disease": ["flu", "flu", "cold", "flu", "hiv", "cold"],
            "income": [10, 10, 10, 20, 30, 40],
        }
    )
    # Group A: 2 diseases, 1 income; group B: 3 and 3.
    assert p_sensitivity_by_attribute(frame, ["zip"], ["disease", "income"]) == {
        "disease": 2,
        "income": 1,
    }
    assert p_sensitivity(frame, ["zip"], ["disease", "income"]) == 1
    assert p_sensitivity(frame, ["zip"], "disease") == 2
    assert distinct_l_diversity(frame, ["zip"], "disease") == 2
    # Joint values: group A holds (flu, 10) and (cold, 10): 2 combinations.
    assert distinct_l_diversity(frame, ["zip"], ["disease", "income"]) == 2
    # Labels instead of names (any integers; they are renumbered).
    assert p_sensitivity(frame, np.array([7, 7, 9, 9, 9, 9]), "income") == 1
    assert p_sensitivity(frame, np.array([7, 7, 9, 9, 9, 9]), "disease") == 1
    # A missing value counts as one value.
    with_nan = frame.assign(disease=["flu", None, None, "flu", "hiv", "cold"])
    assert p_sensitivity(with_nan, ["zip"], "disease") == 2
    assert p_sensitivity(frame.iloc[:0], ["zip"], "disease") == 0
    with pytest.raises(ValueError, match="labels for a table"):
        p_sensitivity(frame, np.array([0, 1]), "disease")


def test_distinct_by_group() -> None:
    np.testing.assert_array_equal(
        distinct_by_group([0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 2, 2]), [2, 1, 1]
    )
