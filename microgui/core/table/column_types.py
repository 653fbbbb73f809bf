"""Every kind of column a reader can return, in one place, with what microgui does with it.

The readers (CSV, Excel, Parquet through pyarrow, SPSS and Stata through pyreadstat) and a
DataFrame given to the Python API hand over pandas columns of many dtypes: numpy numbers,
pandas' nullable ``Int64``/``Float64``/``boolean``/``string``, pyarrow-backed ``ArrowDtype``
columns, and ``object`` columns of Python values (``bytes``, lists, dicts, ``Decimal``,
``datetime.date``...). :func:`kind_of` names the kind of one column (:data:`KINDS`), and each
:class:`ColumnKind` says, for that kind:

- what ``suggest-roles`` does with it (:attr:`ColumnKind.suggest`; applied in
  :func:`microgui.core.table.dataset.explain_roles`: the name and value rules apply to every kind,
  binary values read as text, nested values by their leaves and field names);
- what each release format writes (:attr:`ColumnKind.formats`): the values as they are, or
  converted with the column named in the report (a conversion is one to one, so the release
  check's k holds on the written values), or a refusal naming the column and what to do, before
  anything is written. :func:`release_columns` applies it; every release goes through it
  (:func:`microgui.core.release.check.export_run` for every format and
  :func:`microgui.core.release.release_writer`), so no writer meets a kind it has not seen.

SPSS/Stata user-missing declarations are no kind of their own: they ride on a number or text
column in the frame's attributes (:data:`~microgui.core.io.STAT_ATTR`) and are written back by
:mod:`microgui.core.release`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused

__all__ = [
    "FORMAT_NAMES",
    "FORMATS",
    "ColumnKind",
    "Treatment",
    "KINDS",
    "KIND_NAMES",
    "EXACT_INT",
    "column_type",
    "kind_of",
    "kind",
    "release_columns",
    "json_cell",
    "readable_texts",
    "leaf_texts",
    "field_names",
]

#: The release formats, as :data:`microgui.core.release.RELEASE_FORMATS` names them.
FORMATS = ("csv", "excel", "parquet", "spss", "stata")
#: each release format in words, for messages (release.py's writers use them too)
FORMAT_NAMES = {
    "csv": "a CSV file",
    "excel": "an Excel workbook",
    "parquet": "a Parquet file",
    "spss": "an SPSS file",
    "stata": "a Stata file",
}
#: Integers beyond this are not exact in a float64 (SPSS, Stata and Excel store numbers so).
EXACT_INT = 2**53

Action = Literal["write", "convert", "refuse"]

#: Where the report lists a converted column: ``columns_converted`` {column: what was done},
#: except for three kinds whose report keys are older than this module (kept for readers of
#: the reports): lists of columns, or {column: what} for ``time_zone_dropped``.
CONVERTED = "columns_converted"
_LIST_KEYS = frozenset({"integers_written_as_text", "parquet_columns_written_as_text"})


@dataclass(frozen=True)
class Treatment:
    """What one release format does with one kind of column: ``write`` (the format holds the
    values; ``says`` how), ``convert`` (the values are written as ``says`` and the report lists
    the column under ``report_key``), or ``refuse`` (``says`` is what to do instead; the
    message names the column)."""

    action: Action
    says: str
    report_key: str = CONVERTED
    #: a "write" that converts the values pyarrow cannot take (and lists them under
    #: ``report_key``): Parquet's maps read back as pairs, integers beyond 64 bits
    may_convert: bool = False


def _write(says: str) -> Treatment:
    return Treatment("write", says)


def _convert(says: str, report_key: str = CONVERTED) -> Treatment:
    return Treatment("convert", says, report_key)


def _same(treatment: Treatment) -> dict[str, Treatment]:
    return dict.fromkeys(FORMATS, treatment)


@dataclass(frozen=True)
class ColumnKind:
    """One kind of column: its name, what it holds (in messages), whether it can be a
    quasi-identifier (and a continuous one), what ``suggest-roles`` does with it, and per
    release format (:data:`FORMATS`) its :class:`Treatment`."""

    name: str
    holds: str
    suggest: str
    formats: Mapping[str, Treatment]
    qi: bool = True
    continuous: bool = False


_TEXT = "written as text"
_AS_TEXT = "written as text (the format has no such type)"
_NAME_RULES = "the name rule (id, name, email, phone, address...) first"

#: Every kind of column a reader can return, in the order :func:`kind_of` tells them apart.
KINDS: tuple[ColumnKind, ...] = (
    ColumnKind(
        "text",
        "text",
        f"{_NAME_RULES}; e-mail/web/telephone values or text distinct on most records: "
        "identifier; else a nominal quasi-identifier (ISO dates: ordinal)",
        _same(_write("text")),
    ),
    ColumnKind(
        "binary",
        "binary values (bytes)",
        f"{_NAME_RULES}; the values read as UTF-8 text (undecodable bytes replaced) for the "
        "value rules and the distinct-share rule: identifier when one applies, else "
        "non-confidential (bytes can be no quasi-identifier)",
        {
            **_same(
                _convert(
                    "binary values written as text: UTF-8 when every value is text, else hexadecimal"
                )
            ),
            "parquet": _write("binary"),
        },
        qi=False,
    ),
    ColumnKind(
        "nested",
        "lists, structs or maps",
        f"{_NAME_RULES}; struct and map field names by the name rule, the text leaves by the "
        "value rules, the values as JSON by the distinct-share rule: identifier when one "
        "applies, else non-confidential (nested values can be no quasi-identifier)",
        {
            **_same(_convert("lists, structs and maps written as JSON text")),
            "parquet": Treatment(
                "write",
                "nested as read when pyarrow takes the values, else JSON text",
                may_convert=True,
            ),
        },
        qi=False,
    ),
    ColumnKind(
        "category",
        "categories",
        f"{_NAME_RULES}; ordered: an ordinal quasi-identifier in the categories' order, else "
        "nominal",
        {
            **_same(_write("the categories' text")),
            "spss": _write("codes with value labels (read from SPSS), else text"),
            "stata": _write("codes with value labels (read from Stata), else text"),
        },
    ),
    ColumnKind(
        "boolean",
        "yes/no values",
        f"{_NAME_RULES}; a nominal quasi-identifier",
        {
            **_same(_write("true/false")),
            "spss": _write("1/0 numbers (the format's yes/no)"),
            "stata": _write("1/0 numbers (the format's yes/no)"),
        },
    ),
    ColumnKind(
        "integer",
        "whole numbers",
        f"{_NAME_RULES}; 1..n one per record: a row number (identifier); 12 or more distinct "
        "values continuous, fewer ordinal",
        _same(_write("numbers")),
        continuous=True,
    ),
    ColumnKind(
        "big_integer",
        f"whole numbers beyond 2^53 ({EXACT_INT:,})",
        f"{_NAME_RULES}; as integers (distinct on every record: the reason says tag it "
        "identifier if it is a key)",
        {
            **_same(
                _convert(
                    "written as text, the exact digits (a float64 would round them)",
                    "integers_written_as_text",
                )
            ),
            "csv": _write("the exact digits"),
            "parquet": Treatment(
                "write",
                "64-bit integers; beyond 64 bits text, the exact digits",
                "integers_written_as_text",
                may_convert=True,
            ),
        },
        continuous=True,
    ),
    ColumnKind(
        "float",
        "numbers",
        f"{_NAME_RULES}; 12 or more distinct values continuous, fewer ordinal",
        _same(_write("numbers")),
        continuous=True,
    ),
    ColumnKind(
        "decimal",
        "decimal numbers",
        f"{_NAME_RULES}; text rules (conservative: a key-like column is an identifier)",
        {
            **_same(_convert("decimal numbers written as text, the exact digits")),
            "csv": _write("the exact digits"),
            "parquet": _write("decimals"),
        },
    ),
    ColumnKind(
        "complex",
        "complex numbers",
        f"{_NAME_RULES}; value rules on their text: identifier when one applies, else "
        "non-confidential",
        {**_same(_convert(_AS_TEXT)), "csv": _write("text such as (1+2j)")},
        qi=False,
    ),
    ColumnKind(
        "date",
        "dates",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        _same(_write("dates")),
    ),
    ColumnKind(
        "datetime",
        "dates with times",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        _same(_write("date-times")),
    ),
    ColumnKind(
        "datetime_tz",
        "dates with a time zone",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        {
            "csv": _write("ISO date-times with their offset"),
            "excel": Treatment("refuse", "write .csv or .parquet"),
            "parquet": _write("date-times with their zone"),
            "spss": _convert(
                "written as local time (the format holds no zone)", "time_zone_dropped"
            ),
            "stata": _convert(
                "written as local time (the format holds no zone)", "time_zone_dropped"
            ),
        },
    ),
    ColumnKind(
        "time",
        "times of day",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        _same(_write("times")),
    ),
    ColumnKind(
        "timedelta",
        "durations",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        {
            **_same(_convert(_AS_TEXT)),
            "csv": _write("text such as 1 days 02:00:00"),
            "excel": _write("durations"),
            "parquet": _write("durations"),
        },
    ),
    ColumnKind(
        "period",
        "periods",
        f"{_NAME_RULES}; an ordinal quasi-identifier in time order",
        {
            **_same(_convert(_AS_TEXT)),
            "csv": _write("text such as 2020-03"),
            "parquet": _write("pandas periods"),
        },
    ),
    ColumnKind(
        "interval",
        "intervals",
        f"{_NAME_RULES}; value rules on their text: identifier when one applies, else "
        "non-confidential",
        {
            **_same(_convert(_AS_TEXT)),
            "csv": _write("text such as (1, 2]"),
            "parquet": _write("pandas intervals"),
        },
        qi=False,
    ),
    ColumnKind(
        "mixed",
        "values of several types",
        f"{_NAME_RULES}; text rules",
        {
            **_same(_write("each value as it is")),
            "parquet": _convert(
                "written as text (Parquet holds one type per column)",
                "parquet_columns_written_as_text",
            ),
            "spss": _write("text"),
            "stata": _write("text"),
        },
    ),
    ColumnKind(
        "empty",
        "no value at all",
        "non-confidential (carries no information)",
        _same(_write("empty cells")),
    ),
)
KIND_NAMES = tuple(k.name for k in KINDS)
_BY_NAME = {k.name: k for k in KINDS}
assert all(set(k.formats) == set(FORMATS) for k in KINDS), "every kind names every format"


def kind(name: str) -> ColumnKind:
    """The :class:`ColumnKind` called ``name``."""
    return _BY_NAME[name]


_NESTED_VALUES = (list, tuple, dict, set, frozenset, np.ndarray)
#: Control characters but tab, line feed and carriage return: bytes holding one are no text.
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def column_type(series: pd.Series) -> str:
    """What a column holds, in one word: "number", "boolean", "text", "category", "decimal",
    "datetime", "date", "time", "timedelta", "period", "interval", "complex", "binary",
    "nested" (lists, structs, maps: Parquet's nested types) or "mixed".

    Decides where a column may be a quasi-identifier (see
    :func:`microgui.core.table.dataset.prepare_qi`); :func:`kind_of` tells numbers and dates apart
    further for the release formats.
    """
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa  # type: ignore[import-untyped]

        arrow = dtype.pyarrow_dtype
        if pa.types.is_nested(arrow):
            return "nested"
        if (
            pa.types.is_binary(arrow)
            or pa.types.is_large_binary(arrow)
            or pa.types.is_fixed_size_binary(arrow)
        ):
            return "binary"
        if pa.types.is_duration(arrow):
            return "timedelta"
        if pa.types.is_date(arrow):
            return "date"
        if pa.types.is_time(arrow):
            return "time"
        if pa.types.is_timestamp(arrow):
            return "datetime"
        if pa.types.is_decimal(arrow):
            return "decimal"
        if pa.types.is_dictionary(arrow):
            return "category"
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "timedelta"
    if isinstance(dtype, pd.PeriodDtype):
        return "period"
    if isinstance(dtype, pd.IntervalDtype):
        return "interval"
    if pd.api.types.is_complex_dtype(dtype):
        return "complex"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    if not pd.api.types.is_object_dtype(dtype):
        return "text"
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    simple = {
        "string": "text",
        "empty": "text",
        "bytes": "binary",
        "decimal": "decimal",
        "date": "date",
        "time": "time",
        "datetime": "datetime",
        "datetime64": "datetime",
        "timedelta": "timedelta",
        "timedelta64": "timedelta",
        "period": "period",
        "interval": "interval",
        "complex": "complex",
        "boolean": "boolean",
        "integer": "number",
        "floating": "number",
        "mixed-integer-float": "number",
    }
    if inferred in simple:
        return simple[inferred]
    values = series.to_numpy(dtype=object)
    if any(isinstance(v, _NESTED_VALUES) for v in values):
        return "nested"
    if any(isinstance(v, bytes | bytearray | memoryview) for v in values):
        return "binary"
    return "mixed"


def kind_of(series: pd.Series) -> str:
    """The name of the :class:`ColumnKind` of ``series`` (one of :data:`KIND_NAMES`):
    :func:`column_type` with numbers split into integers (beyond 2^53 apart), floats; dates
    with a zone apart; a column with no value at all "empty"; bytes among other values
    "mixed"."""
    base = column_type(series)
    if base == "number":
        return _number_kind(series)
    if base == "datetime":
        dtype = series.dtype
        zone = getattr(dtype, "tz", None)
        if isinstance(dtype, pd.ArrowDtype):
            zone = getattr(dtype.pyarrow_dtype, "tz", None)
        return "datetime_tz" if zone is not None else "datetime"
    if base == "text" and bool(series.isna().all()) and len(series):
        return "empty"
    if base == "binary" and not isinstance(series.dtype, pd.ArrowDtype):
        present = [v for v in series.tolist() if not _missing(v)]
        if not all(isinstance(v, bytes | bytearray | memoryview) for v in present):
            return "mixed"  # bytes among text or numbers: each value as it is
    return base


def _number_kind(series: pd.Series) -> str:
    dtype = series.dtype
    if pd.api.types.is_integer_dtype(dtype):
        if not len(series) or bool(series.isna().all()):
            return "integer"
        low, high = series.min(), series.max()
        return "big_integer" if int(high) > EXACT_INT or int(low) < -EXACT_INT else "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    # an object column of Python numbers
    values = [v for v in series.tolist() if not _missing(v)]
    if values and all(isinstance(v, int | np.integer) for v in values):
        return "big_integer" if any(abs(int(v)) > EXACT_INT for v in values) else "integer"
    return "float"


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):  # a list or an array: a value
        return False


# --- conversions ------------------------------------------------------------------------------


def _cells(column: pd.Series, convert: Callable[[Any], str]) -> pd.Series:
    """``convert`` of every present cell as Python text; missing cells stay missing."""
    values = [None if _missing(v) else convert(v) for v in column.tolist()]
    return pd.Series(values, index=column.index, name=column.name, dtype=object)


def _binary_text(column: pd.Series) -> tuple[pd.Series, str]:
    """Binary values as text: UTF-8 when every value decodes to text without control
    characters (the text they hold), else every value in hexadecimal (one to one, and
    reversible with ``bytes.fromhex``): a NUL or an escape is no text a format should carry."""
    try:
        text = _cells(column, lambda v: bytes(v).decode("utf-8"))
    except UnicodeDecodeError:
        pass
    else:
        if not text.str.contains(_CONTROL, na=False).any():
            return text, "binary values as UTF-8 text"
    return (
        _cells(column, lambda v: bytes(v).hex()),
        "binary values as hexadecimal text (not all of them are UTF-8 text; bytes.fromhex "
        "reads them back)",
    )


def _json_default(value: object) -> object:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.hex()
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | pd.Timedelta | dt.timedelta):
        return str(value)
    return repr(value)


def json_cell(value: object) -> str:
    """One nested value as JSON text (arrays and tuples as lists, bytes as UTF-8 or hex text,
    dates in ISO form, decimals as their digits)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _pyarrow_refuses(column: pd.Series) -> bool:
    """Whether pyarrow cannot make a Parquet column of an object column's values (a map read
    back as pairs, integers beyond 64 bits). Tried here, before anything is written: pyarrow's
    own error names no column."""
    if not (isinstance(column.dtype, np.dtype) and column.dtype.kind == "O"):
        return False
    import pyarrow as pa

    try:
        pa.array(column.to_numpy(dtype=object), from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return True
    return False


def _nested_parquet(column: pd.Series) -> pd.Series | None:
    """The column unchanged when pyarrow can write it as a nested Parquet column, else None."""
    return None if _pyarrow_refuses(column) else column


#: Kinds whose pyarrow-backed columns (``ArrowDtype``, from the API) are handed to the writers
#: as pandas' own dtypes: SPSS and Stata cannot write them, and pandas cannot read back a
#: Parquet file whose metadata names them.
_UNARROWED = frozenset(
    {"binary", "nested", "category", "decimal", "date", "datetime", "datetime_tz", "time"}
    | {"timedelta"}
)


def _numpy_backed(column: pd.Series, name: str) -> pd.Series:
    """``column`` with the same values in pandas' own dtype (datetime64, category, object)
    when it is a pyarrow-backed column of one of :data:`_UNARROWED`; else ``column``."""
    if not isinstance(column.dtype, pd.ArrowDtype) or name not in _UNARROWED:
        return column
    plain: pd.Series = column.array.__arrow_array__().to_pandas()
    plain.index = column.index
    plain.name = column.name
    return plain


def _dtype_kind(dtype: Any) -> str | None:
    """The kind every column of ``dtype`` is, or None when its values decide (object,
    integers, pyarrow-backed columns)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "datetime_tz"
    if isinstance(dtype, pd.PeriodDtype):
        return "period"
    if isinstance(dtype, pd.IntervalDtype):
        return "interval"
    if isinstance(dtype, pd.StringDtype):
        return "text"  # or empty: both written as they are everywhere
    if isinstance(dtype, pd.BooleanDtype):
        return "boolean"
    if isinstance(dtype, pd.Float32Dtype | pd.Float64Dtype):
        return "float"
    if isinstance(dtype, np.dtype):
        return {"M": "datetime", "m": "timedelta", "b": "boolean", "f": "float"}.get(
            dtype.kind, "complex" if dtype.kind == "c" else None
        )
    return None


def _columns_to_read(frame: pd.DataFrame, fmt: str) -> list[int]:
    """The positions of the columns :func:`release_columns` must look at in format ``fmt``:
    those whose dtype alone leaves their kind open or names a kind the format does not write
    as it is. Decided from the dtypes, and for integer columns from one min/max over all of
    them, so that a table of 100,000 columns is not read column by column."""
    acting = {k.name for k in KINDS if k.formats[fmt].action != "write"}
    positions: list[int] = []
    integers: list[int] = []
    for position, dtype in enumerate(frame.dtypes.tolist()):
        found = _dtype_kind(dtype)
        if found is None:
            if pd.api.types.is_integer_dtype(dtype) and not isinstance(dtype, pd.ArrowDtype):
                integers.append(position)
            else:
                positions.append(position)
        elif found in acting:
            positions.append(position)
    if integers and "big_integer" in acting and len(frame):
        block = frame.iloc[:, integers]
        highs, lows = block.max().tolist(), block.min().tolist()
        for position, high, low in zip(integers, highs, lows, strict=True):
            if not _missing(high) and (int(high) > EXACT_INT or int(low) < -EXACT_INT):
                positions.append(position)
    return sorted(positions)


def release_columns(frame: pd.DataFrame, fmt: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``frame`` as format ``fmt`` (one of :data:`FORMATS`) can hold it, by each column's
    :class:`Treatment`: columns converted (one to one; the input frame is not changed) and
    listed in the returned report notes, or :class:`ExportRefused` naming the first column the
    format cannot hold and what to do, before anything is written. A frame already converted
    comes back unchanged with no notes."""
    if fmt not in FORMATS:
        raise ValueError(f"no release format {fmt!r}")
    out = frame
    notes: dict[str, Any] = {}

    def note(key: str, name: str, says: str) -> None:
        if key in _LIST_KEYS:
            notes.setdefault(key, []).append(name)
        else:
            notes.setdefault(key, {})[name] = says

    names = list(frame.columns)
    for position in _columns_to_read(frame, fmt):
        name = names[position]
        column = frame.iloc[:, position]
        what = kind(kind_of(column))
        plain = _numpy_backed(column, what.name)
        if plain is not column:  # the same values, in the dtype every writer knows
            out = frame.copy(deep=False) if out is frame else out
            out.isetitem(position, plain)  # type: ignore[arg-type]
            column = plain
        treatment = what.formats[fmt]
        if fmt == "parquet" and what.name == "big_integer" and _pyarrow_refuses(column):
            # Python integers from 2^63 up (a nominal quasi-identifier's released codes): no
            # 64-bit type pyarrow infers holds them
            treatment = _convert(
                "written as text, the exact digits (beyond 64-bit integers)",
                "integers_written_as_text",
            )
        if treatment.action == "refuse":
            raise ExportRefused(
                f"column {str(name)!r} holds {what.holds}, which {FORMAT_NAMES[fmt]} cannot "
                f"hold; {treatment.says}, or tag it identifier to leave it out"
            )
        if treatment.action == "write" and what.name != "nested":
            continue
        says = treatment.says
        new: pd.Series | None
        if what.name == "binary":
            new, says = _binary_text(column)
        elif what.name == "nested":
            new = _nested_parquet(column) if fmt == "parquet" else None
            if new is column:
                continue
            new, says = _cells(column, json_cell), "lists, structs and maps as JSON text"
        elif what.name == "datetime_tz":
            new = column.dt.tz_localize(None)
            says = f"written as local time in {column.dt.tz} (the format holds no time zone)"
        else:
            new = _cells(column, str)
        if out is frame:
            out = frame.copy(deep=False)
        out.isetitem(position, new)  # type: ignore[arg-type]
        note(treatment.report_key, str(name), says)
    return out, notes


# --- reading values for the role suggestion ---------------------------------------------------


def readable_texts(values: list[object]) -> list[str]:
    """Values of a binary, nested, complex or interval column as text for the value rules of
    the role suggestion: bytes decoded as UTF-8 (undecodable bytes replaced: what matters is
    whether they look like e-mail addresses or names), nested values as JSON, others as
    ``str``."""
    out: list[str] = []
    for value in values:
        if isinstance(value, bytes | bytearray | memoryview):
            out.append(bytes(value).decode("utf-8", errors="replace"))
        elif isinstance(value, _NESTED_VALUES):
            out.append(json_cell(value))
        else:
            out.append(str(value))
    return out


def leaf_texts(values: list[object], limit: int = 1000) -> list[str]:
    """The text leaves (strings, decoded bytes) inside nested values, up to ``limit``: what the
    value rules read in a column of lists, structs or maps (a list of e-mail addresses)."""
    out: list[str] = []
    stack = list(reversed(values))
    while stack and len(out) < limit:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, bytes | bytearray | memoryview):
            out.append(bytes(value).decode("utf-8", errors="replace"))
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, np.ndarray):
            stack.extend(reversed(value.tolist()))
        elif isinstance(value, list | tuple | set | frozenset):
            stack.extend(reversed(list(value)))
    return out


def field_names(values: list[object], limit: int = 100) -> list[str]:
    """The field names of structs (dicts) and the keys of maps (lists of pairs) in nested
    values, up to ``limit`` distinct ones: the name rule reads them."""
    found: dict[str, None] = {}
    stack = list(values)
    while stack and len(found) < limit:
        value = stack.pop()
        if isinstance(value, dict):
            found.update(dict.fromkeys(str(k) for k in value))
            stack.extend(value.values())
        elif isinstance(value, np.ndarray) and value.dtype == object:
            stack.extend(value.tolist())
        elif isinstance(value, list | tuple):
            pairs = [v for v in value if isinstance(v, tuple) and len(v) == 2]
            if pairs and len(pairs) == len(value):
                found.update(dict.fromkeys(str(k) for k, _v in pairs if isinstance(k, str)))
            stack.extend(v for v in value if isinstance(v, list | tuple | dict | np.ndarray))
    return list(found)
