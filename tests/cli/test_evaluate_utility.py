"""`microgui evaluate` on categorical and mixed data (issue 29): distributions and associations by
default, `--crosstab A,B` and `--model 'Y ~ X'` on request, under the JSON key `utility`, with no
category in the JSON or the printed output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main

#: Category values that must never reach a report (distinctive so that a leak cannot hide).
LEVELS = {"edu": ["EduAlpha", "EduBeta", "EduGamma"], "sex": ["SexFem", "SexMal"]}
PAY = ["PayLow", "PayHigh"]


@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(4)
    n = 120
    age = rng.integers(18, 80, n)
    edu = rng.choice(LEVELS["edu"], n)
    sex = rng.choice(LEVELS["sex"], n)
    score = -3 + 0.05 * age + (edu == "EduGamma") * 1.0 + rng.normal(0, 1, n)
    pay = np.where(score > 0, PAY[1], PAY[0])
    original = pd.DataFrame({"age": age, "edu": edu, "sex": sex, "pay": pay})
    released = original.copy()
    released["age"] = (released["age"] // 5 * 5 + 2).astype(float)
    flip = rng.random(n) < 0.1
    released.loc[flip, "edu"] = "EduBeta"
    a, b = tmp_path / "original.csv", tmp_path / "released.csv"
    original.to_csv(a, index=False)
    released.to_csv(b, index=False)
    return a, b


ROLES = ["--qi", "age,edu,sex", "--nominal", "edu,sex", "--confidential", "pay"]


def test_utility_keys_printed_and_free_of_categories(
    tables: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tables
    out = tmp_path / "m.json"
    code = main(
        [
            "evaluate", str(a), str(b), *ROLES, "--json", str(out),
            "--crosstab", "edu,pay", "--crosstab", "age,sex",
            "--model", "pay ~ age + edu + sex", "--model", "age ~ edu",
        ]
    )  # fmt: skip
    stdout = capsys.readouterr().out
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    utility = data["utility"]
    assert set(utility["distributions"]) == {"age", "edu", "sex", "pay"}
    assert utility["distributions"]["edu"]["hellinger"] > 0
    assert utility["distributions"]["sex"]["hellinger"] == 0
    assert utility["associations"]["columns"] == ["age", "edu", "sex", "pay"]
    assert [c["a"] + "," + c["b"] for c in utility["crosstabs"]] == ["edu,pay", "age,sex"]
    logit, ols = utility["models"]
    assert logit["kind"] == "logit" and ols["kind"] == "ols"
    assert [c["term"] for c in logit["coefficients"]] == [
        "(intercept)", "age", "edu#2", "edu#3", "sex#2",
    ]  # fmt: skip
    assert all(-10 < c["overlap"] <= 1 for c in logit["coefficients"])
    # the flat measures of issue 29 sit beside the others
    assert data["hellinger_max"] == pytest.approx(
        max(d["hellinger"] for d in utility["distributions"].values())
    )
    assert data["association_change_max"] == utility["associations"]["max_abs_difference"]
    for text in ("distributions, original vs released", "cross-tabulation edu x pay",
                 "model pay ~ age + edu + sex (logistic regression", "mean CI overlap"):  # fmt: skip
        assert text in stdout
    leaked = [v for v in (*LEVELS["edu"], *LEVELS["sex"], *PAY) if v in stdout + out.read_text()]
    assert leaked == []


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--crosstab", "edu"], "give two columns"),
        (["--crosstab", "edu,nope"], "no column 'nope'"),
        (["--model", "pay age"], "write it as"),
        (["--model", "pay ~ nope"], "no column 'nope'"),
        (["--model", "edu ~ age"], "3 categories"),
    ],
)
def test_utility_option_errors_are_one_line(
    tables: tuple[Path, Path], option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tables
    code = main(["evaluate", str(a), str(b), *ROLES, *option])
    err = capsys.readouterr().err
    assert code != 0
    assert message in err
    assert "Traceback" not in err
