"""How a delimited text file is written: its encoding (UTF-8 with or without BOM, UTF-16/32
with BOM, else cp1252/Latin-1) and its delimiter (``,`` ``;`` tab ``|``, or an Excel ``sep=``
line), found from its first 64 KiB. Used by the CSV reader (:mod:`microgui.core.io.csv`) and by the
memory check of a CSV's width (:mod:`microgui.core.io.memory`).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_readable, _read_bytes

__all__ = ["CsvFormat", "detect_csv_format"]


_DELIMITERS: tuple[str, ...] = (",", ";", "\t", "|")

#: Characters of the file looked at to guess the delimiter (cut back to a line end).
_SNIFF_CHARS = 64 * 1024
#: Rows of that sample checked for a consistent field count.
_SNIFF_ROWS = 200

#: Signatures of binary formats someone may have renamed to .csv, for a better hint.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "an Excel .xlsx workbook (or another zip archive)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook"),
    (b"PAR1", "a Parquet file"),
    (b"$FL2", "an SPSS .sav file"),
    (b"$FL3", "a compressed SPSS .zsav file"),
    (b"<stata_dta>", "a Stata .dta file"),
)


@dataclass(frozen=True)
class CsvFormat:
    """How a delimited text file is encoded: the codec name and the field delimiter."""

    encoding: str
    delimiter: str
    #: The file starts with a byte-order mark (stripped when read).
    bom: bool = False


def detect_csv_format(path: str | os.PathLike[str]) -> CsvFormat:
    """Detect the encoding and delimiter of a CSV/TSV/TXT file (as
    :func:`~microgui.core.io.read_table` does).

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
