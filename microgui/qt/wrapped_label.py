"""A word-wrapped label that keeps the height of its text.

Qt lays a word-wrapped :class:`QLabel` out at the height of its text at its *preferred* width:
heightForWidth does not reach through the main window's central stack and docks, so in a
narrow window (1366 × 768) the second and third lines were cut off (issue 30).
:class:`WrappedLabel` asks for the height its text needs at the width it was given (its size
hint), whenever the width or the text changes, so that the layout takes the room from a
neighbour that can shrink (a plot) instead.

It does so at once: ``updateGeometry`` alone only posts a layout request, and until the event
loop delivers it the label keeps its old height, one or more lines short of its new text (a
text set by a worker's result, or a width changed by a resize, in the last turn before the
window was looked at: the nothing-clipped walk saw such labels cut on a loaded machine and
retried for up to a second). The label's own layout is activated in the same call, within
the room its parent already has.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel

__all__ = ["WrappedLabel"]


class WrappedLabel(QLabel):
    """A word-wrapped QLabel whose preferred height is its text's at its width (its minimum
    stays one line: the window's minimum size does not grow, the layout shrinks a plot first)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.setWordWrap(True)
        self._wanted = 0
        self._fitting = False

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        return QSize(hint.width(), max(hint.height(), self._wanted))

    def clear(self) -> None:
        super().clear()
        self._fit()

    def _fit(self) -> None:
        wanted = max(self.heightForWidth(self.width()), 0) if self.text() else 0
        if wanted == self._wanted:
            return
        self._wanted = wanted
        self.updateGeometry()
        parent = self.parentWidget()
        layout = parent.layout() if parent is not None else None
        if layout is None or self._fitting or not self.isVisible():
            return  # laid out when shown
        self._fitting = True  # activating resizes this label: its resizeEvent fits again
        try:
            layout.invalidate()
            layout.activate()
        finally:
            self._fitting = False
