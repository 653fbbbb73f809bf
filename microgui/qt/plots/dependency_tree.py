"""The best dependency tree of the quasi-identifiers (AMA, ``000`` §3.2) and its matrix.

A view (STYLE.md §5, §7): it receives a :class:`DependencyTree` and the :class:`TreeLayout`
computed in the worker and keeps no copy of the data.

- The tree: all edges one curve with ``connect='pairs'``, all attributes one
  :class:`ScatterPlotItem` with shared brushes (key attributes in their own colour and larger),
  edge weights (entropy distance, 3 decimals) and attribute names (with their entropy) as text. It is
  drawn top-down or left-to-right, whichever gives labels more room in the view's shape, and the
  view's range is set so that legend and labels keep their room in pixels.
- The dependency matrix of entropy distances H(Ai|Aj) + H(Aj|Ai) (the paper's MI(Ai, Aj)): an :class:`ImageItem` with a colour bar, attribute names on
  both axes (vertical below), each cell's value written in it with two decimals, or one when
  two do not fit, when the cells are large enough (up to :data:`MAX_CELL_TEXT` attributes;
  hover a cell otherwise) and the tree's edges outlined.

The matrix is beside the tree when the widget is wide (its pane as wide as its values need, up
to :data:`MATRIX_SHARE`, until the user moves the handle), below it when it is narrow. Text items are one per attribute, edge or cell: a tree has m - 1 edges
for m quasi-identifiers (tens at most), never one per record.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from microgui.core.table.dependency import DependencyTree
from microgui.core.views.layout import LabelPlacement, TreeLayout, place_tree_labels, tree_points
from microgui.qt.plots.cell_text import SIZES, CellTextItem, cell_font
from microgui.qt.plots.titles import FittedTitleAxisItem, fitted_axes
from microgui.qt.wrapped_label import WrappedLabel

__all__ = [
    "DependencyTreePlot",
    "KEY_COLOR",
    "OTHER_COLOR",
    "CONSTANT_COLOR",
    "MAX_CELL_TEXT",
    "KEY_LEGEND",
]

KEY_COLOR = "#d62728"
OTHER_COLOR = "#1f77b4"
CONSTANT_COLOR = "#b0b0b0"
EDGE_COLOR = "#555555"
#: Matrices of up to this many attributes get their values written in the cells.
MAX_CELL_TEXT = 16
#: Decimals of the cell values, most first: one when two do not fit the cells (issue 30).
CELL_DECIMALS = (2, 1)
#: The point size the matrix's pane is widened for, beside the tree, so that its values are
#: written (at 1366 × 768 the matrix had ~130 px for 7 attributes and showed none: issue 30).
CELL_POINT_SIZE = 8.0
#: The shares of the tree-and-matrix width the matrix's pane keeps, least and most, beside it.
MATRIX_SHARE = (0.45, 0.6)
KEY_LEGEND = "key attribute (microaggregated on)"
#: Pixels between a label's text and the edge of its box (Qt's default is 4).
_TEXT_MARGIN = 1.5


#: The tree's least height in pixels: below it the labels of Census's 13 attributes cannot all
#: be placed apart (the window's minimum height follows, within the 700 px of a laptop).
TREE_MIN_HEIGHT = 260


class _VerticalTextAxis(FittedTitleAxisItem):
    """A bottom axis whose tick labels are written vertically (names longer than a cell fit)."""

    def drawPicture(
        self, p: QPainter, axisSpec: tuple, tickSpecs: list, textSpecs: list
    ) -> None:  # Qt-style override of pyqtgraph's painter
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        pen, p1, p2 = axisSpec
        p.setPen(pen)
        p.drawLine(p1, p2)
        for pen, p1, p2 in tickSpecs:
            p.setPen(pen)
            p.drawLine(p1, p2)
        font = self.style["tickFont"] or self.font()
        p.setFont(font)
        p.setPen(self.textPen())
        metrics = QFontMetrics(font)
        top = float(self.style["tickLength"]) + 3.0
        for rect, _flags, text in textSpecs:
            width = float(metrics.horizontalAdvance(text)) + 2.0
            height = float(metrics.height())
            p.save()
            p.translate(rect.center().x(), top)
            p.rotate(-90)
            # After the rotation x runs upwards: the text ends at the tick and reads bottom to top.
            p.drawText(
                QRectF(-width, -height / 2, width, height),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                text,
            )
            p.restore()

    def generateDrawSpecs(self, p: QPainter) -> tuple | None:  # noqa: N802 (pyqtgraph API)
        """pyqtgraph's specs, with a label for every tick: it drops the labels whose horizontal
        width would leave the axis or crowd it, but these are written vertically (issue 15:
        "hours_per_week", "income", "wealth" went missing under a narrow matrix)."""
        specs = super().generateDrawSpecs(p)
        levels = getattr(self, "_tickLevels", None)
        if specs is None or not levels:
            return specs
        axis_spec, tick_specs, text_specs = specs
        names = [name for _value, name in levels[0]]
        xs = [p1.x() for _pen, p1, _p2 in tick_specs]
        if len(xs) != len(names):  # some ticks out of view: keep pyqtgraph's choice
            return specs
        flags = int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        labels = [
            (QRectF(x - 1.0, 0.0, 2.0, 2.0), flags, n) for x, n in zip(xs, names, strict=True)
        ]
        return axis_spec, tick_specs, labels

    def fit_labels(self, names: list[str]) -> None:
        """Reserve the height of the longest label."""
        metrics = QFontMetrics(self.style["tickFont"] or self.font())
        longest = max((metrics.horizontalAdvance(n) for n in names), default=0)
        label = self.label.boundingRect().height() if self.label.isVisible() else 0.0
        self.setHeight(int(longest + 12 + label))


def _brush(color: str, alpha: int = 255) -> QBrush:
    c = QColor(color)
    c.setAlpha(alpha)
    return QBrush(c)


class DependencyTreePlot(QWidget):
    """The tree of a :class:`DependencyTree` beside its dependency matrix."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tree: DependencyTree | None = None
        self._layout: TreeLayout | None = None
        # Shared brushes: the symbol atlas keys on them (STYLE.md §7).
        self.key_brush = _brush(KEY_COLOR)
        self.other_brush = _brush(OTHER_COLOR)
        self.constant_brush = _brush(CONSTANT_COLOR)
        # A cosmetic pen (mkPen): a plain QPen of width > 1 shrinks pyqtgraph's symbols.
        self.node_pen = pg.mkPen("#ffffff", width=1.5)

        # the tree
        self.tree_widget = pg.PlotWidget(axisItems=fitted_axes())
        self.tree_widget.setBackground("w")
        # room for a 13-attribute tree's labels (Census) even in the smallest window
        self.tree_widget.setMinimumHeight(TREE_MIN_HEIGHT)
        self.tree_plot: pg.PlotItem = self.tree_widget.getPlotItem()
        self.tree_plot.hideAxis("left")
        self.tree_plot.hideAxis("bottom")
        self.tree_plot.setMenuEnabled(False)
        self.tree_plot.hideButtons()
        tree_view = self.tree_plot.getViewBox()
        # The view's coordinates are its pixels, y down (see _fit_tree): the tree is laid out to
        # fit, so it is neither panned nor zoomed.
        tree_view.invertY(True)
        tree_view.setMouseEnabled(x=False, y=False)
        tree_view.disableAutoRange()
        # fitted again when the view is resized, at the next turn of the event loop, not
        # inside the layout pass that resized it: resizes in one pass make one fit, and the
        # fits of successive passes (the matrix's pane taking its width, the note below) each
        # hold the GUI thread on their own (issue 30, session 45: Adult's tree shown at
        # 1366 × 768 held it 100-123 ms for 12 label placements; now 56-58 ms, at most 65-80)
        self._tree_fit_timer = QTimer(self)
        self._tree_fit_timer.setSingleShot(True)
        self._tree_fit_timer.setInterval(0)
        self._tree_fit_timer.timeout.connect(self._fit_tree)
        tree_view.sigResized.connect(self._tree_fit_timer.start)
        self.edges_item = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen(EDGE_COLOR, width=2), antialias=True
        )
        self.nodes_item = pg.ScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, symbol="o"
        )
        self.edges_item.setZValue(0)
        # a thin grey line from a vertex to its label when the label could not sit next to it
        self.leaders_item = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen("#888888", width=1), antialias=True
        )
        self.leaders_item.setZValue(3)
        self.tree_plot.addItem(self.leaders_item)
        #: (vertex, label box) of each leader line drawn: the vertex positions, in pixels.
        self.leader_lines: list[tuple[int, tuple[float, float, float, float]]] = []
        self.nodes_item.setZValue(2)
        self.tree_plot.addItem(self.edges_item)
        self.tree_plot.addItem(self.nodes_item)
        self.node_labels: list[pg.TextItem] = []
        self._label_font = QFont()
        self._label_font.setPointSizeF(9.5)
        self._edge_font = QFont()
        self._edge_font.setPointSizeF(8.5)
        # Drawing state of the tree shown (no data: brushes, sizes, parents, label texts).
        self._brushes = np.empty(0, dtype=object)
        self._sizes = np.zeros(0)
        self._parent = np.zeros(0, dtype=np.int64)
        self._has_children = np.zeros(0, dtype=bool)
        self._full_sizes = np.zeros((0, 2))
        self._short_sizes = np.zeros((0, 2))
        self._edge_sizes = np.zeros((0, 2))
        self._label_html: list[tuple[str, str]] = []
        self._short_labels: bool | None = None
        #: "down" (root on top) or "right" (root on the left), chosen for the view's shape.
        self.tree_direction = "down"
        #: Labels the last layout could only place over something (0: every label is free).
        self.label_conflicts = 0
        self.edge_labels: list[pg.TextItem] = []
        self.legend = pg.LegendItem(
            offset=(8, 6),
            labelTextColor="#222222",
            brush=pg.mkBrush(255, 255, 255, 230),
            pen=pg.mkPen("#bbbbbb"),
        )
        self.legend.setParentItem(self.tree_plot.getViewBox())
        self._legend_key = pg.ScatterPlotItem(
            symbol="o", size=14, pen=self.node_pen, brush=self.key_brush
        )
        self._legend_other = pg.ScatterPlotItem(
            symbol="o", size=11, pen=self.node_pen, brush=self.other_brush
        )
        self._legend_constant = pg.ScatterPlotItem(
            symbol="o", size=11, pen=self.node_pen, brush=self.constant_brush
        )
        self._legend_edge = pg.PlotDataItem(pen=pg.mkPen(EDGE_COLOR, width=2))

        # the matrix
        self.bottom_axis = _VerticalTextAxis("bottom")
        self.matrix_widget = pg.PlotWidget(axisItems={"bottom": self.bottom_axis})
        self.matrix_widget.setBackground("w")
        self.matrix_plot: pg.PlotItem = self.matrix_widget.getPlotItem()
        self.matrix_plot.setMenuEnabled(False)
        self.matrix_plot.hideButtons()
        self.matrix_plot.setMouseEnabled(x=False, y=False)
        self.matrix_plot.invertY(True)
        # Cells fill the view (no locked aspect): names stay next to their row and column.
        for name in ("left", "bottom"):
            axis = self.matrix_plot.getAxis(name)
            # No axis line: the view is wider or taller than the square matrix.
            axis.setPen(pg.mkPen(None))
            axis.setTextPen(pg.mkPen("#222222"))
        self.colormap = pg.colormap.get("viridis")
        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.matrix_plot.addItem(self.image_item)
        self.colorbar = pg.ColorBarItem(
            values=(0.0, 1.0),
            colorMap=self.colormap,
            # short: the matrix's title gives the formula, and the bar is as tall as the matrix
            # (the formula ran past both ends at 1366 × 768)
            label="entropy distance, bits",
            interactive=False,
            width=16,
        )
        self.colorbar.setImageItem(self.image_item, insert_in=self.matrix_plot)
        self.colorbar.getAxis("right").setTextPen(pg.mkPen("#222222"))
        self.outline_item = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen("#ffffff", width=2.5), antialias=False
        )
        self.outline_item.setZValue(3)
        self.matrix_plot.addItem(self.outline_item)
        #: The matrix's cell values, one item (a TextItem per cell held the GUI thread ~80 ms).
        self.cell_text = CellTextItem()
        self.cell_text.setZValue(4)
        self.matrix_plot.addItem(self.cell_text)
        self.matrix_widget.scene().sigMouseMoved.connect(self._on_matrix_hover)
        self.matrix_plot.getViewBox().sigResized.connect(self._fit_cells)

        # Titles are Qt labels, not plot titles: a long plot title would set the plot's minimum
        # width and push the matrix out of a narrow window.
        self.tree_title = self._title_label()
        self.matrix_title = self._title_label()
        # Below the tree, shown only when the view is too small for the legend or the edge
        # weights: the colour key in one line, and where the weights are.
        self.tree_note = self._title_label()
        self.tree_note.setVisible(False)
        self.tree_note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._legend_wanted = False
        self._fitting = self._refit = False
        #: Whether the edge weights are written on the tree (hidden only when there is no room).
        self.edge_labels_shown = True
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        for title, widget in (
            (self.tree_title, self.tree_widget),
            (self.matrix_title, self.matrix_widget),
        ):
            pane = QWidget()
            pane_layout = QVBoxLayout(pane)
            pane_layout.setContentsMargins(0, 0, 0, 0)
            pane_layout.setSpacing(0)
            pane_layout.addWidget(title)
            pane_layout.addWidget(widget, 1)
            if widget is self.tree_widget:
                pane_layout.addWidget(self.tree_note)
            self.splitter.addWidget(pane)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self._split_set = False  # the first resize sets the panes' shares
        #: Whether the user moved the handle between tree and matrix: their split is kept.
        self.split_by_user = False
        self.splitter.splitterMoved.connect(self._on_split_moved)
        # again when the matrix's axes have taken their width (after the tree is drawn), at
        # the next turn of the event loop: not inside the layout that resized the view
        self._split_timer = QTimer(self)
        self._split_timer.setSingleShot(True)
        self._split_timer.setInterval(0)
        self._split_timer.timeout.connect(self._fit_split)
        self.matrix_plot.getViewBox().sigResized.connect(self._split_timer.start)
        #: Decimals of the cell values (:data:`CELL_DECIMALS`; 0 before a tree is drawn).
        self.cell_decimals = 0
        self._cell_colors: list[str] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.clear()

    @staticmethod
    def _title_label() -> QLabel:
        label = WrappedLabel()  # all its lines at 1366 × 768 (issue 30)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setStyleSheet("background: white; color: #222; padding: 4px 8px;")
        label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        return label

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Beside each other when there is room; one above the other in a narrow window.
        size = event.size()
        wide = size.width() >= 1.3 * size.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation or not self._split_set:
            self._split_set = True
            self.splitter.setOrientation(orientation)
            total = size.width() if wide else size.height()
            share = 0.55 if wide else 0.52
            self.splitter.setSizes([int(total * share), int(total * (1 - share))])
        super().resizeEvent(event)
        self._fit_split()

    def _on_split_moved(self, *_args: object) -> None:
        self.split_by_user = True

    def _fit_split(self) -> None:
        """Beside the tree, give the matrix's pane the width its cell values need at
        :data:`CELL_POINT_SIZE` (its axis and colour bar as they are drawn now), within
        :data:`MATRIX_SHARE` of the width; the least share when even one decimal in the smallest
        font would not fit within the most (many attributes: the room is the tree's); nothing
        once the user has moved the handle."""
        tree = self._tree
        if (
            tree is None
            or self.split_by_user
            or self.splitter.orientation() != Qt.Orientation.Horizontal
            or not tree.attributes
        ):
            return
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if total <= 0 or self.matrix_widget.width() <= 0:
            return
        m = len(tree.attributes)
        view = self.matrix_plot.getViewBox()
        overhead = max(self.matrix_widget.width() - view.width(), 0.0) + 2

        def need(decimals: int, points: float) -> float:
            font = QFont()
            font.setPointSizeF(points)
            metrics = QFontMetrics(font)
            sample = _widest(_cell_texts(tree, decimals), metrics)
            return overhead + m * 1.04 * (metrics.horizontalAdvance(sample) + 4)

        low, high = MATRIX_SHARE
        if m > MAX_CELL_TEXT or need(CELL_DECIMALS[-1], SIZES[-1]) > total * high:
            matrix = int(total * low)  # no width within the share shows them: the tree's
        else:
            matrix = int(
                min(max(need(CELL_DECIMALS[0], CELL_POINT_SIZE), total * low), total * high)
            )
        if abs(matrix - sizes[1]) > 2:
            self.splitter.setSizes([total - matrix, matrix])

    # content ------------------------------------------------------------------------------
    @property
    def tree(self) -> DependencyTree | None:
        return self._tree

    def clear(self, message: str = "Open a table to see the dependency tree") -> None:
        self._tree = None
        self._layout = None
        self.edges_item.setData(x=np.zeros(0), y=np.zeros(0))
        self.leaders_item.setData(x=np.zeros(0), y=np.zeros(0))
        self.leader_lines = []
        self.nodes_item.clear()
        self._remove(self.tree_plot, self.node_labels)
        self._remove(self.tree_plot, self.edge_labels)
        self.cell_text.clear()
        self._label_html = []
        self.legend.clear()
        self.legend.setVisible(False)
        self._legend_wanted = False
        self.tree_note.setVisible(False)
        self.tree_title.setText(f"<span style='color:#444'>{_escape(message)}</span>")
        self.image_item.clear()
        self.outline_item.setData(x=np.zeros(0), y=np.zeros(0))
        self.matrix_title.setText("")
        self._set_matrix_ticks([])
        self.matrix_widget.setToolTip("")

    @staticmethod
    def _remove(plot: pg.PlotItem, items: list[pg.TextItem]) -> None:
        for item in items:
            plot.removeItem(item)
        items.clear()

    def key_attributes(self) -> list[str]:
        """The attributes drawn as key attributes."""
        return list(self._tree.key_attributes) if self._tree is not None else []

    def set_tree(self, tree: DependencyTree, layout: TreeLayout) -> None:
        """Draw ``tree`` at the positions of ``layout`` (made from it in the worker)."""
        if tuple(layout.names) != tuple(tree.attributes):
            raise ValueError("the layout is not that of this tree")
        self._tree = tree
        self._layout = layout
        self._draw_tree(tree, layout)
        self._draw_matrix(tree, layout)
        self._fit_split()

    def _draw_tree(self, tree: DependencyTree, layout: TreeLayout) -> None:
        """Make the tree's items; :meth:`_fit_tree` places them for the view's size."""
        names = list(tree.attributes)
        m = len(names)
        keys = set(tree.key_attributes)
        constant = set(tree.constant_attributes)
        self._brushes = np.empty(m, dtype=object)
        self._sizes = np.empty(m, dtype=np.float64)
        for i, name in enumerate(names):
            if name in keys:
                self._brushes[i], self._sizes[i] = self.key_brush, 20.0
            elif name in constant:
                self._brushes[i], self._sizes[i] = self.constant_brush, 14.0
            else:
                self._brushes[i], self._sizes[i] = self.other_brush, 15.0
        e = layout.edges
        self._parent = np.full(m, -1, dtype=np.int64)
        for a, b in e:
            child, parent = (a, b) if layout.depth[a] > layout.depth[b] else (b, a)
            self._parent[child] = parent
        self._has_children = np.zeros(m, dtype=bool)
        self._has_children[self._parent[self._parent >= 0]] = True

        self._remove(self.tree_plot, self.node_labels)
        self._remove(self.tree_plot, self.edge_labels)
        self._label_html = []
        self._short_labels = None
        full_sizes, short_sizes = [], []
        for name in names:
            h = tree.entropies.get(name, float("nan"))
            note = "constant: not in the tree" if name in constant else f"H = {h:.2f} bits"
            full = (
                f"<div style='text-align:center'><b>{_escape(name)}</b><br>"
                f"<span style='color:#555;font-size:8pt'>{note}</span></div>"
            )
            self._label_html.append((full, f"<b>{_escape(name)}</b>"))
            label = pg.TextItem(html=full, fill=pg.mkBrush(255, 255, 255, 215), border=None)
            label.setFont(self._label_font)
            label.textItem.document().setDocumentMargin(_TEXT_MARGIN)  # tight boxes, more room
            label.setZValue(4)
            label.setToolTip(f"{name}: {note}, degree {tree.degrees.get(name, 0)} in the tree")
            # the label's size in pixels, names only and in full (the layout chooses)
            label.setHtml(self._label_html[-1][1])
            short_sizes.append(_size(label))
            label.setHtml(full)
            full_sizes.append(_size(label))
            self.tree_plot.addItem(label)
            self.node_labels.append(label)
        for n_edge, (a, b) in enumerate(e):
            w = float(layout.weights[n_edge])
            text = pg.TextItem(
                text=f"{w:.3f}",
                color="#222222",
                anchor=(0.5, 0.5),
                fill=pg.mkBrush(255, 255, 255, 235),
                border=pg.mkPen("#999999"),
            )
            text.setFont(self._edge_font)
            text.textItem.document().setDocumentMargin(_TEXT_MARGIN)
            text.setZValue(3)
            text.setToolTip(f"H({names[a]}|{names[b]}) + H({names[b]}|{names[a]}) = {w:.4f} bits")
            self.tree_plot.addItem(text)
            self.edge_labels.append(text)
        self._full_sizes = np.array(full_sizes, dtype=np.float64).reshape(-1, 2)
        self._short_sizes = np.array(short_sizes, dtype=np.float64).reshape(-1, 2)
        self._edge_sizes = np.array([_size(t) for t in self.edge_labels]).reshape(-1, 2)

        key_text = ", ".join(tree.key_attributes) if tree.key_attributes else "none"
        self.tree_title.setText(
            f"<b>Best dependency tree of {m} quasi-identifier{'s' if m != 1 else ''}</b> "
            f"(continuous ones in {tree.bins} equal-frequency bins) · key attributes: "
            f"<b>{_escape(key_text)}</b><br><span style='color:#555'>edge label = entropy distance "
            "in bits, H(A|B) + H(B|A): lower means more dependent</span>"
        )
        self.legend.clear()
        self.legend.setVisible(True)
        self._legend_wanted = True
        self.legend.addItem(self._legend_key, KEY_LEGEND)
        self.legend.addItem(self._legend_other, "other quasi-identifier")
        if constant:
            self.legend.addItem(self._legend_constant, "constant (left out of the tree)")
        if len(e):
            self.legend.addItem(self._legend_edge, "tree edge (label: entropy distance, bits)")
        self._fit_tree()

    def _legend_box(self, shown: bool) -> np.ndarray:
        """The legend's box in the view's pixels (left, top, right, bottom); empty when hidden."""
        if not (shown and self._legend_wanted):
            return np.zeros((0, 4))
        rect = self.legend.mapRectToParent(self.legend.boundingRect())
        return np.array([[rect.left(), rect.top(), rect.right(), rect.bottom()]])

    def _label_sizes(self, short: bool) -> np.ndarray:
        """(m, 2) pixel widths and heights of the attribute labels, full or names only."""
        return self._short_sizes if short else self._full_sizes

    def _arrange(
        self,
        direction: str,
        short: bool,
        width: float,
        height: float,
        *,
        legend_on: bool = True,
        weights_on: bool = True,
    ) -> tuple[np.ndarray, LabelPlacement]:
        """Vertex positions in pixels and the labels' places, for one way of drawing the tree
        (with or without the legend in the view and the weights on the edges)."""
        layout = self._layout
        assert layout is not None
        sizes = self._label_sizes(short)
        radii = self._sizes / 2.0 + 1.0
        r_max = float(radii.max())
        label_h = float(sizes[:, 1].max())
        legend = self._legend_box(legend_on)
        legend_bottom = float(legend[:, 3].max()) + 4.0 if len(legend) else 0.0
        x, depth = layout.x, layout.depth
        gap = 3.0
        if direction == "down":
            ends = (x == x.min()) | (x == x.max())
            side = max(float(sizes[ends, 0].max()) / 2.0, r_max) + 4.0
            left = (
                side if ends.all() else max(float(sizes[x == x.min(), 0].max()) / 2.0, r_max) + 4.0
            )
            right = width - (max(float(sizes[x == x.max(), 0].max()) / 2.0, r_max) + 4.0)
            top = legend_bottom + label_h + r_max + gap + 2.0
            bottom = height - (label_h + r_max + gap + 4.0)
            sides = [
                ("above", "below", "right", "left")
                if self._has_children[i]
                else ("below", "right", "left", "above")
                for i in range(len(x))
            ]
        else:
            leaves = ~self._has_children
            deepest = depth == depth.max()
            first = depth == depth.min()
            left = max(float(sizes[first, 0].max()) / 2.0, r_max) + 4.0
            tail = float(sizes[leaves & deepest, 0].max()) if (leaves & deepest).any() else 0.0
            right = width - (tail + r_max + gap + 6.0)
            top = legend_bottom + 0.6 * label_h + r_max + 2.0
            bottom = height - (0.6 * label_h + r_max + 4.0)
            sides = [
                ("right", "below", "above", "left")
                if not self._has_children[i]
                else (("above", "below") if int(depth[i]) % 2 == 0 else ("below", "above"))
                + ("right", "left")
                for i in range(len(x))
            ]
        right, bottom = max(right, left + 10.0), max(bottom, top + 10.0)
        points = tree_points(layout, direction, (left, top, right, bottom))
        placement = place_tree_labels(
            points,
            radii,
            sizes,
            layout.edges,
            self._edge_sizes if weights_on else np.zeros_like(self._edge_sizes),
            (0.0, 0.0, width, height),
            node_sides=sides,
            obstacles=legend,
            gap=gap,
        )
        return points, placement

    def fit_pending(self) -> bool:
        """Whether a fit of the tree, or of the panes' split, waits for the next turn of the
        event loop (the view was resized): the drawing is not final yet."""
        return self._tree_fit_timer.isActive() or self._split_timer.isActive()

    def _fit_tree(self) -> None:
        """Fit the tree to the view (:meth:`_fit_tree_once`); again when showing or hiding the
        note below it resized the view meanwhile."""
        if self._fitting:
            self._refit = True
            return
        self._fitting = True
        try:
            for _attempt in range(3):
                self._refit = False
                self._fit_tree_once()
                if not self._refit:
                    break
        finally:
            self._fitting = False

    def _fit_tree_once(self) -> None:
        """Place the tree for the view's size: direction (top-down or left-to-right), full or
        short labels, vertex positions in pixels and every label's place, so that no label
        covers another, a vertex or the legend, and none is cut off by the view (issue 15).

        The view's coordinates are its pixels (y down): the labels' boxes and the vertices are
        computed in the same units they are drawn in.
        """
        layout = self._layout
        if layout is None or not len(layout.x) or not self.node_labels:
            return
        view = self.tree_plot.getViewBox()
        width, height = max(view.width(), 80.0), max(view.height(), 80.0)
        # In order of preference, the first way in which every label fits: the legend in the
        # view and full labels, then names only, then the legend below the view, then the
        # weights left to the matrix. When none fits, the one with the fewest labels over
        # something.
        best: tuple[tuple[float, ...], tuple[bool, bool, bool, str], np.ndarray, LabelPlacement]
        best = None  # type: ignore[assignment]
        for level, (legend_on, short, weights_on) in enumerate(
            ((True, False, True), (True, True, True), (False, False, True),
             (False, True, True), (False, True, False))
        ):  # fmt: skip
            for direction in ("down", "right"):
                points, placement = self._arrange(
                    direction, short, width, height, legend_on=legend_on, weights_on=weights_on
                )
                room = _closest(points)
                key = (
                    float(placement.conflicts),
                    float(level if placement.conflicts == 0 else -level),
                    float(placement.crossings),
                    -room * (1.0 if direction == "down" else 0.85),
                )
                if best is None or key < best[0]:
                    best = (key, (legend_on, short, weights_on, direction), points, placement)
            if best[3].conflicts == 0:
                break
        _key, (legend_on, short, weights_on, direction), points, placement = best
        self.legend.setVisible(legend_on and self._legend_wanted)
        self.edge_labels_shown = weights_on
        for text in self.edge_labels:
            text.setVisible(weights_on)
        self.tree_direction = direction
        self.label_conflicts = placement.conflicts
        if short != self._short_labels:
            self._short_labels = short
            for label, (full, brief) in zip(self.node_labels, self._label_html, strict=True):
                label.setHtml(brief if short else full)
        px, py = points[:, 0], points[:, 1]
        for label, box in zip(self.node_labels, placement.node_boxes, strict=True):
            label.setAnchor((0.0, 0.0))
            label.setPos(float(box[0]), float(box[1]))
        for text, box in zip(self.edge_labels, placement.edge_boxes, strict=True):
            text.setAnchor((0.0, 0.0))
            text.setPos(float(box[0]), float(box[1]))
        e = layout.edges
        if len(e):
            ex = np.column_stack([px[e[:, 0]], px[e[:, 1]]]).ravel()
            ey = np.column_stack([py[e[:, 0]], py[e[:, 1]]]).ravel()
        else:
            ex = ey = np.zeros(0)
        self.edges_item.setData(x=ex, y=ey, connect="pairs")
        self._draw_leaders(points, placement)
        self.nodes_item.setData(
            x=px, y=py, brush=self._brushes, size=self._sizes, pen=self.node_pen
        )
        view.setRange(xRange=(0.0, width), yRange=(0.0, height), padding=0.0, update=True)
        self._set_note(not legend_on, not weights_on)  # may resize the view: then fitted again

    def _draw_leaders(self, points: np.ndarray, placement: LabelPlacement) -> None:
        """A line from each vertex whose label sits away from it, or as near another vertex
        (``placement.leaders``), to the middle of the label box's side that faces it, from
        the edge of the vertex's disc: which label names which vertex is never a guess."""
        self.leader_lines = []
        xs: list[float] = []
        ys: list[float] = []
        for i in np.flatnonzero(placement.leaders):
            box = placement.node_boxes[i]
            cx, cy = float(points[i, 0]), float(points[i, 1])
            left, top, right, bottom = (float(v) for v in box)
            sides = {  # the middle of each side, and how far the vertex is outside it
                (left, (top + bottom) / 2): left - cx,
                (right, (top + bottom) / 2): cx - right,
                ((left + right) / 2, top): top - cy,
                ((left + right) / 2, bottom): cy - bottom,
            }
            nx, ny = max(sides, key=lambda point: sides[point])
            length = float(np.hypot(nx - cx, ny - cy))
            if length <= 0.0:
                continue
            start = float(self._sizes[i]) / 2.0 / length
            xs += [cx + (nx - cx) * start, nx]
            ys += [cy + (ny - cy) * start, ny]
            self.leader_lines.append((int(i), tuple(float(v) for v in box)))  # type: ignore[arg-type]
        self.leaders_item.setData(x=np.asarray(xs), y=np.asarray(ys), connect="pairs")

    def _set_note(self, key: bool, weights: bool) -> None:
        """The line below the tree: the colour key when the legend has no room, and where the
        weights are when they are not written on the edges. Hidden when empty."""
        parts = []
        if key:
            parts += [
                f"<span style='color:{KEY_COLOR}'>●</span> key attribute",
                f"<span style='color:{OTHER_COLOR}'>●</span> other",
            ]
            if self._tree is not None and self._tree.constant_attributes:
                parts.append(f"<span style='color:{CONSTANT_COLOR}'>●</span> constant")
        if weights:
            parts.append("edge weights: see the matrix")
        text = " · ".join(parts)
        if text != self.tree_note.text():
            self.tree_note.setText(text)
        self.tree_note.setVisible(bool(text))

    def _draw_matrix(self, tree: DependencyTree, layout: TreeLayout) -> None:
        names = list(tree.attributes)
        m = len(names)
        matrix = np.asarray(tree.matrix, dtype=np.float64)
        vmax = float(matrix.max()) if m and matrix.max() > 0 else 1.0
        self.image_item.setImage(matrix, levels=(0.0, vmax), autoLevels=False)
        self.image_item.setRect(QRectF(0, 0, m, m))
        self.colorbar.setLevels((0.0, vmax))
        self._set_matrix_ticks(names)
        self.matrix_plot.setXRange(0, m, padding=0.02)
        self.matrix_plot.setYRange(0, m, padding=0.02)
        # the tree's edges, outlined: 4 sides per cell and its mirror, one curve
        segments: list[tuple[float, float, float, float]] = []
        for a, b in layout.edges:
            for r, c in ((int(a), int(b)), (int(b), int(a))):
                x0, y0, x1, y1 = c + 0.04, r + 0.04, c + 0.96, r + 0.96
                segments += [
                    (x0, y0, x1, y0),
                    (x1, y0, x1, y1),
                    (x1, y1, x0, y1),
                    (x0, y1, x0, y0),
                ]
        if segments:
            seg = np.asarray(segments)
            self.outline_item.setData(
                x=seg[:, [0, 2]].ravel(), y=seg[:, [1, 3]].ravel(), connect="pairs"
            )
        else:
            self.outline_item.setData(x=np.zeros(0), y=np.zeros(0))
        # the text colour of each cell: dark on the light end of the colour map
        self._cell_colors = [
            "#111111"
            if self.colormap.map(v / vmax, mode="qcolor").lightnessF() > 0.55
            else "#ffffff"
            for v in matrix.ravel()
        ]
        self.cell_decimals = 0
        self.cell_text.clear()
        self.matrix_title.setText(
            "<b>Dependency matrix</b>: entropy distance H(A|B) + H(B|A) in bits (0 = each "
            "determines the other)<br><span style='color:#555'>white "
            "outline = edge of the tree · hover a cell for its value</span>"
        )
        self._fit_cells()

    def _fit_cells(self) -> None:
        """Cell values with two decimals in the largest font (7-10 pt) that fits the cells, else
        with one; none when neither fits (or beyond :data:`MAX_CELL_TEXT` attributes)."""
        tree = self._tree
        if tree is None or not 0 < len(tree.attributes) <= MAX_CELL_TEXT:
            return
        m = len(tree.attributes)
        view = self.matrix_plot.getViewBox()
        for decimals in CELL_DECIMALS:
            texts = _cell_texts(tree, decimals)
            sample = _widest(texts, QFontMetrics(QFont()))
            font = cell_font(view.width(), view.height(), m, sample)
            if font is not None:
                break
        else:  # none fits: the texts are kept, not drawn (hover a cell for its value)
            decimals, texts = CELL_DECIMALS[0], _cell_texts(tree, CELL_DECIMALS[0])
        if decimals != self.cell_decimals or not self.cell_text.texts:
            self.cell_decimals = decimals
            colors = self._cell_colors
            self.cell_text.set_cells(
                [
                    (i % m + 0.5, i // m + 0.5, text, colors[i] if i < len(colors) else "#111111")
                    for i, text in enumerate(texts)
                ]
            )
        self.cell_text.set_font(font)

    def _set_matrix_ticks(self, names: list[str]) -> None:
        ticks = [[(i + 0.5, n) for i, n in enumerate(names)]]
        self.matrix_plot.getAxis("left").setTicks(ticks)
        self.bottom_axis.setTicks(ticks)
        self.bottom_axis.fit_labels(names)

    def _on_matrix_hover(self, pos: QPointF) -> None:
        tree = self._tree
        if tree is None:
            return
        point = self.matrix_plot.getViewBox().mapSceneToView(pos)
        m = len(tree.attributes)
        c, r = int(np.floor(point.x())), int(np.floor(point.y()))
        if 0 <= r < m and 0 <= c < m:
            a, b = tree.attributes[r], tree.attributes[c]
            self.matrix_widget.setToolTip(
                f"H({a}|{b}) + H({b}|{a}) = {float(tree.matrix[r, c]):.4f} bits"
            )
        else:
            self.matrix_widget.setToolTip("")

    def title_text(self) -> str:
        return self.tree_title.text()


def _cell_texts(tree: DependencyTree, decimals: int) -> list[str]:
    """The matrix's cell values, row by row, with ``decimals`` decimals ("·" on the diagonal)."""
    matrix = np.asarray(tree.matrix, dtype=np.float64)
    m = matrix.shape[0]
    return ["·" if r == c else f"{matrix[r, c]:.{decimals}f}" for r in range(m) for c in range(m)]


def _widest(texts: list[str], metrics: QFontMetrics) -> str:
    """The widest of ``texts`` in ``metrics`` ("0.00" when there are none): the one a cell
    must hold ("12.34" is wider than "0.00")."""
    return max(texts, key=metrics.horizontalAdvance, default="0.00")


def _size(item: pg.TextItem) -> tuple[float, float]:
    """Width and height of a text item in pixels (it ignores the view's scale)."""
    rect = item.boundingRect()
    return float(rect.width()), float(rect.height())


def _closest(points: np.ndarray) -> float:
    """The smallest distance between two of ``points`` (inf for fewer than two)."""
    if len(points) < 2:
        return float("inf")
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    d[np.diag_indices(len(points))] = np.inf
    return float(d.min())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
