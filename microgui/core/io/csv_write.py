"""Writing a table as CSV: the cells as they were read (minimal quoting, numbers as pandas
writes them, formatted once per distinct value), a carriage return quoted, a NUL character refused;
written atomically (:mod:`microgui.core.io.atomic`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused
from microgui.core.io.atomic import ProtectedPaths, _atomic_write

__all__ = ["CSV_CHUNK_ROWS", "write_csv_atomic", "csv_writer", "text_cells"]


#: Rows per ``to_csv`` call when a table whose text holds a carriage return is written.
CSV_CHUNK_ROWS = 50_000

_TEXT_KINDS = ("string", "mixed", "mixed-integer")


def write_csv_atomic(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
) -> None:
    """Write ``frame`` as CSV (UTF-8, ``,``, ``\\n`` line ends, no index), atomically.

    Text cells are written as they are (minimal quoting), so text read by
    :func:`~microgui.core.io.read_table` from a standard-quoted file comes back byte-identical;
    floats use their round-trip repr.
    A cell or column name holding a carriage return is quoted too (pandas and the ``csv``
    module leave a lone CR unquoted when lines end in ``\\n``, and every reader then splits the
    record there), so the file reads back to exactly ``frame``.

    Raises
    ------
    ExportRefused
        ``path`` is the same file as one of ``protect_from`` (a path or a collection of paths),
        or not a file that may be replaced (see :func:`~microgui.core.io.check_write_targets`),
        or a text cell or column name holds a NUL character, or the file cannot be written
        (missing or read-only folder, disk full); nothing is left behind.
    """

    _atomic_write(path, csv_writer(frame), protect_from=protect_from)


def csv_writer(frame: pd.DataFrame, rows: np.ndarray | None = None) -> Callable[[IO[str]], None]:
    """The function writing ``frame`` as :func:`write_csv_atomic` does (for
    :func:`~microgui.core.io.write_files_atomic`).

    ``rows`` (a permutation of the records' positions, issue 31's random record order): the
    file holds ``frame.iloc[rows]``, byte for byte; a table of numbers only is written by
    blocks of the permutation from its per-column codes, never as a reordered copy of the
    whole table (issue 33: that copy was the 1,000,000-record command's peak).

    The text is checked here, before any file is opened: a NUL character is refused
    (:class:`ExportRefused` naming the column and record), since most readers, microgui's
    included, take a file holding one for binary.
    """
    if rows is not None and not _all_numbers(frame):
        frame = _reordered(frame, rows)
        rows = None
    texts = {i: t for i, t in enumerate(_text_columns(frame)) if t is not None}
    names = [c for c in frame.columns if isinstance(c, str)]
    _refuse_nul(frame, texts, names)
    with_cr = {i: t for i, t in texts.items() if _holds(t, "\r")}
    if not with_cr and not any("\r" in c for c in names):

        def write(handle: IO[str]) -> None:
            _write_csv(frame, handle, rows)

        return write
    if rows is not None:  # rare (a carriage return in a name): written from a reordered copy
        frame = _reordered(frame, rows)
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


def _all_numbers(frame: pd.DataFrame) -> bool:
    """Whether :func:`_write_csv` joins ``frame``'s lines itself: two or more columns, every
    one of 8-byte numpy numbers (the columns :func:`_number_codes` codes without a copy)."""
    return frame.shape[1] >= 2 and all(
        isinstance(t, np.dtype) and t.kind in "iuf" and t.itemsize == 8 for t in frame.dtypes
    )


def _reordered(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame``'s records in the order ``rows``, numbered from 0, its ``attrs`` kept."""
    out = frame.iloc[rows].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def _write_csv(frame: pd.DataFrame, handle: IO[str], rows: np.ndarray | None = None) -> None:
    """``frame.to_csv(handle, index=False, lineterminator="\\n")``, byte for byte, faster: each
    column of numbers is formatted once per distinct value (a protected column repeats a
    group's value k times or more; :func:`_number_codes`), and when every column holds numbers
    the lines are joined here, as pandas' writer would write them (numbers never need quotes),
    a fifth of its time (issue 17: ``microgui protect`` of 50,000 records in <= 1.5 s), piece by
    piece from each record's code into its column's distinct texts (issue 33: a Python string
    per distinct value of every column took 240 MB at 1,000,000 x 10; ASCII bytes take 50)."""
    cells = [_number_codes(series) for _, series in frame.items()]  # not .iloc: a third the work
    if rows is not None and not (len(cells) >= 2 and all(c is not None for c in cells)):
        _write_csv(_reordered(frame, rows), handle)
        return
    if len(cells) >= 2 and len(frame) and all(c is not None for c in cells):
        frame.iloc[:0].to_csv(handle, index=False, lineterminator="\n")  # pandas' header
        _write_joined([c for c in cells if c is not None], len(frame), handle, rows)
        return
    # One column (its empty cells are quoted) or some text: pandas writes, numbers preformatted
    formatted = frame
    for position, found in enumerate(cells):
        if found is not None:
            if formatted is frame:
                formatted = frame.copy(deep=False)
            codes, texts = found
            cells_text = texts[codes].astype(str).astype(object)
            column = pd.Series(cells_text, index=frame.index, dtype=object)
            formatted.isetitem(position, column)  # type: ignore[arg-type]
    formatted.to_csv(handle, index=False, lineterminator="\n", chunksize=_to_csv_rows(frame))


def _number_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """A column of numbers as :func:`_number_texts` writes it, held as (codes, texts): each
    record's code into the column's distinct texts, ASCII bytes (``b""`` for a missing cell);
    None for any other column."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf" and dtype.itemsize == 8:
        values = series.to_numpy()
        # hashed, not sorted: a third of np.unique's time on a million cells (issue 17)
        inverse, distinct = pd.factorize(values.view(np.int64) if dtype.kind == "f" else values)
        numbers = np.asarray(distinct).view(dtype)
        if dtype.kind == "f":
            # Python's shortest round-trip repr: numpy's astype(str) of float64, character for
            # character (tested on every exponent), in 0.6 of its time (issue 33: formatting was
            # 0.9 s of the 100,000 x 10 command)
            texts = np.array(list(map(float.__repr__, numbers.tolist())), dtype="S")
            texts[np.isnan(numbers)] = b""
        else:
            texts = numbers.astype(str).astype("S")
        codes = inverse.astype(np.int32) if len(numbers) < 2**31 else inverse
        return codes, texts
    written = _number_texts(series)
    if written is None:
        return None
    return np.arange(len(written)), np.array(written.tolist(), dtype="S")


#: Records joined into lines at a time by :func:`_write_joined` (a block of them padded: about
#: 1 MB for 10 columns of floats).
_JOINED_ROWS = 4096


def _write_joined(
    columns: Sequence[tuple[np.ndarray, np.ndarray]],
    n: int,
    handle: IO[str],
    rows: np.ndarray | None,
) -> None:
    """The lines of ``n`` records whose cells are ``columns`` (each a column's codes into its
    distinct texts, :func:`_number_codes`), in the order ``rows`` (None: as they are), joined
    by ``,`` and ending in ``\\n``. A block of records at a time is laid out as bytes with each
    cell padded with NUL bytes to its column's widest text and followed by its separator, and
    the padding is dropped: a number's text never holds a NUL, so what is left is each line's
    texts and separators in order, as joining them would give (issue 33: at 100,000 x 10,
    20,000 distinct values a column, joining a bytes object per cell took 0.34 s, the padded
    layout 0.21 s; best of 7 on a loaded 2-core machine)."""
    widths = [max(texts.dtype.itemsize, 1) for _, texts in columns]
    starts = np.cumsum([0] + [w + 1 for w in widths])
    line = int(starts[-1])
    for first in range(0, n, _JOINED_ROWS):
        stop = min(first + _JOINED_ROWS, n)
        block = np.arange(first, stop) if rows is None else rows[first:stop]
        m = len(block)
        padded = np.zeros((m, line), dtype=np.uint8)
        for j, (codes, texts) in enumerate(columns):
            at, width = int(starts[j]), widths[j]
            if texts.dtype.itemsize:
                cells = texts[codes[block]].view(np.uint8).reshape(m, texts.dtype.itemsize)
                padded[:, at : at + texts.dtype.itemsize] = cells
            padded[:, at + width] = ord(",") if j < len(columns) - 1 else ord("\n")
        handle.write(padded[padded != 0].tobytes().decode("ascii"))


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
    :func:`~microgui.core.table.numbers.whole_numbers_written_plain`) by ``repr`` and ``str``, as the
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
