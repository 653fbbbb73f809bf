"""The generalization classes of an ``mstk`` run: one row per equivalence class, sortable.

The table is the run's ``classes`` artifact (class, size, the generalized value of each
quasi-identifier) in the lazy :class:`DataFrameModel` (sorting permutes an index). Classes are
numbered from 1 as the runs are (the artifact's ``class``, the records' group label, counts from
0; only its column is copied, one row per class).
Selecting classes selects their records through the controller (``set_selection``), which the
main window turns into a selection in the data table.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from microgui.core.methods import available_methods
from microgui.core.methods.artifacts import CLASSES
from microgui.core.runs import RunResult
from microgui.qt.controller import AppController
from microgui.qt.models.dataframe_model import DataFrameModel, fit_columns

__all__ = ["ClassesPanel", "PLACEHOLDER", "numbered_from_one"]

PLACEHOLDER = "Run mstk to see its generalization classes."


def numbered_from_one(classes: pd.DataFrame) -> pd.DataFrame:
    """The classes table as shown: its ``class`` column counted from 1, like the runs (the
    artifact, and the records' group labels, count from 0)."""
    if "class" not in classes.columns:
        return classes
    shown = classes.copy(deep=False)
    shown["class"] = classes["class"].to_numpy() + 1
    return shown


class ClassesPanel(QWidget):
    """The equivalence classes of the last ``mstk`` run; selecting one selects its records."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._updating = False
        self.model = DataFrameModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        vheader = self.view.verticalHeader()
        vheader.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vheader.setDefaultSectionSize(22)
        vheader.setVisible(False)
        hheader = self.view.horizontalHeader()
        hheader.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hheader.setDefaultSectionSize(120)
        hheader.setStretchLastSection(True)
        hheader.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)
        self.view.selectionModel().selectionChanged.connect(self._on_rows_selected)

        self.info = QLabel(PLACEHOLDER)
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.info)
        layout.addWidget(self.view, 1)

        controller.dataset_loaded.connect(lambda _d: self.clear())
        controller.run_finished.connect(self._on_run_finished)
        controller.selection_changed.connect(self._on_selection_changed)

    # content ------------------------------------------------------------------------------
    @property
    def classes(self) -> pd.DataFrame | None:
        """The classes table shown (the run's artifact, not a copy), or None."""
        frame = self.model.frame
        return frame if len(frame.columns) else None

    def clear(self, message: str = PLACEHOLDER) -> None:
        self._updating = True
        self.model.set_frame(None)
        self._updating = False
        self.info.setText(message)
        self.info.setToolTip("")

    def _on_run_finished(self, _run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        classes = CLASSES.of(result.artifacts)
        if classes is None:
            makers = " or ".join(m.name for m in available_methods() if CLASSES in m.artifacts)
            self.clear(
                f"The last run ({html.escape(result.spec.method)}) generalizes nothing: "
                f"run {makers} to see its generalization classes."
            )
            return
        self._updating = True
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.model.set_frame(numbered_from_one(classes))
        self._updating = False
        # The first 1,000 rows' widest texts, measured without a data() call per cell (issue 30).
        fit_columns(self.view, self.model)
        sizes = classes["size"].to_numpy() if "size" in classes.columns else np.zeros(0)
        smallest = int(sizes.min()) if len(sizes) else 0
        self.info.setText(
            f"<b>{len(classes):,}</b> equivalence classes of {int(sizes.sum()):,} records "
            f"(mstk, k = {result.spec.k}; sizes {smallest}–{int(sizes.max()) if len(sizes) else 0}). "
            "Every record of a class is published with the class's generalized values. "
            "<span style='color:#555'>Select classes to select their records in the data table; "
            "click a header to sort.</span>"
        )
        hierarchies = result.report.get("hierarchies")
        if isinstance(hierarchies, dict) and hierarchies:
            lines = "".join(
                f"<li><b>{html.escape(str(c))}</b>: {html.escape(str(h))}</li>"
                for c, h in hierarchies.items()
            )
            self.info.setToolTip(f"Generalization hierarchies:<ul>{lines}</ul>")

    # selection ----------------------------------------------------------------------------
    def selected_classes(self) -> list[int]:
        """Numbers of the selected classes, as shown (from 1; in view order)."""
        frame = self.model.frame
        if "class" not in frame.columns:
            return []
        column = frame.columns.get_loc("class")
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [int(frame.iat[self.model.source_row(r), column]) for r in rows]

    def select_class(self, class_id: int) -> bool:
        """Select the row of class number ``class_id`` as shown (from 1), as a click does;
        False when there is no such class."""
        frame = self.model.frame
        if "class" not in frame.columns:
            return False
        column = frame.columns.get_loc("class")
        for row in range(self.model.rowCount()):
            if int(frame.iat[self.model.source_row(row), column]) == class_id:
                self.view.selectRow(row)
                self.view.scrollTo(self.model.index(row, 0))
                return True
        return False

    def _on_rows_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        if self._updating:
            return
        result = self._controller.result
        ids = self.selected_classes()
        if result is None or not ids:
            self._controller.clear_selection()
            return
        # the records' group labels count from 0, the classes shown from 1
        labels = np.asarray(ids, dtype=np.int64) - 1
        self._controller.set_selection(np.isin(result.labels, labels))

    def _on_selection_changed(self, mask: Any) -> None:
        if mask is None and self.view.selectionModel().hasSelection():
            self._updating = True
            self.view.clearSelection()
            self._updating = False
