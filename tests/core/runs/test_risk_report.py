"""The run report's ``risk_before`` / ``risk_after`` (issue 29 item 2): assess_risk of the input
and of the release on the same keys; the input's is measured once per table, roles and k."""

from __future__ import annotations

import numpy as np
import pandas as pd

from microgui.core.metrics.file_risk import assess_risk
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists


def _dataset() -> Dataset:
    rng = np.random.default_rng(8)
    n = 90
    frame = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", "e", "w"], n),
            "job": rng.choice(["a", "b", "c"], n),
            "age": rng.integers(18, 90, n).astype(float),
            "ill": rng.choice(["x", "y"], n),
        }
    )
    roles = roles_from_lists(
        frame.columns, qi=["region", "job", "age"], nominal=["region", "job"], confidential=["ill"]
    )
    return Dataset.from_frame(frame, roles)


def test_before_and_after_on_the_same_keys() -> None:
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav-generic", 4, seed=1))
    before, after = result.report["risk_before"], result.report["risk_after"]
    assert before["keys"] == after["keys"] == ["region", "job"]
    expected = assess_risk(dataset.frame, dataset.roles, k=4)
    for section in ("k_anonymity", "individual_risk", "l_diversity"):
        assert before[section] == expected[section]
    mine = assess_risk(result.protected, dataset.roles, k=4, keys=before["keys"])
    assert after["k_anonymity"] == mine["k_anonymity"]
    assert after["k_anonymity"]["level"] >= 4 and after["k_anonymity"]["records_below_k"] == 0
    # measured once per table: the second run's input figures are equal and not shared
    before["k_anonymity"]["level"] = -1
    again = run_protection(dataset, RunSpec.make("mdav-generic", 4, seed=2))
    assert again.report["risk_before"]["k_anonymity"] == expected["k_anonymity"]
    other_k = run_protection(dataset, RunSpec.make("mdav-generic", 6, seed=2))
    assert other_k.report["risk_before"]["k"] == 6


def test_no_categorical_key_gives_the_reason() -> None:
    frame = pd.DataFrame({"x": np.arange(40.0), "y": np.arange(40.0) ** 2})
    dataset = Dataset.from_frame(frame, roles_from_lists(frame.columns, qi=["x", "y"]))
    report = run_protection(dataset, RunSpec.make("mdav", 4, seed=0)).report
    assert report["risk_before"]["keys"] == [] == report["risk_after"]["keys"]
    assert report["risk_before"]["keys_note"].startswith("no categorical key")
