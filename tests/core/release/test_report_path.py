"""Where the app writes an export's JSON report: one report per exported file."""

from __future__ import annotations

from pathlib import Path

from microgui.core.release.check import report_path_for


def test_a_csv_export_keeps_its_report_name() -> None:
    assert report_path_for(Path("out") / "run1.csv") == Path("out") / "run1.report.json"


def test_exports_of_one_name_in_two_formats_have_two_reports() -> None:
    names = {
        report_path_for(Path(f"run1.{ext}")) for ext in ("csv", "sav", "dta", "xlsx", "parquet")
    }
    assert len(names) == 5
    assert report_path_for(Path("run1.sav")) == Path("run1.sav.report.json")
