"""Values written in the cells of a heatmap: the largest font that fits, or none.

:class:`CellTextItem` draws every cell's value from one item: a :class:`pyqtgraph.TextItem` per
cell (a QGraphicsTextItem, its document, its transform signals) cost about 1 ms of the GUI thread
each to make and place, ~80 ms for the 8 × 8 dependency matrix of Adult (issue 29: no hold
above 100 ms when a view is drawn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter

__all__ = ["cell_font", "CellTextItem"]

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


class CellTextItem(pg.GraphicsObject):
    """Texts centred on points of a plot (data coordinates), drawn upright at a fixed font size
    whatever the view's scale, all by one item. ``set_font(None)`` hides them."""

    def __init__(self) -> None:
        super().__init__()
        self._cells: list[tuple[QPointF, str, QColor]] = []
        self._font: QFont | None = None
        self._bounds = QRectF()

    @property
    def texts(self) -> list[str]:
        """The texts, in the order given."""
        return [text for _p, text, _c in self._cells]

    @property
    def shown(self) -> bool:
        """Whether the texts are drawn (a font fits and there are texts)."""
        return self._font is not None and bool(self._cells)

    def set_cells(self, cells: Sequence[tuple[float, float, str, str | QColor]]) -> None:
        """``(x, y, text, colour)`` of each text, centred on (x, y)."""
        self.prepareGeometryChange()
        self._cells = [(QPointF(x, y), text, QColor(colour)) for x, y, text, colour in cells]
        if self._cells:
            xs = [p.x() for p, _t, _c in self._cells]
            ys = [p.y() for p, _t, _c in self._cells]
            self._bounds = QRectF(min(xs) - 0.5, min(ys) - 0.5, max(xs) - min(xs) + 1.0,
                                  max(ys) - min(ys) + 1.0)  # fmt: skip
        else:
            self._bounds = QRectF()
        self.update()

    def clear(self) -> None:
        self.set_cells([])

    def set_font(self, font: QFont | None) -> None:
        self._font = None if font is None else QFont(font)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, *_args: Any) -> None:
        if self._font is None or not self._cells:
            return
        to_device = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setFont(self._font)
        height = QFontMetrics(self._font).height() * 2.0
        for point, text, colour in self._cells:
            at = to_device.map(point)
            painter.setPen(colour)
            painter.drawText(
                QRectF(at.x() - 200.0, at.y() - height / 2, 400.0, height),
                Qt.AlignmentFlag.AlignCenter,
                text,
            )
        painter.restore()
