"""Scatter plot of a run's groups: original records coloured by group, group aggregates on top.

A view (STYLE.md §5, §7): it receives a :class:`RunResult` and the PCA computed in the worker and
keeps no copy of the data. One :class:`ScatterPlotItem` per layer, fed whole arrays; per-point
colour is ``palette[labels]`` with shared brushes; above ``max_points`` records a seeded random
sample is drawn and the title says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from microgui.core.projection import QIProjection
from microgui.core.runs import RunResult
from microgui.qt.plots.palette import ClusterPalette

__all__ = [
    "ClusterScatterPlot",
    "ScatterOptions",
    "PC1",
    "PC2",
    "sample_indices",
    "DEFAULT_MAX_POINTS",
]

PC1 = "PC1"
PC2 = "PC2"
DEFAULT_MAX_POINTS = 100_000


@dataclass
class ScatterOptions:
    """What the plot shows; kept apart from the widgets so it can be saved and tested alone."""

    x_axis: str = PC1
    y_axis: str = PC2
    show_protected: bool = True
    point_size: float = 5.0
    max_points: int = DEFAULT_MAX_POINTS
    sample_seed: int = 0
    #: The initial view spans these quantiles of the records (0: everything). Heavy tails
    #: (incomes, wealth) would otherwise squeeze the bulk of the data into a corner.
    view_quantile: float = 0.005


def sample_indices(n: int, max_points: int, seed: int) -> np.ndarray | None:
    """Sorted indices of a seeded random sample of ``max_points`` of ``n`` rows; None if n fits."""
    if n <= max_points:
        return None
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_points, replace=False))


class ClusterScatterPlot(QWidget):
    """X/Y choosers over a pyqtgraph plot of one run."""

    def __init__(
        self, parent: QWidget | None = None, options: ScatterOptions | None = None
    ) -> None:
        super().__init__(parent)
        self.options = options or ScatterOptions()
        self.cluster_palette = ClusterPalette()
        self._result: RunResult | None = None
        self._projection: QIProjection | None = None
        self.sampled: int | None = None  # number of records drawn when sampling, else None
        self.outside_view = 0  # drawn records outside the initial view

        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.setMinimumContentsLength(14)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.protected_check = QCheckBox("Show protected values (group aggregates)")
        self.protected_check.setChecked(self.options.show_protected)
        self.protected_check.toggled.connect(self._on_protected_toggled)

        self.plot_widget = pg.PlotWidget()
        self.plot_widget.setBackground("w")
        self.plot_item: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot_item.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen("#444444"))
            axis.setTextPen(pg.mkPen("#222222"))
        self.records_item = pg.ScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, pen=None, symbol="o"
        )
        self.records_item.setZValue(0)
        self.protected_item = pg.ScatterPlotItem(
            pxMode=True,
            useCache=True,
            hoverable=False,
            symbol="x",
            size=7,
            brush=self.cluster_palette.protected_brush,
            pen=None,
        )
        self.protected_item.setZValue(1)
        self.plot_item.addItem(self.records_item)
        self.plot_item.addItem(self.protected_item)
        self.legend = pg.LegendItem(
            offset=(-10, 6),
            colCount=2,
            labelTextColor="#222222",
            brush=pg.mkBrush(255, 255, 255, 220),
            pen=pg.mkPen("#bbbbbb"),
        )
        self.legend.setParentItem(self.plot_item.getViewBox())
        # Legend samples are stand-ins: the records layer has one brush per point.
        self._legend_record = pg.ScatterPlotItem(
            symbol="o", size=8, pen=None, brush=self.cluster_palette.brushes[0]
        )
        self._legend_protected = pg.ScatterPlotItem(
            symbol="x", size=10, pen=None, brush=self.cluster_palette.protected_brush
        )

        top = QHBoxLayout()
        top.addWidget(QLabel("X"))
        top.addWidget(self.x_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Y"))
        top.addWidget(self.y_combo)
        top.addSpacing(12)
        top.addWidget(self.protected_check)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot_widget, 1)
        self.clear()

    # content ------------------------------------------------------------------------------
    def clear(self, message: str = "Run a method to see its groups") -> None:
        self._result = None
        self._projection = None
        self.sampled = None
        self.records_item.clear()
        self.protected_item.clear()
        self.legend.clear()
        self.legend.setVisible(False)  # an empty legend still draws its frame
        self._set_axis_choices([])
        self.plot_item.setTitle(message, color="#444444", size="10pt")
        self.plot_item.setLabel("bottom", "")
        self.plot_item.setLabel("left", "")

    def axis_choices(self) -> list[str]:
        return [self.x_combo.itemData(i) for i in range(self.x_combo.count())]

    def _set_axis_choices(self, choices: list[str]) -> None:
        for combo in (self.x_combo, self.y_combo):
            combo.blockSignals(True)
            combo.clear()
            for name in choices:
                combo.addItem(self._choice_text(name), name)
            combo.blockSignals(False)
        self.x_combo.setEnabled(bool(choices))
        self.y_combo.setEnabled(bool(choices))

    def _choice_text(self, name: str) -> str:
        if name in (PC1, PC2) and self._projection is not None:
            ratio = self._projection.explained_ratio[0 if name == PC1 else 1]
            return f"{name} ({ratio:.0%})"
        return name

    def set_run(self, result: RunResult | None, projection: QIProjection | None) -> None:
        """Show a run (None clears the plot)."""
        if result is None:
            self.clear()
            return
        self._result = result
        self._projection = projection
        choices = ([PC1, PC2] if projection is not None else []) + list(result.qi.continuous_names)
        self._set_axis_choices(choices)
        if not choices:
            self.clear("No continuous or ordinal quasi-identifier to plot")
            return
        opts = self.options
        if opts.x_axis not in choices or opts.y_axis not in choices or opts.x_axis == opts.y_axis:
            opts.x_axis, opts.y_axis = self._default_axes(result, projection, choices)
        self._select(self.x_combo, opts.x_axis)
        self._select(self.y_combo, opts.y_axis)
        self.redraw()

    @staticmethod
    def _default_axes(
        result: RunResult, projection: QIProjection | None, choices: list[str]
    ) -> tuple[str, str]:
        cont = list(result.qi.continuous_names)
        if len(cont) == 2 and not result.qi.ordinal_names:
            return cont[0], cont[1]  # the two variables themselves read better than their PCs
        if projection is not None:
            return PC1, PC2
        return choices[0], choices[1] if len(choices) > 1 else choices[0]

    @staticmethod
    def _select(combo: QComboBox, name: str) -> None:
        combo.blockSignals(True)
        combo.setCurrentIndex(max(combo.findData(name), 0))
        combo.blockSignals(False)

    def set_axes(self, x_axis: str, y_axis: str) -> None:
        """Choose the axes (names from :meth:`axis_choices`)."""
        self.options.x_axis, self.options.y_axis = x_axis, y_axis
        self._select(self.x_combo, x_axis)
        self._select(self.y_combo, y_axis)
        self.redraw()

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is None or y is None:
            return
        self.options.x_axis, self.options.y_axis = str(x), str(y)
        self.redraw()

    def _on_protected_toggled(self, checked: bool) -> None:
        self.options.show_protected = checked
        self.redraw()

    def _axis_data(self, name: str) -> tuple[np.ndarray, np.ndarray, str]:
        """Original values, protected values (per record) and axis label of one axis choice."""
        result = self._result
        assert result is not None
        if name in (PC1, PC2):
            assert self._projection is not None
            i = 0 if name == PC1 else 1
            proj = self._projection
            ratio = proj.explained_ratio[i]
            return (
                proj.original[:, i],
                proj.protected[:, i],
                f"{name} ({ratio:.0%} of variance) · PCA of {len(proj.columns)} standardized QIs (z-score units)",
            )
        qi = result.qi
        j = qi.continuous_names.index(name)
        original = qi.continuous[:, j] * qi.cont_std[j] + qi.cont_mean[j]
        protected = pd.to_numeric(result.protected[name], errors="coerce").to_numpy(
            dtype=np.float64
        )
        return original, protected, f"{name} (original units)"

    def redraw(self) -> None:
        """Redraw both layers for the current options: one setData per layer, one range set."""
        result = self._result
        if result is None:
            return
        opts = self.options
        x, x_prot, x_label = self._axis_data(opts.x_axis)
        y, y_prot, y_label = self._axis_data(opts.y_axis)
        labels = result.labels
        n = len(labels)
        idx = sample_indices(n, opts.max_points, opts.sample_seed)
        self.sampled = None if idx is None else len(idx)
        if idx is not None:
            x, y, shown_labels = x[idx], y[idx], labels[idx]
        else:
            shown_labels = labels
        view = self.plot_item.getViewBox()
        view.disableAutoRange()
        self.records_item.setData(
            x=x,
            y=y,
            brush=self.cluster_palette.brushes_for(shown_labels),
            size=opts.point_size,
            symbol="o",
            pen=None,
        )
        # One protected point per group: every member of a group carries the same aggregate.
        _, first = np.unique(labels, return_index=True)
        px, py = x_prot[first], y_prot[first]
        keep = np.isfinite(px) & np.isfinite(py)
        px, py = px[keep], py[keep]
        if opts.show_protected:
            self.protected_item.setData(x=px, y=py)
            self.protected_item.setVisible(True)
        else:
            self.protected_item.clear()
            self.protected_item.setVisible(False)

        self.plot_item.setLabel("bottom", x_label, color="#222222")
        self.plot_item.setLabel("left", y_label, color="#222222")
        groups = result.n_groups
        if idx is None:
            title = f"{n:,} records in {groups:,} groups of ≥ {result.spec.k} ({result.spec.method}) · colour = group"
        else:
            title = (
                f"Random sample of {len(idx):,} of {n:,} records (seed {opts.sample_seed}) · "
                f"{groups:,} groups ({result.spec.method}, k = {result.spec.k}) · colour = group"
            )
        outside = self._set_range(x, y, px, py)
        self.outside_view = outside
        if outside:
            title += (
                f"<br><span style='font-size:9pt;color:#666'>{outside:,} outlying record(s) lie outside "
                "this view: right-click › View All to include them</span>"
            )
        self.plot_item.setTitle(title, color="#222222", size="10pt")
        self.legend.clear()
        self.legend.setVisible(True)
        self.legend.addItem(self._legend_record, "original record (colour = its group)")
        if opts.show_protected:
            self.legend.addItem(
                self._legend_protected,
                f"protected value = group aggregate ({len(px):,})",
            )

    def _set_range(self, x: np.ndarray, y: np.ndarray, px: np.ndarray, py: np.ndarray) -> int:
        """Set the view once; return how many drawn records fall outside it."""
        q = min(max(self.options.view_quantile, 0.0), 0.25)
        x_range = _span(x, px, q)
        y_range = _span(y, py, q)
        if x_range is None or y_range is None:
            return 0
        self.plot_item.getViewBox().setRange(xRange=x_range, yRange=y_range, padding=0.0)
        inside = (x >= x_range[0]) & (x <= x_range[1]) & (y >= y_range[0]) & (y <= y_range[1])
        return int(np.count_nonzero(~inside & np.isfinite(x) & np.isfinite(y)))

    def title_text(self) -> str:
        return str(self.plot_item.titleLabel.text)


def _span(values: np.ndarray, protected: np.ndarray, q: float) -> tuple[float, float] | None:
    """The axis range: the records' [q, 1-q] quantiles (all of them when q = 0) and the protected
    values inside them, padded by 4 %."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    if q > 0 and len(finite) > 100:
        lo, hi = (float(v) for v in np.quantile(finite, [q, 1.0 - q]))
    else:
        lo, hi = float(finite.min()), float(finite.max())
        prot = protected[np.isfinite(protected)]
        if len(prot):
            lo, hi = min(lo, float(prot.min())), max(hi, float(prot.max()))
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad
