"""Recommended measures per quasi-identifier kind (issue 29, item 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from microgui.core.metrics.evaluate import MEASURES, evaluate
from microgui.core.metrics.recommended import (
    CATEGORICAL_MEASURES,
    CONTINUOUS_MEASURES,
    recommended_measures,
    shown_first,
)
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

#: Keys other modules add to the report (issue 29 items 1 and 3): named before they exist.
_ADDED_ELSEWHERE = {"hellinger_mean", "homogeneous_percent"}


def test_continuous_keys_get_sse_sst_and_linkage() -> None:
    assert recommended_measures({"income": "continuous", "age": AttributeKind.CONTINUOUS}) == [
        "information_loss",
        "record_linkage",
    ]


def test_categorical_keys_get_changes_hellinger_homogeneity_and_individual_risk() -> None:
    got = recommended_measures({"sex": AttributeKind.NOMINAL, "education": "ordinal"})
    assert got == list(CATEGORICAL_MEASURES)
    assert "information_loss" not in got and "record_linkage" not in got


def test_mixed_keys_get_the_headline_first_then_both_lists() -> None:
    got = recommended_measures({"age": "continuous", "sex": "nominal"})
    assert got[0] == "information_loss_all_qi"
    assert set(CONTINUOUS_MEASURES) | set(CATEGORICAL_MEASURES) <= set(got)
    assert len(got) == len(set(got))


def test_no_key_no_recommendation() -> None:
    assert recommended_measures({}) == []
    assert recommended_measures({"x": "text"}) == []


def test_every_key_is_a_measure_of_evaluate_or_one_added_elsewhere() -> None:
    every = recommended_measures({"a": "continuous", "b": "nominal"})
    assert set(every) - set(MEASURES) <= _ADDED_ELSEWHERE


def test_shown_first_skips_absent_keys_and_keeps_the_rest_in_order() -> None:
    keys = ["il", "record_linkage", "dist_percent", "k_anonymity", "information_loss"]
    first, rest = shown_first(keys, recommended_measures({"a": "continuous", "b": "nominal"}))
    assert first == ["information_loss", "record_linkage", "dist_percent"]
    assert rest == ["il", "k_anonymity"]


def test_recommended_categorical_measures_are_computed_on_a_categorical_release() -> None:
    """The keys evaluate already has are numbers on a small categorical release (so showing
    them first shows something)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["f", "m"], 60),
            "region": rng.choice(["n", "s", "e", "w"], 60),
            "income": rng.choice(["lo", "hi"], 60),
        }
    )
    roles = RoleMap.from_dict(
        {
            "sex": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "region": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "income": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL),
        }
    )
    dataset = Dataset.from_frame(frame, roles)
    released = frame.copy()
    released.loc[:9, "region"] = "n"
    measures = evaluate(dataset, released)
    kinds = {c: roles[c].kind for c in roles.quasi_identifiers}
    first, _ = shown_first(
        [k for k, v in measures.items() if v is not None], recommended_measures(kinds)
    )
    assert "dist_percent" in first and "reidentification_risk_mean" in first
    assert measures["dist_percent"] > 0
