"""The "Utility" view (issue 29): what protection did to the analyses of categorical and mixed
data, for the run shown against its original table.

Four tabs: (a) each attribute's distribution, original and released side by side (grouped
bars; a histogram for numbers) with the Hellinger distance and total variation; (b) the
cross-tabulation of two attributes before/after with Cramér's V of each; (c) the association
matrix (Pearson r, Cramér's V, correlation ratio η) before, after and their difference as
heatmaps; (d) a model the user writes, coefficients before/after with their 95 % intervals and
the interval overlap of Karr et al. (2006).

Everything is computed in core (:mod:`microgui.core.metrics.categorical_utility`,
:mod:`microgui.core.metrics.models`) in the controller's analysis pool, through this panel's
:class:`~microgui.qt.workers.TaskSlot` objects; the panel only draws. Categories are shown on
screen (they are the user's own data); no report is written from here.
"""

from __future__ import annotations

import html
import itertools
import math
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import InvalidRoles
from microgui.core.metrics.categorical_utility import (
    AssociationMatrix,
    Crosstab,
    Distribution,
    UtilitySummary,
    crosstab,
    utility_summary,
)
from microgui.core.metrics.models import ModelComparison, fit_model
from microgui.core.table.dataset import Dataset
from microgui.qt.plots.cell_text import CellTextItem, cell_font
from microgui.qt.plots.titles import fitted_axes
from microgui.qt.workers import TaskSlot

__all__ = [
    "UtilityPanel",
    "MAX_BARS",
    "ORIGINAL_COLOUR",
    "RELEASED_COLOUR",
    "ROW_PX",
    "categories_shown",
]

ORIGINAL_COLOUR = "#4c72b0"
RELEASED_COLOUR = "#dd8452"
#: The most categories drawn as bars (the largest by original count; the title says so).
MAX_BARS = 30
#: Pixels per category row of the distribution plot: with fewer, the category labels on its
#: left axis overlap (issue 30: Adult's 41 countries drew 30 labels on top of each other in a
#: 1366 × 768 window).
ROW_PX = 17
#: A category label longer than this is elided (its full name in the axis's tooltip).
LABEL_CHARS = 22
#: Cell values are written on the association heatmaps up to this many columns, when a font of
#: 7-10 pt fits a cell (else the numbers would overlap: the note lists the largest changes).
MAX_CELL_TEXT = 10
#: Categories are drawn on a log scale when the largest is this many times the median.
LOG_SCALE_RATIO = 20.0


def _summary_job(frame: pd.DataFrame, protected: pd.DataFrame, dataset: Dataset) -> Any:
    return lambda _progress: utility_summary(frame, protected, dataset.roles)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _note(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def _table() -> QTableWidget:
    table = QTableWidget()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(20)
    return table


def _item(text: str, numeric: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    align = Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft
    item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
    return item


def categories_shown(
    original: np.ndarray, released: np.ndarray, rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """The categories drawn as bars in ``rows`` rows, and those summed in one "other" row.

    All of them when they fit; else ``rows - 1`` (the last row is "other"): the half with the
    largest changes (released - original counts, those that changed), then the largest by
    count, so that a statistician reads which categories changed and the main ones. Both in
    the categories' own order (sorted indices)."""
    n = len(original)
    rows = max(int(rows), 2)
    if n <= rows:
        return np.arange(n), np.zeros(0, dtype=np.int64)
    keep = rows - 1
    change = np.abs(np.asarray(released, dtype=np.float64) - original)
    by_change = [int(i) for i in np.argsort(-change, kind="stable") if change[i] > 0]
    chosen = by_change[: keep // 2]
    taken = set(chosen)
    size = np.maximum(original, released)
    for i in np.argsort(-size, kind="stable"):
        if len(chosen) >= keep:
            break
        if int(i) not in taken:
            chosen.append(int(i))
            taken.add(int(i))
    shown = np.sort(np.asarray(chosen, dtype=np.int64))
    rest = np.setdiff1d(np.arange(n), shown)
    return shown, rest


def _elide(text: str, chars: int = LABEL_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _plot(widget: pg.PlotWidget) -> pg.PlotItem:
    widget.setBackground("w")
    plot = widget.getPlotItem()
    plot.setMenuEnabled(False)
    plot.hideButtons()
    # room above the view for the half of the top tick label that stands above it (an empty
    # model plot's "1.0" was cut by the widget's top edge)
    plot.layout.setContentsMargins(1, 8, 1, 1)
    for name in ("left", "bottom"):
        plot.getAxis(name).setTextPen(pg.mkPen("#222222"))
        plot.getAxis(name).setPen(pg.mkPen("#888888"))
        # coefficients of 0.84 must read 0.84, not "840" with an unseen milli prefix
        plot.getAxis(name).enableAutoSIPrefix(False)
    return plot


class AssociationHeatmaps(pg.GraphicsLayoutWidget):
    """Before, after (one scale, −1 … 1) and their difference (its own symmetric scale)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.colormap = pg.colormap.get("CET-D1")
        self.plots: list[pg.PlotItem] = []
        self.images: list[pg.ImageItem] = []
        #: Each heatmap's cell values, one item per heatmap (a TextItem per cell: 243 items,
        #: ~0.2 s of the GUI thread on Adult's 9 columns).
        self.cell_texts: list[CellTextItem] = []
        self._size = 0  # columns of the matrix drawn
        for col, title in enumerate(("Original", "Released", "Released − original")):
            plot = self.addPlot(row=0, col=col, axisItems=fitted_axes())
            plot.setTitle(f"<span style='color:#222'>{title}</span>", size="10pt")
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setMouseEnabled(x=False, y=False)
            plot.invertY(True)
            for name in ("left", "bottom"):
                plot.getAxis(name).setPen(pg.mkPen(None))
                plot.getAxis(name).setTextPen(pg.mkPen("#222222"))
            image = pg.ImageItem(axisOrder="row-major")
            plot.addItem(image)
            cells = CellTextItem()
            cells.setZValue(1)
            plot.addItem(cells)
            self.cell_texts.append(cells)
            plot.getViewBox().sigResized.connect(self._fit_cells)
            self.plots.append(plot)
            self.images.append(image)
        for plot in self.plots[1:]:
            plot.setXLink(self.plots[0])
            plot.setYLink(self.plots[0])
            plot.getAxis("left").setStyle(showValues=False)
            plot.getAxis("left").setWidth(6)
        self.scale_bar = pg.ColorBarItem(
            values=(-1.0, 1.0), colorMap=self.colormap, interactive=False, width=12
        )
        self.scale_bar.setImageItem(self.images[:2], insert_in=self.plots[1])
        self.scale_bar.getAxis("right").setTextPen(pg.mkPen("#222222"))
        self.difference_bar = pg.ColorBarItem(
            values=(-0.1, 0.1), colorMap=self.colormap, interactive=False, width=12
        )
        self.difference_bar.setImageItem(self.images[2], insert_in=self.plots[2])
        self.difference_bar.getAxis("right").setTextPen(pg.mkPen("#222222"))

    def set_matrix(self, matrix: AssociationMatrix) -> None:
        p = len(matrix.columns)
        self._size = p
        diff = matrix.difference
        bound = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 0.0
        bound = max(0.02, math.ceil(bound * 50) / 50)  # a round scale, at least ±0.02
        self.difference_bar.setLevels((-bound, bound))
        ticks_left = [(i + 0.5, f"{name} ({i + 1})") for i, name in enumerate(matrix.columns)]
        step = 1 if p <= 9 else (2 if p <= 20 else 5)  # numbers that fit under narrow cells
        ticks_bottom = [(i + 0.5, str(i + 1)) for i in range(p) if i % step == 0 or i == p - 1]
        for k, (plot, image, values, cells) in enumerate(
            zip(
                self.plots,
                self.images,
                (matrix.original, matrix.released, diff),
                self.cell_texts,
                strict=True,
            )
        ):
            shown = np.where(np.isfinite(values), values, 0.0)
            image.setImage(shown, autoLevels=False)
            image.setLevels((-bound, bound) if k == 2 else (-1.0, 1.0))
            image.setRect(0, 0, p, p)
            plot.getAxis("bottom").setTicks([ticks_bottom])
            if k == 0:
                plot.getAxis("left").setTicks([ticks_left])
            texts: list[tuple[float, float, str, str]] = []
            if p <= MAX_CELL_TEXT:
                for i, j in itertools.product(range(p), range(p)):
                    v = values[i, j]
                    text = "–" if not np.isfinite(v) else (f"{v:+.2f}" if k == 2 else f"{v:.2f}")
                    if k < 2 and i == j:
                        text = ""
                    texts.append((j + 0.5, i + 0.5, text, "#222222"))
            cells.set_cells(texts)
            plot.setRange(xRange=(0, p), yRange=(0, p), padding=0)
        self._fit_cells()

    def _fit_cells(self) -> None:
        """Cell values in the largest font (7-10 pt) that fits a cell, none when none fits (at
        1366 × 768 the cells of Adult's 9 columns are too small): decided again at each
        resize of the heatmaps."""
        p = self._size
        if not p:
            return
        view = self.plots[0].getViewBox()
        font = cell_font(view.width(), view.height(), p, "+0.00")
        for cells in self.cell_texts:
            cells.set_font(font)


class UtilityPanel(QWidget):
    """Distributions, cross-tabulations, associations and a model of the run shown."""

    summary_shown = Signal(object)  # UtilitySummary
    crosstab_shown = Signal(object)  # Crosstab
    model_shown = Signal(object)  # ModelComparison
    model_refused = Signal(str)

    def __init__(self, controller: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        ids = itertools.count(1)
        pool = controller.analysis_pool
        self._summary_slot = TaskSlot(pool, self, ids)
        self._crosstab_slot = TaskSlot(pool, self, ids)
        self._model_slot = TaskSlot(pool, self, ids)
        self._summary_slot.finished.connect(self._on_summary)
        self._summary_slot.failed.connect(self._on_summary_failed)
        self._crosstab_slot.finished.connect(self._on_crosstab)
        self._crosstab_slot.failed.connect(self._on_crosstab_failed)
        self._model_slot.finished.connect(self._on_model)
        self._model_slot.failed.connect(self._on_model_failed)
        self.summary: UtilitySummary | None = None
        self.crosstab: Crosstab | None = None
        self.model: ModelComparison | None = None
        self._dirty = True
        self._run_key: tuple[Any, ...] | None = None

        self.note = _note("Run a method: this view compares the run shown with its table.")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)

        # (a) distributions
        self.distribution_table = _table()
        self.distribution_table.setColumnCount(3)
        self.distribution_table.setHorizontalHeaderLabels(["Attribute", "Hellinger", "TV"])
        header = self.distribution_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.distribution_table.setMinimumWidth(230)
        self.distribution_table.setMaximumWidth(300)
        self.distribution_table.itemSelectionChanged.connect(self._draw_selected_distribution)
        self.distribution_plot = pg.PlotWidget(axisItems=fitted_axes())
        self._dist_plot = _plot(self.distribution_plot)
        #: The distribution drawn, and the category rows its plot had room for: drawn again
        #: when a resize gives room for more or fewer rows.
        self._dist_drawn: tuple[Distribution, int] | None = None
        self.distribution_plot.installEventFilter(self)
        self.distribution_caption = _note()
        dist_right = QWidget()
        right = QVBoxLayout(dist_right)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.distribution_plot, 1)
        right.addWidget(self.distribution_caption)
        dist = QSplitter(Qt.Orientation.Horizontal)
        dist.addWidget(self.distribution_table)
        dist.addWidget(dist_right)
        dist.setStretchFactor(1, 1)
        self.tabs.addTab(dist, "Distributions")

        # (b) cross-tabulation
        cross = QWidget()
        cross_layout = QVBoxLayout(cross)
        row = QHBoxLayout()
        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        for combo in (self.a_combo, self.b_combo):
            combo.setMinimumContentsLength(12)
            combo.currentTextChanged.connect(self._crosstab_picked)
        row.addWidget(QLabel("Rows:"))
        row.addWidget(self.a_combo)
        row.addWidget(QLabel("Columns:"))
        row.addWidget(self.b_combo)
        row.addStretch(1)
        cross_layout.addLayout(row)
        self.crosstab_note = _note()
        cross_layout.addWidget(self.crosstab_note)
        self.crosstab_table = _table()
        cross_layout.addWidget(self.crosstab_table, 1)
        self.tabs.addTab(cross, "Cross-tabulation")

        # (c) associations
        assoc = QWidget()
        assoc_layout = QVBoxLayout(assoc)
        self.heatmaps = AssociationHeatmaps()
        assoc_layout.addWidget(self.heatmaps, 1)
        self.association_note = _note()
        assoc_layout.addWidget(self.association_note)
        self.tabs.addTab(assoc, "Associations")

        # (d) model
        model = QWidget()
        model_layout = QVBoxLayout(model)
        row = QHBoxLayout()
        row.addWidget(QLabel("Model:"))
        self.formula_edit = QLineEdit()
        self.formula_edit.setPlaceholderText("salary-class ~ age + education + sex")
        self.formula_edit.returnPressed.connect(self.fit)
        row.addWidget(self.formula_edit, 1)
        self.fit_button = QPushButton("Fit")
        self.fit_button.clicked.connect(self.fit)
        row.addWidget(self.fit_button)
        model_layout.addLayout(row)
        self.model_note = _note(
            "Write Y ~ X1 + X2: OLS for a numeric Y, a logistic regression for a binary one."
        )
        model_layout.addWidget(self.model_note)
        self.coefficient_plot = pg.PlotWidget(axisItems=fitted_axes())
        self._coef_plot = _plot(self.coefficient_plot)
        self._coef_plot.addLegend(offset=(-10, 10), labelTextColor="#222222")
        self.coefficient_table = _table()
        self.coefficient_table.setColumnCount(4)
        self.coefficient_table.setHorizontalHeaderLabels(
            ["Term", "Overlap", "Original (95 % CI)", "Released (95 % CI)"]
        )
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.coefficient_plot)
        split.addWidget(self.coefficient_table)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([10_000, 9_000])  # about half each, whatever the width
        self.coefficient_table.setMinimumWidth(240)
        model_layout.addWidget(split, 1)
        self.tabs.addTab(model, "Model")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.note)
        layout.addWidget(self.tabs, 1)

        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.run_finished.connect(self._on_run_shown)

    # requests -----------------------------------------------------------------------------
    def _shown(self) -> tuple[Dataset, pd.DataFrame]:
        ctl = self._controller
        if ctl.result is None or ctl.result_dataset is None:
            raise InvalidRoles("run a method first: this view compares a run with its table")
        return ctl.result_dataset, ctl.result.protected

    @property
    def is_computing(self) -> bool:
        return any(s.busy for s in (self._summary_slot, self._crosstab_slot, self._model_slot))

    def recompute(self) -> int | None:
        """Compute the distributions and associations of the run shown (in the background)."""
        self._dirty = False
        try:
            dataset, protected = self._shown()
        except InvalidRoles as exc:
            self.note.setText(html.escape(str(exc)))
            return None
        self.note.setText("Computing distributions and associations…")
        return self._summary_slot.start(_summary_job(dataset.frame, protected, dataset))

    def show_crosstab(self, a: str, b: str) -> int | None:
        """Compute the cross-tabulation of ``a`` by ``b`` before/after (in the background)."""
        try:
            dataset, protected = self._shown()
        except InvalidRoles as exc:
            self.crosstab_note.setText(html.escape(str(exc)))
            return None
        if not a or not b or a == b:
            self.crosstab_note.setText("Pick two different attributes.")
            self.crosstab_table.clear()
            self.crosstab_table.setRowCount(0)
            self.crosstab_table.setColumnCount(0)
            return None
        frame, roles = dataset.frame, dataset.roles
        return self._crosstab_slot.start(lambda _progress: crosstab(frame, protected, roles, a, b))

    def fit(self) -> int | None:
        """Fit the model written (in the background)."""
        text = self.formula_edit.text().strip()
        if not text:
            self._refuse("write a model, e.g. salary-class ~ age + education + sex")
            return None
        try:
            dataset, protected = self._shown()
        except InvalidRoles as exc:
            self._refuse(str(exc))
            return None
        self.model_note.setText(f"Fitting {html.escape(text)} on both tables…")
        job = partial(fit_model, dataset.frame, protected, dataset.roles, text)
        return self._model_slot.start(lambda _progress: job())

    def _refuse(self, message: str) -> None:
        text = message[:1].upper() + message[1:]
        self.model_note.setText(f"<span style='color:#a40000'>{html.escape(text)}</span>")
        self.model_refused.emit(text)

    # controller ----------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty and self._controller.result is not None:
            self.recompute()

    def _on_dataset_loaded(self, _dataset: Any) -> None:
        for slot in (self._summary_slot, self._crosstab_slot, self._model_slot):
            slot.supersede()
        self.summary = self.crosstab = self.model = None
        self._dirty = True
        self.note.setText("Run a method: this view compares the run shown with its table.")

    def _on_run_shown(self, _run_id: int, _result: Any) -> None:
        self._dirty = True
        if self.isVisible():
            self.recompute()
        else:
            self.note.setText("The run shown is compared when this tab is shown.")

    # results ---------------------------------------------------------------------------------
    def _on_summary(self, _task_id: int, value: Any, _context: Any) -> None:
        assert isinstance(value, UtilitySummary)
        self.summary = value
        self._show_summary(value)
        self.summary_shown.emit(value)
        a, b = self.a_combo.currentText(), self.b_combo.currentText()
        if a and b and a != b:
            self.show_crosstab(a, b)
        if self.formula_edit.text().strip():
            self.fit()

    def _on_summary_failed(self, _task_id: int, message: str, _details: str, _c: Any) -> None:
        self.note.setText(f"<span style='color:#a40000'>{html.escape(message)}</span>")

    def _on_crosstab(self, _task_id: int, value: Any, _context: Any) -> None:
        assert isinstance(value, Crosstab)
        self.crosstab = value
        self._show_crosstab(value)
        self.crosstab_shown.emit(value)

    def _on_crosstab_failed(self, _task_id: int, message: str, _details: str, _c: Any) -> None:
        self.crosstab_note.setText(f"<span style='color:#a40000'>{html.escape(message)}</span>")

    def _on_model(self, _task_id: int, value: Any, _context: Any) -> None:
        assert isinstance(value, ModelComparison)
        self.model = value
        self._show_model(value)
        self.model_shown.emit(value)

    def _on_model_failed(self, _task_id: int, message: str, _details: str, _c: Any) -> None:
        self.model = None
        self._coef_plot.clear()
        self.coefficient_table.setRowCount(0)
        self._refuse(message)

    # drawing -----------------------------------------------------------------------------------
    def _show_summary(self, summary: UtilitySummary) -> None:
        dists = sorted(summary.distributions.values(), key=lambda d: -_key(d.hellinger))
        m = summary.associations
        worst = dists[0] if dists else None
        parts = [f"{len(dists)} attributes compared"]
        if worst is not None:
            parts.append(
                f"largest Hellinger distance <b>{_fmt(worst.hellinger)}</b> "
                f"({html.escape(worst.column)})"
            )
        if m is not None and m.max_abs_difference is not None:
            parts.append(f"largest change of an association <b>{_fmt(m.max_abs_difference)}</b>")
        self.note.setText("; ".join(parts) + ".")
        table = self.distribution_table
        table.blockSignals(True)
        table.setRowCount(len(dists))
        for i, d in enumerate(dists):
            table.setItem(i, 0, _item(d.column))
            table.setItem(i, 1, _item(_fmt(d.hellinger), True))
            table.setItem(i, 2, _item(_fmt(d.total_variation), True))
        table.blockSignals(False)
        if dists:
            table.selectRow(0)
            self._draw_selected_distribution()
        names = list(summary.distributions)
        for combo in (self.a_combo, self.b_combo):
            keep = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            if keep in names:
                combo.setCurrentText(keep)
            combo.blockSignals(False)
        if len(names) >= 2 and self.a_combo.currentText() == self.b_combo.currentText():
            self.a_combo.blockSignals(True)
            self.b_combo.blockSignals(True)
            self.a_combo.setCurrentIndex(0)
            self.b_combo.setCurrentIndex(len(names) - 1)  # e.g. a key by the confidential one
            self.a_combo.blockSignals(False)
            self.b_combo.blockSignals(False)
        if m is not None and len(m.columns) >= 2:
            self.heatmaps.set_matrix(m)
            self.association_note.setText(
                f"{len(m.columns)} columns, {m.n_records:,} records"
                + (f" ({m.dropped_rows:,} with a missing value left out)" if m.dropped_rows else "")
                + ": Pearson r for two numbers, Cramér's V (bias-uncorrected) for two categorical "
                "columns, the correlation ratio η for a number and a category. Largest change "
                f"<b>{_fmt(m.max_abs_difference)}</b>, mean {_fmt(m.mean_abs_difference)}; "
                "columns are numbered below as on the left." + _largest_changes(m)
            )
        else:
            self.association_note.setText("Fewer than two attributes: no association to show.")

    def _draw_selected_distribution(self) -> None:
        if self.summary is None:
            return
        rows = self.distribution_table.selectionModel().selectedRows()
        if not rows:
            return
        item = self.distribution_table.item(rows[0].row(), 0)
        d = self.summary.distributions.get(item.text()) if item is not None else None
        if d is not None:
            self.draw_distribution(d)

    def category_rows(self) -> int:
        """Category rows the distribution plot has room for (:data:`ROW_PX` each, at most
        :data:`MAX_BARS`)."""
        view = self._dist_plot.getViewBox()
        height = view.height() if view.height() > 50 else self.distribution_plot.height() - 90
        # one row's height is kept for the margins around the bars
        return int(min(MAX_BARS, max(3, height // ROW_PX - 1)))

    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802 (Qt's name)
        if (
            watched is self.distribution_plot
            and event.type() == QEvent.Type.Resize
            and self._dist_drawn is not None
        ):
            # after the layout: the view's new height decides the rows
            QTimer.singleShot(0, self, self._redraw_distribution_if_rows_changed)
        return super().eventFilter(watched, event)

    def _redraw_distribution_if_rows_changed(self) -> None:
        drawn = self._dist_drawn
        if drawn is not None and not drawn[0].numeric and self.category_rows() != drawn[1]:
            self.draw_distribution(drawn[0])

    def draw_distribution(self, d: Distribution) -> None:
        """Original and released frequencies side by side: vertical bars by bin for a number,
        horizontal bars by category (the labels on the left) otherwise, as many categories as
        the plot's height has rows for (:func:`categories_shown`: the most changed and the
        largest; the others summed in an "other" row, listed in the axis's tooltip)."""
        plot = self._dist_plot
        plot.clear()
        n = len(d.labels)
        note = ""
        rows = self.category_rows()
        self._dist_drawn = (d, rows)
        o, r = d.original, d.released
        labels = list(d.labels)
        tip = ""
        if not d.numeric:
            order, rest = categories_shown(d.original, d.released, rows)
            o, r = d.original[order], d.released[order]
            labels = [d.labels[i] for i in order]
            if len(rest):
                o = np.append(o, d.original[rest].sum())
                r = np.append(r, d.released[rest].sum())
                labels.append(f"other ({len(rest)})")
                note = (
                    f"; {len(order)} of {n} categories drawn (the most changed and the largest), "
                    f"the other {len(rest)} summed in “other ({len(rest)})” (listed in the "
                    "axis's tooltip)"
                )
                moved = sorted(rest, key=lambda i: -abs(d.released[i] - d.original[i]))
                tip = "\n".join(
                    [f"“other ({len(rest)})”: original → released records"]
                    + [f"{d.labels[i]}: {d.original[i]:,.0f} → {d.released[i]:,.0f}" for i in moved]
                )
            long = [t for t in labels if len(t) > LABEL_CHARS]
            if long:
                tip = "\n".join(([tip, ""] if tip else []) + ["Elided names:", *long])
        plot.getAxis("left").setToolTip(tip)
        pos = np.arange(len(labels), dtype=np.float64)
        width = 0.4
        brush_o, brush_r = pg.mkBrush(ORIGINAL_COLOUR), pg.mkBrush(RELEASED_COLOUR)
        if d.numeric and d.edges is not None:
            # bars on the column's own scale (the axis ticks are round numbers); the missing
            # and "other" positions after the bins are in the caption
            edges = np.asarray(d.edges, dtype=np.float64)
            nb = len(edges) - 1
            centres, widths = (edges[:-1] + edges[1:]) / 2.0, np.diff(edges)
            widths = np.where(widths > 0, widths, 1.0)
            bars_o = pg.BarGraphItem(
                x=centres - widths * 0.2, height=d.original[:nb], width=widths * 0.4,
                brush=brush_o, pen=None,
            )  # fmt: skip
            bars_r = pg.BarGraphItem(
                x=centres + widths * 0.2, height=d.released[:nb], width=widths * 0.4,
                brush=brush_r, pen=None,
            )  # fmt: skip
            plot.getAxis("bottom").setTicks(None)
            plot.getAxis("left").setTicks(None)
            plot.setLabel("bottom", d.column, color="#222222")
            plot.setLabel("left", "records", color="#222222")
            plot.invertY(False)
        else:
            positive = o[o > 0]
            log = bool(len(positive)) and o.max() > LOG_SCALE_RATIO * float(np.median(positive))
            lo, lr = (np.log10(o + 1.0), np.log10(r + 1.0)) if log else (o, r)
            bars_o = pg.BarGraphItem(
                x0=0, y=pos - 0.2, height=width, width=lo, brush=brush_o, pen=None
            )
            bars_r = pg.BarGraphItem(
                x0=0, y=pos + 0.2, height=width, width=lr, brush=brush_r, pen=None
            )
            plot.getAxis("left").setTicks([[(float(i), _elide(t)) for i, t in enumerate(labels)]])
            if log:
                top = int(math.ceil(math.log10(max(float(o.max()), float(r.max()), 1.0) + 1)))
                plot.getAxis("bottom").setTicks(
                    [[(math.log10(10**e + 1.0), f"{10**e:,}") for e in range(top + 1)]]
                )
                note += "; records on a log scale (one category dwarfs the others)"
            else:
                plot.getAxis("bottom").setTicks(None)
            plot.setLabel("bottom", "records" + (" (log scale)" if log else ""), color="#222222")
            plot.setLabel("left", d.column, color="#222222")
            plot.invertY(True)
        plot.addItem(bars_o)
        plot.addItem(bars_r)
        plot.setTitle(
            f"<span style='color:#222'>{html.escape(d.column)}<br>Hellinger "
            f"{_fmt(d.hellinger)} · TV {_fmt(d.total_variation)}</span>",
            size="10pt",
        )
        plot.autoRange()
        extra = []
        if d.other_released:
            extra.append(f"{d.other_released:,} released value(s) the original lacks")
        if d.missing_original or d.missing_released:
            extra.append(
                f"missing: {d.missing_original:,} original, {d.missing_released:,} released"
            )
        self.distribution_caption.setText(
            f"<span style='color:{ORIGINAL_COLOUR}'>■</span> original "
            f"<span style='color:{RELEASED_COLOUR}'>■</span> released · TV = total "
            "variation · "
            + ("Bins with the same edges before and after; a released range is spread over the "
             "bins it covers" if d.numeric else "Records per category")
            + note + (" · " + "; ".join(extra) if extra else "") + "."
        )  # fmt: skip

    def _crosstab_picked(self, _text: str) -> None:
        if self.summary is not None:
            self.show_crosstab(self.a_combo.currentText(), self.b_combo.currentText())

    def _show_crosstab(self, x: Crosstab) -> None:
        self.crosstab_note.setText(
            f"<b>{html.escape(x.a)}</b> × <b>{html.escape(x.b)}</b>, {x.n_records:,} records: "
            f"Cramér's V (bias-uncorrected) <b>{_fmt(x.cramers_v_original)}</b> → "
            f"<b>{_fmt(x.cramers_v_released)}</b> (change {x.cramers_v_change:+.3f}); total "
            f"variation of the cells {_fmt(x.total_variation)}. Each cell: original → released "
            "records; red where the count fell, blue where it rose."
        )
        table = self.crosstab_table
        table.clear()
        table.setRowCount(len(x.row_labels))
        table.setColumnCount(len(x.column_labels))
        table.setHorizontalHeaderLabels([t[:20] for t in x.column_labels])
        table.verticalHeader().setVisible(True)
        table.setVerticalHeaderLabels([t[:28] for t in x.row_labels])
        total = max(1.0, float(x.original.sum()))
        for i, j in itertools.product(range(len(x.row_labels)), range(len(x.column_labels))):
            o, r = int(x.original[i, j]), int(x.released[i, j])
            item = _item(f"{o:,} → {r:,}", True)
            change = (r - o) / total
            if abs(change) > 0.0005:
                strength = min(1.0, abs(change) / 0.01)
                base = (220, 70, 60) if change < 0 else (60, 110, 220)
                colour = QColor(*base, int(40 + 140 * strength))
                item.setBackground(QBrush(colour))
            table.setItem(i, j, item)
        table.resizeColumnsToContents()

    def _show_model(self, m: ModelComparison) -> None:
        what = (
            "OLS"
            if m.kind == "ols"
            else f"logistic regression, 1 = {html.escape(m.outcome_one_label)}"
        )
        text = (
            f"<b>{html.escape(m.formula.text)}</b> ({what}; {m.n_records:,} records): mean "
            f"confidence-interval overlap <b>{_fmt(m.mean_overlap)}</b> (Karr et al. 2006: 1 the "
            "same interval, 0 touching, below 0 apart)."
        )
        if m.separated:
            text += (
                f" Left out: {html.escape(', '.join(m.separated))} ({m.separated_rows:,} "
                "records), whose records all share one outcome."
            )
        self.model_note.setText(text)
        plot = self._coef_plot
        plot.clear()
        keep = [i for i, t in enumerate(m.terms) if t != "(intercept)"]
        pos = np.arange(len(keep), dtype=np.float64)
        for offset, coef, ci, colour, name in (
            (-0.15, m.original, m.ci_original, ORIGINAL_COLOUR, "original"),
            (0.15, m.released, m.ci_released, RELEASED_COLOUR, "released"),
        ):
            y = pos + offset
            x = coef[keep]
            bars = pg.ErrorBarItem(
                x=x, y=y, left=x - ci[keep, 0], right=ci[keep, 1] - x, beam=0.08,
                pen=pg.mkPen(colour, width=2),
            )  # fmt: skip
            plot.addItem(bars)
            plot.plot(
                x, y, pen=None, symbol="o", symbolSize=7, symbolBrush=colour, symbolPen=None,
                name=name,
            )  # fmt: skip
        plot.addLine(x=0, pen=pg.mkPen("#999999", style=Qt.PenStyle.DashLine))
        plot.getAxis("left").setTicks(
            [[(float(k), m.term_labels[i][:30]) for k, i in enumerate(keep)]]
        )
        plot.invertY(True)
        plot.setLabel("bottom", "coefficient, 95 % interval (no intercept)", color="#222222")
        plot.autoRange()
        table = self.coefficient_table
        table.setRowCount(len(m.terms))
        overlap = m.overlap
        for i, label in enumerate(m.term_labels):
            table.setItem(i, 0, _item(label[:30]))
            for c, (b, ci) in enumerate(((m.original, m.ci_original), (m.released, m.ci_released))):
                table.setItem(i, c + 2, _item(f"{b[i]:.4g} [{ci[i, 0]:.3g}, {ci[i, 1]:.3g}]", True))
            item = _item(_fmt(overlap[i], 2), True)
            if np.isfinite(overlap[i]) and overlap[i] < 0.5:
                item.setBackground(QBrush(QColor("#f4c7a3" if overlap[i] >= 0 else "#f4a3a3")))
            table.setItem(i, 1, item)
        table.resizeColumnsToContents()
        table.setColumnWidth(0, min(table.columnWidth(0), 150))


def _largest_changes(m: AssociationMatrix, count: int = 3) -> str:
    """' Largest: a ~ b 0.137 → 0.196; …' (the pairs whose association changed most)."""
    p = len(m.columns)
    pairs = [
        (abs(m.difference[i, j]), i, j)
        for i in range(p)
        for j in range(i + 1, p)
        if np.isfinite(m.difference[i, j])
    ]
    pairs.sort(reverse=True)
    shown = [
        f"{html.escape(m.columns[i])} ~ {html.escape(m.columns[j])} ({m.measures[i][j]}) "
        f"{m.original[i, j]:.3f} → {m.released[i, j]:.3f}"
        for _d, i, j in pairs[:count]
    ]
    return "<br>Largest changes: " + "; ".join(shown) + "." if shown else ""


def _key(value: float) -> float:
    return value if math.isfinite(value) else -1.0
