"""Pseudonyms instead of deleted identifiers (issue 18, item 4; ARX #110/#449).

An identifier column is normally left out of a release. With ``--pseudonymize COL`` (the API's
``pseudonymize=``) it is released instead as *pseudonyms*: each distinct value of the column gets
a random token ``PSN-`` + 16 hexadecimal digits drawn from the operating system's cryptographic
generator (:mod:`secrets`), the same token for every record holding that value (so the records
of one person stay linked); missing cells (empty, ``NA``, ``N/A``, ``NaN``, ``.``: the app's
policy, :func:`~microgui.core.table.dataset.is_missing`) stay missing, written empty. A token is drawn, never computed from the
value: no hash, no seed, nothing of the original can be derived from it, and a second release of
the same table gets other tokens (so two releases cannot be linked through them either; a
release with pseudonyms is therefore not byte-reproducible).

The **key** (original value -> pseudonym) is the only way back; it is written only on request
(``--pseudonym-key FILE``), as a file of its own (CSV: column, original, pseudonym), with the
release and atomically, never into the report. The report names the pseudonymised columns and
how many distinct values each had (never a value), the key file's name if one was written, and
warns that pseudonymised data are still personal data (GDPR Art. 4(5), Recital 26): whoever holds
the key, or can link the released records otherwise, can re-identify them.

**The key is exact** (issue 27; :data:`KEY_FORMAT`, written by :func:`key_writer`, the one writer
of the command line, the Python API and the app). A key file is read by a program, not a
spreadsheet: every cell is written as it is, UTF-8, RFC 4180 quoting (a cell holding a comma, a
quote, a line break or a carriage return is quoted), never the formula rule's leading ``'``
(``+44 20 7946 0001`` and ``'+44 20 7946 0001`` are two people: the rule made them one original
with two pseudonyms). Read it as text, e.g. ``pandas.read_csv(path, dtype=str,
keep_default_na=False)`` or Python's :mod:`csv`. An original is its text in the key
(:func:`original_text`): text as it is (no trimming, no Unicode normalization, line breaks
kept), a number by its value (1, 1.0 and ``numpy.int64(1)`` are one original, ``1``; 2.5 is
``2.5``), a date or time as ``str()`` writes it, bytes as the UTF-8 text they hold (else
``0x`` and their hexadecimal digits), a list, map or struct as JSON. So one original has one
row and one pseudonym, and two distinct originals never share a row: a column holding two
different kinds of value written alike (the number 1 and the text "1") is refused, naming the
column, since no key could tell them apart. Missing cells (the app's policy above) are no
originals.

The release check (:func:`microgui.core.release.check.check_export`) refuses an identifier column in a
release; a pseudonymised column passes only in the form made here: every cell a token of this
pattern or missing, none equal to a value of the original column.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import secrets
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused
from microgui.core.io import EncodedWriter, csv_writer
from microgui.core.release.formats import is_missing_value
from microgui.core.table.dataset import is_missing

__all__ = [
    "KEY_FORMAT",
    "PSEUDONYM_PATTERN",
    "PSEUDONYM_WARNING",
    "pseudonymize",
    "check_pseudonyms",
    "key_frame",
    "key_writer",
    "original_text",
]

#: Every pseudonym: ``PSN-`` and 16 lower-case hexadecimal digits (64 random bits).
PSEUDONYM_PATTERN = re.compile(r"PSN-[0-9a-f]{16}")
PSEUDONYM_WARNING = (
    "pseudonymised data are still personal data (GDPR Art. 4(5), Recital 26): whoever holds the "
    "key file, or can link the released records to other data, can re-identify people; keep the "
    "key apart from the release and release the table only as personal data"
)


#: How the key file is written and read (the report's ``pseudonym_key_format``, the README).
KEY_FORMAT = (
    "CSV, UTF-8, columns column, original, pseudonym; every cell written exactly as it is "
    "(RFC 4180 quoting, no formula prefix: read it with a program, as text, e.g. pandas "
    "read_csv(dtype=str, keep_default_na=False)); numbers by value (1.0 as 1), dates as "
    "written, bytes as their UTF-8 text or 0x + hexadecimal digits, lists and maps as JSON"
)


def pseudonymize(values: pd.Series) -> tuple[pd.Series, dict[str, str]]:
    """(the column as pseudonyms, {original as the key writes it: pseudonym}). Each distinct
    original (:func:`original_text`) gets its own random token; missing cells stay missing
    (None). Refuses (:class:`ExportRefused`) a column where two kinds of value are written
    alike (the number 1 and the text "1"): one key row cannot stand for both."""
    # the policy of the whole app: empty, NA, N/A, NaN, nan, "."
    missing = is_missing(values)
    texts = _original_texts(values, missing, str(values.name))
    originals = {t for t in texts if t is not None}
    key = dict(zip(sorted(originals), _tokens(len(originals), originals), strict=True))
    out = [None if t is None else key[t] for t in texts]
    return pd.Series(out, index=values.index, name=values.name, dtype=object), key


def _tokens(count: int, originals: set[str]) -> list[str]:
    """``count`` distinct tokens, none an original, drawn at once (one call to the OS's
    generator: a million in a fraction of the time of one call each)."""
    digits = secrets.token_bytes(8 * count).hex()
    tokens = [f"PSN-{digits[i : i + 16]}" for i in range(0, 16 * count, 16)]
    used: set[str] = set()
    for i, token in enumerate(tokens):
        while token in used or token in originals:  # 64 bits: all but never
            token = "PSN-" + secrets.token_hex(8)
        tokens[i] = token
        used.add(token)
    return tokens


def _original_texts(values: pd.Series, missing: np.ndarray, name: str) -> list[str | None]:
    """Each cell's :func:`original_text` (None when missing); refuses two kinds written alike.
    A column of one type is read once per distinct value; a column of Python objects cell by
    cell (a hash would merge 1, 1.0 and True, which are not one original)."""
    one_type = values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) == "string"
    if one_type:
        try:
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
        except TypeError:  # unhashable cells
            one_type = False
    if one_type:
        texts = _number_texts(np.asarray(uniques))
        texts = texts if texts is not None else [original_text(v) for v in uniques.tolist()]
        # two values written alike (categories 1 and "1"): judged cell by cell below
        if len(set(texts)) == len(texts):
            return [
                None if gone or code < 0 else texts[code]
                for code, gone in zip(codes.tolist(), missing.tolist(), strict=True)
            ]
    kinds: dict[str, tuple[str, int]] = {}
    out: list[str | None] = []
    for row, (value, gone) in enumerate(zip(values.tolist(), missing, strict=True)):
        if gone:
            out.append(None)
            continue
        kind, text = _kind_and_text(value)
        seen = kinds.setdefault(text, (kind, row))
        if seen[0] != kind:
            raise ExportRefused(
                f"column {name!r} (pseudonymised): records {seen[1] + 1:,} and {row + 1:,} hold "
                f"a {seen[0]} and a {kind} written alike, which one pseudonym key row cannot "
                "tell apart; make the column one type in the input (all text, say)"
            )
        out.append(text)
    return out


def _number_texts(numbers: np.ndarray) -> list[str] | None:
    """:func:`original_text` of each of an array of numbers, by numpy (a million distinct
    values: a fraction of the time of one call each); None for any other array."""
    if numbers.dtype.kind in "iu":
        return [str(v) for v in numbers.tolist()]
    if numbers.dtype.kind != "f":
        return None
    values = numbers.astype(np.float64)
    whole = np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < 2.0**62)
    texts = values.astype(object)
    texts[whole] = values[whole].astype(np.int64).astype(str).astype(object)
    rest = np.flatnonzero(~whole)
    for i in rest.tolist():
        texts[i] = original_text(float(values[i]))
    return [str(t) for t in texts.tolist()]


def check_pseudonyms(released: pd.Series, original: pd.Series) -> None:
    """Refuse (:class:`ExportRefused`) a pseudonymised column that is not in the form
    :func:`pseudonymize` makes: a cell that is no token, or a token equal to an original value."""
    name = str(released.name)
    originals = {original_text(v) for v in original.tolist() if not is_missing_value(v)}
    for row, value in enumerate(released.tolist()):
        if is_missing_value(value):
            continue
        if not isinstance(value, str) or not PSEUDONYM_PATTERN.fullmatch(value):
            raise ExportRefused(
                f"column {name!r} (identifier) is to be released as pseudonyms, but record "
                f"{row + 1:,} holds something else; nothing was written"
            )
        if value in originals:
            raise ExportRefused(
                f"column {name!r}: a pseudonym equals an original value; nothing was written"
            )


def key_frame(keys: dict[str, dict[str, str]], columns: Sequence[str]) -> pd.DataFrame:
    """The key file's table: one row per (column, original value), in column order."""
    rows = [
        (column, original, token)
        for column in columns
        for original, token in keys.get(column, {}).items()
    ]
    return pd.DataFrame(rows, columns=["column", "original", "pseudonym"], dtype=object)


def key_writer(keys: Mapping[str, Mapping[str, str]], columns: Sequence[str]) -> EncodedWriter:
    """The writer of the key file (:data:`KEY_FORMAT`) for :func:`~microgui.core.io.
    write_files_atomic`: the originals exactly as they are (no formula rule), readable by its
    owner only. The one key writer of the command line, the API and the app (through
    :func:`microgui.core.release.check.export_run`)."""
    frame = key_frame({c: dict(keys.get(c, {})) for c in columns}, columns)
    for column in columns:
        if any("\x00" in original for original in keys.get(column, {})):
            raise ExportRefused(
                f"column {column!r} (pseudonymised): a value holds a NUL character, which the "
                "pseudonym key (a CSV file) cannot hold; remove it in the input, or release "
                "without the key"
            )
    # the key re-identifies every record: readable by its owner only
    return EncodedWriter(csv_writer(frame), "utf-8", private=True)


def original_text(value: object) -> str:
    """An original as the key file writes it (see the module docstring): text as it is, a
    number by its value (3.0 as 3), a date as ``str()`` writes it, bytes as their UTF-8 text
    (else ``0x`` + hexadecimal digits), a list or map as JSON."""
    return _kind_and_text(value)[1]


def _kind_and_text(value: object) -> tuple[str, str]:
    if isinstance(value, str):
        return "text", value
    if isinstance(value, (bool, np.bool_)):
        return "boolean", str(bool(value))
    if isinstance(value, (int, np.integer)):
        return "number", str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return "number", str(int(number)) if number.is_integer() else repr(number)
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value == value.to_integral_value():
            return "number", str(int(value))
        return "number", format(value.normalize(), "f") if value.is_finite() else str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return "bytes", raw.decode("utf-8")
        except UnicodeDecodeError:
            return "bytes", "0x" + raw.hex()
    if isinstance(value, (dt.datetime, np.datetime64)):
        return "date-time", str(pd.Timestamp(value))
    if isinstance(value, dt.date):
        return "date", str(value)
    if isinstance(value, dt.time):
        return "time", str(value)
    if isinstance(value, (dt.timedelta, np.timedelta64)):
        return "duration", str(pd.Timedelta(value))
    if isinstance(value, (list, tuple, dict, np.ndarray)):
        return "list or map", json.dumps(_plain(value), ensure_ascii=False, default=str)
    return "value", str(value)


def _plain(value: object) -> object:
    """A nested value (Parquet list, map, struct) as JSON takes it."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return original_text(value)
    return value
