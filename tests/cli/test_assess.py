"""``microgui assess`` (issue 29 item 2): the printed summary, ``--json`` and its one-line errors,
and the same figures under the same keys as the run report's ``risk_before`` / ``risk_after``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """60 records: one unique combination of (edu, region); values that never may be printed."""
    rng = np.random.default_rng(3)
    n = 60
    edu = rng.choice(["EDUlow", "EDUmid", "EDUhigh"], n)
    region = rng.choice(["REGnorth", "REGsouth"], n)
    edu[0], region[0] = "EDUrare", "REGnorth"
    df = pd.DataFrame(
        {
            "id": [f"PERSON{i:04d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "edu": edu,
            "region": region,
            "health": rng.choice(["HEALTHgood", "HEALTHbad"], n),
            "w": rng.uniform(20, 40, n).round(1),
        }
    )
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return path


ROLES = ["--qi", "age,edu,region", "--nominal", "edu,region", "--confidential", "health",
         "--identifiers", "id"]  # fmt: skip


def test_assess_prints_the_summary_and_writes_json(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "risk.json"
    code, text, err = run(["assess", str(table), *ROLES, "-k", "3", "--json", str(out)], capsys)
    assert code == 0, err
    risk = json.loads(out.read_text(encoding="utf-8"))
    assert risk["keys"] == ["edu", "region"] and risk["k"] == 3 and risk["n_records"] == 60
    assert "'age' left out" in risk["keys_note"]
    ka = risk["k_anonymity"]
    assert ka["records_in_cells_of_size_1"] >= 1 and ka["level"] == 1
    assert {"columns": ["edu"], "cells_below_k": 1, "records_below_k": 1} in ka[
        "worst_combinations"
    ]
    assert set(risk) >= {"individual_risk", "suda2", "l_diversity", "seconds"}
    n1 = ka["records_in_cells_of_size_1"]
    assert re.search(rf"in key cells of size 1 \(sample uniques\) +{n1} ", text), text
    assert "smallest key combinations that break k = 3" in text
    assert "health" in text and "missing key values match any value" in text
    for word in ("PERSON", "EDU", "REG", "HEALTH"):  # no value of any record
        assert word not in text and word not in out.read_text(encoding="utf-8")


def test_weight_column(table: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, text, err = run(
        ["assess", str(table), *ROLES, "--weight", "w", "--json", str(out), "--no-suda"], capsys
    )
    assert code == 0, err
    risk = json.loads(out.read_text(encoding="utf-8"))
    assert risk["individual_risk"]["weighted"] is True and risk["suda2"] is None
    assert "weight column 'w'" in text


def test_errors_are_one_line(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["assess", str(table), "--qi", "age"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "no categorical key: tag a quasi-identifier nominal or ordinal" in err
    code, _, err = run(["assess", str(table), "--qi", "nope", "--nominal", "nope"], capsys)
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    code, _, err = run(["assess", str(table)], capsys)
    assert code == 2 and "--qi" in err and err.count("\n") == 1
    code, _, err = run(["assess", str(table), *ROLES, "-k", "0"], capsys)
    assert code == 2 and "-k 0 must be at least 1" in err
    code, _, err = run(["assess", str(table), *ROLES, "--json", str(table)], capsys)
    assert code == 2 and err.count("\n") == 1  # the input is never overwritten
    assert "PERSON0000" in table.read_text(encoding="utf-8")


def test_hostile_column_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = ["line\nbreak", 'quo"te', "=cmd|' /C calc'!A0", "y" * 200, "ünï 名前"]
    rng = np.random.default_rng(1)
    df = pd.DataFrame({n: rng.choice(["VALa", "VALb", "VALc"], 30) for n in names})
    path = tmp_path / "hostile.csv"
    df.to_csv(path, index=False)
    roles = {"columns": {n: {"role": "quasi-identifier", "kind": "nominal"} for n in names[:4]}}
    roles["columns"][names[4]] = {"role": "confidential", "kind": "nominal"}
    roles_path = tmp_path / "roles.json"
    roles_path.write_text(json.dumps(roles), encoding="utf-8")
    out = tmp_path / "r.json"
    code, text, err = run(
        ["assess", str(path), "--roles", str(roles_path), "--json", str(out), "--no-suda"], capsys
    )
    assert code == 0, err
    risk = json.loads(out.read_text(encoding="utf-8"))
    assert risk["keys"] == names[:4] and list(risk["l_diversity"]) == [names[4]]
    assert "line\\nbreak" in text and "line\nbreak" not in text  # one printed line per row
    assert "y" * 200 not in text and "…" in text
    assert "VAL" not in text and "VAL" not in out.read_text(encoding="utf-8")


def test_same_keys_as_the_run_report(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assess_json, report = tmp_path / "a.json", tmp_path / "rep.json"
    code, _, err = run(
        ["assess", str(table), *ROLES, "-k", "3", "--json", str(assess_json)], capsys
    )
    assert code == 0, err
    code, _, err = run(
        ["protect", str(table), "-o", str(tmp_path / "o.csv"), "--method", "mdav-generic",
         "-k", "3", *ROLES, "--seed", "1", "--report", str(report), "--quiet"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rep = json.loads(report.read_text(encoding="utf-8"))
    risk = json.loads(assess_json.read_text(encoding="utf-8"))
    before, after = rep["risk_before"], rep["risk_after"]
    assert set(before) == set(risk) == set(after)
    assert before["keys"] == after["keys"] == risk["keys"]
    for section in ("k_anonymity", "individual_risk", "l_diversity"):
        assert before[section] == risk[section]
    assert after["k_anonymity"]["level"] >= before["k_anonymity"]["level"]
    text = report.read_text(encoding="utf-8")
    for word in ("PERSON", "EDU", "REG", "HEALTH"):
        assert word not in text


def test_keys_alone_with_a_weight(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    argv = ["assess", str(table), "--keys", "edu,region", "--weight", "w", "--json", str(out)]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    risk = json.loads(out.read_text(encoding="utf-8"))
    assert risk["keys"] == ["edu", "region"] and risk["individual_risk"]["weighted"] is True
    code, _, err = run(["assess", str(table), "--keys", "edu,nope"], capsys)
    assert code == 2 and "nope" in err and err.count("\n") == 1
