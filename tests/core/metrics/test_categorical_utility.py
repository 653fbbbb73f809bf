"""Distributions, cross-tabulations and the association matrix of a release
(:mod:`microgui.core.metrics.categorical_utility`), checked by hand on small tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.categorical_utility import (
    OTHER_LABEL,
    association_matrix,
    correlation_ratio,
    cramers_v,
    crosstab,
    distribution,
    distributions,
    hellinger,
    released_numbers,
    total_variation,
    utility_summary,
)
from microgui.core.metrics.evaluate import MEASURES
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = AttributeRole.QUASI_IDENTIFIER


def _roles() -> RoleMap:
    return RoleMap.from_dict(
        {
            "sex": ColumnSpec(QI, AttributeKind.NOMINAL),
            "age": ColumnSpec(QI, AttributeKind.CONTINUOUS),
            "edu": ColumnSpec(QI, AttributeKind.NOMINAL),
            "pay": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL),
            "income": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS),
        }
    )


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    original = pd.DataFrame(
        {
            "sex": ["F", "F", "M", "M", "M", "F", "M", "F"],
            "age": [20, 30, 40, 50, 60, 25, 35, 45],
            "edu": ["a", "b", "a", "c", "c", "b", "a", "c"],
            "pay": ["lo", "lo", "hi", "hi", "hi", "lo", "lo", "hi"],
            "income": [10.0, 20, 30, 40, 50, 15, 35, 45],
        }
    )
    released = original.copy()
    released["sex"] = ["F", "F", "M", "M", "F", "F", "M", "F"]  # one record moved
    released["age"] = [25.0, 25, 45, 45, 60, 25, 35, 45]
    return original, released


def test_hellinger_and_total_variation_by_hand() -> None:
    # p = (1/2, 1/2), q = (1/4, 3/4): BC = sqrt(1/8) + sqrt(3/8)
    bc = math.sqrt(1 / 8) + math.sqrt(3 / 8)
    assert hellinger([2, 2], [1, 3]) == pytest.approx(math.sqrt(1 - bc))
    assert total_variation([2, 2], [1, 3]) == pytest.approx(0.25)
    assert hellinger([5, 0], [0, 5]) == pytest.approx(1.0)
    assert total_variation([5, 0], [0, 5]) == pytest.approx(1.0)
    assert hellinger([3, 1], [6, 2]) == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(hellinger([0, 0], [1, 1]))
    with pytest.raises(InvalidParameter):
        hellinger([1, 2], [1, 2, 3])


def test_cramers_v_is_bias_uncorrected_chi2_formula() -> None:
    a = ["x"] * 10 + ["y"] * 12
    b = ["u"] * 8 + ["v"] * 2 + ["u"] * 3 + ["v"] * 9
    table = np.array([[8, 2], [3, 9]], dtype=float)
    expected = np.outer(table.sum(1), table.sum(0)) / table.sum()
    chi2 = ((table - expected) ** 2 / expected).sum()  # no Yates correction
    assert cramers_v(a, b) == pytest.approx(math.sqrt(chi2 / table.sum()))
    assert cramers_v(a, a) == pytest.approx(1.0)
    assert math.isnan(cramers_v(["x"] * 5, ["u", "v", "u", "v", "u"]))  # one row: no V
    # missing cells are left out
    assert cramers_v([*a, None], [*b, "u"]) == pytest.approx(cramers_v(a, b))


def test_correlation_ratio_by_hand() -> None:
    codes = np.array([0, 0, 1, 1])
    x = np.array([1.0, 3.0, 5.0, 7.0])
    # means 2 and 6 around 4: SSB = 2*4 + 2*4 = 16, SST = 9+1+1+9 = 20
    assert correlation_ratio(codes, x) == pytest.approx(math.sqrt(16 / 20))
    assert math.isnan(correlation_ratio(codes, np.ones(4)))


def test_distribution_of_categories_counts_and_other_values() -> None:
    original = pd.Series(["a", "b", "b", "c", None], name="edu")
    released = pd.Series(["a", "b", "b*", "c", "c"], name="edu")  # b* is a generalization
    d = distribution(original, released, numeric=False)
    assert d.labels == ("a", "b", "c", OTHER_LABEL, "(missing)")
    assert d.original.tolist() == [1, 2, 1, 0, 1]
    assert d.released.tolist() == [1, 1, 2, 1, 0]
    assert d.total_variation == pytest.approx(0.5 * (0 + 1 + 1 + 1 + 1) / 5)
    assert d.hellinger == pytest.approx(hellinger(d.original, d.released))
    assert (d.missing_original, d.missing_released, d.other_released) == (1, 0, 1)


def test_distribution_of_numbers_same_bins_and_ranges_spread() -> None:
    original = pd.Series([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], name="age")
    released = pd.Series(["[0, 4)", "2", "2", "3", "4", "5", "6", "7", "8", "9", "x"], name="age")
    d = distribution(original, released, numeric=True)
    assert d.edges is not None
    nb = len(d.edges) - 1
    assert d.original[:nb].sum() == 11
    # the released range and ten points less the one text: 10 records in bins, 1 "other"
    assert d.released[:nb].sum() == pytest.approx(10.0)
    assert d.labels[-1] == OTHER_LABEL and d.released[-1] == 1
    # ranges by their midpoint elsewhere
    mid = released_numbers(original, released)
    assert mid[0] == 2.0 and mid[1] == 2.0 and math.isnan(mid[-1])


def test_identical_release_has_zero_distances_and_no_change() -> None:
    original, _ = _tables()
    s = utility_summary(original, original.copy(), _roles())
    assert all(d.hellinger == pytest.approx(0, abs=1e-9) for d in s.distributions.values())
    m = s.measures()
    assert m["hellinger_max"] == pytest.approx(0, abs=1e-9)
    assert m["association_change_max"] == pytest.approx(0, abs=1e-12)
    assert set(m) <= set(MEASURES)  # registered with label, unit, direction


def test_association_matrix_picks_measure_by_kind() -> None:
    original, released = _tables()
    m = association_matrix(original, released, _roles())
    assert m.columns == ("sex", "age", "edu", "pay", "income")
    i = {c: k for k, c in enumerate(m.columns)}
    assert m.measures[i["sex"]][i["edu"]] == "cramers_v"
    assert m.measures[i["age"]][i["income"]] == "pearson"
    assert m.measures[i["sex"]][i["age"]] == "eta"
    assert m.original[i["age"], i["income"]] == pytest.approx(
        np.corrcoef(original.age, original.income)[0, 1]
    )
    assert m.released[i["sex"], i["pay"]] == pytest.approx(cramers_v(released.sex, released.pay))
    codes = (original.sex == "M").to_numpy(int)
    assert m.original[i["sex"], i["income"]] == pytest.approx(
        correlation_ratio(codes, original.income.to_numpy(float))
    )
    d = np.abs(m.difference[np.triu_indices(5, 1)])
    assert m.max_abs_difference == pytest.approx(np.nanmax(d))
    assert m.mean_abs_difference == pytest.approx(np.nanmean(d))


def test_listwise_deletion_in_associations() -> None:
    original, released = _tables()
    released.loc[2, "edu"] = None
    m = association_matrix(original, released, _roles())
    assert (m.n_records, m.dropped_rows) == (7, 1)
    keep = np.arange(8) != 2
    i = {c: k for k, c in enumerate(m.columns)}
    assert m.original[i["age"], i["income"]] == pytest.approx(
        np.corrcoef(original.age[keep], original.income[keep])[0, 1]
    )


def test_crosstab_before_after_by_hand() -> None:
    original, released = _tables()
    x = crosstab(original, released, _roles(), "sex", "pay")
    assert x.row_labels == ("F", "M") and x.column_labels == ("hi", "lo")
    assert x.original.tolist() == [[1, 3], [3, 1]]
    assert x.released.tolist() == [[2, 3], [2, 1]]
    assert x.cramers_v_original == pytest.approx(0.5)
    assert x.cramers_v_change == pytest.approx(x.cramers_v_released - 0.5)
    with pytest.raises(InvalidParameter, match="no column"):
        crosstab(original, released, _roles(), "sex", "nope")
    with pytest.raises(InvalidParameter, match="two different"):
        crosstab(original, released, _roles(), "sex", "sex")


def test_summaries_hold_no_category_label() -> None:
    original, released = _tables()
    original["edu"] = ["SECRET-a", "SECRET-b", "SECRET-a", "SECRET-c"] * 2
    released["edu"] = original["edu"]
    roles = _roles()
    text = json.dumps(
        [
            {c: d.summary() for c, d in distributions(original, released, roles).items()},
            association_matrix(original, released, roles).summary(),
            crosstab(original, released, roles, "edu", "pay").summary(),
        ]
    )
    for value in ("SECRET", '"lo"', '"hi"', '"F"', '"M"'):
        assert value not in text


def test_an_ordinal_attribute_keeps_its_order_not_the_alphabet() -> None:
    """Issue 30 (29's views): the Utility view's bars and cross-tabulations of an ordinal
    follow its order (``ColumnSpec.order``), as a statistician reads them; a nominal one and an
    ordinal without an order stay alphabetical; categories the order lacks come after it."""
    frame = pd.DataFrame(
        {
            "grade": ["low", "high", "medium", "low", "high", "extra"],
            "city": ["b", "a", "c", "a", "b", "c"],
        }
    )
    released = frame.copy()
    roles = RoleMap.from_dict(
        {
            "grade": ColumnSpec(
                AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, ("low", "medium", "high")
            ),
            "city": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
        }
    )
    dists = distributions(frame, released, roles)
    assert dists["grade"].labels == ("low", "medium", "high", "extra")
    assert list(dists["grade"].original) == [2, 1, 2, 1]
    assert dists["city"].labels == ("a", "b", "c")
    assert utility_summary(frame, released, roles).distributions["grade"].labels == (
        "low",
        "medium",
        "high",
        "extra",
    )
    unordered = RoleMap.from_dict(
        {"grade": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL)}
    )
    assert distributions(frame, released, unordered)["grade"].labels == (
        "extra",
        "high",
        "low",
        "medium",
    )
