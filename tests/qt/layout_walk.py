"""Walk the visible widgets of a window and say which ones clip what they show (issue 30's check).

:func:`clipped_widgets` returns one line per problem (empty: nothing clipped), so that a test
failing on a laptop-sized window names every widget at once:

- a table, list or tree whose content does not fit its viewport must be able to scroll there
  (its scroll bar not switched off) and show at least one whole row and one whole column;
- a push button's text is never cut unless its tooltip says what it does;
- a label's text is never cut (wider or, wrapped, taller than the label) unless its tooltip
  gives it whole (a tooltip that only explains it does not);
- a scroll area that cannot scroll one way holds its widget within its viewport that way, and
  no visible widget inside it sticks out of the viewport that way (the Results dock's values
  were cut at the right at 1920 × 1080: the panel was wider than the dock, which does not
  scroll across);
- a verdict (a label whose object name ends in ``verdict``: the release's one line of judgment)
  lies whole inside the visible width of every scroll area that holds it: a scroll area that
  *can* scroll across still hides the verdict's end behind its scroll bar (a 20-digit seed
  widened the Results panel, and its verdict read "k-anonymous (k = 5); attribute disc…");
- a plot's legend lies inside the plot's widget; one drawn over a view box lies inside that view
  box (a deliberate in-plot legend), any other one covers no view box (a legend beside or below
  the plot); axis titles and plot titles lie inside the widget and no two axis titles overlap
  (compare's two y-axis titles were drawn on top of each other).
"""

from __future__ import annotations

import html
import re

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QRect, QRectF, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableView,
    QTreeView,
    QWidget,
)

from microgui.qt.plots.legend_strip import LegendStrip

__all__ = [
    "clipped_widgets",
    "settle_layouts",
    "describe",
    "visible_views",
    "TOLERANCE",
    "TEXT_TOLERANCE",
]

#: Pixels a rectangle may stick out (rounding of scene coordinates, pens of one pixel).
TOLERANCE = 2.0
#: Pixels a text item may stick out: pyqtgraph nudges axis titles 5 px outward, and the text
#: document's 4 px margins are blank.
TEXT_TOLERANCE = 8.0


def describe(widget: QWidget) -> str:
    """'QTableView compare_panel.table' style name: the class and the first named ancestors."""
    names = []
    w: QWidget | None = widget
    while w is not None and len(names) < 3:
        if w.objectName():
            names.append(w.objectName())
        w = w.parentWidget()
    title = widget.window().windowTitle() if widget.window() is not widget else ""
    where = " < ".join(names) if names else title
    return f"{type(widget).__name__}({where})"


def visible_views(window: QWidget) -> list[QAbstractItemView]:
    return [v for v in window.findChildren(QAbstractItemView) if v.isVisible()]


def settle_layouts() -> None:
    """Deliver the layout requests already posted (a label whose text changed in the last turn
    of the event loop asked for its new height; Qt lays it out before it paints it, so the
    screen never shows the old height). Deterministic: no waiting on a clock."""
    for _ in range(8):  # a layout that grows can post one for its parent: a few levels
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


def clipped_widgets(window: QWidget) -> list[str]:
    """Every visible widget of ``window`` that clips its content, as a line of text each (the
    layouts requested so far settled first: :func:`settle_layouts`)."""
    settle_layouts()
    problems: list[str] = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.width() <= 0 or widget.height() <= 0:
            continue
        if widget.visibleRegion().isEmpty():
            continue  # covered: a dock's tab behind another, a page scrolled away
        if isinstance(widget, QAbstractItemView):
            problems += _view_problems(widget)
        elif isinstance(widget, QLabel):
            problems += _label_problems(widget)
        elif isinstance(widget, QPushButton) and widget.text() and not widget.toolTip():
            # a push button narrower than its text cuts it (Cancel in a squeezed dock)
            needed = widget.fontMetrics().horizontalAdvance(widget.text().replace("&", ""))
            if needed > widget.contentsRect().width():
                problems.append(f"{describe(widget)} {widget.text()!r}: text cut")
        elif isinstance(widget, pg.GraphicsView):
            problems += _plot_problems(widget)
        if isinstance(widget, QScrollArea):
            problems += _scroll_area_problems(widget)
        if isinstance(widget, QLabel) and widget.objectName().endswith("verdict"):
            problems += _verdict_problems(widget)
    return problems


