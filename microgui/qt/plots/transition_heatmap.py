"""A transition heatmap: records by original category (rows) and released category (columns).

A view (STYLE.md §5): it paints a table of counts computed in core
(:func:`microgui.core.views.projection.category_transitions`) and keeps nothing else. Painted with
QPainter rather than pyqtgraph, because its labels must stay readable: row labels on the left,
column labels written upwards above the columns (no overlap however many categories), the
original totals beside the row labels; a count in every non-empty cell, in the largest font
that fits and, when even 7 pt does not fit the exact count, in thousands ("12.3k",
:meth:`TransitionHeatmap.legend_text` says so and the tooltip gives the exact count); the diagonal (category unchanged) outlined; a
colour bar in the top left corner, and the released totals in a last row. Colour: the count on a log scale (1 record is visible
beside 10,000), or each cell's share of its row (the probability that a record of that
original category is released as that category). Above the widget's size the cells keep a
minimum size and the scroll area around the widget scrolls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QLinearGradient,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

__all__ = ["TransitionHeatmap", "COLOUR_MODES", "heat_colour", "format_count"]

#: How cells are coloured: by count (log scale) or by share of the row.
COLOUR_MODES = ("count", "row share")
#: Light to dark blue (the groups plot's density colours): value 0..1 to colour.
_STOPS: tuple[tuple[float, tuple[int, int, int]], ...] = (
    (0.0, (239, 243, 255)),
    (0.25, (189, 215, 238)),
    (0.5, (107, 174, 214)),
    (0.75, (33, 113, 181)),
    (1.0, (8, 48, 107)),
)
_DIAGONAL_PEN = QColor("#d94801")  # orange: stands out from every blue
_GRID = QColor("#d9d9d9")
_TEXT = QColor("#222222")
_MIN_CELL = 22
_MAX_CELL = 72
_MARGIN = 8
#: The colour bar sits above the row labels: at least this wide.
_BAR_MIN_WIDTH = 130


def heat_colour(value: float) -> QColor:
    """The colour of a value in [0, 1] (clipped) on the heatmap's scale."""
    v = min(max(float(value), 0.0), 1.0)
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:], strict=False):
        if v <= b:
            t = (v - a) / (b - a) if b > a else 0.0
            return QColor(*(round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True)))
    return QColor(*_STOPS[-1][1])


def format_count(count: int, compact: bool) -> str:
    """A cell's count: exact with thousands separators, or in thousands when ``compact``."""
    if compact and count >= 1000:
        value = count / 1000
        return f"{value:.1f}k" if value < 9.95 else f"{value:.0f}k"
    return f"{count:,}"


@dataclass(frozen=True)
class _Layout:
    left: float  # x of the grid
    top: float  # y of the grid
    cell_w: float
    cell_h: float
    font: QFont
    compact: bool


