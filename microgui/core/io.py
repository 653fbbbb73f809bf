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

Reading a CSV reports progress: ``progress(fraction, status)`` is called about every 8,192
records (and at the start and end), so the app shows a bar while a million-row file loads and the
user can cancel (the callback raises :class:`~microgui.core.progress.RunCancelled`, which
propagates). Other formats report only their start and end. A CSV frame also records, in
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
import errno
import io
import json
import math
import os
import re
import secrets
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
    SOURCE_ATTR,
    Dataset,
)
from microgui.core.errors import ExportRefused, InvalidInput
from microgui.core.progress import ProgressFn, no_progress

__all__ = [
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
    "check_write_targets",
    "csv_writer",
    "write_csv_atomic",
    "write_files_atomic",
    "write_json_atomic",
    "json_text",
    "json_number",
    "write_text_atomic",
]

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
        Called with the fraction read (about every 8,192 records of a CSV); may raise
        :class:`~microgui.core.progress.RunCancelled` to stop reading.

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
    progress(0.97, f"suggesting roles for {len(frame.columns):,} columns")
    dataset = Dataset.from_frame(frame, source=source)
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


#: About how many bytes of memory reading takes per byte of file, by reader (measured on the
#: bad-input corpus and Census-like tables; CSV is read as Python text first). Used to refuse a
#: file that cannot fit before reading it (issue 12), not as a promise.
_MEMORY_PER_BYTE = {"csv": 16, "excel": 6, "parquet": 10, "stat": 6}
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
    _check_memory(path.name, size * _MEMORY_PER_BYTE[kind], f"reading its {_megabytes(size)}")
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
        return _read_excel(path, sheet), {}  # no progress inside openpyxl
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
    except PermissionError as exc:
        raise InvalidInput(
            f"file {path.name!r} cannot be opened (permission denied); check its permissions"
        ) from exc
    except OSError as exc:
        raise InvalidInput(f"file {path.name!r} cannot be read ({exc.strerror or exc})") from exc


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
    name = path.name
    text, _fmt = _decode(_read_bytes(path), name)
    progress(0.05, f"reading {name}")
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM the codec did not consume (e.g. UTF-16 with a doubled mark)
    if not text.strip():
        raise InvalidInput(
            f"file {name!r} holds only blank lines, no table; choose the file that holds the data"
        )
    delimiter, skip = _detect_delimiter(text, _preferred_delimiter(path))
    stream = io.StringIO(text, newline="")
    for _ in range(skip):
        stream.readline()
    reader = csv.reader(stream, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    ragged: list[tuple[int, int]] = []
    # Where records start: (row, line) each time a record is not on the line after the previous
    # one (blank lines, values spanning lines); see dataset.LINES_ATTR.
    breaks: list[tuple[int, int]] = []
    expected = first_record_line = 0
    previous = 0
    check_at = _PROGRESS_ROWS
    size = max(len(text), 1)
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
                breaks.append((len(rows), start))
            expected = previous + 1 + skip
            rows.append(row)
            if len(rows) >= check_at:
                check_at += _PROGRESS_ROWS
                progress(
                    0.05 + 0.8 * stream.tell() / size, f"reading {name}: {len(rows):,} records"
                )
    except csv.Error as exc:
        line = reader.line_num + skip
        raise InvalidInput(
            f"line {line} of {name!r} cannot be parsed ({exc}); check the quotes on that line "
            '(a quote inside a quoted value must be doubled: "")'
        ) from exc
    assert header is not None  # the text is not blank
    _check_columns(header, name, lambda i: f"column {i + 1} (line {header_line})")
    if ragged:
        line, found = ragged[0]
        others = f" ({len(ragged) - 1} more such line(s))" if len(ragged) > 1 else ""
        raise InvalidInput(
            f"line {line} of {name!r} has {found} field(s) but the header has {len(header)} "
            f"(fields separated by {_DELIMITER_NAMES[delimiter]}){others}; quote values that contain "
            "the delimiter, or add the missing fields"
        )
    if not rows:
        raise _zero_records(name, "file ")
    progress(0.85, f"building the table of {len(rows):,} records")
    frame = pd.DataFrame(rows, columns=pd.Index(header, dtype=object), dtype=str)
    frame.attrs[SOURCE_ATTR] = name
    frame.attrs[LINES_ATTR] = (first_record_line, tuple(breaks))
    return frame


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


def _read_excel(path: Path, sheet: str | int | None) -> pd.DataFrame:
    """One sheet of a workbook (the first unless ``sheet`` names one: its name, its 0-based
    index, or its position from 1 as text). When the workbook has several sheets and none was
    chosen, every refusal says which sheet was read and how to choose another."""
    seen: list[str] = []
    try:
        return _read_sheet(path, sheet, seen)
    except InvalidInput as exc:
        if sheet is None and len(seen) > 1:
            others = ", ".join(map(repr, seen[1:4])) + (", ..." if len(seen) > 4 else "")
            raise InvalidInput(
                f"{exc} (read the first of {len(seen)} sheets, {seen[0]!r}; the others: {others}: "
                "choose one with --sheet NAME)"
            ) from None
        raise


def _read_sheet(path: Path, sheet: str | int | None, seen: list[str]) -> pd.DataFrame:
    name = path.name
    engine: Literal["xlrd", "openpyxl"] = "xlrd" if path.suffix.lower() == ".xls" else "openpyxl"
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
        seen.extend(sheets)
        if sheet is None:
            sheet = 0
        if isinstance(sheet, int):
            if not 0 <= sheet < len(sheets):
                raise InvalidInput(
                    f"{name!r} has {len(sheets)} sheet(s), so there is no sheet number {sheet} "
                    f"(counting from 0); its sheets are {', '.join(map(repr, sheets))}"
                )
            sheet_name = sheets[sheet]
        elif sheet in sheets:
            sheet_name = sheet
        elif sheet.strip().isdigit() and 1 <= int(sheet) <= len(sheets):
            sheet_name = sheets[int(sheet) - 1]  # a position, counting from 1 (--sheet 2)
        else:
            raise InvalidInput(
                f"{name!r} has no sheet named {sheet!r}; its sheets are {', '.join(map(repr, sheets))}"
            )
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
    if engine == "openpyxl" and raw.isna().to_numpy().any():
        # Formula cells with no saved value come back missing from openpyxl: keep their formula
        # as text instead (never a silently emptied cell; issue 12). A sheet with no missing
        # cell has none, and its XML is not read a second time.
        for (row, col), formula in _uncached_formulas(path, sheet_name).items():
            if row in raw.index and col in raw.columns:
                raw.loc[row, col] = formula
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
    data.attrs[LINES_ATTR] = (int(sheet_rows[0]), breaks)
    data.attrs[LINE_WORD_ATTR] = "row"
    data.attrs[SHEETS_ATTR] = (sheet_name, tuple(sheets))
    return data


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


def _apply_value_labels(series: pd.Series, labels: Mapping[Any, str], measure: str) -> pd.Series:
    """Show labels instead of codes (see the module docstring for the rules)."""
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
    try:
        try:
            frame, meta = reader(os.fspath(path), apply_value_formats=False)
        except Exception as exc:
            if "encoding" not in str(exc).lower() and "convert string" not in str(exc).lower():
                raise
            frame, meta = reader(os.fspath(path), apply_value_formats=False, encoding="latin1")
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
    measures: dict[str, str] = dict(getattr(meta, "variable_measure", None) or {})
    value_labels: dict[str, dict[object, str]] = {}
    for col, labels in (meta.variable_value_labels or {}).items():
        if col not in frame.columns or not labels:
            continue
        value_labels[str(col)] = {_code_key(k): str(v) for k, v in labels.items()}
        frame[col] = _apply_value_labels(frame[col], labels, measures.get(col, "unknown"))
    for col in frame.columns:
        # pyreadstat leaves text as object in an empty-ish file; use the default string dtype.
        if frame[col].dtype == object and all(isinstance(v, str) for v in frame[col].dropna()):
            frame[col] = frame[col].astype(str)
    return frame, value_labels


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


def _write_temp(target: Path, write: Callable[[IO[str]], object], encoding: str) -> Path:
    """Write a flushed, fsynced temporary file beside ``target``; removed again on failure."""
    folder = target.parent
    tmp: Path | None = None
    try:
        fd, tmp = _create_temp(folder, target.name)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        with suppress(OSError):
            if target.exists():
                os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))  # keep the old permissions
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


def write_files_atomic(
    items: Sequence[tuple[str | os.PathLike[str], Callable[[IO[str]], object]]],
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
        for target, (_path, write) in zip(targets, items, strict=True):
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
            frame.to_csv(handle, index=False, lineterminator="\n")

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
                buffer, index=False, header=start == 0, lineterminator="\n"
            )
            handle.write(buffer.getvalue().replace(marker + "\n", "\r"))

    return write_marked


def _text_columns(frame: pd.DataFrame) -> list[np.ndarray[Any, np.dtype[np.object_]] | None]:
    """Per column (by position): its cells as an object array if some may be text, else None."""
    return [text_cells(frame.iloc[:, i]) for i in range(frame.shape[1])]


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
