"""Reading a table file of any supported format: :func:`read_table` (a
:class:`~microgui.core.table.dataset.Dataset` with suggested roles) and :func:`read_frame` (a
DataFrame), dispatching by extension to the readers of :mod:`microgui.core.io`.

Reading reports progress: ``progress(fraction, status)`` is called about every 8,192 records of a
CSV and 20,000 rows of a sheet (and at the start and end), so the app shows a bar while a
million-row file loads and the user can cancel (the callback raises
:class:`~microgui.core.progress.RunCancelled`, which propagates; a CSV stops within one piece).
Parquet, SPSS and Stata report only their start and end.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_readable
from microgui.core.io.csv import _read_csv
from microgui.core.io.excel import _read_excel
from microgui.core.io.extensions import (
    EXCEL_EXTENSIONS,
    PARQUET_EXTENSIONS,
    SPSS_EXTENSIONS,
    STATA_EXTENSIONS,
    TEXT_EXTENSIONS,
)
from microgui.core.io.fingerprint import FINGERPRINT_ATTR, file_sha256
from microgui.core.io.memory import _check_shape, _check_workbook, _megabytes
from microgui.core.io.parquet import _read_parquet
from microgui.core.io.stat import _read_stat
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.dataset import Dataset, shared_attr
from microgui.core.table.roles import RoleMap

__all__ = ["read_table", "read_frame"]


def read_table(
    path: str | os.PathLike[str],
    *,
    sheet: str | int | None = None,
    progress: ProgressFn = no_progress,
    suggest: bool = True,
) -> Dataset:
    """Read a table file into a :class:`Dataset` with suggested roles.

    Parameters
    ----------
    path
        A ``.csv``/``.tsv``/``.txt``, ``.xlsx``/``.xlsm``/``.xls``, ``.parquet``,
        ``.sav``/``.zsav`` or ``.dta`` file (see :data:`~microgui.core.io.SUPPORTED_EXTENSIONS`).
    sheet
        Excel only: the sheet name or 0-based index (default: the first sheet).
    progress
        Called with the fraction read (about every 8,192 records of a CSV, 20,000 rows of a
        sheet); may raise :class:`~microgui.core.progress.RunCancelled` to stop reading.
    suggest
        False: no role is suggested (``roles`` is empty), for a caller that tags the columns
        itself and suggests roles only for those it leaves untagged (``microgui protect``:
        :func:`~microgui.core.table.dataset.explain_roles` reads every cell of a column).

    Returns
    -------
    Dataset
        ``source`` is ``Path(path)``; ``value_labels`` holds SPSS/Stata value labels.

    Raises
    ------
    InvalidInput
        The file is missing, empty, malformed or of an unsupported type.
    """
    source = Path(path)
    frame, labels = _read(source, sheet, progress)
    with suppress(OSError):  # the file was just read; a vanished file has no fingerprint
        frame.attrs[FINGERPRINT_ATTR] = shared_attr(
            {"file": source.name, "sha256": file_sha256(source), "bytes": source.stat().st_size}
        )
    if not suggest:
        progress(1.0, f"read {source.name}")
        return Dataset(frame, RoleMap.from_dict({}), source, labels)
    progress(0.97, f"suggesting roles for {len(frame.columns):,} columns")
    try:
        dataset = Dataset.from_frame(frame, source=source)
    except MemoryError:  # the estimate is not a promise: one line, never a traceback
        raise InvalidInput(
            f"{source.name!r} is too large to read here: memory ran out while suggesting the "
            "roles of its columns; close other programs, read a subset, or save fewer columns"
        ) from None
    progress(1.0, f"read {source.name}")
    if labels:
        dataset = Dataset(
            dataset.frame, dataset.roles, dataset.source, labels, dataset.role_reasons
        )
    return dataset


def read_frame(
    path: str | os.PathLike[str],
    *,
    sheet: str | int | None = None,
    progress: ProgressFn = no_progress,
) -> pd.DataFrame:
    """Read a table file into a DataFrame (what :func:`read_table` wraps; same errors).

    CSV columns are text (pandas ``str`` dtype); SPSS/Stata labelled columns are Categoricals.
    """
    return _read(Path(path), sheet, progress)[0]


def _reader_kind(ext: str) -> str:
    if ext in TEXT_EXTENSIONS:
        return "csv"
    if ext in EXCEL_EXTENSIONS:
        return "excel"
    return "parquet" if ext in PARQUET_EXTENSIONS else "stat"


def _read(
    path: Path, sheet: str | int | None, progress: ProgressFn = no_progress
) -> tuple[pd.DataFrame, dict[str, dict[object, str]]]:
    _check_readable(path)
    progress(0.0, f"reading {path.name}")
    ext = path.suffix.lower()
    kind = _reader_kind(ext)
    size = path.stat().st_size
    if kind == "excel" and ext != ".xls":
        size = _check_workbook(path)  # unpacked size; refuses a zip bomb before any parsing
    _check_shape(path, kind, size)
    try:
        return _read_kind(path, ext, sheet, progress)
    except MemoryError:
        raise InvalidInput(
            f"{path.name!r} is too large to read here: memory ran out while reading its "
            f"{_megabytes(size)}; close other programs, read a subset, or save the table as "
            "Parquet"
        ) from None


def _read_kind(
    path: Path, ext: str, sheet: str | int | None, progress: ProgressFn
) -> tuple[pd.DataFrame, dict[str, dict[object, str]]]:
    if ext in TEXT_EXTENSIONS:
        return _read_csv(path, progress), {}
    if ext in EXCEL_EXTENSIONS:
        return _read_excel(path, sheet, progress), {}
    if ext in PARQUET_EXTENSIONS:
        return _read_parquet(path), {}
    if ext in SPSS_EXTENSIONS or ext in STATA_EXTENSIONS:
        return _read_stat(path)
    raise AssertionError(ext)  # _check_readable rejected it
