"""Side-by-side scatter plots of 2–4 runs with linked axes and linked selection.

A view (STYLE.md §5, §7): one :class:`pyqtgraph.GraphicsLayoutWidget` holds a plot per run; the
plots share their x and y ranges (``setXLink``/``setYLink``, pyqtgraph ``linkedViews.py``). Each
plot has one :class:`ScatterPlotItem` per layer: records coloured by their group in that run,
the group aggregates, the selected records and the other members of their groups — so brushing
records in one plot shows how every run grouped them. A brush (Shift+drag, or a drag in brush
mode) emits ``brushed`` with the records inside; the panel sends it to the controller, and the
selection comes back to every plot through ``selection_changed``.

At survey size (issue 29 item 4; above ``density_threshold`` records, 5,000 by default) a plot
draws its run's originals as a density image (records per bin of a 2-D histogram, log scale)
and the released group aggregates on top, one dot per group coloured by the mean distance its
records moved (a legend line under the plots names the classes). Plots are reused when as many
runs are compared again.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph import Point
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics

from microgui.core.runs import RunResult
from microgui.core.views.moves import (
    MOVE_EDGES,
    distance_moved,
    move_class_labels,
    move_classes,
)
from microgui.core.views.projection import (
    QIProjection,
)
from microgui.qt.plots.cluster_scatter import (
    DEFAULT_DENSITY_THRESHOLD,
    DEFAULT_MAX_POINTS,
    MOVE_COLORS,
    PC1,
    PC2,
    CategoryAxisItem,
    axis_values,
    default_axes,
    density_image,
    group_firsts,
    group_means,
    ready_moves,
    sample_indices,
    slot_span,
)
from microgui.qt.plots.fast_scatter import FastScatterPlotItem
from microgui.qt.plots.palette import ClusterPalette

__all__ = [
    "grid_columns",
    "short_title",
    "wrap_title",
    "BrushViewBox",
    "CompareScatterPlot",
    "CompareOptions",
    "CompareRun",
    "axis_choices_of",
    "default_axes_of",
    "axis_kind",
]


#: Room a plot's title leaves for the left axis and the margins, in pixels.
TITLE_MARGIN = 60
#: The margins of a pyqtgraph text item around its text, in pixels (both sides).
TEXT_MARGIN = 12


@dataclass
class CompareOptions:
    """What the comparison plots show (saved and tested without widgets)."""

    #: "" = chosen for the runs (:func:`default_axes_of`: the data's own axes, as the groups
    #: plot opens on, issue 29).
    x_axis: str = ""
    y_axis: str = ""
    point_size: float = 4.0
    max_points: int = DEFAULT_MAX_POINTS
    sample_seed: int = 0
    #: A plain drag brushes records (else Shift+drag does, and a drag pans).
    brush_mode: bool = True
    #: Records are coloured by group up to this many groups, else by distance moved.
    max_group_colours: int = 12
    #: Above this many records a plot draws the originals as a density image (their 2-D
    #: histogram) and the released group aggregates on top as points (issue 29 item 4).
    density_threshold: int = DEFAULT_DENSITY_THRESHOLD
    #: Bins of the density image along each axis.
    density_bins: int = 200

    def uses_density(self, n: int) -> bool:
        """Whether a plot of ``n`` records draws them as a density image."""
        return n > self.density_threshold


@dataclass(frozen=True)
class CompareRun:
    """One run of the comparison: its name, result and projection (all computed in the worker)."""

    name: str
    result: RunResult
    projection: QIProjection | None


def grid_columns(n_plots: int, width: float, height: float) -> int:
    """Plots per row that give ``n_plots`` plots in a ``width`` × ``height`` area the largest
    side (each as square as the area allows): four in a row in a wide, short view (a 2 × 2 grid
    there made plots 80 px tall, their axis titles overprinting each other), 2 × 2 when square."""
    if n_plots <= 1:
        return 1
    best, best_side = 1, -1.0
    for columns in range(1, n_plots + 1):
        rows = -(-n_plots // columns)
        side = min(width / columns, height / rows)
        if side > best_side + 1e-9:
            best, best_side = columns, side
    return best


def short_title(title: str) -> str:
    """An axis title without its explanation ("PC2 (21% of var.) · z-scores" -> "PC2 (21% of
    var.)"): the vertical title has the plot's height only."""
    return title.split(" · ", 1)[0]


