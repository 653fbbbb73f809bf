"""Issue 15 item 4, as a class: no text the window shows names a paper by its file number, and the
entropy distance of the dependency tree is never called MI / mutual information.

Every widget's text, tool tip and status tip, every tab, every item model cell (display and tool
tip), and every text in the pyqtgraph scenes (titles, axis labels, legends, text items) is read
after runs of MDAV-generic (mixed QIs), AMA (the dependency tree) and mstk (generalization).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pyqtgraph as pg
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QTabWidget, QWidget

from microgui.core.runs import RunSpec
from microgui.qt.main_window import MainWindow

#: a paper named by its file ("003_309fe4adb430bc25.txt") or number ("003 §5.2", "(004 eqs. 6-9)")
PAPER = re.compile(r"(?<![\w,.])00[0-4](_[0-9a-f]{16}\.txt|\s*(§|Algorithm|Table|eqs?\.|Def))")
#: the entropy distance H(A|B) + H(B|A) called mutual information
MISNAMED = re.compile(
    r"\bMI distance\b|(?<!paper's )\bMI\s*\(|(?<!not )\bmutual information\b", re.IGNORECASE
)


def _model_texts(model: QAbstractItemModel) -> Iterator[str]:
    root = QModelIndex()
    rows = min(model.rowCount(root), 200)
    try:
        cols = min(model.columnCount(root), 50)
    except TypeError:  # a list model: one column (its columnCount is private)
        cols = 1
    for role in (Qt.DisplayRole, Qt.ToolTipRole):
        for c in range(cols):
            yield str(model.headerData(c, Qt.Horizontal, role) or "")
        for r in range(rows):
            for c in range(cols):
                yield str(model.data(model.index(r, c), role) or "")


def _scene_texts(view: pg.GraphicsView) -> Iterator[str]:
    for item in view.scene().items():
        if isinstance(item, pg.TextItem):
            yield item.textItem.toPlainText()
            yield item.toolTip()
        elif isinstance(item, pg.LabelItem):
            yield str(item.text)
        elif isinstance(item, pg.AxisItem):
            yield str(item.labelText)
        elif hasattr(item, "toolTip"):
            yield item.toolTip()
        if hasattr(item, "toPlainText") and not isinstance(item, pg.TextItem):
            yield item.toPlainText()


def window_texts(window: MainWindow) -> Iterator[tuple[str, str]]:
    """(where, text) of everything the window can show."""
    for widget in window.findChildren(QWidget):
        where = f"{type(widget).__name__} {widget.objectName()}".strip()
        for attr in ("text", "title", "windowTitle", "placeholderText", "toolTip", "statusTip"):
            getter = getattr(widget, attr, None)
            if callable(getter):
                try:
                    value = getter()
                except TypeError:
                    continue
                if isinstance(value, str):
                    yield where, value
        if isinstance(widget, QTabWidget):
            for i in range(widget.count()):
                yield where, widget.tabText(i) + " " + widget.tabToolTip(i)
        if isinstance(widget, QAbstractItemView) and widget.model() is not None:
            for text in _model_texts(widget.model()):
                yield where, text
        if isinstance(widget, pg.GraphicsView):
            for text in _scene_texts(widget):
                yield where, text


def test_no_paper_file_number_or_misnamed_distance_in_the_window(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    seen = 0
    for method in ("mdav-generic", "ama", "mstk"):
        with qtbot.waitSignal(demo_window.controller.run_finished, timeout=120_000):
            demo_window.controller.start_run(RunSpec.make(method, 5, seed=1))
        for i in range(demo_window.tabs.count()):  # every view drawn once
            demo_window.tabs.setCurrentIndex(i)
            qtbot.wait(20)
        for where, shown in window_texts(demo_window):
            text = html.unescape(re.sub(r"<[^>]+>", "", shown))  # rich text as read
            seen += 1
            assert not PAPER.search(text), (method, where, text)
            assert not MISNAMED.search(text), (method, where, text)
    assert seen > 500  # the walk reached the views, not just a few labels
