"""Values written in the cells of a heatmap: the largest font that fits, or none."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetrics

__all__ = ["cell_font"]

#: Point sizes tried, largest first.
SIZES = (10.0, 9.0, 8.0, 7.0)


def cell_font(view_width: float, view_height: float, m: int, sample: str) -> QFont | None:
    """The largest font (7-10 pt) in which ``sample`` fits a cell of an m × m heatmap drawn in a
    view of this size (the view's 2 % padding on each side left out); None when none fits."""
    cell_w, cell_h = view_width / (m * 1.04), view_height / (m * 1.04)
    font = QFont()
    for size in SIZES:
        font.setPointSizeF(size)
        metrics = QFontMetrics(font)
        if metrics.horizontalAdvance(sample) + 4 <= cell_w and metrics.height() <= cell_h:
            return font
    return None
