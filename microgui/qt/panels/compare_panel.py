"""The comparison view: 2–4 runs side by side, linked, and their measures in one table.

Issue 29: first, small multiples a person can read (:class:`CompareBarsPlot`): a bar chart per
measure, the measures recommended for the table's quasi-identifier kinds first (the rest with
"Show all measures"), then one per attribute (its own SSE/SST or share of changed values, from
the run report's ``information_loss_by_attribute``). The linked record plots are the second tab, with the view's whole height (issue 30: under
the table they were ~60 px tall at 1366 × 768); the measures table is under the bars in the
first. The measures table keeps its first column (the measure) frozen while the runs scroll
(:class:`FrozenColumnTableView`, Qt's frozen-column example), recommended measures first and
starred.

The plots (:class:`CompareScatterPlot`) share their axes; records brushed in one become the
controller's selection, which every plot then highlights (STYLE.md §5: linked selection flows
through the controller). The measures table has a row per measure and a column per run, the
best value of each row marked in bold green by the measure's direction.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
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
from microgui.qt.plots.compare_bars import BarRun, CompareBarsPlot
from microgui.qt.plots.compare_scatter import (
    CompareRun,
    CompareScatterPlot,
    axis_choices_of,
    axis_kind,
    default_axes_of,
)

__all__ = ["ComparePanel", "MeasuresModel", "FrozenColumnTableView", "recommended_first"]

_Index = QModelIndex | QPersistentModelIndex
#: Widest the measure column and a run's column are drawn, in average characters (longer cells
#: elided, their full text in the tooltip).
MEASURE_COLUMN_CHARS = 30
RUN_COLUMN_CHARS = 20
#: Largest share of the compare view's height the measures table takes (when it needs it).
TABLE_SHARE = 0.45
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
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.ToolTipRole and section >= 2:
            return self.entries[section - 2].name
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if section == 0:
            return "Measure"
        if section == 1:
            return "Better"
        # two short lines instead of one long one: the run's number, then its method and k
        number, _space, rest = self.entries[section - 2].name.partition(" ")
        return f"{number}\n{rest}" if rest else number

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
        if role == Qt.ItemDataRole.ToolTipRole:
            # the full text of a cell elided in its column, with what the measure is
            if col == 0:
                name = f"{label} ({unit})" if unit else label
                return f"{name}\n{key} · {group} · {direction}"
            if col >= 2:
                entry = self.entries[col - 2]
                return f"{entry.name}: {format_measure(entry.measures.get(key))}"
            return None
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


def recommended_first(
    catalog: dict[str, MeasureInfo], recommended: list[str]
) -> dict[str, MeasureInfo]:
    """The catalog with the recommended keys first, their labels starred (the table's rows
    follow the catalog's order)."""
    out: dict[str, MeasureInfo] = {}
    for key in recommended:
        if key in catalog:
            info = tuple(catalog[key])
            out[key] = (f"★ {info[0]}", *info[1:])  # type: ignore[assignment]
    out.update({k: v for k, v in catalog.items() if k not in out})
    return out


class FrozenColumnTableView(QTableView):
    """A table whose first column stays in place while the others scroll horizontally: a
    second view over the same model and selection, showing only column 0, laid over the first
    one's left edge (Qt's "Frozen Column" example)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.frozen = QTableView(self)
        self.frozen.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.frozen.verticalHeader().hide()
        self.frozen.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.frozen.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.frozen.setStyleSheet("QTableView { border: none; border-right: 1px solid #999; }")
        self.viewport().stackUnder(self.frozen)
        self.frozen.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(self.frozen.verticalScrollBar().setValue)
        self.horizontalHeader().sectionResized.connect(self._on_section_resized)
        self.verticalHeader().sectionResized.connect(self._on_row_resized)

    def setModel(self, model: Any) -> None:  # noqa: N802 (Qt's name)
        super().setModel(model)
        self.frozen.setModel(model)
        self.frozen.setSelectionModel(self.selectionModel())
        model.modelReset.connect(self._sync_columns)
        self._sync_columns()

    def _sync_columns(self) -> None:
        model = self.model()
        if model is None:
            return
        for col in range(model.columnCount()):
            self.frozen.setColumnHidden(col, col != 0)
        self.frozen.setAlternatingRowColors(self.alternatingRowColors())
        self.frozen.setWordWrap(self.wordWrap())
        self.frozen.setTextElideMode(self.textElideMode())
        rows = self.verticalHeader()
        self.frozen.verticalHeader().setDefaultSectionSize(rows.defaultSectionSize())
        for row in range(model.rowCount()):
            self.frozen.setRowHeight(row, self.rowHeight(row))
        self._update_geometry()

    def _on_section_resized(self, index: int, _old: int, new: int) -> None:
        if index == 0:
            self.frozen.setColumnWidth(0, new)
            self._update_geometry()

    def _on_row_resized(self, index: int, _old: int, new: int) -> None:
        self.frozen.setRowHeight(index, new)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._update_geometry()

    def _update_geometry(self) -> None:
        self.frozen.setColumnWidth(0, self.columnWidth(0))
        # the runs' header has two lines, the frozen one's "Measure" one: same height, or the
        # frozen rows would sit a line above the values they name
        self.frozen.horizontalHeader().setFixedHeight(self.horizontalHeader().height())
        self.frozen.setGeometry(
            self.verticalHeader().width() + self.frameWidth(),
            self.frameWidth(),
            self.columnWidth(0),
            self.viewport().height() + self.horizontalHeader().height(),
        )

    def frozen_width(self) -> int:
        return int(self.frozen.width())


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
            self, self._records_scene, "comparison_original_records", shows_originals=True
        )
        self.info = QLabel()
        self.info.setStyleSheet("color: #555;")
        self.info.setWordWrap(True)
        self.all_check = QCheckBox("Show all measures")
        self.all_check.setToolTip(
            "Off: bars of the measures recommended for the table's quasi-identifiers "
            "(continuous: SSE/SST, record linkage; categorical: values changed, Hellinger, "
            "homogeneous share, individual risk). On: every measure the runs have."
        )
        self.all_check.toggled.connect(lambda _on: self.refresh())
        self.bars = CompareBarsPlot()
        bars_scroll = QScrollArea()
        bars_scroll.setWidgetResizable(True)
        bars_scroll.setWidget(self.bars)
        self.bars_scroll = bars_scroll

        top = QHBoxLayout()
        top.addWidget(QLabel("X"))
        top.addWidget(self.x_combo)
        top.addWidget(QLabel("Y"))
        top.addWidget(self.y_combo)
        top.addSpacing(12)
        top.addWidget(self.brush_check)
        top.addWidget(self.clear_button)
        top.addSpacing(12)
        top.addWidget(self.all_check)
        top.addStretch(1)
        top.addWidget(self.export)

        self.model = MeasuresModel()
        self.table = FrozenColumnTableView()
        self.table.verticalHeader().setVisible(False)
        # one line of text a row (the style's default is ~30 px: 2 rows in sight at 1366 × 768)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        # Interactive columns sized by _fit_columns: contents up to a cap, longer cells elided
        # (their full text in the tooltip), the verdict wrapped on its taller row
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setWordWrap(True)
        self.table.setAlternatingRowColors(True)
        self.table.setModel(self.model)

        # The measures table shares its tab with the bars of the same measures; the linked
        # record plots have a tab of their own, the view's whole height: under the table they
        # were ~60 px tall at 1366 × 768 (issue 29/30).
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(bars_scroll)
        splitter.addWidget(self.table)
        splitter.setChildrenCollapsible(False)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        self.splitter = splitter
        #: Whether the user moved the splitter (then the panel no longer shares the room).
        self._split_by_user = False
        splitter.splitterMoved.connect(self._on_splitter_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.info)
        self.views = QTabWidget()
        self.views.addTab(splitter, "Measures per run")
        self.views.addTab(self.plot, "Records (linked plots)")
        layout.addWidget(self.views, 1)

        controller.comparison_changed.connect(lambda _ids: self.refresh())
        controller.selection_changed.connect(self.plot.set_selection)
        #: The linked record plots are drawn when their tab is shown (issue 30: two 30,000-record
        #: scatters held the GUI thread ~0.3-0.6 s at every comparison, behind the bars' tab).
        self._records_stale = False
        self.views.currentChanged.connect(lambda _i: self._draw_records_if_shown())
        self.refresh()

    @property
    def entries(self) -> list[HistoryEntry]:
        return [self._controller.entry(i) for i in self._controller.compared]

    @property
    def records_stale(self) -> bool:
        """The record plots wait for their tab to be shown to draw the runs compared."""
        return self._records_stale

    def _compare_runs(self) -> list[CompareRun]:
        return [CompareRun(e.name, e.result, e.outcome.projection) for e in self.entries]

    def draw_records(self, stagger: bool = True) -> None:
        """Draw the linked record plots of the runs compared now (shown or not); ``stagger``:
        one plot a turn of the event loop, the first at once."""
        self._records_stale = False
        self.plot.set_runs(self._compare_runs(), stagger=stagger)
        self.plot.set_selection(self._controller.selection)

    def _prepare_records(self) -> None:
        if self._records_stale:
            self.plot.prepare(len(self._controller.compared))

    def _draw_records_if_shown(self) -> None:
        if self._records_stale and self.views.currentWidget() is self.plot:
            self.draw_records()

    def _records_scene(self) -> Any:
        if self._records_stale or self.plot.drawing:  # an export: every plot drawn first
            self.draw_records(stagger=False)
        return self.plot.ci

    def refresh(self) -> None:
        entries = self.entries
        if self.views.currentWidget() is self.plot or not entries:
            self.draw_records()
        else:
            self._records_stale = True
            # the record plots' items made in a turn of their own, ahead of the tab's first
            # show (making them and drawing two Adult runs in one turn held ~120 ms)
            QTimer.singleShot(0, self._prepare_records)
        recommended = self._controller.recommended_measures()
        catalog = recommended_first(measure_catalog(), recommended)
        self.model.set_entries(entries, catalog)
        self._fit_columns()
        self._share_room()
        keys = (
            list(self.model.keys)
            if self.all_check.isChecked()
            else [k for k in recommended if k in self.model.keys]
        )
        if not keys:  # no recommended measure measured: the headline ones
            keys = list(self.model.keys)[:8]
        self.bars.set_runs(
            [
                BarRun(
                    e.name,
                    e.measures,
                    (e.report or {}).get("information_loss_by_attribute") or {},
                )
                for e in entries
            ],
            keys,
            catalog,
        )
        runs = self._compare_runs() if entries else []
        choices = axis_choices_of(runs)
        opts = self.plot.options  # as CompareScatterPlot.set_runs defaults them when it draws
        if choices and (opts.x_axis not in choices or opts.y_axis not in choices):
            # the data's own axes, as the groups plot opens on (issue 29)
            opts.x_axis, opts.y_axis = default_axes_of(runs, choices)
        for combo, current in (
            (self.x_combo, self.plot.options.x_axis),
            (self.y_combo, self.plot.options.y_axis),
        ):
            combo.blockSignals(True)
            combo.clear()
            for name in choices:
                kind = axis_kind(runs[0], name)
                combo.addItem(f"{name} ({kind})" if kind in ("ordinal", "nominal") else name, name)
            combo.setCurrentIndex(max(combo.findData(current), 0))
            combo.setEnabled(bool(choices))
            combo.blockSignals(False)
        if entries:
            names = " · ".join(e.name for e in entries)
            self.info.setText(
                f"{names} · bars: ★ recommended measures, then each attribute's change · "
                "best measure bold green in the table"
            )
            self.info.setToolTip(
                f"{len(entries)} runs of the same records with linked axes: zoom or pan one, all "
                "follow. Drag a rectangle (or Shift+drag) to select records in any plot."
            )
        else:
            self.info.setText("Select 2 to 4 runs in the history and press Compare.")

    def _fit_columns(self) -> None:
        """Each column as wide as its cells, up to a cap (:data:`MEASURE_COLUMN_CHARS`,
        :data:`RUN_COLUMN_CHARS` average characters): longer cells are elided with their full
        text in the tooltip, the verdict wraps on its taller row. At 1366 × 768 the measure
        names took half the view and the verdict was cut."""
        table, model = self.table, self.model
        char = self.fontMetrics().averageCharWidth()
        caps = {0: MEASURE_COLUMN_CHARS * char, 1: 10 * char}
        table.setWordWrap(False)  # widths measured on one line
        for col in range(model.columnCount()):
            cap = caps.get(col, RUN_COLUMN_CHARS * char)
            wanted = max(
                table.sizeHintForColumn(col), table.horizontalHeader().sectionSizeHint(col)
            )
            table.setColumnWidth(col, min(wanted, cap))
        table.setWordWrap(True)
        default = table.verticalHeader().defaultSectionSize()
        for row in range(model.rowCount()):
            table.setRowHeight(row, default)
        if model.entries:  # the verdict on as many lines as it needs, up to three
            row = model.row_of(VERDICT_ROW)
            table.resizeRowToContents(row)
            table.setRowHeight(row, min(max(table.rowHeight(row), default), 3 * default))

    def table_height_wanted(self) -> int:
        """Height that shows the whole table (header, every row, frame, scroll bar)."""
        table = self.table
        rows = sum(table.rowHeight(r) for r in range(self.model.rowCount()))
        scroll = table.horizontalScrollBar().sizeHint().height()
        return int(table.horizontalHeader().height() + rows + 2 * table.frameWidth() + scroll)

    def _share_room(self) -> None:
        """Give the table the room it needs, up to :data:`TABLE_SHARE` of the splitter (the
        bars scroll); unless the user has moved the splitter."""
        total = sum(self.splitter.sizes())
        if self._split_by_user or total <= 0:
            return
        table = min(self.table_height_wanted(), int(total * TABLE_SHARE))
        table = max(table, self.table.minimumSizeHint().height())
        self.splitter.setSizes([total - table, table])

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._split_by_user = True

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._share_room()

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._share_room()

    def _on_axes_changed(self, _index: int) -> None:
        x, y = self.x_combo.currentData(), self.y_combo.currentData()
        if x is not None and y is not None:
            self.plot.set_axes(str(x), str(y))

    def _on_brushed(self, mask: Any) -> None:
        self._controller.set_selection(mask if mask.any() else None)
