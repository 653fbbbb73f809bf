"""The heatmaps' cell values drawn by one item (:class:`CellTextItem`): each text centred on its
cell at a fixed pixel size, whatever the view's scale; none drawn without a font."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QImage

from microgui.qt.plots.cell_text import CellTextItem


def _dark_pixels(widget: Any) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_Grayscale8)
    w, h, stride = image.width(), image.height(), image.bytesPerLine()
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(h, stride)[:, :w]
    return rows < 100


def test_cell_texts_are_drawn_at_their_cells_and_hidden_without_a_font(qtbot: Any) -> None:
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.setBackground("w")
    widget.resize(400, 400)
    plot = widget.getPlotItem()
    plot.hideAxis("left")
    plot.hideAxis("bottom")
    cells = CellTextItem()
    plot.addItem(cells)
    cells.set_cells([(0.5, 0.5, "8.88", "#000000"), (1.5, 1.5, "8.88", "#000000")])
    plot.setRange(xRange=(0, 2), yRange=(0, 2), padding=0)
    assert cells.texts == ["8.88", "8.88"] and not cells.shown
    assert cells.boundingRect().getRect() == (0.0, 0.0, 2.0, 2.0)
    assert not _dark_pixels(widget).any()  # no font: nothing drawn

    font = QFont()
    font.setPointSizeF(14)
    cells.set_font(font)
    dark = _dark_pixels(widget)
    assert cells.shown and dark.any()
    view = plot.getViewBox()
    ys, xs = np.nonzero(dark)
    for x, y in ((0.5, 0.5), (1.5, 1.5)):
        centre = view.mapViewToScene(pg.Point(x, y))
        near = (np.abs(xs - centre.x()) < 40) & (np.abs(ys - centre.y()) < 20)
        assert near.any(), (x, y)
    # nothing drawn in the empty cells (y axis up: (0.5, 1.5) is the top left cell)
    for x, y in ((0.5, 1.5), (1.5, 0.5)):
        centre = view.mapViewToScene(pg.Point(x, y))
        near = (np.abs(xs - centre.x()) < 60) & (np.abs(ys - centre.y()) < 40)
        assert not near.any(), (x, y)
    cells.clear()
    assert not cells.texts and not _dark_pixels(widget).any()
