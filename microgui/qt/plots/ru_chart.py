"""The risk–utility map: one point per run, disclosure risk across, information loss up.

A view (STYLE.md §5, §7): it receives the runs' measures and draws them; it computes no measure.
One :class:`ScatterPlotItem` per method (the legend's entries, each point carrying its run id),
a text label "k = …" beside each point, and the Pareto front — the runs no other run beats on
both axes — as one step :class:`PlotDataItem`. Clicking a point emits ``run_clicked``.

Readable with many runs (a sweep of every method at several k): the legend sits beside the plot,
never over the points; labels that would overlap one already drawn are hidden (Pareto-front runs
are labelled first; every point's tooltip names its run), re-laid out on zoom. The default view
frames the runs on the scale of the Pareto front (:func:`microgui.core.views.ru_frame.ru_frame`): runs
far beyond it (differential privacy at a loss of 10⁴–10⁵ beside microaggregation at 5–30) are
drawn as arrows at the frame's edge, their value in their label and tooltip, and said in the
title. When the framed losses span more than two decades the loss axis switches to a log scale,
which its title says; the "log" scale shows every run. Tick labels are plain numbers (no SI
prefix, no "×0.001", no "5·10¹"); axes of measures that are never negative start at 0, or
a mark's width below it when a run sits at 0: the view holds every mark whole and its k label
(issue 30).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainterPath, QTransform
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from microgui.core.metrics.measure_text import format_measure
from microgui.core.release.report_charts import tick_text
from microgui.core.views.ru_frame import LOWER, pareto_front, ru_frame
from microgui.qt.compact import compact_combo
from microgui.qt.plots.chart_export import export_button
from microgui.qt.plots.palette import CLUSTER_COLORS
from microgui.qt.plots.titles import FittedTitleAxisItem, set_plot_title

__all__ = [
    "RuChartPlot",
    "RuChartOptions",
    "RuPoint",
    "pareto_front",
    "PlainAxisItem",
    "axis_title",
    "use_log_scale",
    "LOG_DECADES",
]

#: One symbol per method (cycled), drawn from large to small so that runs of different methods
#: at the same place (mdav and mdav-generic on continuous data) stay visible as nested marks.
SYMBOLS: tuple[str, ...] = ("o", "s", "t", "d", "h", "star", "p", "t1")
#: In "auto" scale, the loss axis turns logarithmic when its positive values span more decades.
LOG_DECADES = 2.0
#: Legend columns tried, fewest first: the first whose legend the plot's height holds.
LEGEND_COLUMNS = (1, 2, 3)
#: Pixels between the top of the chart and the legend (below the title's first line).
LEGEND_TOP = 36
#: Widest share of the chart a legend of several columns may take.
LEGEND_SHARE = 0.5


@dataclass
class RuChartOptions:
    """The measures on the axes (keys of the measure catalog; "" = the first that applies)."""

    x_measure: str = ""
    y_measure: str = ""
    #: Scale of the loss axis: "auto" (log when it spans > LOG_DECADES decades), "linear", "log".
    y_scale: str = "auto"
    #: The axis choosers list every measure (else the recommended ones for the table's
    #: quasi-identifier kinds, :func:`microgui.core.metrics.recommended.recommended_measures`,
    #: when the runs have any).
    all_measures: bool = False


def use_log_scale(values: np.ndarray, scale: str = "auto") -> bool:
    """Whether the loss axis is logarithmic: "log" always, "linear" never, "auto" when every
    value is positive, they span more than :data:`LOG_DECADES` decades and a linear axis would
    crowd most of them at its bottom (their median under a tenth of the largest)."""
    if scale == "log":
        return True
    if scale != "auto" or not len(values):
        return False
    values = np.asarray(values, dtype=np.float64)
    if values.min() <= 0:
        return False
    wide = np.log10(values.max() / values.min()) > LOG_DECADES
    return bool(wide and np.median(values) < 0.1 * values.max())


@dataclass(frozen=True)
class RuPoint:
    """One run on the map: its id, method, k and measures."""

    run_id: int
    method: str
    k: int
    measures: Mapping[str, float | int | None]


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


def _arrow(angle: float) -> QPainterPath:
    """An arrow symbol pointing up, turned by ``angle`` degrees clockwise (symbol units: a
    unit square around 0, y down)."""
    path = QPainterPath()
    path.moveTo(0.0, -0.5)
    path.lineTo(0.42, -0.02)
    path.lineTo(0.14, -0.02)
    path.lineTo(0.14, 0.5)
    path.lineTo(-0.14, 0.5)
    path.lineTo(-0.14, -0.02)
    path.lineTo(-0.42, -0.02)
    path.closeSubpath()
    return QTransform().rotate(angle).map(path)


#: Arrow symbols of off-scale runs by the side of the frame they point to.
ARROWS = {
    "up": _arrow(0.0),
    "right": _arrow(90.0),
    "down": _arrow(180.0),
    "left": _arrow(270.0),
    "up-right": _arrow(45.0),
}


class PlainAxisItem(FittedTitleAxisItem):
    """An axis whose tick labels are plain numbers ("0.5", "20", "10,000"): no SI prefix, no
    "(x0.001)" and, on a log scale, the values themselves rather than "5·10¹"."""

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)  # type: ignore[arg-type]
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        if self.logMode:
            return [tick_text(10.0**v, 10.0**v) for v in values]
        return [tick_text(v * scale, spacing * scale) for v in values]


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
        #: Axes the user chose ("x_measure", "y_measure"); the others follow the runs: the
        #: preferred measure that most runs have, so that generalization runs (mstk: no record
        #: linkage, no SSE/SST) are placed too (issue 13).
        self._chosen = {a for a in ("x_measure", "y_measure") if getattr(self.options, a)}
        self._points: list[RuPoint] = []
        self._catalog: dict[str, tuple[str, ...]] = {}
        self._current: int | None = None
        #: Measure keys shown first (and alone unless ``all_measures``), best first.
        self._recommended: list[str] = []
        #: The unprotected table's measures: the reference point (empty: none drawn).
        self._reference: dict[str, float | None] = {}
        #: Where the reference point is drawn (view coordinates), None when it is not.
        self.reference_position: tuple[float, float] | None = None
        self._plot_y: dict[int, float] = {}
        self._plot_x: dict[int, float] = {}
        #: The method of each scatter item drawn, in legend order.
        self.method_items: dict[str, pg.ScatterPlotItem] = {}
        self.labels: list[pg.TextItem] = []
        #: Run ids on the Pareto front, along x.
        self.front_ids: list[int] = []
        #: Run ids drawn (runs without both measures are left out).
        self.drawn_ids: list[int] = []
        #: Run ids drawn as arrows at the frame's edge (off the scale of the Pareto front).
        self.off_scale_ids: list[int] = []

        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            compact_combo(combo, 11, 260)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self._x_tip = (
            "Disclosure-risk measure across; until you choose one, the one most runs have "
            "(the map says when it switches)"
        )
        self._y_tip = (
            "Information-loss (or utility) measure up; by default IL, all QIs: 100·SSE/SST over "
            "every quasi-identifier in MDAV-generic's distance, generalized (mstk) runs included"
        )
        self.x_combo.setToolTip(self._x_tip)
        self.y_combo.setToolTip(self._y_tip)
        #: Why an axis the user did not choose switched to another measure (issue 30: a
        #: sweep's runs moved the risk axis without a word), by option name, until the user
        #: chooses that axis.
        self._switched: dict[str, tuple[str, str]] = {}

        self.scale_combo = QComboBox()
        for text, key in (("auto", "auto"), ("linear", "linear"), ("log", "log")):
            self.scale_combo.addItem(text, key)
        self.scale_combo.setCurrentIndex(max(self.scale_combo.findData(self.options.y_scale), 0))
        self.scale_combo.setToolTip(
            f"Scale of the loss axis; auto: logarithmic when it spans more than "
            f"{LOG_DECADES:g} decades"
        )
        self.scale_combo.currentIndexChanged.connect(self._on_scale_changed)
        self.all_check = QCheckBox("All measures")
        self.all_check.setToolTip(
            "Off: the axes offer the measures recommended for the table's quasi-identifiers "
            "(continuous: SSE/SST, record linkage; categorical: values changed, Hellinger, "
            "homogeneous share, individual risk). On: every measure the runs have."
        )
        self.all_check.setChecked(self.options.all_measures)
        self.all_check.toggled.connect(self._on_all_toggled)
        #: Whether the loss axis is drawn on a log scale now.
        self.log_y = False

        # The plot and, beside it, the legend: with a dozen methods a legend inside the plot
        # would hide points.
        self.plot_widget = pg.GraphicsLayoutWidget()
        self.plot_widget.setBackground("w")
        self.plot_item: pg.PlotItem = self.plot_widget.addPlot(
            row=0,
            col=0,
            axisItems={"left": PlainAxisItem("left"), "bottom": PlainAxisItem("bottom")},
        )
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
        # The unprotected table: information loss 0, its risk by the same measure (as in the
        # release report's risk-utility position).
        self.reference_item = pg.ScatterPlotItem(
            symbol="star", size=18, brush=pg.mkBrush("#ffffff"), pen=pg.mkPen("#111111", width=1.5)
        )
        self.reference_item.setZValue(2.5)
        self.plot_item.addItem(self.reference_item)
        self.reference_label = pg.TextItem("unprotected table", color="#111111", anchor=(-0.1, 1.1))
        self.reference_label.setZValue(4)
        self.plot_item.addItem(self.reference_label)
        # LegendItem places itself at (0, 0) whenever it resizes, so it cannot be a layout cell
        # itself: it is anchored in a holder cell whose width follows the legend's.
        self.legend_holder = pg.GraphicsWidget()
        self.plot_widget.addItem(self.legend_holder, row=0, col=1)
        self.plot_widget.ci.layout.setColumnStretchFactor(0, 1)
        # One legend per column count (pyqtgraph's setColumnCount misplaces the entries of a
        # filled legend): a sweep of every method is a legend taller than a laptop's plot, cut
        # at its bottom in one column (issue 30).
        self._legends = {n: self._new_legend(n) for n in LEGEND_COLUMNS}
        self.legend = self._legends[1]
        self._label_order: list[int] = []
        view = self.plot_item.getViewBox()
        view.sigRangeChanged.connect(lambda *_a: self._place_labels())
        view.sigResized.connect(lambda *_a: self._place_labels())
        view.sigResized.connect(lambda *_a: self._refit_legend())
        view.sigResized.connect(lambda *_a: self._frame_marks())
        #: The runs' frame before room is made for their marks: ranges and (x, y, px) marks.
        self._frame: tuple[Any, Any, Any] | None = None
        #: The ranges :meth:`_frame_marks` last set (None: none yet, or a new frame).
        self._framed: tuple[tuple[float, float], tuple[float, float]] | None = None
        self._legend_entries: list[tuple[object, str]] = []
        self._legend_room = 0.0
        self._legend_front = pg.PlotDataItem(
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine)
        )

        self.export = export_button(self, lambda: self.chart_item, "risk_utility_map")
        top = QHBoxLayout()
        top.addWidget(QLabel("Risk (x)"))
        top.addWidget(self.x_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Loss (y)"))
        top.addWidget(self.y_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Scale"))
        top.addWidget(self.scale_combo)
        top.addSpacing(12)
        top.addWidget(self.all_check)
        top.addStretch(1)
        top.addWidget(self.export)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot_widget, 1)
        self._draw()

    @property
    def chart_item(self) -> pg.GraphicsLayout:
        """The plot and its legend: what exports and reports show."""
        return self.plot_widget.ci

    # content ------------------------------------------------------------------------------
    def set_runs(
        self,
        points: Sequence[RuPoint],
        catalog: Mapping[str, Sequence[str]],
        *,
        reference: Mapping[str, float | int | None] | None = None,
        recommended: Sequence[str] = (),
    ) -> None:
        """Show these runs; ``catalog`` maps a measure key to (label, unit, direction, group).

        ``reference``: the unprotected table's measures (drawn as a star where it has both
        measures); ``recommended``: the measure keys to offer first (and alone until "All
        measures" is ticked)."""
        points = list(points)
        catalog_ = {str(k): tuple(v) for k, v in catalog.items()}
        reference_ = {str(k): float(v) for k, v in (reference or {}).items() if _finite(v)}
        recommended_ = list(dict.fromkeys(recommended))
        if (points, catalog_, reference_, recommended_) == (
            self._points,
            self._catalog,
            self._reference,
            self._recommended,
        ):
            # the same map (a reopened run rebuilt, the reference measured again): nothing to
            # redraw; 14 runs' labels and legend took 25-40 ms of the GUI thread (issue 30)
            return
        self._points = points
        self._catalog = catalog_
        self._reference = reference_
        self._recommended = recommended_
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

    def _default(self, keys: list[str], preferred: Sequence[str]) -> str:
        """The preferred measure the most runs have (earlier in ``preferred`` on a tie)."""
        candidates = [k for k in preferred if k in keys]
        if not candidates:
            return keys[0] if keys else ""
        count = {k: sum(_finite(p.measures.get(k)) for p in self._points) for k in candidates}
        return max(candidates, key=lambda k: (count[k], -candidates.index(k)))

    def _fill_combos(self) -> None:
        for combo, group, attr, preferred in (
            (self.x_combo, "risk", "x_measure", ("record_linkage", "reidentification_risk_max", "interval_disclosure", "k_anonymity")),
            (self.y_combo, "utility", "y_measure", ("information_loss_all_qi", "il", "information_loss", "pil")),
        ):  # fmt: skip
            keys = self._available(group)
            first = [k for k in self._recommended if k in keys]
            preferred = (*first, *preferred)
            if first:
                # recommended first; the rest only when asked for (or already chosen)
                rest = [k for k in keys if k not in first]
                chosen = getattr(self.options, attr)
                if self.options.all_measures:
                    keys = first + rest
                else:
                    keys = first + ([chosen] if chosen in rest and attr in self._chosen else [])
            current = previous = getattr(self.options, attr)
            if current not in keys or attr not in self._chosen:
                current = self._default(keys, preferred)
                setattr(self.options, attr, current)
                if previous and current and current != previous and self._points:
                    self._switched[attr] = (previous, current)
            if not self._points:
                self._switched.pop(attr, None)
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
        self._note_switches()

    def _switch_note(self, attr: str, previous: str, current: str) -> tuple[str, str]:
        """Why the map changed, short (its title) and in full (the chooser's tooltip): 'risk
        axis switched to X: 12 of 14 runs have it (Y: 2)'."""
        have = sum(_finite(p.measures.get(current)) for p in self._points)
        had = sum(_finite(p.measures.get(previous)) for p in self._points)
        name = self._catalog.get(current, (current,))[0]
        before = self._catalog.get(previous, (previous,))[0]
        axis = "risk" if attr == "x_measure" else "loss"
        whole = f"{axis} axis switched to {name}: {have} of {len(self._points)} runs have it"
        # the title's line short (the axis's own title names the measure): a line as long as
        # the measure's name widened the plot and pushed the legend's names out of the view
        # (Adult at 1366 × 768)
        short = f"{axis} axis switched by itself: {have} of {len(self._points)} runs have it"
        return short, (
            f"The {whole} ({before}: {had}). Choose a measure here to keep it: an axis you "
            "chose is never switched."
        )

    def _note_switches(self) -> None:
        """The axis choosers say when they switched by themselves (and why) in their tooltip."""
        for combo, attr, tip in (
            (self.x_combo, "x_measure", self._x_tip),
            (self.y_combo, "y_measure", self._y_tip),
        ):
            switch = self._switched.get(attr)
            note = self._switch_note(attr, *switch) if switch else None
            combo.setToolTip(f"{tip}\n\n{note[1]}" if note else tip)

    def set_measures(self, x_measure: str, y_measure: str) -> None:
        """Choose the measures on the axes (keys of the catalog)."""
        self.options.x_measure, self.options.y_measure = x_measure, y_measure
        self._chosen = {"x_measure", "y_measure"}
        self._switched.clear()
        self._note_switches()
        for combo, key in ((self.x_combo, x_measure), (self.y_combo, y_measure)):
            combo.blockSignals(True)
            combo.setCurrentIndex(max(combo.findData(key), 0))
            combo.blockSignals(False)
        self._draw()

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is None or y is None:
            return
        for attr, key in (("x_measure", str(x)), ("y_measure", str(y))):
            if getattr(self.options, attr) != key:  # the axis the user changed
                self._chosen.add(attr)
                setattr(self.options, attr, key)
                self._switched.pop(attr, None)
        self._note_switches()
        self._draw()

    def set_y_scale(self, scale: str) -> None:
        """ "auto", "linear" or "log" for the loss axis."""
        self.scale_combo.setCurrentIndex(max(self.scale_combo.findData(scale), 0))

    def _on_all_toggled(self, checked: bool) -> None:
        self.options.all_measures = checked
        self._fill_combos()
        self._draw()

    def _on_scale_changed(self, _index: int) -> None:
        self.options.y_scale = str(self.scale_combo.currentData() or "auto")
        self._draw()

    def direction(self, key: str) -> str:
        """Which side of a measure's axis is good ("lower is better" unless the catalog says)."""
        info = self._catalog.get(key, ())
        return info[2] if len(info) > 2 else LOWER

    def _draw(self) -> None:
        for item in self.method_items.values():
            self.plot_item.removeItem(item)
        for label in self.labels:
            self.plot_item.removeItem(label)
        self.method_items = {}
        self.labels = []
        self._label_order = []
        self.front_ids = []
        self.drawn_ids = []
        self.off_scale_ids = []
        self.front_item.setData([], [])
        self._frame, self._framed = None, None
        for legend in self._legends.values():
            legend.clear()
            legend.setVisible(False)
        self.legend = self._legends[1]
        self._legend_entries = []
        entries: list[tuple[object, str]] = []
        xk, yk = self.options.x_measure, self.options.y_measure
        if not self._points or not xk or not yk:
            self.legend.setVisible(False)
            self._fit_legend()
            self.plot_item.setLabel("bottom", "")
            self.plot_item.setLabel("left", "")
            self.reference_item.clear()
            self.reference_label.setVisible(False)
            self.reference_position = None
            self.plot_item.setTitle(
                "Finish runs to see their risk and information loss here" if not self._points
                else "No risk or information-loss measure to draw",
                color="#444444", size="10pt",
            )  # fmt: skip
            self._draw_current()
            return
        measured = [
            p for p in self._points if _finite(p.measures.get(xk)) and _finite(p.measures.get(yk))
        ]
        x_dir, y_dir = self.direction(xk), self.direction(yk)
        xs_all = np.array([float(p.measures[xk]) for p in measured])  # type: ignore[arg-type]
        ys_all = np.array([float(p.measures[yk]) for p in measured])  # type: ignore[arg-type]
        scale = self.options.y_scale
        if scale == "auto":
            # the log scale is decided on the runs the frame holds, not on off-scale ones
            first = ru_frame(xs_all, ys_all, x_dir, y_dir)
            self.log_y = use_log_scale(ys_all[~first.off], "auto")
        else:
            self.log_y = scale == "log"
        # On a log scale a loss of 0 (or below) has no place: such runs are left out, and said so.
        drawn = [p for p in measured if not self.log_y or float(p.measures[yk]) > 0]  # type: ignore[arg-type]
        self.drawn_ids = [p.run_id for p in drawn]
        xs = np.array([float(p.measures[xk]) for p in drawn])  # type: ignore[arg-type]
        ys = np.array([float(p.measures[yk]) for p in drawn])  # type: ignore[arg-type]
        # "log" shows every run; "auto" and "linear" frame the runs on the front's scale
        frame = ru_frame(xs, ys, x_dir, y_dir, log_y=self.log_y, frame=scale != "log")
        xs_plot, ys_plot = frame.shown_x, frame.shown_y
        off = frame.off
        self.off_scale_ids = [p.run_id for i, p in enumerate(drawn) if off[i]]
        self._plot_y = dict(zip(self.drawn_ids, ys_plot.tolist(), strict=True))
        self._plot_x = dict(zip(self.drawn_ids, xs_plot.tolist(), strict=True))
        self.plot_item.getAxis("left").setLogMode(False, self.log_y)
        methods = sorted({p.method for p in drawn})
        view = self.plot_item.getViewBox()
        view.disableAutoRange()
        x_info, y_info = self._catalog.get(xk, (xk,)), self._catalog.get(yk, (yk,))
        tips = {
            p.run_id: f"#{p.run_id} {p.method}, k = {p.k}\n{x_info[0]}: {xs[i]:.4g}"
            f"\n{y_info[0]}: {ys[i]:.4g}"
            + ("\n(off the scale of the other runs: drawn at the edge)" if off[i] else "")
            + "\n(click to show this run)"
            for i, p in enumerate(drawn)
        }
        arrows = []
        for i in range(len(drawn)):
            side = ("right" if x_dir == LOWER else "left") if frame.off_x[i] else ""
            if frame.off_y[i]:
                vertical = "up" if y_dir == LOWER else "down"
                side = "up-right" if side == "right" and vertical == "up" else vertical
            arrows.append(side)
        mark_px = np.zeros(len(drawn))  # each run's mark, in pixels across
        for m, method in enumerate(methods):
            rows = [i for i, p in enumerate(drawn) if p.method == method]
            color = QColor(CLUSTER_COLORS[m % len(CLUSTER_COLORS)])
            mark = SYMBOLS[m % len(SYMBOLS)]
            size = max(20 - 5 * m, 9)
            for i in rows:
                mark_px[i] = 18 if arrows[i] else size
            item = pg.ScatterPlotItem(
                x=xs_plot[rows],
                y=ys_plot[rows],
                data=np.array([drawn[i].run_id for i in rows], dtype=object),
                symbol=[ARROWS[arrows[i]] if arrows[i] else mark for i in rows],
                size=[18 if arrows[i] else size for i in rows],
                brush=pg.mkBrush(color),
                pen=[pg.mkPen("#222222" if arrows[i] else "#ffffff", width=1) for i in rows],
                hoverable=True,
                tip=lambda x, y, data, tips=tips: tips.get(int(data), ""),
            )
            # the legend's sample: the method's mark, whatever its points are drawn as
            item.opts.update(symbol=mark, size=size, pen=pg.mkPen("#ffffff", width=1))
            item.setZValue(2 + m / 100)
            item.sigClicked.connect(self._on_clicked)
            self.plot_item.addItem(item)
            self.method_items[method] = item
            entries.append((item, method))
        for i, p in enumerate(drawn):
            text = f"k={p.k}"
            if off[i]:  # its value, which the axis cannot show
                value = ys[i] if frame.off_y[i] else xs[i]
                text += f" · {_value_text(value)}"
            label = pg.TextItem(text, color="#333333", anchor=(-0.25, 1.0))
            if off[i]:
                label.setAnchor((-0.2, 0.5))  # beside its arrow
            label.setPos(float(xs_plot[i]), float(ys_plot[i]))
            label.setZValue(4)  # above the marks of other methods: a label is never hidden
            self.plot_item.addItem(label)
            self.labels.append(label)
        front = frame.front
        self.front_ids = [drawn[i].run_id for i in front]
        # Front runs are labelled first; the others where there is room.
        on_front = set(int(i) for i in front)
        self._label_order = [int(i) for i in front] + [
            i for i in range(len(drawn)) if i not in on_front
        ]
        if len(front):
            fx, fy = _step(xs_plot[front], ys_plot[front])
            self.front_item.setData(fx, fy)
            entries.append((self._legend_front, f"Pareto front ({len(front)} run(s))"))
        self._fill_legend(entries)
        self.plot_item.setLabel(
            "bottom", axis_title(self._catalog.get(xk, ()), xk), color="#222222"
        )
        self.plot_item.setLabel("left", axis_title(self._catalog.get(yk, ()), yk), color="#222222")
        # Short lines: the title's width is the plot's minimum width, which must leave room
        # for the legend beside it.
        title = f"Risk–utility map of {len(drawn)} run(s)" + (
            " · loss on a log scale" if self.log_y else ""
        )
        title += (
            "<br><span style='font-size:9pt;color:#555'>colour and mark = method · label = k"
            "<br>dashed = Pareto front</span>"
        )
        for attr in ("x_measure", "y_measure"):
            if attr in self._switched:  # counted now (a sweep's runs arrive after the switch)
                short = self._switch_note(attr, *self._switched[attr])[0]
                title += f"<br><span style='font-size:9pt;color:#8a4b00'>{short}</span>"
        measured_ids = {p.run_id for p in measured}
        shown_ids = set(self.drawn_ids)
        if self.off_scale_ids:
            names = ", ".join(sorted({p.method for p in drawn if p.run_id in self.off_scale_ids}))
            title += (
                f"<br><span style='font-size:9pt;color:#555'>{len(self.off_scale_ids)} run(s) "
                f"far off this scale drawn as arrows at the edge ({names}); "
                "scale “log” shows all</span>"
            )
        for why, left_out in (
            ("without these measures", [p for p in self._points if p.run_id not in measured_ids]),
            ("with a loss ≤ 0 (log scale)", [p for p in measured if p.run_id not in shown_ids]),
        ):
            if left_out:
                names = ", ".join(sorted({p.method for p in left_out}))
                title += (
                    f"<br><span style='font-size:9pt;color:#555'>{len(left_out)} run(s) {why} "
                    f"not drawn ({names})</span>"
                )
        x_range, y_range = frame.x_range, frame.y_range
        reference = self._reference_point(xk, yk)
        if reference is not None:
            rx, ry = reference
            title += (
                "<br><span style='font-size:9pt;color:#555'>☆ = the unprotected table "
                f"({_value_text(rx)}, {_value_text(10.0**ry if self.log_y else ry)})</span>"
            )
            if len(drawn):  # the frame grows to hold it
                (x0, x1), (y0, y1) = x_range, y_range
                pad_x, pad_y = 0.05 * (x1 - x0 or 1.0), 0.05 * (y1 - y0 or 1.0)
                x_range = (min(x0, rx - pad_x), max(x1, rx + 4 * pad_x))
                y_range = (min(y0, ry - pad_y), max(y1, ry + pad_y))
        elif self._reference:
            why = (
                "its loss of 0 has no place on a log scale"
                if self.log_y and _finite(self._reference.get(xk))
                else "it has no value for these measures"
            )
            title += (
                "<br><span style='font-size:9pt;color:#555'>the unprotected table is not drawn: "
                f"{why}</span>"
            )
        set_plot_title(self.plot_item, title, color="#222222", size="10pt")
        if reference is not None:
            # the label on the side of the star that has room
            right_half = reference[0] > (x_range[0] + x_range[1]) / 2
            self.reference_label.setAnchor((1.1, 1.1) if right_half else (-0.1, 1.1))
        if len(drawn):
            marks = [(float(xs_plot[i]), float(ys_plot[i]), mark_px[i]) for i in range(len(drawn))]
            if reference is not None:
                marks.append((reference[0], reference[1], 18.0))
            self._frame = (x_range, y_range, marks)
            self._frame_marks()
        self._draw_current()
        self._place_labels()

    def _frame_marks(self) -> None:
        """Show the frame of the runs drawn with room for their marks and labels at the view's
        present size (again after a resize, unless the user zoomed or panned since)."""
        if self._frame is None:
            return
        view = self.plot_item.getViewBox()
        if self._framed is not None and not np.allclose(view.viewRange(), self._framed):
            return  # the user's own view
        x_range, y_range = self._room_for_marks(*self._frame)
        self._framed = (x_range, y_range)
        view.setRange(xRange=x_range, yRange=y_range, padding=0.0)

    def _room_for_marks(
        self,
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        marks: Sequence[tuple[float, float, float]],
    ) -> tuple[tuple[float, float], tuple[float, float]]:
        """The view's ranges widened so that every mark ``(x, y, size in px)`` is whole inside
        them, with the ring of the run shown, and each run's k label beside it (issue 30: a
        t-closeness run at risk 0 sat on the axis, half its mark clipped, its label hidden).
        Pixels are the view's at this size; the ranges only grow."""
        self.plot_widget.ci.layout.activate()  # the view's size with the legend and titles
        view = self.plot_item.getViewBox()
        width, height = view.width(), view.height()
        if width < 50 or height < 50:  # not laid out yet: a laptop's plot
            width, height = 420.0, 300.0
        ring = 22.0  # the shown run's ring (current_item)
        # what each run needs around it, in pixels: left, right, below, above
        needs = []
        for i, (x, y, size) in enumerate(marks):
            half = max(size, ring) / 2 + 2
            left, right, below, above = half, half, half, half
            if i < len(self.labels):
                label = self.labels[i]
                rect = label.textItem.boundingRect()
                ax, ay = float(label.anchor[0]), float(label.anchor[1])
                right = max(right, (1 - ax) * rect.width() + 1)
                left = max(left, ax * rect.width() + 1)
                above = max(above, ay * rect.height() + 1)
                below = max(below, (1 - ay) * rect.height() + 1)
            needs.append((x, y, left, right, below, above))
        (x0, x1), (y0, y1) = x_range, y_range
        for _ in range(3):  # widening changes the scale: a few rounds settle it
            sx, sy = (x1 - x0) / width, (y1 - y0) / height
            x0 = min([x0] + [x - left * sx for x, _y, left, _r, _b, _a in needs])
            x1 = max([x1] + [x + right * sx for x, _y, _l, right, _b, _a in needs])
            y0 = min([y0] + [y - below * sy for _x, y, _l, _r, below, _a in needs])
            y1 = max([y1] + [y + above * sy for _x, y, _l, _r, _b, above in needs])
        return (x0, x1), (y0, y1)

    def _reference_point(self, xk: str, yk: str) -> tuple[float, float] | None:
        """Draw the unprotected table's point (view coordinates) or hide it; its position."""
        x, y = self._reference.get(xk), self._reference.get(yk)
        self.reference_position = None
        if x is None or y is None or (self.log_y and y <= 0):
            self.reference_item.clear()
            self.reference_label.setVisible(False)
            return None
        y_plot = float(np.log10(y)) if self.log_y else float(y)
        self.reference_item.setData(x=[float(x)], y=[y_plot])
        self.reference_item.setToolTip(
            f"the unprotected table (identifiers left out)\n{x:.4g}, {y:.4g}"
        )
        self.reference_label.setPos(float(x), y_plot)
        self.reference_label.setVisible(True)
        self.reference_position = (float(x), y_plot)
        return self.reference_position

    def _new_legend(self, columns: int) -> pg.LegendItem:
        legend = pg.LegendItem(
            offset=(2, LEGEND_TOP),
            colCount=columns,
            labelTextColor="#222222",
            brush=pg.mkBrush(255, 255, 255, 225),
            pen=pg.mkPen("#bbbbbb"),
        )
        legend.setParentItem(self.legend_holder)
        legend.setVisible(False)
        return legend

    def _fill_legend(self, entries: list[tuple[object, str]]) -> None:
        """The legend beside the plot in the fewest columns whose height the plot holds."""
        self._legend_entries = entries
        self.plot_widget.ci.layout.activate()
        room = self.plot_item.sceneBoundingRect().height() - LEGEND_TOP
        self._legend_room = room
        widest = LEGEND_SHARE * self.plot_widget.width()

        def fill(columns: int) -> QRectF:
            self.legend = self._legends[columns]
            for item, text in entries:
                self.legend.addItem(item, text)
            self.legend.layout.activate()
            self.legend.updateSize()
            return self.legend.boundingRect()

        for i, columns in enumerate(LEGEND_COLUMNS):
            rect = fill(columns)
            if i and rect.width() > widest:  # too wide for the plot beside it: one fewer
                self.legend.clear()
                fill(LEGEND_COLUMNS[i - 1])
                break
            if columns == LEGEND_COLUMNS[-1] or rect.height() <= room:
                break
            self.legend.clear()
        self.legend.setVisible(bool(entries))
        self._fit_legend()

    def _refit_legend(self) -> None:
        """On a resize of the plot's height, the legend's columns chosen again."""
        room = self.plot_item.sceneBoundingRect().height() - LEGEND_TOP
        if self._legend_entries and abs(room - self._legend_room) > 10:
            for legend in self._legends.values():
                legend.clear()
            self._fill_legend(self._legend_entries)

    def _fit_legend(self) -> None:
        """Give the legend's column the legend's width (none when it is hidden)."""
        if not self.legend.isVisible():
            self.legend_holder.setFixedWidth(0)
            return
        # The label items know their final size only once the legend's layout has run.
        self.legend.layout.activate()
        self.legend.updateSize()
        width = max(self.legend.width(), self.legend.layout.preferredWidth())
        self.legend_holder.setFixedWidth(width + 10)

    def _place_labels(self) -> None:
        """Show the k labels that do not overlap one shown before (in :attr:`_label_order`),
        in screen space, so that co-located runs of the same k get one label."""
        if not self.labels:
            return
        view = self.plot_item.getViewBox()
        bounds = view.sceneBoundingRect()
        taken: list[QRectF] = []
        for i in self._label_order:
            label = self.labels[i]
            pos = label.pos()
            anchor = view.mapViewToScene(QPointF(pos.x(), pos.y()))
            size = label.textItem.boundingRect()
            ax, ay = float(label.anchor[0]), float(label.anchor[1])
            rect = QRectF(
                anchor.x() - ax * size.width(),
                anchor.y() - ay * size.height(),
                size.width(),
                size.height(),
            ).adjusted(2, 4, -2, -4)  # the text item's margins
            show = (
                bounds.contains(anchor)
                and bounds.contains(rect)
                and not any(rect.intersects(r) for r in taken)
            )
            label.setVisible(show)
            if show:
                taken.append(rect)

    def _draw_current(self) -> None:
        xk, yk = self.options.x_measure, self.options.y_measure
        point = next((p for p in self._points if p.run_id == self._current), None)
        if point is None or not (
            _finite(point.measures.get(xk)) and _finite(point.measures.get(yk))
        ):
            self.current_item.clear()
            return
        if point.run_id not in self._plot_y:
            self.current_item.clear()
            return
        self.current_item.setData(x=[self._plot_x[point.run_id]], y=[self._plot_y[point.run_id]])

    def _on_clicked(self, _item: pg.ScatterPlotItem, points: object, _event: object = None) -> None:
        spots = list(points)  # type: ignore[call-overload]
        if spots:
            self.run_clicked.emit(int(spots[0].data()))

    def point_position(self, run_id: int) -> tuple[float, float]:
        """Where a run is drawn (view coordinates: log10 of the loss on a log scale; the frame's
        edge for an off-scale run)."""
        return self._plot_x[run_id], self._plot_y[run_id]

    def visible_labels(self) -> list[str]:
        """The k labels shown (not hidden for overlapping another)."""
        return [lbl.textItem.toPlainText() for lbl in self.labels if lbl.isVisible()]

    def title_text(self) -> str:
        return str(self.plot_item.titleLabel.text)


def _value_text(value: float) -> str:
    """A measure written as in the compare table and the history: "31,245", "87.31", "0.0412"."""
    return format_measure(value)


def _finite(value: object) -> bool:
    if value is None or isinstance(value, bool):
        return False
    try:
        return bool(np.isfinite(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
