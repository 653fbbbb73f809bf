"""A dataset: a table plus a :class:`RoleMap`, and its numeric view for the methods.

Missing values policy (one rule, everywhere): a quasi-identifier may not contain missing values
(empty cells, ``NA``, ``NaN``, ``.``-style missing codes read as missing). A run on such a table is
refused with a message naming the column, the number of missing cells and the first rows, and
telling the user to fill or drop those records (or to re-tag the column). Microaggregating around a
hole would either put a silent NaN into the release or invent a value, and both are worse than an
explicit decision by the statistician. Missing values in columns that are not quasi-identifiers
pass through unchanged.

Where a message points at records, it names them as a user finds them: for a table read from a
text file (:func:`microgui.core.io.read_table` records where each record starts, see
:data:`LINES_ATTR`) by the **line of the file** (the header is line 1, so the first record is
usually line 2), else by the 1-based data row.

Decimal commas: a continuous column whose every value is written like ``72,5`` (digits, one comma,
digits; no ``.`` anywhere in the column) is read with the comma as the decimal separator, the way a
``;``-separated file from a French or German spreadsheet writes numbers. When every such value has
exactly three digits after the comma (``1,234``) the column is ambiguous (a thousands separator
reads the same) and the run is refused with that explanation instead of guessing.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.table.column_types import (
    column_type,
    field_names,
    kind_of,
    leaf_texts,
    readable_texts,
)
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

__all__ = [
    "Dataset",
    "QIMatrix",
    "suggest_roles",
    "explain_roles",
    "RoleSuggestion",
    "prepare_qi",
    "rewrite_continuous",
    "numeric_column",
    "continuous_as_numbers",
    "row_list",
    "rows_text",
    "file_line",
    "LINES_ATTR",
    "LINE_WORD_ATTR",
    "SOURCE_ATTR",
    "survey_weights",
    "MAX_ABS_VALUE",
    "MISSING_CATEGORY",
    "is_missing",
    "blank_texts",
    "MISSING_TEXTS",
    "MISSING_PIECE_ROWS",
    "check_frame",
    "column_type",
    "category_values",
    "shared_attr",
    "check_width",
    "MAX_COLUMNS",
]

#: A numeric column with at least this many distinct values is suggested as continuous.
CONTINUOUS_MIN_DISTINCT = 12


#: ``frame.attrs`` key set by the text readers: ``(first_line, ((row, line), ...))``, where the
#: record at 0-based ``row`` starts on ``line`` of the file and the following records on the next
#: lines, until the next pair (blank lines and values spanning lines add pairs). Kept compact
#: because pandas copies ``attrs`` into every derived frame.
LINES_ATTR = "microgui_lines"
#: ``frame.attrs`` key: the base name of the file the frame was read from.
SOURCE_ATTR = "microgui_source"
#: ``frame.attrs`` key: what the numbers of LINES_ATTR count, "line" (text files, the default)
#: or "row" (a spreadsheet's own row numbers, the header's row included).
LINE_WORD_ATTR = "microgui_line_word"
#: The largest magnitude a continuous quasi-identifier may hold. Its square (1e200) and sums of
#: squares over any realistic number of records stay finite in float64 (which overflows near
#: 1.8e308): larger values would turn the z-scores, SSE and SST into NaN or infinity.
MAX_ABS_VALUE = 1e100
#: The category that the missing cells of a quasi-identifier tagged ``missing_as_category``
#: form (:class:`~microgui.core.table.roles.ColumnSpec`): released as an empty cell.
MISSING_CATEGORY = ""
#: What :func:`column_type` calls columns that can be no quasi-identifier of any kind.
_NOT_QI_TYPES = {"nested": "lists, structs or maps", "binary": "binary values (bytes)"}
#: ... and those that can be no continuous quasi-identifier (no arithmetic mean, or no order).
_NOT_CONTINUOUS_TYPES = {
    "datetime": "dates with times",
    "date": "dates",
    "time": "times of day",
    "timedelta": "durations",
    "period": "periods",
    "interval": "intervals",
    "complex": "complex numbers",
}
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+(?:,(\d+))?")


class _SharedDict(dict[str, Any]):
    """A ``frame.attrs`` value pandas shares with every derived frame instead of copying it."""

    def __deepcopy__(self, memo: dict[int, object]) -> _SharedDict:
        return self


class _SharedTuple(tuple[Any, ...]):
    """A ``frame.attrs`` value pandas shares with every derived frame instead of copying it."""

    def __deepcopy__(self, memo: dict[int, object]) -> _SharedTuple:
        return self


_Attr = TypeVar("_Attr", dict[str, Any], tuple[Any, ...])


def shared_attr(value: _Attr) -> _Attr:
    """``value`` as a ``frame.attrs`` entry that pandas never copies (issue 27).

    pandas deep-copies a frame's ``attrs`` into every Series and frame derived from it, so each
    ``frame.iloc[:, i]`` of a loop over the columns copied them: an SPSS file's user-missing
    rows of every column (:data:`microgui.core.io.STAT_ATTR`) were copied once per column, work
    growing with the square of the number of columns (400 variables of 20,000 records: 13 s to
    visit the columns once). The readers' attrs are written once and only read afterwards (a
    writer that changes one builds a new dict), so sharing them is safe.
    """
    if isinstance(value, dict):
        return cast(_Attr, _SharedDict(value))
    return cast(_Attr, _SharedTuple(value))


#: The most columns microgui works on in one table (read from a file, given to the API). Real
#: microdata is far narrower (a census or labour-force file has tens to hundreds of variables,
#: a large SPSS survey a few thousand);
#: Excel holds at most 16,384 columns and Stata/MP at most 120,000 variables, so every table
#: those tools make fits. A wider file (300,000 columns of a genomic or wide-format export) is
#: refused from its header or metadata before any cell is read: each column costs a pandas
#: column, a role and a line of every report, and no microaggregation needs that many.
MAX_COLUMNS = 120_000


def check_width(what: str, columns: int) -> None:
    """Refuse a table of more than :data:`MAX_COLUMNS` columns in one line naming ``what`` (a
    quoted file name, or "the frame given to ..."): every reader from the file's header or
    metadata before any cell is read, the partitioned reader from the Parquet footers, the API
    and the app from the frame (:func:`check_frame`)."""
    if columns > MAX_COLUMNS:
        raise InvalidInput(
            f"{what} has {columns:,} columns, more than microgui works on in one table "
            f"({MAX_COLUMNS:,}); keep the columns to protect and release (quasi-identifiers, "
            "identifiers, the others to keep) in a new table and use that"
        )


def row_list(rows: np.ndarray, limit: int = 5) -> str:
    """Human row numbers (1-based data rows) for a message: '3, 17, 20 and 4 more'."""
    shown = ", ".join(str(int(r) + 1) for r in rows[:limit])
    more = len(rows) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def file_line(frame: pd.DataFrame | pd.Series, row: int) -> int | None:
    """The line of the file where the record at 0-based ``row`` starts, when known."""
    info = frame.attrs.get(LINES_ATTR)
    if not info:
        return None
    breaks = info[1]
    i = bisect_right([r for r, _ in breaks], row) - 1
    start_row, start_line = breaks[i] if i >= 0 else (0, info[0])
    return int(start_line + row - start_row)


def rows_text(frame: pd.DataFrame | pd.Series, rows: np.ndarray, limit: int = 5) -> str:
    """Where records are, for a message: 'line 3, 5' (lines of the file as an editor shows them)
    for a table read from a text file, else 'row 2, 4' (1-based data rows). The caller names the
    file."""
    rows = np.asarray(rows)
    if frame.attrs.get(LINES_ATTR):
        lines = ", ".join(str(file_line(frame, int(r))) for r in rows[:limit])
        more = len(rows) - limit
        word = frame.attrs.get(LINE_WORD_ATTR, "line")
        return f"{word} {lines}" + (f" and {more} more" if more > 0 else "")
    return f"row {row_list(rows, limit)}"


def check_frame(frame: object, what: str = "the table") -> pd.DataFrame:
    """``frame`` when microgui can work on it, else :class:`InvalidInput` saying what to change:
    a pandas DataFrame whose column names are unique text (not numbers as from
    ``pd.read_csv(header=None)``, not a MultiIndex)."""
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInput(
            f"{what} must be a pandas DataFrame, not a {type(frame).__name__}; wrap it first, "
            "e.g. pd.DataFrame(values, columns=[...])"
        )
    columns = frame.columns
    check_width(what, len(columns))
    if isinstance(columns, pd.MultiIndex):
        raise InvalidInput(
            f"{what} has {columns.nlevels}-level (MultiIndex) column names such as "
            f"{columns[0]!r}; flatten them to text first, e.g. "
            "df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    for position, name in enumerate(columns):
        if not isinstance(name, str):
            raise InvalidInput(
                f"column {position + 1} of {what} is named {name!r} (type {type(name).__name__}); "
                "column names must be text (a frame read with header=None has numbered "
                "columns): name them, e.g. df.columns = df.columns.astype(str)"
            )
    if not columns.is_unique:
        dup = columns[columns.duplicated()][0]
        places = [str(i + 1) for i, c in enumerate(columns) if c == dup]
        raise InvalidInput(
            f"{what} has {len(places)} columns named {dup!r} (columns {', '.join(places)}); "
            "rename them so that every column has its own name"
        )
    return frame


def _decimal_comma(text: pd.Series) -> tuple[np.ndarray | None, bool]:
    """(values, ambiguous): the stripped text column read with a decimal comma (see the module
    docstring), or None; ``ambiguous`` when it would parse but every comma has three digits after
    it (a thousands separator reads the same)."""
    present = text.dropna()
    present = present[present != ""]
    if not len(present):
        return None, False
    decimals: set[int] = set()
    for value in pd.unique(present.to_numpy(dtype=object)):
        match = _DECIMAL_COMMA.fullmatch(str(value))
        if match is None:
            return None, False
        if match.group(1) is not None:
            decimals.add(len(match.group(1)))
    if not decimals:
        return None, False
    if decimals == {3}:
        return None, True
    values = pd.to_numeric(text.str.replace(",", ".", regex=False), errors="coerce")
    return values.to_numpy(dtype=np.float64, na_value=np.nan), False


def _all_numbers(values: list[object]) -> list[float] | None:
    """The values as floats when every one is a number as ``pd.to_numeric`` reads it, else None.

    Plain decimal text is converted in Python (``pd.to_numeric`` per column costs a millisecond,
    which a 5,000-column table multiplies); the rest (``inf``, ``1_000``...) goes to pandas."""
    out: list[float] = []
    odd: list[str] = []
    for v in values:
        s = str(v)
        if _NUMBER.fullmatch(s):
            out.append(float(s))
        else:
            odd.append(s.strip())
    if odd:
        converted = pd.to_numeric(pd.Series(odd, dtype=object), errors="coerce")
        if bool(converted.isna().any()):
            return None
        out.extend(float(x) for x in converted.tolist())
    return out


@dataclass(frozen=True)
class Dataset:
    """A table and the role/kind of each of its columns. Treated as immutable.

    ``source`` is the file the table was read from (None for a DataFrame given in Python).
    ``role_reasons`` says, for the columns whose roles were suggested (:func:`explain_roles`),
    why; the app shows it beside each column. ``inputs`` are the other files read to make it
    (a command's roles file, hierarchy files, project file): with ``source`` and the roles'
    own file they are :attr:`read_files`, which no writer may replace.
    """

    frame: pd.DataFrame
    roles: RoleMap
    source: Path | None = None
    value_labels: dict[str, dict[object, str]] = field(default_factory=dict)
    role_reasons: Mapping[str, str] = field(default_factory=dict)
    inputs: tuple[Path, ...] = ()

    @property
    def read_files(self) -> list[Path]:
        """Every file read to make this dataset: the data file first, then the roles file
        (:attr:`RoleMap.source`) and :attr:`inputs`. Writers refuse each of them as a target
        (by inode), so a new kind of input is protected by being carried here."""
        found = [self.source, self.roles.source, *self.inputs]
        return list(dict.fromkeys(Path(p) for p in found if p is not None))

    def __post_init__(self) -> None:
        check_frame(self.frame)
        cols = set(self.frame.columns)
        missing = [c for c in self.roles if c not in cols]
        if missing:
            raise InvalidRoles(f"column {missing[0]!r} is tagged but not in the table")

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, roles: RoleMap | None = None, source: Path | None = None
    ) -> Dataset:
        """Wrap a frame; columns without a spec get the suggested one (and its reason)."""
        explained = explain_roles(frame)
        suggested = RoleMap.from_dict({s.name: s.spec for s in explained})
        reasons = {s.name: s.reason for s in explained if roles is None or s.name not in roles}
        if roles is not None:
            merged = {c: (roles[c] if c in roles else suggested[c]) for c in suggested}
            roles = RoleMap.from_dict(merged)
        return cls(frame=frame, roles=roles or suggested, source=source, role_reasons=reasons)

    def with_roles(self, roles: RoleMap) -> Dataset:
        return Dataset(
            self.frame, roles, self.source, self.value_labels, self.role_reasons, self._kept()
        )

    def _kept(self) -> tuple[Path, ...]:
        """:attr:`inputs` for a copy with other roles: the roles file read stays an input."""
        kept = [*self.inputs, *([self.roles.source] if self.roles.source is not None else [])]
        return tuple(dict.fromkeys(kept))

    def with_spec(self, column: str, spec: ColumnSpec) -> Dataset:
        return self.with_roles(self.roles.replace(column, spec))

    def with_suggested_roles(self) -> Dataset:
        """Every column tagged as :func:`explain_roles` suggests, with its reason."""
        explained = explain_roles(self.frame)
        roles = RoleMap.from_dict({s.name: s.spec for s in explained})
        reasons = {s.name: s.reason for s in explained}
        return Dataset(self.frame, roles, self.source, self.value_labels, reasons, self._kept())

    def edited_roles(
        self,
        column: str,
        *,
        role: AttributeRole | None = None,
        kind: AttributeKind | None = None,
        order: Sequence[str] | None = None,
        missing_as_category: bool | None = None,
    ) -> RoleMap:
        """The roles with one column's tag changed (the roles editor's one rule book).

        ``role``: kind and order are kept for when the column is a quasi-identifier again.
        ``kind``: a column made ordinal keeps its order or gets :func:`category_values` (its
        values in their natural order); the same kind returns the roles unchanged (the same
        object). ``order`` (lowest first) makes the column ordinal; a category listed twice is
        refused with :class:`InvalidRoles`. ``role`` weight: the column's values are checked
        (:func:`survey_weights`) and the column tagged weight before, if another, becomes
        non-confidential (one survey weight per table).
        """
        spec = self.roles[column]
        roles = self.roles
        if role is not None:
            spec = spec.with_role(AttributeRole(role))
            if spec.role is AttributeRole.WEIGHT:
                survey_weights(self.frame, column)  # refused here, naming the rows
                for other in roles.columns_with(AttributeRole.WEIGHT):
                    if other != column:
                        roles = roles.replace(
                            other, roles[other].with_role(AttributeRole.NON_CONFIDENTIAL)
                        )
            if spec.role is AttributeRole.HOUSEHOLD:  # one household id per table
                for other in roles.columns_with(AttributeRole.HOUSEHOLD):
                    if other != column:
                        roles = roles.replace(
                            other, roles[other].with_role(AttributeRole.NON_CONFIDENTIAL)
                        )
        if kind is not None:
            kind = AttributeKind(kind)
            if kind is spec.kind:
                return self.roles
            values = None
            if kind is AttributeKind.ORDINAL:
                values = list(spec.order) if spec.order else category_values(self.frame[column])
            spec = spec.with_kind(kind, values)
        if order is not None:
            if len(set(order)) != len(order):
                raise InvalidRoles(f"the order of {column!r} lists a category twice")
            spec = spec.with_kind(AttributeKind.ORDINAL, list(order))
        if missing_as_category is not None:
            spec = spec.with_missing_as_category(missing_as_category)
        return roles.replace(column, spec)

    @property
    def n_records(self) -> int:
        return len(self.frame)

    @property
    def name(self) -> str:
        return self.source.name if self.source is not None else "table"


def category_values(series: pd.Series) -> list[str]:
    """The distinct values of a column as the text an ordinal order uses (3.0 → "3"), numbers in
    numeric order and text in alphabetical order: the starting point of the order editor."""
    values = series.dropna().unique()
    numeric = pd.to_numeric(
        pd.Series(values, dtype=object).astype("string").str.strip(), errors="coerce"
    )
    if len(values) and bool(numeric.notna().all()):
        out: list[str] = []
        for v in np.sort(numeric.to_numpy(dtype=np.float64)):
            out.append(str(int(v)) if float(v).is_integer() else str(float(v)))
        return list(dict.fromkeys(out))
    return sorted({str(v) for v in values})


def numeric_column(frame: pd.DataFrame, column: str, what: str = "continuous") -> np.ndarray:
    """The column as float64, or an :class:`InvalidInput` naming the first non-numeric rows."""
    series = frame[column]
    if pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=np.float64)
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    arrow = _arrow_text(series)
    plain = None
    if arrow is not None:
        plain = _plain_decimals(arrow)
        if plain is None:
            plain = _ascii_numbers(arrow)
    if plain is not None:
        return plain
    text = series.astype("string").str.strip()
    values = pd.to_numeric(text, errors="coerce")
    bad = np.flatnonzero(
        values.isna().to_numpy() & text.notna().to_numpy() & (text != "").to_numpy()
    )
    if len(bad):
        comma, ambiguous = _decimal_comma(text)
        if comma is not None:
            return comma
        example = str(series.iloc[bad[0]])
        source = frame.attrs.get(SOURCE_ATTR)
        where = f" of {source}" if source else ""
        if ambiguous:
            raise InvalidInput(
                f"column {column!r}{where} is tagged {what} but holds {example!r} "
                f"({rows_text(frame, bad)}): the comma may be a decimal comma or a thousands "
                "separator; write the numbers with a decimal point (1234 or 1.234) and no "
                "thousands separator"
            )
        dated = bool(
            re.fullmatch(
                r"\d{4}-\d{2}-\d{2}(?:[ T][\d:.]+)?|\d{1,2}[./]\d{1,2}[./]\d{2,4}", example.strip()
            )
        )
        advice = (
            "it holds dates: tag it ordinal (time order) or convert it to a number first (a "
            "year, an age)"
            if dated
            else "fix those cells or tag the column nominal"
        )
        raise InvalidInput(
            f"column {column!r}{where} is tagged {what} but {rows_text(frame, bad[:1])} holds "
            f"{example!r}, not a number ({len(bad)} such cell(s): {rows_text(frame, bad)}); "
            f"{advice}"
        )
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def continuous_as_numbers(dataset: Dataset, *, more_distinct_than: int = 0) -> Dataset:
    """``dataset`` with each continuous quasi-identifier held as text (every column of a CSV)
    held as its float64 numbers instead, the very ones :func:`prepare_qi` reads from the text
    (:func:`numeric_column`), in a new frame (``attrs`` kept; the other columns shared, not
    copied). A run never writes a continuous quasi-identifier's text (the release holds its
    groups' values), and a CSV's 17-digit numbers take 3.5 times their float64 as Arrow text
    (issue 33: ``protect`` of 1,000,000 x 10 held 280 MB of it through the run). A column is
    left as text when one of its cells is missing or is no finite number within
    :data:`MAX_ABS_VALUE` (the run then refuses it, quoting the cell as written), when its
    missing cells are a category, or when it has at most ``more_distinct_than`` distinct numbers
    (the report's risk counts such a column's texts as categories: ``1`` and ``1.0`` stay two).
    """
    frame, roles = dataset.frame, dataset.roles
    names = roles.qi_of_kind(AttributeKind.CONTINUOUS)
    # the numbers go straight into one (n, d) block, the frame's columns become views of it, and
    # prepare_qi takes that block as its raw values (``cont_values``) rather than a second copy
    # (issue 33: 80 MB less from the run's start to the release at 1,000,000 x 10)
    block = np.empty((len(frame), len(names)), dtype=np.float64)
    numbers: list[str] = []
    for col in names:
        series = frame[col]
        if roles[col].missing_is_category or _arrow_text(series) is None:
            continue
        try:
            values = numeric_column(frame, col)
        except InvalidInput:
            continue
        with np.errstate(invalid="ignore"):
            if not bool((np.abs(values) <= MAX_ABS_VALUE).all()):
                continue  # NaN (a missing cell), inf or too large: prepare_qi names them
        if more_distinct_than and not _more_distinct(values, more_distinct_than):
            continue
        block[:, len(numbers)] = values  # every cell a number: none is missing (is_missing's texts)
        numbers.append(col)
        del values
    if not numbers:
        return dataset
    if len(numbers) < len(names):
        block = block[:, : len(numbers)]
    else:  # all of them: prepare_qi may take the block (never an array a caller holds)
        _NUMBER_BLOCKS[id(block)] = block
    out = frame.copy(deep=False)
    # a 2-D frame set at once keeps its block (pandas 3 copies each 1-D column set on its own)
    out[numbers] = pd.DataFrame(block, columns=numbers, index=frame.index, copy=False)
    out.attrs = dict(frame.attrs)
    return replace(dataset, frame=out)


#: the blocks :func:`continuous_as_numbers` made, by id: only these are shared by prepare_qi
_NUMBER_BLOCKS: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def _shared_block(frame: pd.DataFrame, names: Sequence[str]) -> np.ndarray | None:
    """The (n, d) block of numbers :func:`continuous_as_numbers` made whose columns are
    ``frame``'s columns ``names`` in this order, as a read-only view; None when they are not
    (then :func:`prepare_qi` copies them)."""
    n, d = len(frame), len(names)
    if not n or not d:
        return None
    pointers = []
    root: np.ndarray | None = None
    for col in names:
        series = frame[col]
        if not isinstance(series, pd.Series) or series.dtype != np.float64:
            return None
        a = series.to_numpy()
        if a.strides != (8 * d,) or a.shape != (n,):
            return None
        base = a
        while isinstance(base.base, np.ndarray):
            base = base.base
        if root is None:
            root = base
        elif base is not root:
            return None
        pointers.append(a.__array_interface__["data"][0])
    if root is None or _NUMBER_BLOCKS.get(id(root)) is not root:
        return None
    start = pointers[0]
    if pointers != [start + 8 * j for j in range(d)]:
        return None
    if root.dtype != np.float64 or not root.flags.c_contiguous:
        return None
    offset, extra = divmod(start - root.__array_interface__["data"][0], 8)
    if extra or offset < 0 or offset + n * d > root.size:
        return None
    view = root.reshape(-1)[offset : offset + n * d].reshape(n, d)
    view.flags.writeable = False
    return view


def _more_distinct(values: np.ndarray, count: int) -> bool:
    """Whether ``values`` hold more than ``count`` distinct numbers (a sample decides when it
    can: 1,000,000 values are not hashed to learn that 10,000 of them differ)."""
    head = values[: 64 * (count + 1)]
    if len(np.unique(head)) > count:
        return True
    return int(pd.Series(values).nunique()) > count


#: The texts that mean a missing value once spaces are removed (the module's policy).
MISSING_TEXTS = ("", "NA", "N/A", "NaN", "nan", ".")
#: Rows per piece when :func:`is_missing` reads a text column: each piece is one call into
#: pandas' C loops (which hold the GIL), so a worker thread gives the GIL back between pieces
#: and the GUI thread is never kept waiting for a whole column (issue 30).
MISSING_PIECE_ROWS = 32_768


def is_missing(series: pd.Series) -> np.ndarray:
    """Which cells of ``series`` are missing: NA/NaN/None, or text that is empty or one of
    ``NA``, ``N/A``, ``NaN``, ``nan``, ``.`` after removing spaces (the module's policy).

    Numbers, booleans and dates are only NA-checked (no text can be blank). A categorical column
    of text is judged on its categories (a handful), then spread by its codes. Other text columns
    are read in pieces of :data:`MISSING_PIECE_ROWS` rows: the same answer cell by cell, with the
    GIL released between the pieces (issue 30: one call over a long column held it throughout)."""
    miss = series.isna().to_numpy()
    if not (series.dtype == object or pd.api.types.is_string_dtype(series)):
        return np.asarray(miss, dtype=bool)
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = pd.Series(series.dtype.categories, dtype=series.dtype.categories.dtype)
        blank = np.append(blank_texts(categories), False)  # code -1 (NA): already in ``miss``
        return np.asarray(miss | blank[series.cat.codes.to_numpy()], dtype=bool)
    n = len(series)
    try:
        pieces = [
            blank_texts(series.iloc[start : start + MISSING_PIECE_ROWS])
            for start in range(0, n, MISSING_PIECE_ROWS)
        ]
    except UnicodeDecodeError:  # bytes that are no UTF-8 text (Parquet): only text is read
        text = series.map(lambda v: v.strip() if isinstance(v, str) else "x").astype("string")
        pieces = [text.isin(MISSING_TEXTS).fillna(True).to_numpy()]
    blank = np.concatenate(pieces) if pieces else np.zeros(0, dtype=bool)
    return np.asarray(miss | blank, dtype=bool)


def blank_texts(piece: pd.Series) -> np.ndarray:
    """Which cells of a text column (or a piece of one) read, once stripped of spaces, as one
    of :data:`MISSING_TEXTS` (NA cells: True). Raises UnicodeDecodeError on bytes that are no
    UTF-8 text; :func:`is_missing` is the function to call."""
    text = piece.astype("string").str.strip()
    return np.asarray(text.isin(MISSING_TEXTS).fillna(True).to_numpy(), dtype=bool)


def _value_key(value: object) -> str:
    """How a cell is matched against an ordinal order: its text, with 3.0 written as 3."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _numeric_ranks(rank: Mapping[str, int]) -> dict[float, int]:
    """{number: rank} of an order whose every category is a number (distinct by value), else
    empty."""
    out: dict[float, int] = {}
    for category, i in rank.items():
        if category == MISSING_CATEGORY:
            continue
        numbers = _all_numbers([category])
        if numbers is None or numbers[0] in out:
            return {}
        out[numbers[0]] = i
    return out


def _natural_order(values: object) -> tuple[str, ...]:
    """Numeric order when every value is a number, else text order."""
    keys = [str(v) for v in values]  # type: ignore[attr-defined]
    try:
        return tuple(sorted(keys, key=float))
    except ValueError:
        return tuple(sorted(keys))


def _ordinal_natural_order(series: pd.Series, keys: pd.Series) -> tuple[str, ...]:
    """The order of an ordinal column given without one: an ordered categorical's categories,
    time order for dates, times and durations, numeric order for numbers, else text order."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        present = set(keys.unique())
        return tuple(dict.fromkeys(k for k in map(_value_key, dtype.categories) if k in present))
    if column_type(series) in ("datetime", "date", "time", "timedelta", "period", "decimal"):
        try:
            ordered = series.drop_duplicates().sort_values(kind="stable")
        except TypeError:  # mixed time zones or types: no common order
            pass
        else:
            return tuple(dict.fromkeys(ordered.map(_value_key)))
    return _natural_order(keys.unique())


@dataclass(frozen=True)
class RoleSuggestion:
    """What :func:`explain_roles` suggests for one column: a spec, the one-line reason shown
    beside it (roles panel, ``microgui suggest-roles``) and the number of missing cells."""

    name: str
    spec: ColumnSpec
    reason: str
    missing: int = 0

    def to_json(self) -> dict[str, object]:
        """``{"name", "role", "kind", "order", "reason"}`` with the CLI's words (contract of
        ``microgui suggest-roles --json``; ``missing`` and ``missing_as_category`` are
        extensions)."""
        return {
            "name": self.name,
            "role": self.spec.role.value,
            "kind": self.spec.kind.value,
            "order": list(self.spec.order) if self.spec.order is not None else None,
            "reason": self.reason,
            "missing": self.missing,
            "missing_as_category": self.spec.missing_as_category,
        }


#: Words of a column name that say it identifies a person or a unit (matched, case-folded, as
#: whole words of the name: ``record_id``, ``RecordId``, ``e-mail``, ``Straße``; see
#: :func:`_identifying_name`).
_ID_WORDS = frozenset(
    {
        "id", "ids", "ident", "identifier", "uuid", "guid", "key", "name", "names", "firstname",
        "lastname", "surname", "fullname", "username", "email", "mail", "phone", "telephone",
        "tel", "mobile", "fax", "address", "street", "strasse", "ssn", "nino", "passport",
        "record", "account", "acct", "iban", "mrn", "contact", "url", "website", "ip",
        "nom", "nombre", "prenom", "adresse", "telefon", "telefono",
    }
)  # fmt: skip
#: Words that identify when they are the whole name, alone or with no/nr/num/number/code
#: (``household``, ``patient_no``; not ``patient_age``).
_ID_UNITS = frozenset(
    {"patient", "customer", "client", "person", "household", "hh", "member", "respondent",
     "subject", "case", "employee", "student", "user", "visitor"}
)  # fmt: skip
_ID_SUFFIX_WORDS = frozenset({"no", "nr", "num", "number", "code", "nummer"})
#: Endings of a one-word name that make it an identifier (``UTILITYID``, ``UTILNAME``).
_ID_ENDINGS = ("id", "name", "email", "phone", "address", "ssn")
#: Common words that end like an identifier name but are none.
_NOT_ID_WORDS = frozenset(
    {
        "valid", "invalid", "paid", "unpaid", "prepaid", "fluid", "rapid", "liquid", "humid",
        "acid", "hybrid", "covid", "grid", "squid", "android", "avoid", "void", "solid",
        "lipid", "rigid", "vivid", "timid", "candid", "placid", "lucid", "morbid", "arid",
        "acrid", "florid", "bid", "did", "kid", "lid", "mid", "rid", "rename", "overpaid",
    }
)  # fmt: skip
_WORD = re.compile(r"[^\W\d_]+|\d+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[^\W\d_A-Za-z]+")
#: Values that identify by their form: e-mail addresses, web addresses, telephone numbers.
_IDENTIFYING_VALUES = (
    ("e-mail addresses", re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")),
    ("web addresses", re.compile(r"(?i)(https?://|www\.)\S+")),
    ("telephone numbers", re.compile(r"\+?\(?\d[\d ()./-]{6,}\d")),
)
#: ... when at least this share of the distinct present values has that form.
_IDENTIFYING_SHARE = 0.5
#: A text column with at least this share of distinct values among its present cells is
#: suggested as an identifier (names, keys and free text do not repeat; a grouping variable
#: does): :data:`ID_DISTINCT_SHARE` from 100 present cells on, more below, where categories
#: repeat less (a 30-record table may show 16 education levels).
ID_DISTINCT_SHARE = 0.5
_SMALL_TABLE_SHARES = ((20, 0.8), (100, 0.7))
#: Below this many distinct values a text column is never called an identifier by its shares.
_ID_MIN_DISTINCT = 5
#: A column whose cells are numbers except this share at most is "numbers with a few bad
#: cells" (a run names them), not text.
_MOSTLY_NUMBERS = 0.95
_DATE_TEXT = re.compile(r"\s*\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*")
_LEADING_ZERO = re.compile(r"\s*0\d+\s*")
#: A categorical quasi-identifier with more categories than this gets a hint in its reason.
MANY_CATEGORIES = 100
#: How many distinct values (the first ones a column shows) the rules on the values' form read.
_FORM_SAMPLE = 200
#: Python's ``\s`` among the ASCII characters, for the Arrow (RE2) forms of the patterns.
_ASCII_SPACES = " \t\n\r\f\v\x1c\x1d\x1e\x1f"
_S = r"[ \t\n\r\f\v\x1c-\x1f]"
#: The patterns that read every distinct value of a column, spelled for Arrow's RE2 on ASCII
#: text, where Python's ``\d`` is ``[0-9]`` and ``\s`` is :data:`_ASCII_SPACES` (other text is
#: matched by Python: :func:`_arrow_forms`).
_ARROW_FORMS: dict[re.Pattern[str], str] = {
    _NUMBER: rf"^{_S}*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?{_S}*$",
    _LEADING_ZERO: rf"^{_S}*0[0-9]+{_S}*$",
    _DECIMAL_COMMA: r"^[+-]?[0-9]+(?:,[0-9]+)?$",
}
#: Numbers written plainly: a minus at most, no leading zero, no zero ending the decimals, no
#: exponent, no space. Two such texts of at most :data:`_PLAIN_DIGITS` characters are the same
#: exactly when their numbers (float64, which keeps 15 significant digits) are, but for ``-0``.
_PLAIN_NUMBER = r"^-?(?:0|[1-9][0-9]*(?:\.[0-9]*[1-9])?|0\.[0-9]*[1-9])$"
#: ... and the same with a fixed number of decimals (``12.50``), when all have as many.
_FIXED_DECIMALS = r"^-?(?:0|[1-9][0-9]*)\.[0-9]+$"
_PLAIN_DIGITS = 15
#: A decimal number, digits with a minus at most and decimals at most (``007``, ``-2.50``).
_DECIMAL = r"^-?[0-9]+(?:\.[0-9]+)?$"


def _arrow_text(series: pd.Series) -> pa.Array | pa.ChunkedArray | None:
    """The Arrow strings behind a text column (a CSV's columns), else None."""
    dtype = series.dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        arrow = series.array.__arrow_array__()
    elif isinstance(dtype, pd.ArrowDtype):
        arrow = series.array.__arrow_array__()
    else:
        return None
    import pyarrow as pa

    if pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type):
        return arrow
    return None


