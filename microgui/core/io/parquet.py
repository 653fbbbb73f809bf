"""Reading Parquet files (pyarrow): a saved index comes back as a column."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_columns, _zero_records

__all__: list[str] = []


def _read_parquet(path: Path) -> pd.DataFrame:
    name = path.name
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        names = [str(n) for n in pq.read_schema(path).names]
    except Exception:  # noqa: BLE001 - read_parquet below says what is wrong
        names = []
    # before pandas, which refuses duplicate names in a many-line error
    _check_columns(names, name, lambda i: f"column {i + 1}")
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        detail = " ".join(str(exc).split())
        detail = detail if len(detail) <= 200 else detail[:197] + "..."
        raise InvalidInput(
            f"{name!r} cannot be read as a Parquet file ({type(exc).__name__}: {detail}); "
            "check that it is a complete Parquet file"
        ) from exc
    index = frame.index
    if not (
        isinstance(index, pd.RangeIndex)
        and index.name is None
        and index.start == 0
        and index.step == 1
    ):
        # A frame saved with a meaningful index (df.set_index("id").to_parquet) gets it back as
        # a column: microgui tags columns, and an index would be invisible.
        names = [str(c) for c in frame.columns]
        clash = next((str(n) for n in index.names if n is not None and str(n) in names), None)
        if clash is not None:
            raise InvalidInput(
                f"{name!r} has both an index and a column named {clash!r}; rename one of them"
            )
        frame = frame.reset_index()
    names = [str(c) for c in frame.columns]
    _check_columns(names, name, lambda i: f"column {i + 1}")
    frame.columns = pd.Index(names, dtype=object)
    if frame.empty and len(names):
        raise _zero_records(name, "file ")
    if not len(names):
        raise InvalidInput(f"file {name!r} has no columns; choose the file that holds the table")
    return frame
