"""Plain-text tables for the console (the command line and the benchmark)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["text_table"]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Columns padded to their widest cell (right-aligned where ``right`` names the column
    index), two spaces apart, with a rule of dashes under the header."""
    lines = [[_visible(c) for c in header], *[[_visible(c) for c in r] for r in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for i, line in enumerate(lines):
        cells = [
            cell.rjust(w) if j in right else cell.ljust(w)
            for j, (cell, w) in enumerate(zip(line, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


#: Control characters as a terminal should show them in a table cell (a column named "note\rx"
#: printed raw moved the cursor and showed "notex").
_CONTROL = {i: f"\\x{i:02x}" for i in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}


def _visible(cell: str) -> str:
    return cell.translate(_CONTROL)
