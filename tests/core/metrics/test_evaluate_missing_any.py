"""``evaluate`` counts a suppressed (missing) key cell as matching any value, as the release
check and the plan report do (issue 31: a run's number means the same everywhere). Before, it
counted the blank as a value of its own: a plan released as k = 5 read k = 1 in compare."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics.disclosure import attribute_disclosure, worst_homogeneous
from microgui.core.metrics.evaluate import evaluate
from microgui.core.metrics.missing_match import frequencies_missing_any
from microgui.core.runs.plan import plan_from_json
from microgui.core.runs.plan.run import run_plan
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
CONF = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL)


def test_group_measures_by_hand(blanked_keys) -> None:  # type: ignore[no-untyped-def]
    ds, released = blanked_keys  # records 5 (m, n) and 6 (f, e): unique, region blanked
    # (f,n)x2 (f,s) (m,s)x2 (m,?) (f,?): with ? matching any value, frequencies
    # f,n: 2 + (f,?) = 3; f,s: 1 + 1 = 2; m,s: 2 + 1 = 3; m,?: 3; f,?: 4
    assert frequencies_missing_any(released, ["sex", "region"]).tolist() == [3, 3, 2, 3, 3, 3, 4]
    m = evaluate(ds, released)
    assert m["k_anonymity"] == 2
    assert m["reidentification_risk_max"] == pytest.approx(50.0)
    assert m["reidentification_risk_mean"] == pytest.approx(
        100 * np.mean(1 / np.array([3, 3, 2, 3, 3, 3, 4]))
    )
    assert m["sample_uniques"] == 0
    # (m, s) + (m, ?): incomes lo, lo, hi -> 2 values; (f, s) + (f, ?): lo, hi -> 2
    per = attribute_disclosure(
        released, ["sex", "region"], "income", ds.roles, missing_matches_any=True
    )
    assert m["l_diversity"] == m["p_sensitivity"] == per["income"]["distinct_l_diversity"]
    assert m["homogeneous_percent"] == worst_homogeneous(per)
    # without a blank, the default rule (a value is a value)
    plain = evaluate(ds, ds.frame)
    assert plain["k_anonymity"] == 1 and plain["sample_uniques"] == 3


def test_a_suppression_plan_reads_the_same_in_evaluate_and_its_report() -> None:
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["f", "m"], n),
            "region": rng.choice([f"r{i}" for i in range(12)], n),
            "job": rng.choice([f"j{i}" for i in range(9)], n),
            "income": rng.choice(["lo", "mid", "hi"], n),
        }
    )
    roles = RoleMap.from_dict({"sex": QI, "region": QI, "job": QI, "income": CONF})
    ds = Dataset.from_frame(frame, roles)
    plan = plan_from_json({"plan_version": 1, "steps": [{"step": "suppress", "k": 3}]})
    result = run_plan(ds, plan, seed=1).result
    report = result.report
    assert report["k_anonymity"] >= 3
    m = evaluate(ds, result.protected, labels=result.labels, k=3)
    assert m["k_anonymity"] == report["k_anonymity"]
    assert m["homogeneous_percent"] == pytest.approx(
        worst_homogeneous(report["attribute_disclosure"])
    )
    assert m["reidentification_risk_max"] <= 100.0 / 3 + 1e-9


def test_assess_counts_a_missing_key_as_any_value_for_l_diversity_too(blanked_keys) -> None:  # type: ignore[no-untyped-def]
    """``assess``'s fk already matched a missing key with any value; its l-diversity counted
    the blank as a value of its own (a different cell): now the same rule."""
    from microgui.core.metrics.file_risk import assess_risk

    ds, frame = blanked_keys
    figures = assess_risk(frame, ds.roles, k=2)
    per = figures["l_diversity"]["income"]
    # (m, ?) joins (m, s): lo, lo, hi -> l = 2 there; every cell holds >= 2 incomes
    assert per["distinct_l_diversity"] == 2
    assert per["homogeneous_records"] == 0


def _ordinal_release() -> tuple[Dataset, pd.DataFrame]:
    """6 records: age (continuous), education (ordinal low < mid < high), sex (nominal); the
    release blanks education in records 1 and 4 (local suppression) and moves record 2's
    education one step."""
    spec_o = ColumnSpec(
        AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, ("low", "mid", "high")
    )
    spec_c = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    frame = pd.DataFrame(
        {
            "age": [21.0, 35.0, 47.0, 52.0, 60.0, 33.0],
            "education": ["low", "mid", "high", "low", "high", "mid"],
            "sex": ["f", "m", "f", "m", "f", "m"],
            "income": ["lo", "hi", "lo", "lo", "hi", "hi"],
        }
    )
    roles = RoleMap.from_dict({"age": spec_c, "education": spec_o, "sex": QI, "income": CONF})
    released = frame.copy()
    released["education"] = released["education"].astype(object)
    released.loc[[1, 4], "education"] = None
    released.loc[2, "education"] = "mid"
    return Dataset.from_frame(frame, roles), released


def test_a_suppressed_ordinal_key_keeps_the_categorical_measures() -> None:
    """A blank ordinal cell is a suppressed one, not a generalized value: before, evaluate
    returned no Dist, CTBIL, EBIL nor either record linkage for such a release."""
    ds, released = _ordinal_release()
    m = evaluate(ds, released)
    for key in ("dist", "ctbil", "ebil", "record_linkage", "probabilistic_record_linkage"):
        assert m[key] is not None, key
    # Dist: the two blanks lose the whole value (1 each), the step high -> mid 1/3; sex kept
    assert m["dist"] == pytest.approx(2 + 1 / 3)
    # the same release with those two cells kept: 1/3 only
    kept = released.copy()
    kept.loc[[1, 4], "education"] = ds.frame.loc[[1, 4], "education"]
    assert evaluate(ds, kept)["dist"] == pytest.approx(1 / 3)


def test_dist_il_counts_an_off_order_code_as_the_whole_value() -> None:
    from microgui.core.metrics.utility import dist_il

    x = np.array([[0], [1], [2], [2]])
    y = np.array([[0], [3], [1], [-1]])  # 3 and -1: outside 0..2, suppressed
    assert dist_il(x, y, [3]) == pytest.approx(0 + 1 + 1 / 3 + 1)
