"""Clean numbers in releases (issue 13, item 6).

An aggregated value is a mean computed in binary floating point: the mean of the integers 1565,
1565, 1566, 1566, 1565 is 1565.4, but ``sum / 5`` gives 1565.4000000000008, and a release would
print that noise. Means are taken of the values as read (never of z-scores turned back, which
adds noise relative to the whole column), and every aggregated continuous value that is a short
decimal (at most 4 decimals more than its column is written with) plus a few units in the last
place is released as that decimal (:func:`clean_decimals`),
stored as the double nearest to it, which prints (Python's shortest round-trip ``repr``, which
pandas' CSV writer uses) as ``1565.4``. A value with no short decimal form (4147.571428571428,
or a full-precision double of the data) is released exactly as computed. A column whose released
values are all whole numbers is written without a decimal point (``39``, not ``39.0``).

``round`` (``--round source|N``, a parameter of every aggregating method) goes further and
rounds the aggregated values to the source column's own decimals (``source``: integers stay
integers, a column written with one decimal keeps one) or to N decimals. Rounding keeps
k-anonymity (records with equal values stay equal) and moves each value by at most half a unit
of the last decimal; its effect on the information loss is reported (``rounding`` in the run
report: the decimals per column and the IL before rounding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "unique_rows",
    "SIGNIFICANT_DIGITS",
    "NOISE_ULPS",
    "EXTRA_DECIMALS",
    "written_decimals",
    "ROUND_CHOICES",
    "MAX_ROUND_DECIMALS",
    "clean_decimals",
    "source_decimals",
    "round_decimals",
    "clean_column",
    "whole_numbers_written_plain",
]

#: The most significant decimal digits kept of an aggregated value (a double holds 15 to 17).
SIGNIFICANT_DIGITS = 15
#: Float noise: at most this many units in the last place (ulp) between a computed value and
#: the short decimal it stands for.
NOISE_ULPS = 16
#: A cleaned mean may have this many decimals more than its column's data (a group size of 16
#: adds 4: 1/16 = 0.0625).
EXTRA_DECIMALS = 4
#: A column holding a value with this many significant digits or more is taken as
#: full-precision doubles (a simulation's output): its values are neither cleaned (noise cannot
#: be told from data) nor rounded by ``round=source``.
FULL_PRECISION_DIGITS = 15
#: The most decimals ``round=N`` takes.
MAX_ROUND_DECIMALS = 10
#: The values of the ``round`` parameter: none, source, or a number of decimals.
ROUND_CHOICES: tuple[str, ...] = (
    "none",
    "source",
    *(str(d) for d in range(MAX_ROUND_DECIMALS + 1)),
)


def clean_decimals(values: np.ndarray, decimals: int | None, scale: float = 0.0) -> np.ndarray:
    """The values of a column written with ``decimals`` decimals, cleaned of float noise.

    A mean of values with ``d`` decimals is a decimal with ``d`` more digits for each factor of
    2 or 5 in the group size, and otherwise has no finite decimal form. Each value is compared
    with itself rounded to ``d + EXTRA_DECIMALS`` decimals; when the two differ by at most
    :data:`NOISE_ULPS` units in the last place (ulp) the difference is noise (1565.4000000000008
    is 1565.4 plus 3.5 ulp) and the rounded value is released (as the nearest double, which
    prints as that decimal). Otherwise (4147.571428571428...) the value is left exactly as it
    is. ``decimals=None`` (a column of full-precision doubles, whose noise cannot be told from
    data) leaves every value as it is. A value within ``NOISE_ULPS`` ulp of ``scale`` (the
    magnitude of its column) from zero becomes 0. NaN and infinities are unchanged.

    >>> float(clean_decimals(np.array([349.3999999999993]), 0)[0])
    349.4
    """
    x = np.asarray(values, dtype=np.float64)
    out = x.copy()
    finite = np.isfinite(x)
    if scale > 0:
        out[finite & (np.abs(x) <= NOISE_ULPS * np.spacing(scale))] = 0.0
    if decimals is None or decimals + EXTRA_DECIMALS > 300:
        return out
    unit = 10.0 ** (decimals + EXTRA_DECIMALS)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = x * unit
    # beyond 2^52 a double has no fraction left to clean
    todo = np.flatnonzero(finite & (out != 0) & (np.abs(scaled) < 2.0**52))
    candidate = np.round(scaled[todo]) / unit
    close = np.abs(candidate - x[todo]) <= NOISE_ULPS * np.spacing(np.abs(x[todo]))
    out[todo[close]] = candidate[close]
    return out


def round_decimals(values: np.ndarray, decimals: int) -> np.ndarray:
    """``values`` rounded half to even to ``decimals`` decimals, as clean doubles."""
    x = np.asarray(values, dtype=np.float64)
    if decimals > 300:
        return x.copy()
    scale = 10.0**decimals
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = x * scale
    # beyond 2^52 a double has no fraction left to round
    small = np.isfinite(scaled) & (np.abs(scaled) < 2.0**52)
    out = x.copy()
    out[small] = np.round(scaled[small]) / scale  # the double nearest to the decimal
    return out


def _digits(mantissa: str) -> tuple[int, int]:
    """(decimals, significant digits) of a plain decimal text such as ``-0.00250``."""
    whole, _, fraction = mantissa.lstrip("+-").partition(".")
    fraction = fraction.rstrip("0")
    significant = len((whole + fraction).lstrip("0")) or 1
    return len(fraction), significant


def written_decimals(series: pd.Series) -> int | None:
    """The most decimals the column's values need: 0 for whole numbers; ``72.5`` (or ``72,5``)
    1; ``2.858e-10`` 13 (what the exponent adds counts). None when a value carries
    :data:`FULL_PRECISION_DIGITS` significant digits or more (full-precision doubles, a
    simulation's output: no decimal form to keep). Text is read as numbers first (a decimal
    comma too); cells that are no number are ignored.

    Fast on large columns: the shortest form (``repr``) of up to :data:`_SAMPLE` distinct values
    gives a first answer, and one vectorised pass per decimal checks it on every value."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_integer_dtype(series):
        return 0
    if pd.api.types.is_float_dtype(series):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        text = series.astype("string").str.strip().str.replace(",", ".", regex=False)
        numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    finite = numbers[np.isfinite(numbers)]
    if len(finite) > _HEAD and _shortest_forms(pd.unique(finite[:_HEAD])[:_SAMPLE]) is None:
        # pd.unique keeps the order of first appearance: the head's distinct values are the
        # column's first ones, in the same order, so the full-precision value met among them
        # is met by the pass below too (issue 33: the column was hashed whole, 0.013 s a
        # column of 100,000 under load, to find its first value had 17 digits)
        return None
    values = pd.unique(finite)
    if not len(values):
        return 0
    sampled = _shortest_forms(values[:_SAMPLE])
    if sampled is None:
        return None
    best = sampled
    if len(values) <= _SAMPLE:
        return best
    for decimals in range(best, best + FULL_PRECISION_DIGITS + 1):
        if decimals > 300:
            break
        unit = 10.0**decimals
        with np.errstate(over="ignore", invalid="ignore"):
            if bool(np.all(np.round(values * unit) / unit == values)):
                return decimals
    return None


