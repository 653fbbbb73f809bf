"""The views of the window, every one in sight: a bar of buttons that wraps onto a second row
when the window is narrow, above the views' stack (issue 30).

At 1366 × 768 the ten views of a QTabWidget did not fit its tab bar: *Category changes* and
*Correlations* hid behind scroll arrows. The views stay in a :class:`QTabWidget` (its API, its
tab texts and tool tips are what the code and the tests use) whose own tab bar is hidden; the
:class:`ViewBar` shows one checkable button a view, grouped under short headings, in a
:class:`FlowLayout` that reflows from a laptop to 4K. Ctrl+PgDown / Ctrl+PgUp go to the next or
previous view, as in a tab widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QLabel,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["FlowLayout", "ViewBar", "views_with_bar"]


class FlowLayout(QLayout):
    """Items left to right, wrapped onto new rows when the width runs out (the flow layout of
    Qt's examples); its height follows its width."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt's name)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _place(self, rect: QRect, *, move: bool) -> int:
        """Lay the items out in ``rect`` (or only measure); returns the height used."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, row_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and row_height > 0:
                x, y = area.x(), y + row_height + self._spacing
                row_height = 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y() + margins.bottom()


class ViewBar(QWidget):
    """One checkable button a page of ``tabs`` (its tab text and tool tip), grouped: the
    button checked is the page shown, and the other way round."""

    def __init__(
        self,
        tabs: QTabWidget,
        groups: Sequence[tuple[str, Sequence[QWidget]]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._tabs = tabs
        self.buttons: dict[int, QToolButton] = {}
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        flow = FlowLayout(self, spacing=3)
        placed: set[int] = set()
        for heading, pages in groups:
            label = QLabel(heading)
            label.setStyleSheet("color: #666; padding-left: 6px;")
            flow.addWidget(label)
            for page in pages:
                index = tabs.indexOf(page)
                if index >= 0:
                    flow.addWidget(self._button(index))
                    placed.add(index)
        for index in range(tabs.count()):  # a page no group names still gets its button
            if index not in placed:
                flow.addWidget(self._button(index))
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        tabs.currentChanged.connect(self._follow)
        self._follow(tabs.currentIndex())
        # the height of the narrowest bar until the first resize says the real width
        self._fit_height(min(self.MIN_WIDTH, self._one_row_width()))

    def _button(self, index: int) -> QToolButton:
        button = QToolButton()
        button.setText(self._tabs.tabText(index))  # "&&" is a literal "&" here too
        button.setToolTip(self._tabs.tabToolTip(index))
        button.setCheckable(True)
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setStyleSheet(
            "QToolButton { padding: 2px 7px; } "
            "QToolButton:checked { background: #dde7f3; border: 1px solid #9fb6d4; "
            "border-radius: 3px; font-weight: bold; }"
        )
        button.clicked.connect(lambda _checked=False, i=index: self._tabs.setCurrentIndex(i))
        self._group.addButton(button, index)
        self.buttons[index] = button
        return button

    def refresh_tips(self) -> None:
        """Take the pages' tool tips again (they are set after the pages are added)."""
        for index, button in self.buttons.items():
            button.setToolTip(self._tabs.tabToolTip(index))

    def _follow(self, index: int) -> None:
        button = self.buttons.get(index)
        if button is not None and not button.isChecked():
            button.setChecked(True)

    #: the narrowest the bar gets (its buttons then take 3 rows at most)
    MIN_WIDTH = 480

    # The bar's height follows its width through resizeEvent, not Qt's height-for-width: that
    # one, inside the main window's layout, kept re-laying the window out while a sweep filled
    # the history (the GUI thread spent its time in hasHeightForWidth).
    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return False

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        layout = self.layout()
        return layout.heightForWidth(width) if layout is not None else 0

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._one_row_width(), self.minimumHeight())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        width = min(self.MIN_WIDTH, self._one_row_width())
        return QSize(width, self.minimumHeight())

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_height(event.size().width())

    def _fit_height(self, width: int) -> None:
        height = self.heightForWidth(max(width, 1))
        if height != self.minimumHeight():
            self.setFixedHeight(height)

    def _one_row_width(self) -> int:
        layout = self.layout()
        if layout is None:
            return 0
        hints = [layout.itemAt(i).sizeHint().width() for i in range(layout.count())]
        return sum(hints) + 3 * max(len(hints) - 1, 0)


def views_with_bar(
    tabs: QTabWidget, groups: Sequence[tuple[str, Sequence[QWidget]]]
) -> tuple[QWidget, ViewBar]:
    """The central widget: ``tabs`` (its own tab bar hidden) under a :class:`ViewBar`, and
    Ctrl+PgDown / Ctrl+PgUp to step through the views."""
    tabs.tabBar().hide()
    tabs.setDocumentMode(True)
    central = QWidget()
    bar = ViewBar(tabs, groups, central)
    column = QVBoxLayout(central)
    column.setContentsMargins(0, 2, 0, 0)
    column.setSpacing(2)
    column.addWidget(bar)
    column.addWidget(tabs, 1)
    for keys, step in (("Ctrl+PgDown", 1), ("Ctrl+PgUp", -1)):
        shortcut = QShortcut(QKeySequence(keys), central)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(
            lambda s=step: tabs.setCurrentIndex((tabs.currentIndex() + s) % tabs.count())
        )
    return central, bar
