"""Plot titles of several lines, and axis titles no longer than their axis.

pyqtgraph fixes a plot's title row at 30 pixels (``PlotItem.setTitle``), so a second line is cut
off at the top whenever there is no room above the plot. :func:`set_plot_title` gives the row the
height of the lines it holds.

pyqtgraph centres an axis title on its axis whatever its length, so a title longer than the axis
runs past both ends and is clipped by the widget: at 1366 × 768 the principal-component plots'
"PC2 of the mixed-distance embedding (10% of variance)" read "…embedding (10% of varia".
:class:`FittedTitleAxisItem` cuts the title it draws to the axis's length with "…" and gives it
whole in the axis's tooltip; every plot of the app makes its axes with it (:func:`fitted_axes`).
"""

from __future__ import annotations

import html
import re
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QTextDocument

__all__ = ["set_plot_title", "LINE_HEIGHT", "FittedTitleAxisItem", "fitted_axes", "pc_short_title"]

#: Pixels per extra title line (a 9-10 pt line with its leading).
LINE_HEIGHT = 17


def set_plot_title(plot_item: pg.PlotItem, title: str, **args: Any) -> None:
    """``plot_item.setTitle(title, **args)`` with a title row tall enough for every line
    (lines are separated by ``<br>``)."""
    plot_item.setTitle(title, **args)
    height = 30 + LINE_HEIGHT * title.count("<br>")
    plot_item.titleLabel.setMaximumHeight(height)
    plot_item.layout.setRowFixedHeight(0, height)


class FittedTitleAxisItem(pg.AxisItem):
    """An axis whose drawn title is never longer than the axis: a shorter form given by
    :meth:`set_short_titles`, else the title without its trailing " · " notes, else cut at the
    end with "…" (the axis's tooltip then gives it whole, before any tooltip of its own). The title itself (``labelText``) stays whole; it is
    fitted again whenever it or the axis's length changes."""

    # class defaults: pyqtgraph's __init__ draws the title before a subclass's could set them
    _drawn_title = ""
    _own_tip: str | None = None  # the axis's tooltip before a cut title's was added
    _cut_tip = ""
    _short_titles: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (replaced, never mutated)
    #: The title as drawn, in plain text ("" when no title), and whether it is cut.
    title_shown = ""
    title_cut = False

    def _length(self) -> float:
        size = self.size()
        return size.height() if self.orientation in ("left", "right") else size.width()

    def labelString(self) -> str:  # noqa: N802 (pyqtgraph's name)
        whole = super().labelString()
        drawn = self._fitted(whole)
        self._drawn_title = drawn
        return drawn

    def set_short_titles(self, title: str, *shorter: str) -> None:
        """Shorter forms of ``title``, longest first, drawn (whole in the tooltip) when the
        axis is too short for it, before any is cut ("PC2 (10% of variance)" says more than
        "PC2 of the mixed-distance embe…")."""
        self._short_titles = {title: tuple(shorter)}
        if self.labelText == title and self.label is not None:
            self.label.setHtml(self.labelString())
            self.resizeEvent()

    def _fitted(self, whole: str) -> str:
        length = self._length()
        doc = QTextDocument()
        doc.setDefaultFont(self.label.font())
        doc.setHtml(whole)
        plain = " ".join(doc.toPlainText().split())
        if length <= 0 or doc.size().width() <= length or not plain:
            self._show(plain, cut=False)
            return whole
        style = ";".join(f"{k}: {v}" for k, v in self.labelStyle.items())
        given = self._short_titles.get(self.labelText, ())
        # and the title without its trailing " · " notes ("… (%) · lower is better")
        parts = plain.split(" · ")
        notes_off = [" · ".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
        # the longest form that fits: it says the most
        for text in sorted({*given, *notes_off}, key=len, reverse=True):
            doc.setHtml(f"<span style='{style}'>{html.escape(text)}</span>")
            if doc.size().width() <= length:
                self._show(plain, cut=True, shown=text)
                return f"<span style='{style}'>{html.escape(text)}</span>"
        # none: the shortest given form (else the title's first part) cut
        base = given[-1] if given else (notes_off[-1] if notes_off else plain)

        def form(n: int) -> str:
            return f"<span style='{style}'>{html.escape(base[:n].rstrip())}…</span>"

        lo, hi = 0, len(base) - 1  # the most characters kept whose form fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            doc.setHtml(form(mid))
            if doc.size().width() <= length:
                lo = mid
            else:
                hi = mid - 1
        self._show(plain, cut=True, shown=base[:lo].rstrip() + "…")
        return form(lo)

    def _show(self, plain: str, cut: bool, shown: str | None = None) -> None:
        self.title_shown = plain if shown is None else shown
        self.title_cut = cut
        if cut:
            if self._own_tip is None or self.toolTip() != self._cut_tip:
                self._own_tip = self.toolTip()  # the plot set its own since
            self._cut_tip = "\n".join(t for t in (plain, self._own_tip) if t)
            self.setToolTip(self._cut_tip)
        elif self._own_tip is not None:
            if self.toolTip() == self._cut_tip:
                self.setToolTip(self._own_tip)
            self._own_tip = None

    def resizeEvent(self, ev: Any = None) -> None:  # noqa: N802 (Qt's name)
        # a new length: the title fitted to it before pyqtgraph centres it
        if self.label is not None and self.labelText:
            drawn = self._drawn_title
            if self.labelString() != drawn:
                self.label.setHtml(self._drawn_title)
        super().resizeEvent(ev)


def fitted_axes(*names: str) -> dict[str, FittedTitleAxisItem]:
    """``axisItems`` for a PlotItem or PlotWidget: these axes (default left and bottom) fit
    their titles to their lengths."""
    return {name: FittedTitleAxisItem(name) for name in names or ("left", "bottom")}


def pc_short_title(title: str) -> str | None:
    """A principal component's title without its middle: "PC2 of the mixed-distance embedding
    (10% of variance) · 8 QIs" → "PC2 (10% of variance)" (None for any other title): the form
    a short axis draws before cutting one, since the share of variance is what it must keep."""
    match = re.match(r"^(PC\d+)\b.*?\((\d+% of variance)\)", title)
    return f"{match.group(1)} ({match.group(2)})" if match else None
