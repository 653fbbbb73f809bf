"""Clean numbers in releases (issue 13, item 6).

An aggregated value is a mean computed in binary floating point: the mean of the integers 1565,
1565, 1566, 1566, 1565 is 1565.4, but the arithmetic (z-scores and back, ``sum / 5``) gives
1565.4000000000008, and a release would print that noise. microgui therefore releases every
aggregated continuous value as the *shortest* decimal within :data:`RELATIVE_PRECISION` of the
computed value (one part in 10^12: the float arithmetic's own error is a few parts in 10^14,
and no data set is measured to 12 significant digits), stored as the double nearest to that
decimal. It prints (Python's shortest round-trip ``repr``, which pandas' CSV writer uses) as
``1565.4``; a mean such as 4147.571428571428... keeps 13 significant digits. A column whose
released values are all whole numbers is written without a decimal point (``39``, not
``39.0``).

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
    "ROUND_CHOICES",
    "MAX_ROUND_DECIMALS",
    "clean_decimals",
    "significant",
    "source_decimals",
    "round_decimals",
    "clean_column",
]

#: The most significant decimal digits kept of an aggregated value (a double holds 15 to 17).
SIGNIFICANT_DIGITS = 15
#: A released value is the shortest decimal within this relative distance of the computed one.
RELATIVE_PRECISION = 1e-12
#: ... or within this many units of the last place of its column's largest magnitude (the error
#: of z-scoring and back, which does not shrink with the value: a mean of zeros comes out 1e-10).
NOISE_ULPS = 64
#: The most decimals ``round=N`` takes.
MAX_ROUND_DECIMALS = 10
#: The values of the ``round`` parameter: none, source, or a number of decimals.
ROUND_CHOICES: tuple[str, ...] = (
    "none",
    "source",
    *(str(d) for d in range(MAX_ROUND_DECIMALS + 1)),
)
_DECIMALS = re.compile(r"^\s*[+-]?\d*[.,](\d+)\s*$")


def clean_decimals(
    values: np.ndarray, tolerance: float = RELATIVE_PRECISION, scale: float = 0.0
) -> np.ndarray:
    """Each finite value replaced by the shortest decimal (1 to :data:`SIGNIFICANT_DIGITS`
    significant digits) within ``max(tolerance · |value|, NOISE_ULPS · eps · scale)`` of it, as
    the nearest double; NaN and infinities unchanged. ``scale`` is the magnitude of the column
    the values belong to (:func:`release_numbers` passes the largest magnitude in it): float
    error is relative to the numbers the arithmetic went through, so a mean of zeros computed
    in a column of millions may come out as 1e-10, which this makes 0 again.

    >>> float(clean_decimals(np.array([349.399999999999]))[0])
    349.4
    """
    x = np.asarray(values, dtype=np.float64)
    out = x.copy()
    todo = np.flatnonzero(np.isfinite(x) & (x != 0))
    allowed = np.maximum(tolerance * np.abs(x), NOISE_ULPS * np.finfo(np.float64).eps * scale)
    near_zero = todo[np.abs(x[todo]) <= allowed[todo]]
    out[near_zero] = 0.0
    todo = np.setdiff1d(todo, near_zero)
    for digits in range(1, SIGNIFICANT_DIGITS + 1):
        if not len(todo):
            break
        candidate = significant(x[todo], digits)
        close = np.abs(candidate - x[todo]) <= allowed[todo]
        out[todo[close]] = candidate[close]
        todo = todo[~close]
    if len(todo):
        out[todo] = significant(x[todo], SIGNIFICANT_DIGITS)
    return out


def significant(values: np.ndarray, digits: int) -> np.ndarray:
    """Each finite value replaced by the double nearest to its first ``digits`` significant
    decimal digits (NaN and infinities unchanged).

    Vectorised: ``round(x·10^s) / 10^s`` with ``s = digits - 1 - floor(log10 |x|)`` is exact
    up to the final division, which IEEE arithmetic rounds correctly because both operands are
    exact (an integer below 2^53 and a power of ten up to 10^22); for ``s < 0`` (fewer digits
    than the integer part has) ``round(x / 10^-s) · 10^-s``. Values out of that range go through
    the decimal text instead.

    >>> float(significant(np.array([1565.4000000000008]), 15)[0])
    1565.4
    """
    x = np.asarray(values, dtype=np.float64)
    out = x.copy()
    nonzero = np.isfinite(x) & (x != 0)
    if not nonzero.any():
        return out
    idx = np.flatnonzero(nonzero)
    v = x[idx]
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log10(np.abs(v))).astype(np.int64)
    shift = digits - 1 - exponent
    direct = (shift >= 0) & (shift <= 22)
    if direct.any():
        scale = 10.0 ** shift[direct].astype(np.float64)
        out[idx[direct]] = np.round(v[direct] * scale) / scale
    coarse = (shift < 0) & (shift >= -22)
    if coarse.any():
        unit = 10.0 ** (-shift[coarse]).astype(np.float64)
        out[idx[coarse]] = np.round(v[coarse] / unit) * unit
    for i in idx[(shift > 22) | (shift < -22)]:
        out[i] = float(f"{x[i]:.{digits}g}")
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
    out[small] = np.round(scaled[small]) / scale
    return clean_decimals(out)


def source_decimals(series: pd.Series) -> int:
    """The most decimals the column's values are written with: 0 for whole numbers; for text
    (every column of a CSV) the digits after the decimal point or comma; for floats, of the
    shortest decimal that reads back to each value (at most :data:`MAX_ROUND_DECIMALS`)."""
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
        return int(min(max(best, 0), MAX_ROUND_DECIMALS))
    text = series.dropna().astype("string").str.strip()
    lengths = text.str.extract(_DECIMALS, expand=False).str.len()
    found = lengths.dropna()
    if not len(found):
        return 0
    return int(min(int(found.max()), MAX_ROUND_DECIMALS))


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
        if mode == "none":
            cleaned = clean_decimals(values, scale=scale)
        else:
            decimals = source_decimals(source[col]) if mode == "source" else int(mode)
            used[col] = decimals
            # cleaned first, so 2.4999999999999996 (a 2.5) rounds as 2.5 does
            cleaned = round_decimals(clean_decimals(values, scale=scale), decimals)
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
