"""Issue 13, item 2: one headline information loss over every quasi-identifier.

``information_loss_all_qi`` = 100·SSE/SST in MDAV-generic's distance (``003_309fe4adb430bc25.txt``
§5.2-5.4; :mod:`microgui.core.metrics.mixed_loss`), equal to ``information_loss`` on all-continuous
data, checked by hand on a 6-record mixed table, on generalized releases and on UCI Adult.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from reference_sets import ADULT_DIR, reference_frame

from microgui.core.io import read_table
from microgui.core.metrics.evaluate import BREAKDOWNS, MEASURES, evaluate
from microgui.core.metrics.mixed_loss import (
    information_loss_all_qi,
    information_loss_by_attribute,
    mixed_information_loss,
)
from microgui.core.runs import RunSpec, information_loss_text, run_protection
from microgui.core.table.aggregate import aggregate
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import roles_from_lists

ADULT = ADULT_DIR / "adult.csv"


# --- all continuous: the current definition, exactly ----------------------------------------------
def _continuous(n: int = 300, seed: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": rng.normal(50, 10, n),
            "y": rng.lognormal(3, 1, n),
            "z": rng.integers(0, 5, n).astype(float),  # ties
            "c": rng.choice(["a", "b"], n),
        }
    )
    return Dataset.from_frame(frame, roles_from_lists(frame.columns, qi=["x", "y", "z"]))


@pytest.mark.parametrize(
    ("method", "k", "params"),
    [
        ("mdav", 3, {}),
        ("mdav", 7, {"rescale_variance": "true"}),
        ("mdav-generic", 4, {}),
        ("mst", 3, {}),
    ],
)
def test_equals_information_loss_when_every_qi_is_continuous(
    method: str, k: int, params: dict[str, str]
) -> None:
    ds = _continuous()
    result = run_protection(ds, RunSpec.make(method, k, params, seed=2))
    report = result.report
    assert report["information_loss_all_qi"] == report["information_loss"]  # bit for bit
    assert result.information_loss_all_qi == result.information_loss
    measures = evaluate(ds, result.protected, labels=result.labels)
    assert measures["information_loss_all_qi"] == measures["information_loss"]
    assert measures["information_loss"] == pytest.approx(report["information_loss"], rel=1e-12)
    by = report["information_loss_by_attribute"]
    assert list(by) == ["x", "y", "z"]
    assert all(m["kind"] == "continuous" and not m["generalized"] for m in by.values())
    # the attributes' sums add up to the headline's
    total = 100 * sum(m["sse"] for m in by.values()) / sum(m["sst"] for m in by.values())
    assert total == pytest.approx(report["information_loss"], rel=1e-12)


@pytest.mark.shared
def test_published_mdav_value_unchanged() -> None:
    """A published MDAV figure (sdcMicro's Tarragona, k=3: 16.9326 %,
    tests/core/methods/test_mdav.py)."""
    frame = reference_frame("Tarragona.csv")
    ds = Dataset.from_frame(frame, roles_from_lists(frame.columns, qi=list(frame.columns)))
    report = run_protection(ds, RunSpec.make("mdav", 3)).report
    assert report["information_loss_all_qi"] == report["information_loss"]
    assert report["information_loss_all_qi"] == pytest.approx(16.9326, abs=5e-4)


# --- a 6-record mixed table, by hand --------------------------------------------------------------
#: age continuous; edu ordinal low < mid < high < top (|D| = 4); sex nominal (codes F=0, M=1).
SIX = pd.DataFrame(
    {
        "age": [20.0, 30.0, 40.0, 50.0, 60.0, 70.0],
        "edu": ["low", "mid", "low", "high", "top", "high"],
        "sex": ["F", "F", "M", "M", "M", "F"],
    }
)
EDU_ORDER = ["low", "mid", "high", "top"]


def _six() -> Dataset:
    roles = roles_from_lists(
        SIX.columns, qi=["age", "edu", "sex"], ordinal={"edu": EDU_ORDER}, nominal=["sex"]
    )
    return Dataset.from_frame(SIX.copy(), roles)


#: Groups {0, 1, 2} and {3, 4, 5} released by mean, median and mode.
SIX_RELEASED = pd.DataFrame(
    {
        "age": [30.0, 30.0, 30.0, 60.0, 60.0, 60.0],
        "edu": ["low", "low", "low", "high", "high", "high"],
        "sex": ["F", "F", "F", "M", "M", "M"],
    }
)

# By hand.
# age: mean 45, deviations ±5, ±15, ±25: Σ dev² = 1750, sample variance 350.
#   SST = 1750/350 = 5; SSE = (10² + 0 + 10² + 10² + 0 + 10²)/350 = 400/350 = 8/7.
# edu ranks 0,1,0,2,3,2; overall lower median = 3rd of 0,0,1,2,2,3 = 1 (mid).
#   SST = ((0-1)² + 0 + 1 + 1 + 4 + 1)/4² = 8/16 = 1/2; released ranks 0,0,0,2,2,2:
#   SSE = (1/4)² + (1/4)² = 1/8.
# sex: F 3, M 3, overall mode F (the tie goes to the smallest code). SST = 3 (the Ms);
#   released F,F,F,M,M,M: SSE = 2 (records 2 and 5).
# IL = 100·(8/7 + 1/8 + 2)/(5 + 1/2 + 3) = 100·(183/56)/(17/2) = 100·183/476.
SIX_IL = 100 * 183 / 476  # 38.445 %
SIX_CONTINUOUS_IL = 100 * (8 / 7) / 5  # 22.857 %: information_loss, age only


def test_six_record_mixed_table_by_hand() -> None:
    ds = _six()
    loss = mixed_information_loss(ds, SIX_RELEASED)
    assert loss.sse == pytest.approx(8 / 7 + 1 / 8 + 2, rel=1e-12)
    assert loss.sst == pytest.approx(5 + 1 / 2 + 3, rel=1e-12)
    assert loss.information_loss == pytest.approx(SIX_IL, rel=1e-12)
    assert information_loss_all_qi(ds, SIX_RELEASED) == loss.information_loss
    assert loss.generalized == ()

    by = information_loss_by_attribute(ds, SIX_RELEASED)
    assert list(by) == ["age", "edu", "sex"]
    assert by["age"] == pytest.approx(
        {"kind": "continuous", "generalized": False, "sse": 8 / 7, "sst": 5.0,
         "information_loss": SIX_CONTINUOUS_IL}
    )  # fmt: skip
    h = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))  # H(2/3, 1/3) = 0.918 bits
    assert by["edu"] == pytest.approx(
        {
            "kind": "ordinal", "generalized": False, "sse": 1 / 8, "sst": 1 / 2,
            "information_loss": 25.0,
            "changed_percent": 100 * 2 / 6,  # records 1 (mid -> low) and 4 (top -> high)
            "dist": (1 + 1) / 4,  # d_ORD = one step of 4 categories, twice
            # one-way table: low 2 -> 3, mid 1 -> 0, high 2 -> 3, top 1 -> 0
            "ctbil": 1 / 2 + 1 / 1 + 1 / 2 + 1 / 1,
            # released low: originals {low, mid, low}; released high: {high, top, high}
            "ebil": 6 * h,
        }
    )  # fmt: skip
    assert by["sex"] == pytest.approx(
        {
            "kind": "nominal", "generalized": False, "sse": 2.0, "sst": 3.0,
            "information_loss": 100 * 2 / 3, "changed_percent": 100 * 2 / 6, "dist": 2.0,
            "ctbil": 0.0,  # 3 F and 3 M before and after
            "ebil": 6 * h,  # released F: {F, F, M}; released M: {M, M, F}
        }
    )  # fmt: skip


def test_six_records_through_mdav_generic_and_evaluate() -> None:
    """mdav-generic (k=3) forms those very groups; its report and evaluate say the same."""
    ds = _six()
    result = run_protection(ds, RunSpec.make("mdav-generic", 3, seed=0))
    groups = {frozenset(np.flatnonzero(result.labels == g)) for g in set(result.labels)}
    assert groups == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}
    pd.testing.assert_frame_equal(
        result.protected.reset_index(drop=True), SIX_RELEASED, check_dtype=False
    )
    report = result.report
    assert report["information_loss_all_qi"] == pytest.approx(SIX_IL, rel=1e-12)
    assert report["information_loss"] == pytest.approx(SIX_CONTINUOUS_IL, rel=1e-12)
    assert "every quasi-identifier" in report["information_loss_all_qi_basis"]
    assert (
        information_loss_text(report)
        == "IL (all QIs) = 38.45 %, SSE/SST (continuous QIs) = 22.86 % (lower bound 22.86 %)"
    )
    m = evaluate(ds, result.protected, labels=result.labels)
    assert m["information_loss_all_qi"] == pytest.approx(SIX_IL, rel=1e-12)
    by = m["information_loss_by_attribute"]
    assert isinstance(by, dict) and list(by) == ["age", "edu", "sex"]
    for col, values in report["information_loss_by_attribute"].items():
        assert by[col] == pytest.approx(values), col


def test_releasing_the_overall_average_everywhere_loses_everything() -> None:
    """One group: mean 45, median mid, mode F for all: SSE = SST, IL = 100 %."""
    released = pd.DataFrame({"age": [45.0] * 6, "edu": ["mid"] * 6, "sex": ["F"] * 6})
    assert information_loss_all_qi(_six(), released) == pytest.approx(100.0, rel=1e-12)
    assert information_loss_all_qi(_six(), SIX.copy()) == 0.0  # nothing changed


# --- generalized releases (mstk) ------------------------------------------------------------------
def test_generalized_release_by_hand() -> None:
    """Each generalized value stands for the average of the records released with it."""
    released = pd.DataFrame(
        {
            "age": ["[20-40]"] * 3 + ["[50-70]"] * 3,  # class means 30 and 60: SSE 8/7
            "edu": ["[low-mid]"] * 3 + ["[high-top]"] * 3,  # lower medians low, high: SSE 1/8
            "sex": ["*"] * 6,  # one class of all six: mode F (tie, smallest code), SSE = SST = 3
        }
    )
    loss = mixed_information_loss(_six(), released)
    assert loss.generalized == ("age", "edu", "sex")
    assert loss.information_loss == pytest.approx(100 * (8 / 7 + 1 / 8 + 3) / 8.5, rel=1e-12)
    by = loss.by_attribute
    assert by["sex"]["information_loss"] == pytest.approx(100.0)
    assert by["edu"]["dist"] is None  # d_ORD of "[low-mid]" is undefined
    assert by["edu"]["changed_percent"] == 100.0 and by["sex"]["changed_percent"] == 100.0
    assert by["sex"]["ctbil"] == pytest.approx(3 / 3 + 3 / 3 + 6 / 1)  # F, M emptied; * new
    # an ungeneralized cell costs nothing, also among generalized ones
    mixed = released.assign(sex=SIX["sex"], age=["[20-40]"] * 3 + ["50", "60", "70"])
    loss = mixed_information_loss(_six(), mixed)
    assert loss.by_attribute["sex"]["sse"] == 0.0 and loss.by_attribute["sex"]["dist"] == 0.0
    assert loss.by_attribute["age"]["sse"] == pytest.approx(200 / 350)  # group 1 only
    # "*" everywhere: 100 %
    stars = pd.DataFrame({c: ["*"] * 6 for c in SIX.columns})
    assert information_loss_all_qi(_six(), stars) == pytest.approx(100.0, rel=1e-12)


def _mixed(n: int = 240, seed: int = 8) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.lognormal(10, 0.5, n).round(0),
            "edu": rng.choice(["basic", "middle", "higher"], n, p=[0.3, 0.5, 0.2]),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    roles = roles_from_lists(
        frame.columns,
        qi=["age", "income", "edu", "region", "sex"],
        ordinal={"edu": ["basic", "middle", "higher"]},
        nominal=["region", "sex"],
    )
    return Dataset.from_frame(frame, roles)


def test_mstk_gets_a_comparable_headline() -> None:
    ds = _mixed()
    gen = run_protection(ds, RunSpec.make("mstk", 5, seed=1))
    micro = run_protection(ds, RunSpec.make("mdav-generic", 5, seed=1))
    assert gen.report["information_loss"] is None  # continuous QIs published as text
    il = gen.report["information_loss_all_qi"]
    assert il is not None and 0.0 < il < 100.0
    assert "generalized" in gen.report["information_loss_all_qi_basis"]
    assert "IL (all QIs) = " in information_loss_text(gen.report)
    m = evaluate(ds, gen.protected, labels=gen.labels, k=5)
    assert m["information_loss_all_qi"] == pytest.approx(il, rel=1e-12)
    # the same scale as microaggregation's: both between 0 and 100, generalization coarser
    assert 0.0 < micro.report["information_loss_all_qi"] < il
    # microaggregating mstk's own classes never loses more, attribute by attribute, than
    # publishing their labels where the mean and the mode decide (module docstring)
    qi = prepare_qi(ds)
    same = aggregate(ds, qi, gen.labels, {"categorical_aggregate": "independent"})
    by_micro = mixed_information_loss(qi, same).by_attribute
    by_gen = gen.report["information_loss_by_attribute"]
    for col in ("age", "income", "region", "sex"):
        assert by_micro[col]["sse"] <= by_gen[col]["sse"] + 1e-9, col


def test_bounded_and_monotone_in_k_on_mixed_data() -> None:
    ds = _mixed()
    values = [
        run_protection(ds, RunSpec.make("mdav-generic", k, seed=0)).report[
            "information_loss_all_qi"
        ]
        for k in (2, 5, 20, 240)
    ]
    assert all(0.0 <= v <= 100.0 for v in values)
    assert values == sorted(values)
    # k = n: one group. Continuous and nominal attributes lose exactly their SST (100 %); the
    # ordinal one too unless joint aggregation picks a record's combination: 100 % within 1 %.
    assert values[-1] == pytest.approx(100.0, abs=1.0)


# --- the measures' catalogue and breakdown ---------------------------------------------------------
def test_catalogue_names_each_number_once() -> None:
    assert list(MEASURES)[0] == "information_loss_all_qi"  # the headline first
    assert BREAKDOWNS == ("information_loss_by_attribute",)
    labels = [MEASURES[k][0] for k in ("information_loss_all_qi", "information_loss", "il")]
    assert labels[0].startswith("IL, all QIs")
    assert labels[1].startswith("SSE/SST, continuous QIs")
    assert labels[2].startswith("IL1-5")
    # no other measure's label starts with the bare name "IL"
    others = [v[0] for k, v in MEASURES.items() if k != "information_loss_all_qi"]
    assert not any(label.startswith(("IL ", "IL=", "IL,")) for label in others)


def test_released_values_read_back_from_text_match_the_categories() -> None:
    """A release read back from CSV (3.0 as "3", ordinal numbers as text) is not 'generalized'."""
    frame = pd.DataFrame({"n": [1, 2, 3, 1, 2, 3], "v": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]})
    roles = roles_from_lists(frame.columns, qi=["n", "v"], ordinal={"n": None})
    ds = Dataset.from_frame(frame, roles)
    released = pd.DataFrame({"n": [1.0, 1.0, 1.0, 3.0, 3.0, 3.0], "v": ["2.5"] * 3 + ["5.5"] * 3})
    loss = mixed_information_loss(ds, released)
    assert loss.generalized == ()
    # n: ranks 0,1,2,0,1,2 released 0,0,0,2,2,2: rank differences 0,1,2,2,1,0 over |D| = 3,
    # squared: SSE = (1 + 4 + 4 + 1)/9 = 10/9. v: sample variance 3.5, SSE = 4 · 1²/3.5
    assert loss.by_attribute["n"]["sse"] == pytest.approx(10 / 9)
    assert loss.by_attribute["v"]["sse"] == pytest.approx((1 + 0 + 1 + 1 + 0 + 1) / 3.5)


def test_mismatched_rows_are_refused() -> None:
    with pytest.raises(ValueError, match="5 rows"):
        mixed_information_loss(_six(), SIX_RELEASED.head(5))


# --- UCI Adult -------------------------------------------------------------------------------------
ADULT_QIS = ["age", "sex", "race", "marital-status", "education", "workclass"]


@pytest.mark.shared
def test_adult_loss_moves_when_only_categorical_values_change() -> None:
    if not ADULT.exists():
        pytest.skip("shared Adult data not available")
    frame = read_table(ADULT).frame
    roles = roles_from_lists(frame.columns, qi=ADULT_QIS, nominal=ADULT_QIS[1:])
    ds = Dataset(frame, roles)
    result = run_protection(ds, RunSpec.make("mdav-generic", 5, seed=1))
    report = result.report
    headline, continuous = report["information_loss_all_qi"], report["information_loss"]
    by = report["information_loss_by_attribute"]
    assert set(by) == set(ADULT_QIS)
    # the categorical attributes lose far more than age: the headline says so
    assert by["education"]["changed_percent"] > 1.0
    assert headline > continuous > 0.0

    # change released categorical values only: one group's education to another category
    released = result.protected.copy()
    rows = np.flatnonzero(result.labels == result.labels[0])
    before = released["education"].iloc[rows[0]]
    other = next(c for c in frame["education"].unique() if c != before)
    released.loc[released.index[rows], "education"] = other
    changed = evaluate(ds, released, labels=result.labels)
    assert changed["information_loss"] == pytest.approx(continuous, rel=1e-12)  # age untouched
    originals = frame["education"].to_numpy()[rows]
    delta = np.count_nonzero(originals != other) - np.count_nonzero(originals != before)
    total_sse = sum(m["sse"] for m in by.values())
    total_sst = sum(m["sst"] for m in by.values())
    assert delta > 0
    assert changed["information_loss_all_qi"] == pytest.approx(
        100 * (total_sse + delta) / total_sst, rel=1e-9
    )
    assert changed["information_loss_all_qi"] > headline

    # and back: the categorical values as they were -> only age's loss is left
    restored = result.protected.copy()
    for col in ADULT_QIS[1:]:
        restored[col] = frame[col].to_numpy()
    only_age = mixed_information_loss(ds, restored)
    assert only_age.information_loss == pytest.approx(100 * by["age"]["sse"] / total_sst, rel=1e-9)
