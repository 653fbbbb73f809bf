"""Issue 30, item 5: an SPSS or Stata release of columns the format cannot name, under valid
names (``protect --rename-invalid`` / ``--rename OLD=NEW``); the report lists the original
names with the released ones, and labels follow their column (pyreadstat round trip)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from microgui.cli import main


def _adult_like(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "marital-status": rng.choice(["married", "single", "widowed"], n),
            "age": rng.integers(18, 90, n),
            "hours per week": rng.integers(10, 60, n),
            "in": rng.integers(0, 3, n),
        }
    )
    path = tmp_path / "adult.csv"
    frame.to_csv(path, index=False)
    return path


def _protect(source: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "protect", str(source), "-o", str(out), "--keep-order", "--identifiers", "id",
            "--qi", "marital-status,age,hours per week", "--nominal", "marital-status",
            "-k", "4", "--method", "mdav-generic", "--report", str(out.with_suffix(".json")),
            *extra,
        ]
    )  # fmt: skip


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_invalid_names_refused_without_the_option_and_renamed_with_it(
    tmp_path: Path, ext: str
) -> None:
    source = _adult_like(tmp_path)
    out = tmp_path / f"out{ext}"
    assert _protect(source, out) != 0
    assert not out.exists()
    assert _protect(source, out, "--rename-invalid") == 0
    frame, _meta = (pyreadstat.read_sav if ext == ".sav" else pyreadstat.read_dta)(str(out))
    assert list(frame.columns[:3]) == ["marital_status", "age", "hours_per_week"]
    assert "marital-status" not in frame.columns
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    renamed = report["renamed_columns"]
    assert renamed["marital-status"] == "marital_status"
    assert renamed["hours per week"] == "hours_per_week"
    if ext == ".dta":
        assert renamed["in"] == "in_" and frame.columns[3] == "in_"
    else:
        assert "in" not in renamed and frame.columns[3] == "in"
    originals = [v["name"] for v in report["variables"]]
    assert originals == ["marital-status", "age", "hours per week", "in"]
    assert [v["released_as"] for v in report["variables"]] == list(frame.columns)
    # the released cells are the CSV release's under the original names
    csv = tmp_path / "same.csv"
    assert _protect(source, csv) == 0
    plain = pd.read_csv(csv)
    assert list(frame["marital_status"]) == list(plain["marital-status"])
    assert np.allclose(frame["age"], plain["age"])


def test_explicit_rename_is_checked_and_labels_follow_the_column(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 100
    frame = pd.DataFrame(
        {
            "id": np.arange(n, dtype=float),
            "sex": rng.integers(1, 3, n).astype(float),
            "age": rng.integers(18, 90, n).astype(float),
        }
    )
    sav = tmp_path / "in.sav"
    pyreadstat.write_sav(
        frame, sav, variable_value_labels={"sex": {1: "male", 2: "female"}},
        column_labels={"sex": "Sex of respondent", "age": "Age"},
    )  # fmt: skip
    out = tmp_path / "out.sav"
    base = ["protect", str(sav), "-o", str(out), "--keep-order", "--identifiers", "id", "--qi", "sex,age",
            "--nominal", "sex", "-k", "4", "--method", "mdav-generic"]  # fmt: skip
    assert main([*base, "--rename", "sex=1bad"]) != 0 and not out.exists()
    assert main([*base, "--rename", "sex=age"]) != 0 and not out.exists()  # a duplicate
    assert main([*base, "--rename", "sex=gender", "--report", str(tmp_path / "r.json")]) == 0
    released, meta = pyreadstat.read_sav(str(out))
    assert list(released.columns) == ["gender", "age"]
    assert meta.variable_value_labels.get("gender") == {1.0: "male", 2.0: "female"}
    assert meta.column_names_to_labels["gender"] == "Sex of respondent"
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["renamed_columns"] == {"sex": "gender"}
    assert "male" not in json.dumps(report["variables"])  # names only, never a category


def test_rename_is_refused_for_a_csv_output(tmp_path: Path) -> None:
    source = _adult_like(tmp_path)
    out = tmp_path / "out.csv"
    assert _protect(source, out, "--rename", "age=years") != 0
    assert _protect(source, out, "--rename-invalid") == 0  # nothing to rename in a CSV
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert "renamed_columns" not in report
