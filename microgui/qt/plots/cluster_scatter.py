"""Scatter plot of a run's groups: original records coloured by group, group aggregates on top.

A view (STYLE.md §5, §7): it receives a :class:`RunResult` and the PCA computed in the worker and
keeps no copy of the data. One scatter item per layer (records, group aggregates), fed whole
arrays, ``pen=None``; per-point colour is ``palette[labels]`` with the palette's shared brushes,
drawn by :class:`FastScatterPlotItem` (pyqtgraph's item without its per-point Python loops, so that
100,000 points redraw within 100 ms). Above ``density_threshold`` records (default 100,000) the
records are drawn as a density image instead — an :class:`ImageItem` of their 2-D histogram on a
log colour scale with its colour bar — and the title says so (glue switches at the same size).
``display`` forces either mode; in "points" mode, above ``max_points`` a seeded random sample is
drawn and the title says so. Over a density image, at most ``max_density_aggregates`` group
aggregates are drawn (a seeded sample, said in the title).

Axes: PC1/PC2 of the run's projection (:func:`microgui.core.views.projection.qi_projection`, the PCA of
the mixed-distance embedding, computed in the worker) or any quasi-identifier. A continuous one
is drawn in its original units; an ordinal or nominal one as category slots
(:func:`microgui.core.views.projection.category_axis`: ordinal in its order, nominal by decreasing
frequency) labelled with the categories, each record jittered uniformly within ±0.35 of its
slot (seeded by the options' ``sample_seed`` and the column), each group aggregate likewise,
within the slot of its released category. Tick labels that do not fit are written smaller (down
to 7 pt), then thinned out (every m-th) and elided, never overprinted; the axis title says so.

**At survey size** (issue 29): above ``density_threshold`` records (default 5,000), or above
``categorical_density_min`` records with a category axis, "auto" draws the originals as the
density image and the released aggregates on top. Records (or, over a density image, the
aggregates) are coloured by group only when at most ``max_group_colours`` groups are in view
(zoom in to get there); otherwise by how far protection moved them, in the plot's standardized
space (:mod:`microgui.core.views.moves`: standard deviations, a changed category counting 1),
with a legend of the classes. Clicking a record lists its group's members, original against
released values, in a side panel (on screen only). With categorical quasi-identifiers the
default axes are a continuous quasi-identifier and a category axis, not the principal
components of the mixed embedding (still offered, labelled as such).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPicture
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from microgui.core.runs import RunResult
from microgui.core.views.moves import (
    MOVE_EDGES,
    PairMoves,
    axis_moves,
    distance_moved,
    first_of_groups,
    group_members,
    move_class_labels,
    move_classes,
)
from microgui.core.views.moves import group_mean_moves as group_means
from microgui.core.views.projection import (
    JITTER,
    PC1,
    PC2,
    SPAN_SAMPLE,
    CategoryAxis,
    QIProjection,
    category_axis,
    category_jitter,
    default_axes,
    plot_axis_choices,
    released_numbers,
    tail_quantiles,
)
from microgui.qt.compact import compact_combo
from microgui.qt.plots.fast_scatter import FastScatterPlotItem
from microgui.qt.plots.legend_strip import LegendEntry, legend_below
from microgui.qt.plots.palette import ClusterPalette
from microgui.qt.plots.titles import FittedTitleAxisItem, pc_short_title, set_plot_title

__all__ = [
    "show_axes",
    "AxisValues",
    "axis_values",
    "ClusterScatterPlot",
    "CategoryAxisItem",
    "MAX_AXIS_PX",
    "ScatterOptions",
    "PC1",
    "PC2",
    "sample_indices",
    "density_image",
    "first_of_groups",
    "group_means",
    "DEFAULT_MAX_POINTS",
    "DEFAULT_DENSITY_THRESHOLD",
    "DISPLAY_MODES",
    "default_axes",
    "ready_moves",
    "group_firsts",
    "slot_span",
    "SPAN_SAMPLE",
    "tail_quantiles",
]

DEFAULT_MAX_POINTS = 100_000
#: The legend's place in the PlotItem's grid: under the bottom axis (row 3), below the view.
LEGEND_ROW = 4
#: Entries side by side tried, most first: the first count whose legend fits the view's width.
LEGEND_COLUMNS = (3, 2, 1)
#: Pixels between the bottom axis and the legend.
LEGEND_GAP = 4
#: Above this many records the records are drawn as a density image (issue 29: 30,000 points
#: coloured by 6,000 groups were bands of noise; STYLE.md §7 had 100,000).
DEFAULT_DENSITY_THRESHOLD = 5_000
#: Colours of the distance-moved classes (:func:`microgui.core.views.moves.move_classes`), light
#: to dark, then grey for records not placed.
MOVE_COLORS: tuple[str, ...] = ("#fee391", "#fdae61", "#f46d43", "#d73027", "#7f0000", "#9e9e9e")
#: "auto": points up to the threshold, a density image above; or always one of the two.
DISPLAY_MODES = ("auto", "points", "density")


def show_axes(plot_item: pg.PlotItem, shown: bool) -> None:
    """A plot's left and bottom axes and its grid, shown or hidden: hidden while the plot has
    nothing drawn (issue 30: an empty groups or MST view showed a 0-1 scale on both axes,
    numbers that measure nothing)."""
    for name in ("left", "bottom"):
        plot_item.showAxis(name, shown)
    plot_item.showGrid(x=shown, y=shown, alpha=0.15)


class AxisValues(NamedTuple):
    """One axis of a run's record plot: where the original records and their released values
    are drawn, the axis title and its tooltip, how far protection moved each record along the
    axis (:func:`microgui.core.views.moves.axis_moves`; None when not asked for) and, for an
    ordinal or nominal quasi-identifier, its category axis (None otherwise)."""

    original: np.ndarray
    protected: np.ndarray
    title: str
    tip: str
    moves: np.ndarray | None
    categories: CategoryAxis | None = None


def axis_values(
    result: RunResult,
    projection: QIProjection | None,
    name: str,
    seed: int = 0,
    moves: bool = True,
) -> AxisValues:
    """The values of axis choice ``name`` for one run, as the groups plot and the comparison
    plots both draw them (one function, so that a record sits at the same place in both):
    PC1/PC2 of the run's projection, a continuous quasi-identifier in its original units, an
    ordinal or nominal one as category slots (records and group aggregates spread at random,
    with ``seed``, within ±:data:`~microgui.core.views.projection.JITTER` of their slot; one
    offset per group, its members carrying the same aggregate). Slots, category axes and
    released numbers come from the projection computed in the run's worker when it has them
    (nothing but arrays on the GUI thread). ``moves``: compute the records' moves along the
    axis (not needed when the worker computed the pair's, :func:`ready_moves`)."""
    if name in (PC1, PC2):
        assert projection is not None
        i = 0 if name == PC1 else 1
        original, protected = projection.original[:, i], projection.protected[:, i]
        return AxisValues(
            original,
            protected,
            projection.axis_label(i),
            projection.explanation(),
            axis_moves(original, protected, False) if moves else None,
        )
    qi = result.qi
    if name in qi.continuous_names:
        j = qi.continuous_names.index(name)
        original = qi.continuous[:, j] * qi.cont_std[j] + qi.cont_mean[j]
        ready = projection.released_numbers.get(name) if projection is not None else None
        protected = ready if ready is not None else released_numbers(result.protected, name)
        return AxisValues(
            original,
            protected,
            f"{name} (original units)",
            "",
            axis_moves(original, protected, False) if moves else None,
        )
    axis = projection.category_axes.get(name) if projection is not None else None
    if axis is None:
        axis = category_axis(qi, name)
    slots = projection.released_slots.get(name) if projection is not None else None
    if slots is None:
        slots = axis.slots_of(result.protected[name])
    labels = result.labels
    n_groups = int(labels.max()) + 1 if len(labels) else 0
    original = axis.original + category_jitter(len(labels), seed, name)
    protected = slots + category_jitter(n_groups, seed, name + "\x00released")[labels]
    tip = (
        f"{name}: {axis.kind} quasi-identifier, categories {axis.order_rule}, one slot each "
        f"(bottom/left first). Records and group aggregates are spread at random "
        f"(seed {seed}) within ±{JITTER} of their category's slot so that they do not hide "
        "each other; the position within a slot means nothing."
    )
    return AxisValues(
        original,
        protected,
        f"{name} ({axis.kind}, {len(axis.labels)} categories)",
        tip,
        axis_moves(axis.original, slots, True) if moves else None,
        axis,
    )


def group_firsts(projection: QIProjection | None, labels: np.ndarray) -> np.ndarray:
    """The row of each group's first record (:func:`first_of_groups` of ``labels``), as the
    run's worker found it with the projection when it did."""
    if projection is None or projection.group_firsts is None:
        return first_of_groups(labels)
    if len(projection.original) != len(labels):  # (not this run's)
        return first_of_groups(labels)
    return projection.group_firsts


def ready_moves(
    projection: QIProjection | None, x_axis: str, y_axis: str, n: int
) -> PairMoves | None:
    """The moves of the axes (``x_axis``, ``y_axis``) of a run of ``n`` records as its worker
    computed them with the projection (:func:`microgui.core.views.moves.with_plot_defaults`:
    the axes the plots open on), or None when it did not (other axes: computed on the spot)."""
    moved = projection.moved if projection is not None else None
    if moved is None or moved.axes != (x_axis, y_axis) or len(moved.distance) != n:
        return None
    return moved


@dataclass
class ScatterOptions:
    """What the plot shows; kept apart from the widgets so it can be saved and tested alone."""

    #: "" = chosen for the run (:meth:`ClusterScatterPlot._default_axes`).
    x_axis: str = ""
    y_axis: str = ""
    show_protected: bool = True
    point_size: float = 5.0
    max_points: int = DEFAULT_MAX_POINTS
    sample_seed: int = 0
    #: The initial view spans these quantiles of the records (0: everything). Heavy tails
    #: (incomes, wealth) would otherwise squeeze the bulk of the data into a corner.
    view_quantile: float = 0.005
    #: Records above which "auto" draws a density image rather than points.
    density_threshold: int = DEFAULT_DENSITY_THRESHOLD
    #: Bins of the density image along each axis.
    density_bins: int = 256
    #: One of :data:`DISPLAY_MODES`.
    display: str = "auto"
    #: Over a density image, at most this many group aggregates are drawn (a seeded sample,
    #: said in the title): 70,000 dots would hide the image and hold the GUI thread.
    max_density_aggregates: int = 10_000
    #: With a category axis, "auto" draws a density image above this many records.
    categorical_density_min: int = 1_000
    #: Colour by group only when at most this many groups are in view (else by distance moved).
    max_group_colours: int = 12

    def uses_density(self, n: int, categorical: bool = False) -> bool:
        """Whether ``n`` records are drawn as a density image (``categorical``: an axis is)."""
        if self.display == "density":
            return True
        if self.display != "auto":
            return False
        return n > self.density_threshold or (categorical and n > self.categorical_density_min)


def density_image(
    x: np.ndarray,
    y: np.ndarray,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    bins: int,
) -> tuple[np.ndarray, int]:
    """Counts of the records in a ``bins`` × ``bins`` grid over the ranges (x along the first
    axis, as ImageItem expects) and how many finite records fall outside the ranges.

    The same counts as ``np.histogram2d(x, y, bins, range=[x_range, y_range])`` (bins closed on
    the left, the last one on both sides), computed as ``np.histogram`` does for equal bins:
    arithmetic bin numbers corrected against the edges, then one ``bincount``. histogram2d
    binary-searches the edges instead: about 4× slower at 350,000 records (issue 6).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    finite = int(np.count_nonzero(np.isfinite(x) & np.isfinite(y)))
    (x0, x1), (y0, y1) = x_range, y_range
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)  # False for NaN
    ix = _bin_numbers(x[inside], x0, x1, bins)
    iy = _bin_numbers(y[inside], y0, y1, bins)
    flat = np.bincount(ix * bins + iy, minlength=bins * bins)
    counts = flat.reshape(bins, bins).astype(np.float64)
    return counts, finite - len(ix)


def _bin_numbers(values: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """Bin of each value of [lo, hi] among ``bins`` equal bins (edges as ``np.linspace``)."""
    edges = np.linspace(lo, hi, bins + 1)
    scale = bins / (hi - lo) if hi > lo else 0.0
    index = ((values - lo) * scale).astype(np.intp)
    np.clip(index, 0, bins - 1, out=index)
    # Rounding can put a value one bin off its edges: move it back (numpy's histogram does too).
    index[values < edges[index]] -= 1
    up = (values >= edges[index + 1]) & (index != bins - 1)
    index[up] += 1
    return index


def sample_indices(n: int, max_points: int, seed: int) -> np.ndarray | None:
    """Sorted indices of a seeded random sample of ``max_points`` of ``n`` rows; None if n fits."""
    if n <= max_points:
        return None
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_points, replace=False))


#: The longest axis measured, in pixels (an 8K screen is 7,680 pixels wide): a longer length
#: (a degenerate layout or view transform) is measured as this one.
MAX_AXIS_PX = 10_000.0


#: The smallest font category labels are written in before every other one is left out.
MIN_TICK_PT = 7.0


def _smaller_sizes(points: float) -> list[float]:
    """Point sizes below ``points`` down to :data:`MIN_TICK_PT`, half a point apart."""
    sizes = []
    size = points - 0.5
    while size >= MIN_TICK_PT:
        sizes.append(size)
        size -= 0.5
    return sizes


class CategoryAxisItem(FittedTitleAxisItem):
    """An axis that shows category labels at the integer slots 0..K-1 when given categories,
    and pyqtgraph's numeric ticks otherwise.

    pyqtgraph draws every tick label it is given, overlapping or not; this axis gives only as
    many as fit (every ``label_step``-th slot: labels one text line apart on a vertical axis,
    one widest label apart on a horizontal one). Labels longer than ``max_label_px`` are
    elided; on a horizontal axis down to ``min_label_px`` to fit one slot, before thinning.
    """

    def __init__(
        self, orientation: str, max_label_px: int = 150, min_label_px: int = 64, **kwargs: object
    ) -> None:
        super().__init__(orientation, **kwargs)  # type: ignore[arg-type]
        self.categories: tuple[str, ...] | None = None
        self.max_label_px = max_label_px
        self.min_label_px = min_label_px
        self._elide_px = max_label_px
        #: Every how many slots a label was drawn at the last layout (1: all of them).
        self.label_step = 1
        #: The tick font without categories (None: the application's); with them, a smaller
        #: one when that labels every slot (:meth:`tickValues`).
        self._base_font: QFont | None = self.style.get("tickFont")
        self._font_fixed = False

    def set_categories(self, labels: tuple[str, ...] | None) -> None:
        self.categories = labels
        self.label_step = 1
        self.picture = None
        self.update()

    def tick_font(self) -> QFont:
        """The font the category labels are written in now."""
        font = self.style.get("tickFont")
        return QFont(font) if isinstance(font, QFont) else QFont()

    def _metrics(self) -> QFontMetrics:
        return QFontMetrics(self.tick_font())

    def _shown_labels(self, width: int | None = None) -> list[str]:
        metrics = self._metrics()
        width = self._elide_px if width is None else width
        return [
            metrics.elidedText(t, Qt.TextElideMode.ElideRight, width) for t in self.categories or ()
        ]

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[Any]:  # noqa: N802, N803
        """pyqtgraph's spacing, for a finite, non-empty range over at most
        :data:`MAX_AXIS_PX` pixels (none otherwise).

        pyqtgraph asks for a minor tick every two pixels of ``size`` (the axis's length in
        *device* pixels, through the view's transform) and compares every tick of a level with
        every tick of the levels above (``np.isclose`` of an n × m matrix): over a length of
        10⁹ pixels that is millions of ticks and an hour of work, and a NaN or infinite bound
        loops on ``ceil``/``int``. A test run hung for minutes in ``generateDrawSpecs``; no
        screen has an axis longer than :data:`MAX_AXIS_PX`, so the tick count stays bounded
        whatever the layout or the view's transform say.
        """
        if not (np.isfinite(minVal) and np.isfinite(maxVal) and np.isfinite(size)):
            return []
        if maxVal == minVal or size <= 0:
            return []
        return super().tickSpacing(minVal, maxVal, min(float(size), MAX_AXIS_PX))  # type: ignore[no-any-return]

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[Any]:  # noqa: N802, N803
        if not (np.isfinite(minVal) and np.isfinite(maxVal) and np.isfinite(size)):
            return []
        if self.categories is None:
            return super().tickValues(minVal, maxVal, min(float(size), MAX_AXIS_PX))  # type: ignore[no-any-return]
        count = len(self.categories)
        lo, hi = max(0, int(np.ceil(minVal))), min(count - 1, int(np.floor(maxVal)))
        if hi < lo or maxVal <= minVal:
            return []
        per_slot = size / (maxVal - minVal)
        if not self._font_fixed:
            # every category labelled in a smaller font rather than every other one in the
            # usual (issue 30: Adult's 16 educations at 1366 × 768); thinned only below
            # MIN_TICK_PT
            self.style["tickFont"] = self._base_font
            if self._step(per_slot) > 1:
                base = self.tick_font()
                for points in _smaller_sizes(base.pointSizeF()):
                    font = QFont(base)
                    font.setPointSizeF(points)
                    self.style["tickFont"] = font
                    if self._step(per_slot) == 1:
                        break
                else:
                    self.style["tickFont"] = self._base_font
        step = self._step(per_slot)
        self.label_step = step
        return [(float(step), [float(v) for v in range(lo, hi + 1, step)])]

    def _step(self, per_slot: float) -> int:
        """Every how many slots a label fits, in the current tick font (eliding first)."""
        metrics = self._metrics()
        gap = 10
        if self.orientation in ("left", "right"):
            self._elide_px = self.max_label_px
            need = metrics.height() + 2
        else:
            fit = int(per_slot) - gap
            self._elide_px = min(self.max_label_px, max(self.min_label_px, fit))
            widths = [metrics.horizontalAdvance(t) for t in self._shown_labels()]
            need = max(widths, default=0) + gap
        return max(1, int(np.ceil(need / max(per_slot, 1e-9))))

    def generateDrawSpecs(self, p: QPainter) -> Any:  # noqa: N802 (pyqtgraph's name)
        """pyqtgraph's specs, in the font :meth:`tickValues` chose for this length: chosen
        before pyqtgraph sets the painter's font, kept while it measures and draws."""
        if self.categories is None:
            self.style["tickFont"] = self._base_font
            return super().generateDrawSpecs(p)
        vertical = self.orientation in ("left", "right")
        length = self.geometry().height() if vertical else self.geometry().width()
        lo, hi = self.range
        self.tickValues(float(lo), float(hi), float(length))
        self._font_fixed = True
        try:
            return super().generateDrawSpecs(p)
        finally:
            self._font_fixed = False

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        if self.categories is None:
            return super().tickStrings(values, scale, spacing)  # type: ignore[no-any-return]
        shown = self._shown_labels()
        out = []
        for v in values:
            i = int(round(v))
            out.append(shown[i] if 0 <= i < len(shown) and abs(v - i) < 1e-9 else "")
        return out


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
        #: True while the records are drawn as a density image.
        self.density_shown = False
        # What the records layer's brushes were built from (labels array, sample).
        self._records_key: object = None
        #: True while records (or aggregates) are coloured by group, False: by distance moved.
        self.colour_by_group = True
        #: Groups with a record in the current view.
        self.groups_in_view = 0
        #: Distance each record moved on the current axes (NaN: not placed).
        self.moved: np.ndarray | None = None
        self._drawn: dict[str, Any] = {}
        self.move_brushes = np.empty(len(MOVE_COLORS), dtype=object)
        move_colors = [QColor(c) for c in MOVE_COLORS]
        for color in move_colors:
            color.setAlpha(210)  # the density image shows through a crowd of dots
        self.move_brushes[:] = [QBrush(c) for c in move_colors]
        self._view_timer = QTimer(self)
        self._view_timer.setSingleShot(True)
        self._view_timer.setInterval(80)
        self._view_timer.timeout.connect(self._on_view_settled)

        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            # A fixed width: long column names ("marital-status (nominal)") must not widen the
            # window beyond a 1366-pixel screen; the open list shows them in full.
            compact_combo(combo, 9, 220)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.protected_check = QCheckBox("Show protected values")
        self.protected_check.setToolTip(
            "Draw each group's released values (its aggregate) as a cross over its records"
        )
        self.protected_check.setChecked(self.options.show_protected)
        self.protected_check.toggled.connect(self._on_protected_toggled)
        self.display_combo = QComboBox()
        for mode in DISPLAY_MODES:
            self.display_combo.addItem(mode, mode)
        self.display_combo.setCurrentIndex(
            max(self.display_combo.findData(self.options.display), 0)
        )
        self.display_combo.setToolTip(
            "How records are drawn: auto = points up to "
            f"{self.options.density_threshold:,} records, a density image above"
        )
        self.display_combo.currentIndexChanged.connect(self._on_display_changed)
        # How to read the plot: folded into the title's tooltip, unfolded into the title by
        # this button (issue 30: the explanation took the plot's height at 1366 x 768).
        self.read_button = QToolButton()
        self.read_button.setText("How to read")
        self.read_button.setCheckable(True)
        self.read_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.read_button.toggled.connect(self._on_read_toggled)
        self._title: tuple[str, list[str], list[str]] = ("", [], [])

        self.bottom_axis = CategoryAxisItem("bottom", max_label_px=120)
        self.left_axis = CategoryAxisItem("left", max_label_px=170)
        self.plot_widget = pg.PlotWidget(
            axisItems={"bottom": self.bottom_axis, "left": self.left_axis}
        )
        self.plot_widget.setBackground("w")
        self.plot_item: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot_item.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen("#444444"))
            axis.setTextPen(pg.mkPen("#222222"))
        self.records_item = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, pen=None, symbol="o"
        )
        self.records_item.setZValue(0)
        # The density layer: one image of the records' 2-D histogram, zero bins transparent.
        self.density_item = pg.ImageItem(axisOrder="col-major")
        self.density_item.setZValue(-1)
        self.density_item.setVisible(False)
        # Light to dark blue: a single record stays visible on white, dense bins read dark.
        # Empty bins (value 0) are transparent: the colour map starts with alpha 0 and is opaque
        # from just above 0 (one record is log10(2) ≈ 0.3 of a decade). The colour bar sets the
        # image's colours from this map.
        self.density_colormap = pg.ColorMap(
            [0.0, 1e-3, 0.35, 0.7, 1.0],
            [(198, 219, 239, 0), "#c6dbef", "#6baed6", "#2171b5", "#08306b"],
        )
        self.protected_item = FastScatterPlotItem(
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
        self.plot_item.addItem(self.density_item)
        self.plot_item.addItem(self.protected_item)
        # The members of a clicked record's group, ringed.
        self.members_item = pg.ScatterPlotItem(
            pxMode=True, symbol="o", size=11, brush=None, pen=pg.mkPen("#111111", width=1.6)
        )
        self.members_item.setZValue(3)
        self.plot_item.addItem(self.members_item)
        self.plot_item.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self.plot_item.getViewBox().sigRangeChanged.connect(self._on_view_moved)
        self.color_bar = pg.ColorBarItem(
            values=(0.0, 1.0),
            colorMap=self.density_colormap,
            interactive=False,
            width=14,
            label="records per bin (log scale)",
        )
        self.color_bar.axis.setTextPen(pg.mkPen("#222222"))
        self.color_bar.setImageItem(self.density_item, insert_in=self.plot_item)
        self.color_bar.setVisible(False)
        # The legend sits below the plot, outside its data (issue 30: inside, it covered the
        # top categories and records at 1366 × 768), in a holder cell under the view: a
        # LegendItem places itself at (0, 0) when it resizes, so it cannot be a layout cell
        # itself. One legend per column count (pyqtgraph's setColumnCount misplaces the entries
        # of a filled legend): as many entries side by side as the view's width holds.
        # One item draws the legend (issue 29: a LegendItem per column count, a LabelItem per
        # entry, cost ~35 ms per run): as many entries side by side as the view's width holds.
        self.legend_holder, self.legend = legend_below(self.plot_item, LEGEND_ROW, LEGEND_COLUMNS)
        self._legend_entries: list[tuple[pg.ScatterPlotItem, str]] = []
        # the view's width decides between one and two legend columns: decided again when the
        # window is resized (a legend laid out for a wider view was cut off at 1366 px)
        self.plot_item.getViewBox().sigResized.connect(self._on_view_resized)
        self._legend_key: object = None
        # Legend samples are stand-ins: the records layer has one brush per point.
        self._legend_record = pg.ScatterPlotItem(
            symbol="o", size=8, pen=None, brush=self.cluster_palette.brushes[0]
        )
        self._legend_protected = pg.ScatterPlotItem(
            symbol="x", size=10, pen=None, brush=self.cluster_palette.protected_brush
        )
        self._legend_moves = [
            pg.ScatterPlotItem(symbol="o", size=9, pen=None, brush=b) for b in self.move_brushes
        ]
        # A clicked record's group: original against released values (screen only).
        self.members_label = QLabel()
        self.members_label.setTextFormat(Qt.TextFormat.RichText)
        self.members_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.members_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        members_scroll = QScrollArea()
        members_scroll.setWidgetResizable(True)
        members_scroll.setWidget(self.members_label)
        close = QPushButton("Close")
        close.clicked.connect(self.hide_members)
        self.members_panel = QFrame()
        self.members_panel.setFrameShape(QFrame.Shape.StyledPanel)
        # Below the plot, not beside it: at 1366 pixels the plot has no width to spare.
        self.members_panel.setFixedHeight(170)
        side = QHBoxLayout(self.members_panel)
        side.setContentsMargins(4, 4, 4, 4)
        side.addWidget(members_scroll, 1)
        side.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.members_panel.setVisible(False)
        #: The row whose group the side panel lists (None: closed).
        self.members_row: int | None = None

        top = QHBoxLayout()
        top.addWidget(QLabel("X"))
        top.addWidget(self.x_combo)
        top.addSpacing(8)
        top.addWidget(QLabel("Y"))
        top.addWidget(self.y_combo)
        top.addSpacing(8)
        top.addWidget(self.protected_check)
        top.addSpacing(8)
        top.addWidget(QLabel("Draw"))
        top.addWidget(self.display_combo)
        top.addSpacing(8)
        top.addWidget(self.read_button)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        body = QVBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.plot_widget, 1)
        body.addWidget(self.members_panel)
        layout.addLayout(body, 1)
        self.clear()

    # content ------------------------------------------------------------------------------
    def clear(self, message: str = "Run a method to see its groups") -> None:
        self._result = None
        self._projection = None
        self._moves: dict[str, np.ndarray] = {}
        self.sampled = None
        self.moved = None
        self._drawn = {}
        self.hide_members()
        self.records_item.clear()
        self._records_key = None
        self._show_density(None)
        self.protected_item.clear()
        self.legend.clear()
        self.legend.setVisible(False)
        self._legend_key = None
        self.legend_holder.setFixedHeight(0)
        self._set_axis_choices([])
        self._title = ("", [], [])
        self.plot_item.titleLabel.setToolTip("")
        set_plot_title(self.plot_item, message, color="#444444", size="10pt")
        for axis in (self.bottom_axis, self.left_axis):
            axis.set_categories(None)
            axis.setToolTip("")
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
        qi = self._result.qi if self._result is not None else None
        if qi is not None and name in qi.ordinal_names:
            return f"{name} (ordinal)"
        if qi is not None and name in qi.nominal_names:
            return f"{name} (nominal)"
        return name

    def set_run(self, result: RunResult | None, projection: QIProjection | None) -> None:
        """Show a run (None clears the plot)."""
        if result is None:
            self.clear()
            return
        self._result = result
        self._projection = projection
        self._moves = {}
        self.hide_members()
        # PC1/PC2, then every quasi-identifier in the table's column order
        choices = plot_axis_choices(result, projection is not None)
        self._set_axis_choices(choices)
        if not choices:
            self.clear("No quasi-identifier to plot")
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
        return default_axes(result, projection, choices)

    @staticmethod
    def _select(combo: QComboBox, name: str) -> None:
        combo.blockSignals(True)
        combo.setCurrentIndex(max(combo.findData(name), 0))
        combo.blockSignals(False)
        combo.setToolTip(combo.currentText())  # the box is narrower than long names

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
        for combo in (self.x_combo, self.y_combo):
            combo.setToolTip(combo.currentText())
        self.redraw()

    def _on_protected_toggled(self, checked: bool) -> None:
        self.options.show_protected = checked
        self.redraw()

    def _on_display_changed(self, _index: int) -> None:
        self.options.display = str(self.display_combo.currentData() or "auto")
        self.redraw()

    def set_display(self, mode: str) -> None:
        """ "auto", "points" or "density" (see :class:`ScatterOptions`)."""
        if mode not in DISPLAY_MODES:
            raise ValueError(f"display must be one of {', '.join(DISPLAY_MODES)}, not {mode!r}")
        self.display_combo.setCurrentIndex(self.display_combo.findData(mode))

    def _show_density(self, counts: np.ndarray | None, rect: QRectF | None = None) -> None:
        """Show the density image of ``counts`` over ``rect`` (None: hide it)."""
        self.density_shown = counts is not None
        if counts is None:
            self.density_item.clear()
            self.density_item.setVisible(False)
            self.color_bar.setVisible(False)
            return
        # log10(1 + n): a bin of 1 record and one of 10,000 both stay visible; 0 stays 0
        # (the transparent first colour).
        image = np.log10(1.0 + counts)
        top = float(image.max()) or 1.0
        self.density_item.setImage(image, autoLevels=False, levels=(0.0, top))
        if rect is not None:
            self.density_item.setRect(rect)
        self.density_item.setVisible(True)
        self.color_bar.setLevels((0.0, top))
        # Ticks in records per bin (1, 2, 5, 10, ...), not in the log values the image holds.
        peak = int(counts.max())
        steps = [c * 10**e for e in range(0, 9) for c in (1, 2, 5) if c * 10**e <= max(peak, 1)]
        self.color_bar.axis.setTicks([[(float(np.log10(1.0 + c)), f"{c:,}") for c in steps]])
        self.color_bar.setVisible(True)

    def _axis_data(self, name: str, moves: bool = True) -> AxisValues:
        """The values of axis choice ``name`` for the shown run (:func:`axis_values`); the
        records' moves along it (``moves``) are kept in ``self._moves[name]``."""
        assert self._result is not None
        values = axis_values(
            self._result, self._projection, name, self.options.sample_seed, moves=moves
        )
        if values.moves is not None:
            self._moves[name] = values.moves
        return values

    def _category_axis(self, name: str) -> CategoryAxis:
        """The run's axis of a categorical quasi-identifier: the one the worker laid out with
        the projection, else computed here."""
        ready = self._projection.category_axes if self._projection is not None else {}
        axis = ready.get(name)
        if axis is None:
            assert self._result is not None
            axis = category_axis(self._result.qi, name)
        return axis

    def redraw(self, keep_view: bool = False) -> None:
        """Redraw both layers for the current options: one setData per layer (or one image),
        one range set (none with ``keep_view``: the colouring follows a zoom)."""
        result = self._result
        if result is None:
            return
        opts = self.options
        labels = result.labels
        n = len(labels)
        # the moves of the axes the plot opens on come with the run (its worker computed them)
        ready = ready_moves(self._projection, opts.x_axis, opts.y_axis, n)
        x, x_prot, x_label, x_tip, _, x_cats = self._axis_data(opts.x_axis, ready is None)
        y, y_prot, y_label, y_tip, _, y_cats = self._axis_data(opts.y_axis, ready is None)
        if ready is not None:
            self.moved = ready.distance
        else:
            self.moved = distance_moved(self._moves[opts.x_axis], self._moves[opts.y_axis])
        density = opts.uses_density(n, x_cats is not None or y_cats is not None)
        idx = None if density else sample_indices(n, opts.max_points, opts.sample_seed)
        self.sampled = None if idx is None else len(idx)
        if idx is not None:
            x_shown, y_shown, shown_labels = x[idx], y[idx], labels[idx]
        else:
            x_shown, y_shown, shown_labels = x, y, labels
        view = self.plot_item.getViewBox()
        view.disableAutoRange()
        # One protected point per group: every member of a group carries the same aggregate
        # (its first record's row, found in the run's worker).
        first = group_firsts(self._projection, labels)
        px, py = x_prot[first], y_prot[first]
        keep = np.isfinite(px) & np.isfinite(py)
        group_ids = labels[first][keep]
        px, py = px[keep], py[keep]
        unplaced = int(np.count_nonzero(~keep))
        # the worker's quantiles of every record (not of a sample)
        spans = (opts.x_axis, opts.y_axis) if idx is None else None
        ranges = self._ranges(x_shown, y_shown, px, py, spans, (x_cats, y_cats))
        if keep_view:
            (vx0, vx1), (vy0, vy1) = view.viewRange()
            view_ranges = ((vx0, vx1), (vy0, vy1))
        else:
            view_ranges = ranges
        n_aggregates = len(px)
        aggregate_idx = (
            sample_indices(n_aggregates, opts.max_density_aggregates, opts.sample_seed)
            if density
            else None
        )
        if aggregate_idx is not None:
            px, py, group_ids = px[aggregate_idx], py[aggregate_idx], group_ids[aggregate_idx]
        # Colour by group only when few groups are in view (issue 29).
        self.groups_in_view = _groups_in(x, y, labels, view_ranges)
        by_group = self.groups_in_view <= opts.max_group_colours
        self.colour_by_group = by_group
        classes = ready.classes if ready is not None else move_classes(self.moved)
        if density and ranges is not None:
            if not keep_view:
                counts, outside = density_image(x, y, ranges[0], ranges[1], opts.density_bins)
                (x0, x1), (y0, y1) = ranges
                self._show_density(counts, QRectF(x0, y0, x1 - x0, y1 - y0))
            else:
                outside = self.outside_view
            if by_group and view_ranges is not None:
                # zoomed in on a few groups: their records as points, coloured by group
                rows = _rows_in(x, y, view_ranges)
                self.records_item.set_points(
                    x[rows], y[rows], self.cluster_palette.brushes_for(labels[rows])
                )
                if self.records_item.opts["size"] != opts.point_size:
                    self.records_item.setSize(opts.point_size)
            else:
                self.records_item.clear()
            self._records_key = None
        else:
            self._show_density(None)
            if self.records_item.opts["size"] != opts.point_size:
                self.records_item.setSize(opts.point_size)
            if by_group:
                # Changing axes moves the same points: their brushes are kept, not rebuilt.
                key = (id(labels), None if idx is None else (opts.sample_seed, len(idx)))
                same = key == self._records_key and len(self.records_item.data) == len(x_shown)
                brush = None if same else self.cluster_palette.brushes_for(shown_labels)
                self._records_key = key
            else:
                shown_classes = classes if idx is None else classes[idx]
                brush = self.move_brushes[shown_classes]
                self._records_key = None
            self.records_item.set_points(x_shown, y_shown, brush)
            outside = self._outside(x_shown, y_shown, ranges)
        if opts.show_protected:
            # Over a density image, thousands of crosses would hide it: small dots instead,
            # coloured by how far their group's records moved.
            if density and not by_group:
                symbol, size = "o", 3
                if ready is not None:
                    group_classes = ready.group_classes
                else:
                    group_classes = move_classes(group_means(self.moved, labels))
                brushes = self.move_brushes[group_classes[group_ids]]
            elif density:
                symbol, size = "x", 9
                brushes = self.cluster_palette.brushes_for(group_ids)
            else:
                symbol, size = "x", 7
                brushes = np.full(len(px), self.cluster_palette.protected_brush, dtype=object)
            if (
                self.protected_item.opts["symbol"] != symbol
                or self.protected_item.opts["size"] != size
            ):
                self.protected_item.setData(x=[], y=[])  # restyle an empty layer: cheap
                self.protected_item.setSymbol(symbol)
                self.protected_item.setSize(size)
            self.protected_item.set_points(px, py, brushes if len(px) else None)
            self.protected_item.setVisible(True)
        else:
            self.protected_item.clear()
            self.protected_item.setVisible(False)
        self._drawn = {"x": x, "y": y, "density": density}
        self._draw_members()

        self.bottom_axis.set_categories(x_cats.labels if x_cats is not None else None)
        self.left_axis.set_categories(y_cats.labels if y_cats is not None else None)
        self.bottom_axis.setToolTip(x_tip)
        self.left_axis.setToolTip(y_tip)
        self.plot_item.setLabel("bottom", x_label, color="#222222")
        self.plot_item.setLabel("left", y_label, color="#222222")
        self._axis_titles = {"bottom": x_label, "left": y_label}
        groups = result.n_groups
        method_k = f"{result.spec.method}, k = {result.spec.k}"
        colour = "colour = group" if by_group else "colour = distance moved"
        # Issue 30 (review): the title is what is drawn and the run in one line, then one
        # short line of what to mind (not drawn, outside the view); how to read the plot is
        # in the title's tooltip and under the "How to read" button (7-8 title lines left the
        # plot ~130 px at 1366 x 768 and 4 of 16 education labels on its axis).
        details: list[str] = []
        notes: list[str] = []
        if density:
            why = (
                (
                    f"above the {opts.density_threshold:,}-record threshold"
                    if n > opts.density_threshold or opts.display != "auto"
                    else "a category axis"
                )
                if opts.display == "auto"
                else "density chosen"
            )
            head = f"Density of {n:,} records · {groups:,} groups ({method_k})"
            details += [
                f"Density of {n:,} records ({why}): the original records as an image",
                "group aggregates coloured by how far their records moved"
                if not by_group
                else "records and aggregates in view coloured by group",
                f"blue = records per bin on a log scale ({opts.density_bins} × "
                f"{opts.density_bins} bins)",
                "zoom in to see groups · click a record for its group",
            ]
        elif idx is None:
            head = f"{n:,} records in {groups:,} groups of ≥ {result.spec.k} ({result.spec.method})"
            notes.append(colour)
            if not by_group:
                details.append(
                    f"colour = distance moved ({self.groups_in_view:,} groups in view; by "
                    f"group when ≤ {opts.max_group_colours})"
                )
            details.append("click a record to list its group")
        else:
            head = f"Random sample of {len(idx):,} of {n:,} records (seed {opts.sample_seed})"
            notes.append(f"{groups:,} groups ({method_k}) · {colour}")
            if not by_group:
                details.append(
                    f"colour = distance moved ({self.groups_in_view:,} groups in view; by "
                    f"group when ≤ {opts.max_group_colours})"
                )
        if opts.show_protected and aggregate_idx is not None:
            details.append(
                f"dots: a random sample of {len(px):,} of the {n_aggregates:,} group "
                f"aggregates (seed {opts.sample_seed})"
            )
        proj = self._projection
        if proj is not None and proj.mixed and {opts.x_axis, opts.y_axis} & {PC1, PC2}:
            details.append(
                "PC axes: principal components of the mixed-distance embedding, not "
                "variables; bands are combinations of categories"
            )
        if x_cats is not None or y_cats is not None:
            details.append(
                f"categorical ax{'e' if x_cats is not None and y_cats is not None else 'i'}s: "
                f"points spread at random within ±{JITTER} of their category (seed "
                f"{opts.sample_seed})"
            )
        if opts.show_protected and unplaced:
            notes.append(f"{unplaced:,} aggregates not drawn")
            details.append(f"{unplaced:,} generalized aggregate(s) not drawn (no value to place)")
        self.outside_view = outside
        if outside and not keep_view:
            notes.append(f"{outside:,} records outside the view")
            details.append(
                f"{outside:,} outlying record(s) outside this view (right-click › View All)"
            )
        self._title = (head, notes, details)
        self._show_title()
        entries: list[tuple[pg.ScatterPlotItem, str]] = []
        if by_group and (not density or len(self.records_item.data)):
            entries.append((self._legend_record, "original record (colour = its group)"))
        if not by_group:
            texts = move_class_labels(MOVE_EDGES)
            present = (
                ready.class_counts
                if ready is not None
                else np.bincount(classes, minlength=len(texts))
            )
            for c, text in enumerate(texts):
                if present[c]:
                    entries.append((self._legend_moves[c], text))
        if opts.show_protected:
            self._legend_protected.setSymbol(self.protected_item.opts["symbol"])
            self._legend_protected.setBrush(
                self.cluster_palette.protected_brush
                if not density
                else (self.move_brushes[2] if not by_group else self.cluster_palette.brushes[0])
            )
            shown = f"{len(px):,}" if aggregate_idx is None else f"{len(px):,} of {n_aggregates:,}"
            text = (
                f"dot = group aggregate ({shown})"
                if density and not by_group
                else f"released value = group aggregate ({shown})"
            )
            entries.append((self._legend_protected, text))
        if keep_view:
            self._fill_legend(entries)
            self._settle_layout()
            self._drawn["view"] = view.viewRange()
            return
        if ranges is not None:
            self._view_timer.blockSignals(True)
            self._set_range(ranges)
        # The legend for the view's present width; the one layout pass below sets the axes'
        # widths for this range, and a view it leaves narrower or wider refits the legend
        # (:meth:`_on_view_resized`). Laying the axes out before the legend too cost a second
        # pass per draw (issue 30: 23-33 ms of a 350,000-record run's drawing turn).
        self._fill_legend(entries)
        self._settle_layout()
        self._view_timer.stop()
        self._view_timer.blockSignals(False)
        self._drawn["view"] = view.viewRange()

    # zoom and click -----------------------------------------------------------------------
    def _on_view_moved(self, *_args: object) -> None:
        if self._result is not None and not self._view_timer.signalsBlocked():
            self._view_timer.start()

    def _on_view_settled(self) -> None:
        """After a zoom or pan: recolour when the number of groups in view crosses the limit."""
        if self._result is None or not self._drawn:
            return
        ranges = self.plot_item.getViewBox().viewRange()
        if ranges == self._drawn.get("view"):
            return  # a layout pass, not a zoom
        self._drawn["view"] = ranges
        count = _groups_in(self._drawn["x"], self._drawn["y"], self._result.labels, ranges)
        by_group = count <= self.options.max_group_colours
        if by_group != self.colour_by_group or (by_group and self._drawn["density"]):
            self.redraw(keep_view=True)
        else:
            self.groups_in_view = count

    def _on_scene_clicked(self, event: Any) -> None:
        if self._result is None or not self._drawn or event.button() != Qt.MouseButton.LeftButton:
            return
        view = self.plot_item.getViewBox()
        if not view.sceneBoundingRect().contains(event.scenePos()):
            return
        point = view.mapSceneToView(event.scenePos())
        row = self.nearest_record(point.x(), point.y())
        if row is not None:
            self.show_members(row)

    def nearest_record(self, x: float, y: float, max_px: float = 12.0) -> int | None:
        """The record drawn nearest to view point (x, y), if within ``max_px`` pixels."""
        xs, ys = self._drawn.get("x"), self._drawn.get("y")
        if xs is None or not len(xs):
            return None
        px, py = self.plot_item.getViewBox().viewPixelSize()
        dx = (xs - x) / (px or 1.0)
        dy = (ys - y) / (py or 1.0)
        d2 = dx * dx + dy * dy
        d2[~np.isfinite(d2)] = np.inf
        row = int(np.argmin(d2))
        return row if d2[row] <= max_px * max_px else None

    def show_members(self, row: int) -> None:
        """List the members of ``row``'s group, original against released (screen only)."""
        result = self._result
        if result is None:
            return
        table = group_members(result, row)
        group = int(result.labels[row])
        size = int(np.count_nonzero(result.labels == group))
        names = [c for c in table.columns if not c.endswith(" →")]
        head = "".join(f"<th>{_esc(c)}</th>" for c in names)
        body = []
        for r in table.index:
            cells = []
            for c in names:
                before, after = table.at[r, c], table.at[r, f"{c} →"]
                same = before == after
                cells.append(
                    f"<td>{_esc(before)}</td>"
                    if same
                    else f"<td>{_esc(before)} → <b style='color:#b2182b'>{_esc(after)}</b></td>"
                )
            mark = " style='background:#fff3c4'" if r == row else ""
            body.append(f"<tr{mark}>{''.join(cells)}</tr>")
        more = f"<p>… and {size - len(table)} more</p>" if size > len(table) else ""
        self.members_label.setText(
            f"<b>Group of {size} records</b> (clicked record highlighted)<br>"
            "<span style='color:#555'>original value → released value where it changed; "
            "shown on screen only, never in a report</span>"
            f"<table cellspacing='0' cellpadding='2' border='1'><tr>{head}</tr>"
            f"{''.join(body)}</table>{more}"
        )
        self.members_row = row
        self.members_panel.setVisible(True)
        self._draw_members()

    def hide_members(self) -> None:
        self.members_row = None
        if hasattr(self, "members_panel"):
            self.members_panel.setVisible(False)
            self.members_label.clear()
            self.members_item.clear()

    def _draw_members(self) -> None:
        if self.members_row is None or self._result is None or not self._drawn:
            self.members_item.clear()
            return
        labels = self._result.labels
        rows = np.flatnonzero(labels == labels[self.members_row])
        self.members_item.setData(x=self._drawn["x"][rows], y=self._drawn["y"][rows])

    def _fill_legend(self, entries: list[tuple[pg.ScatterPlotItem, str]]) -> None:
        """Show the legend entries under the plot, as many side by side as the view's width
        holds (a legend wider than the view was cut off), and give the holder its height."""
        self._legend_entries = entries
        self.plot_item.layout.activate()
        room = self.plot_item.getViewBox().width()
        key = (tuple(text for _, text in entries), room, self._legend_protected.opts["symbol"])
        if key == self._legend_key:
            return  # the same entries in the same room: nothing to rebuild
        self._legend_key = key
        self.legend.set_entries(
            [
                LegendEntry(
                    str(sample.opts["symbol"]),
                    float(sample.opts["size"]),
                    pg.mkBrush(sample.opts["brush"]),
                    text,
                )
                for sample, text in entries
            ],
            room,
        )
        self.legend.setVisible(bool(entries))
        height = self.legend.boundingRect().height() + LEGEND_GAP if entries else 0
        self.legend_holder.setFixedHeight(height)

    def _set_range(self, ranges: tuple[tuple[float, float], tuple[float, float]]) -> None:
        """Show ``ranges`` (the legend is below the view: no room to keep for it)."""
        (x0, x1), (y0, y1) = ranges
        self.plot_item.getViewBox().setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0.0)

    def _settle_layout(self) -> None:
        """Lay the plot out (see :meth:`_layout_axes`), then say on a category axis whose
        labels had to be thinned out which ones are shown."""
        self._layout_axes()
        if self._note_label_steps():
            self._layout_axes()

    def _note_label_steps(self) -> bool:
        """Append "every m-th labelled" to the title of a category axis that cannot label
        every slot at its current length (or remove it); True when a title changed."""
        changed = False
        view = self.plot_item.getViewBox()
        for axis, name, vertical in (
            (self.bottom_axis, "bottom", False),
            (self.left_axis, "left", True),
        ):
            text = axis.labelText
            base = getattr(self, "_axis_titles", {}).get(name) or text.split(_STEP_NOTE)[0]
            length = axis.geometry().height() if vertical else axis.geometry().width()
            note = ""
            if axis.categories is not None:
                lo, hi = view.viewRange()[1 if vertical else 0]
                axis.tickValues(lo, hi, length)
                if axis.label_step > 1:
                    note = f"{_STEP_NOTE}{_ordinal(axis.label_step)} category labelled"
            # the longest form the axis has room for (issue 30: "native-country (nominal, 20
            # categories) · every 2nd category labelled" ran past a laptop's plot); the axis's
            # tooltip says it all
            short = base.split(" (", 1)[0]
            metrics = QFontMetrics(axis.label.font())
            # a principal component's short form keeps its share of variance: "PC2 (10% of
            # variance)", not "PC2 of the mixed-distance embedding"
            short = pc_short_title(base) or short
            forms = [base + note, short + note, base, short]
            want = next((f for f in forms if metrics.horizontalAdvance(f) + 12 <= length), short)
            if want != text:
                self.plot_item.setLabel(name, want, color="#222222")
                axis.resizeEvent()  # pyqtgraph centres a title only on a resize
                changed = True
        return changed

    def _on_view_resized(self, *_args: object) -> None:
        """The view's new size: the legend's entries side by side as its width now holds (a
        legend laid out for a wider view was cut off at 1366 px), and the category axes'
        "every m-th labelled" notes for their new length."""
        if self._legend_entries and self.legend.isVisible():
            self._fill_legend(self._legend_entries)
        if self.bottom_axis.categories is not None or self.left_axis.categories is not None:
            self._note_label_steps()

    def _layout_axes(self) -> None:
        """Lay the plot out for what it now shows, before it is painted.

        Left to themselves, the axes learn how wide their tick labels are while painting, and
        the layout (labels, title lines, colour bar) settles over several passes: after a large
        run the plot was painted four times in one turn of the event loop, ~20 ms each, most of
        it the translucent grid lines (issue 6). The axes measure their labels here instead
        (``generateDrawSpecs`` on a throw-away picture: text metrics only), so that the first
        paint has the final layout.
        """
        layout = self.plot_item.layout
        layout.activate()
        axes = [self.plot_item.getAxis("left"), self.plot_item.getAxis("bottom")]
        if self.color_bar.isVisible():
            axes.append(self.color_bar.axis)
        picture = QPicture()
        painter = QPainter(picture)
        try:
            for axis in axes:
                if not _measurable(axis):
                    continue  # pyqtgraph measures it when it paints, if ever
                if axis.style["tickFont"] is not None:
                    painter.setFont(axis.style["tickFont"])
                axis.generateDrawSpecs(painter)
        finally:
            painter.end()
        layout.activate()
        # The view's transform for its new range and size, which pyqtgraph would otherwise
        # set while preparing the first paint, moving every item and asking for a second one.
        self.plot_item.getViewBox().prepareForPaint()

    def _ranges(
        self,
        x: np.ndarray,
        y: np.ndarray,
        px: np.ndarray,
        py: np.ndarray,
        names: tuple[str, str] | None = None,
        categories: tuple[CategoryAxis | None, CategoryAxis | None] = (None, None),
    ) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """The initial view: the records' quantile span on each axis (see ``view_quantile``);
        a category axis shows every slot (:func:`slot_span`), whatever the quantiles of its
        jittered records. ``names``: the axes of ``x`` and ``y`` when they are every record,
        whose quantiles the run's worker computed (``QIProjection.spans``)."""
        q = min(max(self.options.view_quantile, 0.0), 0.25)
        proj = self._projection
        ready: tuple[tuple[float, float] | None, ...] = (None, None)
        if names is not None and proj is not None and q > 0 and q == proj.span_quantile:
            ready = tuple(proj.spans.get(name) for name in names)
        x_cats, y_cats = categories
        # (slots are finite: a category axis spans them as soon as it has a record)
        x_range = slot_span(x_cats) if x_cats is not None and len(x) else _span(x, px, q, ready[0])
        y_range = slot_span(y_cats) if y_cats is not None and len(y) else _span(y, py, q, ready[1])
        if x_range is None or y_range is None:
            return None
        return x_range, y_range

    @staticmethod
    def _outside(
        x: np.ndarray, y: np.ndarray, ranges: tuple[tuple[float, float], tuple[float, float]] | None
    ) -> int:
        """How many finite records fall outside the view ranges."""
        if ranges is None:
            return 0
        (x0, x1), (y0, y1) = ranges
        inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
        return int(np.count_nonzero(~inside & np.isfinite(x) & np.isfinite(y)))

    def _on_read_toggled(self, _checked: bool) -> None:
        if self._result is not None:
            self._show_title()
            self._settle_layout()  # the view's height, and so the category labels, changed

    def _show_title(self) -> None:
        """The title's line (what is drawn, the run), its short notes, and the "how to read"
        lines when the button is down (else in the title's tooltip)."""
        head, notes, details = self._title
        if self._result is None or not head:
            return
        self.read_button.setToolTip("<br>".join(["How to read this plot:", *details]))
        self.plot_item.titleLabel.setToolTip(
            "\n".join([*details, "(How to read, above the plot, shows these lines here)"])
        )
        lines = [" · ".join(notes)] if notes else []
        if self.read_button.isChecked():
            lines += details
        title = head + "".join(
            f"<br><span style='font-size:9pt;color:#555'>{line}</span>" for line in lines
        )
        set_plot_title(self.plot_item, title, color="#222222", size="10pt")

    def title_text(self) -> str:
        """The title and the lines of its "how to read" note (shown or folded)."""
        text = str(self.plot_item.titleLabel.text)
        details = self._title[2] if self._result is not None else []
        if self.read_button.isChecked() or not details:
            return text
        return text + "".join(f"<br>{line}" for line in details)


