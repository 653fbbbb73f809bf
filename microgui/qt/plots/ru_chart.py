"""The risk–utility map: one point per run, disclosure risk across, information loss up.

A view (STYLE.md §5, §7): it receives the runs' measures and draws them; it computes no measure.
One :class:`ScatterPlotItem` per method (the legend's entries, each point carrying its run id),
a text label "k = …" beside each point, and the Pareto front — the runs no other run beats on
both axes — as one step :class:`PlotDataItem`. Clicking a point emits ``run_clicked``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from microgui.qt.plots.chart_export import export_button
from microgui.qt.plots.palette import CLUSTER_COLORS

__all__ = ["RuChartPlot", "RuChartOptions", "RuPoint", "pareto_front", "axis_title"]

LOWER = "lower is better"
#: One symbol per method (cycled), drawn from large to small so that runs of different methods
#: at the same place (mdav and mdav-generic on continuous data) stay visible as nested marks.
SYMBOLS: tuple[str, ...] = ("o", "s", "t", "d", "h", "star", "p", "t1")
HIGHER = "higher is better"


@dataclass
class RuChartOptions:
    """The measures on the axes (keys of the measure catalog; "" = the first that applies)."""

    x_measure: str = ""
    y_measure: str = ""


@dataclass(frozen=True)
class RuPoint:
    """One run on the map: its id, method, k and measures."""

    run_id: int
    method: str
    k: int
    measures: Mapping[str, float | int | None]


def pareto_front(
    x: np.ndarray, y: np.ndarray, x_direction: str = LOWER, y_direction: str = LOWER
) -> np.ndarray:
    """Indices of the non-dominated points, ordered along x (best x first).

    A point is dominated when another is at least as good on both axes and better on one
    ("good" by each axis' direction). Equal points are all kept.
    """
    sx = np.where(x_direction == HIGHER, -1.0, 1.0) * np.asarray(x, dtype=np.float64)
    sy = np.where(y_direction == HIGHER, -1.0, 1.0) * np.asarray(y, dtype=np.float64)
    order = np.lexsort((sy, sx))
    front: list[int] = []
    best_y = np.inf
    last: tuple[float, float] | None = None
    for i in order:
        point = (float(sx[i]), float(sy[i]))
        if point == last or point[1] < best_y:
            front.append(int(i))
            best_y = min(best_y, point[1])
            last = point
    return np.asarray(front, dtype=np.int64)


def _step(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The staircase through front points ordered along x: across at each point's y, then
    down (or up) to the next point — the edge of the region the front dominates."""
    if len(x) < 2:
        return x, y
    sx = [float(x[0])]
    sy = [float(y[0])]
    for i in range(1, len(x)):
        sx += [float(x[i]), float(x[i])]
        sy += [float(y[i - 1]), float(y[i])]
    return np.asarray(sx), np.asarray(sy)


def axis_title(info: Sequence[str], key: str) -> str:
    """'Record linkage (%) · lower is better': a measure's axis title."""
    label, unit, direction = (list(info) + ["", "", ""])[:3] if info else (key, "", "")
    unit_text = f" ({unit})" if unit else ""
    return f"{label}{unit_text} · {direction}" if direction else f"{label}{unit_text}"


class RuChartPlot(QWidget):
    """Measure choosers over the R-U map of the runs; ``run_clicked(run_id)`` on a click."""

    run_clicked = Signal(int)

    def __init__(
        self, parent: QWidget | None = None, options: RuChartOptions | None = None
    ) -> None:
        super().__init__(parent)
        self.options = options or RuChartOptions()
        self._points: list[RuPoint] = []
        self._catalog: dict[str, tuple[str, ...]] = {}
        self._current: int | None = None
        #: The method of each scatter item drawn, in legend order.
        self.method_items: dict[str, pg.ScatterPlotItem] = {}
        self.labels: list[pg.TextItem] = []
        #: Run ids on the Pareto front, along x.
        self.front_ids: list[int] = []
        #: Run ids drawn (runs without both measures are left out).
        self.drawn_ids: list[int] = []

        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.setMinimumContentsLength(18)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.x_combo.setToolTip("Disclosure-risk measure across")
        self.y_combo.setToolTip("Information-loss (or utility) measure up")

        self.plot_widget = pg.PlotWidget()
        self.plot_widget.setBackground("w")
        self.plot_item: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot_item.showGrid(x=True, y=True, alpha=0.2)
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen("#444444"))
            axis.setTextPen(pg.mkPen("#222222"))
        self.front_item = pg.PlotDataItem(
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine)
        )
        self.front_item.setZValue(0)
        self.plot_item.addItem(self.front_item)
        self.current_item = pg.ScatterPlotItem(
            symbol="o", size=22, brush=None, pen=pg.mkPen("#111111", width=2), hoverable=False
        )
        self.current_item.setZValue(3)
        self.plot_item.addItem(self.current_item)
        self.legend = pg.LegendItem(
            offset=(-10, 8),
            labelTextColor="#222222",
            brush=pg.mkBrush(255, 255, 255, 225),
            pen=pg.mkPen("#bbbbbb"),
        )
        self.legend.setParentItem(self.plot_item.getViewBox())
        self._legend_front = pg.PlotDataItem(
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine)
        )

        self.export = export_button(self, lambda: self.plot_item, "risk_utility_map")
        top = QHBoxLayout()
        top.addWidget(QLabel("Risk (x)"))
        top.addWidget(self.x_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Loss (y)"))
        top.addWidget(self.y_combo)
        top.addStretch(1)
        top.addWidget(self.export)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot_widget, 1)
        self._draw()

    # content ------------------------------------------------------------------------------
    def set_runs(self, points: Sequence[RuPoint], catalog: Mapping[str, Sequence[str]]) -> None:
        """Show these runs; ``catalog`` maps a measure key to (label, unit, direction, group)."""
        self._points = list(points)
        self._catalog = {str(k): tuple(v) for k, v in catalog.items()}
        self._fill_combos()
        self._draw()

    def set_current(self, run_id: int | None) -> None:
        """Ring the run shown in the other views."""
        self._current = run_id
        self._draw_current()

    def _available(self, group: str) -> list[str]:
        keys = []
        for key, info in self._catalog.items():
            kind = info[3] if len(info) > 3 else ""
            if kind != group:
                continue
            if any(_finite(p.measures.get(key)) for p in self._points):
                keys.append(key)
        return keys

    def _fill_combos(self) -> None:
        for combo, group, attr, preferred in (
            (self.x_combo, "risk", "x_measure", ("record_linkage", "reidentification_risk_max", "interval_disclosure", "k_anonymity")),
            (self.y_combo, "utility", "y_measure", ("il", "information_loss", "pil")),
        ):  # fmt: skip
            keys = self._available(group)
            current = getattr(self.options, attr)
            if current not in keys:
                current = next((k for k in preferred if k in keys), keys[0] if keys else "")
                setattr(self.options, attr, current)
            combo.blockSignals(True)
            combo.clear()
            for key in keys:
                info = self._catalog[key]
                combo.addItem(f"{info[0]} ({info[1]})" if info[1] else info[0], key)
                combo.setItemData(
                    combo.count() - 1, axis_title(info, key), Qt.ItemDataRole.ToolTipRole
                )
            combo.setCurrentIndex(max(combo.findData(current), 0))
            combo.setEnabled(bool(keys))
            combo.blockSignals(False)

    def set_measures(self, x_measure: str, y_measure: str) -> None:
        """Choose the measures on the axes (keys of the catalog)."""
        self.options.x_measure, self.options.y_measure = x_measure, y_measure
        for combo, key in ((self.x_combo, x_measure), (self.y_combo, y_measure)):
            combo.blockSignals(True)
            combo.setCurrentIndex(max(combo.findData(key), 0))
            combo.blockSignals(False)
        self._draw()

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is None or y is None:
            return
        self.options.x_measure, self.options.y_measure = str(x), str(y)
        self._draw()

    def _direction(self, key: str) -> str:
        info = self._catalog.get(key, ())
        return info[2] if len(info) > 2 else LOWER

    def _draw(self) -> None:
        for item in self.method_items.values():
            self.plot_item.removeItem(item)
        for label in self.labels:
            self.plot_item.removeItem(label)
        self.method_items = {}
        self.labels = []
        self.front_ids = []
        self.drawn_ids = []
        self.front_item.setData([], [])
        self.legend.clear()
        xk, yk = self.options.x_measure, self.options.y_measure
        if not self._points or not xk or not yk:
            self.legend.setVisible(False)
            self.plot_item.setLabel("bottom", "")
            self.plot_item.setLabel("left", "")
            self.plot_item.setTitle(
                "Finish runs to see their risk and information loss here" if not self._points
                else "No risk or information-loss measure to draw",
                color="#444444", size="10pt",
            )  # fmt: skip
            self._draw_current()
            return
        drawn = [
            p for p in self._points if _finite(p.measures.get(xk)) and _finite(p.measures.get(yk))
        ]
        self.drawn_ids = [p.run_id for p in drawn]
        xs = np.array([float(p.measures[xk]) for p in drawn])  # type: ignore[arg-type]
        ys = np.array([float(p.measures[yk]) for p in drawn])  # type: ignore[arg-type]
        methods = sorted({p.method for p in drawn})
        view = self.plot_item.getViewBox()
        view.disableAutoRange()
        for m, method in enumerate(methods):
            rows = [i for i, p in enumerate(drawn) if p.method == method]
            color = QColor(CLUSTER_COLORS[m % len(CLUSTER_COLORS)])
            item = pg.ScatterPlotItem(
                x=xs[rows],
                y=ys[rows],
                data=np.array([drawn[i].run_id for i in rows], dtype=object),
                symbol=SYMBOLS[m % len(SYMBOLS)],
                size=max(20 - 5 * m, 9),
                brush=pg.mkBrush(color),
                pen=pg.mkPen("#ffffff", width=1),
                hoverable=True,
                tip=None,
            )
            item.setZValue(2 + m / 100)
            item.sigClicked.connect(self._on_clicked)
            self.plot_item.addItem(item)
            self.method_items[method] = item
            self.legend.addItem(item, method)
        for i, p in enumerate(drawn):
            label = pg.TextItem(f"k={p.k}", color="#333333", anchor=(-0.25, 1.0))
            label.setPos(float(xs[i]), float(ys[i]))
            label.setZValue(2)
            self.plot_item.addItem(label)
            self.labels.append(label)
        front = pareto_front(xs, ys, self._direction(xk), self._direction(yk))
        self.front_ids = [drawn[i].run_id for i in front]
        if len(front):
            fx, fy = _step(xs[front], ys[front])
            self.front_item.setData(fx, fy)
            self.legend.addItem(self._legend_front, f"Pareto front ({len(front)} run(s))")
        self.legend.setVisible(True)
        self.plot_item.setLabel(
            "bottom", axis_title(self._catalog.get(xk, ()), xk), color="#222222"
        )
        self.plot_item.setLabel("left", axis_title(self._catalog.get(yk, ()), yk), color="#222222")
        left_out = len(self._points) - len(drawn)
        title = f"Risk–utility map of {len(drawn)} run(s) · colour = method · label = k"
        if left_out:
            title += f" · {left_out} run(s) without these measures not drawn"
        self.plot_item.setTitle(title, color="#222222", size="10pt")
        if len(drawn):
            view.setRange(xRange=_padded(xs, 0.12), yRange=_padded(ys, 0.1), padding=0.0)
        self._draw_current()

    def _draw_current(self) -> None:
        xk, yk = self.options.x_measure, self.options.y_measure
        point = next((p for p in self._points if p.run_id == self._current), None)
        if point is None or not (
            _finite(point.measures.get(xk)) and _finite(point.measures.get(yk))
        ):
            self.current_item.clear()
            return
        self.current_item.setData(x=[float(point.measures[xk])], y=[float(point.measures[yk])])  # type: ignore[arg-type]

    def _on_clicked(self, _item: pg.ScatterPlotItem, points: object, _event: object = None) -> None:
        spots = list(points)  # type: ignore[call-overload]
        if spots:
            self.run_clicked.emit(int(spots[0].data()))

    def point_position(self, run_id: int) -> tuple[float, float]:
        """Where a run is drawn (data coordinates)."""
        point = next(p for p in self._points if p.run_id == run_id)
        return (
            float(point.measures[self.options.x_measure]),  # type: ignore[arg-type]
            float(point.measures[self.options.y_measure]),  # type: ignore[arg-type]
        )

    def title_text(self) -> str:
        return str(self.plot_item.titleLabel.text)


def _finite(value: object) -> bool:
    if value is None or isinstance(value, bool):
        return False
    try:
        return bool(np.isfinite(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _padded(values: np.ndarray, fraction: float) -> tuple[float, float]:
    lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        span = abs(lo) * 0.1 or 1.0
        return lo - span, hi + span
    pad = fraction * (hi - lo)
    return lo - pad, hi + pad
