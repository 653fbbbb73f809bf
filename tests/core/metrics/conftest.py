"""Fixtures of the metrics tests."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    """Census (``CASCrefmicrodata.csv``, 1080 × 13), read once per test module by the shared loader
    (``reference_sets``); the test is skipped when the reference data is absent."""
    import reference_sets

    return reference_sets.census()


@pytest.fixture
def blanked_keys() -> tuple[object, pd.DataFrame]:
    """(original Dataset, its release with the two unique key combinations' region blanked):
    7 records, nominal keys sex and region, income confidential. With a blank matching any
    value the key frequencies are [3, 3, 2, 3, 3, 3, 4] (worked by hand in the tests)."""
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
    conf = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL)
    frame = pd.DataFrame(
        {
            "sex": ["f", "f", "f", "m", "m", "m", "f"],
            "region": ["n", "n", "s", "s", "s", "n", "e"],
            "income": ["lo", "hi", "lo", "lo", "lo", "hi", "hi"],
        }
    )
    ds = Dataset.from_frame(frame, RoleMap.from_dict({"sex": qi, "region": qi, "income": conf}))
    released = frame.copy()
    released.loc[[5, 6], "region"] = None
    return ds, released