_STEP_NOTE = " · every "


def _ordinal(n: int) -> str:
    return {2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def _rows_in(
    x: np.ndarray, y: np.ndarray, ranges: tuple[tuple[float, float], tuple[float, float]]
) -> np.ndarray:
    (x0, x1), (y0, y1) = ranges
    return np.flatnonzero((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1))


def _groups_in(
    x: np.ndarray,
    y: np.ndarray,
    labels: np.ndarray,
    ranges: tuple[tuple[float, float], tuple[float, float]] | None,
) -> int:
    """How many groups have a record inside the ranges (all groups without ranges)."""
    if ranges is None:
        return int(len(np.unique(labels)))
    rows = _rows_in(x, y, ranges)
    if not len(rows):
        return 0
    present = np.zeros(int(labels.max()) + 1, dtype=bool)
    present[labels[rows]] = True
    return int(np.count_nonzero(present))


def _esc(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slot_span(axis: CategoryAxis) -> tuple[float, float]:
    """The range of a category axis: every slot with its jitter band, and a margin."""
    return -0.6, len(axis.labels) - 0.4


_log = logging.getLogger(__name__)

#: More tick labels than this on one axis: a degenerate range or size (not a readable axis).
_MAX_TICKS = 2_000


def _measurable(axis: Any) -> bool:
    """Whether pyqtgraph's tick measurement of ``axis`` is a short job: a finite, non-empty range
    on an axis of some length, with a bounded number of ticks. A test run once hung for minutes
    in ``generateDrawSpecs`` over an axis whose range and length (not seen again) gave millions
    of ticks: measuring is skipped then, and the axis says so in the log. The groups plot's
    own axes bound their tick count at the source (:meth:`CategoryAxisItem.tickSpacing`, at
    most :data:`MAX_AXIS_PX` pixels, none without a finite range); this stays for the colour
    bar's pyqtgraph axis and as a cheap check before measuring."""
    lo, hi = (float(v) for v in axis.range)
    if axis.orientation in ("left", "right"):
        length = float(axis.geometry().height())
    else:
        length = float(axis.geometry().width())
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo or not np.isfinite(length):
        return False
    if axis._tickLevels is not None:
        count = sum(len(level) for level in axis._tickLevels)
    else:
        count = 0
        for spacing, _offset in axis.tickSpacing(lo, hi, max(length, 1.0)):
            if not spacing > 0:
                return False
            count += int(min((hi - lo) / spacing, 1e12)) + 1
    if count > _MAX_TICKS:
        _log.warning(
            "axis %s: %d ticks over %r at %.0f px: tick measurement skipped",
            axis.orientation,
            count,
            (lo, hi),
            length,
        )
        return False
    return True


def _span(
    values: np.ndarray,
    protected: np.ndarray,
    q: float,
    ready: tuple[float, float] | None = None,
) -> tuple[float, float] | None:
    """The axis range: the records' [q, 1-q] quantiles (all of them when q = 0) and the protected
    values inside them, padded by 4 %. ``ready``: those quantiles of ``values``, computed
    beforehand (in the run's worker: only for more than 100 finite values and q > 0)."""
    if ready is not None:
        lo, hi = ready
    else:
        finite = values[np.isfinite(values)]
        if not len(finite):
            return None
        if q > 0 and len(finite) > 100:
            lo, hi = tail_quantiles(finite, q)
        else:
            lo, hi = float(finite.min()), float(finite.max())
            prot = protected[np.isfinite(protected)]
            if len(prot):
                lo, hi = min(lo, float(prot.min())), max(hi, float(prot.max()))
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad
