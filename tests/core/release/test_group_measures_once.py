"""The group measures of a release (k-anonymity, attribute disclosure per confidential
attribute) are computed once per run and passed on: the run report, the release check, the
release report and the run's measures show the same numbers from one grouping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics import disclosure
from microgui.core.release.check import check_export, export_run
from microgui.core.release.report import ReleaseReport, release_checks, release_report_makers
from microgui.core.runs import RunSpec, run_protection
from microgui.core.runs.analysis import measure_run
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import RoleMap


def _dataset(n: int = 60) -> Dataset:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "pid": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.integers(10_000, 90_000, n).astype(float),
            # one value in the first third: some groups are homogeneous
            "disease": [
                "flu" if i < n // 3 else ["asthma", "gout", "none"][i % 3] for i in range(n)
            ],
        }
    )
    roles = RoleMap.from_json(
        {
            "pid": {"role": "identifier"},
            "age": {"role": "quasi-identifier", "kind": "continuous"},
            "income": {"role": "quasi-identifier", "kind": "continuous"},
            "disease": {"role": "confidential", "kind": "nominal"},
        }
    )
    return Dataset(frame, roles)


@pytest.fixture
def groupings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the groupings of the group measures of a release (each call of the class codes
    they read on a table whose ages are not the input's: the release report also measures the
    unprotected table, its risk-utility reference point)."""
    calls: list[int] = []
    real = disclosure.class_codes
    ages = _dataset().frame["age"]

    def counted(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> np.ndarray:
        if not frame["age"].equals(ages):
            calls.append(1)
        return real(frame, *args, **kwargs)

    monkeypatch.setattr(disclosure, "class_codes", counted)
    return calls


def test_run_report_release_check_and_release_report_share_one_grouping(
    groupings: list[int],
) -> None:
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    assert len(groupings) == 1  # the run report's
    assert result.groups is not None
    check = check_export(result)
    page = ReleaseReport(dataset, result, result.protected, result.report)
    rows = {row.what: row.reached for row in page.facts.checks}
    measures, note = measure_run(dataset, result)
    assert len(groupings) == 1  # the check, the report and the measures did not group again
    assert note == ""
    # the same numbers everywhere
    assert check.k_anonymity == result.report["k_anonymity"] == result.groups.k_anonymity
    assert measures["k_anonymity"] == result.report["k_anonymity"]
    assert check.attribute_disclosure == result.report["attribute_disclosure"]
    m = result.report["attribute_disclosure"]["disease"]
    assert m["homogeneous_groups"] > 0
    assert rows["k-anonymity (smallest class of identical quasi-identifiers)"] == (
        f"{result.report['k_anonymity']:,}"
    )
    assert rows["distinct l-diversity on disease"] == f"{m['distinct_l_diversity']:,}"
    assert rows["records in groups with one disease value (homogeneous groups)"].startswith(
        f"{m['homogeneous_records']:,} of {m['n_known']:,} "
    )
    assert measures["homogeneous_percent"] == pytest.approx(m["homogeneous_percent"])


def test_an_export_with_its_reports_groups_at_most_once_more(
    tmp_path: Path, groupings: list[int]
) -> None:
    """The table as written is measured by the release check (it may differ from the run's:
    the formula rule); the release report shows that check's figures, never its own."""
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    before = len(groupings)
    report = export_run(
        dataset,
        result,
        tmp_path / "out.csv",
        tmp_path / "out.json",
        extra_reports=release_report_makers(tmp_path / "out.html", None),
    )
    # the written values equal the run's (whole numbers written as integers): not grouped again
    assert len(groupings) == before
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert written["k_anonymity"] == report["k_anonymity"] == result.report["k_anonymity"]
    assert written["attribute_disclosure"] == result.report["attribute_disclosure"]
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    m = written["attribute_disclosure"]["disease"]
    assert f"{m['homogeneous_records']:,} of {m['n_known']:,}" in html


def test_a_changed_table_is_measured_again_not_shown_with_the_runs_figures(
    groupings: list[int],
) -> None:
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    changed = result.protected.copy()
    changed["age"] = 50.0  # every record in one class: k grows
    changed["income"] = 1.0
    before = len(groupings)
    check = check_export(result, changed)
    assert len(groupings) == before + 1
    assert check.k_anonymity > result.report["k_anonymity"]
    rows = release_checks(result, changed, groups=check.groups)
    assert len(groupings) == before + 1  # the report read the check's measures
    k_row = next(r for r in rows if r.what.startswith("k-anonymity"))
    assert k_row.reached == f"{check.k_anonymity:,}"
