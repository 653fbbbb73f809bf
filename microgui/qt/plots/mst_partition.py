"""The partition of a minimum spanning tree (``mst`` and ``mstk`` runs) drawn over the records.

A view (STYLE.md §5, §7): it receives a :class:`RunResult`, the projection and the
:class:`MstLayout` computed in the worker, and keeps no copy of the data. The records are one
:class:`ScatterPlotItem` coloured by final group (shared palette brushes). The tree's kept edges
are one curve per palette colour with ``connect='pairs'`` (an edge takes the colour of the group
both its ends belong to; kept edges joining two groups, where ``mst`` split a large tree by
MDAV, are one grey curve); the cut edges are one dashed red curve. Above
:data:`~microgui.core.views.layout.DEFAULT_MAX_EDGES` edges the layout holds a seeded subsample (all cut
edges first, then kept ones) and the title says so; above ``max_points`` records a seeded sample
of records is drawn, as in the cluster scatter plot.

Readable at survey size (issue 29): of the tree's edges, only those with both ends in the view
are drawn, at most ``max_view_edges`` of them (300: a seeded sample, nested as one zooms in,
:func:`~microgui.core.views.layout.edges_in_view`), and the title says how many ("drawing 300 of
5,012 edges in view: zoom in to see more"). The edges follow the view as it is zoomed or panned
(debounced). The records are coloured by group only when at most ``max_group_colours`` groups
are in view; otherwise they are light grey and the edges carry the groups' colours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from microgui.core.runs import RunResult
from microgui.core.views.layout import (
    MAX_VIEW_EDGES,
    PC1,
    PC2,
    MstLayout,
    ViewEdges,
    axis_choices,
    axis_values,
    edges_in_view,
)
from microgui.core.views.projection import QIProjection
from microgui.qt.plots.cluster_scatter import (
    DEFAULT_MAX_POINTS,
    LEGEND_GAP,
    LEGEND_ROW,
    sample_indices,
    show_axes,
)
from microgui.qt.plots.fast_scatter import FastScatterPlotItem
from microgui.qt.plots.legend_strip import LegendEntry, legend_below
from microgui.qt.plots.palette import ClusterPalette
from microgui.qt.plots.titles import FittedTitleAxisItem, fitted_axes, pc_short_title

__all__ = ["MstPartitionPlot", "MstOptions", "PLACEHOLDER", "CUT_COLOR", "BETWEEN_COLOR"]

PLACEHOLDER = "Run mst or mstk to see the partition of the minimum spanning tree"
CUT_COLOR = "#d62728"
#: Legend entries side by side tried, most first (all five on one line when the view holds them).
LEGEND_COLUMNS = (5, 4, 3, 2, 1)
BETWEEN_COLOR = "#8a8a8a"


@dataclass
class MstOptions:
    """What the plot shows; kept apart from the widgets so it can be saved and tested alone."""

    x_axis: str = PC1
    y_axis: str = PC2
    point_size: float = 5.0
    max_points: int = DEFAULT_MAX_POINTS
    sample_seed: int = 0
    show_kept: bool = True
    show_cut: bool = True
    #: The initial view spans these quantiles of the records (0: everything).
    view_quantile: float = 0.005
    #: At most this many tree edges are drawn, of those with both ends in the view.
    max_view_edges: int = MAX_VIEW_EDGES
    #: Records are coloured by group when at most this many groups are in view (else grey).
    max_group_colours: int = 12


class MstPartitionPlot(QWidget):
    """X/Y choosers and edge toggles over a pyqtgraph plot of a run's spanning tree."""

    def __init__(self, parent: QWidget | None = None, options: MstOptions | None = None) -> None:
        super().__init__(parent)
        self.options = options or MstOptions()
        self.cluster_palette = ClusterPalette()
        self._result: RunResult | None = None
        self._projection: QIProjection | None = None
        self._layout: MstLayout | None = None
        self._selection: np.ndarray | None = None
        self.sampled: int | None = None  # records drawn when sampling, else None
        self.kept_drawn = 0
        self.cut_drawn = 0
        #: The edges drawn for the current view (None before a run).
        self.view_edges: ViewEdges | None = None
        #: Whether the records are coloured by group (few groups in view) or grey.
        self.records_by_group = True
        self._coords: tuple[np.ndarray, np.ndarray, str, str] | None = None
        self._grey = np.empty(1, dtype=object)
        self._grey[0] = QBrush(QColor(150, 150, 150, 110))
        # Edges follow the view: redrawn once the zoom or pan has paused.
        self._view_timer = QTimer(self)
        self._view_timer.setSingleShot(True)
        self._view_timer.setInterval(80)
        self._view_timer.timeout.connect(self._draw_view)

        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.setMinimumContentsLength(14)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.kept_check = QCheckBox("Kept edges")
        self.kept_check.setChecked(self.options.show_kept)
        self.kept_check.setToolTip("Tree edges inside the groups (colour = group)")
        self.kept_check.toggled.connect(self._on_kept_toggled)
        self.cut_check = QCheckBox("Cut edges")
        self.cut_check.setChecked(self.options.show_cut)
        self.cut_check.setToolTip("Tree edges removed by the partitioning (dashed red)")
        self.cut_check.toggled.connect(self._on_cut_toggled)

        self.plot_widget = pg.PlotWidget(axisItems=fitted_axes())
        self.plot_widget.setBackground("w")
        self.plot_item: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot_item.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen("#444444"))
            axis.setTextPen(pg.mkPen("#222222"))
        # per-point palette brushes without pyqtgraph's per-point Python loops: 0.21 s of a
        # 0.34 s tab switch on Adult's 30,162 records with the plain item (issue 15)
        self.records_item = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, pen=None, symbol="o"
        )
        self.records_item.setZValue(0)
        self.plot_item.addItem(self.records_item)
        # One curve per palette colour (STYLE.md §7: never one item or one pen per edge).
        self.group_curves: list[pg.PlotCurveItem] = []
        for color in self.cluster_palette.colors:
            pen_color = QColor(color)
            pen_color.setAlpha(235)
            pen = QPen(pen_color)
            pen.setWidthF(1.4)
            pen.setCosmetic(True)
            curve = pg.PlotCurveItem(connect="pairs", pen=pen, antialias=False)
            curve.setZValue(1)
            self.plot_item.addItem(curve)
            self.group_curves.append(curve)
        between_pen = pg.mkPen(BETWEEN_COLOR, width=1.2)
        self.between_curve = pg.PlotCurveItem(connect="pairs", pen=between_pen, antialias=False)
        self.between_curve.setZValue(1)
        self.plot_item.addItem(self.between_curve)
        cut_color = QColor(CUT_COLOR)
        cut_color.setAlpha(210)
        self.cut_pen = pg.mkPen(cut_color, width=1.5, style=Qt.PenStyle.DashLine)
        self.cut_curve = pg.PlotCurveItem(connect="pairs", pen=self.cut_pen, antialias=False)
        # Under the records and the kept edges: cut edges are long where the tree jumps between
        # clusters, and on top they would hide the groups they separate.
        self.cut_curve.setZValue(-1)
        self.plot_item.addItem(self.cut_curve)
        self.selection_item = pg.ScatterPlotItem(
            pxMode=True,
            useCache=True,
            hoverable=False,
            symbol="o",
            brush=None,
            pen=pg.mkPen("#111111", width=1.8),
        )
        self.selection_item.setZValue(3)
        self.plot_item.addItem(self.selection_item)
        self.plot_item.getViewBox().sigRangeChangedManually.connect(self._on_view_moved)
        self.plot_item.getViewBox().sigRangeChanged.connect(self._on_view_moved)

        # The legend sits below the plot, outside its data, as in the groups plot: drawn over
        # the view's top right corner it hid records of Adult at 1366 × 768. One item draws it
        # (LegendStrip), as many entries side by side as the view's width holds, in a holder
        # cell under the bottom axis.
        # every entry on one line when the view's width holds them (a second line took ~25
        # of the ~150 pixels the plot has in a 1366 × 700 window)
        self.legend_holder, self.legend = legend_below(self.plot_item, LEGEND_ROW, LEGEND_COLUMNS)
        #: the legend's entries and the room they were laid out in (rebuilt only on a change)
        self._legend_entries: list[LegendEntry] = []
        self._legend_base: list[LegendEntry] = []  # without the selection's ring
        self._legend_key: object = None
        self.plot_item.getViewBox().sigResized.connect(self._on_view_resized)
        # Legend samples are stand-ins: the layers have one brush per point or one curve per colour.
        self._record_brush = self.cluster_palette.brushes[0]
        self._kept_pen = QPen(self.group_curves[0].opts["pen"])
        self._between_pen = QPen(between_pen)

        top = QHBoxLayout()
        top.addWidget(QLabel("X"))
        top.addWidget(self.x_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Y"))
        top.addWidget(self.y_combo)
        top.addSpacing(12)
        top.addWidget(self.kept_check)
        top.addWidget(self.cut_check)
        top.addStretch(1)
        # The title is a Qt label, not a plot title: a long plot title would set the plot's
        # minimum width.
        self.title_label = QLabel()
        self.title_label.setWordWrap(True)
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        self.title_label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.title_label.setStyleSheet("background: white; color: #222; padding: 4px 8px;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addSpacing(4)
        layout.addWidget(self.title_label)
        layout.addWidget(self.plot_widget, 1)
        self.clear()

    # content ------------------------------------------------------------------------------
    @property
    def layout_shown(self) -> MstLayout | None:
        return self._layout

    def clear(self, message: str = PLACEHOLDER) -> None:
        self._result = None
        self._projection = None
        self._layout = None
        self._coords = None
        self.view_edges = None
        self.sampled = None
        self.kept_drawn = self.cut_drawn = 0
        self.records_item.clear()
        self.selection_item.clear()
        for curve in (*self.group_curves, self.between_curve, self.cut_curve):
            curve.setData(x=np.zeros(0), y=np.zeros(0))
        self.legend.clear()
        self.legend.setVisible(False)
        self._legend_entries = []
        self._legend_base = []
        self._legend_key = None
        self.legend_holder.setFixedHeight(0)
        self._set_axis_choices([])
        self.title_label.setText(f"<span style='color:#444'>{message}</span>")
        self.plot_item.setLabel("bottom", "")
        self.plot_item.setLabel("left", "")
        show_axes(self.plot_item, False)

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

    def set_run(
        self,
        result: RunResult | None,
        projection: QIProjection | None,
        layout: MstLayout | None,
    ) -> None:
        """Show a run's tree; a run without one (or None) shows the placeholder."""
        if result is None or layout is None:
            self.clear()
            return
        self._result = result
        self._projection = projection
        self._layout = layout
        choices = axis_choices(result.qi, projection)
        self._set_axis_choices(choices)
        if not choices:
            self.clear(
                "No continuous or ordinal quasi-identifier to place the records on: "
                "the tree cannot be drawn"
            )
            return
        opts = self.options
        if opts.x_axis not in choices or opts.y_axis not in choices or opts.x_axis == opts.y_axis:
            opts.x_axis, opts.y_axis = self._default_axes(result, projection, choices)
        self._select(self.x_combo, opts.x_axis)
        self._select(self.y_combo, opts.y_axis)
        show_axes(self.plot_item, True)
        self.redraw()

    @staticmethod
    def _default_axes(
        result: RunResult, projection: QIProjection | None, choices: list[str]
    ) -> tuple[str, str]:
        cont = list(result.qi.continuous_names)
        if len(cont) == 2 and not result.qi.ordinal_names:
            return cont[0], cont[1]
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

    def set_selection(self, mask: np.ndarray | None) -> None:
        """Ring the selected records (a bool mask over the rows, or None)."""
        self._selection = mask
        self._draw_selection()
        if self._legend_base:
            self._fill_legend(self._with_selection(self._legend_base))

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is None or y is None:
            return
        self.options.x_axis, self.options.y_axis = str(x), str(y)
        self.redraw()

    def _on_kept_toggled(self, checked: bool) -> None:
        self.options.show_kept = checked
        self.redraw()

    def _on_cut_toggled(self, checked: bool) -> None:
        self.options.show_cut = checked
        self.redraw()

    def _coordinates(self) -> tuple[np.ndarray, np.ndarray, str, str]:
        result = self._result
        assert result is not None
        x, x_label = axis_values(result.qi, self._projection, self.options.x_axis)
        y, y_label = axis_values(result.qi, self._projection, self.options.y_axis)
        return x, y, x_label, y_label

    def redraw(self) -> None:
        """Redraw every layer for the current options: one setData per item, one range set."""
        result, layout = self._result, self._layout
        if result is None or layout is None:
            return
        self._coords = self._coordinates()
        x, y, x_label, y_label = self._coords
        view = self.plot_item.getViewBox()
        view.disableAutoRange()
        self.plot_item.setLabel("bottom", x_label, color="#222222")
        self.plot_item.setLabel("left", y_label, color="#222222")
        self._short_titles("bottom", x_label)
        self._short_titles("left", y_label)
        self._view_timer.stop()
        self._set_range(x, y)  # emits sigRangeChanged: the timer is stopped again below
        self._view_timer.stop()
        self._draw_view()

    def _short_titles(self, side: str, title: str) -> None:
        """A principal component's title without its long middle when the axis is short:
        "PC2 (10% of variance)" (the whole title is in the axis's tooltip)."""
        axis = self.plot_item.getAxis(side)
        short = pc_short_title(title)
        if short is not None and isinstance(axis, FittedTitleAxisItem):
            axis.set_short_titles(title, short)

    def _on_view_moved(self, *_args: object) -> None:
        if self._layout is not None:
            self._view_timer.start()

    def _draw_view(self) -> None:
        """Records, the edges in view (at most ``max_view_edges``), legend and title for the
        current view range."""
        result, layout, coords = self._result, self._layout, self._coords
        if result is None or layout is None or coords is None:
            return
        opts = self.options
        x, y, _xl, _yl = coords
        labels = result.labels
        n = len(labels)
        (x0, x1), (y0, y1) = self.plot_item.getViewBox().viewRange()

        idx = sample_indices(n, opts.max_points, opts.sample_seed)
        self.sampled = None if idx is None else len(idx)
        rx, ry, rl = (x, y, labels) if idx is None else (x[idx], y[idx], labels[idx])
        inside = (rx >= x0) & (rx <= x1) & (ry >= y0) & (ry <= y1)
        groups_in_view = len(np.unique(rl[inside])) if inside.any() else 0
        self.records_by_group = groups_in_view <= opts.max_group_colours
        if self.records_item.opts["size"] != opts.point_size:
            self.records_item.setSize(opts.point_size)
        brush = (
            self.cluster_palette.brushes_for(rl)
            if self.records_by_group
            else np.broadcast_to(self._grey, (len(rl),)).copy()
        )
        self.records_item.set_points(rx, ry, brush)

        view_edges = edges_in_view(layout, x, y, (x0, x1), (y0, y1), max_edges=opts.max_view_edges)
        self.view_edges = view_edges
        shown = view_edges.indices
        edges = layout.edges[shown]
        cut = layout.cut[shown]
        group = layout.edge_group[shown]
        k_colors = len(self.group_curves)
        kept_in_group = ~cut & (group >= 0)
        self.kept_drawn = 0
        for c, curve in enumerate(self.group_curves):
            pick = edges[kept_in_group & (group % k_colors == c)] if opts.show_kept else edges[:0]
            self._set_segments(curve, pick, x, y)
            self.kept_drawn += len(pick)
        between = edges[~cut & (group < 0)] if opts.show_kept else edges[:0]
        self._set_segments(self.between_curve, between, x, y)
        self.kept_drawn += len(between)
        cut_edges = edges[cut] if opts.show_cut else edges[:0]
        self._set_segments(self.cut_curve, cut_edges, x, y)
        self.cut_drawn = len(cut_edges)
        self._draw_selection()

        self.title_label.setText(self._title(result, layout, groups_in_view))
        record = self._record_brush if self.records_by_group else self._grey[0]
        entries = [
            LegendEntry(
                "o",
                8.0,
                record,
                "record (colour = its final group)"
                if self.records_by_group
                else f"record (grey: {groups_in_view:,} groups in view)",
            )
        ]
        if opts.show_kept:
            entries.append(
                LegendEntry("", 0.0, record, "kept edge (colour = group)", self._kept_pen)
            )
            if len(between):
                entries.append(
                    LegendEntry(
                        "",
                        0.0,
                        record,
                        "kept edge between groups (tree split by MDAV)",
                        self._between_pen,
                    )
                )
        if opts.show_cut:
            entries.append(LegendEntry("", 0.0, record, "cut edge", self.cut_pen))
        self._legend_base = entries
        self._fill_legend(self._with_selection(entries))

    def _with_selection(self, entries: list[LegendEntry]) -> list[LegendEntry]:
        """The entries, and the selection's ring when records are selected."""
        if self._selection is None:
            return entries
        ring = LegendEntry("o", 10.0, QBrush(), "selected record", self.selection_item.opts["pen"])
        return [*entries, ring]

    def _fill_legend(self, entries: list[LegendEntry]) -> None:
        """Show the entries under the plot, as many side by side as the view's width holds,
        and give the holder their height; the same entries in the same room are left as drawn
        (rebuilding a legend at every pan cost tens of ms: issue 30's stalls)."""
        self._legend_entries = entries
        room = self.plot_item.getViewBox().width()
        key = (tuple((e.text, e.brush.color().rgba()) for e in entries), room)
        if key == self._legend_key:
            return
        self._legend_key = key
        self.legend.set_entries(entries, room)
        self.legend.setVisible(bool(entries))
        height = self.legend.boundingRect().height() + LEGEND_GAP if entries else 0
        if self.legend_holder.height() != height:
            self.legend_holder.setFixedHeight(height)

    def _on_view_resized(self, *_args: object) -> None:
        """The view's new width: the legend's entries side by side as it now holds."""
        if self._legend_entries and self.legend.isVisible():
            self._fill_legend(self._legend_entries)

    @staticmethod
    def _set_segments(
        curve: pg.PlotCurveItem, edges: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> None:
        if len(edges) == 0:
            curve.setData(x=np.zeros(0), y=np.zeros(0))
            curve.setVisible(False)
            return
        curve.setData(x=x[edges].ravel(), y=y[edges].ravel(), connect="pairs")
        curve.setVisible(True)

    def _draw_selection(self) -> None:
        mask = self._selection
        if self._result is None or mask is None or len(mask) != len(self._result.labels):
            self.selection_item.clear()
            return
        x, y, _xl, _yl = self._coordinates()
        rows = np.flatnonzero(mask)[: self.options.max_points]
        self.selection_item.setData(x=x[rows], y=y[rows], size=self.options.point_size + 7)

    def _title(self, result: RunResult, layout: MstLayout, groups_in_view: int) -> str:
        n = len(result.labels)
        method = result.spec.method
        what = "pruned" if layout.source == "mstk" else "cut"
        title = (
            f"{n:,} records · minimum spanning tree of {layout.n_edges:,} edges, "
            f"{layout.n_cut:,} {what} · {result.n_groups:,} groups ({method}, k = {result.spec.k})"
        )
        notes: list[str] = []
        view = self.view_edges
        if view is not None:
            if view.in_view == 0:
                notes.append(
                    "<b>no tree edge has both ends in this view</b>: zoom out "
                    "(right-click › View All) to see the tree"
                )
            elif view.sampled:
                notes.append(
                    f"<b>drawing {len(view.indices):,} of {view.in_view:,} edges in view</b> "
                    f"(a random sample, seed {self.options.sample_seed}): zoom in to see more"
                )
            else:
                notes.append(f"all {view.in_view:,} edges in view drawn")
            if not (self.options.show_kept or self.options.show_cut):
                notes.append("both edge kinds are switched off above")
        if not self.records_by_group:
            notes.append(
                f"records grey: {groups_in_view:,} groups in view, coloured when "
                f"≤ {self.options.max_group_colours}"
            )
        if self.sampled is not None:
            notes.append(
                f"random sample of {self.sampled:,} of {n:,} records (seed {self.options.sample_seed})"
            )
        n_qi = len(result.roles.quasi_identifiers)
        if layout.source == "mstk":
            notes.append(
                f"tree of hierarchical distances on all {n_qi} quasi-identifiers, drawn in 2-D: "
                "long edges join records close in the hierarchies, not in this plane"
            )
        else:
            notes.append(
                f"tree of Euclidean distances on the {n_qi} standardized quasi-identifiers, "
                "drawn in 2-D: edges may cross"
            )
        return f"<b>{title}</b><br><span style='color:#555'>{' · '.join(notes)}</span>"

    def _set_range(self, x: np.ndarray, y: np.ndarray) -> None:
        q = min(max(self.options.view_quantile, 0.0), 0.25)
        x_range, y_range = _span(x, q), _span(y, q)
        if x_range is not None and y_range is not None:
            self.plot_item.getViewBox().setRange(xRange=x_range, yRange=y_range, padding=0.0)

    def title_text(self) -> str:
        return self.title_label.text()


def _span(values: np.ndarray, q: float) -> tuple[float, float] | None:
    """The [q, 1-q] quantiles of the finite values (all of them below 100 values), padded 4 %."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    if q > 0 and len(finite) > 100:
        lo, hi = (float(v) for v in np.quantile(finite, [q, 1.0 - q]))
    else:
        lo, hi = float(finite.min()), float(finite.max())
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad
