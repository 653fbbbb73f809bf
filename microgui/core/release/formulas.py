"""The spreadsheet formula rule (OWASP "CSV Injection"), one place for every release writer.

A cell (or a line of a multi-line cell) starting with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is run as a formula by a spreadsheet; plain numbers (``-3.5``) are not.
:func:`neutralized` puts a ``'`` before each such line. Used by
:mod:`microgui.core.release.check` (cells and column names) and :mod:`microgui.core.release` (SPSS and
Stata labels).
"""

from __future__ import annotations

import re

__all__ = ["FORMULA_PREFIXES", "neutralized"]

#: Leading characters that make a spreadsheet read a cell as a formula (OWASP CSV Injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


_LINE_START = ("=", "+", "-", "@", "\t")
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


def neutralized(value: str) -> str | None:
    """``value`` with a ``'`` before each line a spreadsheet would run; None when none would."""
    parts = _LINE_BREAK.split(value)  # line, break, line, break, ...
    changed = False
    if value.startswith(FORMULA_PREFIXES) and _PLAIN_NUMBER.fullmatch(value) is None:
        parts[0] = "'" + parts[0]
        changed = True
    for i in range(2, len(parts), 2):
        line = parts[i]
        if line.startswith(_LINE_START) and _PLAIN_NUMBER.fullmatch(line) is None:
            parts[i] = "'" + line
            changed = True
    return "".join(parts) if changed else None
