"""Release formats (issue 18): the protected table as CSV, Excel, Parquet, SPSS or Stata.

The output file's extension chooses the format (:func:`release_format`): ``.xlsx`` an Excel
workbook (one sheet), ``.parquet``/``.pq`` Parquet, ``.sav`` an SPSS file (``.zsav``
compressed), ``.dta`` a Stata file (version 15), ``.csv``/``.tsv``/``.txt`` and any other name
CSV as before. ``.xls`` and ``.xlsm`` are refused (microgui writes workbooks as ``.xlsx``). Every
format goes through :func:`microgui.core.release.check.export_run`: the same release check, the same
formula neutralization (always on in a workbook, which runs a cell starting with ``=`` as a
formula), and the same atomic write (a temporary file beside the target, fsynced, renamed with
the report; :class:`~microgui.core.io.FileWriter`).

**Labels.** A table read from SPSS or Stata keeps its labels in the frame's attributes
(:data:`~microgui.core.io.STAT_ATTR`): variable (column) labels, value labels, and for each
labelled column shown as categories the code of each text shown. A release in SPSS or Stata
writes those columns back as their codes with their value labels, and every column's variable
label. A released value that is no code of its column's labelled set (a generalized interval of
``mstk``, a category a method made) cannot be written as a code: that column is written as text
without value labels, and the report says so (``labels.values_outside_labels``: column -> the
number of such values, ``labels.written_as_text``). Numeric columns whose labels only mark a few
special codes (``-99 = "refused"``) stay numbers and keep those labels. A table from another
format released as SPSS or Stata gets no labels. Excel and Parquet hold the texts shown.

**Names and cells the formats refuse** are refused before anything is written, naming the column:
Stata variable names (letters, digits and ``_``, not starting with a digit, at most 32
characters), SPSS names (at most 64 bytes, starting with a letter, ``@``, ``#`` or ``$``, then
letters, digits or ``_ . @ # $``, not ending with ``.``), Excel's 1,048,576 rows and 16,384
columns, and control characters in text cells of a workbook.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused
from microgui.core.io import EncodedWriter, FileWriter, _number_texts, _to_csv_rows, names
from microgui.core.release.formulas import neutralized
from microgui.core.table.column_types import FORMAT_NAMES, column_type, release_columns
from microgui.core.table.dataset import is_missing

__all__ = [
    "CSV_ENCODINGS",
    "CsvOptions",
    "csv_options_writer",
    "RELEASE_FORMATS",
    "FORMAT_NAMES",
    "is_missing_value",
    "release_format",
    "release_writer",
]

#: Output extension -> release format (any other extension: CSV, as before issue 18).
RELEASE_FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".xlsx": "excel",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".sav": "spss",
    ".zsav": "spss",
    ".dta": "stata",
}
EXCEL_MAX_ROWS = 1_048_576  # the header is one of them
EXCEL_MAX_COLUMNS = 16_384
# The variable-name rules are those of core/io/names.py (one place: the proposals of valid
# names and this check agree); Unicode letters are allowed (Stata 14+, SPSS 16+)
_STATA_NAME = names._STATA_NAME
_SPSS_NAME = names._SPSS_NAME
_STATA_RESERVED = names.STATA_RESERVED
_SPSS_RESERVED = names.SPSS_RESERVED
# control characters a workbook cannot hold, and the carriage return, which its XML turns into
# a line feed (a cell would change without a word)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0d\x0e-\x1f]")
#: Longest text cell a format holds: Excel 32,767 characters; SPSS 32,767 bytes; Stata 2,045
#: bytes (a str variable; pyreadstat writes no strL).
_LONGEST = {"excel": ("characters", 32_767), "spss": ("bytes", 32_767), "stata": ("bytes", 2_045)}
#: A number written plainly: no leading zero (01234 is a code), no exponent, no sign but "-";
#: trailing zeros after the point allowed (1.50, 80.0: a fixed number of decimals).
_PLAIN_NUMBER_TEXT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
_MEASURES = ("nominal", "ordinal", "scale")


#: Encodings a CSV release can be written in (``--csv-encoding``).
CSV_ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "cp1252", "latin-1")
_ENCODING_ALIASES = {
    "utf8": "utf-8", "utf-8-bom": "utf-8-sig", "utf16": "utf-16", "latin1": "latin-1",
    "iso-8859-1": "latin-1", "iso8859-1": "latin-1", "windows-1252": "cp1252",
}  # fmt: skip


@dataclass(frozen=True)
class CsvOptions:
    """How a CSV release is written (``--csv-sep``, ``--csv-decimal``, ``--csv-encoding``): the
    separator (one character; ``tab`` accepted), the decimal mark of numbers (``.`` or ``,``)
    and the encoding (:data:`CSV_ENCODINGS`). The default is the CSV of before issue 18: ``,``,
    ``.``, UTF-8 (a ``.tsv`` name: tab)."""

    sep: str = ","
    decimal: str = "."
    encoding: str = "utf-8"
    #: the separator was given (a .tsv output then keeps it)
    sep_given: bool = False

    @classmethod
    def make(
        cls, sep: str | None = None, decimal: str | None = None, encoding: str | None = None
    ) -> CsvOptions:
        """Checked options (:class:`ExportRefused` naming the option and what to give)."""
        given = sep is not None
        sep = {"tab": "\t", "\\t": "\t", "semicolon": ";", "comma": ","}.get(sep or ",", sep or ",")
        if (
            len(sep) != 1
            or sep.isalnum()
            or sep in "\"'\r\n. =+-@"
            or (ord(sep) < 32 and sep != "\t")
        ):
            raise ExportRefused(
                f"--csv-sep {sep!r}: give one character that is not a letter, digit, dot, "
                "space, quote, control character or one of = + - @ (a line starting with one "
                "is run as a formula by a spreadsheet): , ; | or tab"
            )
        decimal = decimal or "."
        if decimal not in (".", ","):
            raise ExportRefused(f"--csv-decimal {decimal!r}: give . or ,")
        if decimal == sep:
            raise ExportRefused(
                f"--csv-decimal {decimal!r} is also the separator; use --csv-sep ';' with a "
                "decimal comma"
            )
        encoding = (encoding or "utf-8").lower().replace("_", "-")
        encoding = _ENCODING_ALIASES.get(encoding, encoding)
        if encoding not in CSV_ENCODINGS:
            raise ExportRefused(
                f"--csv-encoding {encoding!r}: give one of {', '.join(CSV_ENCODINGS)}"
            )
        return cls(sep, decimal, encoding, given)

    def for_name(self, path: str | os.PathLike[str]) -> CsvOptions:
        """A ``.tsv`` output with the default separator gets a tab."""
        if not self.sep_given and Path(path).suffix.lower() == ".tsv":
            return CsvOptions("\t", self.decimal, self.encoding, True)
        return self

    @property
    def is_default(self) -> bool:
        return (self.sep, self.decimal, self.encoding) == (",", ".", "utf-8")

    def to_json(self) -> dict[str, str]:
        return {"separator": self.sep, "decimal": self.decimal, "encoding": self.encoding}


def csv_options_writer(
    frame: pd.DataFrame, options: CsvOptions, *, text_input: bool = True
) -> EncodedWriter:
    """The writer of ``frame`` as CSV with these options: numbers as the default CSV writes
    them (round-trip repr, whole numbers plain) with the decimal mark given, text cells as they
    are, quoted where they hold the separator, a quote or a line break (all text quoted when
    some cell holds a carriage return). A cell the encoding cannot hold is refused first, naming
    its column and record."""
    _check_cells(frame, "csv")
    # a CSV input's number columns (text) take the decimal mark too, their digits as written
    plain = (
        {c for c, (_d, mark) in plain_number_columns(frame).items() if mark == "."}
        if options.decimal != "." and text_input
        else set()
    )
    number = re.compile(_PLAIN_NUMBER_TEXT)
    cells: dict[object, list[object]] = {}
    quote_all = False
    for name in frame.columns:
        column = frame[name]
        if str(name) in plain:
            cells[name] = [  # a number's point only, never a missing cell's "."
                v.replace(".", options.decimal)
                if isinstance(v, str) and number.fullmatch(v.strip())
                else v
                for v in column.astype(object).tolist()
            ]
            continue
        texts = _number_texts(column)
        if texts is not None:
            values = texts.tolist()
            if options.decimal == ",":
                values = [v.replace(".", ",") if isinstance(v, str) else v for v in values]
            cells[name] = values
            continue
        values = column.astype(object).tolist()
        cells[name] = values
        if any(isinstance(v, str) and "\r" in v for v in values):
            quote_all = True
    table = pd.DataFrame(cells, index=frame.index, columns=frame.columns, dtype=object)
    if not options.encoding.startswith("utf"):
        for name in [*frame.columns]:
            _check_encodable(str(name), "the column name", options.encoding)
            for row, value in enumerate(cells[name]):
                if isinstance(value, str):
                    _check_encodable(
                        value, f"column {str(name)!r}, record {row + 1:,}", options.encoding
                    )

    def write(handle: IO[str]) -> None:
        table.to_csv(
            handle,
            sep=options.sep,
            index=False,
            lineterminator="\n",
            quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL,
            chunksize=_to_csv_rows(table),  # never one record of a wide table a chunk
        )

    return EncodedWriter(write, options.encoding)


def _check_encodable(text: str, where: str, encoding: str) -> None:
    try:
        text.encode(encoding)
    except UnicodeEncodeError as exc:
        # the character's code point, never the text around it: a run of unencodable
        # characters can be a whole name (no value of the data in a message, issue 27)
        char = text[exc.start]
        name = unicodedata.name(char, "")
        raise ExportRefused(
            f"{where}: a character (U+{ord(char):04X}{' ' + name if name else ''}) cannot be "
            f"written in {encoding}; choose --csv-encoding utf-8 (or utf-8-sig for Excel)"
        ) from exc


def release_format(path: str | os.PathLike[str]) -> str:
    """The release format of an output file name (:data:`RELEASE_FORMATS`; CSV for any other
    extension); ``.xls``/``.xlsm`` refused with what to do."""
    name = Path(path).name
    ext = Path(path).suffix.lower()
    if ext in (".xls", ".xlsm"):
        raise ExportRefused(
            f"{name}: microgui writes Excel workbooks as .xlsx (not {ext}); name the output "
            f"{Path(name).stem}.xlsx"
        )
    return RELEASE_FORMATS.get(ext, "csv")


def release_writer(
    frame: pd.DataFrame,
    fmt: str,
    stat: Mapping[str, Any] | None = None,
    *,
    compress: bool = False,
    text_input: bool = True,
) -> tuple[FileWriter, dict[str, Any]]:
    """The :class:`~microgui.core.io.FileWriter` of ``frame`` in format ``fmt`` (not CSV) and
    what the report says of it. ``stat`` is the input's :data:`~microgui.core.io.STAT_ATTR`
    (SPSS/Stata labels), used by the SPSS and Stata formats. ``text_input``: the table was read
    from a text file (CSV/TSV), whose number columns are text to be typed
    (:func:`typed_numbers`); a typed input's text columns (SPSS A-format, Parquet strings, a
    DataFrame's) are text on purpose and stay text. Refuses (:class:`ExportRefused`) what the
    format cannot hold, before anything is written."""
    if fmt not in ("excel", "parquet", "spss", "stata"):
        raise ValueError(f"no file writer for format {fmt!r}")
    # The input's reader notes (file name and SHA-256, line map, SPSS/Stata labels, which
    # records held user-missing codes) ride along in ``frame.attrs``: pandas writes them into a
    # Parquet file's metadata, and compares them when pyreadstat concatenates (an array there
    # crashed every SPSS/Stata release with a date; issue 27). A release file holds the table
    # only: what the format keeps of the labels comes from ``stat``, passed on purpose.
    frame = frame.copy(deep=False)
    frame.attrs = {}
    # every kind of column as the format holds it, or refused naming it (one place for all
    # formats: microgui.core.table.column_types); a no-op on a frame export_run has converted
    frame, converted = release_columns(frame, fmt)
    _check_cells(frame, fmt)
    plain = _plain_numbers(frame) if text_input else {}
    decimals = {c: p.decimals for c, p in plain.items() if p.decimals is not None}
    frame, numbers = typed_numbers(frame, plain)
    notes: dict[str, Any] = dict(converted)
    if numbers:
        notes["columns_written_as_numbers"] = numbers
    if fmt == "excel":
        writer, more = _excel(frame)
    elif fmt == "parquet":
        writer, more = _parquet(frame)
    else:
        writer, more = _stat(frame, fmt, stat or {}, compress, decimals)
    return writer, {**notes, **more}


def _excel(frame: pd.DataFrame) -> tuple[FileWriter, dict[str, Any]]:
    rows, cols = frame.shape
    if rows + 1 > EXCEL_MAX_ROWS or cols > EXCEL_MAX_COLUMNS:
        raise ExportRefused(
            f"an Excel sheet holds at most {EXCEL_MAX_ROWS - 1:,} records and "
            f"{EXCEL_MAX_COLUMNS:,} columns; this table has {rows:,} x {cols:,}: write .csv or "
            ".parquet"
        )
    for name in frame.columns:
        column = frame[name]
        if not _is_text(column):
            continue
        bad = column.astype("string").str.contains(_CONTROL, na=False).to_numpy(dtype=bool)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ExportRefused(
                f"column {name!r}, record {row + 1:,}: a control character (or a carriage "
                "return) that an Excel workbook cannot hold as it is; write .csv or .parquet, "
                "or remove it"
            )

    def write(path: Path) -> None:
        # openpyxl's write-only mode streams the rows: about a third of pandas.to_excel's time
        # and a small fraction of its memory (100,000 x 10: 16 s and 0.5 GB before)
        from openpyxl import Workbook  # type: ignore[import-untyped]

        book = Workbook(write_only=True)
        sheet = book.create_sheet("protected")
        sheet.append([str(c) for c in frame.columns])
        columns = [_excel_cells(frame[c]) for c in frame.columns]
        for row in zip(*columns, strict=True):
            sheet.append(row)
        book.save(path)

    return FileWriter(write, FORMAT_NAMES["excel"]), {}


def _excel_cells(column: pd.Series) -> list[object]:
    """A column's cells as openpyxl writes them: numbers, booleans, dates and durations as
    such (numpy and pandas scalars as Python ones), text as text, missing cells empty."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iufb":
        values = column.to_numpy()
        out: list[object] = values.tolist()
        if dtype.kind == "f":
            out = [None if v != v else v for v in out]  # NaN: an empty cell
        return out
    cells: list[object] = []
    for v in column.tolist():
        if is_missing_value(v):
            cells.append(None)
        elif isinstance(v, pd.Timestamp):
            cells.append(v.to_pydatetime())
        elif isinstance(v, pd.Timedelta):
            cells.append(v.to_pytimedelta())
        elif isinstance(v, (np.generic,)):
            cells.append(v.item())
        elif isinstance(v, (str, bool, int, float, dt.date, dt.time, dt.timedelta)):
            cells.append(v)
        else:
            cells.append(str(v))
    return cells


