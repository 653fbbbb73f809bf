"""``microgui.assess`` (issue 29 item 2): the notebook form of ``microgui assess``."""

from __future__ import annotations

import pandas as pd
import pytest

import microgui
from microgui.core.errors import InvalidRoles
from microgui.core.metrics.file_risk import NoCategoricalKey


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": ["f", "m"] * 15,
            "region": ["n"] * 14 + ["s"] * 15 + ["w"],
            "age": list(range(20, 50)),  # 30 values: too many to count as a key
            "w": [50.0] * 30,
            "ill": ["x", "y", "x"] * 10,
        }
    )


def test_assess_returns_the_risk_dict() -> None:
    risk = microgui.assess(
        _frame(), qi=["sex", "region", "age"], nominal=["sex", "region"], confidential="ill",
        weight="w", k=3,
    )  # fmt: skip
    assert risk["keys"] == ["sex", "region"] and risk["n_records"] == 30
    # (m, w) is the one unique; its weight 50 makes its risk far below 1
    assert risk["k_anonymity"]["records_in_cells_of_size_1"] == 1
    assert risk["individual_risk"]["weighted"] is True and risk["individual_risk"]["max"] < 0.2
    assert list(risk["l_diversity"]) == ["ill"]
    again = microgui.assess(_frame(), qi=["sex", "region", "age"], keys="region", k=3)
    assert again["keys"] == ["region"] and again["k_anonymity"]["level"] == 1


def test_assess_errors() -> None:
    with pytest.raises(NoCategoricalKey, match="no categorical key"):
        microgui.assess(_frame(), qi=["age"])
    with pytest.raises(InvalidRoles):
        microgui.assess(_frame(), qi=["nope"])
    with pytest.raises(InvalidRoles, match="RoleMap"):
        microgui.assess(_frame(), roles={"sex": "nominal"})  # type: ignore[arg-type]