class BrushViewBox(pg.ViewBox):
    """A ViewBox whose left drag (in brush mode, or with Shift) draws a rectangle and emits
    ``brushed`` with it in data coordinates, instead of panning."""

    brushed = Signal(object)  # QRectF in data coordinates

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.brush_mode = True

    def mouseDragEvent(self, ev: object, axis: int | None = None) -> None:  # noqa: N802 (Qt override)
        button = ev.button()  # type: ignore[attr-defined]
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)  # type: ignore[attr-defined]
        if (
            button != Qt.MouseButton.LeftButton
            or axis is not None
            or not (self.brush_mode or shift)
        ):
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()  # type: ignore[attr-defined]
        start, end = ev.buttonDownPos(button), ev.pos()  # type: ignore[attr-defined]
        if ev.isFinish():  # type: ignore[attr-defined]
            self.rbScaleBox.hide()
            rect = QRectF(Point(start), Point(end)).normalized()
            self.brushed.emit(self.childGroup.mapRectFromParent(rect).normalized())
        else:
            # pyqtgraph's own rubber band (its zoom box), reused as the brush outline.
            self.updateScaleBox(start, end)


class _RunPlot:
    """The layers of one run's plot."""

    def __init__(self, plot: pg.PlotItem, view: BrushViewBox, palette: ClusterPalette) -> None:
        self.plot = plot
        self.view = view
        #: The title's two lines (elided to the plot's width when drawn).
        self.title: tuple[str, str] = ("", "")
        self.x: np.ndarray = np.zeros(0)
        self.y: np.ndarray = np.zeros(0)
        # vectorized per-point brushes (FastScatterPlotItem): 30,000 records of two runs took
        # 3.7 s with pyqtgraph's per-point loops
        self.records = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, pen=None, symbol="o"
        )
        # the one-style layers too (pyqtgraph's updateSpots loops over every point in Python:
        # 6,000 aggregates, a selection of thousands of records)
        self.protected = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, symbol="x", size=6, pen=None,
            brush=palette.protected_brush,
        )  # fmt: skip
        self.mates = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, symbol="o", size=7, brush=None,
            pen=pg.mkPen("#ff8c00", width=1.5),
        )  # fmt: skip
        self.selected = FastScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, symbol="o", size=8,
            brush=pg.mkBrush(255, 255, 255, 60), pen=pg.mkPen("#000000", width=2),
        )  # fmt: skip
        for z, item in enumerate((self.records, self.protected, self.mates, self.selected)):
            item.setZValue(z)
            plot.addItem(item)
        # The originals at survey size: one image of their 2-D histogram, empty bins transparent.
        self.density = pg.ImageItem(axisOrder="col-major")
        self.density.setZValue(-1)
        self.density.setVisible(False)
        self.density.setLookupTable(_DENSITY_LUT)
        plot.addItem(self.density)
        #: Whether the originals are drawn as the density image now.
        self.density_shown = False
        #: Whether the plot shows the runs given (False while it waits for its turn).
        self.drawn = True

    def show_density(self, counts: np.ndarray | None, rect: QRectF | None = None) -> None:
        """The density image of ``counts`` (records per bin) over ``rect``; None hides it."""
        self.density_shown = counts is not None
        if counts is None:
            self.density.clear()
            self.density.setVisible(False)
            return
        # log10(1 + n): a bin of one record stays visible beside one of thousands; 0 stays 0
        # (the transparent first entry of the lookup table)
        image = np.log10(1.0 + counts)
        self.density.setImage(image, autoLevels=False, levels=(0.0, float(image.max()) or 1.0))
        if rect is not None:
            self.density.setRect(rect)
        self.density.setVisible(True)


