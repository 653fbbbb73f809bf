"""The notebook API: microgui.protect on a DataFrame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.core.errors import InvalidRoles


def test_protect_dataframe() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "name": [f"n{i}" for i in range(30)],
            "x": rng.normal(size=30),
            "y": rng.normal(size=30),
            "z": rng.integers(0, 5, 30),
        },
        index=pd.RangeIndex(100, 130),
    )
    before = df.copy()
    res = microgui.protect(df, qi=["x", "y"], identifiers=["name"], k=3, method="mdav")
    pd.testing.assert_frame_equal(df, before)  # input untouched
    assert list(res.frame.columns) == ["x", "y", "z"]
    assert res.frame.index.equals(df.index) and res.partition.index.equals(df.index)
    pd.testing.assert_series_equal(res.frame["z"], df["z"])
    assert res.partition.value_counts().min() >= 3
    assert res.report["n_groups"] == res.partition.nunique()
    np.testing.assert_allclose(res.frame[["x", "y"]].mean(), df[["x", "y"]].mean())
    assert 0 < res.report["information_loss"] < 100


def test_protect_bad_roles() -> None:
    with pytest.raises(InvalidRoles, match="'w'"):
        microgui.protect(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), qi=["w"], k=2)


def test_list_methods() -> None:
    names = [m["name"] for m in microgui.api.list_methods()]
    assert {"mdav", "mdav-generic"} <= set(names)
