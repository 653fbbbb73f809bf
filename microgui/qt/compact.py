"""A combo box that keeps its width whatever its items say.

Long method titles, measure labels and column names ("marital-status (nominal)") must not widen
the window past a 1366-pixel laptop screen (issue 15): the closed box shows ``chars`` characters
(cut with "…", the whole text in its tooltip: :func:`~microgui.qt.elided_label.elide_combo`)
and the open list is wide enough to read them in full.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from microgui.qt.elided_label import elide_combo

__all__ = ["compact_combo"]


def compact_combo(combo: QComboBox, chars: int, list_width: int | None = None) -> QComboBox:
    """Give ``combo`` a width of ``chars`` characters, and its open list ``list_width`` pixels
    at least (None: the list's own); returns ``combo``."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    if list_width is not None:
        combo.view().setMinimumWidth(list_width)
    return elide_combo(combo)