def _density_lut() -> np.ndarray:
    """Light to dark blue (as the groups plot's density), the first entry (no record) clear."""
    colors = pg.ColorMap(
        [0.0, 1e-3, 0.35, 0.7, 1.0],
        [(198, 219, 239, 0), "#c6dbef", "#6baed6", "#2171b5", "#08306b"],
    )
    return colors.getLookupTable(0.0, 1.0, 256, alpha=True)


_DENSITY_LUT = _density_lut()


def axis_kind(run: CompareRun, name: str) -> str | None:
    """The kind of a quasi-identifier in a run (continuous, ordinal, nominal; None if none)."""
    qi = run.result.qi
    for kind, names in (
        ("continuous", qi.continuous_names),
        ("ordinal", qi.ordinal_names),
        ("nominal", qi.nominal_names),
    ):
        if name in names:
            return kind
    return None


def axis_choices_of(runs: Sequence[CompareRun]) -> list[str]:
    """Axes every one of ``runs`` can show (known before the runs are drawn): PC1/PC2, then
    the quasi-identifiers they share with the same kind, in the table's column order (as the
    groups plot offers them)."""
    if not runs:
        return []
    choices: list[str] = [PC1, PC2] if all(r.projection is not None for r in runs) else []
    first = runs[0].result
    names = [c for c in first.roles.quasi_identifiers if c in first.qi.names]
    names += [c for c in first.qi.names if c not in names]
    kinds = {c: axis_kind(runs[0], c) for c in names}
    common = [c for c in names if kinds[c] and all(axis_kind(r, c) == kinds[c] for r in runs)]
    return choices + common


def default_axes_of(runs: Sequence[CompareRun], choices: Sequence[str]) -> tuple[str, str]:
    """The axes the compared runs' plots open on: those the groups plot opens on for the first
    run (:func:`~microgui.qt.plots.cluster_scatter.default_axes`: on mixed data a continuous
    quasi-identifier across and a categorical one up, not the principal components of the
    mixed embedding), among the axes every run can show."""
    return default_axes(runs[0].result, runs[0].projection, choices)


class CompareScatterPlot(pg.GraphicsLayoutWidget):
    """2–4 linked plots, one per run. ``brushed`` carries the bool mask of the records brushed."""

    brushed = Signal(object)

    def __init__(self, options: CompareOptions | None = None) -> None:
        super().__init__()
        self.setBackground("w")
        self.options = options or CompareOptions()
        self.palette_ = ClusterPalette()
        self.move_brushes = np.empty(len(MOVE_COLORS), dtype=object)
        self.move_brushes[:] = [QBrush(QColor(c)) for c in MOVE_COLORS]
        #: Per plot, whether its records are coloured by group (else by distance moved).
        self.by_group: list[bool] = []
        self.runs: list[CompareRun] = []
        self.plots: list[_RunPlot] = []
        self.selection: np.ndarray | None = None
        #: Plots per row as laid out now (:func:`grid_columns` of the view's shape).
        self.columns = 2
        self._titles: tuple[str, str] = ("", "")
        #: The axes' tooltips: what an axis shows (a category axis: its random spread).
        self._tips: tuple[str, str] = ("", "")
        #: Rich text of the distance-moved colours drawn now ('' when every run is by group).
        self.move_legend = ""
        #: The legend's line under the plots (None until plots are drawn).
        self.legend_label: pg.LabelItem | None = None
        #: Counts redraws: a plot's turn scheduled by an older one is dropped.
        self._generation = 0
        self._present = np.zeros(len(MOVE_COLORS), dtype=bool)

    def columns_now(self) -> int:
        """Plots per row for the runs at the view's present size."""
        return grid_columns(len(self.runs), max(self.width(), 1), max(self.height(), 1))

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if not getattr(self, "plots", None):  # (a resize arrives during __init__)
            return
        columns = self.columns_now()
        if columns != self.columns:
            self._lay_out(columns)
        self._show_legend()
        self._fit_titles()
        self._fit_axis_titles()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit_grid()

    def _fit_grid(self) -> None:
        """Lay the plots out for the view's present shape: plots made while hidden (the panel
        prepares them before their tab is first shown) were laid out for a default size, one
        above the other, and a shown tab's pending resize did not lay them out again (two
        plots ~75 px tall, one under the other, in a wide view at 1366 × 768)."""
        if self.plots and self.columns_now() != self.columns:
            self._lay_out(self.columns_now())

    def _lay_out(self, columns: int) -> None:
        """Move the plots (drawn, not redrawn) into a grid of ``columns`` a row."""
        self.columns = columns
        items = [p.plot for p in self.plots]
        for item in items:
            if item in self.ci.items:
                self.ci.removeItem(item)
        if self.legend_label is not None and self.legend_label in self.ci.items:
            self.ci.removeItem(self.legend_label)
        for i, item in enumerate(items):
            self.ci.addItem(item, row=i // columns, col=i % columns)
            # linked y ranges read the same: the values on the left column only (a category
            # axis's labels, ~100 px, on every plot pushed the right one out of the view)
            item.getAxis("left").setStyle(showValues=i % columns == 0)
        self._place_legend()
        self._set_axis_titles()

    def _place_legend(self) -> None:
        """The colour legend's line under the plots, across every column."""
        if self.legend_label is None:
            return
        rows = -(-len(self.plots) // self.columns)
        self.ci.addItem(self.legend_label, row=rows, col=0, colspan=self.columns)

    def _show_legend(self) -> None:
        """The colour legend under the plots, its entries wrapped onto as many lines as the
        view's width needs (one long line was the layout's minimum width and pushed the right
        plot out of the view at 1366 × 768)."""
        if self.legend_label is None:
            return
        if not self.move_legend:
            self.legend_label.setText("")
            self.legend_label.setVisible(False)
            return
        head = (
            "Colour = distance moved by protection (standard deviations on these axes; "
            "a group's dot: its records' mean):"
        )
        entries = [head, *self.move_legend.split(_LEGEND_SEP)]
        font = QFont(self.legend_label.item.font())
        font.setPointSize(8)
        metrics = QFontMetrics(font)
        room = max(self.width() - 40, 200)
        lines: list[list[str]] = [[]]
        used = 0
        for entry in entries:
            width = metrics.horizontalAdvance(_plain(entry)) + metrics.horizontalAdvance("  ")
            if lines[-1] and used + width > room:
                lines.append([])
                used = 0
            lines[-1].append(entry)
            used += width
        text = "<br>".join("&nbsp; ".join(line) for line in lines)
        self.legend_label.setText(text, color="#222222", size="8pt")
        self.legend_label.setVisible(True)

    def _set_axis_titles(self) -> None:
        """Linked axes read the same: the x title on the bottom row, the y title on the left
        column only; each as long as its plot has room for (:meth:`_fit_axis_titles`)."""
        (x_title, y_title), (x_tip, y_tip) = self._titles, self._tips
        for p in self.plots:
            p.plot.getAxis("left").setToolTip(f"{y_title}\n{y_tip}".strip())
            p.plot.getAxis("bottom").setToolTip(f"{x_title}\n{x_tip}".strip())
        self._fit_axis_titles()

    def _fit_titles(self) -> None:
        """Each plot's title wrapped to the plot's width (:func:`wrap_title`): the run (its
        number, method and k, on two lines where one is too narrow), then as many of its
        groups, colouring and markers as one line holds, the whole in the tooltip. A title is its plot's minimum
        width in pyqtgraph (a long one pushed the right column out of the view), and elided to
        one line each, four runs at 1366 × 768 read "#1 mdav-generic…" (k cut) over
        "400 groups · colou…"."""
        if not self.plots:
            return
        # the view's share, not the view box's width: a title is its column's minimum width,
        # measuring the view box would feed a title's width back into the next one's room
        width = max(int(self.width() / self.columns) - TITLE_MARGIN, 60)
        for p in self.plots:
            name, detail = p.title
            fonts = []
            for points in (9, 8):
                font = QFont(p.plot.titleLabel.item.font())  # the font the title is drawn in
                font.setPointSize(points)
                fonts.append(QFontMetrics(font))
            head = wrap_title([name], fonts[0], width, " ")
            # the detail on one line: each line of title is taken from the plot's height (two
            # lines of detail left the laptop's two plots 190 px tall, at the floor)
            tail = wrap_title(detail.split(" · "), fonts[1], width, " · ", max_lines=1)
            head_html = "<br>".join(html.escape(line) for line in head)
            tail_html = "<br>".join(html.escape(line) for line in tail)
            p.plot.setTitle(
                f"{head_html}<br><span style='font-size:8pt;color:#555'>{tail_html}</span>",
                color="#222222", size="9pt",
            )  # fmt: skip
            p.plot.titleLabel.setToolTip(f"{name}\n{detail}")
        # pyqtgraph gives a title a fixed 30 px row (two lines): each gets its text's height,
        # the same in every plot so that the linked view boxes stay level
        height = int(max(p.plot.titleLabel.itemRect().height() for p in self.plots)) + 2
        for p in self.plots:
            p.plot.titleLabel.setMaximumHeight(height)
            p.plot.layout.setRowFixedHeight(0, height)

    def _fit_axis_titles(self) -> None:
        """Each axis title in full, short (:func:`short_title`) or not at all, whichever is
        the longest its plot has room for (the tooltip always has it): at 1366 × 768 the
        vertical titles overprinted the plot below and the bottom ones each other."""
        if not self.plots:
            return
        x_title, y_title = self._titles
        n, columns = len(self.plots), self.columns
        rows = -(-n // columns)
        self.ci.layout.activate()  # the plots' sizes in this layout
        for i, p in enumerate(self.plots):
            bottom_row = i // columns == rows - 1 or i + columns >= n
            left_column = i % columns == 0
            for side, wanted, room in (
                ("bottom", bottom_row, p.view.width()),
                ("left", left_column, p.view.height()),
            ):
                title = x_title if side == "bottom" else y_title
                axis = p.plot.getAxis(side)
                metrics = QFontMetrics(axis.label.font())
                text = next(
                    (
                        t
                        for t in (title, short_title(title))
                        if wanted and t and metrics.horizontalAdvance(t) + TEXT_MARGIN <= room
                    ),
                    None,
                )
                if text != axis.labelText or bool(text) != axis.label.isVisible():
                    p.plot.setLabel(side, text, color="#222222")
                    p.plot.showLabel(side, bool(text))
                    # pyqtgraph centres an axis title in AxisItem.resizeEvent only: a new text
                    # kept the old one's place (a longer title ran off the top of the view)
                    axis.resizeEvent()

    # content ------------------------------------------------------------------------------
    def axis_choices(self) -> list[str]:
        """Axes every compared run can show: PC1/PC2 and their common continuous QIs."""
        return axis_choices_of(self.runs)

    def set_runs(self, runs: Sequence[CompareRun], stagger: bool = False) -> None:
        """Show these runs side by side (empty: nothing). The plots of the runs shown before
        are reused when as many runs come (their items get new data): creating the plot items
        and their layers again took ~25 ms of the GUI thread per comparison."""
        runs = list(runs)
        self.selection = None
        if not runs or not self.plots:
            self.clear()
            self.plots = []
            self.legend_label = None
        self.runs = runs
        if not self.runs:
            self.addLabel("Choose 2 to 4 runs in the history and press Compare.", color="#444444")
            return
        choices = self.axis_choices()
        opts = self.options
        if choices and (opts.x_axis not in choices or opts.y_axis not in choices):
            opts.x_axis, opts.y_axis = default_axes_of(self.runs, choices)
        if len(self.plots) != len(self.runs):
            self._add_plots(len(self.runs))
        self.redraw(stagger)

    def prepare(self, n: int) -> None:
        """Make the items of ``n`` plots now, to be filled by the next :meth:`set_runs` of as
        many runs (the panel calls it in a turn of the event loop of its own: making them and
        drawing in one turn held the GUI thread longer)."""
        if not 2 <= n <= 4 or len(self.plots) == n:
            return
        if not self.plots:
            self.clear()  # the "choose runs" line
            self.legend_label = None
        self._add_plots(n)

    def _add_plots(self, n: int) -> None:
        """``n`` linked plots in a grid as close to square as the view allows: the plots drawn
        now are kept (their items get new data), the missing ones made, the extra ones
        dropped."""
        opts = self.options
        for extra in self.plots[n:]:
            self.ci.removeItem(extra.plot)
        self.plots = self.plots[:n]
        first: pg.PlotItem | None = self.plots[0].plot if self.plots else None
        for i in range(len(self.plots), n):
            view = BrushViewBox()
            view.brush_mode = opts.brush_mode
            view.brushed.connect(lambda rect, n=i: self.brush_rect(rect, n))
            # category labels on an ordinal or nominal axis (the groups plot's axis items)
            plot = pg.PlotItem(
                viewBox=view,
                axisItems={"bottom": CategoryAxisItem("bottom"), "left": CategoryAxisItem("left")},
            )
            plot.showGrid(x=True, y=True, alpha=0.15)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(pg.mkPen("#444444"))
                axis.setTextPen(pg.mkPen("#222222"))
            if first is None:
                first = plot
            else:
                # Linked ranges (pyqtgraph examples/linkedViews.py): zoom one, all follow.
                plot.setXLink(first)
                plot.setYLink(first)
            self.plots.append(_RunPlot(plot, view, self.palette_))
        if self.legend_label is None:
            self.legend_label = pg.LabelItem()
        # As many plots a row as keep them closest to square in this view (grid_columns)
        self._lay_out(self.columns_now())

    def set_brush_mode(self, on: bool) -> None:
        self.options.brush_mode = on
        for p in self.plots:
            p.view.brush_mode = on

    def set_axes(self, x_axis: str, y_axis: str) -> None:
        self.options.x_axis, self.options.y_axis = x_axis, y_axis
        self.redraw()

    def redraw(self, stagger: bool = False) -> None:
        """Draw every layer of every plot for the current options, set the shared range once
        (``stagger``: the first plot now, each other one in a later turn of the event loop).

        Up to ``density_threshold`` records a plot draws each record, coloured by its group
        when the run has few groups, else by how far protection moved it; above, the originals
        are a density image (records per bin, log scale) and the released group aggregates are
        drawn on top, coloured likewise (a group by its records' mean distance moved): 30,000
        points per run took ~1 s to build and ~0.3 s to paint on two Adult runs (issue 29)."""
        if not self.runs or not self.axis_choices():
            return
        self._fit_grid()
        opts = self.options
        xs_all, ys_all = [], []
        drawn = []
        for p in self.plots:
            p.drawn = False
        for run, p in zip(self.runs, self.plots, strict=True):
            # the moves of the axes the plots open on come with the run (its worker's)
            n = len(run.result.labels)
            own = ready_moves(run.projection, opts.x_axis, opts.y_axis, n) is None
            x_axis = axis_values(run.result, run.projection, opts.x_axis, opts.sample_seed, own)
            y_axis = axis_values(run.result, run.projection, opts.y_axis, opts.sample_seed, own)
            x, y = x_axis.original, y_axis.original
            p.x, p.y = x, y  # where the records are drawn: what a brush selects from
            xs_all.append(x[np.isfinite(x)])
            ys_all.append(y[np.isfinite(y)])
            drawn.append((x_axis, y_axis))
        x_all, y_all = np.concatenate(xs_all), np.concatenate(ys_all)
        ranges = (_span(x_all), _span(y_all)) if len(x_all) and len(y_all) else None
        x_cats, y_cats = drawn[0][0].categories, drawn[0][1].categories
        if ranges is not None:  # a category axis shows every slot, as in the groups plot
            ranges = (
                slot_span(x_cats) if x_cats is not None else ranges[0],
                slot_span(y_cats) if y_cats is not None else ranges[1],
            )
        for p in self.plots:
            p.plot.getAxis("bottom").set_categories(x_cats.labels if x_cats is not None else None)
            p.plot.getAxis("left").set_categories(y_cats.labels if y_cats is not None else None)
        self.by_group = [r.result.n_groups <= opts.max_group_colours for r in self.runs]
        self._titles = (drawn[0][0].title, drawn[0][1].title)
        self._tips = (drawn[0][0].tip, drawn[0][1].tip)
        self._present = np.zeros(len(MOVE_COLORS), dtype=bool)
        self._generation += 1
        if ranges is not None:
            self.plots[0].view.setRange(xRange=ranges[0], yRange=ranges[1], padding=0.0)
        for i, arrays in enumerate(drawn):
            if i == 0 or not stagger:
                self._draw_plot(i, arrays, ranges)
            else:
                self.plots[i].title = (self.runs[i].name, "drawing…")
                # the other plots in turns of their own (two Adult runs in one turn held the
                # GUI thread ~90 ms with the paint)
                QTimer.singleShot(0, partial(self._draw_later, self._generation, i, arrays, ranges))
        self._set_axis_titles()
        self.set_selection(self.selection)

    def _draw_later(self, generation: int, i: int, arrays: tuple[Any, ...], ranges: Any) -> None:
        if generation == self._generation and i < len(self.plots):
            self._draw_plot(i, arrays, ranges)

    @property
    def drawing(self) -> bool:
        """Whether a plot waits for its turn to be drawn (:meth:`redraw` with ``stagger``)."""
        return any(not p.drawn for p in self.plots)

    def _draw_plot(self, i: int, arrays: tuple[Any, ...], ranges: Any) -> None:
        """Draw plot ``i`` of the runs (its layers, title, the legend's classes)."""
        opts = self.options
        run, p = self.runs[i], self.plots[i]
        x_axis, y_axis = arrays
        x, x_prot, y, y_prot = x_axis.original, x_axis.protected, y_axis.original, y_axis.protected
        classes_present = self._present
        labels = run.result.labels
        n = len(labels)
        density = opts.uses_density(n) and ranges is not None
        idx = None if density else sample_indices(n, opts.max_points, opts.sample_seed)
        p.view.disableAutoRange()
        # Colour by group only when there are few groups (issue 29), else by distance moved
        by_group = self.by_group[i]
        classes = None
        ready = ready_moves(run.projection, opts.x_axis, opts.y_axis, n)
        if not by_group and ready is not None:
            classes = ready.classes
        elif not by_group:
            moved = distance_moved(x_axis.moves, y_axis.moves)
            classes = move_classes(moved)
        # One released point per group: every member of a group carries its aggregate.
        first = group_firsts(run.projection, labels)  # (the run's worker found them)
        px, py = x_prot[first], y_prot[first]
        keep = np.isfinite(px) & np.isfinite(py)
        if density:
            assert ranges is not None
            counts, _outside = density_image(x, y, ranges[0], ranges[1], opts.density_bins)
            (x0, x1), (y0, y1) = ranges
            p.show_density(counts, QRectF(x0, y0, x1 - x0, y1 - y0))
            p.records.clear()
            if by_group:
                brushes = self.palette_.brushes_for(labels[first][keep])
            else:
                assert classes is not None
                if ready is not None:
                    group_classes = ready.group_classes
                else:
                    group_classes = move_classes(group_means(moved, labels))
                group_class = group_classes[labels[first][keep]]
                brushes = self.move_brushes[group_class]
                classes_present[np.unique(group_class)] = True
            _restyle(p.protected, "o", 4)
            p.protected.set_points(px[keep], py[keep], brushes if keep.any() else None)
        else:
            p.show_density(None)
            sx, sy, sl = (x, y, labels) if idx is None else (x[idx], y[idx], labels[idx])
            if by_group:
                brush = self.palette_.brushes_for(sl)
            else:
                assert classes is not None
                brush = self.move_brushes[classes if idx is None else classes[idx]]
                classes_present[np.unique(classes)] = True
            if p.records.opts["size"] != opts.point_size:
                p.records.setSize(opts.point_size)
            p.records.set_points(sx, sy, brush)
            _restyle(p.protected, "x", 6)
            p.protected.setBrush(self.palette_.protected_brush)
            p.protected.setData(x=px[keep], y=py[keep])
        # short phrases, most telling first: wrap_title drops the last ones a narrow plot has
        # no room for (the tooltip keeps them)
        sampled = "" if idx is None else f" · sample of {len(idx):,}"
        if density:
            colour = " by group" if by_group else ""
            detail = (
                f"{run.result.n_groups:,} groups · dots: released aggregates{colour} · "
                "blue: originals per bin (log)"
            )
        else:
            colour = "colour: group" if by_group else "colour: distance moved"
            detail = f"{run.result.n_groups:,} groups · {colour} · ×: released aggregates{sampled}"
        p.title = (run.name, detail)

        p.drawn = True
        self.move_legend = _move_legend(classes_present)
        self._show_legend()
        self._fit_titles()

    def set_selection(self, mask: np.ndarray | None) -> None:
        """Highlight the selected records in every plot, and ring the other members of their
        groups in each run (None: nothing selected)."""
        self.selection = None if mask is None else np.asarray(mask, dtype=bool)
        for run, p in zip(self.runs, self.plots, strict=True):
            if self.selection is None or len(self.selection) != len(run.result.labels):
                p.selected.clear()
                p.mates.clear()
                continue
            x, y = p.x, p.y
            labels = run.result.labels
            groups = np.unique(labels[self.selection])
            mates = np.isin(labels, groups) & ~self.selection
            p.selected.setData(x=x[self.selection], y=y[self.selection])
            p.mates.setData(x=x[mates], y=y[mates])

    def brush_rect(self, rect: QRectF, plot: int = 0) -> np.ndarray:
        """The bool mask of the records drawn inside ``rect`` (data coordinates) of plot number
        ``plot``; emits ``brushed``."""
        x, y = self.plots[plot].x, self.plots[plot].y
        r = rect.normalized()
        mask = (x >= r.left()) & (x <= r.right()) & (y >= r.top()) & (y <= r.bottom())
        self.brushed.emit(mask)
        return mask

    @property
    def plot_items(self) -> list[pg.PlotItem]:
        return [p.plot for p in self.plots]


def _restyle(item: FastScatterPlotItem, symbol: str, size: float) -> None:
    """Give a layer another symbol or size (emptied first: restyling every point is slow)."""
    if item.opts["symbol"] != symbol or item.opts["size"] != size:
        item.setData(x=[], y=[])
        item.setSymbol(symbol)
        item.setSize(size)


#: Between the entries of :func:`_move_legend`.
_LEGEND_SEP = "\u2002"


def _plain(rich: str) -> str:
    """The visible text of a legend entry (its markup and entities dropped)."""
    return html.unescape(re.sub(r"<[^>]+>", "", rich))


def wrap_title(
    parts: Sequence[str], metrics: QFontMetrics, width: int, sep: str, max_lines: int = 2
) -> list[str]:
    """``parts`` (a run's name, or the phrases of its detail) on at most ``max_lines`` lines of
    at most ``width`` pixels, joined by ``sep`` while they fit and broken at their spaces. The
    first part is always there (a word longer than a line elided as a last resort); a later part
    that does not fit whole is left out with the ones after it (the tooltip has them)."""
    lines: list[str] = []
    for i, part in enumerate(parts):
        kept = list(lines)
        for j, word in enumerate(part.split(" ")):
            before = (sep if i else "") if j == 0 else " "
            if lines and metrics.horizontalAdvance(lines[-1] + before + word) <= width:
                lines[-1] += before + word
            elif len(lines) < max_lines:
                lines.append(metrics.elidedText(word, Qt.TextElideMode.ElideRight, width))
            elif i == 0:  # the first part cut short: say so
                lines[-1] = metrics.elidedText(
                    lines[-1] + " " + word + "…", Qt.TextElideMode.ElideRight, width
                )
                return lines
            else:
                return kept
    return lines


def _move_legend(present: np.ndarray) -> str:
    """Rich text naming the colours of the distance-moved classes drawn ('' if none), the
    entries separated by :data:`_LEGEND_SEP`."""
    texts = move_class_labels(MOVE_EDGES)
    return _LEGEND_SEP.join(
        f"<span style='color:{MOVE_COLORS[c]}'>●</span>&nbsp;{html.escape(texts[c])}"
        for c in range(len(texts))
        if c < len(present) and present[c]
    )


def _span(values: np.ndarray, q: float = 0.005) -> tuple[float, float]:
    if len(values) > 100:
        lo, hi = (float(v) for v in np.quantile(values, [q, 1.0 - q]))
    else:
        lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad
