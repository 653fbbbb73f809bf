"""Refusing a file that cannot be read here, before any cell is read: too wide
(:data:`~microgui.core.table.dataset.MAX_COLUMNS`), a workbook that unpacks to too much XML (a zip bomb),
or more memory than the system has, judged on the file's size and on what its header or metadata
says of its table (issues 12 and 27). Estimates, never promises.
"""

from __future__ import annotations

import codecs
import csv
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microgui.core.errors import InvalidInput
from microgui.core.io.extensions import SPSS_EXTENSIONS
from microgui.core.io.sniff import _SNIFF_CHARS, _detect_delimiter, _preferred_delimiter
from microgui.core.table.dataset import check_width

__all__ = [
    "MAX_WORKBOOK_XML_BYTES",
    "available_memory",
    "release_unused_memory",
    "map_large_blocks",
]


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


def release_unused_memory() -> None:
    """Give back to the system the memory Arrow's pool keeps for reuse once a table's text is
    freed (mimalloc or jemalloc hold it otherwise: 1,000,000 x 10 numbers read as text kept
    330 MB resident after the text was dropped; issue 33)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    pa.default_memory_pool().release_unused()


#: glibc's mallopt parameter M_MMAP_THRESHOLD
_M_MMAP_THRESHOLD = -3


def map_large_blocks(threshold: int = 1 << 20) -> None:
    """On Linux with glibc, give every block of at least ``threshold`` bytes its own mapping,
    returned to the system when freed. glibc raises this threshold to the size of the largest
    block freed (up to 32 MB), after which the n-sized arrays of a run (8 MB each at a million
    records) come from the heap, which keeps them resident once freed: 200 MB more at the peak
    of ``protect`` on 1,000,000 x 10 (issue 33). Elsewhere nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, int(threshold))
    except (OSError, AttributeError):  # not glibc (musl): its own policy
        pass


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
    # The pages' uncompressed bytes per record too: a file written without statistics left the
    # length at 8 bytes, and 100,000 values of 5 kB (a 480 kB file) were estimated at 9 MB for
    # a 1.4 GB read (adversarial pass). Plain pages hold the values themselves; dictionary
    # pages understate repeated values, which the statistics cover.
    page_bytes: dict[str, int] = {}
    sampled = 0
    for g in range(min(meta.num_row_groups, 4)):  # a sample: the footer of a wide file is long
        group = meta.row_group(g)
        sampled += int(group.num_rows)
        for c in range(group.num_columns):
            chunk = group.column(c)
            top = chunk.path_in_schema.split(".", 1)[0]
            page_bytes[top] = page_bytes.get(top, 0) + int(chunk.total_uncompressed_size or 0)
            stats = chunk.statistics
            if stats is None or not stats.has_min_max:
                continue
            longest = max(len(_stat_bytes(stats.min)), len(_stat_bytes(stats.max)))
            lengths[top] = max(lengths.get(top, 0), longest)
    if sampled:
        for top, size in page_bytes.items():
            lengths[top] = max(lengths.get(top, 0), size // sampled)
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
