"""Attribute disclosure per confidential attribute and the release verdict (issue 29).

Hand tables: the homogeneity attack of Machanavajjhala et al. (2007) §3.1 is a class whose
sensitive attribute takes one value; distinct / entropy l-diversity as in their Def. 3.2 / 4.1.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics import k_anonymity_level, privacy
from microgui.core.metrics.disclosure import (
    Verdict,
    attribute_disclosure,
    percent_text,
    release_verdict,
)
from microgui.core.table.roles import AttributeKind


def _table() -> pd.DataFrame:
    # classes on (zip, age): A/30 -> 3 records all "flu" (homogeneous); B/40 -> flu, cold, cold;
    # C/50 -> 2 records cancer, cancer (homogeneous)
    return pd.DataFrame(
        {
            "zip": ["A", "A", "A", "B", "B", "B", "C", "C"],
            "age": [30, 30, 30, 40, 40, 40, 50, 50],
            "disease": ["flu", "flu", "flu", "flu", "cold", "cold", "cancer", "cancer"],
            "income": [1, 2, 3, 4, 4, 5, 6, 7],
        }
    )


def test_homogeneous_classes_are_counted() -> None:
    out = attribute_disclosure(_table(), ["zip", "age"], ["disease"])["disease"]
    assert out["n_groups"] == 3
    assert out["homogeneous_groups"] == 2
    assert out["homogeneous_records"] == 5
    assert out["homogeneous_percent"] == pytest.approx(100 * 5 / 8)
    assert out["distinct_l_diversity"] == 1
    assert out["entropy_l_diversity"] == pytest.approx(1.0)
    # the EMD of privacy.t_closeness, unchanged (nominal: equal distance)
    expected = privacy.t_closeness(_table(), ["zip", "age"], ["disease"], {"disease": "nominal"})
    got = attribute_disclosure(
        _table(), ["zip", "age"], "disease", {"disease": AttributeKind.NOMINAL}
    )["disease"]["t_closeness"]
    assert got == pytest.approx(expected)
    assert out["missing"] == 0 and out["n_known"] == 8


def test_no_homogeneous_class() -> None:
    out = attribute_disclosure(_table(), ["zip"], ["income"])["income"]
    assert out["homogeneous_groups"] == 0
    assert out["homogeneous_records"] == 0
    assert out["homogeneous_percent"] == 0.0
    assert out["distinct_l_diversity"] == 2  # class B: 4, 4, 5
    # class B: p = (2/3, 1/3) -> exp(H) is the smallest; A has 3 values, C 2 equiprobable
    h = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert out["entropy_l_diversity"] == pytest.approx(math.exp(h))
    # numbers with no kind given: ordered distance, as privacy measures a continuous column
    t = privacy.t_closeness(_table(), ["zip"], ["income"], {"income": "continuous"})
    assert out["t_closeness"] == pytest.approx(t)


def test_grouping_is_the_k_anonymity_grouping_missing_qi_is_one_value() -> None:
    frame = pd.DataFrame({"q": [None, None, "x", "x"], "s": ["a", "a", "a", "b"]})
    out = attribute_disclosure(frame, ["q"], ["s"])["s"]
    assert out["n_groups"] == 2
    assert k_anonymity_level(frame, ["q"]) == 2
    assert out["homogeneous_groups"] == 1 and out["homogeneous_records"] == 2


def test_missing_confidential_values_are_ignored() -> None:
    # class 1: "a", NA -> one known value: homogeneous (1 record with a known value)
    # class 2: NA, NA -> no known value: discloses nothing, left out of the minimum
    # class 3: "a", "b" -> 2 values
    frame = pd.DataFrame({"q": [1, 1, 2, 2, 3, 3], "s": ["a", None, None, None, "a", "b"]})
    out = attribute_disclosure(frame, ["q"], ["s"])["s"]
    assert out["missing"] == 3 and out["n_known"] == 3
    assert out["homogeneous_groups"] == 1
    assert out["homogeneous_records"] == 1
    assert out["homogeneous_percent"] == pytest.approx(100 / 3)
    assert out["distinct_l_diversity"] == 1
    # privacy.distinct_l_diversity counts NA as one value: class 1 has 2 values there
    assert privacy.distinct_l_diversity(frame, ["q"], "s") == 1  # class 2: {NA}
    # an ordered attribute with a missing value has no t-closeness
    numbers = pd.DataFrame({"q": [1, 1, 2, 2], "s": [1.0, np.nan, 2.0, 3.0]})
    assert attribute_disclosure(numbers, ["q"], ["s"])["s"]["t_closeness"] is None
    # every value missing: nothing disclosed, l = 0
    empty = attribute_disclosure(pd.DataFrame({"q": [1, 2], "s": [None, None]}), ["q"], ["s"])
    assert empty["s"]["homogeneous_records"] == 0 and empty["s"]["distinct_l_diversity"] == 0


def test_several_attributes_and_verdict_names_the_worst() -> None:
    frame = _table()
    frame["sex"] = ["m", "f", "m", "f", "m", "f", "m", "m"]  # only class C homogeneous
    report = {
        "k": 2,
        "k_anonymity": 2,
        "attribute_disclosure": attribute_disclosure(
            frame, ["zip", "age"], ["sex", "disease", "income"]
        ),
    }
    assert report["attribute_disclosure"]["income"]["homogeneous_groups"] == 0
    v = release_verdict(report)
    assert v.level == "attribute_disclosure"
    assert "one disease value" in v.text  # 62 % against sex's 25 %
    assert "62 % of records" in v.text
    assert "1 other confidential attribute" in v.text
    assert "✓" not in v.text + v.short
    assert not v.ok


def test_verdict_safe_shows_the_tick() -> None:
    report = {
        "k": 3,
        "k_anonymity": 3,
        "attribute_disclosure": attribute_disclosure(_table(), ["zip"], ["income"]),
    }
    v = release_verdict(report)
    assert v == Verdict(
        "safe",
        "k-anonymous (k = 3); no homogeneous group: every group has ≥ 2 values of income",
        "k-anonymity 3, l-diversity 2 ✓",
    )
    assert v.ok


def test_verdict_no_confidential_is_plain_k_anonymity() -> None:
    v = release_verdict({"k": 5, "k_anonymity": 7, "attribute_disclosure": {}})
    assert v.level == "no_confidential"
    assert v.short == "k-anonymity 7 ✓"
    assert v.text.startswith("k-anonymous (k = 5, smallest group 7)")


def test_verdict_not_k_anonymous_never_ticks() -> None:
    disclosure = attribute_disclosure(_table(), ["zip", "age"], ["disease"])
    v = release_verdict({"k": 5, "k_anonymity": 2, "attribute_disclosure": disclosure})
    assert v.level == "not_k_anonymous"
    assert "smallest group 2 < k = 5" in v.text and "attribute disclosure" in v.text
    assert "✓" not in v.short
    v = release_verdict({"k": 5, "k_anonymity": 2, "attribute_disclosure": {}})
    assert v.level == "not_k_anonymous" and "✓" not in v.short


def test_percent_text_never_rounds_to_zero_or_whole() -> None:
    assert percent_text(0.0) == "0 %"
    assert percent_text(0.04) == "< 0.1 %"
    assert percent_text(0.5) == "0.5 %"
    assert percent_text(50.76) == "51 %"
    assert percent_text(99.7) == "99 %"
    assert percent_text(100.0) == "100 %"


def test_no_value_in_the_measures() -> None:
    frame = _table()
    out = attribute_disclosure(frame, ["zip", "age"], ["disease"])
    text = repr(out) + release_verdict({"k": 2, "k_anonymity": 2, "attribute_disclosure": out}).text
    for value in ("flu", "cold", "cancer", "'A'", "'B'"):
        assert value not in text


def test_verdict_without_figures_is_not_measured_and_never_ticks() -> None:
    # a partitioned run's report, or one written before attribute disclosure was measured
    for report in (
        {"k": 5, "k_anonymity": 5},
        {"k": 5, "k_anonymity": 5, "attribute_disclosure": None},
    ):
        v = release_verdict(report)
        assert v.level == "no_confidential" and not v.measured and not v.ok
        assert "attribute disclosure not measured" in v.text and "✓" not in v.short


def test_t_closeness_of_a_continuous_text_column_is_privacy_s() -> None:
    """The command line tags every --confidential column continuous, text included: read as
    nominal, as privacy.attribute_codes does (decided on the distinct values only)."""
    from microgui.core.table.roles import AttributeRole, ColumnSpec

    frame = _table()
    spec = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
    got = attribute_disclosure(frame, ["zip"], ["disease"], {"disease": spec})["disease"]
    want = privacy.t_closeness(frame, ["zip"], ["disease"], {"disease": spec})
    assert got["t_closeness"] == pytest.approx(want)
    nominal = privacy.t_closeness(frame, ["zip"], ["disease"], {"disease": "nominal"})
    assert want == pytest.approx(nominal)
    # numbers written as text stay ordered
    frame["score"] = [str(v) for v in frame["income"]]
    got = attribute_disclosure(frame, ["zip"], ["score"], {"score": spec})["score"]
    assert got["t_closeness"] == pytest.approx(
        privacy.t_closeness(frame, ["zip"], ["score"], {"score": spec})
    )
