"""The reference data of the benchmark and the tests: the CASC reference microdata (Census,
Tarragona, EIA in ``sdc-reference/``), UCI Adult with ARX's hierarchies (``adult/``), ARX's toy
tables (``arx-small/``) and the papers' worked examples (``seed-examples/``).

They are not shipped (a user's install has none): they are read from the folder named by
$MICROGUI_SHARED_DATA, else from ``../shared/data`` beside a source checkout. Each folder's README
there gives the columns, provenance and known figures. Qt-free; no test framework here: the tests'
fixture module (``tests/reference_sets.py``) wraps these functions and skips when data is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

#: The environment variable naming the reference data folder.
SHARED_DATA_ENV = "MICROGUI_SHARED_DATA"

#: Where the reference data sits beside a source checkout (``../shared/data``).
DEFAULT_SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

#: The file of each CASC reference set in ``sdc-reference/``, by the name the literature uses.
REFERENCE_FILES = {"Census": "CASCrefmicrodata.csv", "Tarragona": "Tarragona.csv", "EIA": "EIA.csv"}

#: The EIA columns microaggregated in the literature: UTILITYID and the 10 revenue and sales
#: columns (``sdc-reference/README.md``); UTILNAME, STATE, YEAR and MONTH are left out.
EIA_QIS = (
    "UTILITYID",
    "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
)  # fmt: skip


def shared_data_dir() -> Path | None:
    """The reference data folder: $MICROGUI_SHARED_DATA, or ``../shared/data`` beside a source
    checkout. None when absent (a user's clone has none)."""
    env = os.environ.get(SHARED_DATA_ENV)
    candidates = [Path(env)] if env else []
    candidates.append(DEFAULT_SHARED_DATA)
    for path in candidates:
        if (path / "sdc-reference").is_dir():
            return path
    return None


def reference_qis(file_name: str, columns: pd.Index | list[str]) -> list[str]:
    """The quasi-identifiers of a reference table as the literature uses them: :data:`EIA_QIS` for
    ``EIA.csv``, every column otherwise."""
    if file_name == REFERENCE_FILES["EIA"]:
        return list(EIA_QIS)
    return [str(c) for c in columns]


def read_reference(file_name: str, root: Path) -> pd.DataFrame:
    """One table of ``sdc-reference/`` (e.g. ``"CASCrefmicrodata.csv"``), every column, as written."""
    return pd.read_csv(root / "sdc-reference" / file_name)


def reference_sets(root: Path) -> dict[str, pd.DataFrame]:
    """Census (all 13 columns), Tarragona (all 13) and EIA (UTILITYID plus the 10 revenue and
    sales columns), as the literature uses them (``sdc-reference/README.md``)."""
    sets = {}
    for name, file_name in REFERENCE_FILES.items():
        frame = read_reference(file_name, root)
        sets[name] = frame[reference_qis(file_name, frame.columns)] if name == "EIA" else frame
    return sets
