"""A word-wrapped label that keeps the height of its text.

Qt lays a word-wrapped :class:`QLabel` out at the height of its text at its *preferred* width:
heightForWidth does not reach through the main window's central stack and docks, so in a
narrow window (1366 × 768) the second and third lines were cut off (issue 30).
:class:`WrappedLabel` sets its minimum height to the height its text needs at the width it was
given, whenever the width or the text changes, so that the layout takes the room from a
neighbour that can shrink (a plot) instead.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

__all__ = ["WrappedLabel"]


class WrappedLabel(QLabel):
    """A word-wrapped QLabel as tall as its text at its width."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        needed = max(self.heightForWidth(self.width()), 0) if self.text() else 0
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)
