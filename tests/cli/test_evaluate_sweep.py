"""The command-line contract of issue 5: `microgui evaluate` and `microgui sweep`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main

#: Keys the issue requires of `evaluate --json` (and of every object of `sweep --json`).
REQUIRED = {
    "information_loss_all_qi",
    "information_loss",
    "il1",
    "il2",
    "il3",
    "il4",
    "il5",
    "il",
    "pil",
    "record_linkage",
    "interval_disclosure",
    "reidentification_risk_max",
    "reidentification_risk_mean",
    "k_anonymity",
    "l_diversity",
    "t_closeness",
}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(11)
    n = 80
    df = pd.DataFrame(
        {
            "id": [f"P{i:04d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "income": rng.lognormal(10, 0.7, n).round(2),
            "hours": rng.normal(38, 9, n).round(1),
            "edu": rng.choice(["low", "mid", "high"], n),
            "health": rng.normal(50, 10, n).round(3),
        }
    )
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


ROLES = ["--qi", "age,income,hours", "--identifiers", "id", "--confidential", "health"]


@pytest.fixture
def protected(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "protected.csv"
    code, _, err = run(
        ["protect", str(table), "-o", str(out), "--method", "mdav", "-k", "4", *ROLES], capsys
    )
    assert code == 0, err
    assert "id" not in pd.read_csv(out).columns  # PROTECTED lacks the identifier column
    return out


# --- evaluate -------------------------------------------------------------------------------------
def test_evaluate_prints_the_measures_and_writes_flat_json(
    table: Path, protected: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "measures.json"
    code, stdout, err = run(
        ["evaluate", str(table), str(protected), *ROLES, "--json", str(out)], capsys
    )
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    assert REQUIRED <= set(data)
    # flat numbers, and one breakdown (issue 13): column -> its information-loss measures
    by_attribute = data.pop("information_loss_by_attribute")
    utility = data.pop("utility")  # issue 29: distributions, associations, crosstabs, models
    assert set(utility) == {"distributions", "associations", "crosstabs", "models"}
    assert set(by_attribute) == {"age", "income", "hours"}
    assert all(m["information_loss"] >= 0 for m in by_attribute.values())
    assert "information loss by quasi-identifier" in stdout
    # and the release's verdict (issue 29): per confidential attribute, and its line
    disclosure = data.pop("attribute_disclosure")
    verdict = data.pop("verdict")
    assert set(disclosure) == {"health"}
    assert data["homogeneous_percent"] == disclosure["health"]["homogeneous_percent"]
    assert f"verdict: {verdict['text']}" in stdout
    assert all(v is None or isinstance(v, int | float) for v in data.values())
    assert data["k_anonymity"] >= 4
    assert 0 <= data["record_linkage"] <= 100 / 4 + 1e-9
    assert data["reidentification_risk_max"] <= 25 + 1e-9
    lines = stdout.splitlines()
    header = next(line for line in lines if line.startswith("measure"))
    assert header.split()[:3] == ["measure", "value", "unit"]
    assert any("record_linkage" in line for line in lines)
    # only the measures that apply are printed
    body = lines[lines.index(header) + 2 :]
    body = body[: body.index("")] if "" in body else body  # the correlations table follows
    shown = {line.split()[-1] for line in body}
    assert shown == {k for k, v in data.items() if v is not None}
    assert "correlations of the continuous quasi-identifiers" in stdout
    assert any(line.startswith("age ~ hours") for line in lines)


def test_evaluate_regression_side_by_side(
    table: Path, protected: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.json"
    code, stdout, err = run(
        ["evaluate", str(table), str(protected), *ROLES, "--regression", "health~age+income",
         "--json", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "regression health ~ age + income (OLS with intercept)" in stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    original = pd.read_csv(table)
    x = np.column_stack([np.ones(len(original)), original["age"], original["income"]])
    beta = np.linalg.lstsq(x, original["health"].to_numpy(), rcond=None)[0]
    assert data["regression health~age+income age original"] == pytest.approx(beta[1])
    prot = pd.read_csv(protected)
    xp = np.column_stack([np.ones(len(prot)), prot["age"], prot["income"]])
    beta_p = np.linalg.lstsq(xp, prot["health"].to_numpy(), rcond=None)[0]
    assert data["regression health~age+income income protected"] == pytest.approx(beta_p[2])
    assert data["regression_max_relative_change"] >= 0
    for bad, words in (("health", "write it as Y~X1+X2"), ("health~nope", "no column 'nope'")):
        code, out_text, err = run(
            ["evaluate", str(table), str(protected), *ROLES, "--regression", bad], capsys
        )
        assert code == 2 and words in err, err


def test_evaluate_an_unprotected_copy_links_every_record(
    table: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "m.json"
    code, _, err = run(["evaluate", str(table), str(table), *ROLES, "--json", str(out)], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["record_linkage"] == pytest.approx(100.0)


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_evaluate_refuses_tables_of_different_lengths(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = tmp_path / "short.csv"
    pd.read_csv(table).iloc[:-3].to_csv(short, index=False)
    out = tmp_path / "m.json"
    code, stdout, err = run(
        ["evaluate", str(table), str(short), *ROLES, "--json", str(out)], capsys
    )
    line = _one_line_error(code, stdout, err)
    assert "people.csv" in line and "short.csv" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--qi", "age,nope"], "nope"),
        ([], "--qi"),
        (["--qi", "age", "--ordinal", "=a<b"], "--ordinal"),
        (["--qi", "age,income", "--nominal", "edu"], "edu"),
    ],
)
def test_evaluate_user_errors(
    table: Path,
    protected: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fragment: str,
) -> None:
    out = tmp_path / "m.json"
    code, stdout, err = run(
        ["evaluate", str(table), str(protected), *extra, "--json", str(out)], capsys
    )
    assert fragment in _one_line_error(code, stdout, err)
    assert not out.exists()


def test_evaluate_refuses_a_protected_table_without_a_quasi_identifier(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "cut.csv"
    pd.read_csv(table).drop(columns=["hours"]).to_csv(cut, index=False)
    code, stdout, err = run(["evaluate", str(table), str(cut), *ROLES], capsys)
    line = _one_line_error(code, stdout, err)
    assert "cut.csv" in line and "hours" in line


def test_evaluate_json_may_not_overwrite_an_input(
    table: Path, protected: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = protected.read_bytes()
    code, stdout, err = run(
        ["evaluate", str(table), str(protected), *ROLES, "--json", str(protected)], capsys
    )
    assert "input" in _one_line_error(code, stdout, err)
    assert protected.read_bytes() == before


def test_evaluate_adds_linkage_and_generalization_keys(
    table: Path, protected: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.json"
    code, _, err = run(
        ["evaluate", str(table), str(protected), *ROLES, "-k", "4", "--json", str(out)], capsys
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    assert REQUIRED <= set(data)  # the contract keys stay
    assert 0 <= data["probabilistic_record_linkage"] <= 100 / 4 + 1e-9
    assert data["dm"] >= 80 * 4 and data["cavg"] >= 1.0
    assert data["generalization_il"] is None  # no --hierarchy
    weighted = tmp_path / "w.json"
    code, _, err = run(
        ["evaluate", str(table), str(protected), *ROLES, "--json", str(weighted)]
        + ["--score-weights", "il=1,id=1,dbrl=0,prl=0"],
        capsys,
    )
    assert code == 0, err
    w = json.loads(weighted.read_text())
    assert w["score"] == pytest.approx(w["il"])
    assert w["cavg"] is None  # no -k


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--score-weights", "id=0.9"], "sum to"),
        (["--score-weights", "foo=1"], "foo"),
        (["--score-weights", "il"], "NAME=VALUE"),
        (["-k", "two"], "-k"),
        (["--hierarchy", "age"], "--hierarchy"),
        (["--hierarchy", "health=h.csv"], "health"),
    ],
)
def test_evaluate_option_errors(
    table: Path,
    protected: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fragment: str,
) -> None:
    out = tmp_path / "m.json"
    code, stdout, err = run(
        ["evaluate", str(table), str(protected), *ROLES, *extra, "--json", str(out)], capsys
    )
    assert fragment in _one_line_error(code, stdout, err)
    assert not out.exists()


def test_evaluate_generalized_release_with_a_hierarchy(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hierarchy = tmp_path / "age.csv"
    hierarchy.write_text(
        "\n".join(f"{a};[{a // 20 * 20}-{a // 20 * 20 + 19}];*" for a in range(0, 100)),
        encoding="utf-8",
    )
    frame = pd.read_csv(table)
    released = frame.assign(age=[f"[{a // 20 * 20}-{a // 20 * 20 + 19}]" for a in frame["age"]])
    path = tmp_path / "released.csv"
    released.drop(columns=["id"]).to_csv(path, index=False)
    out = tmp_path / "m.json"
    argv = ["evaluate", str(table), str(path), "--qi", "age", "--identifiers", "id"]
    code, _, err = run([*argv, "--hierarchy", f"age={hierarchy}", "--json", str(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    # 004 eq. 6: an interval [a, a+19] holds 20 of the 100 values 0..99: (19 - 0)/99 each
    assert data["generalization_il"] == pytest.approx(19 / 99)
    sizes = released["age"].value_counts()
    assert data["dm"] == int((sizes**2).sum())


# --- sweep ----------------------------------------------------------------------------------------
def test_sweep_writes_one_object_per_run(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.json"
    code, stdout, err = run(
        [
            "sweep",
            str(table),
            *ROLES,
            "--methods",
            "mdav,mst",
            "--k",
            "3,5",
            "--param",
            "rescale_variance=false,true",
            "--seed",
            "2",
            "--workers",
            "1",
            "--json",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    runs = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(runs, list) and len(runs) == 8
    for obj in runs:
        assert list(obj)[:3] == ["method", "k", "parameters"]
        assert REQUIRED | {"seconds", "error"} <= set(obj)
        assert obj["error"] is None
        assert obj["k_anonymity"] >= obj["k"]
        assert obj["seed"] == 2
        assert isinstance(obj["parameters"], dict)
    assert {(o["method"], o["k"], o["parameters"]["rescale_variance"]) for o in runs} == {
        (m, k, r) for m in ("mdav", "mst") for k in (3, 5) for r in (False, True)
    }
    header = stdout.splitlines()[0].split()
    assert header[:3] == ["method", "k", "parameters"] and "record_linkage" in header
    assert sum(line.startswith(("mdav ", "mst ")) for line in stdout.splitlines()) == 8


def test_sweep_records_a_failed_run(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.json"
    code, stdout, err = run(
        [
            "sweep",
            str(table),
            *ROLES,
            "--methods",
            "optimal,mdav",
            "--k",
            "3",
            "--workers",
            "1",
            "--json",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    optimal, mdav = json.loads(out.read_text())
    assert optimal["method"] == "optimal" and "records" in optimal["error"]
    assert optimal["record_linkage"] is None
    assert mdav["error"] is None and mdav["record_linkage"] is not None
    assert "1 of 2 runs failed" in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--methods", "mdav,nope", "--k", "3"], "nope"),
        (["--methods", "mdav", "--k", "1"], "k=1"),
        (["--methods", "mdav", "--k", "3,x"], "'x'"),
        (["--methods", "mdav", "--k", "500"], "500"),
        (["--methods", "mdav", "--k", "3", "--param", "nope=1"], "nope"),
        (["--methods", "mdav", "--k", "3", "--param", "rescale_variance"], "NAME=VALUE"),
        (["--methods", "mdav", "--k", "3", "--workers", "0"], "--workers"),
        (["--methods", "mdav", "--k", "3", "--seed", "x"], "--seed"),
        (["--k", "3"], "--methods"),
        (["--methods", "mdav"], "--k"),
    ],
)
def test_sweep_user_errors(
    table: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    fragment: str,
) -> None:
    out = tmp_path / "sweep.json"
    code, stdout, err = run(["sweep", str(table), *ROLES, *args, "--json", str(out)], capsys)
    assert fragment in _one_line_error(code, stdout, err)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


def test_sweep_without_qi_and_with_json_on_the_input(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, err = run(["sweep", str(table), "--methods", "mdav", "--k", "3"], capsys)
    assert "--qi" in _one_line_error(code, stdout, err)
    before = table.read_bytes()
    code, stdout, err = run(
        ["sweep", str(table), *ROLES, "--methods", "mdav", "--k", "3", "--json", str(table)],
        capsys,
    )
    assert "input" in _one_line_error(code, stdout, err)
    assert table.read_bytes() == before


def test_sweep_in_parallel_from_the_console(table: Path, tmp_path: Path) -> None:
    """`python -m microgui sweep --workers 2`: worker processes start from a real entry point."""
    out = tmp_path / "sweep.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "microgui",
            "sweep",
            str(table),
            *ROLES,
            "--methods",
            "mdav,mst",
            "--k",
            "3,4",
            "--workers",
            "2",
            "--seed",
            "0",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(out.read_text())
    assert [(r["method"], r["k"]) for r in runs] == [
        ("mdav", 3),
        ("mdav", 4),
        ("mst", 3),
        ("mst", 4),
    ]
    assert all(r["error"] is None for r in runs)
