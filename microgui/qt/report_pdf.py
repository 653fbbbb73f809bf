"""The release report as PDF (issue 18): the report's HTML printed through Qt's own text engine
(``QTextDocument`` onto a ``QPdfWriter``), no new dependency.

Qt's HTML engine draws no SVG, so each chart's SVG (:func:`microgui.core.release.report_charts.chart_svg`,
the very drawing the HTML embeds) is first drawn by ``QSvgRenderer`` into a picture at three
times its size (sharp when printed) and the page refers to it by name
(``build_report_html(chart_html=...)``). Pages are A4 with 15 mm margins, numbered at the foot.

Used by the app's "Save report" (PDF chosen) and by ``microgui protect --report-pdf``; the command
line has no window, so :func:`ensure_gui_application` starts a headless Qt application
(Qt's ``offscreen`` platform when no display is set).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF, QUrl
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QTextDocument,
)
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from microgui._version import __version__
from microgui.core.release.report_charts import ReportChart, chart_svg

__all__ = [
    "ensure_gui_application",
    "headless_printer",
    "report_pdf",
    "CHART_WIDTH",
    "CHART_HEIGHT",
]

#: The charts' size in the page (CSS pixels of the SVG; the picture is drawn at SCALE times it).
CHART_WIDTH, CHART_HEIGHT = 640, 380
SCALE = 3

_APP: QApplication | None = None


def ensure_gui_application(*, headless: bool = False) -> None:
    """A Qt application for drawing text and pictures: the running one (the app's), else a
    headless one (``offscreen`` when there is no display, as on a server). A ``QApplication``,
    not the lighter ``QGuiApplication``: the process's one application may later have to carry
    widgets (a test session that prints a report, then opens the app). ``headless``: Qt's
    ``offscreen`` platform whatever the environment says (the command line, the API), started
    by the caller before any file is written, so that Qt failing to start leaves nothing."""
    global _APP
    if QGuiApplication.instance() is not None:
        return
    if headless:
        # the command line and the API print without a window: never a display, whose failure
        # (a DISPLAY set but unreachable) would abort the process
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif (
        sys.platform.startswith("linux")
        and not os.environ.get("QT_QPA_PLATFORM")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    _APP = QApplication(["microgui"])


def _chart_image(chart: ReportChart) -> QImage:
    svg = chart_svg(chart, width=CHART_WIDTH, height=CHART_HEIGHT)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    image = QImage(CHART_WIDTH * SCALE, CHART_HEIGHT * SCALE, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
    finally:
        painter.end()
    return image


def report_pdf(
    make_html: Callable[[Callable[[int, ReportChart], str] | None], str],
    charts: Sequence[ReportChart],
    *,
    title: str = "microgui report",
) -> bytes:
    """The PDF of a report: ``make_html(chart_html)`` gives the page with the given way of
    placing chart i (:func:`microgui.core.release.report_html.build_report_html`'s ``chart_html``);
    ``charts`` are the same charts, drawn here as pictures."""
    ensure_gui_application()
    document = QTextDocument()
    for i, chart in enumerate(charts):
        document.addResource(
            QTextDocument.ResourceType.ImageResource, QUrl(f"chart-{i}.png"), _chart_image(chart)
        )
    width = 600  # of the page's ~680 CSS px of text width: the SVG's proportions kept
    height = round(width * CHART_HEIGHT / CHART_WIDTH)

    def image_tag(i: int, _chart: ReportChart) -> str:
        return f"<img src='chart-{i}.png' width='{width}' height='{height}'>"

    document.setHtml(make_html(image_tag))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setTitle(title)
    writer.setCreator(f"microgui {__version__}")
    writer.setResolution(300)
    writer.setPageLayout(
        QPageLayout(
            QPageSize(QPageSize.PageSizeId.A4),
            QPageLayout.Orientation.Portrait,
            QMarginsF(15, 15, 15, 15),
            QPageLayout.Unit.Millimeter,
        )
    )
    document.setPageSize(QSizeF())  # invalid: print() lays the pages out and numbers them
    document.print_(writer)
    del writer  # finishes the file
    buffer.close()
    return bytes(buffer.data().data())


def headless_printer() -> Callable[..., bytes]:
    """:func:`report_pdf` for a process without a window (the command line, the API), with Qt
    started offscreen now, before the caller writes any file (Qt failing to start aborts)."""
    ensure_gui_application(headless=True)
    return report_pdf
