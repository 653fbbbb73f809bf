"""Plot titles of several lines.

pyqtgraph fixes a plot's title row at 30 pixels (``PlotItem.setTitle``), so a second line is cut
off at the top whenever there is no room above the plot. :func:`set_plot_title` gives the row the
height of the lines it holds.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg

__all__ = ["set_plot_title", "LINE_HEIGHT"]

#: Pixels per extra title line (a 9-10 pt line with its leading).
LINE_HEIGHT = 17


def set_plot_title(plot_item: pg.PlotItem, title: str, **args: Any) -> None:
    """``plot_item.setTitle(title, **args)`` with a title row tall enough for every line
    (lines are separated by ``<br>``)."""
    plot_item.setTitle(title, **args)
    height = 30 + LINE_HEIGHT * title.count("<br>")
    plot_item.titleLabel.setMaximumHeight(height)
    plot_item.layout.setRowFixedHeight(0, height)
