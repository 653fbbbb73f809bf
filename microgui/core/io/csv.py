"""Reading CSV/TSV/TXT files.

CSV files are read **as text**: every cell stays the exact string of the file (no number parsing,
no ``NA`` detection), so columns that are not quasi-identifiers are written back byte-identical;
the core converts quasi-identifiers to numbers when a run needs them
(:func:`~microgui.core.table.dataset.numeric_column`). The encoding (UTF-8 with or without BOM, UTF-16
with BOM, else cp1252/Latin-1) and the delimiter (``,`` ``;`` tab ``|``) are detected
(:mod:`microgui.core.io.sniff`).

CSV files are parsed by ``pyarrow.csv`` (issue 17): a UTF-8 file is read in pieces of about 8,192
records, straight from its bytes (never held whole, nor decoded to one Python string), into
pandas ``str`` columns backed by Arrow. A vectorized scan of each piece finds where records end
and on which lines, with the csv module's rules; where pyarrow and the csv module could read a
file differently (a quote inside an unquoted value, text after a closing quote, ragged rows, an
unusual delimiter) the csv module reads it and names the line of any error, so the cells, lines
and messages are those of :func:`_read_csv_with_csv_module` (the reader before issue 17, kept
as the reference the tests compare against). A file that is not UTF-8 is decoded whole first.

A CSV frame also records, in ``frame.attrs``, the file's base name and the line on which each
record starts (:data:`~microgui.core.table.dataset.LINES_ATTR`), so that later messages name lines as an
editor shows them.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_columns, _read_bytes, _read_error, _zero_records
from microgui.core.io.sniff import _SNIFF_CHARS, _decode, _detect_delimiter, _preferred_delimiter
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.dataset import LINES_ATTR, SOURCE_ATTR, shared_attr

__all__: list[str] = []


_DELIMITER_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}

#: Records parsed between two progress calls while reading a CSV.
_PROGRESS_ROWS = 8192


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
    (see :data:`~microgui.core.table.dataset.LINES_ATTR`), and the records (or their number)."""

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
    """The file turned out not to be UTF-8: it is read again through
    :func:`~microgui.core.io.sniff._decode`."""


class _AskCsvModule(Exception):
    """pyarrow cannot vouch for this file (a parse error, ragged rows, a quote inside an
    unquoted value, an unusual delimiter): the csv module reads it and names any error's line."""


@dataclass(frozen=True)
class _CsvBytes:
    """A CSV's text as UTF-8 bytes: the file itself from ``start`` (after its byte-order
    marks) when it is UTF-8, read in pieces; else (``data``) its text as
    :func:`~microgui.core.io.sniff._decode` decodes it, encoded again, in memory."""

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
    """Where the UTF-8 text of ``path`` starts, refusing what
    :func:`~microgui.core.io.sniff._decode` refuses (an empty or binary file) from the first and
    last 64 KiB; a UTF-16/32 file is decoded here."""
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
