"""The "Correlations & regression" panel: what protection did to the relations between columns.

Statisticians ask it first (issue 5): for the run shown, the Pearson correlation of every pair
of its continuous quasi-identifiers and numeric confidential columns, original and protected
side by side (a sortable table and two heatmaps on one colour scale), and a linear regression
the user picks (dependent variable, explanatory variables, Fit), its coefficients and R² on the
original and on the protected table.

Everything is computed in core (:mod:`microgui.core.metrics.utility`) in the controller's
analysis pool; this panel only formats. A new run shown recomputes the correlations and refits
the model picked; while the panel is hidden nothing is computed (it is brought up to date when
shown).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.runs import RunResult
from microgui.core.runs.analysis import CorrelationOutcome, RegressionOutcome
from microgui.qt.controller import AppController
from microgui.qt.plots.cell_text import CellTextItem, cell_font
from microgui.qt.plots.titles import fitted_axes

__all__ = [
    "AssociationPanel",
    "AssociationOptions",
    "ChangeTableModel",
    "ChangeColumn",
    "CORRELATION_BANDS",
    "RELATIVE_BANDS",
    "change_band",
]

_Index = QModelIndex | QPersistentModelIndex

#: Upper bounds of the colour bands of |protected − original| for correlations (last: above).
CORRELATION_BANDS: tuple[float, ...] = (0.02, 0.05, 0.10)
#: The same for the relative change |Δb| / |b| of a regression coefficient.
RELATIVE_BANDS: tuple[float, ...] = (0.01, 0.05, 0.20)
#: Background of each band: none, pale yellow, orange, red (the last band: above the last bound).
BAND_COLOURS: tuple[str | None, ...] = (None, "#fff2bf", "#ffd08a", "#f4a3a3")
#: Cell values are written on the heatmaps up to this many columns.
MAX_CELL_TEXT = 9


def change_band(value: float, bands: Sequence[float]) -> int:
    """The colour band of a change (0: smaller than the first bound; NaN: band 0)."""
    if not math.isfinite(value):
        return 0
    size = abs(value)
    return next((i for i, bound in enumerate(bands) if size < bound), len(bands))


@dataclass
class AssociationOptions:
    """The model picked (kept apart from the widgets: saved and tested alone)."""

    y: str | None = None
    xs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeColumn:
    """One column of a :class:`ChangeTableModel`: header, frame column, format, tooltip."""

    header: str
    key: str
    #: "text", "r" (3 decimals), "signed_r", "coef" (6 significant digits), "signed_coef",
    #: "percent" (a fraction shown in %, signed)
    style: str
    tooltip: str = ""


def _format(value: Any, style: str) -> str:
    if style == "text":
        return str(value)
    v = float(value)
    if not math.isfinite(v):
        return "—"
    if style == "r":
        return f"{v:.3f}"
    if style == "signed_r":
        return f"{v:+.3f}"
    if style == "coef":
        return f"{v:.6g}"
    if style == "signed_coef":
        return f"{v:+.6g}"
    if style == "percent":
        return f"{100.0 * v:+.2f} %"
    raise ValueError(f"unknown style {style!r}")


class ChangeTableModel(QAbstractTableModel):
    """A small read-only table of original vs protected figures, sortable, with the change
    coloured by size (bands of ``colour_key``'s absolute value)."""

    def __init__(
        self,
        columns: Sequence[ChangeColumn],
        colour_key: str,
        bands: Sequence[float],
        coloured: Sequence[str],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self.colour_key = colour_key
        self.bands = tuple(bands)
        self._coloured = set(coloured)
        self._frame = pd.DataFrame(columns=[c.key for c in self.columns])
        self._order = np.zeros(0, dtype=np.int64)
        self._brushes = [QBrush(QColor(c)) if c else None for c in BAND_COLOURS]

    def set_frame(self, frame: pd.DataFrame | None) -> None:
        """Show another table (columns named by the ``key`` of each :class:`ChangeColumn`)."""
        self.beginResetModel()
        if frame is None:
            frame = pd.DataFrame(columns=[c.key for c in self.columns])
        self._frame = frame.reset_index(drop=True)
        self._order = np.arange(len(self._frame), dtype=np.int64)
        self.endResetModel()

    @property
    def frame(self) -> pd.DataFrame:
        return self._frame

    def row_values(self, row: int) -> dict[str, Any]:
        """The values shown at view row ``row`` (after sorting)."""
        return dict(self._frame.iloc[int(self._order[row])])

    def band(self, row: int) -> int:
        """The colour band of view row ``row``."""
        return change_band(float(self.row_values(row)[self.colour_key]), self.bands)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt default)
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt default)
        return 0 if parent.isValid() else len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.header
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tooltip or None
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        column = self.columns[index.column()]
        value = self._frame.iloc[int(self._order[index.row()])][column.key]
        if role == Qt.ItemDataRole.DisplayRole:
            return _format(value, column.style)
        if role == Qt.ItemDataRole.UserRole:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column.style == "text":
                return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and column.key in self._coloured:
            return self._brushes[self.band(index.row())]
        if role == Qt.ItemDataRole.ForegroundRole and column.key in self._coloured:
            return QBrush(QColor("#111111"))
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by a column; a change column sorts by its size (largest first when
        descending), missing values last."""
        if not 0 <= column < len(self.columns) or self._frame.empty:
            return
        spec = self.columns[column]
        self.layoutAboutToBeChanged.emit()
        values = self._frame[spec.key]
        if spec.style == "text":
            keys = values.astype(str).to_numpy()
            order_ = np.argsort(keys, kind="stable")
            if order == Qt.SortOrder.DescendingOrder:
                order_ = order_[::-1]
        else:
            numbers = values.to_numpy(dtype=np.float64)
            if spec.key in self._coloured:
                numbers = np.abs(numbers)
            missing = ~np.isfinite(numbers)
            keys = np.where(missing, 0.0, numbers)
            if order == Qt.SortOrder.DescendingOrder:
                keys = -keys
            order_ = np.lexsort((keys, missing))
        self._order = order_.astype(np.int64)
        self.layoutChanged.emit()


def _legend(bands: Sequence[float], percent: bool) -> str:
    """The colour key of a table as HTML."""

    def text(v: float) -> str:
        return f"{100 * v:g} %" if percent else f"{v:g}"

    labels = [f"&lt; {text(bands[0])}"]
    labels += [f"{text(a)}–{text(b)}" for a, b in zip(bands, bands[1:], strict=False)]
    labels.append(f"≥ {text(bands[-1])}")
    cells = []
    for colour, label in zip(BAND_COLOURS, labels, strict=True):
        style = f"background:{colour};" if colour else "border:1px solid #bbb;"
        cells.append(f"<span style='{style}'>&nbsp;&nbsp;&nbsp;</span>&nbsp;{label}")
    return "&nbsp;&nbsp; ".join(cells)


CORRELATION_COLUMNS = (
    ChangeColumn("Pair", "pair", "text", "The two columns correlated"),
    ChangeColumn("Original r", "original", "r", "Pearson correlation in the original table"),
    ChangeColumn("Protected r", "protected", "r", "Pearson correlation in the protected table"),
    ChangeColumn(
        "Difference",
        "difference",
        "signed_r",
        "Protected − original (sorting orders by size)",
    ),
)

COEFFICIENT_COLUMNS = (
    ChangeColumn("Term", "term", "text", "Intercept and explanatory variables"),
    ChangeColumn(
        "Original",
        "original",
        "coef",
        "Coefficient fitted on the original table (units of Y per unit of X)",
    ),
    ChangeColumn("Protected", "protected", "coef", "Coefficient fitted on the protected table"),
    ChangeColumn("Difference", "difference", "signed_coef", "Protected − original"),
    ChangeColumn(
        "Relative difference",
        "relative_difference",
        "percent",
        "(protected − original) / |original|; — when the original coefficient is 0",
    ),
)


class CorrelationHeatmaps(pg.GraphicsLayoutWidget):
    """Original and protected correlation matrices side by side, one colour scale (−1 … 1).

    Rows are named on the left ("age (1)"); columns are numbered below in the same order: long
    names under narrow cells would overlap (pyqtgraph drops labels that do not fit).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.names: list[str] = []  # before the plots: their first resize reads it
        self.colormap = pg.colormap.get("CET-D1")  # blue − white − red: r < 0, 0, r > 0
        self.plots: list[pg.PlotItem] = []
        self.images: list[pg.ImageItem] = []
        #: Each matrix's cell values, one item per matrix (not a TextItem per cell: ~1 ms each).
        self.cell_texts: list[CellTextItem] = []
        for col, title in enumerate(("Original", "Protected")):
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
        self.plots[1].setXLink(self.plots[0])
        self.plots[1].setYLink(self.plots[0])
        # Rows are the same columns on both sides: names once, on the left.
        self.plots[1].getAxis("left").setStyle(showValues=False)
        self.plots[1].getAxis("left").setWidth(6)
        self.colorbar = pg.ColorBarItem(
            values=(-1.0, 1.0),
            colorMap=self.colormap,
            interactive=False,
            width=14,
        )
        self.colorbar.setImageItem(self.images, insert_in=self.plots[1])
        self.colorbar.getAxis("right").setTextPen(pg.mkPen("#222222"))
        self.colorbar.getAxis("right").setLabel("Pearson r", color="#222222")

    def clear_matrices(self) -> None:
        for plot, cells in zip(self.plots, self.cell_texts, strict=True):
            cells.clear()
            plot.getAxis("left").setTicks([[]])
            plot.getAxis("bottom").setTicks([[]])
        for image in self.images:
            image.clear()
        self.names = []

    def set_matrices(
        self, names: Sequence[str], original: np.ndarray, protected: np.ndarray
    ) -> None:
        self.clear_matrices()
        self.names = [str(n) for n in names]
        m = len(self.names)
        rows = [[(i + 0.5, f"{n} ({i + 1})") for i, n in enumerate(self.names)]]
        numbers = [[(i + 0.5, str(i + 1)) for i in range(m)]]
        for plot, image, matrix, cells in zip(
            self.plots, self.images, (original, protected), self.cell_texts, strict=True
        ):
            image.setImage(
                np.asarray(matrix, dtype=np.float64), levels=(-1.0, 1.0), autoLevels=False
            )
            image.setRect(QRectF(0, 0, m, m))
            plot.getAxis("left").setTicks(rows)
            plot.getAxis("bottom").setTicks(numbers)
            texts: list[tuple[float, float, str, str]] = []
            if m <= MAX_CELL_TEXT:
                for r in range(m):
                    for c in range(m):
                        if r == c:
                            continue
                        v = float(matrix[r, c])
                        shade = self.colormap.map((v + 1.0) / 2.0, mode="qcolor")
                        colour = "#ffffff" if shade.lightnessF() < 0.45 else "#111111"
                        texts.append((c + 0.5, r + 0.5, f"{v:.2f}", colour))
            cells.set_cells(texts)
        self.plots[0].setXRange(0, m, padding=0.02)
        self.plots[0].setYRange(0, m, padding=0.02)
        self._fit_cells()

    def _fit_cells(self) -> None:
        """Cell values in the largest font (7-10 pt) that fits a cell; none when none fits."""
        m = len(self.names)
        if not m or not any(c.texts for c in self.cell_texts):
            return
        view = self.plots[0].getViewBox()
        font = cell_font(view.width(), view.height(), m, "-0.00")
        for cells in self.cell_texts:
            cells.set_font(font)