#: Distinct values whose shortest form :func:`written_decimals` reads one by one.
_SAMPLE = 2_000
#: Values :func:`written_decimals` looks at first, before it hashes the whole column.
_HEAD = 4_096


def _shortest_forms(values: np.ndarray) -> int | None:
    """The most decimals the shortest forms (``repr``) of ``values`` need, in their order; None
    at the first value carrying :data:`FULL_PRECISION_DIGITS` significant digits or more."""
    best = 0
    for v in values:
        mantissa, _, exponent = repr(float(v)).lower().partition("e")
        decimals, significant = _digits(mantissa)
        if significant >= FULL_PRECISION_DIGITS:
            return None
        best = max(best, decimals - (int(exponent) if exponent else 0))
    return best


#: The decimals ``round=source`` rounds a column to: those it is written with (None: a column of
#: full-precision doubles, left unrounded).
source_decimals = written_decimals


def clean_column(values: np.ndarray) -> np.ndarray:
    """A released continuous column ready to write: whole numbers as int64 when every value is
    one (printed without ``.0``), else the clean doubles."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) and bool(np.isfinite(x).all()) and bool((np.abs(x) < 2.0**53).all()):
        if bool((x == np.round(x)).all()):
            return x.astype(np.int64)
    return x


def release_numbers(
    protected: pd.DataFrame,
    source: pd.DataFrame,
    columns: Sequence[str],
    mode: str,
) -> tuple[pd.DataFrame, dict[str, int | None]]:
    """``protected`` with its aggregated continuous ``columns`` cleaned (and rounded by
    ``mode``: ``none``, ``source`` or a number of decimals); returns the frame and the decimals
    used per column (empty for ``none``). Columns that are not float (a generalization method's
    text) are left as they are."""
    if mode not in ROUND_CHOICES:
        raise ValueError(f"round={mode!r} must be one of {', '.join(ROUND_CHOICES)}")
    out = protected.copy(deep=False)
    used: dict[str, int | None] = {}
    for col in columns:
        if col not in out.columns or not pd.api.types.is_float_dtype(out[col]):
            continue
        values = out[col].to_numpy(dtype=np.float64)
        finite = values[np.isfinite(values)]
        scale = float(np.abs(finite).max()) if len(finite) else 0.0
        written = written_decimals(source[col])
        if mode == "none":
            cleaned = clean_decimals(values, written, scale)
        else:
            decimals = source_decimals(source[col]) if mode == "source" else int(mode)
            used[col] = decimals
            cleaned = clean_decimals(values, written, scale)
            if decimals is not None:  # None: full-precision doubles, left as they are
                # cleaned first, so 2.4999999999999996 (a 2.5) rounds as 2.5 does
                cleaned = round_decimals(cleaned, decimals)
        cleaned = cleaned + 0.0  # -0.0 (a negative mean rounded to 0) is written 0
        out[col] = pd.Series(clean_column(cleaned), index=out.index)
    return out, used


def whole_numbers_written_plain(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` for writing: in the float ``columns`` (the aggregated quasi-identifiers), whole
    values become integers (``39``, not ``39.0``; ``-0.0`` is ``0``), others stay as they are.
    The column is then of object type, for the file only."""
    out = frame
    for col in columns:
        if col not in frame.columns or not pd.api.types.is_float_dtype(frame[col]):
            continue
        values = frame[col].to_numpy(dtype=np.float64)
        whole = np.isfinite(values) & (values == np.round(values))
        if not whole.any():
            continue
        cells = values.astype(object)
        cells[whole] = [int(v) for v in values[whole]]
        if out is frame:
            out = frame.copy(deep=False)
        out[col] = pd.Series(cells, index=frame.index, dtype=object)
    return out


def rounding_report(
    used: Mapping[str, int | None], mode: str, loss_before: float | None
) -> dict[str, object]:
    """The ``rounding`` entry of a run report."""
    return {
        "round": mode,
        "decimals": dict(used),
        "information_loss_unrounded": loss_before,
    }


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)``,
    rows in the same (lexicographic) order, without holding the GIL for long.

    ``np.unique(axis=0)`` sorts a structured view and holds the GIL throughout (555 ms at
    350,000 × 10 here), freezing the app's window while the measures run in the worker;
    ``np.lexsort`` releases it. Returns (unique rows, index of each one's first occurrence,
    inverse (n,), counts).
    """
    m = np.ascontiguousarray(a)
    if m.ndim != 2:
        raise ValueError("unique_rows takes a 2-D array")
    n = m.shape[0]
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return m[:0], empty, empty, empty
    order = np.lexsort(m.T[::-1]) if m.shape[1] else np.arange(n)  # column 0 first, stable
    ordered = m[order]
    new = np.ones(n, dtype=bool)
    if m.shape[1]:
        new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    else:
        new[1:] = False
    group = np.cumsum(new) - 1
    first = order[new]
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(new), n))
    return m[first], first.astype(np.int64), inverse, counts.astype(np.int64)
