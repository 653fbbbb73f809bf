"""Exporting a chart: PNG and SVG files (pyqtgraph exporters) and PNG bytes of what is drawn.

A chart widget offers :func:`export_button`, a small tool button whose menu saves the chart.
A saved chart is what the screen shows; a chart that draws the original records (the comparison
plot) says so in its menu, tooltip and file dialog, since such a file must not be released
(issue 12). The HTML report never uses these: its charts are built from released values
(:mod:`microgui.core.release.report_charts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMenu, QToolButton, QWidget

from microgui.core.errors import ExportRefused

__all__ = [
    "export_png",
    "export_svg",
    "export_chart",
    "png_bytes",
    "chart_png",
    "export_button",
    "ORIGINALS_WARNING",
]


def export_png(item: pg.PlotItem | pg.GraphicsLayout, path: str | Path, width: int = 1600) -> Path:
    """Write the chart as a PNG ``width`` pixels wide (height in proportion)."""
    exporter = ImageExporter(item)
    # The exporter's parameters are floats internally; an int width warns on some versions.
    exporter.parameters()["width"] = int(width)
    exporter.export(str(path))
    return Path(path)


def export_svg(item: pg.PlotItem | pg.GraphicsLayout, path: str | Path) -> Path:
    """Write the chart as SVG (vector: scales in a report or a paper).

    pyqtgraph's SVGExporter first; with Qt versions whose SVG paths end in "Z" it fails while
    rewriting coordinates (pyqtgraph issue #3485), and Qt's own QSvgGenerator then draws the
    same scene region.
    """
    try:
        SVGExporter(item).export(str(path))
    except ValueError:
        _qt_svg(item, Path(path))
    return Path(path)


def _qt_svg(item: pg.PlotItem | pg.GraphicsLayout, path: Path) -> None:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    source = item.sceneBoundingRect()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(int(source.width()), int(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle("microgui chart")
    painter = QPainter(generator)
    try:
        item.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    finally:
        painter.end()


def export_chart(
    item: pg.PlotItem | pg.GraphicsLayout,
    path: str | Path,
    *,
    protect_from: Sequence[str | Path] = (),
) -> Path:
    """Write PNG or SVG by the file's suffix (no suffix: PNG). Refused (:class:`ExportRefused`,
    before anything is drawn) over a file of ``protect_from`` (the files the session read, by
    inode), a folder or a special file, as every writer of the app."""
    from microgui.core.io import check_write_targets

    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png"):
        path = path.with_suffix(".png")
    check_write_targets([path], protect_from=list(protect_from))
    if path.suffix.lower() == ".svg":
        return export_svg(item, path)
    return export_png(item, path)


def png_bytes(widget: QWidget) -> bytes:
    """The widget as it is drawn, as PNG bytes (never for the HTML report: issue 12)."""
    image: QImage = widget.grab().toImage()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


#: Said wherever a chart that draws the original records can be saved.
ORIGINALS_WARNING = (
    "It shows the original records: keep the file for your own use, do not release it "
    "(the HTML report shows released values only)."
)


def export_button(
    parent: QWidget, item_of: object, default_name: str, *, shows_originals: bool = False
) -> QToolButton:
    """An "Export" tool button whose menu saves the chart ``item_of()`` as PNG or SVG.

    ``shows_originals``: the chart draws the original records; the menu entries, the tooltip
    and the file dialog say so (:data:`ORIGINALS_WARNING`)."""
    button = QToolButton(parent)
    button.setText("Export ▾")
    tip = "Save this chart as a PNG image or an SVG drawing"
    button.setToolTip(f"{tip}. {ORIGINALS_WARNING}" if shows_originals else tip)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    menu = QMenu(button)
    title = "Export the chart (original records: not for release)" if shows_originals else ""

    def save(suffix: str, name_filter: str) -> None:
        path, _f = QFileDialog.getSaveFileName(
            parent, title or "Export the chart", default_name + suffix, name_filter
        )
        if not path:
            return
        window = parent.window()
        controller = getattr(window, "controller", None)
        read = controller.read_files() if controller is not None else []
        try:
            export_chart(
                item_of(),  # type: ignore[operator]
                Path(path) if Path(path).suffix else Path(path + suffix),
                protect_from=read,
            )
        except ExportRefused as exc:
            show = getattr(window, "show_error", None)
            if show is None:
                raise
            show(str(exc), title="Cannot export the chart")

    which = " (original records, not for release)" if shows_originals else ""
    menu.addAction(f"Save as PNG{which}…", lambda: save(".png", "PNG images (*.png)"))
    menu.addAction(f"Save as SVG{which}…", lambda: save(".svg", "SVG drawings (*.svg)"))
    button.setMenu(menu)
    return button


def chart_png(item: pg.PlotItem | pg.GraphicsLayout, width: int = 1200) -> bytes:
    """The chart drawn by the PNG exporter, as PNG bytes (never for the HTML report, whose
    charts are built from released values: issue 12)."""
    exporter = ImageExporter(item)
    exporter.parameters()["width"] = int(width)
    image = exporter.export(toBytes=True)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())
