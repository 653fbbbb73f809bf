"""The ``missing=`` rule of the low-level group helpers (k-anonymity level, re-identification
risk, sample uniques, p-sensitivity, distinct l-diversity, t-closeness): a blank key value as a
category of its own (the default) or as a wildcard matching any value (sdcMicro's
``freqCalc``), on a table counted by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import ReleaseCheck
from microgui.core.metrics import k_anonymity_level
from microgui.core.metrics.privacy import (
    distinct_l_diversity,
    p_sensitivity,
    t_closeness,
    t_closeness_by_attribute,
)
from microgui.core.metrics.risk import reidentification_risk, sample_uniques
from microgui.core.table.roles import AttributeKind, RoleMap

KEYS = ["a", "b"]


def _table() -> pd.DataFrame:
    """Keys a, b (row 4 has a blank a, row 5 a blank b) and a confidential s.

    category rule, classes: (x,1) {0,1}; (x,2) {2}; (y,2) {3}; (-,2) {4}; (y,-) {5}
    any rule, records compatible with each record (agree where both have a value):
      0 (x,1): 0 1          -> 2      3 (y,2): 3 4 5      -> 3
      1 (x,1): 0 1          -> 2      4 (-,2): 2 3 4 5    -> 4
      2 (x,2): 2 4          -> 2      5 (y,-): 3 4 5      -> 3
    """
    return pd.DataFrame(
        {
            "a": ["x", "x", "x", "y", None, "y"],
            "b": [1.0, 1.0, 2.0, 2.0, 2.0, np.nan],
            "s": ["p", "q", "p", "q", "r", "p"],
        }
    )


def test_k_anonymity_level_both_rules() -> None:
    frame = _table()
    assert k_anonymity_level(frame, KEYS) == 1  # the default: a blank is a category
    assert k_anonymity_level(frame, KEYS, missing="category") == 1
    assert k_anonymity_level(frame, KEYS, missing="any") == 2


def test_reidentification_risk_both_rules() -> None:
    frame = _table()
    worst, mean = reidentification_risk(frame, KEYS)
    assert worst == 100.0 and mean == pytest.approx((50 + 50 + 4 * 100) / 6)
    worst, mean = reidentification_risk(frame, KEYS, missing="any")
    assert worst == 50.0
    assert mean == pytest.approx((100 / 2 * 3 + 100 / 3 + 100 / 4 + 100 / 3) / 6)


def test_sample_uniques_both_rules() -> None:
    frame = _table()
    assert sample_uniques(frame, KEYS) == 4  # rows 2 to 5 are alone in their class
    assert sample_uniques(frame, KEYS, missing="any") == 0


def test_p_sensitivity_and_distinct_l_diversity_both_rules() -> None:
    """any: the class of each distinct combination holds its compatible records:
    (x,1) {p,q}; (x,2) rows 2,4 {p,r}; (y,2) rows 3,4,5 {q,r,p}; (-,2) rows 2-5; (y,-) rows 3-5."""
    frame = _table()
    assert p_sensitivity(frame, KEYS, "s") == 1
    assert distinct_l_diversity(frame, KEYS, "s") == 1
    assert p_sensitivity(frame, KEYS, "s", missing="any") == 2
    assert distinct_l_diversity(frame, KEYS, "s", missing="any") == 2


def test_t_closeness_both_rules() -> None:
    """Whole table: p 1/2, q 1/3, r 1/6 (equal distance, ½Σ|p−q|). category: the class {r}
    of (-,2) is ½(1/2 + 1/3 + 5/6) = 5/6 away; any: the worst is (x,2) {p, r}, ½(0 + 1/3 + 1/3)."""
    frame = _table()
    kinds = {"s": AttributeKind.NOMINAL}
    assert t_closeness(frame, KEYS, "s", kinds) == pytest.approx(5 / 6)
    assert t_closeness(frame, KEYS, "s", kinds, missing="any") == pytest.approx(1 / 3)
    by = t_closeness_by_attribute(frame, KEYS, ["s"], kinds, missing="any")
    assert by == {"s": pytest.approx(1 / 3)}


def test_labels_are_groups_as_given_under_either_rule() -> None:
    frame = _table()
    labels = np.array([0, 0, 0, 1, 1, 1])
    assert p_sensitivity(frame, labels, "s") == p_sensitivity(frame, labels, "s", missing="any")


def test_without_a_blank_both_rules_agree() -> None:
    frame = _table().dropna().reset_index(drop=True)
    for rule in ("category", "any"):
        assert k_anonymity_level(frame, KEYS, missing=rule) == 1
        assert sample_uniques(frame, KEYS, missing=rule) == 2
        assert p_sensitivity(frame, KEYS, "s", missing=rule) == 1


def test_an_unknown_rule_is_refused() -> None:
    frame = _table()
    with pytest.raises(InvalidParameter, match="missing='wildcard'"):
        k_anonymity_level(frame, KEYS, missing="wildcard")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        sample_uniques(frame, KEYS, missing="NA")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        p_sensitivity(frame, KEYS, "s", missing="")  # type: ignore[arg-type]


def test_a_methods_promise_is_measured_under_the_callers_rule() -> None:
    """A plan with a local suppression checks a step's p-sensitivity with blanks matching any
    value (:func:`microgui.core.runs.plan.plan_problems` passes the rule)."""
    frame = _table()
    roles = RoleMap.from_json(
        {
            "a": {"role": "quasi-identifier", "kind": "nominal"},
            "b": {"role": "quasi-identifier", "kind": "continuous"},
            "s": {"role": "confidential", "kind": "nominal"},
        }
    )
    check = ReleaseCheck("p-sensitive", "p")
    assert check.measure(frame, KEYS, ["s"], roles, {"p": 2}) == (2.0, 1.0, False)
    assert check.measure(frame, KEYS, ["s"], roles, {"p": 2}, missing="any") == (2.0, 2.0, True)
