"""The data panel: the open table, or the protected table of the last run, in a lazy view."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from microgui.core.table.roles import RoleMap
from microgui.qt.controller import AppController
from microgui.qt.models.dataframe_model import DataFrameModel

__all__ = ["DataPanel", "view_rows"]

ORIGINAL = "Original table"
PROTECTED = "Protected table (last run)"


def view_rows(model: DataFrameModel, rows: np.ndarray) -> np.ndarray:
    """The view rows (increasing) at which a sorted :class:`DataFrameModel` shows frame ``rows``."""
    rows = np.asarray(rows, dtype=np.int64)
    # The model keeps its sort as a permutation (view row -> frame row) and has no inverse.
    order = getattr(model, "_order", None)
    if order is None:
        return np.sort(rows)
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order), dtype=np.int64)
    return np.sort(inverse[rows])


def _row_ranges(rows: np.ndarray) -> list[tuple[int, int]]:
    """Runs of consecutive values of increasing ``rows`` as (first, last) pairs."""
    if len(rows) == 0:
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(rows) - 1]])
    return [(int(rows[a]), int(rows[b])) for a, b in zip(starts, ends, strict=True)]


class DataPanel(QWidget):
    """Table view over :class:`DataFrameModel`; rows have a fixed height so a million scroll."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.model = DataFrameModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        vheader = self.view.verticalHeader()
        # Fixed section sizes: Qt never measures the rows, which keeps 10^6 rows cheap.
        vheader.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vheader.setDefaultSectionSize(22)
        hheader = self.view.horizontalHeader()
        hheader.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hheader.setDefaultSectionSize(110)
        hheader.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)

        self.source_combo = QComboBox()
        self.source_combo.addItems([ORIGINAL, PROTECTED])
        self.source_combo.model().item(1).setEnabled(False)  # type: ignore[attr-defined]
        self.source_combo.currentIndexChanged.connect(lambda _i: self.refresh())
        self.info = QLabel("No table open.")

        top = QHBoxLayout()
        top.addWidget(QLabel("Show"))
        top.addWidget(self.source_combo)
        top.addStretch(1)
        top.addWidget(self.info)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)

        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.roles_changed.connect(self._on_roles_changed)
        controller.run_finished.connect(self._on_run_finished)

    @property
    def showing_protected(self) -> bool:
        return self.source_combo.currentText() == PROTECTED

    def show_protected(self, protected: bool) -> None:
        self.source_combo.setCurrentText(PROTECTED if protected else ORIGINAL)

    def refresh(self) -> None:
        ctl = self._controller
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        if self.showing_protected and ctl.result is not None:
            frame = ctl.result.protected
            roles: RoleMap | None = ctl.result.roles
            what = "protected"
        elif ctl.dataset is not None:
            frame = ctl.dataset.frame
            roles = ctl.dataset.roles
            what = ctl.dataset.name
        else:
            self.model.set_frame(None)
            self.info.setText("No table open.")
            return
        self.model.set_frame(frame, roles)
        self.info.setText(f"{what}: {len(frame):,} rows × {len(frame.columns)} columns")

    def _on_dataset_loaded(self, _dataset: Any) -> None:
        self.source_combo.model().item(1).setEnabled(False)  # type: ignore[attr-defined]
        self.source_combo.setCurrentText(ORIGINAL)
        self.refresh()

    def _on_roles_changed(self, roles: Any) -> None:
        if not self.showing_protected:
            self.model.set_roles(roles)

    def _on_run_finished(self, _run_id: int, _result: Any) -> None:
        self.source_combo.model().item(1).setEnabled(True)  # type: ignore[attr-defined]
        if self.showing_protected:
            self.refresh()

    def select_records(self, mask: np.ndarray | None) -> bool:
        """Select the rows of the records of ``mask`` (a bool mask over the table's rows; None:
        none), scrolled to the first. False when nothing is selected (None, or a mask of
        another table than the one shown)."""
        view, model = self.view, self.model
        selection_model = view.selectionModel()
        if mask is None:
            selection_model.clearSelection()
            return False
        if model.rowCount() != len(mask):
            return False
        rows = view_rows(model, np.flatnonzero(mask))
        selection = QItemSelection()
        last_column = model.columnCount() - 1
        for first, last in _row_ranges(rows):
            selection.select(model.index(first, 0), model.index(last, last_column))
        selection_model.select(
            selection,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        if len(rows):
            view.scrollTo(model.index(int(rows[0]), 0), view.ScrollHint.PositionAtTop)
            selection_model.setCurrentIndex(
                model.index(int(rows[0]), 0), QItemSelectionModel.SelectionFlag.NoUpdate
            )
        return True
