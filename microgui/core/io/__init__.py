"""Reading tables (CSV/TSV/TXT, Excel, Parquet, SPSS, Stata) and writing files atomically.

Readers return a :class:`~microgui.core.table.dataset.Dataset` with suggested roles. Every failure the
user can fix (missing file, empty file, ragged rows, duplicate column names, unreadable workbook)
raises :class:`~microgui.core.errors.InvalidInput` with one sentence naming the file. Writers go
through a temporary file in the target folder, ``fsync`` and ``os.replace``, and refuse to
overwrite the input file.

One module per format, and the pieces they share:

- :mod:`~microgui.core.io.reader`: :func:`read_table` and :func:`read_frame`, by extension
- :mod:`~microgui.core.io.sniff` (a CSV's encoding and delimiter), :mod:`~microgui.core.io.csv`,
  :mod:`~microgui.core.io.excel`, :mod:`~microgui.core.io.parquet`, :mod:`~microgui.core.io.stat`
  (SPSS and Stata): the readers
- :mod:`~microgui.core.io.extensions`, :mod:`~microgui.core.io.common` (the checks every reader
  makes), :mod:`~microgui.core.io.memory` (refusing what cannot fit, before reading),
  :mod:`~microgui.core.io.fingerprint` (the SHA-256 of the file read)
- :mod:`~microgui.core.io.atomic` (the temp-then-rename writers, the target checks),
  :mod:`~microgui.core.io.csv_write` (a table as CSV), :mod:`~microgui.core.io.strict_json`

Every name is importable from here, as it was from the single module ``core/io.py``.
"""

from __future__ import annotations

from microgui.core.io.atomic import (
    DerivedWriter,
    EncodedWriter,
    FileWriter,
    check_write_targets,
    write_files_atomic,
    write_text_atomic,
)
from microgui.core.io.csv_write import csv_writer, text_cells, write_csv_atomic
from microgui.core.io.extensions import (
    EXCEL_EXTENSIONS,
    PARQUET_EXTENSIONS,
    SPSS_EXTENSIONS,
    STATA_EXTENSIONS,
    SUPPORTED_EXTENSIONS,
    TEXT_EXTENSIONS,
    file_dialog_filter,
)
from microgui.core.io.fingerprint import FINGERPRINT_ATTR, file_sha256
from microgui.core.io.reader import read_frame, read_table
from microgui.core.io.sniff import CsvFormat, detect_csv_format
from microgui.core.io.stat import STAT_ATTR, MissingCodes
from microgui.core.io.strict_json import json_number, json_text, write_json_atomic
from microgui.core.table.dataset import MAX_COLUMNS, check_width

# isort: split
# Names the single module offered beyond its __all__, imported from here by other modules, the
# CLI and the tests: kept importable from the package.
from microgui.core.io.atomic import ProtectedPaths as ProtectedPaths
from microgui.core.io.atomic import _create_temp as _create_temp
from microgui.core.io.common import _read_bytes as _read_bytes
from microgui.core.io.csv import _PIECE_MAX as _PIECE_MAX
from microgui.core.io.csv import _PIECE_MIN as _PIECE_MIN
from microgui.core.io.csv import _PROGRESS_ROWS as _PROGRESS_ROWS
from microgui.core.io.csv import _arrow_table as _arrow_table
from microgui.core.io.csv import _read_csv as _read_csv
from microgui.core.io.csv import _read_csv_with_csv_module as _read_csv_with_csv_module
from microgui.core.io.csv import _read_with_csv_module as _read_with_csv_module
from microgui.core.io.csv_write import CSV_CHUNK_ROWS as CSV_CHUNK_ROWS
from microgui.core.io.csv_write import _number_texts as _number_texts
from microgui.core.io.csv_write import _to_csv_rows as _to_csv_rows
from microgui.core.io.csv_write import _write_csv as _write_csv
from microgui.core.io.excel import SHEETS_ATTR as SHEETS_ATTR
from microgui.core.io.excel import ExcelEngine as ExcelEngine
from microgui.core.io.excel import _pandas_sheet as _pandas_sheet
from microgui.core.io.excel import _read_sheet as _read_sheet
from microgui.core.io.excel import _sheet_xml_scan as _sheet_xml_scan
from microgui.core.io.memory import _MEMORY_PER_BYTE as _MEMORY_PER_BYTE
from microgui.core.io.memory import MAX_WORKBOOK_XML_BYTES as MAX_WORKBOOK_XML_BYTES
from microgui.core.io.memory import _parquet_shape as _parquet_shape
from microgui.core.io.memory import _stat_shape as _stat_shape
from microgui.core.io.memory import available_memory as available_memory
from microgui.core.io.memory import map_large_blocks as map_large_blocks
from microgui.core.io.memory import release_unused_memory as release_unused_memory
from microgui.core.io.reader import _read_kind as _read_kind

__all__ = [
    "DerivedWriter",
    "EncodedWriter",
    "FileWriter",
    "FINGERPRINT_ATTR",
    "STAT_ATTR",
    "MissingCodes",
    "file_sha256",
    "SUPPORTED_EXTENSIONS",
    "text_cells",
    "TEXT_EXTENSIONS",
    "EXCEL_EXTENSIONS",
    "PARQUET_EXTENSIONS",
    "SPSS_EXTENSIONS",
    "STATA_EXTENSIONS",
    "CsvFormat",
    "detect_csv_format",
    "file_dialog_filter",
    "read_frame",
    "read_table",
    "check_width",
    "check_write_targets",
    "MAX_COLUMNS",
    "csv_writer",
    "write_csv_atomic",
    "write_files_atomic",
    "write_json_atomic",
    "json_text",
    "json_number",
    "write_text_atomic",
]
