"""A word-wrapped label that keeps the height of its text.

Qt lays a word-wrapped :class:`QLabel` out at the height of its text at its *preferred* width:
heightForWidth does not reach through the main window's central stack and docks, so in a
narrow window (1366 × 768) the second and third lines were cut off (issue 30).
:class:`WrappedLabel` asks for the height its text needs at the width it was given (its size
hint), whenever the width or the text changes, so that the layout takes the room from a
neighbour that can shrink (a plot) instead.
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

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        return QSize(hint.width(), max(hint.height(), self._wanted))

    def _fit(self) -> None:
        wanted = max(self.heightForWidth(self.width()), 0) if self.text() else 0
        if wanted != self._wanted:
            self._wanted = wanted
            self.updateGeometry()