class TransitionHeatmap(QWidget):
    """Paints one transition table (see the module docstring). ``legend_changed`` is emitted
    when :meth:`legend_text` may have changed (new table, colour mode or size)."""

    legend_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table: pd.DataFrame | None = None
        self.colour_mode = COLOUR_MODES[0]
        #: True when the last layout writes counts of 1,000 or more in thousands.
        self.compact = False
        self._counts = np.zeros((0, 0), dtype=np.int64)
        self._row_labels: list[str] = []
        self._col_labels: list[str] = []
        self.label_font = QFont()
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # content ------------------------------------------------------------------------------
    def set_table(self, table: pd.DataFrame | None) -> None:
        """Show a transition table (None: nothing)."""
        self.table = table
        if table is None:
            self._counts = np.zeros((0, 0), dtype=np.int64)
            self._row_labels, self._col_labels = [], []
        else:
            self._counts = table.to_numpy(dtype=np.int64)
            rows = self._counts.sum(axis=1)
            self._row_labels = [f"{r}  ({n:,})" for r, n in zip(table.index, rows, strict=True)]
            self._col_labels = [str(c) for c in table.columns]
        self.updateGeometry()
        self.update()
        self.legend_changed.emit()

    def set_colour_mode(self, mode: str) -> None:
        if mode not in COLOUR_MODES:
            raise ValueError(f"colour mode must be one of {', '.join(COLOUR_MODES)}, not {mode!r}")
        self.colour_mode = mode
        self.update()
        self.legend_changed.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self.legend_changed.emit()

    def cell_values(self) -> np.ndarray:
        """The value in [0, 1] each cell is coloured by (NaN: an empty cell, left white)."""
        counts = self._counts.astype(np.float64)
        if not counts.size:
            return counts
        if self.colour_mode == "row share":
            totals = counts.sum(axis=1, keepdims=True)
            values = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        else:
            top = math.log10(1.0 + float(counts.max())) or 1.0
            values = np.log10(1.0 + counts) / top
        return np.where(counts > 0, values, np.nan)

    def legend_text(self) -> str:
        """What the colours, outlines and numbers mean (for a caption beside the widget)."""
        colour = (
            "colour = share of the original category's records (row %)"
            if self.colour_mode == "row share"
            else "colour = records per cell (log scale)"
        )
        text = (
            f"Rows: original category (its records); columns: released category; {colour}; "
            "outlined: unchanged (diagonal); white: no record; last row: records released "
            "with each category."
        )
        lay = self._layout(self.width(), self.height())
        if lay is not None and lay.compact and bool((self._counts >= 1000).any()):
            text += " Counts of 1,000 or more in thousands (k): hover a cell for the exact count."
        return text

    # geometry -----------------------------------------------------------------------------
    def _line(self) -> float:
        return float(QFontMetrics(self.label_font).height())

    def _corner_titles(self) -> tuple[str, str]:
        return "released category →", "original category ↓"

    def _frame(self) -> tuple[float, float]:
        """(left, top) of the grid: room for the row labels and the upright column labels."""
        metrics = QFontMetrics(self.label_font)
        bold = QFont(self.label_font)
        bold.setBold(True)
        row_w = max(
            [metrics.horizontalAdvance(t) for t in (*self._row_labels, "all records")]
            + [QFontMetrics(bold).horizontalAdvance(t) for t in self._corner_titles()]
        )
        col_w = max((metrics.horizontalAdvance(t) for t in self._col_labels), default=0)
        row_w = max(row_w, _BAR_MIN_WIDTH)
        left = _MARGIN + row_w + 10
        top = _MARGIN + max(col_w + 8, self._bar_height() + 2 * self._line() + 12)
        return float(left), float(top)

    def _bar_height(self) -> float:
        """The colour bar in the top left corner: bar, tick labels, unit."""
        return 12 + 4 + 2 * self._line()

    def _layout(self, width: float, height: float) -> _Layout | None:
        if not self._counts.size:
            return None
        n_rows, n_cols = self._counts.shape
        n_rows += 1  # the totals row
        left, top = self._frame()
        room_w = width - left - _MARGIN
        room_h = height - top - _MARGIN
        peak = int(max(self._counts.max(), self._counts.sum(axis=0).max()))
        choice: tuple[QFont, float, float, bool] | None = None
        for compact in (False, True):
            for size in (9.0, 8.0, 7.0):
                font = QFont(self.label_font)
                font.setPointSizeF(size)
                metrics = QFontMetrics(font)
                need_w = max(metrics.horizontalAdvance(format_count(peak, compact)) + 6, _MIN_CELL)
                need_h = max(metrics.height() + 3, 16)
                choice = (font, float(need_w), float(need_h), compact)
                if need_w * n_cols <= room_w:
                    break
            else:
                continue
            break
        assert choice is not None
        font, need_w, need_h, compact = choice
        cell_w = min(max(need_w, room_w / n_cols), _MAX_CELL)
        cell_h = min(max(need_h, room_h / n_rows), _MAX_CELL * 0.5)
        return _Layout(left, top, cell_w, cell_h, font, compact)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return self.minimumSizeHint().expandedTo(QSize(480, 360))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        if not self._counts.size:
            return QSize(200, 120)
        n_rows, n_cols = self._counts.shape
        lay = self._layout(0, 0)
        assert lay is not None
        w = lay.left + n_cols * lay.cell_w + _MARGIN
        h = lay.top + (n_rows + 1) * lay.cell_h + _MARGIN
        return QSize(math.ceil(w), math.ceil(h))

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(row, column) of the table cell under a point of the widget, or None."""
        lay = self._layout(self.width(), self.height())
        if lay is None:
            return None
        n_rows, n_cols = self._counts.shape
        c = math.floor((x - lay.left) / lay.cell_w)
        r = math.floor((y - lay.top) / lay.cell_h)
        if 0 <= r < n_rows and 0 <= c < n_cols:
            return r, c
        return None

    def cell_rect(self, row: int, col: int) -> QRectF:
        """Where a table cell is drawn (for tests and tooltips)."""
        lay = self._layout(self.width(), self.height())
        if lay is None:
            return QRectF()
        return QRectF(
            lay.left + col * lay.cell_w, lay.top + row * lay.cell_h, lay.cell_w, lay.cell_h
        )

    # painting -----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), QColor("white"))
            lay = self._layout(self.width(), self.height())
            if lay is not None and self.table is not None:
                self._paint(painter, lay)
        finally:
            painter.end()

    def _paint(self, painter: QPainter, lay: _Layout) -> None:
        counts = self._counts
        n_rows, n_cols = counts.shape
        values = self.cell_values()
        self.compact = lay.compact and bool((counts >= 1000).any())
        line = self._line()
        grid_w, grid_h = n_cols * lay.cell_w, n_rows * lay.cell_h
        right_of = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        left_of = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        centre = int(Qt.AlignmentFlag.AlignCenter)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)

        # the corner: what the rows and the columns are
        bold = QFont(self.label_font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(_TEXT)
        released, original = self._corner_titles()
        label_w = lay.left - _MARGIN - 6
        painter.drawText(QRectF(_MARGIN, lay.top - 2 * line - 6, label_w, line), right_of, released)
        painter.drawText(QRectF(_MARGIN, lay.top - line - 2, label_w, line), left_of, original)

        # row labels against the grid; column labels written upwards above it
        painter.setFont(self.label_font)
        for r, text in enumerate(self._row_labels):
            rect = QRectF(_MARGIN, lay.top + r * lay.cell_h, label_w, lay.cell_h)
            painter.drawText(rect, right_of, text)
        for c, text in enumerate(self._col_labels):
            painter.save()
            painter.translate(QPointF(lay.left + (c + 0.5) * lay.cell_w, lay.top - 6))
            painter.rotate(-90)
            painter.drawText(QRectF(0, -line / 2, lay.top, line), left_of, text)
            painter.restore()

        # cells
        painter.setFont(lay.font)
        for r in range(n_rows):
            for c in range(n_cols):
                rect = QRectF(
                    lay.left + c * lay.cell_w, lay.top + r * lay.cell_h, lay.cell_w, lay.cell_h
                )
                value = values[r, c]
                if np.isnan(value):
                    continue
                fill = heat_colour(float(value))
                painter.fillRect(rect, fill)
                painter.setPen(_TEXT if fill.lightnessF() > 0.55 else QColor("white"))
                painter.drawText(rect, centre, format_count(int(counts[r, c]), lay.compact))
        # the totals row: records released with each category
        y_total = lay.top + grid_h
        grey = QColor("#555555")
        painter.setPen(grey)
        for c, total in enumerate(counts.sum(axis=0)):
            rect = QRectF(lay.left + c * lay.cell_w, y_total, lay.cell_w, lay.cell_h)
            painter.drawText(rect, centre, format_count(int(total), lay.compact))
        painter.setFont(self.label_font)
        painter.drawText(QRectF(_MARGIN, y_total, label_w, lay.cell_h), right_of, "all records")

        painter.setPen(QPen(_GRID, 1))
        for r in range(n_rows + 1):
            y = lay.top + r * lay.cell_h
            painter.drawLine(QPointF(lay.left, y), QPointF(lay.left + grid_w, y))
        for c in range(n_cols + 1):
            x = lay.left + c * lay.cell_w
            painter.drawLine(QPointF(x, lay.top), QPointF(x, y_total))
        # the diagonal: category unchanged
        pen = QPen(_DIAGONAL_PEN, 2)
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        for i in range(min(n_rows, n_cols)):
            painter.drawRect(
                QRectF(
                    lay.left + i * lay.cell_w + 1,
                    lay.top + i * lay.cell_h + 1,
                    lay.cell_w - 2,
                    lay.cell_h - 2,
                )
            )
        self._paint_colour_bar(painter, _MARGIN, _MARGIN, lay.left - 10 - 2 * _MARGIN)

    def _paint_colour_bar(self, painter: QPainter, x: float, y: float, width: float) -> None:
        metrics = QFontMetrics(self.label_font)
        painter.setFont(self.label_font)
        gradient = QLinearGradient(QPointF(x, 0), QPointF(x + width, 0))
        for stop, rgb in _STOPS:
            gradient.setColorAt(stop, QColor(*rgb))
        bar = QRectF(x, y, width, 12)
        painter.fillRect(bar, gradient)
        painter.setPen(QPen(QColor("#888888"), 1))
        painter.drawRect(bar)
        painter.setPen(_TEXT)
        ticks: list[tuple[float, str]]
        if self.colour_mode == "row share":
            ticks = [(v, f"{v:.0%}") for v in (0.0, 0.25, 0.5, 0.75, 1.0)]
            unit = "of the row"
        else:
            peak = max(int(self._counts.max()) if self._counts.size else 1, 1)
            top = math.log10(1.0 + peak) or 1.0
            steps = sorted({10**e for e in range(0, 10) if 10**e <= peak})
            ticks = [
                (math.log10(1.0 + s) / top, f"{s // 1000:,}k" if s >= 1000 else str(s))
                for s in steps
            ]
            unit = "records (log scale)"
        last_right = -1e9
        baseline = y + 16 + metrics.ascent()
        for value, text in ticks:
            tx = x + value * width
            painter.drawLine(QPointF(tx, y + 12), QPointF(tx, y + 15))
            w = metrics.horizontalAdvance(text)
            left = min(max(tx - w / 2, x - 4), x + width - w + 4)
            if left < last_right + 6:
                continue  # would overprint its neighbour
            painter.drawText(QPointF(left, baseline), text)
            last_right = left + w
        painter.drawText(QPointF(x, baseline + metrics.height()), unit)

    # tooltips -----------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            cell = self.cell_at(event.pos().x(), event.pos().y())
            if cell is None or self.table is None:
                QToolTip.hideText()
                event.ignore()
                return True
            QToolTip.showText(event.globalPos(), self.cell_text(*cell), self)
            return True
        return super().event(event)

    def cell_text(self, row: int, col: int) -> str:
        """The tooltip of a cell: its categories, count and shares."""
        assert self.table is not None
        count = int(self._counts[row, col])
        row_total = int(self._counts[row].sum())
        share = f"{count / row_total:.1%}" if row_total else "—"
        original, released = self.table.index[row], self.table.columns[col]
        what = "kept as" if row == col else "released as"
        return (
            f"original {original} → {what} {released}: {count:,} record(s), "
            f"{share} of the {row_total:,} record(s) of {original}"
        )
