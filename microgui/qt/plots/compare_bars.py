"""Small multiples of the compared runs: one bar chart per measure and per attribute (issue 29).

A view (STYLE.md §5): it receives each run's measures and its per-attribute breakdown (the run
report's ``information_loss_by_attribute``) and draws them; it computes no measure. Each chart
is one :class:`pyqtgraph.BarGraphItem` with a bar per run (the run's colour, its value written
on it), titled with the measure and the side that is better; the recommended measures
(:func:`microgui.core.metrics.recommended.recommended_measures`) come first. A run without the
measure has no bar and a grey "n/a" in its place (a "—" there read as a short bar). Below, one chart per quasi-identifier: its own
SSE/SST (continuous) or its share of changed values (categorical), per run.

A pyqtgraph PlotItem costs ~30 ms to build (its axes, view box and menu), so a comparison of
20 charts would hold the GUI thread for over half a second (issue 30's "no stall above 100 ms").
The charts are therefore built in slices of at most :data:`SLICE_S` seconds, one slice per turn
of the event loop (the first at once when the view is shown): the titles and values are known at once
(:attr:`CompareBarsPlot.chart_titles`), the charts appear within a few turns
(:attr:`CompareBarsPlot.pending` counts those still to build; :meth:`finish` builds them now).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor

from microgui.core.metrics.measure_text import finite_number, format_measure
from microgui.qt.plots.palette import CLUSTER_COLORS
from microgui.qt.plots.titles import fitted_axes

__all__ = ["BarRun", "CompareBarsPlot", "attribute_changes", "bar_label", "NO_VALUE"]

#: Written where a run has no value for a chart's measure (issue 30: a "—" on the axis was
#: read as a bar just above zero).
NO_VALUE = "n/a"
NO_VALUE_COLOR = "#888888"

#: Most charts per row of the grid.
COLUMNS = 4
#: Narrowest a chart is drawn (its two-line title of 34 characters at 8 pt, the axis and the
#: bars): the grid takes as many columns as fit the width, so nothing is cut off at the right
#: edge of a laptop screen (the rows scroll instead).
MIN_CHART_WIDTH = 230
#: Height of one row of charts, in pixels.
ROW_HEIGHT = 150
#: Longest one slice of chart building holds the GUI thread, in seconds (one chart at least).
SLICE_S = 0.03


@dataclass(frozen=True)
class BarRun:
    """One run of the comparison: its name ("#3 mdav k=5", the first word under its bar),
    measures and per-attribute breakdown."""

    name: str
    measures: Mapping[str, Any]
    by_attribute: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def attribute_changes(
    by_attribute: Mapping[str, Mapping[str, Any]],
) -> dict[str, tuple[str, float | None]]:
    """Per quasi-identifier, the number its chart shows: ("changed %", the share of changed
    values) for an ordinal or nominal one, ("SSE/SST %", its own SSE/SST) otherwise."""
    out: dict[str, tuple[str, float | None]] = {}
    for name, m in by_attribute.items():
        if not isinstance(m, Mapping):
            continue
        if m.get("changed_percent") is not None:
            out[str(name)] = ("changed %", finite_number(m.get("changed_percent")))
        else:
            out[str(name)] = ("SSE/SST %", finite_number(m.get("information_loss")))
    return out


class CompareBarsPlot(pg.GraphicsLayoutWidget):
    """A grid of small bar charts: the chosen measures, then each attribute's change."""

    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        #: Titles of the charts drawn, in order (for tests and exports).
        self.chart_titles: list[str] = []
        #: Values drawn per chart (None: the run has no value), in the order of the runs.
        self.chart_values: list[list[float | None]] = []
        #: Charts per row as laid out now (:meth:`columns_for`).
        self.columns = COLUMNS
        self._drawn: tuple[Any, ...] | None = None
        #: charts laid out but not built yet: (title, values), in grid order
        self._queue: list[tuple[str, list[float | None]]] = []
        self._built = 0
        self._colors: list[QColor] = []
        self._ticks: list[list[tuple[float, str]]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._build_slice)

    @staticmethod
    def columns_for(width: int) -> int:
        """Charts per row at ``width`` pixels: as many as fit, 1 to :data:`COLUMNS`."""
        return max(1, min(COLUMNS, int(width) // MIN_CHART_WIDTH))

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        drawn = getattr(self, "_drawn", None)  # (a resize arrives during __init__)
        if drawn is not None and self.columns_for(self.width()) != self.columns:
            self.set_runs(*drawn)  # lay the same charts out again in the new columns

    def set_runs(
        self,
        runs: Sequence[BarRun],
        keys: Sequence[str],
        catalog: Mapping[str, Sequence[str]],
    ) -> None:
        """Draw a chart per measure key (in order; keys no run has are skipped) and per
        attribute of the runs' breakdowns."""
        self._timer.stop()
        self._queue = []
        self._built = 0
        self.clear()
        self.chart_titles = []
        self.chart_values = []
        self._drawn = (runs, keys, catalog)
        self.columns = columns = self.columns_for(self.width())
        if not runs:
            return
        charts: list[tuple[str, list[float | None]]] = []
        for key in keys:
            values = [finite_number(r.measures.get(key)) for r in runs]
            if all(v is None for v in values):
                continue
            info = list(catalog.get(key, (key, "", "")))
            label, unit, direction = (info + ["", "", ""])[:3]
            arrow = {"lower is better": " ↓", "higher is better": " ↑"}.get(str(direction), "")
            charts.append((f"{label}{f' ({unit})' if unit else ''}{arrow}", values))
        changes = [attribute_changes(r.by_attribute) for r in runs]
        names = list(dict.fromkeys(n for c in changes for n in c))
        for name in names:
            kind = next((c[name][0] for c in changes if name in c), "")
            values = [c[name][1] if name in c else None for c in changes]
            if all(v is None for v in values):
                continue
            charts.append((f"{name}: {kind} ↓", values))
        self._colors = [QColor(CLUSTER_COLORS[i % len(CLUSTER_COLORS)]) for i in range(len(runs))]
        # each bar under its run's own number ("#3"), as the history and the table call it
        self._ticks = [[(float(i), bar_label(r.name)) for i, r in enumerate(runs)]]
        self.chart_titles = [title for title, _values in charts]
        self.chart_values = [values for _title, values in charts]
        self._queue = charts
        rows = (len(charts) + columns - 1) // columns
        self.setMinimumHeight(max(rows, 1) * ROW_HEIGHT)
        if self.isVisible():
            self._build_slice()
        elif self.pending:  # hidden (another view in front): every slice on later turns
            self._timer.start()

    @property
    def pending(self) -> int:
        """Charts laid out but not built yet (built on the next turns of the event loop)."""
        return len(self._queue) - self._built

    def finish(self) -> None:
        """Build every chart still pending now (before a grab for a report or a test)."""
        self._timer.stop()
        while self.pending:
            self._build_one()

    def _build_one(self) -> None:
        i = self._built
        title, values = self._queue[i]
        plot = self.addPlot(row=i // self.columns, col=i % self.columns, axisItems=fitted_axes())
        self._draw_chart(plot, title, values, self._colors, self._ticks)
        self._built += 1

    def _build_slice(self) -> None:
        """Build charts for at most :data:`SLICE_S` seconds (one at least); the rest later."""
        started = time.perf_counter()
        while self.pending:
            self._build_one()
            if time.perf_counter() - started >= SLICE_S:
                break
        if self.pending:
            self._timer.start()

    @staticmethod
    def _draw_chart(
        plot: pg.PlotItem,
        title: str,
        values: list[float | None],
        colors: list[QColor],
        ticks: list[list[tuple[float, str]]],
    ) -> None:
        plot.setTitle(_wrap(title), color="#222222", size="8pt")
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        bottom = plot.getAxis("bottom")
        bottom.setTicks(ticks)
        for axis in (plot.getAxis("left"), bottom):
            axis.setPen(pg.mkPen("#777777"))
            axis.setTextPen(pg.mkPen("#333333"))
        plot.getAxis("left").setWidth(34)
        xs = [float(i) for i, v in enumerate(values) if v is not None]
        hs = [float(v) for v in values if v is not None]
        brushes = [pg.mkBrush(colors[i]) for i, v in enumerate(values) if v is not None]
        if xs:
            plot.addItem(pg.BarGraphItem(x=xs, height=hs, width=0.7, brushes=brushes, pen=None))
        top = max([abs(v) for v in hs] + [1e-12])
        low = min([0.0] + hs)
        for i, v in enumerate(values):
            if v is None:  # a grey word, not a "—" sitting on the axis like a short bar
                label = pg.TextItem(NO_VALUE, color=NO_VALUE_COLOR, anchor=(0.5, 1.0))
                label.setPos(float(i), 0.0)
            else:
                label = pg.TextItem(_short(v), color="#111111", anchor=(0.5, 1.0))
                label.setPos(float(i), max(float(v), 0.0))
            plot.addItem(label)
        plot.setXRange(-0.6, len(values) - 0.4, padding=0.0)
        plot.setYRange(low, top * 1.25, padding=0.0)

    def chart_count(self) -> int:
        return len(self.chart_titles)


def bar_label(name: str) -> str:
    """A run's label under its bar: the first word of its name ("#3 mdav k=5" -> "#3")."""
    return name.split(" ", 1)[0] if name.strip() else "?"


def _short(value: float) -> str:
    """A bar's value as the compare table and the history write it (issue 30: "11" on a bar
    whose cell said 10.97)."""
    return format_measure(value)


def _wrap(text: str, width: int = 34) -> str:
    """Two lines at most: a title wider than its cell would widen the grid."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width)
    cut = cut if cut > 0 else width
    rest = text[cut:].strip()
    if len(rest) > width:
        rest = rest[: width - 1] + "…"
    return f"{text[:cut]}<br>{rest}"
