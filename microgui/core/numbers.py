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

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
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
]

#: The most significant decimal digits kept of an aggregated value (a double holds 15 to 17).
SIGNIFICANT_DIGITS = 15
#: Float noise: at most this many units in the last place (ulp) between a computed value and
#: the short decimal it stands for.
NOISE_ULPS = 16
#: A cleaned mean may have this many decimals more than its column's data (a group size of 16
#: adds 4: 1/16 = 0.0625).
EXTRA_DECIMALS = 4
#: A column written with this many decimals or more is taken as full-precision doubles (a
#: simulation's output): its values are not cleaned, since noise cannot be told from data.
FULL_PRECISION_DECIMALS = 12
#: The most decimals ``round=N`` takes.
MAX_ROUND_DECIMALS = 10
#: The values of the ``round`` parameter: none, source, or a number of decimals.
ROUND_CHOICES: tuple[str, ...] = (
    "none",
    "source",
    *(str(d) for d in range(MAX_ROUND_DECIMALS + 1)),
)
_DECIMALS = re.compile(r"^\s*[+-]?\d*[.,](\d+)\s*$")


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
    if decimals is None:
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
    scale = 10.0**decimals
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = x * scale
    # beyond 2^52 a double has no fraction left to round
    small = np.isfinite(scaled) & (np.abs(scaled) < 2.0**52)
    out = x.copy()
    out[small] = np.round(scaled[small]) / scale  # the double nearest to the decimal
    return out


def written_decimals(series: pd.Series) -> int | None:
    """The most decimals the column's values are written with: 0 for whole numbers; for text
    (every column of a CSV) the digits after the decimal point or comma; for floats, of the
    shortest decimal that reads back to each value; None when that is
    :data:`FULL_PRECISION_DECIMALS` or more (full-precision doubles)."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_integer_dtype(series):
        return 0
    if pd.api.types.is_float_dtype(series):
        values = pd.unique(series.dropna().to_numpy(dtype=np.float64))
        best = 0
        for v in values[np.isfinite(values)]:
            shown = repr(float(v))
            if "e" in shown or "E" in shown:
                mantissa, _, exp = shown.lower().partition("e")
                frac = mantissa.partition(".")[2].rstrip("0")
                best = max(best, len(frac) - int(exp))
            else:
                best = max(best, len(shown.partition(".")[2].rstrip("0")))
            if best >= FULL_PRECISION_DECIMALS:
                return None
        return max(best, 0)
    text = series.dropna().astype("string").str.strip()
    lengths = text.str.extract(_DECIMALS, expand=False).str.len()
    found = lengths.dropna()
    if not len(found):
        return 0
    most = int(found.max())
    return None if most >= FULL_PRECISION_DECIMALS else most


def source_decimals(series: pd.Series) -> int:
    """The decimals ``round=source`` rounds the column to: :func:`written_decimals`, at most
    :data:`MAX_ROUND_DECIMALS`."""
    written = written_decimals(series)
    return MAX_ROUND_DECIMALS if written is None else min(written, MAX_ROUND_DECIMALS)


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
) -> tuple[pd.DataFrame, dict[str, int]]:
    """``protected`` with its aggregated continuous ``columns`` cleaned (and rounded by
    ``mode``: ``none``, ``source`` or a number of decimals); returns the frame and the decimals
    used per column (empty for ``none``). Columns that are not float (a generalization method's
    text) are left as they are."""
    if mode not in ROUND_CHOICES:
        raise ValueError(f"round={mode!r} must be one of {', '.join(ROUND_CHOICES)}")
    out = protected.copy(deep=False)
    used: dict[str, int] = {}
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
            # cleaned first, so 2.4999999999999996 (a 2.5) rounds as 2.5 does
            cleaned = round_decimals(clean_decimals(values, written, scale), decimals)
        out[col] = pd.Series(clean_column(cleaned), index=out.index)
    return out, used


def rounding_report(
    used: Mapping[str, int], mode: str, loss_before: float | None
) -> dict[str, object]:
    """The ``rounding`` entry of a run report."""
    return {
        "round": mode,
        "decimals": dict(used),
        "information_loss_unrounded": loss_before,
    }