def _table_view(model: ChangeTableModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    header = view.horizontalHeader()
    # Every column as wide as its content (full pair names, no "…"); the last one fills.
    for col in range(model.columnCount()):
        header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    # No sort indicator until the user clicks: the core's order (pairs as listed) first.
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    return view


def _note(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setStyleSheet("color: #444;")
    return label


class AssociationPanel(QWidget):
    """Correlation change (table and heatmaps) and a regression picked by the user.

    ``correlations_shown`` carries each :class:`CorrelationOutcome` drawn,
    ``regression_shown`` each :class:`RegressionOutcome`, ``regression_refused`` the message
    when a model cannot be fitted (a generalized release, collinear variables …).
    """

    correlations_shown = Signal(object)
    regression_shown = Signal(object)
    regression_refused = Signal(str)

    def __init__(
        self,
        controller: AppController,
        parent: QWidget | None = None,
        options: AssociationOptions | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self.options = options or AssociationOptions()
        self._pending_correlations: int | None = None
        self._pending_regression: int | None = None
        self._dirty = False
        self.correlations: CorrelationOutcome | None = None
        self.regression: RegressionOutcome | None = None

        # correlations
        self.correlation_note = _note()
        self.correlation_model = ChangeTableModel(
            CORRELATION_COLUMNS, "difference", CORRELATION_BANDS, ["difference"], self
        )
        self.correlation_view = _table_view(self.correlation_model)
        self.correlation_legend = _note("Difference: " + _legend(CORRELATION_BANDS, percent=False))
        self.heatmaps = CorrelationHeatmaps()
        corr_pairs = QWidget()
        corr_pairs_layout = QVBoxLayout(corr_pairs)
        corr_pairs_layout.setContentsMargins(0, 0, 0, 0)
        corr_pairs_layout.addWidget(self.correlation_view, 1)
        corr_pairs_layout.addWidget(self.correlation_legend)
        # Two views of the same numbers, one at a time: side by side in the central area of a
        # 1400-px window, the table cut its difference column and the matrices were 40 px wide.
        self.correlation_tabs = QTabWidget()
        self.correlation_tabs.setDocumentMode(True)
        self.correlation_tabs.addTab(corr_pairs, "Pairs table")
        self.correlation_tabs.addTab(self.heatmaps, "Heatmaps (original | protected)")
        corr_box = QGroupBox("Correlations, original vs protected (Pearson r)")
        corr_layout = QVBoxLayout(corr_box)
        corr_layout.addWidget(self.correlation_note)
        corr_layout.addWidget(self.correlation_tabs, 1)

        # regression
        self.y_combo = QComboBox()
        self.y_combo.setToolTip("The dependent variable Y of the linear model")
        self.y_combo.currentTextChanged.connect(self._on_y_changed)
        self.x_list = QListWidget()
        self.x_list.setToolTip("Tick the explanatory variables X (an intercept is always fitted)")
        self.x_list.setMinimumWidth(150)
        self.x_list.setSpacing(1)
        self.y_combo.setMaximumWidth(200)
        self.x_list.setMaximumWidth(200)
        self.fit_button = QPushButton("Fit")
        self.fit_button.setToolTip(
            "Ordinary least squares of Y on the ticked X, with intercept, on the original and "
            "on the protected table (records with a missing value left out of both)"
        )
        self.fit_button.clicked.connect(self.fit)
        # Labels above the fields: the picker stays narrow, the coefficients get the width.
        picker = QWidget()
        picker.setMaximumWidth(210)
        form = QVBoxLayout(picker)
        form.setContentsMargins(0, 0, 0, 0)
        form.addWidget(QLabel("Dependent variable (Y)"))
        form.addWidget(self.y_combo)
        form.addWidget(QLabel("Explanatory variables (X)"))
        form.addWidget(self.x_list, 1)
        form.addWidget(self.fit_button)
        self.regression_note = _note("Pick Y and the X, then Fit.")
        self.r_squared_label = QLabel("")
        self.r_squared_label.setObjectName("r_squared")
        self.r_squared_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.coefficient_model = ChangeTableModel(
            COEFFICIENT_COLUMNS,
            "relative_difference",
            RELATIVE_BANDS,
            ["difference", "relative_difference"],
            self,
        )
        self.coefficient_view = _table_view(self.coefficient_model)
        self.coefficient_legend = _note(
            "Relative difference: " + _legend(RELATIVE_BANDS, percent=True)
        )
        results = QWidget()
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.regression_note)
        results_layout.addWidget(self.r_squared_label)
        results_layout.addWidget(self.coefficient_view, 1)
        results_layout.addWidget(self.coefficient_legend)
        reg_box = QGroupBox("Linear regression, original vs protected (OLS with intercept)")
        reg_layout = QHBoxLayout(reg_box)
        reg_layout.addWidget(picker)
        reg_layout.addWidget(results, 1)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(corr_box)
        self.splitter.addWidget(reg_box)
        self.splitter.setSizes([520, 360])
        # issue 30: on a short window the two boxes scroll rather than set the window's
        # minimum height (their 400 px pushed a 1366 x 768 window past the screen)
        scroll = QScrollArea()
        scroll.setWidget(self.splitter)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(scroll)

        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.run_finished.connect(self._on_run_shown)
        controller.correlations_computed.connect(self._on_correlations)
        controller.correlations_failed.connect(self._on_correlations_failed)
        controller.regression_fitted.connect(self._on_regression)
        controller.regression_failed.connect(self._on_regression_failed)
        self._reset(
            "Run a method to compare the correlations and a regression of the original "
            "and protected tables."
        )

    # state --------------------------------------------------------------------------------
    @property
    def is_computing(self) -> bool:
        return self._pending_correlations is not None or self._pending_regression is not None

    def checked_xs(self) -> list[str]:
        """The explanatory variables ticked, in list order."""
        out = []
        for row in range(self.x_list.count()):
            item = self.x_list.item(row)
            if item.checkState() == Qt.CheckState.Checked and not item.isHidden():
                out.append(item.text())
        return out

    def set_model(self, y: str, xs: Sequence[str]) -> None:
        """Pick Y and tick exactly ``xs`` (as the user would; no fit)."""
        index = self.y_combo.findText(y)
        if index < 0:
            raise MicroguiError(f"{y!r} is not a numeric column of this run")
        self.y_combo.setCurrentIndex(index)
        wanted = {str(x) for x in xs}
        for row in range(self.x_list.count()):
            item = self.x_list.item(row)
            item.setCheckState(
                Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked
            )

    def _reset(self, message: str) -> None:
        self.correlations = None
        self.regression = None
        self.correlation_model.set_frame(None)
        self.coefficient_model.set_frame(None)
        self.heatmaps.clear_matrices()
        self.correlation_note.setText(message)
        self.regression_note.setText("Pick Y and the X, then Fit.")
        self.r_squared_label.setText("")
        self.y_combo.clear()
        self.x_list.clear()
        self.fit_button.setEnabled(False)

    # requests -----------------------------------------------------------------------------
    def recompute(self) -> int | None:
        """Ask for the correlations of the run shown (the model picked is refitted after)."""
        self._dirty = False
        try:
            self._pending_correlations = self._controller.compute_correlations()
        except MicroguiError as exc:
            self._pending_correlations = None
            self.correlation_note.setText(html.escape(str(exc)))
            return None
        self.correlation_note.setText("Computing the correlations…")
        return self._pending_correlations

    def fit(self) -> int | None:
        """Fit the model picked (Y and the ticked X) on both tables, in the background."""
        y = self.y_combo.currentText()
        xs = self.checked_xs()
        self.options.y, self.options.xs = (y or None), tuple(xs)
        if not y:
            self._refuse("Pick the dependent variable Y first.")
            return None
        if not xs:
            self._refuse("Tick at least one explanatory variable X.")
            return None
        try:
            self._pending_regression = self._controller.fit_regression(y, xs)
        except MicroguiError as exc:
            self._pending_regression = None
            self._refuse(str(exc))
            return None
        self.regression_note.setText(
            f"Fitting {html.escape(y)} ~ {html.escape(' + '.join(xs))} on both tables…"
        )
        return self._pending_regression

    def _refuse(self, message: str) -> None:
        self.regression = None
        self.coefficient_model.set_frame(None)
        self.r_squared_label.setText("")
        text = message[:1].upper() + message[1:]
        self.regression_note.setText(f"<span style='color:#a40000'>{html.escape(text)}</span>")
        self.regression_refused.emit(text)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty and self._controller.result is not None:
            self.recompute()

    # controller signals -------------------------------------------------------------------
    def _on_dataset_loaded(self, _dataset: Any) -> None:
        self._pending_correlations = None
        self._pending_regression = None
        self._dirty = False
        self.options = AssociationOptions()
        self._reset(
            "Run a method to compare the correlations and a regression of the original and "
            "protected tables."
        )

    def _on_run_shown(self, _run_id: int, _result: Any) -> None:
        assert isinstance(_result, RunResult)
        self._pending_regression = None
        self._dirty = True
        if self.isVisible():
            self.recompute()
        else:
            self.correlation_note.setText(
                "The correlations of the run shown are computed when this tab is shown."
            )

    def _on_correlations(self, request_id: int, outcome: Any) -> None:
        if request_id != self._pending_correlations:
            return
        self._pending_correlations = None
        assert isinstance(outcome, CorrelationOutcome)
        self.correlations = outcome
        self._show_correlations(outcome)
        self._fill_picker(outcome)
        self.correlations_shown.emit(outcome)
        # The model picked before is refitted on the new run (when its columns are still there).
        y, xs = self.options.y, self.options.xs
        if y and xs and y in outcome.numeric_columns and set(xs) <= set(outcome.numeric_columns):
            self.fit()
        else:
            self.regression = None
            self.coefficient_model.set_frame(None)
            self.r_squared_label.setText("")
            self.regression_note.setText(
                "Pick Y and the X, then Fit."
                if outcome.numeric_columns
                else "No numeric column in this run: a linear regression needs numbers."
            )

    def _on_correlations_failed(self, request_id: int, message: str, _details: str) -> None:
        if request_id != self._pending_correlations:
            return
        self._pending_correlations = None
        self.correlation_model.set_frame(None)
        self.heatmaps.clear_matrices()
        self.correlation_note.setText(
            f"<span style='color:#a40000'>No correlations: {html.escape(message)}</span>"
        )

    def _on_regression(self, request_id: int, outcome: Any) -> None:
        if request_id != self._pending_regression:
            return
        self._pending_regression = None
        assert isinstance(outcome, RegressionOutcome)
        self.regression = outcome
        frame = outcome.table.reset_index()
        self.coefficient_model.set_frame(frame)
        self.coefficient_view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        r2o, r2p = outcome.r_squared
        self.r_squared_label.setText(
            f"R²: original <b>{_format(r2o, 'r')}</b>, protected <b>{_format(r2p, 'r')}</b> "
            f"(difference {_format(r2p - r2o, 'signed_r')})"
        )
        dropped = (
            f"; {outcome.dropped_rows:,} record(s) with a missing value left out of both fits"
            if outcome.dropped_rows
            else ""
        )
        self.regression_note.setText(
            f"<b>{html.escape(outcome.y)}</b> ~ {html.escape(' + '.join(outcome.xs))} on "
            f"{outcome.n_records:,} records{dropped}. Coefficients in units of "
            f"{html.escape(outcome.y)} per unit of each X."
        )
        self.regression_shown.emit(outcome)

    def _on_regression_failed(self, request_id: int, message: str, _details: str) -> None:
        if request_id != self._pending_regression:
            return
        self._pending_regression = None
        self._refuse(message)

    # drawing ------------------------------------------------------------------------------
    def _show_correlations(self, outcome: CorrelationOutcome) -> None:
        table = outcome.table
        if len(outcome.columns) >= 2 and len(table):
            frame = pd.DataFrame(
                {
                    "pair": [
                        f"{a} ~ {b}" for a, b in zip(table.column_a, table.column_b, strict=True)
                    ],
                    "original": table["original"].to_numpy(dtype=np.float64),
                    "protected": table["protected"].to_numpy(dtype=np.float64),
                    "difference": table["difference"].to_numpy(dtype=np.float64),
                }
            )
            self.correlation_model.set_frame(frame)
            self.correlation_view.horizontalHeader().setSortIndicator(
                -1, Qt.SortOrder.AscendingOrder
            )
            self.heatmaps.set_matrices(outcome.columns, outcome.original, outcome.protected)
            worst = float(np.nanmax(np.abs(frame["difference"].to_numpy())))
            text = (
                f"{len(frame)} pairs of {len(outcome.columns)} columns, "
                f"{outcome.n_records:,} records; largest change <b>{worst:.3f}</b> "
                "(click a header to sort; the difference sorts by size)."
            )
        else:
            self.correlation_model.set_frame(None)
            self.heatmaps.clear_matrices()
            if len(outcome.columns) == 1:
                text = (
                    f"Only one column to correlate (<b>{html.escape(outcome.columns[0])}</b>): a "
                    "correlation needs two continuous quasi-identifiers or numeric confidential "
                    "columns. For categorical and mixed data, the <b>Utility</b> tab compares "
                    "distributions, cross-tabulations, associations (Cramér's V, η) and a "
                    "logistic model before and after."
                )
            else:
                text = (
                    "No correlations to compare: this run has no continuous quasi-identifier "
                    "or numeric confidential column that is numbers in both tables. For "
                    "categorical data, see the <b>Utility</b> tab (Cramér's V, distributions, "
                    "a logistic model)."
                )
        notes = []
        if outcome.dropped_rows:
            notes.append(f"{outcome.dropped_rows:,} record(s) with a missing value are left out")
        notes += [f"{html.escape(c)}: {html.escape(why)}" for c, why in outcome.skipped.items()]
        if notes:
            text += "<br><span style='color:#7a4a00'>Not compared: " + "; ".join(notes) + "</span>"
        self.correlation_note.setText(text)

    def _fill_picker(self, outcome: CorrelationOutcome) -> None:
        columns = list(outcome.numeric_columns)
        keep_y = self.options.y if self.options.y in columns else None
        if keep_y is None:
            # A first guess: a confidential column explained by the quasi-identifiers.
            confidential = [c for c in outcome.columns if c in columns]
            keep_y = confidential[-1] if confidential else (columns[0] if columns else None)
        keep_xs = set(self.options.xs) if self.options.xs else set(outcome.columns) - {keep_y}
        self.y_combo.blockSignals(True)
        self.y_combo.clear()
        self.y_combo.addItems(columns)
        if keep_y is not None:
            self.y_combo.setCurrentIndex(columns.index(keep_y))
        self.y_combo.blockSignals(False)
        self.x_list.clear()
        for name in columns:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Checked if name in keep_xs else Qt.CheckState.Unchecked
            )
            self.x_list.addItem(item)
        self._on_y_changed(self.y_combo.currentText())
        self.fit_button.setEnabled(bool(columns))

    def _on_y_changed(self, y: str) -> None:
        # Y cannot explain itself: its box is hidden from the X list while it is Y.
        for row in range(self.x_list.count()):
            item = self.x_list.item(row)
            item.setHidden(item.text() == y)
