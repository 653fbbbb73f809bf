"""A plot's legend drawn by one item: a symbol and a text per entry, in as many columns as fit.

:class:`LegendStrip` replaces a :class:`pyqtgraph.LegendItem` under the groups plot: a
LegendItem makes a :class:`pyqtgraph.LabelItem` (a QGraphicsTextItem and its HTML document) and an
ItemSample per entry and lays them out in a QGraphicsGridLayout; trying 3, 2 and 1 columns to find
the widest that fits the view cost about 35 ms of the GUI thread after every Adult run (issue 29:
no hold above 100 ms while a run is drawn). Here the entries are measured with
:class:`QFontMetrics` and painted in one :meth:`paint`, as
:class:`microgui.qt.plots.cell_text.CellTextItem` does for a heatmap's cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen

__all__ = ["LegendEntry", "LegendStrip", "legend_below"]

#: A sample's square (pyqtgraph's ItemSample: 20 × 20 pixels, the symbol at its centre).
SAMPLE = 20.0
#: Pixels between a sample and its text (pyqtgraph: 5 of grid spacing and 4 of the label's
#: document margin).
TEXT_GAP = 9.0
#: Pixels after an entry's text before the next column (the label's margin and the spacing).
COLUMN_GAP = 9.0
#: Pixels between the frame and the entries.
MARGIN = 8.0
#: Pixels above and below a text line (the label's document margins).
TEXT_PAD = 4.0
#: The texts' point size (pyqtgraph's legend default, 9 pt).
POINT_SIZE = 9.0


@dataclass(frozen=True)
class LegendEntry:
    """One entry: a scatter symbol (pyqtgraph's names: "o", "x", …) of ``size`` pixels filled
    with ``brush``, and its text (plain). With a ``pen``, the symbol is outlined in it (a
    ring: ``brush`` empty); with a ``pen`` and no symbol (``""``), a line is drawn in it across
    the sample instead (a curve's entry: the tree's edges)."""

    symbol: str
    size: float
    brush: QBrush
    text: str
    pen: QPen | None = None


class LegendStrip(pg.GraphicsWidget):
    """Legend entries in a frame, laid out row by row in the most columns (of ``columns``, most
    first) whose width fits the room given to :meth:`set_entries`; one item paints them all."""

    def __init__(
        self,
        columns: Sequence[int] = (3, 2, 1),
        text_colour: str = "#222222",
        pen: Any = "#bbbbbb",
        brush: Any = (255, 255, 255, 220),
    ) -> None:
        super().__init__()
        self.columns_tried = tuple(columns)
        self._text_pen = QPen(QColor(text_colour))
        self._frame_pen = pg.mkPen(pen)
        self._frame_brush = pg.mkBrush(brush)
        self.font = QFont()
        self.font.setPointSizeF(POINT_SIZE)
        self._metrics = QFontMetricsF(self.font)
        self._entries: list[LegendEntry] = []
        #: The column count chosen by the last :meth:`set_entries` (0: empty).
        self.column_count = 0
        self._cells: list[tuple[float, float, LegendEntry]] = []  # x, y of each entry's sample
        self._size = (0.0, 0.0)
        self.setFlag(self.GraphicsItemFlag.ItemHasNoContents, False)

    @property
    def entries(self) -> list[LegendEntry]:
        return list(self._entries)

    @property
    def texts(self) -> list[str]:
        """The entries' texts, in order."""
        return [e.text for e in self._entries]

    @property
    def items(self) -> list[tuple[LegendEntry, str]]:
        """(entry, text) of each entry: the shape of :attr:`pyqtgraph.LegendItem.items`, which
        layout checks walk."""
        return [(e, e.text) for e in self._entries]

    def row_height(self) -> float:
        return max(SAMPLE, round(self._metrics.height() + 2 * TEXT_PAD))

    def _layout(self, columns: int) -> tuple[float, float, list[tuple[float, float, LegendEntry]]]:
        """Width, height and the sample positions of the entries in ``columns`` columns."""
        entries = self._entries
        if not entries:
            return 0.0, 0.0, []
        columns = max(1, min(columns, len(entries)))
        widths = [0.0] * columns
        for i, entry in enumerate(entries):
            text = self._metrics.horizontalAdvance(entry.text)
            widths[i % columns] = max(widths[i % columns], SAMPLE + TEXT_GAP + text)
        row_h = self.row_height()
        cells = []
        for i, entry in enumerate(entries):
            col, row = i % columns, i // columns
            x = MARGIN + sum(widths[:col]) + COLUMN_GAP * col
            cells.append((x, MARGIN + row * row_h, entry))
        rows = (len(entries) + columns - 1) // columns
        width = 2 * MARGIN + sum(widths) + COLUMN_GAP * (columns - 1) + TEXT_PAD
        return width, 2 * MARGIN + rows * row_h, cells

    def set_entries(self, entries: Sequence[LegendEntry], room: float) -> None:
        """Show these entries in the most columns whose width is at most ``room`` pixels (one
        column when none fits)."""
        self._entries = list(entries)
        chosen = None
        for columns in self.columns_tried:
            width, height, cells = self._layout(columns)
            chosen = (columns, width, height, cells)
            if columns == 1 or width <= room:
                break
        assert chosen is not None
        columns, width, height, cells = chosen
        self.column_count = min(columns, len(self._entries))
        self._cells = cells
        self.prepareGeometryChange()
        self._size = (width, height)
        self.resize(width, height)
        self.update()

    def clear(self) -> None:
        self.set_entries([], 0.0)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return QRectF(0.0, 0.0, *self._size)

    def paint(self, painter: QPainter, *_args: Any) -> None:
        if not self._entries:
            return
        painter.setPen(self._frame_pen)
        painter.setBrush(self._frame_brush)
        painter.drawRect(self.boundingRect())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setFont(self.font)
        row_h = self.row_height()
        no_pen = pg.mkPen(None)
        for x, y, entry in self._cells:
            painter.save()
            painter.translate(x + SAMPLE / 2, y + row_h / 2)
            if entry.pen is not None and entry.symbol:  # an outlined symbol (a ring)
                drawSymbol(painter, entry.symbol, entry.size, entry.pen, entry.brush)
            elif entry.pen is not None:
                painter.setPen(entry.pen)
                painter.drawLine(QPointF(-SAMPLE / 2 + 1, 0.0), QPointF(SAMPLE / 2 - 1, 0.0))
            else:
                drawSymbol(painter, entry.symbol, entry.size, no_pen, entry.brush)
            painter.restore()
            painter.setPen(self._text_pen)
            text_rect = QRectF(x + SAMPLE + TEXT_GAP, y, 10_000.0, row_h)
            painter.drawText(
                text_rect,
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                entry.text,
            )


def legend_below(
    plot_item: pg.PlotItem, row: int, columns: Sequence[int]
) -> tuple[pg.GraphicsWidget, LegendStrip]:
    """A hidden :class:`LegendStrip` (``columns``: the column counts it may lay out) in a holder
    cell of ``plot_item``'s layout at (``row``, 1), under the view: outside the data, where a
    legend cannot hide records (issue 30). The holder is 0 px tall until the owner sets its
    height to the legend's; a LegendStrip cannot be the cell itself (pyqtgraph places a legend
    at (0, 0) when it resizes). Returns (holder, legend)."""
    holder = pg.GraphicsWidget()
    holder.setFixedHeight(0)
    plot_item.layout.addItem(holder, row, 1)
    legend = LegendStrip(columns)
    legend.setParentItem(holder)
    legend.setPos(1, 1)
    legend.setVisible(False)
    return holder, legend
