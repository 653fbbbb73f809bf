"""The comparison view: 2–4 runs side by side, linked, and their measures in one table.

The plots (:class:`CompareScatterPlot`) share their axes; records brushed in one become the
controller's selection, which every plot then highlights (STYLE.md §5: linked selection flows
through the controller). The measures table has a row per measure and a column per run, the
best value of each row marked in bold green by the measure's direction.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from microgui.core.metrics.disclosure import Verdict, release_verdict
from microgui.core.release.report_html import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    best_indices,
    format_measure,
)
from microgui.core.runs.analysis import MeasureInfo, measure_catalog
from microgui.qt.compact import compact_combo
from microgui.qt.controller import AppController
from microgui.qt.history import HistoryEntry
from microgui.qt.plots.chart_export import export_button
from microgui.qt.plots.compare_scatter import CompareRun, CompareScatterPlot

__all__ = ["ComparePanel", "MeasuresModel"]

_Index = QModelIndex | QPersistentModelIndex
_BEST_BRUSH = QBrush(QColor("#1a7f37"))
_BEST_BACKGROUND = QBrush(QColor("#e6f4ea"))
#: The row of each run's verdict (issue 29), first: not a measure, the release's words.
VERDICT_ROW = "verdict"
_VERDICT_BRUSH = {
    "safe": QBrush(QColor("#1a7f37")),
    "no_confidential": QBrush(QColor("#1a7f37")),
    "attribute_disclosure": QBrush(QColor("#b35c00")),
    "not_k_anonymous": QBrush(QColor("#b00020")),
}


def _entry_verdict(entry: HistoryEntry) -> Verdict | None:
    if entry.outcome is None and (entry.point is None or entry.point.report is None):
        return None  # a failed sweep point: no report
    return release_verdict(entry.report)


class MeasuresModel(QAbstractTableModel):
    """Rows = measures any compared run has, columns = Measure, Direction, then the runs."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[HistoryEntry] = []
        self.keys: list[str] = []
        self.catalog: dict[str, MeasureInfo] = {}
        self._best: list[set[int]] = []
        self._verdicts: list[Verdict | None] = []

    def set_entries(self, entries: list[HistoryEntry], catalog: dict[str, MeasureInfo]) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self.catalog = catalog
        self.keys = [k for k in catalog if any(e.measures.get(k) is not None for e in entries)]
        self.keys += sorted(
            {
                k
                for e in entries
                for k, v in e.measures.items()
                if v is not None and k not in catalog
            }
        )
        self._best = [
            best_indices([e.measures.get(k) for e in self.entries], self._info(k)[2])
            for k in self.keys
        ]
        if self.entries:  # the verdict first, never marked best
            self.keys.insert(0, VERDICT_ROW)
            self._best.insert(0, set())
        self._verdicts = [_entry_verdict(e) for e in self.entries]
        self.endResetModel()

    def _info(self, key: str) -> MeasureInfo:
        info = tuple(self.catalog.get(key, (key, "", "", "")))
        return tuple((list(info) + ["", "", "", ""])[:4])  # type: ignore[return-value]

    def best_cells(self) -> set[tuple[int, int]]:
        """(row, column) of the cells marked best."""
        return {(r, 2 + c) for r, cols in enumerate(self._best) for c in cols}

    def row_of(self, key: str) -> int:
        return self.keys.index(key)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.keys)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() or not self.entries else 2 + len(self.entries)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        if section == 0:
            return "Measure"
        if section == 1:
            return "Better"
        return self.entries[section - 2].name

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        key = self.keys[index.row()]
        col = index.column()
        if key == VERDICT_ROW:
            return self._verdict_data(col, role)
        label, unit, direction, group = self._info(key)
        best = col >= 2 and (col - 2) in self._best[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f"{label} ({unit})" if unit else label
            if col == 1:
                return {LOWER_IS_BETTER: "lower ↓", HIGHER_IS_BETTER: "higher ↑"}.get(direction, "")
            return format_measure(self.entries[col - 2].measures.get(key))
        if role == Qt.ItemDataRole.ToolTipRole and col == 0:
            return f"{key} · {group} · {direction}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if best and role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setBold(True)
            return font
        if best and role == Qt.ItemDataRole.ForegroundRole:
            return _BEST_BRUSH
        if best and role == Qt.ItemDataRole.BackgroundRole:
            return _BEST_BACKGROUND
        return None

    def _verdict_data(self, col: int, role: int) -> Any:
        """The verdict row: each run's short verdict, its line as tooltip, in its colour."""
        verdict = self._verdicts[col - 2] if col >= 2 else None
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return "Verdict"
            if col == 1:
                return ""
            return "—" if verdict is None else verdict.short
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 0:
                return (
                    "The release's verdict: k-anonymity and attribute disclosure (a group "
                    "sharing one value of a confidential attribute); ✓ only when neither"
                )
            return None if verdict is None else verdict.text
        if role == Qt.ItemDataRole.ForegroundRole and verdict is not None:
            # not measured is no ✓: the warning colour, not the safe one
            level = verdict.level if verdict.measured else "attribute_disclosure"
            return _VERDICT_BRUSH.get(level)
        if role == Qt.ItemDataRole.FontRole and col == 0:
            font = QFont()
            font.setBold(True)
            return font
        return None


class ComparePanel(QWidget):
    """Axis choosers, brush tools and export over the linked plots and the measures table."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.plot = CompareScatterPlot()
        self.plot.brushed.connect(self._on_brushed)
        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo in (self.x_combo, self.y_combo):
            compact_combo(combo, 7, 220)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.brush_check = QCheckBox("Brush (drag)")
        self.brush_check.setToolTip(
            "On: drag a rectangle to select records (they are shown in every plot and the data "
            "table). Off: drag pans; Shift+drag still brushes. Zoom with the wheel."
        )
        self.brush_check.setChecked(self.plot.options.brush_mode)
        self.brush_check.toggled.connect(self.plot.set_brush_mode)
        self.clear_button = QPushButton("Clear selection")
        self.clear_button.clicked.connect(controller.clear_selection)
        # The plots draw the original records: the export says so (issue 12).
        self.export = export_button(
            self, lambda: self.plot.ci, "comparison_original_records", shows_originals=True
        )
        self.info = QLabel()
        self.info.setStyleSheet("color: #555;")
        self.info.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(QLabel("X"))
        top.addWidget(self.x_combo)
        top.addWidget(QLabel("Y"))
        top.addWidget(self.y_combo)
        top.addSpacing(12)
        top.addWidget(self.brush_check)
        top.addWidget(self.clear_button)
        top.addStretch(1)
        top.addWidget(self.export)

        self.model = MeasuresModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setAlternatingRowColors(True)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([560, 160])
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.info)
        layout.addWidget(splitter, 1)

        controller.comparison_changed.connect(lambda _ids: self.refresh())
        controller.selection_changed.connect(self.plot.set_selection)
        self.refresh()

    @property
    def entries(self) -> list[HistoryEntry]:
        return [self._controller.entry(i) for i in self._controller.compared]

    def refresh(self) -> None:
        entries = self.entries
        self.plot.set_runs([CompareRun(e.name, e.result, e.outcome.projection) for e in entries])
        self.plot.set_selection(self._controller.selection)
        self.model.set_entries(entries, measure_catalog())
        choices = self.plot.axis_choices()
        for combo, current in (
            (self.x_combo, self.plot.options.x_axis),
            (self.y_combo, self.plot.options.y_axis),
        ):
            combo.blockSignals(True)
            combo.clear()
            for name in choices:
                combo.addItem(name, name)
            combo.setCurrentIndex(max(combo.findData(current), 0))
            combo.setEnabled(bool(choices))
            combo.blockSignals(False)
        if entries:
            self.info.setText(
                "Colour = group in each run · × = group aggregate · brushed records ringed black, "
                "the rest of their groups orange · best measure bold green"
            )
            self.info.setToolTip(
                f"{len(entries)} runs of the same records with linked axes: zoom or pan one, all "
                "follow. Drag a rectangle (or Shift+drag) to select records in any plot."
            )
        else:
            self.info.setText("Select 2 to 4 runs in the history and press Compare.")

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is not None and y is not None:
            self.plot.set_axes(str(x), str(y))

    def _on_brushed(self, mask: Any) -> None:
        self._controller.set_selection(mask if mask.any() else None)
