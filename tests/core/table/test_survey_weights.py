"""Issue 18, item 5: the survey weight role.

The weight column is released unchanged; ``weighted_means`` aggregates the continuous
quasi-identifiers by Σw·x/Σw per group (sdcMicro's ``microaggregation(weights=)``, measure
"mean"); the risk measures estimate population frequencies Fk (sums of weights) and the
individual risk of sdcMicro's ``indivRisk`` over the released quasi-identifiers (the formulas
themselves are checked against sdcMicro's own figures in
``tests/core/metrics/test_weighted_risk.py``). Bad weights are refused before the run, naming the
column and the rows.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import build_parser, main, roles_from_args
from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.metrics.evaluate import evaluate
from microgui.core.release.replay import command_for_run
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset, survey_weights
from microgui.core.table.roles import AttributeRole, RoleMap, roles_from_lists

# two obvious groups of three on x; the weights differ within each group
FRAME = pd.DataFrame(
    {
        "x": [1.0, 2.0, 3.0, 101.0, 102.0, 103.0],
        "w": [1.0, 1.0, 2.0, 10.0, 30.0, 60.0],
        "note": ["a", "b", "c", "d", "e", "f"],
    }
)


def _dataset(frame: pd.DataFrame = FRAME, weight: str | None = "w") -> Dataset:
    return Dataset(frame, roles_from_lists(list(frame.columns), qi=["x"], weight=weight))


def test_weighted_means_by_hand_and_the_weight_released_unchanged() -> None:
    result = run_protection(_dataset(), RunSpec.make("mdav", 3, {"weighted_means": "yes"}))
    # group {1, 2, 3} weights {1, 1, 2}: (1 + 2 + 6) / 4 = 2.25;
    # group {101, 102, 103} weights {10, 30, 60}: (1010 + 3060 + 6180) / 100 = 102.5
    assert result.protected["x"].tolist() == [2.25, 2.25, 2.25, 102.5, 102.5, 102.5]
    assert result.protected["w"].tolist() == FRAME["w"].tolist()
    assert result.protected["note"].tolist() == FRAME["note"].tolist()
    assert result.report["weight"] == "w"
    assert result.report["parameters"]["weighted_means"] is True
    plain = run_protection(_dataset(), RunSpec.make("mdav", 3))
    assert plain.protected["x"].tolist() == [2.0, 2.0, 2.0, 102.0, 102.0, 102.0]
    assert plain.labels.tolist() == result.labels.tolist()  # the same partition
    assert result.report["information_loss"] > plain.report["information_loss"]


def test_weighted_means_without_a_weight_column_is_refused_before_the_run() -> None:
    with pytest.raises(InvalidParameter, match="weighted_means=yes needs a survey weight"):
        run_protection(_dataset(weight=None), RunSpec.make("mdav", 3, {"weighted_means": "yes"}))


@pytest.mark.parametrize(
    ("value", "said"),
    [(0.0, "holds 0"), (-2.0, "holds -2"), (np.nan, "is missing"), ("many", "not a number")],
)
def test_a_bad_weight_is_refused_naming_column_and_row(value: object, said: str) -> None:
    frame = FRAME.astype({"w": object}).copy()
    frame.loc[4, "w"] = value
    with pytest.raises(InvalidInput, match=rf"weight column 'w'.*row 5.*{said}"):
        run_protection(_dataset(frame), RunSpec.make("mdav", 3))


def test_two_weight_columns_are_refused() -> None:
    frame = FRAME.assign(w2=FRAME["w"])
    roles = RoleMap.from_json(
        {
            "x": {"role": "quasi-identifier"},
            "w": {"role": "weight"},
            "note": {"role": "non-confidential"},
            "w2": {"role": "weight"},
        }
    )
    with pytest.raises(InvalidRoles, match="tagged as the survey weight"):
        run_protection(Dataset(frame, roles), RunSpec.make("mdav", 3))


def test_moving_the_weight_role_untags_the_previous_column() -> None:
    frame = FRAME.assign(w2=FRAME["w"] * 2)
    dataset = _dataset(frame)
    roles = dataset.edited_roles("w2", role=AttributeRole.WEIGHT)
    assert roles.weight == "w2" and roles["w"].role is AttributeRole.NON_CONFIDENTIAL
    with pytest.raises(InvalidInput, match="weight column 'note'"):
        dataset.edited_roles("note", role=AttributeRole.WEIGHT)


def test_weighted_risk_measures_by_hand() -> None:
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    measures = evaluate(dataset, result.protected)
    # two classes of fk = 3 with Fk = 4 and 100; indivRisk fk >= 3: rk = pk / (fk - (1 - pk))
    pk = np.array([3 / 4, 3 / 100])
    rk = pk / (3 - (1 - pk))
    assert measures["population_frequency_min"] == pytest.approx(4.0)
    assert measures["individual_risk_max"] == pytest.approx(100 * rk[0])
    assert measures["individual_risk_mean"] == pytest.approx(100 * rk.mean())
    assert measures["expected_reidentifications"] == pytest.approx(3 * rk.sum())
    assert measures["risky_records"] == 0  # rk all within 2 MAD of the median
    # without a weight column, none of them
    unweighted = evaluate(_dataset(weight=None), result.protected)
    assert unweighted["individual_risk_mean"] is None or "individual_risk_mean" not in unweighted


def test_cli_weight_reaches_the_report_and_the_evaluation(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    n = 200
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "region": rng.choice(["N", "S", "E"], n),
            "wt": np.round(rng.uniform(50, 500, n), 2),
        }
    )
    source, out = tmp_path / "s.csv", tmp_path / "o.csv"
    frame.to_csv(source, index=False)
    args = ["--qi", "age,region", "--nominal", "region", "--weight", "wt"]
    assert main(["protect", str(source), "-o", str(out), "--keep-order", "--method", "mdav-generic", "-k",
                 "5", "--param", "weighted_means=yes", "--report", str(tmp_path / "r.json"),
                 "-q", *args]) == 0  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["weight"] == "wt" and report["parameters"]["weighted_means"] is True
    released = pd.read_csv(out)
    assert released["wt"].tolist() == frame["wt"].tolist()
    # the released age of each group is the weighted mean of its original ages
    for _key, rows in released.groupby(["age", "region"]).groups.items():
        idx = list(rows)
        expected = np.average(frame.loc[idx, "age"], weights=frame.loc[idx, "wt"])
        assert released.loc[idx[0], "age"] == pytest.approx(expected, rel=1e-12)
    js = tmp_path / "m.json"
    assert main(["evaluate", str(source), str(out), *args, "--json", str(js)]) == 0
    measures = json.loads(js.read_text())
    measures = measures.get("measures", measures)
    # the key variable is the categorical region (sdcMicro's keyVars), not the aggregates
    fk_sums = released.assign(wt=frame["wt"]).groupby(["region"])["wt"].sum()
    assert measures["population_frequency_min"] == pytest.approx(fk_sums.min())
    assert measures["individual_risk_mean"] > 0


def test_copy_as_command_says_the_weight_and_parses_back() -> None:
    roles = roles_from_lists(list(FRAME.columns), qi=["x"], weight="w")
    command = command_for_run("t.csv", roles, RunSpec.make("mdav", 3, {"weighted_means": "yes"}))
    assert "--weight w" in command.text
    args = build_parser().parse_args(shlex.split(command.text)[1:])
    assert roles_from_args(args, list(FRAME.columns)) == roles


def test_partitioned_runs_refuse_the_weight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "s.csv"
    FRAME.to_csv(source, index=False)
    code = main(["protect", str(source), "-o", str(tmp_path / "parts"), "--keep-order", "--engine", "dask",
                 "--qi", "x", "-k", "3", "--method", "mdav", "--weight", "w"])  # fmt: skip
    assert code == 2 and "--weight" in capsys.readouterr().err


# --- the adversarial review's findings (each failed before its fix) ---------------------------
def test_weighted_means_with_strata_and_blocks() -> None:
    frame = FRAME.assign(s=["a", "a", "a", "b", "b", "b"])
    roles = roles_from_lists(list(frame.columns), qi=["x"], weight="w")
    spec = RunSpec.make("mdav", 3, {"weighted_means": "yes"}, strata=["s"])
    result = run_protection(Dataset(frame, roles), spec)
    assert result.protected["x"].tolist() == [2.25, 2.25, 2.25, 102.5, 102.5, 102.5]


def test_huge_and_tiny_weights_give_finite_weighted_means() -> None:
    frame = FRAME.assign(w=[1e300, 1e300, 1e300, 1e-300, 1e-300, 2e-300])
    result = run_protection(_dataset(frame), RunSpec.make("mdav", 3, {"weighted_means": "yes"}))
    # group 1: equal weights, the plain mean; group 2: weights 1:1:2
    assert result.protected["x"].tolist() == [2.0, 2.0, 2.0, 102.25, 102.25, 102.25]


def test_weights_written_with_decimal_commas_and_blank_cells() -> None:
    frame = FRAME.assign(w=["1,5", "2,25", "3,0", "4,5", "5,0", "6,75"])
    weights, _what = survey_weights(frame, "w")
    assert weights.tolist() == [1.5, 2.25, 3.0, 4.5, 5.0, 6.75]
    frame.loc[2, "w"] = ""
    with pytest.raises(InvalidInput, match="is missing"):
        survey_weights(frame, "w")


def test_weighted_means_and_rescaled_variance_are_not_combined() -> None:
    spec = RunSpec.make("mdav", 3, {"weighted_means": "yes", "rescale_variance": "yes"})
    with pytest.raises(InvalidParameter, match="choose one"):
        run_protection(_dataset(), spec)


def test_weight_given_twice_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["protect", "x.csv", "--weight", "a", "--weight", "b"])
    assert stop.value.code == 2
    assert "--weight is given twice" in capsys.readouterr().err


def test_weighted_risk_uses_the_categorical_keys_as_sdcmicro_does() -> None:
    """sdcMicro's freqCalc keys are categorical: with a categorical quasi-identifier the classes
    are its values (beside the sample uniques), not the continuous aggregates."""
    frame = FRAME.assign(sex=["f", "m", "f", "m", "f", "m"])
    roles = roles_from_lists(list(frame.columns), qi=["x", "sex"], nominal=["sex"], weight="w")
    dataset = Dataset(frame, roles)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 3))
    measures = evaluate(dataset, result.protected)
    released = result.protected.assign(w=frame["w"])
    fk_sums = released.groupby("sex")["w"].sum()
    assert measures["population_frequency_min"] == pytest.approx(fk_sums.min())


def test_a_weight_the_risk_refuses_leaves_the_run_and_says_risk_not_measured() -> None:
    """indivRisk refuses weights summing below their records' count; the run (which only uses
    the weights for its means) still protects, and its report says the risk was not measured,
    quoting no weight."""
    frame = FRAME.assign(w=[1e300, 1e300, 1e300, 1e-300, 1e-300, 2e-300])
    result = run_protection(_dataset(frame), RunSpec.make("mdav", 3, {"weighted_means": "yes"}))
    for key in ("risk_before", "risk_after"):
        section = result.report[key]
        assert section["keys"] == [] and section["keys_note"].startswith("not measured"), key
        assert "e-300" not in section["keys_note"] and "e+300" not in section["keys_note"]
