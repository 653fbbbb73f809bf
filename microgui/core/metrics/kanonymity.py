"""k-anonymity level of a table and group sizes of a partition (``003`` §3.3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["k_anonymity_level", "group_sizes"]


def k_anonymity_level(frame: pd.DataFrame, quasi_identifiers: Sequence[str]) -> int:
    """The smallest number of records sharing one combination of quasi-identifier values.

    Values are compared exactly as they appear in the table (floats by value, text by text);
    missing values count as one value. An empty table has level 0.
    """
    if len(frame) == 0:
        return 0
    if not quasi_identifiers:
        return len(frame)
    sizes = frame.groupby(list(quasi_identifiers), dropna=False, sort=False).size()
    return int(sizes.min())


def group_sizes(labels: np.ndarray) -> np.ndarray:
    """Records per group id (index = group id)."""
    return np.bincount(np.asarray(labels, dtype=np.int64))