def _parquet(frame: pd.DataFrame) -> tuple[FileWriter, dict[str, Any]]:
    """Parquet holds one type per column: a column of mixed Python values (numbers and text, as
    a spreadsheet's column can be) has been written as text by
    :func:`~microgui.core.table.column_types.release_columns`, which says so in the report."""

    def write(path: Path) -> None:
        frame.to_parquet(path, index=False)

    return FileWriter(write, FORMAT_NAMES["parquet"]), {}


def is_missing_value(value: object) -> bool:
    """Whether one cell is missing (None, NaN, NaT, pd.NA); False for anything pandas cannot
    judge."""
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def _is_text(column: pd.Series) -> bool:
    dtype = column.dtype
    return bool(
        (isinstance(dtype, np.dtype) and dtype.kind == "O")
        or pd.api.types.is_string_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    )


def _check_names(frame: pd.DataFrame, fmt: str) -> None:
    seen: dict[str, str] = {}
    for name in frame.columns:
        text = str(name)
        if fmt == "stata":
            ok = (
                _STATA_NAME.fullmatch(text) is not None
                and len(text.encode("utf-8")) <= 128
                and text not in _STATA_RESERVED
                and re.fullmatch(r"str\d+", text) is None
            )
            rule = (
                "letters, digits and _, not starting with a digit, at most 32 characters, not a "
                "reserved word such as in, if, byte, _n"
            )
        else:
            ok = (
                _SPSS_NAME.fullmatch(text) is not None
                and len(text.encode("utf-8")) <= 64
                and not text.endswith(".")
                and text.upper() not in _SPSS_RESERVED
            )
            rule = (
                "at most 64 bytes, starting with a letter or @, then letters, digits or _ . @ # "
                "$, not ending with a dot, not a reserved word such as BY, ALL, TO"
            )
            other = seen.get(text.upper())
            if ok and other is not None:
                raise ExportRefused(
                    f"columns {other!r} and {text!r} are one SPSS variable name (SPSS ignores "
                    "case); rename one in the input, or write .csv or .parquet"
                )
            seen[text.upper()] = text
        if not ok:
            raise ExportRefused(
                f"column {text!r} is not a valid {'Stata' if fmt == 'stata' else 'SPSS'} "
                f"variable name ({rule}); rename it in the input, or write .csv or .parquet"
            )