def _verdict_problems(label: QLabel) -> list[str]:
    """The verdict lies whole, across, inside each scroll area's viewport that holds it."""
    out = []
    parent = label.parentWidget()
    while parent is not None:
        area = parent.parentWidget()
        if isinstance(area, QScrollArea) and parent is area.viewport():
            port = area.viewport()
            left = label.mapTo(port, label.rect().topLeft()).x()
            right = left + label.width() - 1
            if left < -TOLERANCE or right > port.rect().right() + TOLERANCE:
                out.append(
                    f"{describe(label)} {re.sub('<[^>]+>', '', label.text())[:40]!r}: "
                    f"spans x {left}..{right}, "
                    f"its scroll area {describe(area)} shows 0..{port.rect().right()}"
                )
        parent = parent.parentWidget()
    return out


# scroll areas ---------------------------------------------------------------------------------
def _scroll_area_problems(area: QScrollArea) -> list[str]:
    inner = area.widget()
    if inner is None or not inner.isVisible():
        return []
    port = area.viewport()
    out = []
    name = describe(area)
    for axis, policy, port_size in (
        ("wide", area.horizontalScrollBarPolicy(), port.width()),
        ("tall", area.verticalScrollBarPolicy(), port.height()),
    ):
        if policy != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
            continue
        size = inner.width() if axis == "wide" else inner.height()
        if size > port_size + TOLERANCE:
            out.append(
                f"{name}: its widget is {size - port_size} px too {axis} and cannot scroll"
                + _widest_child(inner, axis, port_size)
            )
            continue
        for child in inner.findChildren(QWidget):
            if not child.isVisible() or child.width() <= 0 or child.height() <= 0:
                continue
            rect = QRect(child.mapTo(port, child.rect().topLeft()), child.size())
            end = rect.right() if axis == "wide" else rect.bottom()
            limit = port.rect().right() if axis == "wide" else port.rect().bottom()
            if end > limit + TOLERANCE:
                out.append(
                    f"{describe(child)}: {end - limit} px past its scroll area "
                    f"{describe(area)}, which cannot scroll that way"
                )
    return out


def _widest_child(inner: QWidget, axis: str, port_size: int) -> str:
    """The child that asks for the most room that way (what makes the widget too large)."""

    def need(child: QWidget) -> int:
        hint = child.minimumSizeHint()
        size = child.minimumSize()
        return (
            max(hint.width(), size.width()) if axis == "wide" else max(hint.height(), size.height())
        )

    shown = [c for c in inner.findChildren(QWidget) if c.isVisible() and c.parentWidget() is inner]
    if not shown:
        return ""
    widest = max(shown, key=need)
    return f" (widest: {describe(widest)}, {need(widest)} px for a {port_size} px viewport)"


# tables, lists, trees -------------------------------------------------------------------------
def _view_problems(view: QAbstractItemView) -> list[str]:
    if isinstance(view.parentWidget(), QAbstractItemView):
        return []  # a frozen column laid over its table, scrolled with it
    model = view.model()
    if model is None or model.rowCount(view.rootIndex()) == 0:
        return []
    shown = view.viewport().rect()
    width, height = _content_size(view)
    first_row, first_column = _first_row_height(view), _narrowest_column(view)
    out = []
    name = describe(view)
    for excess, policy, axis in (
        (width - shown.width(), view.horizontalScrollBarPolicy(), "wide"),
        (height - shown.height(), view.verticalScrollBarPolicy(), "tall"),
    ):
        if excess > TOLERANCE and policy == Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
            out.append(f"{name}: content {excess:.0f} px too {axis} and cannot scroll")
    if first_row and shown.height() + TOLERANCE < first_row:
        out.append(f"{name}: {shown.height()} px tall, less than one row ({first_row} px)")
    if first_column and shown.width() + TOLERANCE < first_column:
        out.append(f"{name}: {shown.width()} px wide, less than one column ({first_column} px)")
    return out


def _content_size(view: QAbstractItemView) -> tuple[float, float]:
    if isinstance(view, QTableView):
        return view.horizontalHeader().length(), view.verticalHeader().length()
    if isinstance(view, QTreeView):
        header = view.header()
        rows = view.model().rowCount(view.rootIndex())
        return header.length(), rows * max(_first_row_height(view), 1)
    # lists: the scroll bars' ranges are in items or pixels; the hint of the whole content
    hint = view.sizeHintForRow(0) * view.model().rowCount(view.rootIndex())
    return view.sizeHintForColumn(0), hint


def _first_row_height(view: QAbstractItemView) -> int:
    if isinstance(view, QTableView):
        return view.rowHeight(0)
    return max(view.visualRect(view.model().index(0, 0, view.rootIndex())).height(), 0)


def _narrowest_column(view: QAbstractItemView) -> int:
    if not isinstance(view, QTableView):
        return 0
    header = view.horizontalHeader()
    widths = [header.sectionSize(c) for c in range(header.count()) if not header.isSectionHidden(c)]
    return min(widths) if widths else 0


# labels ---------------------------------------------------------------------------------------
def _label_problems(label: QLabel) -> list[str]:
    text = label.text()
    if not text.strip() or _tooltip_gives(label):
        return []  # nothing to cut, or its tooltip gives it whole
    pixmap = label.pixmap()
    if pixmap is not None and not pixmap.isNull():
        return []
    name = f"{describe(label)} {text[:40]!r}"
    inner = label.contentsRect()
    if label.wordWrap():
        needed = label.heightForWidth(label.width())
        if needed > label.height() + TOLERANCE:
            return [f"{name}: wrapped text {needed} px tall in {label.height()} px"]
        return []
    hint = label.sizeHint()
    if hint.width() > label.width() + TOLERANCE and inner.width() < _text_width(label):
        return [f"{name}: text {_text_width(label)} px wide in {inner.width()} px"]
    if hint.height() > label.height() + TOLERANCE:
        return [f"{name}: text {hint.height()} px tall in {label.height()} px"]
    return []


def _plain(text: str) -> str:
    return " ".join(html.unescape(re.sub("<[^>]+>", " ", text)).split())


def _tooltip_gives(label: QLabel) -> bool:
    """The label's tooltip holds its text (a tooltip that only explains the figure, as the
    Results values' do, does not excuse a cut value)."""
    tip = label.toolTip()
    return bool(tip) and _plain(label.text()) in _plain(tip)


def _text_width(label: QLabel) -> int:
    if label.textFormat() == Qt.TextFormat.PlainText or not Qt.mightBeRichText(label.text()):
        lines = label.text().splitlines() or [""]
        return max(label.fontMetrics().horizontalAdvance(line) for line in lines)
    return label.sizeHint().width() - 2 * label.margin()


# plots ----------------------------------------------------------------------------------------
def _plot_problems(view: pg.GraphicsView) -> list[str]:
    scene = view.scene()
    if scene is None:
        return []
    whole = view.mapToScene(view.viewport().rect()).boundingRect()
    shown = whole.adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE, TOLERANCE)
    t = TEXT_TOLERANCE
    text_room = whole.adjusted(-t, -t, t, t)
    name = describe(view)
    out = []
    boxes = [b for b in scene.items() if isinstance(b, pg.ViewBox) and b.isVisible()]
    for item in scene.items():
        if not item.isVisible():
            continue
        if isinstance(item, (pg.LegendItem, LegendStrip)) and item.items:
            rect = item.sceneBoundingRect()
            if not shown.contains(rect):
                out.append(f"{name}: legend {_r(rect)} outside the widget {_r(shown)}")
            parent = item.parentItem()
            if isinstance(parent, pg.ViewBox):
                inner = parent.sceneBoundingRect().adjusted(-1, -1, 1, 1)
                if not inner.contains(rect):
                    out.append(f"{name}: legend {_r(rect)} cut by its view box {_r(inner)}")
            else:
                for box in boxes:
                    if _overlap(rect, box.sceneBoundingRect()) > TOLERANCE:
                        out.append(
                            f"{name}: legend {_r(rect)} over a plot {_r(box.sceneBoundingRect())}"
                        )
        elif isinstance(item, pg.PlotItem) and item.titleLabel.isVisible() and item.titleLabel.text:
            rect = item.titleLabel.item.sceneBoundingRect()
            if not text_room.contains(rect):
                out.append(f"{name}: title {_r(rect)} outside the widget {_r(shown)}")
    titles = [
        (axis, axis.label.sceneBoundingRect())
        for axis in scene.items()
        if isinstance(axis, pg.AxisItem)
        and axis.isVisible()
        and axis.label is not None
        and axis.label.isVisible()
        and axis.labelText
    ]
    for i, (axis, rect) in enumerate(titles):
        if not text_room.contains(rect):
            out.append(f"{name}: axis title {axis.labelText[:30]!r} {_r(rect)} outside {_r(shown)}")
        for other, rect2 in titles[i + 1 :]:
            if _overlap(rect, rect2) > TEXT_TOLERANCE:
                out.append(
                    f"{name}: axis titles {axis.labelText[:30]!r} and "
                    f"{other.labelText[:30]!r} overlap"
                )
    return out


def _overlap(a: QRectF, b: QRectF) -> float:
    """The smaller side of the intersection of two rectangles (0: they do not overlap)."""
    both = a.intersected(b)
    return 0.0 if both.isEmpty() else min(both.width(), both.height())


def _r(rect: QRectF | QRect) -> str:
    return f"[{rect.left():.0f},{rect.top():.0f} {rect.width():.0f}×{rect.height():.0f}]"