def _arrow_forms(values: pa.Array, pattern: re.Pattern[str]) -> np.ndarray:
    """Which Arrow text values ``pattern`` fully matches, as Python's ``pattern.fullmatch``:
    ASCII text by the pattern's RE2 form (:data:`_ARROW_FORMS`), any other in Python."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    hits = np.array(
        pc.match_substring_regex(values, _ARROW_FORMS[pattern]).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    ascii_text = np.asarray(pc.string_is_ascii(values).to_numpy(zero_copy_only=False), dtype=bool)
    if not ascii_text.all():
        others = np.flatnonzero(~ascii_text)
        texts = values.take(others).to_pylist()
        hits[others] = [pattern.fullmatch(t) is not None for t in texts]
    return hits


def _arrow_floats(values: pa.Array) -> np.ndarray:
    """``float(v)`` of Arrow text values that :data:`_NUMBER` matches: ASCII ones parsed by
    Arrow (correctly rounded, as Python's ``float``), any other by Python."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(values) and pc.all(pc.string_is_ascii(values)).as_py():
        try:
            trimmed = pc.utf8_trim(values, characters=_ASCII_SPACES)
            return np.asarray(
                pc.cast(trimmed, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64
            )
        except pa.ArrowInvalid:  # a form Arrow does not read: Python reads them all
            pass
    return np.array([float(v) for v in values.to_pylist()], dtype=np.float64)


def _odd_numbers(values: pa.Array) -> np.ndarray | None:
    """The Arrow text values that :data:`_NUMBER` does not match (``inf``, ``1_000``...) read,
    stripped, as ``pd.to_numeric`` reads them, or None when one of them is no number (as
    :func:`_all_numbers`). The first few are tried alone: a text column stops there."""
    head = 64
    for part in (values.slice(0, head), values) if len(values) > head else (values,):
        texts = [str(v).strip() for v in part.to_pylist()]
        converted = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce")
        if bool(converted.isna().any()):
            return None
    return np.array([float(x) for x in converted.tolist()], dtype=np.float64)


def _plain_decimals(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Arrow text values as float64 when every one is a plain decimal (:data:`_DECIMAL`) of at
    most :data:`_PLAIN_DIGITS` characters and none is a negative zero, else None. For these,
    Arrow's parse is ``pd.to_numeric``'s to the bit: both are exact (at most 15 digits, then
    one division by a power of ten), in a fifth of the time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count or not len(values):
        return None
    if pc.max(pc.binary_length(values)).as_py() > _PLAIN_DIGITS:
        return None
    if not pc.all(pc.match_substring_regex(values, _DECIMAL)).as_py():
        return None
    numbers = np.array(
        pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64
    )
    if bool(np.any((numbers == 0) & np.signbit(numbers))):  # read as the integer 0 by pandas
        return None
    return numbers


def _ascii_numbers(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Arrow text values as float64 when every one is a decimal number written in ASCII
    (:data:`_NUMBER`: a sign, digits, a point, an exponent, ASCII spaces around) and none is a
    negative zero, else None. Arrow's parse (``fast_float``) and ``pd.to_numeric``'s are both
    correctly rounded, so they give the same float to the bit (the tests compare them on
    halfway cases of up to 25 digits); this reads the 17-digit numbers a program writes without
    a Python string per cell (issue 33: a tenth of the time, none of the memory).

    Which texts are numbers is decided without matching :data:`_NUMBER` cell by cell (issue 33:
    RE2's match was half this function's time): every byte must be one of
    :data:`_NUMBER_BYTES` (:func:`_number_bytes`, a table look-up of the text's bytes), and
    Arrow's cast of the text, its spaces trimmed when it has any, accepts exactly the texts
    :data:`_NUMBER` matches among those (a sign, digits, at most one point with a digit beside
    it, an exponent with digits, no space inside): tested on every text of up to 5 characters of
    ``01+-.eE``, space and tab (and found so up to 6), and of up to 3 among other bytes; a text
    the cast refuses returns None, as before. The ten columns of 100,000 17-digit numbers took
    0.104 s of CPU, now 0.045; a million rows 1.06 s, now 0.51 (medians, a loaded 2-core
    machine, old and new alternated in one process)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count or not len(values):
        return None
    numeric, spaced = _number_bytes(values)
    if not numeric:
        return None  # a character no number of _NUMBER holds (any non-ASCII one among them)
    try:
        trimmed = pc.utf8_trim(values, characters=_ASCII_SPACES) if spaced else values
        numbers = pc.cast(trimmed, pa.float64())
        del trimmed
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # out of range: pandas reads those
        return None
    out = np.array(numbers.to_numpy(zero_copy_only=False), dtype=np.float64)
    del numbers
    if bool(np.any((out == 0) & np.signbit(out))):  # "-0" reads as the integer 0 in pandas
        return None
    return out


#: The bytes a text :data:`_NUMBER` matches can hold, as a look-up table of the 256 byte
#: values: 1 for digits and ``+ - . e E``, 2 for the ASCII spaces (:data:`_ASCII_SPACES`), 0 for
#: any other.
_NUMBER_BYTES = np.zeros(256, dtype=np.uint8)
_NUMBER_BYTES[np.frombuffer(b"0123456789+-.eE", np.uint8)] = 1
_NUMBER_BYTES[np.frombuffer(_ASCII_SPACES.encode("ascii"), np.uint8)] = 2


def _number_bytes(values: pa.Array | pa.ChunkedArray) -> tuple[bool, bool]:
    """Whether every byte of the (valid, non-null) Arrow text values is one of
    :data:`_NUMBER_BYTES`, and whether one of them is a space: each chunk's character data
    between its first and last offsets, looked up in the table (no copy of the text; a byte
    per byte of one chunk at a time)."""
    import pyarrow as pa

    spaced = False
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    for chunk in chunks:
        if not len(chunk):
            continue
        wide = pa.types.is_large_string(chunk.type)
        _, offsets_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if wide else np.int32)
        first, last = offsets[chunk.offset], offsets[chunk.offset + len(chunk)]
        if last == first:
            continue
        kinds = np.take(_NUMBER_BYTES, np.frombuffer(data_buffer, dtype=np.uint8)[first:last])
        if not bool(kinds.all()):
            return False, spaced
        spaced = spaced or bool((kinds == 2).any())
    return True, spaced


def _plain_numbers(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """One number per distinct text when the Arrow text values that are not null are all plain
    numbers of at most :data:`_PLAIN_DIGITS` characters (:data:`_PLAIN_NUMBER`, or all with as
    many :data:`_FIXED_DECIMALS`), else None. There distinct numbers are distinct texts (``-0``
    and ``0`` aside, counted here), so a million values take a few hundredths of a second
    instead of the tenth it takes to hash their text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count:
        values = values.drop_null()
    if not len(values):
        return None
    lengths = pc.binary_length(values)
    if pc.max(lengths).as_py() > _PLAIN_DIGITS:
        return None
    if not pc.all(pc.match_substring_regex(values, _PLAIN_NUMBER)).as_py():
        if not pc.all(pc.match_substring_regex(values, _FIXED_DECIMALS)).as_py():
            return None
        decimals = pc.min_max(pc.subtract(lengths, pc.find_substring(values, ".")))
        if decimals["min"].as_py() != decimals["max"].as_py():
            return None
    del lengths
    numbers: np.ndarray = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    if not numbers.flags.writeable:
        numbers = numbers.copy()
    zeros = np.signbit(numbers[numbers == 0])
    numbers.sort()  # in place: a million records' load peaks at 3 x the file (issue 17)
    distinct = numbers[np.r_[True, numbers[1:] != numbers[:-1]]]
    if zeros.any() and not zeros.all():  # "-0" and "0": two texts, one float
        kept = distinct[distinct == 0][0]
        distinct = np.append(distinct, 0.0 if np.signbit(kept) else -0.0)
    return distinct


def _name_words(name: str) -> list[str]:
    """The words of a column name, case-folded: ``RecordId`` → record, id; ``Straße`` →
    strasse; ``e-mail`` → e, mail and also email."""
    words: list[str] = []
    for chunk in _WORD.findall(name):
        parts = _CAMEL.findall(chunk) or [chunk]
        words.extend(p.casefold() for p in parts)
    joined = re.sub(r"[\W_]+", "", name.casefold())
    return [*words, joined]


def _identifying_name(name: str) -> str | None:
    """Why ``name`` marks an identifier ("has the word 'id'", "ends in 'name'"), or None."""
    words = _name_words(name)
    for word in words:
        if word in _ID_WORDS:
            return f"has the word {word!r}"
    plain = words[:-1]
    if plain and plain[0] in _ID_UNITS and all(w in _ID_SUFFIX_WORDS for w in plain[1:]):
        return f"is {plain[0]!r} (a unit of the data)"
    compact = words[-1]
    if compact in _NOT_ID_WORDS or (len(plain) == 1 and plain[0] in _NOT_ID_WORDS):
        return None
    for ending in _ID_ENDINGS:
        if compact.endswith(ending) and len(compact) >= len(ending) + 2:
            return f"ends in {ending!r}"
    return None


def _identifying_values(uniques: list[object]) -> str | None:
    """What the values are when most of them identify by their form (e-mail, web address,
    telephone number), else None. Looks at up to 200 distinct values."""
    sample = [str(v) for v in uniques[:200]]
    if not sample:
        return None
    for what, pattern in _IDENTIFYING_VALUES:
        hits = sum(1 for v in sample if pattern.fullmatch(v.strip()))
        if hits >= _IDENTIFYING_SHARE * len(sample):
            return what
    return None


def _identifier_share(n_present: int) -> float:
    """The share of distinct values from which a text column of ``n_present`` cells is an
    identifier (:data:`ID_DISTINCT_SHARE`, more for small tables)."""
    for below, share in _SMALL_TABLE_SHARES:
        if n_present < below:
            return share
    return ID_DISTINCT_SHARE


def _row_number(numbers: np.ndarray, n_present: int) -> bool:
    """Whole numbers 0..n-1 or 1..n, one per record: a row number."""
    if n_present < 3 or len(numbers) != n_present:
        return False
    if not bool(np.all(np.isfinite(numbers) & (numbers == np.trunc(numbers)))):
        return False
    low, high = float(numbers.min()), float(numbers.max())
    return low in (0.0, 1.0) and high - low == n_present - 1


def _missing_note(missing: int, spec: ColumnSpec, series: pd.Series) -> str:
    if not missing or spec.role is AttributeRole.IDENTIFIER or missing == len(series):
        return ""
    if spec.role is not AttributeRole.QUASI_IDENTIFIER:
        return f"; {missing} missing cell(s) pass through"
    if spec.missing_as_category:
        return f"; its {missing} blank cell(s) are a category of their own"
    if spec.kind is AttributeKind.CONTINUOUS:
        return (
            f"; {missing} missing cell(s): a run refuses them until they are filled or their "
            "records removed"
        )
    return (
        f"; {missing} missing cell(s): a run refuses them unless missing is treated as its "
        "own category"
    )


#: Words of a column name that say survey weight (``survey_weight``, ``fnlwgt``, ``WTPER``).
_WEIGHT_NAME = re.compile(
    r"(?:^|[^a-z])(?:weights?|wgt|wt|fnlwgt|pondera\w*|poids|gewicht\w*)(?:$|[^a-z])|"
    r"^(?:wt|wgt)\w*|\w*(?:wgt|weight)$",
    re.IGNORECASE,
)


def _weight_hint(name: str, spec: ColumnSpec) -> str:
    """A hint in the reason of a continuous column named like a survey weight: the suggestion
    stays a quasi-identifier (a design weight can reveal the sampling stratum), the hint says
    how to tag it a weight."""
    if spec.role is not AttributeRole.QUASI_IDENTIFIER or spec.kind is not AttributeKind.CONTINUOUS:
        return ""
    if not _WEIGHT_NAME.search(name):
        return ""
    return (
        "; its name says survey weight: if it is one, tag it weight (released unchanged, used "
        "by the risk measures), unless its values reveal a sampling stratum"
    )


def explain_roles(frame: pd.DataFrame) -> tuple[RoleSuggestion, ...]:
    """Suggest a role and kind for every column, each with a one-line reason.

    The rules are conservative: a column that could single out a record is never left to pass
    through unnoticed. In order, for the cells that are not missing (empty, ``NA``, ``NaN``,
    ``.``; missing cells never change a suggestion, they are counted in the reason and a run
    refuses them for a quasi-identifier, see the module docstring):

    1. Lists, structs, maps and binary values (Parquet), complex numbers and intervals cannot
       be quasi-identifiers: the name and value rules below (3 and 4) apply to them read as
       text (bytes decoded, nested values by their field names, text leaves and JSON text),
       and make them **identifiers**; so does content that, read as text, would be a
       quasi-identifier with values shared by 5 records or fewer on average (names repeating
       twice, held as bytes, would else pass through in clear);
       else they are **non-confidential** and pass through
       (:mod:`microgui.core.table.column_types`).
    2. A column with no value, or one value on every record, is **non-confidential**: it
       carries no information about any record. One value *and blank cells* is information
       (a condition recorded only when present): a **nominal quasi-identifier** whose blanks
       are a category of their own.
    3. A column whose name has a word like id, name, email, phone, address, ssn, passport,
       record, account or contact (``record_id``, ``UTILITYID``, ``UTILNAME``, ``Straße``), or
       is a unit such as ``patient`` or ``household_no``, is an **identifier** (removed).
    4. Text whose values are mostly e-mail addresses, web addresses or telephone numbers is an
       **identifier**; so is text distinct on at least half of its records (more in tables of
       fewer than 100 records: 70 %, and 80 % below 20; at least 5 distinct values): names,
       keys and free text do not repeat, grouping variables do. Whole numbers 0..n-1 or 1..n,
       one per record, are a row number: an **identifier**.
    5. Numbers (at most 5 % of cells not numbers: those a run names) with at least
       ``CONTINUOUS_MIN_DISTINCT`` distinct values are **continuous quasi-identifiers**, fewer
       distinct numbers **ordinal quasi-identifiers** in numeric order. Digits written with a
       leading zero (``02134``) are codes: **nominal**. A number distinct on every record gets
       a warning in its reason (a key without a key's name would be averaged).
    6. Dates, times and durations (and text written as ISO dates) are **ordinal
       quasi-identifiers** in time order (a birth date identifies; re-tag an interview date).
    7. An ordered categorical (Parquet, SPSS/Stata labels) is an **ordinal quasi-identifier** in
       its categories' order; every other text, category or yes/no column is a **nominal
       quasi-identifier**. Nothing is suggested confidential: that is the statistician's call,
       and a quasi-identifier too many costs utility, never privacy.
    """
    out: list[RoleSuggestion] = []
    for col, series in frame.items():  # not .iloc per position: a third the work per column
        name = str(col)
        ctype = column_type(series)
        if ctype in _NOT_QI_TYPES or ctype in ("complex", "interval"):
            out.append(_not_qi_suggestion(name, series, ctype))
            continue
        arrow = _arrow_text(series) if ctype == "text" else None
        if arrow is not None:
            # Text held by Arrow (every column of a CSV): read by Arrow's compute functions and
            # numpy, without a Python string per cell (issue 17: a million records in a fraction
            # of a second). Plain numbers are never missing: only their nulls are.
            plain = _plain_numbers(arrow)
            if plain is not None:
                missing = arrow.null_count
                column = _Column(name, series, ctype, len(series) - missing, missing)
                column.distinct, column.numbers = len(plain), plain
            else:
                missing_mask = is_missing(series)
                missing = int(missing_mask.sum())
                column = _Column(name, series, ctype, len(series) - missing, missing)
                if missing:
                    import pyarrow as pa

                    arrow = arrow.filter(pa.array(~missing_mask))
                column.read_arrow_text(arrow)
            spec, reason = column.suggest()
            note = _missing_note(missing, spec, series) + _weight_hint(name, spec)
            out.append(RoleSuggestion(name, spec, reason + note, missing))
            continue
        missing_mask = is_missing(series)
        missing = int(missing_mask.sum())
        numeric = (
            pd.api.types.is_numeric_dtype(series)
            and not pd.api.types.is_bool_dtype(series)
            and ctype == "number"
        )
        column = _Column(name, series, ctype, len(series) - missing, missing)
        present = series[~missing_mask] if missing else series
        whole = numeric and pd.api.types.is_integer_dtype(series.dtype)
        if (whole or (ctype == "number" and series.dtype == object)) and len(present):
            if kind_of(present) == "big_integer":
                out.append(_big_integer_suggestion(column, present))
                continue
        if ctype in ("text", "mixed", "number") and not numeric:
            # Text columns in plain numpy: per-column pandas calls dominate on very wide tables.
            raw = present.to_numpy(dtype=object)
            column.read_numbers(pd.unique(raw).tolist())
        elif numeric and isinstance(series.dtype, np.dtype):
            # numpy numbers: their distinct values as they are (the same ones as Python's)
            distinct_values = pd.unique(present.to_numpy())
            column.distinct = len(distinct_values)
            column.numbers = distinct_values.astype(np.float64)
        else:
            try:
                uniques = pd.unique(present.to_numpy(dtype=object)).tolist()
            except TypeError:  # unhashable: treated as nested above, kept safe here
                uniques = list(present)
            column.distinct, column.first = len(uniques), uniques[:_FORM_SAMPLE]
            if numeric:
                column.numbers = np.array([float(v) for v in uniques], dtype=np.float64)
        spec, reason = column.suggest()
        note = _missing_note(missing, spec, series) + _weight_hint(name, spec)
        out.append(RoleSuggestion(name, spec, reason + note, missing))
    return tuple(out)


def _not_qi_suggestion(name: str, series: pd.Series, ctype: str) -> RoleSuggestion:
    """Rule 1 of :func:`explain_roles`: a column of bytes, lists, structs, maps, complex numbers
    or intervals can be no quasi-identifier, but the name and value rules apply to it as to
    text (a Parquet column of e-mail addresses stored as bytes released them in clear): the
    values read as text (:func:`~microgui.core.table.column_types.readable_texts`), a nested column
    also by its field names and text leaves. An identifier when a rule says so, else
    non-confidential (it passes through)."""
    what = {**_NOT_QI_TYPES, **_NOT_CONTINUOUS_TYPES}[ctype]
    values = series.tolist()
    present = [v for v in values if not _cell_missing(v)]
    missing = len(values) - len(present)
    texts = readable_texts(present)
    identifier = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)
    read = f" (it holds {what}, read as text)"
    if ctype == "nested" and present:
        sample = present[: 10 * _FORM_SAMPLE]
        for field_name in field_names(sample):
            word = _identifying_name(field_name)
            if word is not None:
                return RoleSuggestion(
                    name,
                    identifier,
                    f"a field or key of its {what} {word}: an identifier, removed from the release",
                    missing,
                )
        found = _identifying_values(list(dict.fromkeys(leaf_texts(sample))))
        if found is not None:
            return RoleSuggestion(
                name,
                identifier,
                f"its {what} hold {found}: an identifier, removed from the release",
                missing,
            )
    column = _Column(name, pd.Series(texts, dtype=object), "text", len(present), missing)
    column.read_numbers(list(dict.fromkeys(texts)))
    spec, reason = column.suggest()
    if spec.role is AttributeRole.IDENTIFIER:
        return RoleSuggestion(name, spec, reason + read, missing)
    distinct = len(set(texts))
    if (
        spec.role is not AttributeRole.NON_CONFIDENTIAL
        and distinct >= 5
        and len(present) <= 5 * distinct
    ):
        # Read as text it would be protected, and its values are shared by 5 records or fewer
        # on average (names repeating twice, say): held as bytes or nested values it cannot be
        # a quasi-identifier, and passing it through released in clear what a text column
        # protects (adversarial pass): removed. A coarse grouping (a few codes) passes through.
        return RoleSuggestion(
            name,
            identifier,
            f"read as text it would be a {spec.role.value.replace('_', '-')}, and {what} "
            "cannot be one: an identifier, removed from the release (convert it to text to "
            "protect it instead)",
            missing,
        )
    return RoleSuggestion(
        name,
        ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL),
        f"holds {what}, which cannot be a quasi-identifier: passes through",
        missing,
    )


def _big_integer_suggestion(column: _Column, present: pd.Series) -> RoleSuggestion:
    """Whole numbers beyond 2^53 (64-bit keys, hashes, long codes): a float64 would round them
    (distinct values merged, an order of one category), so they are read exactly as codes:
    the name rule, then an identifier when distinct on most records, else a nominal
    quasi-identifier, never averaged."""
    uniques = pd.unique(present.to_numpy())
    column.distinct, column.first = len(uniques), [str(v) for v in uniques[:_FORM_SAMPLE]]
    what = f"whole numbers beyond 2^53 ({column.distinct:,} distinct)"
    spec, reason = column.suggest()  # the name rule and one value, as for any column
    if spec.role is AttributeRole.NON_CONFIDENTIAL or reason.startswith("the name"):
        return RoleSuggestion(column.name, spec, reason, column.missing)
    n_present = column.n_present
    if (
        column.distinct >= _ID_MIN_DISTINCT
        and column.distinct >= _identifier_share(n_present) * n_present
    ):
        return RoleSuggestion(
            column.name,
            ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
            f"{what} in {n_present:,} records: a key, an identifier removed from the release",
            column.missing,
        )
    return RoleSuggestion(
        column.name,
        ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
        f"{what}: codes, a nominal quasi-identifier (a float64 would round them: never averaged)",
        column.missing,
    )


def _cell_missing(value: object) -> bool:
    """One cell is missing (None, NaN, NA); a list or an array is a value."""
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


@dataclass
class _Column:
    """What :func:`explain_roles` knows of one column while deciding (rules 2-7)."""

    name: str
    series: pd.Series
    ctype: str
    n_present: int
    missing: int
    #: how many distinct present values
    distinct: int = 0
    #: the first :data:`_FORM_SAMPLE` distinct values in the order they appear (the rules on the
    #: values' form read these); filled when the column may be read as text
    first: list[object] = field(default_factory=list)
    #: the distinct values as numbers when the column holds numbers (None: text), one per
    #: distinct value read as a number, in any order
    numbers: np.ndarray | None = None
    #: distinct values that are no number in a column of numbers (a few bad cells)
    not_numbers: int = 0
    codes: bool = False  # digits with leading zeros

    def read_numbers(self, uniques: list[object]) -> None:
        """Text: numbers (a decimal comma too), numbers with a few bad cells, or codes."""
        self.distinct, self.first = len(uniques), uniques[:_FORM_SAMPLE]
        if not uniques:
            return
        texts = [str(v) for v in uniques]
        if sum(1 for t in texts if _LEADING_ZERO.fullmatch(t)) >= 0.5 * len(texts):
            self.codes = True
            return
        numbers = _all_numbers(uniques)
        if numbers is None and len(uniques) >= CONTINUOUS_MIN_DISTINCT:
            comma, _ambiguous = _decimal_comma(pd.Series(uniques, dtype="string"))
            if comma is not None:
                numbers = comma.tolist()
        if numbers is None:
            parsed = [v for v in texts if _NUMBER.fullmatch(v)]
            bad = len(texts) - len(parsed)
            if parsed and bad <= (1 - _MOSTLY_NUMBERS) * len(texts) and bad <= 20:
                numbers = [float(v) for v in parsed]
                self.not_numbers = bad
        if numbers is not None:
            self.numbers = np.array(numbers, dtype=np.float64)

    def read_arrow_text(self, values: pa.Array | pa.ChunkedArray) -> None:
        """:meth:`read_numbers` for the present cells of a text column held by Arrow: the same
        decisions, from Arrow's compute functions and numpy (see :func:`_arrow_forms`)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not len(values):
            return
        uniques = pc.unique(values)
        self.distinct = distinct = len(uniques)
        self.first = uniques.slice(0, _FORM_SAMPLE).to_pylist()
        if int(_arrow_forms(uniques, _LEADING_ZERO).sum()) >= 0.5 * distinct:
            self.codes = True
            return
        number = _arrow_forms(uniques, _NUMBER)
        numbers: np.ndarray | None = None
        if bool(number.all()):
            numbers = _arrow_floats(uniques)
        else:
            odd = _odd_numbers(uniques.filter(pa.array(~number)))
            if odd is not None:
                numbers = np.concatenate([_arrow_floats(uniques.filter(pa.array(number))), odd])
        if numbers is None and distinct >= CONTINUOUS_MIN_DISTINCT:
            if bool(_arrow_forms(uniques, _DECIMAL_COMMA).all()):
                comma, _ambiguous = _decimal_comma(pd.Series(uniques.to_pylist(), dtype="string"))
                if comma is not None:
                    numbers = comma
        if numbers is None:
            parsed = int(number.sum())
            bad = distinct - parsed
            if parsed and bad <= (1 - _MOSTLY_NUMBERS) * distinct and bad <= 20:
                numbers = _arrow_floats(uniques.filter(pa.array(number)))
                self.not_numbers = bad
        self.numbers = numbers

    def suggest(self) -> tuple[ColumnSpec, str]:
        role_qi, role_nc = AttributeRole.QUASI_IDENTIFIER, AttributeRole.NON_CONFIDENTIAL
        distinct, n_present = self.distinct, self.n_present
        if distinct == 0:
            return ColumnSpec(role_nc, AttributeKind.NOMINAL), "no value at all: passes through"
        if distinct == 1 and not self.missing:
            return (
                ColumnSpec(role_nc, AttributeKind.NOMINAL),
                "the same value on every record: carries no information, passes through",
            )
        word = _identifying_name(self.name)
        if word is not None:
            return (
                ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
                f"the name {word}: an identifier, removed from the release",
            )
        if distinct == 1:
            return (
                ColumnSpec(role_qi, AttributeKind.NOMINAL, missing_as_category=True),
                f"one value on {n_present:,} records, blank on {self.missing:,}: which records "
                "have it is information, a nominal quasi-identifier",
            )
        text = (
            self.numbers is None
            and self.ctype not in _NOT_CONTINUOUS_TYPES
            and self.ctype != "boolean"
        )
        dates = text and all(_DATE_TEXT.fullmatch(str(v)) for v in self.first[:200])
        if text and not dates:
            what = _identifying_values(self.first)
            if what is not None:
                return (
                    ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
                    f"holds {what}: an identifier, removed from the release",
                )
            if (
                distinct >= _ID_MIN_DISTINCT
                and distinct >= _identifier_share(n_present) * n_present
            ):
                share = f"{distinct:,} distinct values in {n_present:,} records"
                return (
                    ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
                    f"text with {share}: names, keys or free text identify; removed from the "
                    "release",
                )
        if self.codes:
            return (
                ColumnSpec(role_qi, AttributeKind.NOMINAL),
                f"codes written with leading zeros ({distinct:,} of them): a nominal "
                "quasi-identifier (never averaged)",
            )
        if self.numbers is not None:
            return self._numbers(distinct, n_present)
        if self.ctype in _NOT_CONTINUOUS_TYPES or dates:
            what = _NOT_CONTINUOUS_TYPES.get(self.ctype, "dates")
            return (
                ColumnSpec(role_qi, AttributeKind.ORDINAL),
                f"{what} can single out a person (a birth date does): an ordinal "
                "quasi-identifier in time order; tag it non-confidential if it is e.g. an "
                "interview date",
            )
        series = self.series
        if isinstance(series.dtype, pd.CategoricalDtype) and series.cat.ordered:
            order = tuple(_value_key(c) for c in series.cat.categories)
            return (
                ColumnSpec(role_qi, AttributeKind.ORDINAL, order),
                f"ordered categories ({distinct} present): an ordinal quasi-identifier in their "
                "order",
            )
        what = "yes/no values" if self.ctype == "boolean" else f"{distinct:,} categories"
        reason = f"{what}: a nominal quasi-identifier (combined, categories single people out)"
        if distinct > MANY_CATEGORIES:
            reason += "; many categories: consider a hierarchy or recoding"
        return ColumnSpec(role_qi, AttributeKind.NOMINAL), reason

    def _numbers(self, distinct: int, n_present: int) -> tuple[ColumnSpec, str]:
        assert self.numbers is not None
        role_qi = AttributeRole.QUASI_IDENTIFIER
        bad = (
            f"; {self.not_numbers} value(s) are no number: a run names their cells, fix them"
            if self.not_numbers
            else ""
        )
        if not self.not_numbers and _row_number(self.numbers, n_present):
            return (
                ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL),
                "whole numbers 1..n (or 0..n-1), one per record: a row number, removed",
            )
        distinct_numbers = len(self.numbers)
        if distinct_numbers >= CONTINUOUS_MIN_DISTINCT:
            unique = (
                "; distinct on every record: if it is a key (customer or record number), tag it "
                "identifier"
                if distinct == n_present and n_present >= 20 and not self.not_numbers
                else ""
            )
            return (
                ColumnSpec(role_qi, AttributeKind.CONTINUOUS),
                f"numbers with {distinct_numbers:,} distinct values: a continuous "
                f"quasi-identifier{unique}{bad}",
            )
        order = tuple(dict.fromkeys(_value_key(v) for v in sorted(self.numbers.tolist())))
        return (
            ColumnSpec(role_qi, AttributeKind.ORDINAL, order),
            f"numbers with {distinct_numbers} distinct values: an ordinal quasi-identifier in "
            f"numeric order{bad}",
        )


def suggest_roles(frame: pd.DataFrame) -> RoleMap:
    """The roles of :func:`explain_roles` (without the reasons). The user overrides any of it."""
    return RoleMap.from_dict({s.name: s.spec for s in explain_roles(frame)})


@dataclass(frozen=True)
class QIMatrix:
    """The quasi-identifiers of a dataset in the numeric form the methods work on.

    - ``continuous``: (n, dc) float64, z-scored (mean 0, sample std 1; a constant column stays 0).
      ``cont_mean``/``cont_std`` undo the scaling.
    - ``ordinal``: (n, do) int64 category ranks 0..len(order)-1; ``ordinal_sizes`` the |D(V)|.
    - ``nominal``: (n, dn) int64 category codes; ``nominal_categories`` their labels.
    """

    continuous_names: tuple[str, ...]
    continuous: np.ndarray
    cont_mean: np.ndarray
    cont_std: np.ndarray
    ordinal_names: tuple[str, ...]
    ordinal: np.ndarray
    ordinal_orders: tuple[tuple[str, ...], ...]
    nominal_names: tuple[str, ...]
    nominal: np.ndarray
    nominal_categories: tuple[tuple[object, ...], ...]
    #: (n, dc) the continuous quasi-identifiers as read (not z-scored), when known: group means
    #: are taken of these, since undoing the z-scores adds float noise (a mean of zeros came out
    #: 1e-10 in a column of millions; :mod:`microgui.core.table.numbers`)
    cont_values: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        for block in (self.continuous, self.ordinal, self.nominal):
            if block.shape[1]:
                return int(block.shape[0])
        return 0

    @property
    def ordinal_sizes(self) -> np.ndarray:
        return np.array([len(o) for o in self.ordinal_orders], dtype=np.int64)

    @property
    def names(self) -> tuple[str, ...]:
        return self.continuous_names + self.ordinal_names + self.nominal_names


def _zscores(
    values: np.ndarray, mean: np.ndarray, std: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """(values - mean) / std, written into ``out`` (a new array when None): in place, one (n, d)
    array more than the raw values, not two at once (issue 33: the 1,000,000 x 10 command's
    peak). The same operations per element wherever it is written, so the same bits."""
    z: np.ndarray = np.subtract(values, mean, out=out)
    z /= std
    return z


def rewrite_continuous(qi: QIMatrix) -> None:
    """Write ``qi.continuous`` again from ``qi.cont_values`` with :func:`prepare_qi`'s
    arithmetic, so bit for bit what it held: the rebuild of z-scores whose memory a run gave
    back while nothing read them (:mod:`microgui.core.spare`). Needs ``cont_values``."""
    if qi.cont_values is None:
        raise ValueError("the z-scores can be written again only from the values they were made of")
    _zscores(qi.cont_values, qi.cont_mean, qi.cont_std, out=qi.continuous)


def prepare_qi(dataset: Dataset) -> QIMatrix:
    """Validate the quasi-identifiers and convert them to a :class:`QIMatrix`.

    Raises :class:`InvalidRoles` when there is no quasi-identifier, :class:`InvalidInput` for
    missing values (see the module's policy), non-numbers in a continuous column, or an ordinal
    value absent from its declared order.
    """
    frame, roles = dataset.frame, dataset.roles
    qis = roles.quasi_identifiers
    if not qis:
        raise InvalidRoles("no column is tagged quasi-identifier; tag at least one (--qi COL,...)")
    where = f" in {dataset.source.name}" if dataset.source is not None else ""
    for col in qis:
        ctype = column_type(frame[col])
        if ctype in _NOT_QI_TYPES:
            raise InvalidRoles(
                f"column {col!r}{where} holds {_NOT_QI_TYPES[ctype]}, which cannot be a "
                "quasi-identifier; tag it non-confidential (it passes through unchanged) or "
                "identifier (it is removed)"
            )
        kind = roles[col].kind
        if kind is AttributeKind.CONTINUOUS and ctype in _NOT_CONTINUOUS_TYPES:
            hint = (
                "tag it nominal"
                if ctype in ("complex", "interval")
                else "tag it ordinal (time order) or nominal, or convert it to a number first "
                "(e.g. a year or an age)"
            )
            raise InvalidRoles(
                f"quasi-identifier {col!r}{where} holds {_NOT_CONTINUOUS_TYPES[ctype]}, which "
                f"cannot be microaggregated as continuous; {hint}"
            )
        miss = np.flatnonzero(is_missing(frame[col]))
        if len(miss) and not roles[col].missing_is_category:
            categorical = kind is not AttributeKind.CONTINUOUS
            choice = (
                ", or treat missing as its own category (--missing-as-category "
                f"{col}, or the roles panel's 'Missing cells are a category')"
                if categorical
                else ""
            )
            # every other quasi-identifier with holes named at once: one fix, one rerun
            others = [
                c
                for c in qis
                if c != col and not roles[c].missing_is_category and is_missing(frame[c]).any()
            ]
            also = f" (missing cells also in {', '.join(map(repr, others))})" if others else ""
            raise InvalidInput(
                f"quasi-identifier {col!r}{where} has {len(miss)} missing value(s) "
                f"({rows_text(frame, miss)}){also}; "
                "microgui does not microaggregate around holes: fill or remove those records"
                f"{choice}"
            )
    n = len(frame)
    cont_names = tuple(roles.qi_of_kind(AttributeKind.CONTINUOUS))
    shared = _shared_block(frame, cont_names)
    cont = np.empty((n, len(cont_names)), dtype=np.float64) if shared is None else shared
    for j, col in enumerate(cont_names):
        if shared is None:
            cont[:, j] = numeric_column(frame, col)
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~(np.abs(cont[:, j]) <= MAX_ABS_VALUE))
        if len(bad):
            example = str(frame[col].iloc[bad[0]])
            raise InvalidInput(
                f"quasi-identifier {col!r}{where} holds {example!r} ({len(bad)} such cell(s): "
                f"{rows_text(frame, bad)}): microgui needs finite numbers no larger than "
                f"{MAX_ABS_VALUE:g} in magnitude (larger ones overflow when squared); fix or "
                "remove those records, or tag the column nominal"
            )
    mean = cont.mean(axis=0) if n else np.zeros(len(cont_names))
    std = cont.std(axis=0, ddof=1) if n > 1 else np.ones(len(cont_names))
    std = np.where(std > 0, std, 1.0)
    z = _zscores(cont, mean, std)

    ord_names = tuple(roles.qi_of_kind(AttributeKind.ORDINAL))
    ords = np.empty((n, len(ord_names)), dtype=np.int64)
    orders: list[tuple[str, ...]] = []
    for j, col in enumerate(ord_names):
        order = roles[col].order
        keys = frame[col].map(_value_key)
        missing = is_missing(frame[col]) if roles[col].missing_is_category else None
        if missing is not None and missing.any():
            keys = keys.where(~missing, MISSING_CATEGORY)
            present = frame[col][~missing]
            if order is None:
                order = _ordinal_natural_order(present, keys[~missing])
            order = tuple(v for v in order if v != MISSING_CATEGORY) + (MISSING_CATEGORY,)
        elif order is None:
            order = _ordinal_natural_order(frame[col], keys)
        rank = {v: i for i, v in enumerate(order)}
        codes = keys.map(rank)
        if bool(codes.isna().any()):
            # ' high' in a cell and 'high' in the order (the command line strips categories)
            stripped: dict[str, int] = {}
            for v, i in rank.items():
                stripped.setdefault(v.strip(), i)
            codes = codes.fillna(keys.astype(str).str.strip().map(stripped))
        if bool(codes.isna().any()):
            # '4.0', '007' or '1e3' in a cell and 4, 7 or 1000 in a numeric order (the order
            # microgui suggests for numbers): matched by value
            by_value = _numeric_ranks(rank)
            if by_value:
                values = pd.to_numeric(keys.astype(str).str.strip(), errors="coerce")
                codes = codes.fillna(values.map(by_value))
        bad = np.flatnonzero(codes.isna().to_numpy())
        if len(bad):
            raise InvalidInput(
                f"ordinal column {col!r}{where} holds {keys.iloc[bad[0]]!r} ({rows_text(frame, bad)}), "
                f"which is not in its order {' < '.join(order)}; add the category to the order "
                "(or fix those cells)"
            )
        ords[:, j] = codes.to_numpy(dtype=np.int64)
        orders.append(tuple(order))

    nom_names = tuple(roles.qi_of_kind(AttributeKind.NOMINAL))
    noms = np.empty((n, len(nom_names)), dtype=np.int64)
    cats: list[tuple[object, ...]] = []
    for j, col in enumerate(nom_names):
        missing = is_missing(frame[col]) if roles[col].missing_is_category else None
        if missing is not None and missing.any():
            # the present values in their sorted order, then the missing cells' own category
            codes_arr = np.full(n, -1, dtype=np.int64)
            present_codes, uniques = pd.factorize(frame[col][~missing], sort=True)
            codes_arr[~missing] = present_codes
            codes_arr[missing] = len(uniques)
            noms[:, j] = codes_arr
            cats.append((*uniques.tolist(), MISSING_CATEGORY))
            continue
        codes_arr, uniques = pd.factorize(frame[col], sort=True)
        noms[:, j] = codes_arr
        cats.append(tuple(uniques.tolist()))
    return QIMatrix(
        continuous_names=cont_names,
        continuous=z,
        cont_mean=mean,
        cont_std=std,
        ordinal_names=ord_names,
        ordinal=ords,
        ordinal_orders=tuple(orders),
        nominal_names=nom_names,
        nominal=noms,
        nominal_categories=tuple(cats),
        cont_values=cont,
    )


def survey_weights(
    frame: pd.DataFrame, weights: str | Sequence[float] | np.ndarray | None
) -> tuple[np.ndarray, str]:
    """The survey weights of ``frame`` as float64 (a column name, one value per record, or
    None: all 1) and the words naming them in messages. Refuses (:class:`InvalidInput`) a
    weight that is missing, not a number, not finite or not above 0, naming the column and
    the rows (issue 18: the weight role; sdcMicro checks none of this)."""
    n = len(frame)
    if weights is None:
        return np.ones(n, dtype=np.float64), "the weights"
    if isinstance(weights, str):
        if weights not in frame.columns:
            raise InvalidParameter(f"weight column {weights!r} is not a column of the table")
        raw = frame[weights].reset_index(drop=True)
        what = f"weight column {weights!r}"
    else:
        raw = pd.Series(np.asarray(weights).reshape(-1))
        what = "the weights"
        if len(raw) != n:
            raise InvalidParameter(f"{len(raw):,} weights given for {n:,} records")
    if pd.api.types.is_bool_dtype(raw.dtype):
        raise InvalidInput(f"{what} holds true/false values, not survey weights")
    absent = raw.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(raw.dtype):
        values = raw.to_numpy(dtype=np.float64, na_value=np.nan)
        text = np.zeros(n, dtype=bool)
    else:
        # text as a file's reader returns it: "", "NA" ... are missing (is_missing), and a
        # column written with decimal commas (975,03) is read as the quasi-identifiers are
        absent = is_missing(raw)
        flags = np.array([isinstance(v, (bool, np.bool_)) for v in raw], dtype=bool)
        values = pd.to_numeric(raw.where(~flags & ~absent), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        text = ~absent & (np.isnan(values) | flags)
        if text.any() and not flags.any():
            comma, _ambiguous = _decimal_comma(raw.where(~absent).astype("string").str.strip())
            if comma is not None:
                values = comma
                text = ~absent & np.isnan(values)
    bad = absent | text | ~np.isfinite(values) | (values <= 0)
    if bad.any():
        rows = np.flatnonzero(bad)
        i = int(rows[0])
        if absent[i]:
            first = "is missing"
        elif text[i]:
            first = f"holds {raw.iloc[i]!r}, not a number"
        else:
            first = f"holds {values[i]:g}"
        raise InvalidInput(
            f"{what} must hold a finite number greater than 0 for every record (the number of "
            f"population units it stands for): at {rows_text(frame, rows)} it does not (the "
            f"first {first})"
        )
    return values, what
