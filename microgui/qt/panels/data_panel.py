"""The data panel: the open table, or the protected table of the last run, in a lazy view."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
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

__all__ = ["DataPanel"]

ORIGINAL = "Original table"
PROTECTED = "Protected table (last run)"


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