def _check_cells(frame: pd.DataFrame, fmt: str) -> None:
    """NUL characters (every format) and text longer than the format holds, refused naming the
    column and record (readers cut or blank such cells without a word)."""
    unit, longest = _LONGEST.get(fmt, ("characters", 0))
    for name in frame.columns:
        column = frame[name]
        if not _is_text(column) or column_type(column) in ("binary", "nested"):
            continue  # bytes and nested values: only where the format writes them as such
        text = column.astype("string")
        nul = text.str.contains("\x00", regex=False, na=False).to_numpy(dtype=bool)
        if nul.any():
            row = int(np.flatnonzero(nul)[0])
            raise ExportRefused(
                f"column {name!r}, record {row + 1:,}: a NUL character, which "
                f"{FORMAT_NAMES[fmt]} cannot hold; remove it or write .csv"
            )
        if not longest:
            continue
        if unit == "bytes":
            sizes = text.map(lambda v: len(v.encode("utf-8")) if isinstance(v, str) else 0)
        else:
            sizes = text.str.len().fillna(0)
        too_long = sizes.to_numpy(dtype=np.int64) > longest
        if too_long.any():
            row = int(np.flatnonzero(too_long)[0])
            raise ExportRefused(
                f"column {name!r}, record {row + 1:,}: text longer than {FORMAT_NAMES[fmt]} "
                f"holds ({longest:,} {unit}); write .csv or .parquet"
            )


