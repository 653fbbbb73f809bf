"""Household risk (issue 31 item 5): sdcMicro's ``measure_risk`` with ``hhId`` (``R/measure_risk.R``,
``measure_riskWORK``, ``fast_hier``): each record gets 1 − Π(1 − rᵢ) over its household's
records, ``hier_risk_ER`` sums it over the records. Checked on a hand example, on sdcMicro's
``testdata`` against ``data/household/testdata_hier_risk.json`` (made by the R script beside it:
sdcMicro's steps in base R, the package not being installed here), and on bad ids."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference_sets import reference_frame

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.metrics.file_risk import assess_risk
from microgui.core.metrics.household_risk import (
    household_codes,
    household_risk,
    household_risk_summary,
    household_sizes,
)
from microgui.core.table.roles import roles_from_lists

REFERENCE = Path(__file__).parent / "data" / "household" / "testdata_hier_risk.json"
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_hand_example() -> None:
    rk = np.array([0.5, 0.2, 0.1, 1 / 3, 0.25])
    codes = np.array([0, 0, 1, 2, 0])
    hr = household_risk(rk, codes)
    a = 1 - (1 - 0.5) * (1 - 0.2) * (1 - 0.25)  # 0.7
    assert hr == pytest.approx([a, a, 0.1, 1 / 3, a], abs=1e-15)
    summary = household_risk_summary(rk, codes, "hh")
    assert summary["households"] == 3
    assert summary["household_size"] == {"min": 1, "mean": pytest.approx(5 / 3), "max": 3}
    assert summary["expected_reidentifications"] == pytest.approx(3 * a + 0.1 + 1 / 3)
    assert summary["expected_households"] == pytest.approx(a + 0.1 + 1 / 3)
    assert summary["mean"] == pytest.approx((3 * a + 0.1 + 1 / 3) / 5)
    assert summary["records_above"] == {"0.1": 4, "0.2": 4, "0.5": 3}
    assert summary["note"] is None
    # a household risk is never below the risk of any of its members
    assert (hr >= rk - 1e-15).all()
    assert household_sizes(codes).tolist() == [3, 3, 1, 1, 3]


def test_assess_risk_without_weights_uses_one_over_fk() -> None:
    frame = pd.DataFrame(
        {
            "hh": ["x", "x", "y", "y", "z", "z"],
            "sex": ["m", "f", "m", "f", "m", "m"],
            "region": ["a", "a", "a", "b", "b", "b"],
        }
    )
    roles = roles_from_lists(frame.columns, qi=["sex", "region"], nominal=["sex", "region"],
                             household="hh")  # fmt: skip
    risk = assess_risk(frame, roles, k=2, suda=False)
    # fk: (m,a)=2 (f,a)=1 (f,b)=1 (m,b)=2 -> rk 1/2, 1, 1/2, 1, 1/2, 1/2
    rk = np.array([0.5, 1.0, 0.5, 1.0, 0.5, 0.5])
    assert risk["individual_risk"]["expected_reidentifications"] == pytest.approx(rk.sum())
    hr = risk["household_risk"]
    assert hr["column"] == "hh" and hr["households"] == 3
    # x: 1-(.5*0)=1, y: 1, z: 1-.25=.75
    assert hr["expected_reidentifications"] == pytest.approx(2 + 2 + 1.5)
    assert hr["max"] == pytest.approx(1.0)
    text = json.dumps(risk)
    for value in ('"x"', '"y"', '"z"'):  # counts and column names only
        assert value not in text


def test_household_size_key() -> None:
    frame = pd.DataFrame({"hh": [1, 1, 2, 3, 3, 3], "sex": ["m", "f", "m", "m", "f", "m"]})
    roles = roles_from_lists(frame.columns, qi="sex", nominal="sex", household="hh")
    plain = assess_risk(frame, roles, k=2, suda=False)
    sized = assess_risk(frame, roles, k=2, suda=False, household_size_key=True)
    assert sized["keys"] == ["sex", "household size"]
    assert "household size" in sized["keys_note"]
    # sizes 2,2,1,3,3,3: (m,2) (f,2) (m,1) (f,3) alone, only (m,3) holds two records
    assert plain["k_anonymity"]["records_below_k"] == 0
    assert sized["k_anonymity"]["records_below_k"] == 4
    taken = frame.assign(**{"household size": 0})
    roles2 = roles_from_lists(taken.columns, qi="sex", nominal="sex", household="hh")
    again = assess_risk(taken, roles2, k=2, suda=False, household_size_key=True)
    assert again["keys"][-1] == "household size (derived)"
    no_hh = roles_from_lists(frame.columns, qi="sex", nominal="sex")
    with pytest.raises(InvalidParameter, match="household-id column"):
        assess_risk(frame, no_hh, k=2, household_size_key=True)
    assert assess_risk(frame, no_hh, k=2, suda=False)["household_risk"] is None


def test_degenerate_ids_are_measured_with_a_note() -> None:
    rk = np.array([0.1, 0.2, 0.3, 0.4])
    each = household_risk_summary(rk, np.arange(4), "hh")
    assert household_risk(rk, np.arange(4)) == pytest.approx(rk)
    assert "one record" in each["note"] and each["households"] == 4
    one = household_risk_summary(rk, np.zeros(4, dtype=np.int64), "hh")
    assert one["max"] == pytest.approx(1 - 0.9 * 0.8 * 0.7 * 0.6)
    assert "one household" in one["note"] and one["households"] == 1


def test_missing_ids_refused_naming_column_and_rows() -> None:
    frame = pd.DataFrame({"hh": ["a", "", "b", None], "sex": ["m", "f", "m", "f"]})
    with pytest.raises(InvalidInput) as info:
        household_codes(frame, "hh")
    message = str(info.value)
    assert "'hh'" in message and "2 record(s)" in message and "row 2, 4" in message
    assert "\n" not in message
    roles = roles_from_lists(frame.columns, qi="sex", nominal="sex", household="hh")
    with pytest.raises(InvalidInput, match="household-id column"):
        assess_risk(frame, roles, k=2)


def test_two_household_columns_refused() -> None:
    from microgui.core.errors import InvalidRoles
    from microgui.core.table.roles import AttributeRole, ColumnSpec, RoleMap

    roles = RoleMap.from_dict(
        {
            "a": ColumnSpec(AttributeRole.HOUSEHOLD),
            "b": ColumnSpec(AttributeRole.HOUSEHOLD),
            "q": ColumnSpec(AttributeRole.QUASI_IDENTIFIER),
        }
    )
    with pytest.raises(InvalidRoles, match="household id"):
        _ = roles.household
    with pytest.raises(InvalidRoles, match="--household"):
        roles_from_lists(["a", "q"], qi="a", household="a")


@pytest.mark.shared
def test_testdata_equals_sdcmicro() -> None:
    """sdcMicro's testdata with its examples' keys, w = sampling_weight, hhId = ori_hid."""
    td = reference_frame("testdata.csv")
    ref = json.loads(REFERENCE.read_text())
    roles = roles_from_lists(
        td.columns, qi=TESTDATA_KEYS, nominal=TESTDATA_KEYS, weight="sampling_weight",
        household="ori_hid",
    )  # fmt: skip
    risk = assess_risk(td, roles, k=3, suda=False)
    assert risk["individual_risk"]["expected_reidentifications"] == pytest.approx(
        ref["global_risk_ER"], rel=1e-12
    )
    hr = risk["household_risk"]
    assert hr["households"] == ref["households"]
    assert hr["expected_reidentifications"] == pytest.approx(ref["hier_risk_ER"], rel=1e-12)
    assert hr["mean"] == pytest.approx(ref["hier_risk"], rel=1e-12)
    assert hr["pct"] == pytest.approx(ref["hier_risk_pct"], rel=1e-12)
    assert hr["max"] == pytest.approx(ref["hier_risk_max"], rel=1e-12)
    # per record, in the input order
    from microgui.core.metrics.weighted_risk import frequencies, individual_risk

    freq = frequencies(td, TESTDATA_KEYS, "sampling_weight")
    per_record = household_risk(individual_risk(freq.fk, freq.Fk), household_codes(td, "ori_hid"))
    assert per_record[:40] == pytest.approx(ref["hier_risk_first_40"], rel=1e-12)
