"""Generate the large files of the bad-input corpus (never committed; written at test time).

``python tests/data/bad/make_large.py FOLDER`` writes:

- ``wide_5000_columns.csv``: 5,000 columns (``id``, ``age``, ``income``, then ``c0003`` ...
  ``c4999``) and 50 records: a table wider than any screen, which must load and run.
- ``million_rows.csv``: 1,000,000 records of ``id,age,income,region`` (about 25 MB), to time
  loading and to check that a long load reports progress and can be cancelled.

The content is deterministic (a seeded generator), so a failure can be reproduced.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["WIDE_NAME", "MILLION_NAME", "write_wide", "write_million", "main"]

WIDE_NAME = "wide_5000_columns.csv"
MILLION_NAME = "million_rows.csv"
WIDE_COLUMNS = 5_000
WIDE_ROWS = 50
MILLION_ROWS = 1_000_000


def write_wide(folder: Path, columns: int = WIDE_COLUMNS, rows: int = WIDE_ROWS) -> Path:
    """A table of ``columns`` columns and ``rows`` records: id, age, income, then small integers."""
    rng = np.random.default_rng(5000)
    names = ["id", "age", "income"] + [f"c{j:04d}" for j in range(3, columns)]
    body = rng.integers(0, 10, size=(rows, columns))
    body[:, 0] = np.arange(1, rows + 1)
    body[:, 1] = rng.integers(18, 90, size=rows)
    body[:, 2] = rng.integers(10_000, 120_000, size=rows)
    lines = [",".join(names)] + [",".join(map(str, row)) for row in body.tolist()]
    path = folder / WIDE_NAME
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    return path


def write_million(folder: Path, rows: int = MILLION_ROWS) -> Path:
    """``rows`` records of id, age, income and region, written in chunks (low memory)."""
    rng = np.random.default_rng(1_000_000)
    regions = np.array(["north", "south", "east", "west"])
    path = folder / MILLION_NAME
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("id,age,income,region\n")
        chunk = 100_000
        for start in range(0, rows, chunk):
            stop = min(start + chunk, rows)
            ids = np.arange(start + 1, stop + 1)
            ages = rng.integers(18, 90, size=stop - start)
            incomes = rng.integers(10_000, 120_000, size=stop - start)
            region = regions[rng.integers(0, 4, size=stop - start)]
            handle.write(
                "".join(
                    f"{i},{a},{m},{r}\n"
                    for i, a, m, r in zip(
                        ids.tolist(), ages.tolist(), incomes.tolist(), region, strict=True
                    )
                )
            )
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: make_large.py FOLDER", file=sys.stderr)
        return 2
    folder = Path(args[0])
    folder.mkdir(parents=True, exist_ok=True)
    for path in (write_wide(folder), write_million(folder)):
        print(f"{path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
