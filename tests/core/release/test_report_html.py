"""The HTML report builder: spec, measures with the best marked, charts, and no record values."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from microgui.core.demo import load_demo
from microgui.core.release.report_charts import ru_map_chart
from microgui.core.release.report_html import (
    ReportRun,
    best_indices,
    build_report_html,
    format_measure,
    report_run,
)
from microgui.core.runs import RunSpec, run_protection

CATALOG = {
    "information_loss": ("IL = 100·SSE/SST", "%", "lower is better", "utility"),
    "record_linkage": ("record linkage", "%", "lower is better", "risk"),
    "k_anonymity": ("k-anonymity", "records", "higher is better", "risk"),
    "t_closeness": ("t-closeness", "", "lower is better", "risk"),
}


def _run(name: str, k: int, il: float, rl: float | None) -> ReportRun:
    return ReportRun(
        name=name,
        spec=RunSpec.make("mdav", k, {"aggregate": "mean"}, seed=7).to_json(),
        finished="2026-01-02T03:04:05",
        facts={"n_records": 100, "n_groups": 100 // k},
        measures={"information_loss": il, "record_linkage": rl, "k_anonymity": k},
        quasi_identifiers={"age": "continuous"},
        input_name="people.csv",
    )


def test_best_indices_follow_the_direction() -> None:
    assert best_indices([3.0, 1.0, 2.0], "lower is better") == {1}
    assert best_indices([3, 1, 3], "higher is better") == {0, 2}
    assert best_indices([None, 1.0, math.nan], "lower is better") == set()  # one known value
    assert best_indices([2.0, 2.0], "lower is better") == set()  # all equal: nothing stands out
    assert best_indices([1.0, 2.0], "") == set()


def test_format_measure() -> None:
    assert format_measure(None) == "—"
    assert format_measure(12, "records") == "12 records"
    assert format_measure(3.14159, "%") == "3.142 %"
    assert format_measure(float("nan")) == "—"
    assert format_measure(9.743e-16, "%") == "0 %"  # float noise around zero (issue 15)
    assert format_measure(-2e-13) == "0"
    assert format_measure(0.0001234) == "0.0001234"


def test_comparison_report_has_spec_measures_best_and_charts() -> None:
    chart = ru_map_chart([("#1 mdav k=3", 30.0, 2.5), ("#2 mdav k=10", 9.0, 7.5)], "RL", "IL")
    assert chart is not None
    text = build_report_html(
        [_run("#1 mdav k=3", 3, 2.5, 30.0), _run("#2 mdav k=10", 10, 7.5, 9.0)],
        CATALOG,
        charts=[chart],
        generated=datetime(2026, 1, 2),
    )
    assert text.startswith("<!DOCTYPE html>") and "Comparison of 2 protection runs" in text
    assert "#1 mdav k=3" in text and "#2 mdav k=10" in text
    assert "aggregate = mean" in text and "<td>7</td>" in text  # parameters, seed
    # IL: k=3 best; record linkage and k-anonymity: k=10 best
    assert "<td class='num best'>2.5 %</td>" in text
    assert "<td class='num'>7.5 %</td>" in text
    assert "<td class='num best'>9 %</td>" in text
    assert "<td class='num best'>10 records</td>" in text
    assert "t-closeness" not in text  # no run has it
    assert "<svg" in text and "Risk–utility map of 2 run(s)" in text  # inline SVG
    assert "the runs&#x27; measures" in text  # the footer names what the charts show
    with pytest.raises(TypeError, match="ReportChart"):  # a picture of a plot is refused
        build_report_html([_run("#1", 3, 2.5, 30.0)], CATALOG, charts=[("R-U map", b"\x89PNG")])  # type: ignore[list-item]
    assert "age (continuous)" in text and "people.csv" in text


def test_single_run_report_marks_nothing() -> None:
    text = build_report_html([_run("#1 mdav k=3", 3, 2.5, None)], CATALOG)
    assert "Protection run #1 mdav k=3" in text and "best" not in text.split("<h2>Measures")[1]
    with pytest.raises(ValueError):
        build_report_html([], CATALOG)


def test_report_of_a_real_run_holds_no_record_value() -> None:
    dataset = load_demo()
    result = run_protection(dataset, RunSpec.make("mdav-generic", 5, seed=0))
    run = report_run("#1", result, {"information_loss": result.report["information_loss"]})
    text = build_report_html([run], CATALOG)
    assert "mdav-generic" in text and "information_loss" in text
    frame = dataset.frame
    for column in ("person_id", "region", "education"):
        for value in frame[column].astype(str).unique():
            assert value not in text, (column, value)
    for value in frame["income"].astype(str).head(500):
        if len(value) >= 5:
            assert value not in text


def test_padded_range_never_below_zero_for_rates() -> None:
    """Issue 15: a percentage axis of the R-U map started at -1."""
    import numpy as np

    from microgui.core.release.report_charts import padded_range

    assert padded_range(np.array([0.0, 0.0])) == (0.0, 1.0)
    assert padded_range(np.array([0.5, 10.0]), 0.1)[0] == 0.0
    assert padded_range(np.array([20.0, 30.0]), 0.1) == (19.0, 31.0)
    assert padded_range(np.array([-2.0, 2.0]), 0.25) == (-3.0, 3.0)  # signed values keep theirs


def test_run_report_facts_carry_the_verdict() -> None:
    """Issue 29: every run of a (comparison) report shows its verdict and, per confidential
    attribute, the share of records in groups with one value (counts, never a value)."""
    import pandas as pd

    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    frame = pd.DataFrame(
        {
            "age": [20 + (i % 30) for i in range(60)],
            "zone": [f"Z{i % 3}" for i in range(60)],
            "diagnosis": [
                "DIAG-A" if i % 3 == 0 else ("DIAG-B", "DIAG-C")[i % 2] for i in range(60)
            ],
        }
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "zone": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "diagnosis": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL),
        }
    )
    dataset = Dataset.from_frame(frame, roles=roles)
    runs = [
        report_run(f"#{i} {m}", run_protection(dataset, RunSpec.make(m, 3, seed=1)), {})
        for i, m in enumerate(("mdav-generic", "p-sensitive"), start=1)
    ]
    page = build_report_html(runs, CATALOG)
    assert (
        "k-anonymous (k = 3); attribute disclosure: 30 % of records in groups with one "
        "diagnosis value (6 groups)"
    ) in page
    assert "diagnosis: 30 % (6 groups), l = 1" in page
    assert "diagnosis: 0 % (0 groups), l = 2" in page
    assert "no homogeneous group: every group has ≥ 2 values of diagnosis" in page
    assert "DIAG-" not in page
