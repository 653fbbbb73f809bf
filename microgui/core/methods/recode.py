"""Global recoding and top/bottom coding of one column (issue 31 item 3).

Every function here recodes a *whole* column in one way, so the released column is homogeneous:
one hierarchy level, one set of intervals, one mapping — it tabulates, unlike a local
generalization that mixes levels row by row. They are pure: a :class:`pandas.Series` in, a
:class:`Recoded` out (the new series, the cells changed, the distinct values before and after,
and the kind the column has once recoded). Missing cells stay missing.

Reference semantics, sdcMicro (``sdcTools/sdcMicro``):

- :func:`recode_intervals` follows ``globalRecode`` (``R/globalRecode.R``, ``globalRecodeWORK``):
  given ``breaks``, or ``n`` equal-frequency bins (its ``method="equalAmount"``: the quantiles at
  0, 1/n, ..., 1; here the value of rank ⌈q·n⌉, the first of its bin). Two choices differ and
  are deliberate: intervals are closed on the left,
  ``[20, 25)``, as age bands are usually read (R's ``cut`` closes them on the right), the last one
  closed on both ends; and a value outside the breaks is refused with its count instead of
  becoming ``NA`` in silence. Equal-frequency breaks are data values, and
  breaks that tie are merged (sdcMicro jitters them), so fewer than ``n`` bins may come out.
- :func:`recode_mapping` follows ``groupAndRename`` (``R/groupAndRename.R``): each value listed
  once (duplicates refused), and every value of the column must be mapped: the unmapped ones are
  refused with their count, never shown (an error message is no place for a record's value).
- :func:`recode_level` is global recoding with an ARX hierarchy
  (:mod:`microgui.core.table.hierarchy`): every value replaced by its generalization at one
  level (``004`` §4, Definition 1 — full-domain generalization, one level for the column).
- :func:`top_bottom_code` follows ``topBotCoding`` (``R/topBotCoding.R``,
  ``topBotCodingWORK``): ``x[x > value] <- replacement`` for the top, ``x[x < value]`` for the
  bottom; the replacement defaults to the threshold itself, or is a label such as ``"90+"``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.side_file import read_side_file
from microgui.core.table.hierarchy import Hierarchy, value_key
from microgui.core.table.roles import AttributeKind

__all__ = [
    "Recoded",
    "MAX_MAPPING_BYTES",
    "MAX_BINS",
    "interval_label",
    "read_mapping",
    "recode_intervals",
    "recode_level",
    "recode_mapping",
    "top_bottom_code",
]

#: The largest mapping file read (a mapping lists each value once).
MAX_MAPPING_BYTES = 64 * 1024 * 1024
#: The most intervals a recoding makes (more would not tabulate; a typo such as 10000 is caught).
MAX_BINS = 1000


@dataclass(frozen=True)
class Recoded:
    """A recoded column: ``values`` (same index and name as the input), ``changed`` (cells whose
    value changed; missing cells stay missing and never count), the distinct non-missing values
    ``before`` and ``after``, and the ``kind`` (and ``order`` of an ordinal) of the column once
    recoded: intervals are ordinal, hierarchy levels and mappings nominal."""

    values: pd.Series
    changed: int
    before: int
    after: int
    kind: AttributeKind
    order: tuple[str, ...] | None = None

    def figures(self) -> dict[str, int]:
        """Counts for a report: never a value."""
        return {"values_changed": self.changed, "distinct_before": self.before,
                "distinct_after": self.after}  # fmt: skip


def _where(column: str) -> str:
    return f"column {column!r}" if column else "the column"


def _finish(
    series: pd.Series,
    codes: np.ndarray,
    uniques: Sequence[object],
    new_of_unique: Sequence[object],
    kind: AttributeKind,
    order: tuple[str, ...] | None = None,
) -> Recoded:
    """The recoded series from the factorized input (``codes`` -1 = missing) and the new value of
    each distinct value; cells changed counted per distinct value (text compared, so 3 = 3.0)."""
    new_arr = np.empty(len(new_of_unique) + 1, dtype=object)
    new_arr[:-1] = list(new_of_unique)
    new_arr[-1] = None
    values = pd.Series(new_arr[codes], index=series.index, name=series.name, dtype=object)
    counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
    same = np.array(
        [value_key(u) == value_key(v) for u, v in zip(uniques, new_of_unique, strict=True)],
        dtype=bool,
    )
    changed = int(counts[~same].sum()) if len(uniques) else 0
    after = len({value_key(v) for v, c in zip(new_of_unique, counts, strict=True) if c})
    return Recoded(values, changed, int((counts > 0).sum()), after, kind, order)


def recode_level(series: pd.Series, hierarchy: Hierarchy, level: int, column: str = "") -> Recoded:
    """Every value of ``series`` replaced by its generalization at ``level`` of ``hierarchy``
    (0: the values themselves, ``hierarchy.height``: the root). Values the hierarchy lacks are
    refused with their count."""
    if isinstance(level, bool) or not isinstance(level, int | np.integer):
        raise InvalidParameter(f"recoding {_where(column)}: level {level!r} is not a whole number")
    if not 0 <= int(level) <= hierarchy.height:
        raise InvalidParameter(
            f"recoding {_where(column)}: level {level} is outside hierarchy {hierarchy.name}, "
            f"whose levels are 0 (the values) to {hierarchy.height} (the root)"
        )
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    keys = [value_key(u) for u in uniques]
    ids = hierarchy._leaf_ids(keys)
    _refuse_unmapped(codes, ids < 0, column, f"not in hierarchy {hierarchy.name}")
    new = [hierarchy.paths[int(i)][int(level)] for i in ids]
    return _finish(series, codes, list(uniques), new, AttributeKind.NOMINAL)


def _refuse_unmapped(codes: np.ndarray, bad_unique: np.ndarray, column: str, why: str) -> None:
    """Refuse the column when a distinct value is unmapped, with the counts only."""
    if not bad_unique.any():
        return
    counts = np.bincount(codes[codes >= 0], minlength=len(bad_unique))
    n_values = int(bad_unique.sum())
    n_rows = int(counts[bad_unique].sum())
    raise InvalidInput(
        f"recoding {_where(column)}: {n_values:,} distinct value(s) in {n_rows:,} row(s) are "
        f"{why}; every value must be recoded (add them, or choose another recoding)"
    )


def _numbers(series: pd.Series, column: str, what: str) -> np.ndarray:
    """The column as floats (missing: NaN); text that is not a number is refused with its count."""
    numeric = pd.to_numeric(series, errors="coerce")
    bad = numeric.isna() & series.notna()
    if bad.any():
        raise InvalidInput(
            f"{what} {_where(column)}: {int(bad.sum()):,} cell(s) are not numbers; "
            f"{what} needs a numeric column"
        )
    return np.asarray(numeric, dtype=float)


def _number_text(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return value_key(float(x))


def interval_label(low: float, high: float, last: bool) -> str:
    """``[20, 25)``; the last interval is closed on both ends, ``[85, 90]`` (open at infinity)."""
    close = "]" if last and math.isfinite(high) else ")"
    return f"[{_number_text(low)}, {_number_text(high)}{close}"


def _parse_breaks(breaks: Sequence[object], column: str) -> np.ndarray:
    out: list[float] = []
    for b in breaks:
        try:
            value = float(str(b).strip()) if isinstance(b, str) else float(b)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InvalidParameter(
                f"recoding {_where(column)}: break {b!r} is not a number (give numbers, or "
                "'-inf'/'inf' for open ends)"
            ) from None
        if math.isnan(value):
            raise InvalidParameter(f"recoding {_where(column)}: a break is NaN; give numbers")
        out.append(value)
    arr = np.asarray(out, dtype=float)
    if len(arr) < 2:
        raise InvalidParameter(
            f"recoding {_where(column)}: give at least two breaks (the ends of one interval)"
        )
    if len(arr) > MAX_BINS + 1:
        raise InvalidParameter(
            f"recoding {_where(column)}: {len(arr) - 1:,} intervals; at most {MAX_BINS:,}"
        )
    if not bool(np.all(np.diff(arr) > 0)):
        raise InvalidParameter(
            f"recoding {_where(column)}: the breaks must increase strictly (each once)"
        )
    return arr


def recode_intervals(
    series: pd.Series,
    breaks: Sequence[object] | None = None,
    *,
    bins: int | None = None,
    column: str = "",
) -> Recoded:
    """A numeric column recoded to intervals ``[b_i, b_{i+1})`` (the last closed), either at the
    given ``breaks`` (increasing; ``-inf``/``inf`` allowed as open ends) or at ``bins``
    equal-frequency breaks (sdcMicro's ``globalRecode(method="equalAmount")``). Values outside
    the breaks are refused with their count. The column becomes ordinal, its intervals in order."""
    if (breaks is None) == (bins is None):
        raise InvalidParameter(
            f"recoding {_where(column)} to intervals: give either breaks or a number of bins"
        )
    x = _numbers(series, column, "interval recoding of")
    finite = x[~np.isnan(x)]
    if bins is not None:
        if (
            isinstance(bins, bool)
            or not isinstance(bins, int | np.integer)
            or not (1 <= int(bins) <= MAX_BINS)
        ):
            raise InvalidParameter(
                f"recoding {_where(column)}: bins {bins!r} must be a whole number from 1 to "
                f"{MAX_BINS:,}"
            )
        if not len(finite):
            raise InvalidInput(f"recoding {_where(column)}: the column has no value to bin")
        # a break is the first value of its bin (intervals are closed on the left): the value
        # at rank ceil(q * n) of the sorted column, so bin i holds about n / bins values
        ranked = np.sort(finite)
        at = np.ceil(np.linspace(0.0, 1.0, int(bins) + 1)[1:-1] * len(ranked)).astype(np.int64)
        quantiles = ranked[np.clip(at, 0, len(ranked) - 1)]
        edges = np.unique(np.concatenate([[finite.min()], quantiles, [finite.max()]]))
        if len(edges) == 1:  # a constant column: one interval holding it
            edges = np.array([edges[0], edges[0] + 1.0])
    else:
        edges = _parse_breaks(breaks, column)  # type: ignore[arg-type]
    below = int((finite < edges[0]).sum())
    above = int((finite > edges[-1]).sum())
    if below or above:
        raise InvalidInput(
            f"recoding {_where(column)}: {below:,} value(s) below the first break and {above:,} "
            "above the last; widen the breaks (or give -inf/inf as open ends)"
        )
    n = len(edges) - 1
    labels = tuple(interval_label(edges[i], edges[i + 1], i == n - 1) for i in range(n))
    # through the distinct values, so that _finish counts the changes per value
    codes, uniques = pd.factorize(pd.Series(x), use_na_sentinel=True)
    uniq = np.asarray(uniques, dtype=float)
    # the last break falls in the last, closed interval
    uidx = np.clip(np.searchsorted(edges, uniq, side="right") - 1, 0, n - 1)
    new = [labels[int(i)] for i in uidx]
    return _finish(series, codes, list(uniq), new, AttributeKind.ORDINAL, labels)


def read_mapping(path: str | os.PathLike[str]) -> dict[str, str]:
    """A mapping file: JSON (an object ``{"from": "to", ...}``, or a list of ``[from, to]`` pairs)
    or CSV/TSV with two columns (a header row ``from,to`` is allowed). A value listed twice is
    refused (sdcMicro's ``groupAndRename``: "each level ... listed only once"), by line and
    count, never by value."""
    raw = read_side_file(path, "mapping file", MAX_MAPPING_BYTES)
    name = os.path.basename(os.fspath(path))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    stripped = text.lstrip()
    pairs: list[tuple[str, str, int]] = []
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text, object_pairs_hook=list)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"mapping file {name!r} is not valid JSON (line {exc.lineno}); give an object "
                '{"from": "to", ...}'
            ) from None
        items = data if isinstance(data, list) else []
        for n, item in enumerate(items, start=1):
            if not (isinstance(item, list | tuple) and len(item) == 2):
                raise InvalidInput(
                    f"mapping file {name!r}: entry {n} is not a pair from -> to; give an object "
                    '{"from": "to", ...} or a list of [from, to] pairs'
                )
            src, dst = item
            if isinstance(dst, dict | list) or dst is None:
                raise InvalidInput(
                    f"mapping file {name!r}: entry {n} maps to a {type(dst).__name__}; give text"
                )
            pairs.append((value_key(src), value_key(dst), n))
    else:
        sample = text[:4096]
        delimiter = (
            "\t"
            if "\t" in sample and "," not in sample
            else (";" if ";" in sample and "," not in sample else ",")
        )
        for n, row in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), start=1):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != 2:
                raise InvalidInput(
                    f"mapping file {name!r} line {n} has {len(row)} cell(s); give two: from,to"
                )
            if n == 1 and [c.strip().lower() for c in row] == ["from", "to"]:
                continue
            pairs.append((row[0].strip(), row[1].strip(), n))
    if not pairs:
        raise InvalidInput(f"mapping file {name!r} maps nothing; give one from,to pair a line")
    out: dict[str, str] = {}
    twice: list[int] = []
    for src, dst, n in pairs:
        if src in out:
            twice.append(n)
        out[src] = dst
    if twice:
        raise InvalidInput(
            f"mapping file {name!r} lists {len(twice):,} value(s) more than once (first at "
            f"{'entry' if stripped.startswith(('{', '[')) else 'line'} {twice[0]}); list each "
            "value once"
        )
    return out


def recode_mapping(series: pd.Series, mapping: Mapping[str, str], column: str = "") -> Recoded:
    """Every value of ``series`` replaced by ``mapping[value]`` (matched as text: 3.0 matches
    ``"3"``); values the mapping lacks are refused with their count. The column becomes
    nominal."""
    if not mapping:
        raise InvalidParameter(f"recoding {_where(column)}: the mapping is empty")
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    keys = [value_key(u) for u in uniques]
    bad = np.array([k not in mapping for k in keys], dtype=bool)
    _refuse_unmapped(codes, bad, column, "not in the mapping")
    return _finish(series, codes, list(uniques), [mapping[k] for k in keys], AttributeKind.NOMINAL)


def top_bottom_code(
    series: pd.Series,
    *,
    top: float | None = None,
    bottom: float | None = None,
    top_value: object = None,
    bottom_value: object = None,
    column: str = "",
) -> Recoded:
    """sdcMicro's ``topBotCoding``: values above ``top`` become ``top_value`` (default: ``top``),
    values below ``bottom`` become ``bottom_value`` (default: ``bottom``). With numeric
    replacements the column stays continuous; with a label (``"90+"``) it becomes ordinal:
    bottom label, the numbers in order, top label."""
    if top is None and bottom is None:
        raise InvalidParameter(f"top/bottom coding of {_where(column)}: give top, bottom or both")
    x = _numbers(series, column, "top/bottom coding of")
    hi = _threshold(top, column, "top")
    lo = _threshold(bottom, column, "bottom")
    if hi is not None and lo is not None and lo > hi:
        raise InvalidParameter(
            f"top/bottom coding of {_where(column)}: bottom {_number_text(lo)} is above top "
            f"{_number_text(hi)}"
        )
    top_rep = _replacement(top_value, hi)
    bottom_rep = _replacement(bottom_value, lo)
    over = x > hi if hi is not None else np.zeros(len(x), dtype=bool)
    under = x < lo if lo is not None else np.zeros(len(x), dtype=bool)
    missing = np.isnan(x)
    before = int(pd.Series(x[~missing]).nunique())
    if not (isinstance(top_rep, str) or isinstance(bottom_rep, str)):
        y = x.copy()
        y[over] = top_rep
        y[under] = bottom_rep
        changed = int(((x != y) & ~missing).sum())
        values = pd.Series(y, index=series.index, name=series.name)
        if pd.api.types.is_integer_dtype(series.dtype) and bool(
            np.all(np.mod(y, 1) == 0)
        ):  # whole thresholds keep an integer column integer
            values = values.astype(series.dtype)
        return Recoded(values, changed, before, int(pd.Series(y[~missing]).nunique()),
                       AttributeKind.CONTINUOUS)  # fmt: skip
    # a label: the column becomes text, ordinal from the bottom label up to the top label
    text = np.empty(len(x), dtype=object)
    kept = ~(over | under | missing)
    kept_numbers = np.unique(x[kept])
    text_of = {float(v): value_key(float(v)) for v in kept_numbers}
    text[kept] = [text_of[float(v)] for v in x[kept]]
    text[over] = value_key(top_rep) if not isinstance(top_rep, str) else top_rep
    text[under] = value_key(bottom_rep) if not isinstance(bottom_rep, str) else bottom_rep
    text[missing] = None
    order = tuple(
        dict.fromkeys(
            ([str(text[under][0])] if under.any() else [])
            + [text_of[float(v)] for v in kept_numbers]
            + ([str(text[over][0])] if over.any() else [])
        )
    )
    values = pd.Series(text, index=series.index, name=series.name, dtype=object)
    changed = int((over | under).sum())
    after = int(values.dropna().nunique())
    return Recoded(values, changed, before, after, AttributeKind.ORDINAL, order)


def _threshold(value: object, column: str, what: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidParameter(
            f"top/bottom coding of {_where(column)}: {what} {value!r} is not a number"
        ) from None
    if not math.isfinite(number) or isinstance(value, bool):
        raise InvalidParameter(
            f"top/bottom coding of {_where(column)}: {what} must be a finite number"
        )
    return number


def _replacement(value: object, threshold: float | None) -> object:
    """The replacement: the threshold by default, a number, or a label (text)."""
    if threshold is None:
        return None
    if value is None:
        return threshold
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        return text
