"""Attaching hierarchy files to quasi-identifiers in the roles panel, and seeing their levels.

:class:`HierarchyControls` gives the roles panel a "Hierarchy" button and the table's context menu
(Attach hierarchy…, Show levels…, Remove hierarchy) for the selected column; the file is read and
matched in the background (:class:`microgui.qt.hierarchies.HierarchyAttachments`), then
:class:`HierarchyDialog` shows it: the levels table (level 0 values → level 1 → … → root) for the
first rows, the number of nodes at each level, and the column's values missing from the file,
which a run refuses (as ``microgui protect --hierarchy`` does). A file that cannot be read
becomes one message naming the file and what to do (``error_occurred``), never a crash.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QListWidget,
    QMenu,
    QPushButton,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from microgui.core.table.roles import AttributeRole
from microgui.qt.controller import AppController
from microgui.qt.hierarchies import AttachedHierarchy
from microgui.qt.models.roles_model import RolesColumn

__all__ = ["HierarchyControls", "HierarchyDialog", "PREVIEW_ROWS", "HIERARCHY_FILTER"]

#: The levels table shows the first this many values of a hierarchy.
PREVIEW_ROWS = 200
#: The missing-values list shows at most this many values (the summary gives the count).
MISSING_SHOWN = 1000
HIERARCHY_FILTER = "Hierarchy files (*.csv *.txt *.tsv);;All files (*)"


def level_sizes_text(attached: AttachedHierarchy) -> str:
    """'16 values → 7 → 3 → 1 (*)': the number of nodes at each level, up to the root."""
    h = attached.hierarchy
    sizes = [len(level) for level in h.levels]
    parts = [f"{sizes[0]:,} values", *(f"{n:,}" for n in sizes[1:-1]), f"1 ({h.root})"]
    return " → ".join(parts)


class HierarchyDialog(QDialog):
    """The levels of a column's hierarchy and the column's values missing from it."""

    remove_requested = Signal(str)  # column
    replace_requested = Signal(str)  # column

    def __init__(
        self, attached: AttachedHierarchy, used: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.attached = attached
        h = attached.hierarchy
        cov = attached.coverage
        self.setWindowTitle(f"Hierarchy of {attached.column}")
        layout = QVBoxLayout(self)
        added = " A root * was added above the file's last column." if h.added_root else ""
        use = (
            "Used by mstk runs (other methods do not generalize)."
            if used
            else "Not used: the column is not a quasi-identifier."
        )
        self.info = QLabel(
            f"Hierarchy of <b>{html.escape(attached.column)}</b>: "
            f"<b>{html.escape(attached.path.name)}</b> "
            f"<span style='color:#666'>({html.escape(str(attached.path.parent))})</span><br>"
            f"Height {h.height} ({h.height + 1} levels, level 0 = the values): "
            f"{html.escape(level_sizes_text(attached))}.{added}<br>{use}"
        )
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.info)

        shown = min(len(h), PREVIEW_ROWS)
        self.table = QTableWidget(shown, h.height + 1)
        self.table.setHorizontalHeaderLabels(
            ["Level 0 (value)", *(f"Level {i}" for i in range(1, h.height + 1))]
        )
        for r, path in enumerate(h.paths[:shown]):
            for c, label in enumerate(path):
                item = QTableWidgetItem(label)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                self.table.setItem(r, c, item)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(self.table, 3)
        rows_note = (
            f"The first {shown:,} of {len(h):,} values."
            if shown < len(h)
            else f"All {len(h):,} values."
        )
        self.rows_label = QLabel(rows_note)
        self.rows_label.setStyleSheet("color:#666")
        layout.addWidget(self.rows_label)

        self.coverage_label = QLabel()
        self.coverage_label.setWordWrap(True)
        self.coverage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.missing_list = QListWidget()
        if cov.complete:
            self.coverage_label.setText(
                f"<span style='color:#1b7a33'>✓ {html.escape(cov.summary())}.</span>"
            )
            self.missing_list.hide()
        else:
            self.coverage_label.setText(
                f"<span style='color:#b00020'><b>⚠ {len(cov.missing):,} value(s) of "
                f"{html.escape(attached.column)} are not in this hierarchy</b> "
                f"({sum(cov.missing_rows):,} rows: {html.escape(cov.where)}). An mstk run "
                "refuses them: add a row <i>value;generalization;…;root</i> for each to the "
                "file and attach it again, or remove the hierarchy (mstk then builds an "
                "automatic one).</span>"
            )
            for value, count in list(zip(cov.missing, cov.missing_rows, strict=True))[
                :MISSING_SHOWN
            ]:
                self.missing_list.addItem(f"{value}  ({count:,} row{'s' if count != 1 else ''})")
            if len(cov.missing) > MISSING_SHOWN:
                self.missing_list.addItem(f"… and {len(cov.missing) - MISSING_SHOWN:,} more")
            self.missing_list.setMaximumHeight(110)
        layout.addWidget(self.coverage_label)
        layout.addWidget(self.missing_list, 1)
        if cov.blank_rows:
            blank = QLabel(
                f"{cov.blank_rows:,} row(s) of {html.escape(attached.column)} have no value "
                "(reported by the run as for any quasi-identifier)."
            )
            blank.setWordWrap(True)
            layout.addWidget(blank)

        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.replace_button = QPushButton("Choose another file…")
        self.remove_button = QPushButton("Remove hierarchy")
        box.addButton(self.replace_button, QDialogButtonBox.ButtonRole.ActionRole)
        box.addButton(self.remove_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        box.rejected.connect(self.reject)
        self.replace_button.clicked.connect(self._replace)
        self.remove_button.clicked.connect(self._remove)
        layout.addWidget(box)
        self.resize(560, 520)

    def _replace(self) -> None:
        self.replace_requested.emit(self.attached.column)
        self.accept()

    def _remove(self) -> None:
        self.remove_requested.emit(self.attached.column)
        self.accept()


class HierarchyControls(QObject):
    """The hierarchy actions of the roles table (button menu and context menu).

    ``error_occurred`` carries a message for the window's message box; after a file is attached
    its :class:`HierarchyDialog` opens (window-modal, not blocking).
    """

    error_occurred = Signal(str)

    def __init__(
        self, controller: AppController, view: QTableView, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._view = view
        #: the column whose file the user chose last; its dialog opens once it is read
        self._awaiting: str | None = None
        self.dialog: HierarchyDialog | None = None
        self.file_dialog: QFileDialog | None = None

        self.attach_action = QAction("Attach hierarchy…", self)
        self.attach_action.setToolTip(
            "Attach a generalization hierarchy file (ARX format: value;level 1;…;*) to the "
            "selected quasi-identifier; mstk uses it instead of an automatic one"
        )
        self.attach_action.triggered.connect(self.attach_to_current)
        self.show_action = QAction("Show hierarchy levels…", self)
        self.show_action.triggered.connect(self.show_current)
        self.remove_action = QAction("Remove hierarchy", self)
        self.remove_action.triggered.connect(self.remove_current)
        self.menu = QMenu(view)
        for action in (self.attach_action, self.show_action, self.remove_action):
            self.menu.addAction(action)
        self.menu.setToolTipsVisible(True)
        self.button = QToolButton()
        self.button.setText("Hierarchy")
        self.button.setToolTip(
            "Generalization hierarchy of the selected quasi-identifier (used by mstk)"
        )
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.button.setMenu(self.menu)

        # the Hierarchy column: wide enough for "✓ file name", long names elided in the middle
        view.horizontalHeader().resizeSection(RolesColumn.HIERARCHY, 160)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        view.setWordWrap(False)  # rows are one line high: wrapped text showed as "✓ …"
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._context_menu)
        view.doubleClicked.connect(self._on_double_clicked)
        view.selectionModel().currentRowChanged.connect(lambda *_: self.update_actions())
        attachments = controller.hierarchies
        attachments.changed.connect(self.update_actions)
        attachments.attached.connect(self._on_attached)
        attachments.failed.connect(self._on_failed)
        controller.roles_changed.connect(lambda _r: self.update_actions())
        controller.dataset_loaded.connect(lambda _d: self._close_dialog())
        self.update_actions()

    # the selected column ----------------------------------------------------------------
    def current_column(self) -> str | None:
        index = self._view.currentIndex()
        model = self._view.model()
        if not index.isValid() or self._controller.dataset is None:
            return None
        name = model.index(index.row(), 0).data()
        return str(name) if name is not None else None

    def _is_qi(self, column: str | None) -> bool:
        roles = self._controller.roles
        return (
            column is not None
            and roles is not None
            and column in roles
            and roles[column].role is AttributeRole.QUASI_IDENTIFIER
        )

    def update_actions(self) -> None:
        column = self.current_column()
        attached = column is not None and column in self._controller.hierarchies
        self.attach_action.setEnabled(self._is_qi(column))
        self.attach_action.setText("Attach another hierarchy…" if attached else "Attach hierarchy…")
        self.show_action.setEnabled(attached)
        self.remove_action.setEnabled(attached)
        self.button.setEnabled(self._controller.dataset is not None)

    def _context_menu(self, pos: QPoint) -> None:
        index = self._view.indexAt(pos)
        if index.isValid():
            self._view.setCurrentIndex(index)
        self.update_actions()
        self.menu.popup(self._view.viewport().mapToGlobal(pos))

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.column() == RolesColumn.HIERARCHY:
            column = self.current_column()
            if column is not None and column in self._controller.hierarchies:
                self.show_dialog(column)
            elif self._is_qi(column):
                self.attach_to_current()

    # actions ----------------------------------------------------------------------------
    def attach_to_current(self) -> None:
        """Ask for a hierarchy file for the selected quasi-identifier (non-blocking dialog)."""
        column = self.current_column()
        if column is None:
            return
        if not self._is_qi(column):
            self.error_occurred.emit(
                f"{column!r} is not a quasi-identifier; only quasi-identifiers are generalized "
                "along a hierarchy. Tag it a quasi-identifier first"
            )
            return
        dialog = QFileDialog(self._view.window(), f"Hierarchy file for {column}")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilter(HIERARCHY_FILTER)
        source = self._controller.dataset.source if self._controller.dataset else None
        if source:
            dialog.setDirectory(str(Path(str(source)).parent))
        dialog.fileSelected.connect(lambda path, c=column: self.attach(c, path))
        self.file_dialog = dialog
        dialog.open()

    def attach(self, column: str, path: str | Path) -> int | None:
        """Read ``path`` as the hierarchy of ``column`` (in the background); its levels are
        shown once read. Returns the request id (None when refused)."""
        dataset = self._controller.dataset
        if dataset is None:
            return None
        if not self._is_qi(column):
            self.error_occurred.emit(
                f"{column!r} is not a quasi-identifier; tag it a quasi-identifier first"
            )
            return None
        self._awaiting = column
        return self._controller.hierarchies.attach(dataset, column, path)

    def remove_current(self) -> None:
        column = self.current_column()
        if column is not None:
            self.remove(column)

    def remove(self, column: str) -> None:
        self._controller.hierarchies.remove(column)
        if self.dialog is not None and self.dialog.attached.column == column:
            self._close_dialog()

    def show_current(self) -> None:
        column = self.current_column()
        if column is not None:
            self.show_dialog(column)

    def show_dialog(self, column: str) -> HierarchyDialog | None:
        """Open the levels of ``column``'s hierarchy (window-modal, not blocking)."""
        attached = self._controller.hierarchies.get(column)
        if attached is None:
            return None
        self._close_dialog()
        dialog = HierarchyDialog(attached, self._is_qi(column), self._view.window())
        dialog.remove_requested.connect(self.remove)
        dialog.replace_requested.connect(self._replace)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _replace(self, column: str) -> None:
        self._select(column)
        self.attach_to_current()

    def _select(self, column: str) -> None:
        model = self._view.model()
        for row in range(model.rowCount()):
            if model.index(row, 0).data() == column:
                self._view.setCurrentIndex(model.index(row, 0))
                return

    def _close_dialog(self) -> None:
        if self.dialog is not None:
            self.dialog.close()
            self.dialog = None

    # results of the background read -----------------------------------------------------
    def _on_attached(self, column: str) -> None:
        self.update_actions()
        if column == self._awaiting:
            self._awaiting = None
            self.show_dialog(column)

    def _on_failed(self, column: str, path: str, message: str) -> None:
        if column == self._awaiting:
            self._awaiting = None
        name = Path(path).name if path else "the file"
        text = message[:1].upper() + message[1:] if message else f"{name} could not be read"
        self.error_occurred.emit(
            f"The hierarchy of {column!r} was not attached ({path}). {text}. Choose the "
            "hierarchy file again (Attach hierarchy…), or run without it: mstk then builds an "
            "automatic hierarchy"
        )
