"""Reading tables (CSV/TSV/TXT, Excel, Parquet, SPSS, Stata) and writing files atomically.

Readers return a :class:`~microgui.core.dataset.Dataset` with suggested roles. Every failure the
user can fix (missing file, empty file, ragged rows, duplicate column names, unreadable workbook)
raises :class:`~microgui.core.errors.InvalidInput` with one sentence naming the file.

CSV files are read **as text**: every cell stays the exact string of the file (no number parsing,
no ``NA`` detection), so columns that are not quasi-identifiers are written back byte-identical;
the core converts quasi-identifiers to numbers when a run needs them
(:func:`~microgui.core.dataset.numeric_column`). The encoding (UTF-8 with or without BOM, UTF-16
with BOM, else cp1252/Latin-1) and the delimiter (``,`` ``;`` tab ``|``) are detected.

SPSS and Stata value labels are applied, so the table shows the labels; the code -> label mapping
is kept in ``Dataset.value_labels``. A labelled numeric variable becomes a pandas Categorical whose
categories follow the numeric code order: ordered (hence suggested ordinal with that order) unless
SPSS declares the variable nominal. A numeric variable whose labels only mark a few special codes
among many unlabelled values (``-99 = "refused"`` in an income column) stays numeric.

CSV files are parsed by ``pyarrow.csv`` (issue 17): a UTF-8 file is read in pieces of about 8,192
records, straight from its bytes (never held whole, nor decoded to one Python string), into
pandas ``str`` columns backed by Arrow. A vectorized scan of each piece finds where records end
and on which lines, with the csv module's rules; where pyarrow and the csv module could read a
file differently (a quote inside an unquoted value, text after a closing quote, ragged rows, an
unusual delimiter) the csv module reads it and names the line of any error, so the cells, lines
and messages are those of :func:`_read_csv_with_csv_module` (the reader before issue 17, kept
as the reference the tests compare against). A file that is not UTF-8 is decoded whole first.

Excel ``.xlsx``/``.xlsm`` workbooks are read with calamine (python-calamine) and give the cells
openpyxl gave; openpyxl reads a sheet whose XML holds what the two read otherwise (cells of white
space only, ``_xHHHH_`` escapes), and the formula cells without a saved value are found in the
sheet's XML as before. ``.xls`` goes through xlrd.

Reading reports progress: ``progress(fraction, status)`` is called about every 8,192 records of a
CSV and 20,000 rows of a sheet (and at the start and end), so the app shows a bar while a
million-row file loads and the user can cancel (the callback raises
:class:`~microgui.core.progress.RunCancelled`, which propagates; a CSV stops within one piece).
Parquet, SPSS and Stata report only their start and end. A CSV frame also records, in
``frame.attrs``, the file's base name and the line on which each record starts
(:data:`~microgui.core.dataset.LINES_ATTR`), so that later messages name lines as an editor shows
them.

Writers go through a temporary file in the target folder, ``fsync`` and ``os.replace``, so a crash
or a full disk never leaves a half-written file under the final name, and they refuse to overwrite
the input file.
"""

from __future__ import annotations

import codecs
import csv
import datetime
import errno
import hashlib
import io
import json
import math
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from microgui.core.dataset import (
    CONTINUOUS_MIN_DISTINCT,
    LINE_WORD_ATTR,
    LINES_ATTR,
    MAX_COLUMNS,
    SOURCE_ATTR,
    Dataset,
    check_width,
    shared_attr,
)
from microgui.core.errors import ExportRefused, InvalidInput
from microgui.core.progress import ProgressFn, no_progress

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

#: ``DataFrame.attrs`` key of an SPSS/Stata file's labels, kept for its release (issue 18):
#: {"format", "column_labels" {column: label}, "value_labels" {column: {code: label}}, "codes"
#: {column: {text shown: code}}, "measures" {column: nominal/ordinal/scale/unknown}}.
STAT_ATTR = "microgui.stat_labels"
#: ``DataFrame.attrs`` key of the fingerprint of the file a table was read from (issue 18, the
#: release report): {"file": name, "sha256": hex digest of its bytes, "bytes": size}. Taken when
#: the table is read, so a file changed afterwards does not change what the report says was
#: protected. Never a value of the table.
FINGERPRINT_ATTR = "microgui.fingerprint"
TEXT_EXTENSIONS: tuple[str, ...] = (".csv", ".tsv", ".txt")
EXCEL_EXTENSIONS: tuple[str, ...] = (".xlsx", ".xlsm", ".xls")
PARQUET_EXTENSIONS: tuple[str, ...] = (".parquet",)
SPSS_EXTENSIONS: tuple[str, ...] = (".sav", ".zsav")
STATA_EXTENSIONS: tuple[str, ...] = (".dta",)
#: Every extension :func:`read_table` accepts (lower case; matching ignores case).
SUPPORTED_EXTENSIONS: tuple[str, ...] = (
    TEXT_EXTENSIONS + EXCEL_EXTENSIONS + PARQUET_EXTENSIONS + SPSS_EXTENSIONS + STATA_EXTENSIONS
)

_DELIMITERS: tuple[str, ...] = (",", ";", "\t", "|")
#: frame.attrs key of a workbook's read sheet and all its sheets: ``(name, (names...))``.
SHEETS_ATTR = "microgui.sheets"

_DELIMITER_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}
#: Characters of the file looked at to guess the delimiter (cut back to a line end).
_SNIFF_CHARS = 64 * 1024
#: Rows of that sample checked for a consistent field count.
_SNIFF_ROWS = 200
#: Records parsed between two progress calls while reading a CSV.
_PROGRESS_ROWS = 8192
#: Signatures of binary formats someone may have renamed to .csv, for a better hint.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "an Excel .xlsx workbook (or another zip archive)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook"),
    (b"PAR1", "a Parquet file"),
    (b"$FL2", "an SPSS .sav file"),
    (b"$FL3", "a compressed SPSS .zsav file"),
    (b"<stata_dta>", "a Stata .dta file"),
)


def file_dialog_filter() -> str:
    """The name filter of the app's Open dialog, all readable tables first.

    Returns
    -------
    str
        Qt name filters separated by ``;;``, e.g. ``"Tables (*.csv ...);;...;;All files (*)"``.
    """

    def patterns(exts: tuple[str, ...]) -> str:
        return " ".join(f"*{e}" for e in exts)

    groups = [
        ("Tables", SUPPORTED_EXTENSIONS),
        ("CSV and text", TEXT_EXTENSIONS),
        ("Excel", EXCEL_EXTENSIONS),
        ("Parquet", PARQUET_EXTENSIONS),
        ("SPSS", SPSS_EXTENSIONS),
        ("Stata", STATA_EXTENSIONS),
    ]
    return ";;".join([f"{label} ({patterns(exts)})" for label, exts in groups] + ["All files (*)"])


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def read_table(
    path: str | os.PathLike[str],
    *,
    sheet: str | int | None = None,
    progress: ProgressFn = no_progress,
) -> Dataset:
    """Read a table file into a :class:`Dataset` with suggested roles.

    Parameters
    ----------
    path
        A ``.csv``/``.tsv``/``.txt``, ``.xlsx``/``.xlsm``/``.xls``, ``.parquet``,
        ``.sav``/``.zsav`` or ``.dta`` file (see :data:`SUPPORTED_EXTENSIONS`).
    sheet
        Excel only: the sheet name or 0-based index (default: the first sheet).
    progress
        Called with the fraction read (about every 8,192 records of a CSV, 20,000 rows of a
        sheet); may raise :class:`~microgui.core.progress.RunCancelled` to stop reading.

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


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes as hex (read in 1 MiB pieces), what ``sha256sum`` prints."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for piece in iter(lambda: handle.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


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


#: About how many bytes of memory reading takes per byte of file, by reader (measured on the
#: bad-input corpus and Census-like tables; a CSV's Arrow table is about 2x the file, 2.5x at the
#: peak, and suggesting roles adds to it). Used to refuse a file that cannot fit before reading it
#: (issue 12), not as a promise.
_MEMORY_PER_BYTE = {"csv": 4, "excel": 6, "parquet": 10, "stat": 6}
#: The most sheet data (unpacked XML) read from one workbook: more is a zip bomb or a sheet
#: better saved as CSV/Parquet (openpyxl would take many minutes and gigabytes).
MAX_WORKBOOK_XML_BYTES = 512 * 1024 * 1024


def available_memory() -> int | None:
    """Bytes of memory the system can give this process now (Linux ``MemAvailable``), or None
    where that cannot be known (then no file is refused for its size)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _megabytes(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n:,} bytes"


def _check_memory(name: str, needed: int, what: str) -> None:
    free = available_memory()
    if free is not None and needed > free:
        raise InvalidInput(
            f"{name!r} is too large to read here: {what} needs about {_megabytes(needed)} of "
            f"memory and {_megabytes(free)} is available; close other programs, read a subset, "
            "or save the table as Parquet (read with far less memory)"
        )


#: About how many bytes each column costs beyond its cells (a pandas block and Series, its
#: role, its suggestion, its writer): ``protect`` of 100,000 columns of 20 records peaks at
#: 3.1 GB. Added to the estimate so that a wide file of few rows is judged on its width.
_BYTES_PER_COLUMN = 30_000
#: The Arrow table and the pandas frame a Parquet file becomes live side by side at the peak.
_PARQUET_COPIES = 2
#: Bytes of a Python object standing for one cell (a str of a categorical's label, bytes, a
#: Decimal, a list), without its characters: measured 120-140 on pandas 3.
_OBJECT_CELL = 120
#: Bytes of a cell in a pandas frame read from SPSS/Stata, by pyreadstat type: a number is a
#: float64; a text cell a Python str (about 50 bytes of object plus its characters) and a
#: pointer. The labels applied afterwards and the roles suggested double it at the peak.
_STAT_CELL = {"double": 8, "string": 58}
_STAT_COPIES = 2


@dataclass(frozen=True)
class _Shape:
    """What a file's header or metadata says of its table before a cell is read."""

    #: number of columns (None: unknown)
    columns: int | None
    #: about how many bytes reading it takes (None: unknown, judged on the file size alone)
    needed: int | None = None
    #: what ``needed`` is made of, for the message ("300,000,000 records x 2 columns")
    what: str = ""


def _check_shape(path: Path, kind: str, size: int) -> None:
    """Refuse a file too wide (:data:`MAX_COLUMNS`) or too large for the memory available,
    judged on its own header or metadata before any cell is read (issue 27: a 2 MB Parquet file
    of 300 million records ended in a MemoryError; its footer says how many records it holds).
    The estimate is the larger of the size-based one and the metadata-based one, never a
    promise; a file whose metadata cannot be read is judged on its size, and its reader says
    what is wrong."""
    try:
        shape = _SHAPE_OF[kind](path)
    except InvalidInput:
        raise
    except Exception:  # noqa: BLE001 - unreadable metadata: the reader names the problem
        shape = _Shape(None)
    columns = shape.columns
    if columns is not None:
        check_width(repr(path.name), columns)
    needed = size * _MEMORY_PER_BYTE[kind] + (columns or 0) * _BYTES_PER_COLUMN
    what = f"reading its {_megabytes(size)}"
    if columns:
        what += f" and {columns:,} columns"
    if shape.needed is not None and shape.needed > needed:
        needed, what = shape.needed, shape.what
    _check_memory(path.name, needed, what)


def _csv_shape(path: Path) -> _Shape:
    """The number of fields in the header line (read up to its end, at most 16 MiB: enough to
    count more than :data:`MAX_COLUMNS` fields), with the delimiter the reader would find."""
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_CHARS)
        line = head
        while line.count(b"\n") < 2 and len(line) < 16 * 1024 * 1024:  # a sep= line, the header
            piece = handle.read(1 << 20)
            if not piece:
                break
            line += piece
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        codec = "utf-16"
    elif head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        codec = "utf-32"
    else:
        codec = "utf-8-sig"
    text = line.decode(codec, errors="replace")
    delimiter, skip = _detect_delimiter(text[:_SNIFF_CHARS], _preferred_delimiter(path))
    lines = text.split("\n", skip + 1)
    header = lines[skip] if len(lines) > skip else ""
    try:
        fields = next(csv.reader([header.rstrip("\r")], delimiter=delimiter), [])
    except csv.Error:  # a quoted header spanning lines: the reader says what is wrong
        return _Shape(None)
    return _Shape(len(fields))