_MISSING_TEXTS = ("", "NA", "N/A", "NaN", "nan", ".")


def _distinct_texts(column: pd.Series) -> tuple[np.ndarray, pd.Series, np.ndarray] | None:
    """(codes, distinct texts stripped of spaces, which of them are missing) of a text column
    whose every cell is text or missing, else None. Read once per distinct value, not per cell
    (a million records with some thousand distinct numbers: a fraction of a second)."""
    if not _is_text(column) or isinstance(column.dtype, pd.CategoricalDtype):
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)  # missing cells: code -1
    values = list(uniques)
    if not all(isinstance(v, str) for v in values):
        return None
    text = pd.Series(values, dtype="string").str.strip()
    return np.asarray(codes), text, text.isin(_MISSING_TEXTS).to_numpy(dtype=bool)


class _Plain(NamedTuple):
    """A number column of :func:`_plain_numbers`: its fixed decimals (or None), decimal mark,
    and its distinct texts (:func:`_distinct_texts`), read once for finding and converting."""

    decimals: int | None
    mark: str
    codes: np.ndarray
    text: pd.Series
    missing: np.ndarray


def plain_number_columns(frame: pd.DataFrame) -> dict[str, tuple[int | None, str]]:
    """{column: (fixed decimals or None, decimal mark)} of :func:`_plain_numbers`."""
    return {name: (p.decimals, p.mark) for name, p in _plain_numbers(frame).items()}


