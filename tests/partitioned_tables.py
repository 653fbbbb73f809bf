"""The table of the partitioned engines' tests (Dask: ``tests/core/runs/test_distributed.py``;
Spark: ``tests/core/release/test_spark.py``), so that both engines are checked on the same
records."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["partitioned_table"]


def partitioned_table(n: int, seed: int = 4) -> pd.DataFrame:
    """Correlated quasi-identifiers with few decimals (clean numbers matter), an identifier, a
    text column that must pass through byte for byte (formula cells, quotes, commas) and a
    record number to check the order."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)
    return pd.DataFrame(
        {
            "id": [f"P{i:05d}" for i in range(n)],
            "age": age,
            "income": (rng.lognormal(10, 0.5, n) * (1 + age / 60)).round(2),
            "hours": rng.normal(38, 8, n).round(1),
            "note": [f"=cmd{i}" if i % 11 == 0 else f'x, "{i}"' for i in range(n)],
            "record": np.arange(n),
        }
    )
