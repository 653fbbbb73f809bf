"""Text cut to the room it has, ending in "…", whole in a tooltip (issue 30's small elisions).

:func:`elided_lines` wraps a text at word boundaries into at most ``max_lines`` lines of a
width and cuts the last one with "…" when the text needs more; :class:`ElidedLabel` shows a
status line that way at a constant height (one that grew a line pushed the Method dock's
buttons; one cut by its dock hid its end); :func:`elide_combo` paints a compact combo box's
current text cut with "…" instead of clipped mid-letter ("education (ordir"), the whole text in
its tooltip; :class:`ElidedToolButton` does the same for a menu button's text.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QStyle,
    QStyleOptionComboBox,
    QStyleOptionToolButton,
    QStylePainter,
    QToolButton,
)

__all__ = [
    "ElidedLabel",
    "elided_lines",
    "elide_combo",
    "combo_shown_text",
    "ElidedToolButton",
    "elision_tip",
]

ELLIPSIS = "…"


def elision_tip(whole: str, cut: bool, tip: str = "") -> str:
    """The tooltip of a text cut with "…": the whole text when it was cut, then the widget's
    own explanation ``tip`` (if any), one per line; empty when neither applies."""
    return "\n".join(t for t in ((whole if cut else ""), tip) if t)


def elided_lines(text: str, metrics: QFontMetrics, width: int, max_lines: int) -> tuple[str, bool]:
    """``text`` wrapped at spaces into lines at most ``width`` pixels wide, at most
    ``max_lines`` of them, the last one cut with "…" when the text needs more; returns the
    lines joined by newlines and whether anything was cut."""
    width = max(width, 1)
    lines: list[str] = []
    rest = " ".join(text.split())
    while rest and len(lines) < max_lines:
        if metrics.horizontalAdvance(rest) <= width:
            lines.append(rest)
            rest = ""
            break
        words = rest.split(" ")
        line = words[0]
        used = 1
        for word in words[1:]:
            if metrics.horizontalAdvance(f"{line} {word}") > width:
                break
            line, used = f"{line} {word}", used + 1
        if metrics.horizontalAdvance(line) > width:  # one word wider than the line
            line = metrics.elidedText(line, Qt.TextElideMode.ElideRight, width)
            if line.endswith(ELLIPSIS):
                return "\n".join([*lines, line]), True
        lines.append(line)
        rest = " ".join(words[used:])
    if rest:
        last = f"{lines[-1]} {rest}" if lines else rest
        # the last line and the rest do not fit one line: cut, "…" at the end, after a whole
        # word when the line has one ("lower bound 0.000…" read as a bound of zero, issue 30)
        cut = metrics.elidedText(last, Qt.TextElideMode.ElideRight, width)
        kept = cut.removesuffix(ELLIPSIS)
        if kept and len(kept) < len(last) and last[len(kept)] != " " and " " in kept.strip():
            cut = kept[: kept.rstrip().rfind(" ")].rstrip() + ELLIPSIS
        lines[-1:] = [cut]
        return "\n".join(lines), True
    return "\n".join(lines), False


class ElidedLabel(QLabel):
    """A label of at most ``max_lines`` lines (its height, always): a longer text is cut with
    "…" and given whole in the tooltip (with ``tip``, the label's own explanation, if any)."""

    def __init__(self, text: str = "", max_lines: int = 2, tip: str = "") -> None:
        super().__init__()
        self.max_lines = max_lines
        self.tip = tip
        self.full_text = ""
        self.elided = False
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self.full_text = text
        self._fit()

    def text(self) -> str:  # noqa: D102 (Qt's name: the whole text, as set)
        return self.full_text

    def text_shown(self) -> str:
        """The text as shown: cut with "…" when it needs more than ``max_lines`` lines."""
        return super().text()

    def _fit(self) -> None:
        room = self.contentsRect().width() - 2 * self.margin()
        shown, self.elided = elided_lines(self.full_text, self.fontMetrics(), room, self.max_lines)
        super().setText(shown)
        self.setToolTip(elision_tip(self.full_text, self.elided, self.tip))

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(self.minimumSizeHint().width(), self._height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(self.fontMetrics().averageCharWidth() * 12, self._height())

    def _height(self) -> int:
        margins = self.contentsMargins()
        lines = self.fontMetrics().lineSpacing() * self.max_lines
        return lines + margins.top() + margins.bottom() + 2 * self.margin()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()


# combo boxes ----------------------------------------------------------------------------------
def combo_shown_text(combo: QComboBox) -> str:
    """The current text as the combo paints it: cut with "…" to its text field's width."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, combo
    )
    return combo.fontMetrics().elidedText(
        combo.currentText(), Qt.TextElideMode.ElideRight, max(field.width(), 1)
    )


class _ComboEliding(QObject):
    """Paints a combo's current text cut with "…" and keeps the whole text in its tooltip
    (before the combo's own explanation, if it has one)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Paint or not isinstance(watched, QComboBox):
            return False
        if watched.isEditable():
            return False
        self._tooltip(watched)
        _paint_combo(watched, event)  # type: ignore[arg-type]
        return True

    @staticmethod
    def _tooltip(combo: QComboBox) -> None:
        ours = combo.property("elide_tip")
        own = combo.toolTip()
        if ours is None or own != ours:
            combo.setProperty("elide_base_tip", "" if own == combo.currentText() else own)
        base = str(combo.property("elide_base_tip") or "")
        cut = combo_shown_text(combo) != combo.currentText()
        tip = elision_tip(combo.currentText(), cut, base)
        if tip != own:
            combo.setToolTip(tip)
        combo.setProperty("elide_tip", tip)


def _paint_combo(combo: QComboBox, _event: QPaintEvent) -> None:
    painter = QStylePainter(combo)
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
    option.currentText = combo_shown_text(combo)
    painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
    painter.end()


_ELIDING = _ComboEliding()


def elide_combo(combo: QComboBox) -> QComboBox:
    """Make ``combo`` paint its current text cut with "…" (whole in its tooltip)."""
    combo.installEventFilter(_ELIDING)
    return combo


# tool buttons ---------------------------------------------------------------------------------
class ElidedToolButton(QToolButton):
    """A menu button whose text is cut with "…" to its width beside the menu arrow (the arrow
    was drawn over "none (whole table)"), whole in its tooltip before ``tip``."""

    def __init__(self, tip: str = "") -> None:
        super().__init__()
        self.tip = tip
        self.full_text = ""

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self._fit()

    def text(self) -> str:  # noqa: D102 (Qt's name: the whole text, as set)
        return self.full_text

    def text_shown(self) -> str:
        """The text as shown: cut with "…" to the button's width."""
        return super().text()

    def _fit(self) -> None:
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        arrow = self.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, option, self)
        room = self.contentsRect().width() - arrow - 3 * self.fontMetrics().averageCharWidth()
        shown = self.fontMetrics().elidedText(
            self.full_text, Qt.TextElideMode.ElideRight, max(room, 1)
        )
        self.setText(shown)
        self.setToolTip(elision_tip(self.full_text, shown != self.full_text, self.tip))

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().sizeHint()
        return QSize(min(hint.width(), 12 * self.fontMetrics().averageCharWidth()), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.sizeHint()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()