def _plain_numbers(frame: pd.DataFrame) -> dict[str, _Plain]:
    """The text columns whose every cell is a plain number (:data:`_PLAIN_NUMBER_TEXT`: no
    leading zero, no exponent, at most 15 digits, never ``-0``; the point or, in every cell, a
    decimal comma) or missing, each with (its fixed number of decimals, ``80.0`` and ``79.6``:
    1, or None when the cells differ; its decimal mark): what a CSV input's pass-through number
    columns are. Only columns whose distinct texts are distinct numbers (``1.1`` and ``1.10``
    in one column are two codes, left as text), and not codes with varying decimals ending in
    0 (3.9, 3.10, 3.11)."""
    found: dict[str, _Plain] = {}
    for name in frame.columns:
        distinct = _distinct_texts(frame[name])
        if distinct is None:
            continue
        codes, text, missing = distinct
        present = text[~missing]
        if present.empty:
            continue
        digits = present.str.count(r"[0-9]")
        if int(digits.max()) > 15:
            continue
        mark = "."
        if not bool(present.str.fullmatch(_PLAIN_NUMBER_TEXT).fillna(False).all()):
            # a decimal comma (79,6) as the reader accepts it in a quasi-identifier: every cell
            # plain with a comma for the point, and not every comma before three digits (1,234
            # may be a thousands separator: left as text)
            comma = present.str.fullmatch(_PLAIN_NUMBER_TEXT.replace("\\.", ","))
            after = present.str.extract(r",([0-9]+)$")[0].dropna().str.len()
            if not bool(comma.fillna(False).all()) or after.empty or bool((after == 3).all()):
                continue
            mark = ","
            present = present.str.replace(",", ".", regex=False)
        if bool(present.str.fullmatch(r"-0(?:\.0*)?").fillna(False).any()):
            continue  # -0: the sign would be lost
        spelled = pd.unique(present.to_numpy(dtype=object))  # " 12" and "12" are one text
        if len(set(pd.to_numeric(pd.Series(spelled)).tolist())) != len(spelled):
            continue  # 1.1 and 1.10: two codes, not one number
        decimals = present.str.extract(r"\.([0-9]+)$")[0].str.len().fillna(0).astype(int)
        fixed = decimals.nunique() == 1
        if not fixed and bool(present.str.contains(r"\.[0-9]*0$").any()):
            continue  # 3.9, 3.10, 3.11: a trailing zero among varying decimals is a code
        found[str(name)] = _Plain(
            int(decimals.iloc[0]) if fixed else None, mark, codes, text, missing
        )
    return found