def _parquet_shape(path: Path) -> _Shape:
    """Records and columns from the Parquet footer, and the bytes reading them takes: the frame
    (a fixed-width type its width, text its offsets and about the length of its values from the
    column statistics' min and max, a Python object per cell for binary, decimal and nested
    columns), held as an Arrow table and a pandas frame at once, plus the most one column's
    role suggestion takes (a categorical's cells become Python strings there). A few MB of
    dictionary-encoded or null values can stand for hundreds of millions of records: 300
    million of one e-mail address took more than 21 GB. Measured within about a third of the
    peak of reading 3 to 5 million records of text, categories, numbers and nulls."""
    import importlib

    # untyped modules, imported as values (a type: ignore here would make the readers' unused)
    pa = importlib.import_module("pyarrow")
    pq = importlib.import_module("pyarrow.parquet")
    meta = pq.ParquetFile(path).metadata
    rows = int(meta.num_rows)
    schema = meta.schema.to_arrow_schema()
    lengths = _parquet_text_lengths(meta)
    held = work = 0  # bytes per record: of the frame; of one column's suggestion (the most)
    for field_ in schema:
        kind = field_.type
        length = lengths.get(field_.name, 8)
        if pa.types.is_dictionary(kind):
            held += max(kind.index_type.bit_width // 8, 1)  # a Categorical's codes
            work = max(work, _OBJECT_CELL + length)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            held += 16 + length  # offsets and characters, Arrow-backed
            work = max(work, 16 + length)
        elif pa.types.is_null(kind) or pa.types.is_boolean(kind) or pa.types.is_temporal(kind):
            held += 8  # a pointer to None; bool and dates with a missing cell are objects
            work = max(work, 24)
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
            held += 8  # float64 once a cell is missing
            work = max(work, 24)
        else:  # binary, decimal, list, struct, map: a Python object per cell
            held += 8 + _OBJECT_CELL + length
            work = max(work, _OBJECT_CELL + length)
    needed = rows * (held * _PARQUET_COPIES + work) + len(schema) * _BYTES_PER_COLUMN
    return _Shape(len(schema), needed, f"its {rows:,} records x {len(schema):,} columns")


def _parquet_text_lengths(meta: Any) -> dict[str, int]:
    """{top-level column: the longest min/max statistic of its text}: about how long its values
    are (only lengths are read; no value is kept or shown)."""
    lengths: dict[str, int] = {}
    for g in range(min(meta.num_row_groups, 4)):  # a sample: the footer of a wide file is long
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            stats = chunk.statistics
            if stats is None or not stats.has_min_max:
                continue
            top = chunk.path_in_schema.split(".", 1)[0]
            longest = max(len(_stat_bytes(stats.min)), len(_stat_bytes(stats.max)))
            lengths[top] = max(lengths.get(top, 0), longest)
    return lengths


def _stat_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", errors="replace")


def _stat_shape(path: Path) -> _Shape:
    """Records and variables from an SPSS/Stata header (pyreadstat ``metadataonly``): numbers a
    float64 per cell, text a Python string each. SPSS may leave the record count unknown (-1):
    then only the width is judged."""
    import pyreadstat

    spss = path.suffix.lower() in SPSS_EXTENSIONS
    reader = pyreadstat.read_sav if spss else pyreadstat.read_dta
    try:
        _, meta = reader(os.fspath(path), metadataonly=True)
    except Exception as exc:
        if "encoding" not in str(exc).lower() and "convert string" not in str(exc).lower():
            raise
        _, meta = reader(os.fspath(path), metadataonly=True, encoding="latin1")
    columns = int(meta.number_columns or 0)
    rows = meta.number_rows
    if rows is None or rows < 0:
        return _Shape(columns)
    types = dict(getattr(meta, "readstat_variable_types", None) or {})
    widths = dict(getattr(meta, "variable_storage_width", None) or {})
    per_row = sum(
        _STAT_CELL["string"] + int(widths.get(col, 8) or 8)
        if types.get(col) == "string"
        else _STAT_CELL["double"]
        for col in meta.column_names
    )
    needed = int(rows) * per_row * _STAT_COPIES + columns * _BYTES_PER_COLUMN
    return _Shape(columns, needed, f"its {int(rows):,} records x {columns:,} variables")


def _excel_shape(path: Path) -> _Shape:
    """Excel: the unpacked size already bounds a workbook (:data:`MAX_WORKBOOK_XML_BYTES`), and
    a sheet holds at most 16,384 columns; nothing more is read before the sheet."""
    del path
    return _Shape(None)


_SHAPE_OF: dict[str, Callable[[Path], _Shape]] = {
    "csv": _csv_shape,
    "parquet": _parquet_shape,
    "stat": _stat_shape,
    "excel": _excel_shape,
}


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


def _check_workbook(path: Path) -> int:
    """The unpacked size of an .xlsx/.xlsm workbook's parts, refusing more than
    :data:`MAX_WORKBOOK_XML_BYTES` (a zip bomb: a few MB that unpack to gigabytes of XML)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            total = sum(max(info.file_size, 0) for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return path.stat().st_size  # not a zip: the Excel reader says what is wrong
    if total > MAX_WORKBOOK_XML_BYTES:
        raise InvalidInput(
            f"{path.name!r} unpacks to {_megabytes(total)} of sheet data, more than microgui "
            f"reads from a workbook ({_megabytes(MAX_WORKBOOK_XML_BYTES)}): it is damaged or "
            "built to exhaust memory, or a sheet too large for Excel reading; save the sheet "
            "as CSV or Parquet and open that"
        )
    return total


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


def _check_readable(path: Path) -> None:
    name = path.name or str(path)
    if not path.exists():
        folder = (
            "the current folder"
            if str(path.parent) in ("", ".")
            else f"folder {str(path.parent)!r}"
        )
        raise InvalidInput(
            f"file {name!r} was not found in {folder}; check the file name and folder"
        )
    if path.is_dir():
        raise InvalidInput(f"{name!r} is a folder, not a file; choose a table file inside it")
    if not path.is_file():  # a FIFO, device or socket: reading it would block or never end
        raise InvalidInput(
            f"{name!r} is not a regular file (a FIFO, device or socket); save the table to a "
            "file and choose that file"
        )
    ext = path.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        what = f"extension {path.suffix!r}" if path.suffix else "no extension"
        raise InvalidInput(
            f"file {name!r} has {what}, which microgui cannot read; supported are "
            f"{', '.join(SUPPORTED_EXTENSIONS)} (save the table in one of these formats)"
        )
    with suppress(OSError):
        if path.stat().st_size == 0:
            raise InvalidInput(
                f"file {name!r} is empty (0 bytes); choose the file that holds the table"
            )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _read_error(path, exc) from exc


def _read_error(path: Path, exc: OSError) -> InvalidInput:
    if isinstance(exc, PermissionError):
        return InvalidInput(
            f"file {path.name!r} cannot be opened (permission denied); check its permissions"
        )
    return InvalidInput(f"file {path.name!r} cannot be read ({exc.strerror or exc})")


def _check_columns(names: list[str], name: str, where: Callable[[int], str]) -> None:
    """Refuse blank and duplicate column names; ``where(i)`` names column ``i`` for the message."""
    for i, col in enumerate(names):
        if col.strip() == "":
            hint = (
                " (is there a delimiter at the end of the header line?)"
                if i == len(names) - 1 and len(names) > 1
                else ""
            )
            raise InvalidInput(
                f"{where(i)} of {name!r} has no name{hint}; give every column a name in the header"
            )
    seen: dict[str, int] = {}
    for i, col in enumerate(names):
        if col in seen:
            raise InvalidInput(
                f"{name!r} has two columns named {col!r} ({where(seen[col])} and {where(i)}); "
                "rename one of them so every column name is unique"
            )
        seen[col] = i


def _zero_records(name: str, what: str = "") -> InvalidInput:
    return InvalidInput(
        f"{what}{name!r} has a header but no records (zero data rows); "
        "choose the file that holds the data"
    )


# --- CSV ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvFormat:
    """How a delimited text file is encoded: the codec name and the field delimiter."""

    encoding: str
    delimiter: str
    #: The file starts with a byte-order mark (stripped when read).
    bom: bool = False


def detect_csv_format(path: str | os.PathLike[str]) -> CsvFormat:
    """Detect the encoding and delimiter of a CSV/TSV/TXT file (as :func:`read_table` does).

    Raises
    ------
    InvalidInput
        The file is missing, empty, binary or cannot be decoded.
    """
    source = Path(path)
    _check_readable(source)
    text, fmt = _decode(_read_bytes(source), source.name)
    delimiter, _ = _detect_delimiter(text, _preferred_delimiter(source))
    return CsvFormat(fmt.encoding, delimiter, fmt.bom)


def _preferred_delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _decode(raw: bytes, name: str) -> tuple[str, CsvFormat]:
    """Decode the bytes: BOM first (UTF-8/16/32), else UTF-8, else cp1252, else Latin-1."""
    if not raw:
        raise InvalidInput(
            f"file {name!r} is empty (0 bytes); choose the file that holds the table"
        )
    boms = (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    )
    for bom, codec in boms:
        if raw.startswith(bom):
            try:
                return raw.decode(codec), CsvFormat(codec, ",", bom=True)
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"file {name!r} starts with a {codec.upper()} byte-order mark but is not valid "
                    f"{codec.upper()} (byte {exc.start}); save it again as UTF-8"
                ) from exc
    if b"\x00" in raw[:_SNIFF_CHARS] or b"\x00" in raw[-_SNIFF_CHARS:]:
        kind = next((what for magic, what in _MAGIC if raw.startswith(magic)), None)
        hint = (
            f"it looks like {kind}; give it its proper extension"
            if kind
            else "save the table as CSV text (UTF-8), or as UTF-16 with a byte-order mark"
        )
        raise InvalidInput(
            f"file {name!r} is a binary file (it contains NUL bytes), not a text table; {hint}"
        )
    for codec in ("utf-8", "cp1252"):
        try:
            return raw.decode(codec), CsvFormat(codec, ",")
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1"), CsvFormat("latin-1", ",")


def _sample_rows(sample: str, delimiter: str, truncated: bool) -> list[list[str]]:
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter):
            if row:
                rows.append(row)
            if len(rows) > _SNIFF_ROWS:
                break
    except csv.Error:
        pass  # a quote opened in the sample and closed after it; judge on what was read
    if truncated and len(rows) > 1:
        rows.pop()  # the last row may be cut in the middle
    return rows


def _detect_delimiter(text: str, preferred: str) -> tuple[str, int]:
    """The delimiter of ``text`` and the number of leading lines to skip (an Excel ``sep=`` line).

    csv.Sniffer makes the first guess; it is kept when the sample has the same field count
    (> 1) on every row. Otherwise the candidate giving a consistent count wins (the most fields,
    ties to ``preferred`` then ``, ; tab |``): a ``;`` file with decimal commas has a consistent
    count only for ``;``. With no consistent candidate (a ragged file) the one splitting the
    header into most fields is used, so the ragged-row error names the right line.
    """
    first_line = text.split("\n", 1)[0].rstrip("\r")
    if len(first_line) == 5 and first_line.lower().startswith("sep="):
        return first_line[4], 1  # Excel's "sep=;" hint line
    truncated = len(text) > _SNIFF_CHARS
    sample = text[:_SNIFF_CHARS]
    if truncated and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]
    order = [preferred] + [d for d in _DELIMITERS if d != preferred]
    header_counts: dict[str, int] = {}
    consistent: dict[str, int] = {}
    for delim in order:
        rows = _sample_rows(sample, delim, truncated)
        if not rows:
            continue
        header_counts[delim] = len(rows[0])
        if len(rows[0]) > 1 and all(len(r) == len(rows[0]) for r in rows):
            consistent[delim] = len(rows[0])
    sniffed: str | None = None
    with suppress(csv.Error):
        sniffed = (
            csv.Sniffer().sniff(sample[: 16 * 1024], delimiters="".join(_DELIMITERS)).delimiter
        )
    if sniffed in consistent:
        return str(sniffed), 0
    if consistent:
        return max(order, key=lambda d: (consistent.get(d, 0), -order.index(d))), 0
    best = max(order, key=lambda d: (header_counts.get(d, 0), -order.index(d)))
    return (best if header_counts.get(best, 0) > 1 else preferred), 0


def _read_csv(path: Path, progress: ProgressFn = no_progress) -> pd.DataFrame:
    """A CSV/TSV/TXT file as a frame of text cells (see the module docstring).

    pyarrow parses the bytes in pieces of about :data:`_PROGRESS_ROWS` records (progress and a
    cancel between two); a UTF-8 file is never held whole, nor decoded to one Python string.
    Where pyarrow and the csv module could disagree, or the file has an error (ragged rows, a
    stray quote), the csv module reads it: the cells, the lines and the messages are those of
    :func:`_read_csv_with_csv_module`, the reference this reader is tested against.
    """
    name = path.name
    source = _csv_bytes(path)
    progress = _forward_only(progress)  # a file read again starts over: the bar waits instead
    progress(0.05, f"reading {name}")
    preferred = _preferred_delimiter(path)
    try:
        return _read_utf8_csv(source, name, preferred, progress)
    except _NotUtf8:
        # Not UTF-8 after all (cp1252, Latin-1, or a byte-order mark that lies): decode the
        # whole file as the csv module path does, and read its text as UTF-8.
        source = _decoded_bytes(path, _read_bytes(path))
    try:
        return _read_utf8_csv(source, name, preferred, progress)
    except _NotUtf8:  # cannot be (the text is UTF-8 now): the reference reads it
        return _read_csv_with_csv_module(path, progress)


def _forward_only(progress: ProgressFn) -> ProgressFn:
    """``progress`` told no smaller fraction than it was told before."""
    done = 0.0

    def report(fraction: float, status: str = "", /) -> None:
        nonlocal done
        done = max(done, fraction)
        progress(done, status)

    return report


def _read_csv_with_csv_module(path: Path, progress: ProgressFn = no_progress) -> pd.DataFrame:
    """The csv module's reading of a CSV: the whole file decoded to text, every record a Python
    list. The reference of :func:`_read_csv`, which falls back to the same parse
    (:func:`_csv_records`) for the files pyarrow cannot vouch for."""
    name = path.name
    text, _fmt = _decode(_read_bytes(path), name)
    progress(0.05, f"reading {name}")
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM the codec did not consume (e.g. UTF-16 with a doubled mark)
    if not text.strip():
        raise _blank_file(name)
    delimiter, skip = _detect_delimiter(text, _preferred_delimiter(path))
    stream = io.StringIO(text, newline="")
    size = max(len(text), 1)
    found = _csv_records(stream, lambda: stream.tell() / size, name, delimiter, skip, progress)
    return _frame_from_records(found, name)


def _blank_file(name: str) -> InvalidInput:
    return InvalidInput(
        f"file {name!r} holds only blank lines, no table; choose the file that holds the data"
    )


@dataclass
class _CsvRecords:
    """What :func:`_csv_records` found: the header, where it and the records are in the file
    (see :data:`~microgui.core.dataset.LINES_ATTR`), and the records (or their number)."""

    header: list[str]
    header_line: int
    first_record_line: int
    breaks: list[tuple[int, int]]
    count: int
    rows: list[list[str]] | None


def _csv_records(
    stream: IO[str],
    fraction: Callable[[], float],
    name: str,
    delimiter: str,
    skip: int,
    progress: ProgressFn,
    *,
    keep_rows: bool = True,
) -> _CsvRecords:
    """Parse ``stream`` (text, ``newline=""``) with the csv module, raising the one-line error
    of a parse error, a bad header or ragged rows; ``fraction()`` says how far the stream is
    read, for progress. Without ``keep_rows`` only the records' number and lines are kept."""
    for _ in range(skip):
        stream.readline()
    reader = csv.reader(stream, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    count = 0
    ragged: list[tuple[int, int]] = []
    # Where records start: (row, line) each time a record is not on the line after the previous
    # one (blank lines, values spanning lines); see dataset.LINES_ATTR.
    breaks: list[tuple[int, int]] = []
    expected = first_record_line = 0
    previous = 0
    check_at = _PROGRESS_ROWS
    try:
        for row in reader:
            start = previous + 1 + skip  # first physical line of this record
            previous = reader.line_num
            if not row:
                continue  # blank line
            if header is None:
                header, header_line = row, start
                expected = first_record_line = previous + 1 + skip
                continue
            if len(row) != len(header):
                ragged.append((start, len(row)))
                continue
            if start != expected:
                breaks.append((count, start))
            expected = previous + 1 + skip
            count += 1
            if keep_rows:
                rows.append(row)
            if count >= check_at:
                check_at += _PROGRESS_ROWS
                progress(0.05 + 0.8 * fraction(), f"reading {name}: {count:,} records")
    except csv.Error as exc:
        line = reader.line_num + skip
        raise InvalidInput(
            f"line {line} of {name!r} cannot be parsed ({exc}); check the quotes on that line "
            '(a quote inside a quoted value must be doubled: "")'
        ) from exc
    if header is None:
        raise _blank_file(name)  # nothing but an Excel "sep=" line
    _check_columns(header, name, lambda i: f"column {i + 1} (line {header_line})")
    if ragged:
        line, found = ragged[0]
        others = f" ({len(ragged) - 1} more such line(s))" if len(ragged) > 1 else ""
        raise InvalidInput(
            f"line {line} of {name!r} has {found} field(s) but the header has {len(header)} "
            f"(fields separated by {_DELIMITER_NAMES.get(delimiter, repr(delimiter))}){others}; "
            "quote values that contain the delimiter, or add the missing fields"
        )
    if not count:
        raise _zero_records(name, "file ")
    return _CsvRecords(
        header, header_line, first_record_line, breaks, count, rows if keep_rows else None
    )


def _frame_from_records(found: _CsvRecords, name: str) -> pd.DataFrame:
    assert found.rows is not None
    frame = pd.DataFrame(found.rows, columns=pd.Index(found.header, dtype=object), dtype=str)
    frame.attrs[SOURCE_ATTR] = name
    frame.attrs[LINES_ATTR] = shared_attr((found.first_record_line, tuple(found.breaks)))
    return frame


# The fast reader: pyarrow.csv on UTF-8 bytes, in pieces ------------------------------------------

#: Bytes of the first piece; later pieces hold about :data:`_PROGRESS_ROWS` records (estimated
#: from the pieces before), within these bounds.
_PIECE_MIN = 64 * 1024
_PIECE_MAX = 4 * 1024 * 1024
#: pyarrow parses a piece in blocks of this size, in parallel (or of twice the longest record).
_ARROW_BLOCK = 1 << 20
_QUOTE, _LF, _CR = ord('"'), ord("\n"), ord("\r")
#: pyarrow's message for a cell that is no UTF-8
_ARROW_NOT_UTF8 = re.compile(r"(?:In CSV column #\d+: )?CSV conversion error to \w+: invalid UTF8")


class _NotUtf8(Exception):
    """The file turned out not to be UTF-8: it is read again through :func:`_decode`."""


class _AskCsvModule(Exception):
    """pyarrow cannot vouch for this file (a parse error, ragged rows, a quote inside an
    unquoted value, an unusual delimiter): the csv module reads it and names any error's line."""


@dataclass(frozen=True)
class _CsvBytes:
    """A CSV's text as UTF-8 bytes: the file itself from ``start`` (after its byte-order
    marks) when it is UTF-8, read in pieces; else (``data``) its text as :func:`_decode`
    decodes it, encoded again, in memory."""

    path: Path
    start: int
    size: int
    data: bytes | None = None

    def open(self) -> IO[bytes]:
        stream: IO[bytes] = io.BytesIO(self.data) if self.data is not None else _open(self.path)
        stream.seek(self.start)
        return stream


def _open(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except OSError as exc:
        raise _read_error(path, exc) from exc


def _csv_bytes(path: Path) -> _CsvBytes:
    """Where the UTF-8 text of ``path`` starts, refusing what :func:`_decode` refuses (an empty
    or binary file) from the first and last 64 KiB; a UTF-16/32 file is decoded here."""
    name = path.name
    with _open(path) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(_SNIFF_CHARS)
            tail = b""
            if size > len(head):
                fh.seek(max(size - _SNIFF_CHARS, len(head)))
                tail = fh.read()
        except OSError as exc:
            raise _read_error(path, exc) from exc
    if not head:
        _decode(head, name)  # raises: the file is empty
    if head.startswith(codecs.BOM_UTF8):
        start = 6 if head.startswith(codecs.BOM_UTF8 * 2) else 3  # a doubled mark: both go
        return _CsvBytes(path, start, size - start)
    boms = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    if head.startswith(boms):
        return _decoded_bytes(path, _read_bytes(path))
    if b"\x00" in head or b"\x00" in tail:
        _decode(head + tail, name)  # raises: a binary file (NUL bytes near one end)
    return _CsvBytes(path, 0, size)


def _decoded_bytes(path: Path, raw: bytes) -> _CsvBytes:
    text, _fmt = _decode(raw, path.name)
    del raw
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM the codec did not consume (e.g. UTF-16 with a doubled mark)
    data = text.encode("utf-8")
    return _CsvBytes(path, 0, len(data), data)


def _utf8_text(data: bytes, final: bool) -> str:
    """``data`` decoded (a character cut at the end is left out unless ``final``)."""
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final)
    except UnicodeDecodeError:
        raise _NotUtf8 from None


def _line_end(data: bytes) -> int:
    """Where the first line of ``data`` ends (after ``\\n``, ``\\r\\n`` or ``\\r``, as
    ``readline`` of a text stream with ``newline=""`` reads it)."""
    ends = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
    if not ends:
        return len(data)
    end = min(ends)
    return end + 2 if data[end : end + 2] == b"\r\n" else end + 1


def _read_utf8_csv(
    source: _CsvBytes, name: str, preferred: str, progress: ProgressFn
) -> pd.DataFrame:
    with source.open() as fh:
        head = fh.read(4 * (_SNIFF_CHARS + 1))  # at least _SNIFF_CHARS + 1 characters
        whole = len(head) >= source.size
        text = _utf8_text(head, whole)
        if not text.strip() and (whole or not _utf8_text(head + fh.read(), True).strip()):
            raise _blank_file(name)
        delimiter, skip = _detect_delimiter(text, preferred)
        del text
        skipped = _line_end(head) if skip else 0
        try:
            if len(delimiter.encode("utf-8")) != 1 or delimiter in '"\r\n':
                raise _AskCsvModule  # pyarrow splits on one byte, and never on these
            fh.seek(source.start + skipped)
            return _read_pieces(fh, source.size - skipped, name, delimiter, skip, progress)
        except _AskCsvModule:
            pass
    return _read_with_csv_module(source, name, delimiter, skip, skipped, progress)


def _read_pieces(
    fh: IO[bytes], size: int, name: str, delimiter: str, skip: int, progress: ProgressFn
) -> pd.DataFrame:
    """Scan and parse the records of ``fh`` (after any skipped line) piece by piece."""
    scan = _RecordScan(delimiter)
    tables: list[Any] = []
    header: list[str] | None = None
    header_line = first_record_line = 0
    breaks: list[tuple[int, int]] = []
    count = 0  # data records parsed
    expected = 0  # 0-based line the next record starts on when nothing comes between
    base = 0  # position of pending[0] in the data
    pending = b""
    scanned = 0  # position up to which the data was scanned
    inside_at = -1  # the position of the last line end inside quotes
    piece = _PIECE_MIN
    while True:
        more = fh.read(piece)
        final = not more
        pending += more
        stop = base + len(pending) - (1 if not final and pending.endswith(b"\r") else 0)
        found = scan.feed(memoryview(pending)[scanned - base : stop - base], scanned, final)
        scanned = stop
        inside_at = max(inside_at, found.inside_at)
        starts, ends = found.starts, found.ends
        if found.cut > base and starts.size:
            if header is None:
                begin, end = found.first
                header = _header_fields(pending[begin - base : end - base], delimiter)
                header_line, expected = int(starts[0]) + 1 + skip, int(ends[0]) + 1
                first_record_line = expected + 1 + skip
                starts, ends = starts[1:], ends[1:]
            if starts.size:
                after = np.concatenate(([expected], ends[:-1] + 1))
                for i in np.flatnonzero(starts != after).tolist():
                    breaks.append((count + i, int(starts[i]) + 1 + skip))
                expected = int(ends[-1]) + 1
            block = max(_ARROW_BLOCK, 2 * found.longest + 2)
            table = _arrow_table(
                memoryview(pending)[: found.cut - base], len(header), delimiter,
                inside_at >= base, block,
            )  # fmt: skip
            if table.num_rows != found.starts.size:
                raise _AskCsvModule  # pyarrow saw other records than the csv module would
            tables.append(table)
            count += starts.size
            piece = min(max(found.cut * _PROGRESS_ROWS // max(count, 1), _PIECE_MIN), _PIECE_MAX)
        if found.cut > base:
            pending = pending[found.cut - base :]
            base = found.cut
        if final:
            break
        done = min(0.05 + 0.8 * base / max(size, 1), 0.85)
        progress(done, f"reading {name}: {count:,} records")
    if header is None:
        raise _blank_file(name)  # nothing but an Excel "sep=" line
    first = tables[0].slice(0, 1).to_pylist()[0]
    if [first[str(i)] for i in range(len(header))] != header:
        raise _AskCsvModule  # pyarrow read the header otherwise
    _check_columns(header, name, lambda i: f"column {i + 1} (line {header_line})")
    if not count:
        raise _zero_records(name, "file ")
    progress(0.85, f"building the table of {count:,} records")
    import pyarrow as pa  # type: ignore[import-untyped]

    table = pa.concat_tables(tables)
    del tables
    return _arrow_frame(table, header, name, first_record_line, breaks)


def _arrow_frame(
    table: Any, header: list[str], name: str, first_line: int, breaks: list[tuple[int, int]]
) -> pd.DataFrame:
    """The frame of a pyarrow table whose first row is the header: text cells (pandas ``str``
    dtype, the table's buffers without a copy), the header's names, the file and lines."""
    frame: pd.DataFrame = table.slice(1).to_pandas()
    frame.columns = pd.Index(header, dtype=object)
    frame.attrs[SOURCE_ATTR] = name
    frame.attrs[LINES_ATTR] = shared_attr((first_line, tuple(breaks)))
    return frame


def _header_fields(raw: bytes, delimiter: str) -> list[str]:
    """The fields of the header record's bytes, as the csv module splits them."""
    text = _utf8_text(raw, True)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error:
        raise _AskCsvModule from None
    if len(rows) != 1:
        raise _AskCsvModule
    return rows[0]


def _arrow_table(data: memoryview, width: int, delimiter: str, multiline: bool, block: int) -> Any:
    """The records of ``data`` (whole records, UTF-8) as a pyarrow table of ``width`` large
    string columns named ``"0"``, ``"1"``, ...: every cell the exact text of the file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]

    names = [str(i) for i in range(width)]
    try:
        return pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=block),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char='"',
                double_quote=True,
                escape_char=False,
                newlines_in_values=multiline,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.large_string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                check_utf8=True,
            ),
        )
    except pa.ArrowInvalid as exc:
        if _ARROW_NOT_UTF8.match(str(exc)):  # (a parse error quotes the record: not searched)
            raise _NotUtf8 from exc
        raise _AskCsvModule from exc


@dataclass(frozen=True)
class _Found:
    """Records a :class:`_RecordScan` chunk completed: the 0-based first and last line of each
    non-blank one, ``cut`` = where the last ends (after its line end), the byte range of the
    first non-blank one, the longest record's bytes, and the position of the chunk's last line end
    inside quotes (-1: none)."""

    starts: np.ndarray
    ends: np.ndarray
    cut: int
    first: tuple[int, int]
    longest: int
    inside_at: int


class _RecordScan:
    """Finds where the records of UTF-8 CSV bytes end and which lines they span, chunk by chunk,
    vectorized (no field is parsed).

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (the csv module's lines, read through
    universal newlines); a record ends at a line end outside quotes, and a record whose only
    line is empty is blank. Quotes follow the rule the csv module (``strict``, ``""`` for a
    quote) and pyarrow share on well-formed files: a quote at the start of a field opens a quoted
    value; inside, a quote either doubles or closes it, and a delimiter, a line end or the end
    of the data follows a closing quote. Then every quote toggles "inside", and counting quotes
    tells inside from outside. A quote that breaks this rule (one inside an unquoted value, text
    after a closing quote, a quoted value left open) raises :class:`_AskCsvModule`: the csv
    module reads that file, and names the line of a real error.
    """

    def __init__(self, delimiter: str) -> None:
        self._near = np.array([ord(delimiter), _LF, _CR, _QUOTE], dtype=np.int64)
        self._quotes = 0  # quotes so far: odd = inside a quoted value
        self._last = -1  # the byte before the chunk (-1: the start of the data)
        self._closing_last = False  # the previous chunk ended with a closing quote
        self._lines = 0  # line ends so far
        self._record_at = 0  # where the record being read starts ...
        self._record_line = 0  # ... and its first line

    def feed(self, chunk: memoryview, offset: int, final: bool) -> _Found:
        """Scan ``chunk``, the bytes from ``offset`` on (a chunk that is not ``final`` must not
        end with ``\\r``: the next may start with ``\\n``)."""
        a = np.frombuffer(chunk, dtype=np.uint8)
        n = a.size
        ends = np.flatnonzero(a == _LF)
        cr = np.flatnonzero(a == _CR)
        if cr.size:  # a lone \r ends a line too (the last byte only when final)
            lone = cr[(cr == n - 1) | (a[np.minimum(cr + 1, n - 1)] != _LF)]
            ends = np.union1d(ends, lone)
        # where each line end starts: the \r of a \r\n
        crlf = (a[ends] == _LF) & (ends > 0) & (a[np.maximum(ends - 1, 0)] == _CR)
        content_end = ends - crlf
        q = np.flatnonzero(a == _QUOTE)
        if self._closing_last and n and a[0] not in self._near:
            raise _AskCsvModule
        if q.size:
            closes = ((self._quotes + np.arange(q.size)) & 1).astype(bool)
            opening, closing = q[~closes], q[closes]
            before = np.where(
                opening > 0, a[np.maximum(opening - 1, 0)].astype(np.int64), self._last
            )
            if not np.isin(before, np.append(self._near, -1)).all():
                raise _AskCsvModule  # a quote inside an unquoted value
            after = closing[closing + 1 < n] + 1
            if not np.isin(a[after], self._near).all():
                raise _AskCsvModule  # text after a closing quote (the csv module refuses it)
            self._closing_last = bool(closing.size) and int(closing[-1]) == n - 1
        else:
            self._closing_last = False
        if q.size or self._quotes & 1:
            inside = ((self._quotes + np.searchsorted(q, ends)) & 1).astype(bool)
            record_end = np.flatnonzero(~inside)
            inside_at = offset + int(ends[inside][-1]) if inside.any() else -1
        else:
            record_end = np.arange(ends.size)
            inside_at = -1
        last_line = self._lines + record_end
        first_line = np.concatenate(([self._record_line], last_line[:-1] + 1))
        begin = np.concatenate(([self._record_at], offset + ends[record_end[:-1]] + 1))
        stop = offset + content_end[record_end]
        after_end = offset + ends[record_end] + 1
        if record_end.size:
            self._record_at, self._record_line = int(after_end[-1]), int(last_line[-1]) + 1
        else:
            first_line, begin = first_line[:0], begin[:0]
        self._lines += ends.size
        self._quotes += q.size
        if n:
            self._last = int(a[-1])
        if final:
            if self._quotes & 1:
                raise _AskCsvModule  # a quoted value left open at the end of the file
            if self._record_at < offset + n:  # the last record has no line end
                first_line = np.append(first_line, self._record_line)
                last_line = np.append(last_line, self._lines)
                begin = np.append(begin, self._record_at)
                stop = np.append(stop, offset + n)
                after_end = np.append(after_end, offset + n)
                self._record_at = offset + n
        filled = stop > begin
        longest = int((after_end - begin).max()) if begin.size else 0
        firsts = np.flatnonzero(filled)
        first = (int(begin[firsts[0]]), int(stop[firsts[0]])) if firsts.size else (0, 0)
        return _Found(
            first_line[filled], last_line[filled], self._record_at, first, longest, inside_at
        )


def _read_with_csv_module(
    source: _CsvBytes, name: str, delimiter: str, skip: int, skipped: int, progress: ProgressFn
) -> pd.DataFrame:
    """The csv module parses the file (:func:`_csv_records`: its errors and lines are the
    reference's); pyarrow then builds the cells when it finds the same records, else the csv
    module's rows are used."""
    with source.open() as fh:
        try:
            data = fh.read()
        except OSError as exc:
            raise _read_error(source.path, exc) from exc
    raw = io.BytesIO(data)
    size = max(len(data), 1)
    keep = len(delimiter.encode("utf-8")) != 1 or delimiter in '"\r\n'
    progress(0.05, f"reading {name} record by record")
    try:
        stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        found = _csv_records(
            stream, lambda: raw.tell() / size, name, delimiter, skip, progress, keep_rows=keep
        )
    except UnicodeDecodeError:
        raise _NotUtf8 from None
    if found.rows is not None:
        return _frame_from_records(found, name)
    progress(0.85, f"building the table of {found.count:,} records")
    try:
        table = _arrow_table(
            memoryview(data)[skipped:], len(found.header), delimiter, True, len(data) + 1
        )
    except _AskCsvModule:
        table = None
    if table is not None and table.num_rows == found.count + 1:
        first = table.slice(0, 1).to_pylist()[0]
        if [first[str(i)] for i in range(len(found.header))] == found.header:
            return _arrow_frame(table, found.header, name, found.first_record_line, found.breaks)
    del table
    raw.seek(0)
    found = _csv_records(
        io.TextIOWrapper(raw, encoding="utf-8", newline=""),
        lambda: raw.tell() / size, name, delimiter, skip, progress,
    )  # fmt: skip
    return _frame_from_records(found, name)


# --- Excel -------------------------------------------------------------------------------------


def _excel_column(i: int) -> str:
    letters = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def _cell_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _read_excel(
    path: Path, sheet: str | int | None, progress: ProgressFn = no_progress
) -> pd.DataFrame:
    """One sheet of a workbook (the first unless ``sheet`` names one: its name, its 0-based
    index, or its position from 1 as text). When the workbook has several sheets and none was
    chosen, every refusal says which sheet was read and how to choose another."""
    seen: list[str] = []
    try:
        return _read_sheet(path, sheet, seen, progress)
    except InvalidInput as exc:
        if sheet is None and len(seen) > 1:
            others = ", ".join(map(repr, seen[1:4])) + (", ..." if len(seen) > 4 else "")
            raise InvalidInput(
                f"{exc} (read the first of {len(seen)} sheets, {seen[0]!r}; the others: {others}: "
                "choose one with --sheet NAME)"
            ) from None
        raise


def _choose_sheet(name: str, sheets: list[str], sheet: str | int | None) -> str:
    if sheet is None:
        sheet = 0
    if isinstance(sheet, int):
        if not 0 <= sheet < len(sheets):
            raise InvalidInput(
                f"{name!r} has {len(sheets)} sheet(s), so there is no sheet number {sheet} "
                f"(counting from 0); its sheets are {', '.join(map(repr, sheets))}"
            )
        return sheets[sheet]
    if sheet in sheets:
        return sheet
    if sheet.strip().isdigit() and 1 <= int(sheet) <= len(sheets):
        return sheets[int(sheet) - 1]  # a position, counting from 1 (--sheet 2)
    raise InvalidInput(
        f"{name!r} has no sheet named {sheet!r}; its sheets are {', '.join(map(repr, sheets))}"
    )


ExcelEngine = Literal["calamine", "openpyxl", "xlrd"]


def _read_sheet(
    path: Path,
    sheet: str | int | None,
    seen: list[str],
    progress: ProgressFn = no_progress,
    engine: ExcelEngine | None = None,
) -> pd.DataFrame:
    """Read the chosen sheet: ``.xlsx``/``.xlsm`` with calamine (python-calamine) when it is
    installed and can tell everything (see :func:`_calamine_sheet`), else with openpyxl, as
    before issue 17 and with the same cells; ``.xls`` with xlrd."""
    name = path.name
    if engine is None:
        engine = "xlrd" if path.suffix.lower() == ".xls" else "calamine"
    raw: pd.DataFrame | None = None
    if engine == "calamine":
        found = _calamine_sheet(path, sheet, seen, progress)
        if found is not None:
            raw, sheet_name, sheets = found
        engine = "openpyxl"  # for whatever calamine left to openpyxl
    if raw is None:
        raw, sheet_name, sheets = _pandas_sheet(path, sheet, seen, engine)
        if engine == "openpyxl" and raw.isna().to_numpy().any():
            # Formula cells with no saved value come back missing from openpyxl: keep their
            # formula as text instead (never a silently emptied cell; issue 12). A sheet with no
            # missing cell has none, and its XML is not read a second time.
            for (row, col), formula in _uncached_formulas(path, sheet_name).items():
                if row in raw.index and col in raw.columns:
                    raw.loc[row, col] = formula
    progress(0.9, f"checking sheet {sheet_name}")
    # Formatted but empty rows and columns come back as all-NaN; they are not part of the table.
    raw = raw.dropna(axis=0, how="all")
    if raw.empty:
        raise InvalidInput(
            f"sheet {sheet_name!r} of {name!r} is empty; choose the sheet that holds the table"
        )
    names = [_cell_text(v) for v in raw.iloc[0]]
    keep = [i for i, n in enumerate(names) if n.strip() or raw.iloc[1:, i].notna().any()]
    raw = raw.iloc[:, keep]
    names = [names[i] for i in keep]
    letters = [_excel_column(int(raw.columns[j])) for j in range(len(keep))]
    _check_columns(names, name, lambda i: f"column {letters[i]} of sheet {sheet_name!r}")
    data = raw.iloc[1:]
    if data.empty:
        raise _zero_records(name, f"sheet {sheet_name!r} of ")
    # pandas keeps the sheet's row positions (index = row number - 1, blank rows dropped above):
    # messages name the rows as the spreadsheet shows them (dataset.LINES_ATTR, LINE_WORD_ATTR).
    sheet_rows = data.index.to_numpy(dtype=np.int64) + 1
    jumps = np.flatnonzero(np.diff(sheet_rows) != 1) + 1
    breaks = tuple((int(i), int(sheet_rows[i])) for i in jumps)
    data = data.reset_index(drop=True)
    data.columns = pd.Index(names, dtype=object)
    data = data.infer_objects()
    data.attrs[SOURCE_ATTR] = f"{name} (sheet {sheet_name})"
    data.attrs[LINES_ATTR] = shared_attr((int(sheet_rows[0]), breaks))
    data.attrs[LINE_WORD_ATTR] = "row"
    data.attrs[SHEETS_ATTR] = (sheet_name, tuple(sheets))
    return data


def _pandas_sheet(
    path: Path, sheet: str | int | None, seen: list[str], engine: Literal["openpyxl", "xlrd"]
) -> tuple[pd.DataFrame, str, list[str]]:
    """The sheet's cells through pandas (openpyxl or xlrd): object values, NaN for empty cells,
    index and columns the 0-based sheet positions."""
    name = path.name
    if engine == "xlrd":
        import importlib.util

        if importlib.util.find_spec("xlrd") is None:
            raise InvalidInput(
                f"{name!r} is an old Excel .xls workbook and reading it needs the xlrd package, "
                "which is not installed; save it as .xlsx or CSV, or install xlrd"
            )
    try:
        book = pd.ExcelFile(path, engine=engine)
    except Exception as exc:  # openpyxl/xlrd/zipfile raise many unrelated types
        raise InvalidInput(
            f"{name!r} cannot be read as an Excel workbook ({type(exc).__name__}: {exc}); "
            "open it in Excel or LibreOffice and save it again as .xlsx"
        ) from exc
    with book:
        sheets = [str(s) for s in book.sheet_names]
        seen[:] = sheets
        sheet_name = _choose_sheet(name, sheets, sheet)
        try:
            raw = pd.read_excel(
                book,
                sheet_name=sheet_name,
                header=None,
                dtype=object,
                keep_default_na=False,
                na_values=[""],
            )
        except Exception as exc:
            raise InvalidInput(
                f"sheet {sheet_name!r} of {name!r} cannot be read ({type(exc).__name__}: {exc}); "
                "open it in Excel or LibreOffice and save it again as .xlsx"
            ) from exc
    return raw, sheet_name, sheets


#: Rows of a sheet converted between two progress reports.
_SHEET_PROGRESS_ROWS = 20_000


def _calamine_sheet(
    path: Path, sheet: str | int | None, seen: list[str], progress: ProgressFn
) -> tuple[pd.DataFrame, str, list[str]] | None:
    """The sheet's cells read by calamine, as :func:`_pandas_sheet` gives openpyxl's (the same
    values: whole numbers as int, dates as datetime, empty and error cells NaN), with the text
    of uncached formula cells put in (:func:`_uncached_formulas`); None where openpyxl must
    read it: python-calamine missing, a workbook calamine cannot open, or a sheet whose XML
    holds what the two read differently (:func:`_sheet_xml_scan`). A bad sheet choice raises
    as with openpyxl."""
    try:
        from python_calamine import CalamineWorkbook, SheetTypeEnum
    except ImportError:
        return None
    name = path.name
    try:
        book = CalamineWorkbook.from_path(os.fspath(path))
    except Exception:  # noqa: BLE001 - openpyxl reads it again and says what is wrong
        return None
    with book:
        sheets = [str(m.name) for m in book.sheets_metadata if m.typ == SheetTypeEnum.WorkSheet]
        seen[:] = sheets
        sheet_name = _choose_sheet(name, sheets, sheet)
        formulas = _sheet_xml_scan(path, sheet_name)
        if formulas is None:
            return None
        progress(0.1, f"reading sheet {sheet_name}")
        try:
            cells = book.get_sheet_by_name(sheet_name).to_python(skip_empty_area=False)
        except Exception:  # noqa: BLE001 - openpyxl reads it again and says what is wrong
            return None
    height = len(cells)
    width = len(cells[0]) if height else 0
    blocks = []
    for start in range(0, height, _SHEET_PROGRESS_ROWS):
        progress(0.2 + 0.65 * start / height, f"reading sheet {sheet_name}: {start:,} rows")
        stop = min(start + _SHEET_PROGRESS_ROWS, height)
        block = np.empty((stop - start, width), dtype=object)
        block[:] = cells[start:stop]
        for j in range(width):
            block[:, j] = _calamine_column(block[:, j])
        blocks.append(block)
    del cells
    raw = pd.DataFrame(np.concatenate(blocks) if blocks else None, dtype=object)
    del blocks
    for (row, col), formula in formulas.items():
        # as with openpyxl: only inside the extent of the cells that hold values
        if row in raw.index and col in raw.columns:
            raw.loc[row, col] = formula
    return raw, sheet_name, sheets


_TEXT, _FLOAT, _DATE = 1, 2, 3
_KINDS: dict[type, int] = {str: _TEXT, float: _FLOAT, datetime.date: _DATE}
_KIND_OF = np.frompyfunc(lambda value: _KINDS.get(type(value), 0), 1, 1)


def _calamine_column(cells: np.ndarray) -> np.ndarray:
    """Calamine cells (an object array) as pandas' openpyxl reader gives them: a whole float
    as int, a date as a datetime at midnight, an empty (or error) cell NaN."""
    out = cells.copy()
    inferred = pd.api.types.infer_dtype(cells, skipna=False)  # C speed; the usual columns
    if inferred == "floating":
        kinds = np.full(cells.shape, _FLOAT, dtype=np.int8)
    elif inferred == "string":
        kinds = np.full(cells.shape, _TEXT, dtype=np.int8)
    else:
        kinds = _KIND_OF(cells).astype(np.int8)
    text = kinds == _TEXT
    if text.any():
        out[text & (cells == "")] = np.nan
    floats = np.flatnonzero(kinds == _FLOAT)
    if floats.size:
        values = cells[floats].astype(np.float64)
        whole = values == np.floor(values)
        small = whole & (np.abs(values) < 2.0**62)
        out[floats[small]] = values[small].astype(np.int64)  # stored as Python ints
        for i in floats[whole & ~small].tolist():
            out[i] = int(cells[i])
    days = np.flatnonzero(kinds == _DATE)
    for i in days.tolist():
        day = cells[i]
        out[i] = datetime.datetime(day.year, day.month, day.day)
    return out


_SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_FORMULA_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?f[\s>/]")


def _sheet_part(archive: Any, sheet_name: str) -> str | None:
    """The zip member holding sheet ``sheet_name`` (workbook.xml and its relationships)."""
    from xml.etree import ElementTree

    book = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rid = next(
        (
            sh.get(f"{{{_REL_NS}}}id")
            for sh in book.iter(f"{{{_SHEET_NS}}}sheet")
            if sh.get("name") == sheet_name
        ),
        None,
    )
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels if r.get("Id") == rid), None)
    if not target:
        return None
    return target.lstrip("/") if target.startswith("/") else f"xl/{target}"


def _cell_position(ref: str) -> tuple[int, int] | None:
    """``"C12"`` -> (11, 2): 0-based sheet row and column."""
    match = re.fullmatch(r"([A-Z]{1,3})([0-9]{1,7})", ref)
    if match is None:
        return None
    col = 0
    for ch in match[1]:
        col = col * 26 + ord(ch) - ord("A") + 1
    return int(match[2]) - 1, col - 1


def _uncached_formulas(path: Path, sheet_name: str) -> dict[tuple[int, int], str]:
    """The sheet's formula cells that have no saved value: (0-based row, column) -> ``"=..."``.

    Such cells (files written by pandas, openpyxl or other programs, never opened in a
    spreadsheet) come back as missing from every reader, which made a quasi-identifier
    "missing" or emptied a pass-through column in silence (issue 12); the caller puts the
    formula text there instead. The sheet's XML is scanned as a stream; a sheet without any
    formula costs one pass of byte search.
    """
    import zipfile
    from xml.etree import ElementTree

    found: dict[tuple[int, int], str] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            part = _sheet_part(archive, sheet_name)
            if part is None or part not in archive.namelist():
                return found
            with archive.open(part) as fh:
                tail = b""
                any_formula = False
                while chunk := fh.read(1 << 20):
                    if _FORMULA_TAG.search(tail + chunk):
                        any_formula = True
                        break
                    tail = chunk[-64:]
            if not any_formula:
                return found
            cell_tag, f_tag, v_tag = (f"{{{_SHEET_NS}}}{t}" for t in ("c", "f", "v"))
            with archive.open(part) as fh:
                for _event, elem in ElementTree.iterparse(fh, events=("end",)):
                    if elem.tag != cell_tag:
                        continue
                    formula = elem.find(f_tag)
                    if formula is not None:
                        value = elem.find(v_tag)
                        where = _cell_position(str(elem.get("r", "")))
                        if where is not None and (value is None or not (value.text or "").strip()):
                            found[where] = "=" + (formula.text or "")
                    elem.clear()
    except (zipfile.BadZipFile, KeyError, OSError, ElementTree.ParseError):
        return {}  # pandas read the sheet: whatever this scan cannot parse, it did
    return found


#: What calamine reads otherwise than openpyxl: a text element holding only white space without
#: ``xml:space="preserve"`` (calamine drops the spaces; openpyxl writes such cells), found as the
#: end of a ``<t>`` tag followed by white space to the next tag (or to the end of a chunk: the
#: rest is in the next), and ``_xHHHH_`` escapes (calamine decodes them, openpyxl keeps the
#: text). Both patterns start with literals, which ``re`` finds fast.
_WHITE_TEXT = re.compile(rb"t>[ \t\r\n]+(?:<|\Z)")
_ESCAPE = re.compile(rb"_x[0-9A-Fa-f]{4}_")
_FORMULA_START = re.compile(rb"f[\s>/]")
_XML_PREFIX = re.compile(rb"[A-Za-z_][\w.-]*")


def _opening_tag(data: bytes, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern``, which starts at an element's local name, matches where ``data`` has
    an opening tag of that element: ``<name`` or ``<prefix:name``."""
    for match in pattern.finditer(data):
        at = match.start()
        before = data[at - 1 : at]
        if before == b"<":
            return True
        if before == b":":
            tag = data.rfind(b"<", 0, at)
            if tag >= 0 and _XML_PREFIX.fullmatch(data, tag + 1, at - 1):
                return True
    return False


def _calamine_differs(data: bytes) -> bool:
    return _ESCAPE.search(data) is not None or _opening_tag(data, _WHITE_TEXT)


def _formula_in(data: bytes) -> bool:
    return _opening_tag(data, _FORMULA_START)


def _search_part(archive: Any, part: str, *tests: Callable[[bytes], bool]) -> list[bool]:
    """Which of ``tests`` hold somewhere in the zip member ``part``, read as a stream (each
    chunk with the end of the one before, so that nothing is missed at a boundary)."""
    found = [False] * len(tests)
    with archive.open(part) as fh:
        tail = b""
        while not all(found) and (chunk := fh.read(1 << 20)):
            data = tail + chunk
            found = [done or test(data) for done, test in zip(found, tests, strict=True)]
            tail = chunk[-64:]
    return found


def _sheet_xml_scan(path: Path, sheet_name: str) -> dict[tuple[int, int], str] | None:
    """The uncached formula cells of the sheet (:func:`_uncached_formulas`) for the calamine
    reader, or None when openpyxl must read the sheet: its XML or the shared strings hold text
    that calamine reads otherwise (:data:`_CALAMINE_DIFFERS`), or the parts cannot be found.

    Calamine reads no formula, and leaves cells with neither value nor text out of the sheet's
    extent: the sheet's XML is always searched (one pass of byte search when it has none).
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            part = _sheet_part(archive, sheet_name)
            names = archive.namelist()
            if part is None or part not in names:
                return None
            strings = [n for n in names if n.lower().endswith("sharedstrings.xml")]
            if any(_search_part(archive, s, _calamine_differs)[0] for s in strings):
                return None
            differs, formulas = _search_part(archive, part, _calamine_differs, _formula_in)
            if differs:
                return None
            if not formulas:
                return {}
    except (zipfile.BadZipFile, KeyError, OSError, ValueError):
        return None
    return _uncached_formulas(path, sheet_name)


# --- Parquet -----------------------------------------------------------------------------------


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


# --- SPSS / Stata ------------------------------------------------------------------------------


def _code_key(code: object) -> object:
    """A value-label code as stored in ``value_labels``: 3.0 becomes 3, other values unchanged."""
    if isinstance(code, (float, np.floating)) and float(code).is_integer():
        return int(code)
    if isinstance(code, np.integer):
        return int(code)
    return code


def _code_text(code: object) -> str:
    return str(_code_key(code))


def _apply_value_labels(
    series: pd.Series,
    labels: Mapping[Any, str],
    measure: str,
    shown_codes: dict[str, object] | None = None,
) -> pd.Series:
    """Show labels instead of codes (see the module docstring for the rules). ``shown_codes``,
    when given, receives {text shown: code} of a column turned into categories: what a release
    in the same format writes back (:mod:`microgui.core.release`)."""
    mapping = {_code_key(k): str(v) for k, v in labels.items()}
    if not pd.api.types.is_numeric_dtype(series):
        # String codes (rare): replace the labelled ones, keep the others; no order to keep.
        shown = [mapping.get(v, v) if isinstance(v, str) else v for v in series.tolist()]
        return pd.Series(shown, index=series.index, name=series.name, dtype=series.dtype)
    observed = {_code_key(v) for v in series.dropna().unique().tolist()}
    unlabelled = observed - set(mapping)
    if len(unlabelled) >= CONTINUOUS_MIN_DISTINCT:
        return series  # a measurement with a few labelled special codes: keep the numbers
    codes = sorted(set(mapping) | unlabelled, key=lambda c: float(c))  # type: ignore[arg-type]
    text = {c: mapping.get(c, _code_text(c)) for c in codes}
    counts: dict[str, int] = {}
    for label in text.values():
        counts[label] = counts.get(label, 0) + 1
    # Two codes with one label (or a label equal to an unlabelled code) would merge categories.
    text = {c: (t if counts[t] == 1 else f"{t} ({_code_text(c)})") for c, t in text.items()}
    values = [text[_code_key(v)] if pd.notna(v) else None for v in series.tolist()]
    categories = [text[c] for c in codes]
    if shown_codes is not None:
        shown_codes.update({t: c for c, t in text.items()})
    ordered = measure != "nominal"
    cat = pd.Categorical(values, categories=categories, ordered=ordered)
    return pd.Series(cat, index=series.index, name=series.name)


def _read_stat(path: Path) -> tuple[pd.DataFrame, dict[str, dict[object, str]]]:
    import pyreadstat

    name = path.name
    spss = path.suffix.lower() in SPSS_EXTENSIONS
    what = "an SPSS" if spss else "a Stata"
    reader = pyreadstat.read_sav if spss else pyreadstat.read_dta
    # pyreadstat's own apply_value_formats fails on pandas 3 (null categories), so labels are
    # applied here.
    # SPSS user-missing values (-99 "refused") are read as their codes, then made missing here
    # with their codes kept for a release in the same format (issue 18)
    extra: dict[str, Any] = {"user_missing": True}  # Stata: the extended missing .a to .z
    try:
        try:
            frame, meta = reader(os.fspath(path), apply_value_formats=False, **extra)
        except Exception as exc:
            if "encoding" not in str(exc).lower() and "convert string" not in str(exc).lower():
                raise
            frame, meta = reader(
                os.fspath(path), apply_value_formats=False, encoding="latin1", **extra
            )
    except Exception as exc:  # pyreadstat.ReadstatError and friends
        raise InvalidInput(
            f"{name!r} cannot be read as {what} file ({exc}); check that the file is complete, "
            f"or export it again from {'SPSS/PSPP' if spss else 'Stata'}"
        ) from exc
    names = [str(c) for c in frame.columns]
    _check_columns(names, name, lambda i: f"column {i + 1}")
    if not names:
        raise InvalidInput(f"file {name!r} has no variables; choose the file that holds the table")
    if frame.empty:
        raise _zero_records(name, "file ")
    frame.columns = pd.Index(names, dtype=object)
    spans = dict(getattr(meta, "missing_ranges", None) or {})
    for col, letters in dict(getattr(meta, "missing_user_values", None) or {}).items():
        spans[col] = [{"lo": str(x), "hi": str(x)} for x in letters]  # Stata: .a ... .z
    user_missing = _user_missing(frame, spans)
    measures: dict[str, str] = dict(getattr(meta, "variable_measure", None) or {})
    value_labels: dict[str, dict[object, str]] = {}
    codes: dict[str, dict[str, object]] = {}
    for col, labels in (meta.variable_value_labels or {}).items():
        if col not in frame.columns or not labels:
            continue
        value_labels[str(col)] = {_code_key(k): str(v) for k, v in labels.items()}
        shown: dict[str, object] = {}
        frame[col] = _apply_value_labels(frame[col], labels, measures.get(col, "unknown"), shown)
        if shown:
            codes[str(col)] = shown
    column_labels = {
        str(c): str(label)
        for c, label in (getattr(meta, "column_names_to_labels", None) or {}).items()
        if label
    }
    for col in frame.columns:
        # pyreadstat leaves text as object in an empty-ish file; use the default string dtype.
        if frame[col].dtype == object and all(isinstance(v, str) for v in frame[col].dropna()):
            frame[col] = frame[col].astype(str)
    # What a release in the same format needs to label its columns again (issue 18).
    frame.attrs[STAT_ATTR] = shared_attr(
        {
            "format": "spss" if spss else "stata",
            "column_labels": column_labels,
            "value_labels": value_labels,
            "codes": codes,
            "measures": {str(c): str(m) for c, m in measures.items()},
            "user_missing": user_missing,
        }
    )
    return frame, value_labels


def _user_missing(
    frame: pd.DataFrame, ranges: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """SPSS user-defined missing values (``missing_ranges``: -99 "refused", -9 to -1) and Stata's
    extended missing values (.a to .z, given as spans of one letter): their
    cells made missing in ``frame`` (in place), as every other reader's missing cells are, and
    {column: {"ranges", "rows", "codes"}} kept so that a ``.sav`` release writes the codes back
    in the columns it passes through unchanged, with their declaration
    (:func:`microgui.core.release.release_writer`)."""
    kept: dict[str, dict[str, Any]] = {}
    for col, spans in ranges.items():
        if col not in frame.columns or not spans:
            continue
        values = frame[col]
        timed = pd.api.types.is_datetime64_any_dtype(values.dtype) or (
            values.dtype == object
            and any(isinstance(v, datetime.date) for v in values.tolist())
            and all(isinstance(v, datetime.date) or _missing_cell(v) for v in values.tolist())
        )
        if timed:  # an SPSS date variable's declaration: pyreadstat gives it as dates
            mask = np.array([_in_date_spans(v, spans) for v in values.tolist()], dtype=bool)
        elif pd.api.types.is_numeric_dtype(values.dtype):
            numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
            mask = np.zeros(len(values), dtype=bool)
            for span in spans:
                mask |= (numbers >= float(span["lo"])) & (numbers <= float(span["hi"]))
        else:
            codes = {str(span["lo"]) for span in spans} | {str(span["hi"]) for span in spans}
            mask = values.astype(object).isin(codes).to_numpy()
        rows = np.flatnonzero(mask)
        kept[str(col)] = {
            "ranges": [{"lo": span["lo"], "hi": span["hi"]} for span in spans],
            "cells": MissingCodes(rows, np.asarray(values.to_numpy()[rows], dtype=object)),
        }
        if len(rows):
            keep_type = timed or pd.api.types.is_numeric_dtype(values)
            column = values if keep_type else values.astype(object)
            column = column.mask(mask)
            rest = column.dropna()
            if not pd.api.types.is_numeric_dtype(values) and all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in rest
            ):
                column = column.astype(np.float64)  # Stata: numbers once .a ... .z are out
            frame[col] = column
    return kept


class MissingCodes:
    """Which records of a column held a user-missing code (``rows``) and the codes, for a
    release that writes them back (:func:`microgui.core.release.release_writer`).

    Kept in ``frame.attrs``, which pandas deep-copies at every operation and compares with
    ``==`` when it concatenates (pyreadstat does, writing dates): the arrays are read-only and
    never copied, and two are equal when their arrays are (an array's own ``==`` has no truth
    value: every SPSS/Stata release with a date crashed on it, issue 27; a tuple of Python
    numbers made every pandas operation on a large table copy it)."""

    __slots__ = ("rows", "codes")

    def __init__(self, rows: np.ndarray, codes: np.ndarray) -> None:
        self.rows = np.array(rows, dtype=np.int64)
        self.codes = np.array(codes, dtype=object)
        self.rows.flags.writeable = False
        self.codes.flags.writeable = False

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MissingCodes)
            and np.array_equal(self.rows, other.rows)
            and len(self.codes) == len(other.codes)
            and all(a == b for a, b in zip(self.codes.tolist(), other.codes.tolist(), strict=True))
        )

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, object]) -> MissingCodes:
        return self  # read-only: a copy would be the same


