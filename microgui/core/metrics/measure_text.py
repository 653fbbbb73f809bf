"""How a measure is written for a person: one format for one quantity in every view, report and
command (issue 30: Adult's lower bound on the loss read "0.000 %" in the Results view and
"0.0001307" in the run history).

Plain Python, no numpy: the command line's ``--version`` path imports it.
"""

from __future__ import annotations

import math

__all__ = ["TINY", "finite_number", "format_measure", "format_percent"]

#: Measures smaller than this in magnitude are shown as 0 (they are float noise: every measure
#: microgui shows is a percentage, a count or a rate of at most a few thousand).
TINY = 1e-12


def finite_number(value: object) -> float | None:
    """``value`` as a finite float, or None (None, a bool, text that is no number, NaN, ±inf)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def format_measure(value: object, unit: str = "") -> str:
    """A measure as text: integers as they are, reals with 4 significant digits (so a small
    non-zero value never reads as zero: 0.0001307, not 0.000; never in e-notation), None
    as '—'."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        text = f"{value:,}"
    else:
        number = finite_number(value)
        if number is None:
            return "—"
        if abs(number) < TINY:  # float noise around an exact zero: 9.743e-16 is 0
            number = 0.0
        if abs(number) >= 1e4:
            text = f"{number:,.0f}"
        elif 0 < abs(number) < 1e-4:  # 0.00001441, not 1.441e-05 (cut in a narrow column)
            text = f"{number:.{3 - math.floor(math.log10(abs(number)))}f}".rstrip("0")
        else:
            text = f"{number:.4g}"
    return f"{text} {unit}" if unit else text


def format_percent(value: object) -> str:
    """A percentage measure (information loss, its lower bound) as "10.97 %": the format of
    :func:`format_measure` with the unit."""
    return format_measure(value, "%")
