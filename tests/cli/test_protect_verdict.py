"""``protect`` says the release's verdict (issue 29): a ``warning:`` line when a group shares one
confidential value, the same words in the JSON report, and no refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_sets import shared_path

from microgui.cli import main

ADULT_QIS = "sex,age,race,marital-status,education,native-country,workclass,occupation"
ADULT_NOMINAL = "sex,race,marital-status,education,native-country,workclass,occupation"


@pytest.mark.shared
def test_adult_mdav_generic_k5_warns_of_attribute_disclosure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UCI Adult, salary-class confidential, every other column a quasi-identifier,
    mdav-generic k = 5: about half the records sit in groups whose salary-class is one value
    (issue 29 measured 15,310 of 30,162, 51 %; the exact count depends on the seed's ties)."""
    source = shared_path("adult", "adult.csv")
    out, report_path = tmp_path / "adult_k5.csv", tmp_path / "adult_k5.report.json"
    code = main(["protect", str(source), "-o", str(out), "--qi", ADULT_QIS, "--nominal",
                 ADULT_NOMINAL, "--confidential", "salary-class", "-k", "5", "--method",
                 "mdav-generic", "--seed", "1", "--report", str(report_path), "-q"])  # fmt: skip
    assert code == 0  # warned, not refused
    err = capsys.readouterr().err
    report = json.loads(report_path.read_text(encoding="utf-8"))
    salary = report["attribute_disclosure"]["salary-class"]
    assert salary["n_known"] == 30_162 and salary["distinct_l_diversity"] == 1
    assert 45.0 <= salary["homogeneous_percent"] <= 56.0
    share = round(salary["homogeneous_percent"])
    line = next(x for x in err.splitlines() if x.startswith("warning: k-anonymous (k = 5)"))
    assert (
        f"attribute disclosure: {share} % of records in groups with one salary-class value" in line
    )
    assert report["verdict"]["text"] in line
    assert "p-sensitive" in line and "t-closeness" in line
    assert report["released_with_attribute_disclosure"] is True
    assert report["verdict"]["level"] == "attribute_disclosure"
    assert err.count("released with attribute disclosure: ") == 0  # the log line not repeated


def _small(tmp_path: Path) -> Path:
    """60 records; zone Z0 always has DIAG-A (its groups disclose it)."""
    rows = ["age,zone,diagnosis"] + [
        f"{20 + i % 30},Z{i % 3},{'DIAG-A' if i % 3 == 0 else ('DIAG-B', 'DIAG-C')[i % 2]}"
        for i in range(60)
    ]
    path = tmp_path / "small.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("mdav-generic", "warning: k-anonymous (k = 3); attribute disclosure: 30 % of records"),
        ("p-sensitive", "  verdict: k-anonymous (k = 3); no homogeneous group"),
    ],
)
def test_protect_prints_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str, expected: str
) -> None:
    source = _small(tmp_path)
    report_path = tmp_path / "r.json"
    code = main(["protect", str(source), "-o", str(tmp_path / "o.csv"), "--qi", "age,zone",
                 "--nominal", "zone", "--confidential", "diagnosis", "-k", "3", "--method",
                 method, "--seed", "1", "--report", str(report_path), "-q"])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert expected in err
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["verdict"]["text"] in err
    assert report["released_with_attribute_disclosure"] is (method == "mdav-generic")
    assert "DIAG-" not in err and "DIAG-" not in report_path.read_text(encoding="utf-8")
