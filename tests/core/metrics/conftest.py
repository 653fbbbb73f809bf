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