def _missing_cell(value: object) -> bool:
    """Whether one cell is missing; False for a list or array cell (no truth value)."""
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def _in_date_spans(value: object, spans: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a date or date-time cell lies in one of a date variable's declared spans (a day
    compared with a date-time is that day's midnight)."""
    if not isinstance(value, datetime.date) or pd.isna(value):
        return False
    for span in spans:
        lo, hi = span["lo"], span["hi"]
        if isinstance(value, datetime.datetime):
            lo, hi = (
                datetime.datetime.combine(x, datetime.time())
                if not isinstance(x, datetime.datetime)
                else x
                for x in (lo, hi)
            )
        try:
            if lo <= value <= hi:
                return True
        except TypeError:  # a span that is no date: no match
            continue
    return False


# ---------------------------------------------------------------------------------------------
# Atomic writing
# ---------------------------------------------------------------------------------------------


#: Rows per ``to_csv`` call when a table whose text holds a carriage return is written.
CSV_CHUNK_ROWS = 50_000

#: What ``protect_from`` takes: one path, or a collection of paths (``None`` items are skipped).
ProtectedPaths = str | os.PathLike[str] | Iterable[str | os.PathLike[str] | None] | None

# Linux pseudo-file systems: a path that resolves into one is never replaced by an output.
_PSEUDO_ROOTS = ("proc", "sys")
_TEXT_KINDS = ("string", "mixed", "mixed-integer")


def _same_file(a: Path, b: Path) -> bool:
    with suppress(OSError):  # exists() raises for a name too long
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _protected_paths(protect_from: ProtectedPaths) -> list[Path]:
    if protect_from is None:
        return []
    if isinstance(protect_from, (str, os.PathLike)):
        return [Path(protect_from)]
    return [Path(p) for p in protect_from if p is not None]


def _shown(text: str) -> str:
    """A path for a one-line message: repr, shortened in the middle when very long."""
    return repr(text if len(text) <= 80 else f"{text[:38]}…{text[-38:]}")


def _write_error(exc: OSError, target: Path, folder: Path) -> ExportRefused:
    code = exc.errno
    if code == errno.ENOSPC or code == getattr(errno, "EDQUOT", -1):
        return ExportRefused(
            f"the disk is full: {_shown(str(target))} could not be written (no space left on "
            "device); free some space or choose another folder"
        )
    if code in (errno.EACCES, errno.EPERM) or isinstance(exc, PermissionError):
        return ExportRefused(
            f"cannot write {_shown(str(target))}: permission denied in folder {str(folder)!r}; "
            "choose a folder you can write to"
        )
    if code == errno.EROFS:
        return ExportRefused(
            f"cannot write {_shown(str(target))}: folder {str(folder)!r} is on a read-only disk; "
            "choose another folder"
        )
    if code == errno.ENAMETOOLONG:
        return ExportRefused(
            f"cannot write {_shown(str(target))}: the file name is too long; choose a shorter name"
        )
    if isinstance(exc, IsADirectoryError):
        return ExportRefused(
            f"cannot write {_shown(str(target))}: it is a folder; choose a file name"
        )
    return ExportRefused(
        f"cannot write {_shown(str(target))} ({exc.strerror or exc}); choose another file name "
        "or folder"
    )


def _create_temp(folder: Path, name: str) -> tuple[int, Path]:
    # Like tempfile.NamedTemporaryFile(dir=folder, delete=False), but created with mode 0o666
    # minus the umask, so the final file gets the user's usual permissions rather than 0o600.
    # The name is short whatever the target's: a valid 250-character name must not fail
    # because of its temporary file (issue 12).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        candidate = folder / f".{name[:16]}~{secrets.token_hex(4)}.tmp"
        try:
            return os.open(candidate, flags, 0o666), candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def _fsync_folder(folder: Path) -> None:
    if os.name == "nt":
        return  # folders cannot be opened for fsync on Windows
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _name_max(folder: Path) -> int:
    with suppress(OSError, ValueError, AttributeError):
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    return 255


def _special_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "a special file"


def _check_target(raw: str | os.PathLike[str], protected: Sequence[Path]) -> Path:
    """``raw`` as a Path once it is safe to replace; :class:`ExportRefused` otherwise."""
    text = os.fspath(raw)
    target = Path(text)
    if not text.strip():
        raise ExportRefused("no output file name was given; choose a file name")
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if text.endswith(seps) or target.name in ("", ".", ".."):
        raise ExportRefused(
            f"cannot write {_shown(text)}: it names a folder (it ends with {text[-1]!r}); choose "
            "a file name, not a folder"
        )
    for index, path in enumerate(protected):
        if _same_file(target, path):
            what = "the input file" if index == 0 else f"an input file of this run ({path.name!r})"
            raise ExportRefused(
                f"refusing to write {target.name!r}: it is {what}, and the original data must "
                "stay intact; choose another output name"
            )
    folder = target.parent
    size, limit = len(os.fsencode(target.name)), _name_max(folder if folder.is_dir() else Path("."))
    if size > limit:
        raise ExportRefused(
            f"cannot write {_shown(text)}: the file name is too long ({size} bytes, at most "
            f"{limit}); choose a shorter name"
        )
    if not folder.is_dir():
        if folder.exists():
            raise ExportRefused(
                f"cannot write {_shown(text)}: {str(folder)!r} is a file, not a folder; choose "
                "another folder"
            )
        raise ExportRefused(
            f"cannot write {_shown(text)}: folder {str(folder)!r} does not exist; create it or "
            "choose another folder"
        )
    try:
        mode: int | None = os.stat(target).st_mode  # follows a symlink to what it names
    except OSError:
        mode = None  # nothing there, or a dangling symlink: a new file
    if mode is not None and stat.S_ISDIR(mode):
        raise ExportRefused(f"cannot write {_shown(text)}: it is a folder; choose a file name")
    real = Path(os.path.realpath(target))
    if mode is not None and not stat.S_ISREG(mode):
        kind = _special_kind(mode)
    elif len(real.parts) > 1 and real.parts[0] == os.sep and real.parts[1] in _PSEUDO_ROOTS:
        kind = f"a system file in /{real.parts[1]}"
    else:
        return target
    raise ExportRefused(
        f"cannot write {_shown(text)}: it is not a regular file ({kind}); choose a file name "
        "in one of your folders"
    )


def check_write_targets(
    paths: Sequence[str | os.PathLike[str]], *, protect_from: ProtectedPaths = None
) -> list[Path]:
    """Check output paths before anything is computed or written; return them as Paths.

    Refused with :class:`ExportRefused` (one line, naming the path and what to do): a path that
    is the same file as one of ``protect_from`` (compared by inode: symlinks, hard links and
    other spellings included), a folder or a name ending in ``/``, a missing folder, a name
    longer than the file system allows, a non-regular file (device, FIFO, socket, or a symlink
    to one, or a file in ``/proc`` or ``/sys``), and two targets naming the same file. An
    existing regular file, or a symlink to one, is fine: the symlink itself is replaced by the
    new file, and the file it pointed to is left untouched.
    """
    protected = _protected_paths(protect_from)
    targets = [_check_target(path, protected) for path in paths]
    for i, first in enumerate(targets):
        for second in targets[i + 1 :]:
            if _same_file(first, second):
                raise ExportRefused(
                    f"{str(first)!r} and {str(second)!r} are the same file; give each output its "
                    "own name"
                )
    return targets


def _set_mode(tmp: Path, target: Path, private: bool, *, written: bool) -> None:
    """The temporary file's permissions: a private file (a pseudonym key) 0600 before a byte is
    written, whatever an older file's mode; any other keeps the mode of the file it replaces,
    once written."""
    if private and not written:
        os.chmod(tmp, 0o600)
    elif not private and written:
        with suppress(OSError):
            if target.exists():
                os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))  # keep the old permissions


