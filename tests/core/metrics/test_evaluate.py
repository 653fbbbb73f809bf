"""evaluate(): the flat measures dict of issue 5 (contract keys, None rules, speed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from reference_sets import SEED_EXAMPLES, adult_frame, census

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.io import read_table
from microgui.core.metrics.evaluate import (
    BREAKDOWNS,
    HIGHER,
    LOWER,
    MEASURES,
    SCORE_WEIGHTS,
    evaluate,
    measure_label,
    parse_score_weights,
)
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.hierarchy import Hierarchy, load_hierarchy
from microgui.core.table.roles import roles_from_lists

CONTRACT = (
    "information_loss_all_qi information_loss il1 il2 il3 il4 il5 il pil record_linkage interval_disclosure "
    "reidentification_risk_max reidentification_risk_mean k_anonymity l_diversity t_closeness"
).split()
CONTINUOUS = "il1 il2 il3 il4 il5 il pil information_loss interval_disclosure".split()


def _small() -> Dataset:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(60)],
            "x": rng.normal(50, 10, 60),
            "y": rng.normal(0, 1, 60) + 3,
            "sal": rng.choice(["low", "mid", "high"], 60),
        }
    )
    roles = roles_from_lists(frame.columns, qi=["x", "y"], identifiers=["id"], confidential=["sal"])
    return Dataset.from_frame(frame, roles)


def test_contract_keys_and_measures_table() -> None:
    ds = _small()
    result = run_protection(ds, RunSpec.make("mdav", 3, seed=1))
    m = evaluate(ds, result.protected, labels=result.labels)
    for key in CONTRACT:
        assert key in m
    assert set(m) <= set(MEASURES) | set(BREAKDOWNS)  # a breakdown is no single number
    for label, unit, direction, group in MEASURES.values():
        assert label and direction in (LOWER, HIGHER) and group in ("utility", "risk")
        assert isinstance(unit, str)
    assert measure_label("record_linkage") == "distance-based record linkage (%)"
    assert m["k_anonymity"] == 3
    assert m["record_linkage"] is not None and m["record_linkage"] <= 100 / 3 + 1e-9
    assert m["reidentification_risk_max"] == pytest.approx(100 / 3)
    assert m["l_diversity"] is not None and m["l_diversity"] >= 1
    assert m["t_closeness"] is not None and 0 <= m["t_closeness"] <= 1
    assert m["il2"] == pytest.approx(0.0, abs=1e-12)
    assert m["n_groups"] == result.n_groups
    assert m["dist"] is None and m["sample_uniques"] is None  # no categorical QI
    il = m["il"]
    dr = (  # Domingo-Ferrer & Torra's weights ½, ¼, ¼
        0.5 * m["interval_disclosure"]  # type: ignore[operator]
        + 0.25 * m["record_linkage"]  # type: ignore[operator]
        + 0.25 * m["probabilistic_record_linkage"]  # type: ignore[operator]
    )
    assert m["score"] == pytest.approx((il + dr) / 2)  # type: ignore[operator]
    prl = m["probabilistic_record_linkage"]
    assert prl is not None and 0 <= prl <= 100 / 3 + 1e-9


def test_unprotected_copy() -> None:
    ds = _small()
    m = evaluate(ds, ds.frame.drop(columns=["id"]))
    assert m["record_linkage"] == pytest.approx(100.0)
    assert m["probabilistic_record_linkage"] == pytest.approx(100.0)
    assert m["interval_disclosure"] == pytest.approx(100.0)
    assert m["il"] == pytest.approx(0.0, abs=1e-9)
    assert m["pil"] == pytest.approx(0.0, abs=1e-9)
    assert m["reidentification_risk_max"] == pytest.approx(100.0)
    assert m["n_groups"] is None


def test_text_original_and_generalized_protected() -> None:
    ds = _small()
    text = ds.frame.astype({"x": str, "y": str})  # a CSV read as text
    text_ds = Dataset.from_frame(text, ds.roles)
    protected = run_protection(ds, RunSpec.make("mdav", 4, seed=2)).protected
    a, b = evaluate(ds, protected), evaluate(text_ds, protected)
    for key in CONTINUOUS + ["record_linkage"]:
        assert a[key] == pytest.approx(b[key])
    generalized = protected.copy()
    generalized["x"] = np.where(protected["x"] < 50, "[0-50)", "[50-100]")
    g = evaluate(ds, generalized)
    for key in CONTINUOUS + ["record_linkage", "pil_quantiles"]:
        assert g[key] is None
    assert g["k_anonymity"] >= 1 and g["l_diversity"] is not None


def test_no_confidential_no_attribute_disclosure() -> None:
    ds = _small()
    roles = roles_from_lists(ds.frame.columns, qi=["x", "y"], identifiers=["id"])
    ds2 = Dataset.from_frame(ds.frame, roles)
    m = evaluate(ds2, run_protection(ds2, RunSpec.make("mdav", 3, seed=1)).protected)
    for key in ("l_diversity", "t_closeness", "p_sensitivity", "entropy_l_diversity"):
        assert m[key] is None


def test_categorical_quasi_identifiers_on_adult() -> None:
    adult = adult_frame(subset=True)
    roles = roles_from_lists(
        adult.columns,
        qi=["sex", "race", "marital-status", "education"],
        nominal=["sex", "race", "marital-status", "education"],
        confidential=["salary-class"],
    )
    ds = Dataset.from_frame(adult, roles)
    result = run_protection(ds, RunSpec.make("mdav-generic", 5, seed=1))
    m = evaluate(ds, result.protected, labels=result.labels)
    for key in ("il1", "il", "pil", "interval_disclosure", "information_loss"):
        assert m[key] is None  # no continuous quasi-identifier
    assert m["dist"] is not None and m["dist"] > 0
    assert m["ctbil"] is not None and m["actbil"] is not None and m["ebil"] is not None
    assert m["sample_uniques"] == 0
    assert m["k_anonymity"] is not None and m["k_anonymity"] >= 5
    assert m["record_linkage"] is not None and m["record_linkage"] <= 100 / 5 + 1e-9
    assert m["l_diversity"] in (1, 2)
    assert m["score"] is not None
    copy = evaluate(ds, adult)
    assert copy["dist"] == 0 and copy["ctbil"] == 0 and copy["ebil"] == 0


def test_progress_and_cancel() -> None:
    ds = _small()
    seen: list[float] = []
    evaluate(ds, ds.frame.drop(columns=["id"]), progress=lambda f, s="": seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)

    def cancel(fraction: float, status: str = "") -> None:
        if fraction > 0.3:
            raise RunCancelled

    with pytest.raises(RunCancelled):
        evaluate(ds, ds.frame.drop(columns=["id"]), progress=cancel)


def test_census_interval_disclosure_falls_with_k() -> None:
    ds = Dataset.from_frame(census())
    values = []
    for k in (3, 5, 10):
        result = run_protection(ds, RunSpec.make("mdav", k, seed=1))
        m = evaluate(ds, result.protected)
        assert m["record_linkage"] is not None and m["record_linkage"] <= 100 / k + 1e-9
        values.append(m["interval_disclosure"])
    assert values[0] > values[1] > values[2]


def test_all_measures_on_50000_records() -> None:
    """Every measure runs at 50,000 records (its time is a benchmark row, not asserted here)."""
    rng = np.random.default_rng(0)
    n = 50_000
    frame = pd.DataFrame(rng.normal(size=(n, 6)) * np.arange(1, 7) + 10, columns=list("abcdef"))
    frame["conf"] = rng.integers(0, 5, n)
    roles = roles_from_lists(frame.columns, qi=list("abcdef"), confidential=["conf"])
    ds = Dataset.from_frame(frame, roles)
    result = run_protection(ds, RunSpec.make("mdav", 5, seed=1))
    m = evaluate(ds, result.protected, labels=result.labels)
    assert m["min_group_size"] is not None and m["min_group_size"] >= 5
    assert m["probabilistic_record_linkage"] is not None
    assert m["record_linkage"] is not None and m["record_linkage"] <= 20.0 + 1e-9


# --------------------------------------------------------------------------------------------
# score weights, probabilistic linkage, DM, CAVG and generalization IL (004 §7)
# --------------------------------------------------------------------------------------------


def test_score_weights_are_documented_adjustable_and_validated() -> None:
    ds = _small()
    protected = run_protection(ds, RunSpec.make("mdav", 3, seed=1)).protected
    base = evaluate(ds, protected)
    assert SCORE_WEIGHTS == {"il": 0.5, "id": 0.5, "dbrl": 0.25, "prl": 0.25}
    il, idr = base["il"], base["interval_disclosure"]
    dbrl, prl = base["record_linkage"], base["probabilistic_record_linkage"]
    assert None not in (il, idr, dbrl, prl)
    w = {"il": 0.2, "id": 0.2, "dbrl": 0.3, "prl": 0.5}
    custom = evaluate(ds, protected, score_weights=w)
    dr = 0.2 * idr + 0.3 * dbrl + 0.5 * prl  # type: ignore[operator]
    assert custom["score"] == pytest.approx(0.2 * il + 0.8 * dr)  # type: ignore[operator]
    # w_il is the il weight; an il in score_weights wins
    assert evaluate(ds, protected, w_il=0.2)["score"] == pytest.approx(
        evaluate(ds, protected, score_weights={"il": 0.2})["score"]
    )
    assert parse_score_weights("il=0.2, id=0.2,dbrl=0.3,PRL=0.5") == w
    for bad, fragment in (
        ({"id": 0.6}, "sum to"),
        ({"xx": 0.1}, "unknown"),
        ({"il": 1.5}, "between 0 and 1"),
    ):
        with pytest.raises(InvalidParameter, match=fragment):
            evaluate(ds, protected, score_weights=bad)
    for text in ("il", "il=abc", "il=0.1,il=0.2"):
        with pytest.raises(InvalidParameter):
            parse_score_weights(text)


def test_dm_cavg_and_generalization_il_by_hand() -> None:
    frame = pd.DataFrame({"q": ["x", "y", "z", "z", "x"], "s": [1, 2, 3, 4, 5]})
    roles = roles_from_lists(frame.columns, qi=["q"], nominal=["q"], confidential=["s"])
    ds = Dataset.from_frame(frame, roles)
    h = Hierarchy.from_rows([("x", "xy", "*"), ("y", "xy", "*"), ("z", "z", "*")], "q.csv")
    released = frame.assign(q=["xy", "xy", "*", "*", "*"])
    m = evaluate(ds, released, k=2, hierarchies={"q": h})
    assert m["dm"] == 2**2 + 3**2
    assert m["cavg"] == pytest.approx(5 / (2 * 2))
    # 004 eq. 7: (L_v - 1)/L with L = 3 values: xy -> 1/3, * -> 2/3; eq. 9: mean over records
    assert m["generalization_il"] == pytest.approx((2 * (1 / 3) + 3 * (2 / 3)) / 5)
    # the leaf label "z" is the value z (level 0), not the group z (level 1): IL 0 either way
    leaves = evaluate(ds, frame, hierarchies={"q": h})
    assert leaves["generalization_il"] == pytest.approx(0.0)
    assert leaves["dm"] == 2**2 + 1 + 2**2 and leaves["cavg"] is None  # no k given
    assert evaluate(ds, released)["generalization_il"] is None  # no hierarchy
    with pytest.raises(InvalidInput, match=r"column 'q' holds 'w' \(row 2\)"):
        evaluate(ds, frame.assign(q=["x", "w", "z", "z", "x"]), hierarchies={"q": h})
    with pytest.raises(InvalidParameter, match="'s'"):
        evaluate(ds, released, hierarchies={"s": h})
    with pytest.raises(InvalidParameter, match="k=0"):
        evaluate(ds, released, k=0)


@pytest.mark.shared
def test_dm_cavg_and_generalization_il_on_the_004_example() -> None:
    seed = SEED_EXAMPLES
    if not (seed / "mstk_example.csv").exists():
        pytest.skip("shared seed examples not present")
    qis = ["Age", "Sex", "Zipcode"]
    dataset = read_table(seed / "mstk_example.csv")
    roles = roles_from_lists(
        dataset.frame.columns,
        qi=qis,
        identifiers=["ID"],
        confidential=["Disease"],
        nominal=["Sex", "Zipcode"],
    )
    ds = dataset.with_roles(roles)
    files = {c: str(seed / f"mstk_hierarchy_{c.lower()}.csv") for c in qis}
    hierarchies = {c: load_hierarchy(path) for c, path in files.items()}
    for k, dm, classes in ((2, 17, 3), (3, 25, 2)):
        result = run_protection(ds, RunSpec.make("mstk", k, hierarchies=files, seed=1))
        m = evaluate(ds, result.protected, k=k, hierarchies=hierarchies)
        assert m["dm"] == dm == result.report["discernibility"]
        assert m["cavg"] == pytest.approx(7 / (classes * k)) == result.report["cavg"]
        assert m["generalization_il"] == pytest.approx(result.report["generalization_il"])
    # Table 1(b) (k = 2) by hand, as in test_mstk: Age eq. 6, Sex and Zipcode eq. 7
    age = (2 * 5 / 29 + 2 * 4 / 29 + 3 * 5 / 29) / 7
    sex = 3 * 0.5 / 7
    zipcode = (4 * (1 / 7) + 3 * (2 / 7)) / 7
    table_1b = run_protection(ds, RunSpec.make("mstk", 2, hierarchies=files, seed=1)).protected
    m = evaluate(ds, table_1b, k=2, hierarchies=hierarchies)
    assert m["generalization_il"] == pytest.approx(age + sex + zipcode)
    # generalized continuous values: the continuous measures and the linkages do not apply
    assert m["record_linkage"] is None and m["probabilistic_record_linkage"] is None
