"""The best dependency tree of the quasi-identifiers (AMA, ``000`` §3.2) and its matrix.

A view (STYLE.md §5, §7): it receives a :class:`DependencyTree` and the :class:`TreeLayout`
computed in the worker and keeps no copy of the data.

- The tree: all edges one curve with ``connect='pairs'``, all attributes one
  :class:`ScatterPlotItem` with shared brushes (key attributes in their own colour and larger),
  edge weights (MI distance, 3 decimals) and attribute names (with their entropy) as text. It is
  drawn top-down or left-to-right, whichever gives labels more room in the view's shape, and the
  view's range is set so that legend and labels keep their room in pixels.
- The dependency matrix MI(Ai, Aj): an :class:`ImageItem` with a colour bar, attribute names on
  both axes (vertical below), each cell's value written in it when the cells are large enough
  (up to :data:`MAX_CELL_TEXT` attributes; hover a cell otherwise) and the tree's edges outlined.

The matrix is beside the tree when the widget is wide, below it when it is narrow (the default
window, with its docks). Text items are one per attribute, edge or cell: a tree has m - 1 edges
for m quasi-identifiers (tens at most), never one per record.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QResizeEvent
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from microgui.core.dependency import DependencyTree
from microgui.core.layout import TreeLayout
from microgui.qt.plots.cell_text import cell_font

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
KEY_LEGEND = "key attribute (microaggregated on)"
#: Pixels kept free around the tree: above (at least; plus the legend and a label), below (leaf
#: labels), on the sides (half a label).
_TOP_PX = 24.0
_BOTTOM_PX = 44.0
_SIDE_PX = 64.0


class _VerticalTextAxis(pg.AxisItem):
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
        self.tree_widget = pg.PlotWidget()
        self.tree_widget.setBackground("w")
        self.tree_plot: pg.PlotItem = self.tree_widget.getPlotItem()
        self.tree_plot.hideAxis("left")
        self.tree_plot.hideAxis("bottom")
        self.tree_plot.setMenuEnabled(False)
        self.tree_plot.hideButtons()
        self.tree_plot.getViewBox().sigResized.connect(self._fit_tree)
        self.edges_item = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen(EDGE_COLOR, width=2), antialias=True
        )
        self.nodes_item = pg.ScatterPlotItem(
            pxMode=True, useCache=True, hoverable=False, symbol="o"
        )
        self.edges_item.setZValue(0)
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
        self._name_px = np.zeros(0)
        self._label_html: list[tuple[str, str]] = []
        self._short_labels: bool | None = None
        #: "down" (root on top) or "right" (root on the left), chosen for the view's shape.
        self.tree_direction = "down"
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
            label="MI distance (bits)",
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
        self.cell_labels: list[pg.TextItem] = []
        self.matrix_widget.scene().sigMouseMoved.connect(self._on_matrix_hover)
        self.matrix_plot.getViewBox().sigResized.connect(self._fit_cells)

        # Titles are Qt labels, not plot titles: a long plot title would set the plot's minimum
        # width and push the matrix out of a narrow window.
        self.tree_title = self._title_label()
        self.matrix_title = self._title_label()
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
            self.splitter.addWidget(pane)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self._split_set = False  # the first resize sets the panes' shares
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.clear()

    @staticmethod
    def _title_label() -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
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

    # content ------------------------------------------------------------------------------
    @property
    def tree(self) -> DependencyTree | None:
        return self._tree

    def clear(self, message: str = "Open a table to see the dependency tree") -> None:
        self._tree = None
        self._layout = None
        self.edges_item.setData(x=np.zeros(0), y=np.zeros(0))
        self.nodes_item.clear()
        self._remove(self.tree_plot, self.node_labels)
        self._remove(self.tree_plot, self.edge_labels)
        self._remove(self.matrix_plot, self.cell_labels)
        self._label_html = []
        self.legend.clear()
        self.legend.setVisible(False)
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
        bold = QFont(self._label_font)
        bold.setBold(True)
        name_metrics = QFontMetrics(bold)
        self._name_px = np.array([name_metrics.horizontalAdvance(n) for n in names], dtype=float)
        self._short_labels = None
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
            label.setZValue(4)
            label.setToolTip(f"{name}: {note}, degree {tree.degrees.get(name, 0)} in the tree")
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
            text.setZValue(3)
            text.setToolTip(f"MI({names[a]}, {names[b]}) = {w:.4f} bits")
            self.tree_plot.addItem(text)
            self.edge_labels.append(text)

        key_text = ", ".join(tree.key_attributes) if tree.key_attributes else "none"
        self.tree_title.setText(
            f"<b>Best dependency tree of {m} quasi-identifier{'s' if m != 1 else ''}</b> "
            f"(continuous ones in {tree.bins} equal-frequency bins) · key attributes: "
            f"<b>{_escape(key_text)}</b><br><span style='color:#555'>edge label = MI distance "
            "in bits, H(A|B) + H(B|A): lower means more dependent</span>"
        )
        self.legend.clear()
        self.legend.setVisible(True)
        self.legend.addItem(self._legend_key, KEY_LEGEND)
        self.legend.addItem(self._legend_other, "other quasi-identifier")
        if constant:
            self.legend.addItem(self._legend_constant, "constant (left out of the tree)")
        if len(e):
            self.legend.addItem(self._legend_edge, "tree edge (label: MI distance, bits)")
        self.tree_plot.getViewBox().disableAutoRange()
        self._fit_tree()

    def _top_px(self, label_h: float) -> float:
        """Room above the tree: the legend (top left), then a label above the top vertices."""
        legend_h = self.legend.boundingRect().height() if self.legend.isVisible() else 0.0
        return max(_TOP_PX, legend_h + 10.0) + label_h

    def _choose_direction(self, width_px: float, height_px: float) -> tuple[str, bool]:
        """Top-down or left-to-right, and short (name only) labels or not: whichever leaves the
        most room per level and per sibling in a view of this size."""
        layout = self._layout
        assert layout is not None
        levels = max(layout.n_levels - 1, 1)
        spread = max(float(np.ptp(layout.x)), 1.0)
        widest = float(self._name_px.max()) + 14.0
        line1 = QFontMetrics(self._label_font).height() + 2.0
        line2 = line1 - 2.0

        def scores(label_h: float) -> tuple[float, float]:
            # Between two levels of a top-down tree there is one row of labels; between two
            # columns of a left-to-right one, half a label on each side (labels of internal
            # vertices alternate above and below by depth).
            down = min(
                (height_px - self._top_px(label_h) - _BOTTOM_PX) / (levels * (label_h + 24.0)),
                (width_px - 2 * _SIDE_PX) / (spread * 0.55 * widest),
            )
            right = min(
                (width_px - 70.0 - widest) / (levels * (0.5 * widest + 30.0)),
                (height_px - self._top_px(label_h) - 24.0) / (spread * (label_h + 8.0)),
            )
            return down, right

        for short, label_h in ((False, line1 + line2), (True, line1)):
            down, right = scores(label_h)
            if layout.n_levels <= 1 or (down >= 1.0 and down >= 0.85 * right):
                return "down", short
            if right >= 1.0:
                return "right", short
        down, right = scores(line1)
        return ("down" if down >= 0.85 * right else "right"), True

    def _fit_tree(self) -> None:
        """Place the tree for the view's size: direction, label size, positions and range, so that
        labels and legend keep their room in pixels whatever the data units."""
        layout = self._layout
        if layout is None or not len(layout.x) or not self.node_labels:
            return
        view = self.tree_plot.getViewBox()
        width_px, height_px = max(view.width(), 80.0), max(view.height(), 80.0)
        direction, short = self._choose_direction(width_px, height_px)
        self.tree_direction = direction
        if short != self._short_labels:
            self._short_labels = short
            for label, (full, brief) in zip(self.node_labels, self._label_html, strict=True):
                label.setHtml(brief if short else full)
        x, depth = layout.x, layout.depth.astype(np.float64)
        x0, x1 = float(x.min()), float(x.max())
        levels = layout.n_levels
        m = len(x)
        top_px = self._top_px(max(label.boundingRect().height() for label in self.node_labels))
        if direction == "down":
            px, py = x, -depth
            sx = max(x1 - x0, 1.0) / max(width_px - 2 * _SIDE_PX, 40.0)
            stagger = np.zeros(m, dtype=bool)
            line_px = max(label.boundingRect().height() for label in self.node_labels)
            for level in np.unique(layout.depth):
                row = np.flatnonzero(layout.depth == level)
                row = row[np.argsort(x[row], kind="stable")]
                if len(row) > 1:
                    widths = np.array([self.node_labels[i].boundingRect().width() for i in row])
                    gaps = np.diff(x[row]) / sx
                    if np.any(gaps < 0.5 * (widths[1:] + widths[:-1]) + 6):
                        stagger[row[1::2]] = True
            for i, label in enumerate(self.node_labels):
                shift = 1.0 if stagger[i] else 0.0
                # Internal vertices: label above (their edges leave downwards); leaves: below.
                above = bool(self._has_children[i])
                label.setAnchor((0.5, 1.2 + shift) if above else (0.5, -0.25 - shift))
                label.setPos(float(px[i]), float(py[i]))
            bottom_px = _BOTTOM_PX + (line_px if stagger.any() else 0.0)
            sy = max(levels - 1, 1) / max(height_px - top_px - bottom_px, 40.0)
            x_range = (x0 - _SIDE_PX * sx, x1 + _SIDE_PX * sx)
            y_range = (-(levels - 1) - bottom_px * sy, top_px * sy)
        else:
            px, py = depth, -x
            left_px, right_px = 70.0, float(self._name_px.max()) + 30.0
            sx = max(levels - 1, 1) / max(width_px - left_px - right_px, 40.0)
            sy = max(x1 - x0, 1.0) / max(height_px - top_px - 24.0, 40.0)
            for i, label in enumerate(self.node_labels):
                if self._has_children[i]:
                    above = int(layout.depth[i]) % 2 == 0
                    label.setAnchor((0.5, 1.2) if above else (0.5, -0.25))
                    label.setPos(float(px[i]), float(py[i]))
                else:  # leaves: the name to the right of the vertex
                    label.setAnchor((0.0, 0.5))
                    label.setPos(float(px[i]) + 12.0 * sx, float(py[i]))
            x_range = (-left_px * sx, (levels - 1) + right_px * sx)
            y_range = (-x1 - 24.0 * sy, -x0 + top_px * sy)
        e = layout.edges
        if len(e):
            ex = np.column_stack([px[e[:, 0]], px[e[:, 1]]]).ravel()
            ey = np.column_stack([py[e[:, 0]], py[e[:, 1]]]).ravel()
        else:
            ex = ey = np.zeros(0)
        self.edges_item.setData(x=ex, y=ey, connect="pairs")
        self.nodes_item.setData(
            x=px, y=py, brush=self._brushes, size=self._sizes, pen=self.node_pen
        )
        # Edge labels toward the child, where a fan of edges is widest; in a fan of more than
        # three, every other sibling has its label further along, so neighbours never collide.
        siblings: dict[int, list[int]] = {}
        for child in np.flatnonzero(self._parent >= 0):
            siblings.setdefault(int(self._parent[child]), []).append(int(child))
        further: set[int] = set()
        for kids in siblings.values():
            if len(kids) > 3:
                further.update(sorted(kids, key=lambda c: (x[c], c))[1::2])
        for text, (a, b) in zip(self.edge_labels, e, strict=True):
            child = int(a) if self._parent[a] == b else int(b)
            parent = int(self._parent[child])
            t = 0.8 if child in further else 0.6
            text.setPos(
                float(px[parent] + t * (px[child] - px[parent])),
                float(py[parent] + t * (py[child] - py[parent])),
            )
        view.setRange(xRange=x_range, yRange=y_range, padding=0.0, update=True)

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
        self._remove(self.matrix_plot, self.cell_labels)
        if m <= MAX_CELL_TEXT:
            decimals = 2
            for r in range(m):
                for c in range(m):
                    v = matrix[r, c]
                    light = self.colormap.map(v / vmax, mode="qcolor").lightnessF() > 0.55
                    text = pg.TextItem(
                        text="·" if r == c else f"{v:.{decimals}f}",
                        color="#111111" if light else "#ffffff",
                        anchor=(0.5, 0.5),
                    )
                    text.setPos(c + 0.5, r + 0.5)
                    text.setZValue(4)
                    self.matrix_plot.addItem(text)
                    self.cell_labels.append(text)
        self.matrix_title.setText(
            "<b>Dependency matrix</b>: entropy distance H(A|B) + H(B|A) in bits (0 = each "
            "determines the other)<br><span style='color:#555'>white "
            "outline = edge of the tree · hover a cell for its value</span>"
        )
        self._fit_cells()

    def _fit_cells(self) -> None:
        """Cell values in the largest font (7-10 pt) that fits the cells; none when none fits."""
        if not self.cell_labels or self._tree is None:
            return
        m = len(self._tree.attributes)
        view = self.matrix_plot.getViewBox()
        font = cell_font(view.width(), view.height(), m, "0.00")
        for text in self.cell_labels:
            text.setVisible(font is not None)
            if font is not None:
                text.setFont(font)

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
            self.matrix_widget.setToolTip(f"MI({a}, {b}) = {float(tree.matrix[r, c]):.4f} bits")
        else:
            self.matrix_widget.setToolTip("")

    def title_text(self) -> str:
        return self.tree_title.text()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