def _write_temp(
    target: Path, write: Callable[[IO[str]], object], encoding: str, private: bool = False
) -> Path:
    """Write a flushed, fsynced temporary file beside ``target``; removed again on failure."""
    folder = target.parent
    tmp: Path | None = None
    try:
        fd, tmp = _create_temp(folder, target.name)
        _set_mode(tmp, target, private, written=False)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        _set_mode(tmp, target, private, written=True)
        done, tmp = tmp, None
        return done
    except OSError as exc:
        raise _write_error(exc, target, folder) from exc
    finally:
        if tmp is not None:  # also on KeyboardInterrupt and the CLI's SIGTERM exception
            with suppress(OSError):
                os.unlink(tmp)


def _backup(target: Path) -> tuple[bool, Path | None]:
    """(whether ``target`` exists, a hard link keeping its old content, if one can be made)."""
    if not os.path.lexists(target):
        return False, None
    for _ in range(100):
        backup = target.parent / f".{target.name[:16]}~{secrets.token_hex(4)}.bak.tmp"
        try:
            os.link(target, backup, follow_symlinks=False)
            return True, backup
        except FileExistsError:
            continue
        except (OSError, NotImplementedError):
            break  # no hard links here: the file is replaced without a way back
    return True, None


@dataclass(frozen=True)
class FileWriter:
    """A writer of a binary release file (Excel, Parquet, SPSS, Stata) for
    :func:`write_files_atomic`: ``write`` gets the temporary file's path and writes the whole
    file there (a library that wants a path, not a text handle). ``what`` names the format in
    messages ("an Excel workbook")."""

    write: Callable[[Path], object]
    what: str


@dataclass(frozen=True)
class EncodedWriter:
    """A text writer for :func:`write_files_atomic` whose file has its own encoding (a CSV
    release in cp1252, say, beside its UTF-8 report)."""

    write: Callable[[IO[str]], object]
    encoding: str
    #: only its owner may read the file (0600, set before it is written): a key
    private: bool = False


@dataclass(frozen=True)
class DerivedWriter:
    """A file of a release made from the files written before it, for
    :func:`write_files_atomic`: ``make`` gets the temporary paths of the items before it (in
    order, not yet renamed) and returns the writer of this one. The run report uses it to state
    the SHA-256 of the release file it goes with, as written."""

    make: Callable[[Sequence[Path]], Callable[[IO[str]], object] | FileWriter | EncodedWriter]


def _write_temp_file(target: Path, writer: FileWriter) -> Path:
    """:func:`_write_temp` for a :class:`FileWriter`: the library writes the temporary path,
    which is then fsynced; an error of the library is an :class:`ExportRefused` naming the
    format, and the temporary file is removed."""
    folder = target.parent
    tmp: Path | None = None
    try:
        fd, tmp = _create_temp(folder, target.name)
        os.close(fd)
        try:
            writer.write(tmp)
        except (OSError, ExportRefused):
            raise
        except Exception as exc:  # the library's own errors (pyarrow, openpyxl, pyreadstat)
            full = ""
            with suppress(OSError):
                if shutil.disk_usage(folder).free < 16 * 1024 * 1024:
                    full = "the disk is full or nearly: free space, or write elsewhere; "
            raise ExportRefused(
                f"{target.name} could not be written as {writer.what}: {full}{exc}; choose "
                "another format (e.g. .csv) or fix the column named"
            ) from exc
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _set_mode(tmp, target, False, written=True)
        done, tmp = tmp, None
        return done
    except OSError as exc:
        raise _write_error(exc, target, folder) from exc
    finally:
        if tmp is not None:
            with suppress(OSError):
                os.unlink(tmp)


def write_files_atomic(
    items: Sequence[
        tuple[
            str | os.PathLike[str],
            Callable[[IO[str]], object] | FileWriter | EncodedWriter | DerivedWriter,
        ]
    ],
    *,
    protect_from: ProtectedPaths = None,
    encoding: str = "utf-8",
) -> None:
    """Write several files as one release: all of them, or none of them changed.

    Every target is checked first (:func:`check_write_targets`), every temporary file is
    written before any is renamed, and when a rename fails after others succeeded, those are
    put back (the old files from hard links kept until the end, new ones removed). So a full
    disk, a refused target or a failed rename never leaves a protected CSV without its report,
    nor an old CSV replaced beside a failed report. Errors as :func:`write_csv_atomic`.
    """
    targets = check_write_targets([path for path, _ in items], protect_from=protect_from)
    temps: list[Path] = []
    renamed: list[tuple[Path, bool, Path | None]] = []  # (target, existed, backup)
    backups: list[Path] = []
    committed = False
    try:
        for target, (_path, item) in zip(targets, items, strict=True):
            write = item.make(list(temps)) if isinstance(item, DerivedWriter) else item
            if isinstance(write, FileWriter):
                temps.append(_write_temp_file(target, write))
            elif isinstance(write, EncodedWriter):
                temps.append(_write_temp(target, write.write, write.encoding, write.private))
            else:
                temps.append(_write_temp(target, write, encoding))
        for target, tmp in zip(targets, list(temps), strict=True):
            existed, backup = _backup(target) if len(targets) > 1 else (True, None)
            if backup is not None:
                backups.append(backup)
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise _write_error(exc, target, target.parent) from exc
            temps.remove(tmp)
            renamed.append((target, existed, backup))
        committed = True
    finally:
        if not committed:
            for target, existed, backup in reversed(renamed):
                with suppress(OSError):
                    if backup is not None:
                        os.replace(backup, target)
                        backups.remove(backup)
                    elif not existed:
                        os.unlink(target)
        for leftover in [*temps, *backups]:
            with suppress(OSError):
                os.unlink(leftover)
    for folder in dict.fromkeys(t.parent for t in targets):
        _fsync_folder(folder)


def _atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[IO[str]], object],
    *,
    protect_from: ProtectedPaths,
    encoding: str = "utf-8",
) -> None:
    write_files_atomic([(path, write)], protect_from=protect_from, encoding=encoding)


def write_csv_atomic(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
) -> None:
    """Write ``frame`` as CSV (UTF-8, ``,``, ``\\n`` line ends, no index), atomically.

    Text cells are written as they are (minimal quoting), so text read by :func:`read_table`
    from a standard-quoted file comes back byte-identical; floats use their round-trip repr.
    A cell or column name holding a carriage return is quoted too (pandas and the ``csv``
    module leave a lone CR unquoted when lines end in ``\\n``, and every reader then splits the
    record there), so the file reads back to exactly ``frame``.

    Raises
    ------
    ExportRefused
        ``path`` is the same file as one of ``protect_from`` (a path or a collection of paths),
        or not a file that may be replaced (see :func:`check_write_targets`), or a text cell or
        column name holds a NUL character, or the file cannot be written (missing or read-only
        folder, disk full); nothing is left behind.
    """

    _atomic_write(path, csv_writer(frame), protect_from=protect_from)


def csv_writer(frame: pd.DataFrame) -> Callable[[IO[str]], None]:
    """The function writing ``frame`` as :func:`write_csv_atomic` does (for :func:`write_files_atomic`).

    The text is checked here, before any file is opened: a NUL character is refused
    (:class:`ExportRefused` naming the column and record), since most readers, microgui's
    included, take a file holding one for binary.
    """
    texts = {i: t for i, t in enumerate(_text_columns(frame)) if t is not None}
    names = [c for c in frame.columns if isinstance(c, str)]
    _refuse_nul(frame, texts, names)
    with_cr = {i: t for i, t in texts.items() if _holds(t, "\r")}
    if not with_cr and not any("\r" in c for c in names):

        def write(handle: IO[str]) -> None:
            _write_csv(frame, handle)

        return write
    # The csv writer quotes a field holding "\n" but not one holding only "\r": each CR is
    # written as a marker character + "\n" (which gets the field quoted) and the marker pair is
    # turned back into the CR in the text written. The marker occurs nowhere in the table.
    marker = next(
        ch
        for ch in map(chr, range(0xE000, 0xF900))
        if not any(ch in c for c in names) and not any(_holds(t, ch) for t in texts.values())
    )
    marked = frame.copy(deep=False)
    for position, values in with_cr.items():
        cells = np.array(
            [v.replace("\r", marker + "\n") if isinstance(v, str) else v for v in values],
            dtype=object,
        )
        # pandas-stubs leave Series out of isetitem's value types; pandas takes one
        marked.isetitem(position, pd.Series(cells, index=frame.index, dtype=object))  # type: ignore[arg-type]
    marked.columns = pd.Index(
        [c.replace("\r", marker + "\n") if isinstance(c, str) else c for c in frame.columns],
        dtype=object,
    )

    def write_marked(handle: IO[str]) -> None:
        for start in range(0, max(len(marked), 1), CSV_CHUNK_ROWS):
            buffer = io.StringIO()
            marked.iloc[start : start + CSV_CHUNK_ROWS].to_csv(
                buffer,
                index=False,
                header=start == 0,
                lineterminator="\n",
                chunksize=_to_csv_rows(marked),
            )
            handle.write(buffer.getvalue().replace(marker + "\n", "\r"))

    return write_marked


def _write_csv(frame: pd.DataFrame, handle: IO[str]) -> None:
    """``frame.to_csv(handle, index=False, lineterminator="\\n")``, byte for byte, faster: each
    column of numbers is formatted once per distinct value (a protected column repeats a
    group's value k times or more; :func:`_number_texts`), and when every column holds numbers
    the lines are joined here, as pandas' writer would write them (numbers never need quotes),
    a fifth of its time (issue 17: ``microgui protect`` of 50,000 records in <= 1.5 s)."""
    cells = [_number_texts(series) for _, series in frame.items()]  # not .iloc: a third the work
    if len(cells) >= 2 and len(frame) and all(c is not None for c in cells):
        frame.iloc[:0].to_csv(handle, index=False, lineterminator="\n")  # pandas' header
        columns = [c for c in cells if c is not None]
        for start in range(0, len(frame), CSV_CHUNK_ROWS):
            rows = zip(*(c[start : start + CSV_CHUNK_ROWS] for c in columns), strict=True)
            handle.write("\n".join(map(",".join, rows)) + "\n")
        return
    # One column (its empty cells are quoted) or some text: pandas writes, numbers preformatted
    formatted = frame
    for position, texts in enumerate(cells):
        if texts is not None:
            if formatted is frame:
                formatted = frame.copy(deep=False)
            column = pd.Series(texts, index=frame.index, dtype=object)
            formatted.isetitem(position, column)  # type: ignore[arg-type]
    formatted.to_csv(handle, index=False, lineterminator="\n", chunksize=_to_csv_rows(frame))


#: The fewest records pandas' CSV writer formats at a time. pandas takes 100,000 cells a chunk,
#: one record of a 100,000-column table: its Python work per column and chunk then grew with
#: records x columns^2 (issue 27); 100 records of 100,000 columns take about 600 MB of text.
_TO_CSV_MIN_ROWS = 100


def _to_csv_rows(frame: pd.DataFrame) -> int:
    """The ``chunksize`` of ``to_csv``: pandas' own (100,000 cells), at least
    :data:`_TO_CSV_MIN_ROWS` records; the bytes written are the same."""
    return max(100_000 // max(frame.shape[1], 1), _TO_CSV_MIN_ROWS)


def _number_texts(series: pd.Series) -> np.ndarray[Any, np.dtype[np.object_]] | None:
    """The cells of a column of numbers as pandas' CSV writer writes them (missing: ``""``),
    each distinct value formatted once; None for any other column. numpy floats and integers
    are written by numpy's ``astype(str)`` (distinct floats told apart by their bits: ``-0.0``
    is not ``0.0``), a column of Python ``float`` and ``int`` cells (the release's whole numbers:
    :func:`~microgui.core.numbers.whole_numbers_written_plain`) by ``repr`` and ``str``, as the
    ``csv`` module does."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf" and dtype.itemsize == 8:
        values = series.to_numpy()
        if dtype.kind == "f":
            missing = np.isnan(values)
            keys = values.view(np.int64)
        else:
            missing, keys = None, values
        # hashed, not sorted: a third of np.unique's time on a million cells (issue 17)
        inverse, distinct = pd.factorize(keys)
        texts = np.asarray(distinct).view(dtype).astype(str).astype(object)[inverse]
        if missing is not None and missing.any():
            texts[missing] = ""
        return texts
    if not (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        return None
    cells = series.to_numpy(dtype=object)
    kinds = set(map(type, cells))
    if not kinds or not kinds <= {float, int}:
        return None
    texts = np.empty(len(cells), dtype=object)
    is_float = np.fromiter((type(v) is float for v in cells), dtype=bool, count=len(cells))
    if is_float.any():
        floats = cells[is_float].astype(np.float64)
        distinct, inverse = np.unique(floats.view(np.int64), return_inverse=True)
        written = [repr(v) for v in distinct.view(np.float64).tolist()]
        float_texts = np.array(written, dtype=object)[inverse]
        float_texts[np.isnan(floats)] = ""
        texts[is_float] = float_texts
    if not is_float.all():
        memo: dict[int, str] = {}
        texts[~is_float] = [memo.get(v) or memo.setdefault(v, str(v)) for v in cells[~is_float]]
    return texts


def _text_columns(frame: pd.DataFrame) -> list[np.ndarray[Any, np.dtype[np.object_]] | None]:
    """Per column (by position): its cells as an object array if some may be text, else None."""
    return [text_cells(series) for _, series in frame.items()]  # not .iloc: a third the work


def text_cells(series: pd.Series) -> np.ndarray[Any, np.dtype[np.object_]] | None:
    """The cells of ``series`` as an object array when some may be text (object, string,
    categorical, mixed); None for numbers, booleans, dates, durations, periods, intervals."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        if pd.api.types.infer_dtype(dtype.categories, skipna=True) not in _TEXT_KINDS:
            return None
    elif (
        pd.api.types.is_numeric_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_datetime64_any_dtype(dtype)
        or pd.api.types.is_timedelta64_dtype(dtype)
        or isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype))
    ):
        return None
    values: np.ndarray[Any, np.dtype[np.object_]] = series.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in _TEXT_KINDS:
        return None
    return values


def _holds(values: np.ndarray[Any, np.dtype[np.object_]], text: str) -> bool:
    """Whether a text cell of ``values`` holds ``text``."""
    return any(text in v for v in values if isinstance(v, str))


def _refuse_nul(
    frame: pd.DataFrame,
    texts: Mapping[int, np.ndarray[Any, np.dtype[np.object_]]],
    names: Sequence[str],
) -> None:
    for name in names:
        if "\x00" in name:
            position = list(frame.columns).index(name) + 1
            raise ExportRefused(
                f"the column name {name!r} (column {position}) holds a NUL character, which "
                "makes the CSV unreadable as text; rename the column"
            )
    for position, values in texts.items():
        if _holds(values, "\x00"):
            row = next(i for i, v in enumerate(values) if isinstance(v, str) and "\x00" in v)
            raise ExportRefused(
                f"column {str(frame.columns[position])!r} holds a NUL character in record "
                f"{row + 1} (line {row + 2} of the CSV), which makes the CSV unreadable "
                "as text; remove NUL characters from that column"
            )


def write_text_atomic(
    text: str,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
    encoding: str = "utf-8",
) -> None:
    """Write ``text`` to ``path`` atomically (no newline translation); errors as :func:`write_csv_atomic`."""
    _atomic_write(
        path, lambda handle: handle.write(text), protect_from=protect_from, encoding=encoding
    )


def _json_finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float (numpy's too) replaced by None."""
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: _json_finite(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_finite(value) for value in obj]
    return obj


def json_number(value: Any) -> float | int | None:
    """A JSON-ready number: numpy scalars unwrapped, NaN and infinities as None."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu":
        return int(value)
    return number


def json_text(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` as strict JSON text (UTF-8 kept, final newline): NaN and infinities become null,
    never the ``NaN``/``Infinity`` tokens that other JSON readers refuse (``allow_nan=False``
    makes any that slip through a programming error, not a broken file)."""
    return json.dumps(_json_finite(obj), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_atomic(
    obj: Any,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
    indent: int = 2,
) -> None:
    """Write ``obj`` as UTF-8 JSON (indented, non-ASCII kept, final newline) atomically.

    The object is serialised before any file is touched: a ``TypeError`` for a value JSON cannot
    hold is a programming error and propagates unchanged. NaN and infinities are written as null
    (:func:`json_text`): the file is strict JSON.
    """
    text = json_text(obj, indent=indent)
    write_text_atomic(text, path, protect_from=protect_from)