def typed_numbers(
    frame: pd.DataFrame, plain: Mapping[str, _Plain] | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """The number columns of a text input (:func:`_plain_numbers`, or ``plain``, already
    found) as numbers (integers when no cell has a point and none is missing, else floats):
    what a CSV input's pass-through number columns are in a typed format. Returns the frame and
    the columns converted."""
    out = frame
    converted: list[str] = []
    found = _plain_numbers(frame) if plain is None else plain
    for name, (_decimals, mark, codes, text, missing) in found.items():
        if mark == ",":
            text = text.str.replace(",", ".", regex=False)
        numbers = pd.to_numeric(text.where(~missing), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        values = np.where(codes >= 0, numbers[np.maximum(codes, 0)], np.nan)
        any_missing = bool((codes < 0).any()) or bool(missing[np.unique(codes[codes >= 0])].any())
        whole = not text[~missing].str.contains(".", regex=False).any() and not any_missing
        out = frame.copy(deep=False) if out is frame else out
        out[name] = values.astype(np.int64) if whole else values
        converted.append(str(name))
    return out, converted


def _stat(
    frame: pd.DataFrame,
    fmt: str,
    stat: Mapping[str, Any],
    compress: bool,
    decimals: Mapping[str, int] | None = None,
) -> tuple[FileWriter, dict[str, Any]]:
    _check_names(frame, fmt)
    codes: Mapping[str, Mapping[str, object]] = stat.get("codes", {})
    value_labels: Mapping[str, Mapping[object, str]] = stat.get("value_labels", {})
    column_labels: Mapping[str, str] = stat.get("column_labels", {})
    measures: Mapping[str, str] = stat.get("measures", {})
    out = frame.copy(deep=False)
    # SPSS and Stata dates carry no time zone: pyreadstat wrote a zoned column's UTC clock (a
    # midnight in Berlin became the day before); the local wall time is written, and said
    zoned = [str(c) for c in frame.columns if isinstance(frame[c].dtype, pd.DatetimeTZDtype)]
    for name in zoned:
        out[name] = frame[name].dt.tz_localize(None)
    labels_out: dict[str, dict[float, str]] = {}
    outside: dict[str, int] = {}
    as_text: list[str] = []
    dropped: list[str] = []
    neutralized = 0
    for name in frame.columns:
        column = frame[name]
        shown = codes.get(str(name))
        if shown is not None and _is_text(column):
            # the release's text may carry the formula rule's leading ' (export_run)
            lookup = {**{_neutral(t): c for t, c in shown.items()}, **shown}
            texts = column.astype(object)
            # a missing cell (also the empty cell a missing category is released as) is no
            # value outside the labels: it is written system-missing
            present = ~is_missing(texts)
            texts = texts.where(present, None)
            mapped = texts.map(lambda v, m=lookup: m.get(v) if isinstance(v, str) else None)
            missing = present & pd.isna(mapped.to_numpy())
            if missing.any():
                outside[str(name)] = int(pd.Series(texts[missing]).nunique())
                as_text.append(str(name))
                out[name] = _as_text(column)
                continue
            out[name] = pd.to_numeric(mapped, errors="coerce").astype(np.float64)
            labels_out[str(name)] = _numeric_labels(value_labels.get(str(name), {}))
        elif str(name) in value_labels and pd.api.types.is_numeric_dtype(column):
            labels_out[str(name)] = _numeric_labels(value_labels[str(name)])
        elif (_is_text(column) or column.dtype == object) and not _dates(column):
            out[name] = _as_text(column)
        if str(name) in value_labels and str(name) not in labels_out:
            if str(name) not in as_text:
                dropped.append(str(name))  # text codes: SPSS/Stata numeric labels cannot hold
    for column_name, labels in list(labels_out.items()):
        if fmt == "stata":
            whole = {c: t for c, t in labels.items() if float(c).is_integer() and abs(c) < 2**31}
            if len(whole) < len(labels):
                dropped.append(column_name)  # Stata labels integer codes only
            labels = whole
        safe = {c: _neutral(t) for c, t in labels.items()}
        neutralized += sum(safe[c] != labels[c] for c in labels)
        labels_out[column_name] = safe
    labels_out = {c: m for c, m in labels_out.items() if m}
    kept_labels: dict[str, str] = {}
    for c in frame.columns:
        label = column_labels.get(str(c))
        if label is None:
            continue
        if fmt == "stata" and len(label) > 80:
            raise ExportRefused(
                f"column {str(c)!r}: its variable label has {len(label)} characters and a Stata "
                "label holds 80; shorten it in the input, or write .sav"
            )
        kept_labels[str(c)] = _neutral(label)
        neutralized += kept_labels[str(c)] != label
    kept_missing = stat.get("user_missing") or {}
    missing_ranges = _user_missing_back(out, kept_missing, as_text, fmt)
    # codes this format cannot take (SPSS ranges into Stata, Stata letters into SPSS) are
    # dropped too, and said
    not_carried = [c for c in kept_missing if c in out.columns and c not in missing_ranges]
    notes: dict[str, Any] = {
        "labels": {
            "user_missing_kept": sorted(missing_ranges),
            "user_missing_dropped": sorted(
                {*(stat.get("user_missing_dropped") or ()), *not_carried}
            ),
            "value_labels_kept": sorted(labels_out),
            "variable_labels_kept": sorted(kept_labels),
            "values_outside_labels": outside,
            "written_as_text": as_text,
            "value_labels_dropped": sorted(set(dropped)),
            "labels_neutralized": int(neutralized),
        }
    }
    if zoned:
        notes["time_zone_dropped"] = {
            c: f"written as local time in {frame[c].dt.tz} (the format holds no time zone)"
            for c in zoned
        }

    def write(path: Path) -> None:
        import pyreadstat

        # a CSV number column's fixed decimals (79.6, 80.0) kept as its display format
        shown = {c: d for c, d in (decimals or {}).items() if c in out.columns and d <= 16}
        formats = (
            {c: f"F{min(40, 17 + d)}.{d}" for c, d in shown.items()}
            if fmt == "spss"
            else {c: f"%{min(40, 17 + d)}.{d}f" for c, d in shown.items()}
        )
        # the other number columns: wide enough for their largest value (SPSS's default F8.2
        # shows 100,000,000 as asterisks; Stata's %10.0g a 15-digit integer as 1.2e+14)
        for c in out.columns:
            column = out[c]
            if str(c) in formats or not pd.api.types.is_numeric_dtype(column.dtype):
                continue
            if pd.api.types.is_bool_dtype(column.dtype) or str(c) in labels_out:
                continue
            finite = column.to_numpy(dtype=np.float64, na_value=np.nan)
            finite = finite[np.isfinite(finite)]
            digits = len(str(int(np.abs(finite).max()))) if len(finite) else 1
            whole = pd.api.types.is_integer_dtype(column.dtype)
            if fmt == "spss":
                formats[str(c)] = (
                    f"F{min(40, max(8, digits + 2))}.0"
                    if whole
                    else f"F{min(40, max(8, digits + 4))}.2"
                )
            elif whole and digits > 9:
                formats[str(c)] = f"%{min(40, digits + 2)}.0f"
        common: dict[str, Any] = {
            "column_labels": kept_labels or None,
            "variable_value_labels": labels_out or None,
            "variable_format": formats or None,
        }
        if fmt == "spss":
            measure = {
                str(c): measures[str(c)]
                for c in frame.columns
                if measures.get(str(c)) in _MEASURES and str(c) not in as_text
            }
            pyreadstat.write_sav(
                out,
                os.fspath(path),
                compress=compress,
                variable_measure=measure or None,
                missing_ranges=missing_ranges or None,
                **common,
            )
        else:
            pyreadstat.write_dta(
                out,
                os.fspath(path),
                version=15,
                missing_user_values=missing_ranges or None,
                **common,
            )

    return FileWriter(write, FORMAT_NAMES[fmt]), notes


def _user_missing_back(
    out: pd.DataFrame, kept: Mapping[str, Mapping[str, Any]], as_text: Sequence[str], fmt: str
) -> dict[str, list[Any]]:
    """Write the input's user-missing codes back into ``out`` (in place) in the columns passed
    through (``kept``: :func:`microgui.core.io._user_missing`, filtered by the export), where the
    release still has the missing cell; returns what to declare: SPSS ``missing_ranges``, or
    Stata ``missing_user_values`` (its letters .a to .z). Only into the format they came from:
    an SPSS code is no Stata letter."""
    declared: dict[str, list[Any]] = {}
    for name, entry in kept.items():
        if name not in out.columns or name in as_text:
            continue
        spans = list(entry.get("ranges", ()))
        letters = [str(r["lo"]) for r in spans]
        stata_codes = bool(letters) and all(len(x) == 1 and x.isalpha() for x in letters)
        column = out[name]
        cells = entry.get("cells")
        rows = np.asarray(cells.rows if cells is not None else (), dtype=np.int64)
        stored = np.asarray(cells.codes if cells is not None else (), dtype=object)
        if len(rows) and len(column) <= int(rows.max()):
            continue  # not the input's rows (cannot happen for a release; never guess)
        if pd.api.types.is_datetime64_any_dtype(column.dtype) or _dates(column):
            # an SPSS date variable's declaration (pyreadstat reads it as dates): the dates go
            # back and the declaration in SPSS's seconds since 1582-10-14; Stata's letters in a
            # date variable cannot be written by pyreadstat: dropped, and said
            if fmt != "spss" or stata_codes:
                continue
            seconds = [(_spss_seconds(r["lo"]), _spss_seconds(r["hi"])) for r in spans]
            if any(lo is None or hi is None for lo, hi in seconds):
                continue
            values = column.to_numpy(copy=True)
            empty = pd.isna(values[rows]) if len(rows) else np.zeros(0, dtype=bool)
            for row, code, gone in zip(rows, stored.tolist(), empty, strict=True):
                if gone:
                    values[row] = code if values.dtype == object else np.datetime64(code)
            out[name] = pd.Series(values, index=out.index, dtype=column.dtype)
            declared[name] = [{"lo": lo, "hi": hi} for lo, hi in seconds]
            continue
        numeric = pd.api.types.is_numeric_dtype(column.dtype)
        if fmt == "stata" and not (stata_codes and numeric):
            continue  # Stata holds its letters .a-.z in number columns, no SPSS code
        if fmt == "spss" and stata_codes and numeric:
            continue  # nor SPSS a Stata letter
        codes = stored
        # SPSS numeric codes go back as numbers; text codes and Stata's letters as text
        as_numbers = numeric and not stata_codes
        values = (
            column.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
            if as_numbers
            else column.astype(object).to_numpy(copy=True)
        )
        empty = pd.isna(values[rows]) if len(rows) else np.zeros(0, dtype=bool)
        values[rows[empty]] = codes[empty].astype(np.float64) if as_numbers else codes[empty]
        out[name] = pd.Series(values, index=out.index, dtype=np.float64 if as_numbers else object)
        if fmt == "stata":
            declared[name] = sorted(set(letters))
        elif as_numbers:
            declared[name] = [{"lo": float(r["lo"]), "hi": float(r["hi"])} for r in spans]
        else:
            declared[name] = letters[:3]  # SPSS: 3 text codes at most
    return declared


def _spss_seconds(value: object) -> float | None:
    """A date or date-time as SPSS stores it (seconds since 1582-10-14), None for anything
    else."""
    if isinstance(value, dt.datetime):
        moment = value.replace(tzinfo=None)
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time())
    else:
        return None
    return (moment - dt.datetime(1582, 10, 14)).total_seconds()


def _neutral(text: str) -> str:
    """A label as the formula rule writes a cell (:func:`microgui.core.release.check.neutralize_formulas`:
    a leading ' before each line a spreadsheet would run)."""
    return neutralized(text) or text


def _dates(column: pd.Series) -> bool:
    """Whether every value of an object column is a date, a time or a date-time (pyreadstat
    writes them as SPSS/Stata dates and times)."""
    values = [v for v in column.tolist() if not is_missing_value(v)]
    return bool(values) and all(isinstance(v, (dt.date, dt.time)) for v in values)


def _numeric_labels(labels: Mapping[object, str]) -> dict[float, str]:
    """Value labels with numeric codes, as pyreadstat writes them (text codes are dropped: an
    SPSS/Stata numeric variable cannot carry them)."""
    out: dict[float, str] = {}
    for code, label in labels.items():
        if isinstance(code, (int, float, np.integer, np.floating)) and not isinstance(code, bool):
            number = float(code)
            out[int(number) if number.is_integer() else number] = str(label)
    return out


def _as_text(column: pd.Series) -> pd.Series:
    """A column as Python text (missing cells stay missing): what SPSS and Stata store as a
    string variable."""
    values = [None if pd.isna(v) else str(v) for v in column.astype(object).tolist()]
    return pd.Series(values, index=column.index, name=column.name, dtype=object)
