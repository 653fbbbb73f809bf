"""Reading SPSS (``.sav``/``.zsav``) and Stata (``.dta``) files (pyreadstat).

SPSS and Stata value labels are applied, so the table shows the labels; the code -> label mapping
is kept in ``Dataset.value_labels``. A labelled numeric variable becomes a pandas Categorical whose
categories follow the numeric code order: ordered (hence suggested ordinal with that order) unless
SPSS declares the variable nominal. A numeric variable whose labels only mark a few special codes
among many unlabelled values (``-99 = "refused"`` in an income column) stays numeric.

User-missing values (SPSS ranges, Stata's ``.a`` to ``.z``) are made missing, their codes kept in
``frame.attrs`` (:data:`STAT_ATTR`) for a release in the same format.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_columns, _zero_records
from microgui.core.io.extensions import SPSS_EXTENSIONS
from microgui.core.table.dataset import CONTINUOUS_MIN_DISTINCT, shared_attr

__all__ = ["STAT_ATTR", "MissingCodes"]


#: ``DataFrame.attrs`` key of an SPSS/Stata file's labels, kept for its release (issue 18):
#: {"format", "column_labels" {column: label}, "value_labels" {column: {code: label}}, "codes"
#: {column: {text shown: code}}, "measures" {column: nominal/ordinal/scale/unknown}}.
STAT_ATTR = "microgui.stat_labels"


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
