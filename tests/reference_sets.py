"""The reference data sets for the tests, read by the package's loader (:mod:`microgui.reference_data`,
which the benchmark uses too): $MICROGUI_SHARED_DATA, else ``../shared/data`` beside the clone.

A test that needs a file that is absent is skipped (``shared_path``, ``reference_frame`` …), or
checks the module's paths itself (``CENSUS_CSV.is_file()`` in a ``skipif``): they point into a folder
that does not exist when the data is absent. Tests that read it carry ``@pytest.mark.shared``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.reference_data import (
    DEFAULT_SHARED_DATA,
    EIA_QIS,
    REFERENCE_FILES,
    read_reference,
    reference_qis,
    shared_data_dir,
)

__all__ = [
    "adult_dataset",
    "ADULT_DIR",
    "ARX_SMALL",
    "CENSUS_CSV",
    "EIA_QIS",
    "REFERENCE_FILES",
    "SDC_REFERENCE",
    "SEED_EXAMPLES",
    "SHARED_DATA",
    "adult_frame",
    "census",
    "reference_dataset",
    "reference_frame",
    "shared_path",
]

#: The reference data folder (absent on a user's clone: then nothing below exists).
SHARED_DATA = shared_data_dir() or DEFAULT_SHARED_DATA
#: The CASC reference microdata and sdcMicro's small sets.
SDC_REFERENCE = SHARED_DATA / "sdc-reference"
#: UCI Adult and its 10 % subset, with ARX's hierarchy for every attribute.
ADULT_DIR = SHARED_DATA / "adult"
#: ARX's toy tables and hierarchies.
ARX_SMALL = SHARED_DATA / "arx-small"
#: The papers' worked examples.
SEED_EXAMPLES = SHARED_DATA / "seed-examples"
#: Census (1080 × 13, all integer).
CENSUS_CSV = SDC_REFERENCE / REFERENCE_FILES["Census"]


def shared_path(*parts: str) -> Path:
    """A file of the reference data folder (``shared_path("adult", "adult.csv")``); skips the
    calling test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared reference data not available ({'/'.join(parts)})")
    return path


def reference_frame(file_name: str) -> pd.DataFrame:
    """A table of ``sdc-reference/`` read whole (``"CASCrefmicrodata.csv"``, ``"Tarragona.csv"``,
    ``"EIA.csv"`` …); skips the calling test when it is absent."""
    shared_path("sdc-reference", file_name)
    return read_reference(file_name, SHARED_DATA)


def census() -> pd.DataFrame:
    """Census (``CASCrefmicrodata.csv``), all 13 columns; skips the calling test when absent."""
    return reference_frame(REFERENCE_FILES["Census"])


def reference_dataset(file_name: str, qi: ColumnSpec, other: ColumnSpec) -> Dataset:
    """A reference table as a dataset: its quasi-identifiers as the literature uses them (EIA:
    :data:`EIA_QIS`; otherwise every column) tagged ``qi``, the other columns ``other``."""
    frame = reference_frame(file_name)
    qis = reference_qis(file_name, frame.columns)
    roles = {str(c): (qi if c in qis else other) for c in frame.columns}
    return Dataset.from_frame(frame, RoleMap.from_dict(roles))


def adult_frame(*, subset: bool = False, **read_csv: Any) -> pd.DataFrame:
    """UCI Adult as ARX ships it (``;``-separated; ``subset``: the 10 % research subset), read with
    the extra ``pd.read_csv`` options given; skips the calling test when absent."""
    name = "adult_subset.csv" if subset else "adult.csv"
    return pd.read_csv(shared_path("adult", name), sep=";", **read_csv)


def adult_dataset() -> Dataset:
    """Adult as the issue-29 reviews tagged it: age a continuous quasi-identifier, salary-class
    confidential (nominal), every other column a nominal quasi-identifier."""
    frame = adult_frame()
    roles = {}
    for column in frame.columns:
        if column == "age":
            roles[column] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        elif column == "salary-class":
            roles[column] = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL)
        else:
            roles[column] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
    return Dataset.from_frame(frame, RoleMap.from_dict(roles))
