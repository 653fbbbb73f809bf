"""The roles panel: role and kind of every column, and the order of ordinal columns.

Role and kind are chosen in combo boxes (a delegate over :class:`RolesModel`); an ordinal
column's order is edited in :class:`OrderDialog`, a list the user reorders by dragging or with
the Up/Down buttons.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.table.dataset import category_values
from microgui.core.table.hierarchy import Hierarchy
from microgui.core.table.ordering import (
    hierarchy_groups_split,
    order_from_codes,
    order_from_hierarchy,
    parse_order_text,
)
from microgui.core.table.roles import AttributeKind, AttributeRole, RoleMap
from microgui.qt.controller import AppController
from microgui.qt.models.roles_model import (
    KIND_CHOICES,
    KIND_HELP,
    ROLE_CHOICES,
    ROLE_HELP,
    RolesColumn,
    RolesModel,
    role_label,
)
from microgui.qt.panels.hierarchy_panel import HierarchyControls

__all__ = ["RolesPanel", "EnumComboDelegate", "OrderDialog", "fit_widths", "roles_summary"]

_Index = QModelIndex | QPersistentModelIndex

#: The order editor lists at most this many categories (a column with more is hardly ordinal).
MAX_ORDER_CATEGORIES = 500
#: The widest the Hierarchy column grows for its file names ("✓ adult_hierarchy_age.csv").
HIERARCHY_PX = 160
#: The narrowest a cut Hierarchy or Order column gets ("H…").
MIN_SECTION_PX = 24


class EnumComboDelegate(QStyledItemDelegate):
    """A combo box of enum members; the choice is committed as soon as it is picked."""

    def __init__(
        self,
        choices: Sequence[Enum],
        labels: dict[Enum, str],
        tips: dict[Any, str],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._choices = tuple(choices)
        self._labels = labels
        self._tips = tips

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: _Index) -> QWidget:
        combo = QComboBox(parent)
        for i, member in enumerate(self._choices):
            combo.addItem(self._labels[member], member)
            combo.setItemData(i, self._tips.get(member, ""), Qt.ItemDataRole.ToolTipRole)
        combo.activated.connect(lambda _i, c=combo: self._commit(c))
        return combo

    def _commit(self, combo: QComboBox) -> None:
        self.commitData.emit(combo)
        self.closeEditor.emit(combo, QStyledItemDelegate.EndEditHint.NoHint)

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        assert isinstance(editor, QComboBox)
        value = index.data(Qt.ItemDataRole.EditRole)
        pos = editor.findData(value)
        editor.setCurrentIndex(max(pos, 0))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: _Index) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


class OrderDialog(QDialog):
    """Reorder the categories of an ordinal column (lowest first) by drag and drop or buttons,
    or in one step: from the attached hierarchy's leaf order, from the categories' numeric codes,
    or pasted as text (:mod:`microgui.core.table.ordering`; issue 30)."""

    def __init__(
        self,
        column: str,
        categories: Sequence[str],
        parent: QWidget | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Order of {column}")
        layout = QVBoxLayout(self)
        note = QLabel(
            f"Order the categories of <b>{column}</b> from lowest (top) to highest (bottom). Drag them, or use the buttons."
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        row = QHBoxLayout()
        self.list_widget = QListWidget()
        self.list_widget.addItems(list(categories))
        self.list_widget.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list_widget.setDefaultDropAction(Qt.DropAction.MoveAction)
        if self.list_widget.count():
            self.list_widget.setCurrentRow(0)
        row.addWidget(self.list_widget, 1)
        buttons = QVBoxLayout()
        self.up_button = QPushButton("Up")
        self.down_button = QPushButton("Down")
        self.reverse_button = QPushButton("Reverse")
        self.up_button.clicked.connect(lambda: self.move_current(-1))
        self.down_button.clicked.connect(lambda: self.move_current(1))
        self.reverse_button.clicked.connect(self.reverse)
        self._hierarchy = hierarchy
        self.hierarchy_button = QPushButton("From hierarchy")
        self.hierarchy_button.setEnabled(hierarchy is not None)
        self.hierarchy_button.setToolTip(
            "Order as the leaves of the hierarchy attached to this column"
            if hierarchy is not None
            else "No hierarchy attached to this column (roles table: right-click → Attach hierarchy…)"
        )
        self.codes_button = QPushButton("From codes")
        self.codes_button.setToolTip(
            'Order by the number each category starts with (1 < 2 < 10; "1st-4th" < "5th-6th")'
        )
        self.paste_button = QPushButton("Paste…")
        self.paste_button.setCheckable(True)
        self.paste_button.setToolTip(
            "Type or paste the order: one category a line, or comma-separated"
        )
        self.hierarchy_button.clicked.connect(self.order_from_hierarchy)
        self.codes_button.clicked.connect(self.order_from_codes)
        self.paste_button.toggled.connect(self._show_paste)
        for b in (
            self.up_button,
            self.down_button,
            self.reverse_button,
            self.hierarchy_button,
            self.codes_button,
            self.paste_button,
        ):
            buttons.addWidget(b)
        buttons.addStretch(1)
        row.addLayout(buttons)
        layout.addLayout(row)
        self.paste_edit = QPlainTextEdit()
        self.paste_edit.setPlaceholderText("lowest first: one category a line, or a, b, c")
        self.paste_edit.setMaximumHeight(110)
        self.apply_paste_button = QPushButton("Use this order")
        self.apply_paste_button.clicked.connect(
            lambda: self.apply_text(self.paste_edit.toPlainText())
        )
        self.paste_edit.setVisible(False)
        self.apply_paste_button.setVisible(False)
        layout.addWidget(self.paste_edit)
        layout.addWidget(self.apply_paste_button)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        layout.addWidget(self.message)
        box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        layout.addWidget(box)
        self.resize(400, 520)  # room for the pasted order and the message

    def move_current(self, step: int) -> None:
        """Move the selected category one place up (-1) or down (+1)."""
        row = self.list_widget.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list_widget.count():
            return
        item = self.list_widget.takeItem(row)
        self.list_widget.insertItem(target, item)
        self.list_widget.setCurrentRow(target)

    def reverse(self) -> None:
        items = self.order()
        self.list_widget.clear()
        self.list_widget.addItems(items[::-1])

    def order(self) -> list[str]:
        return [self.list_widget.item(i).text() for i in range(self.list_widget.count())]

    def set_order(self, order: Sequence[str]) -> None:
        self.list_widget.clear()
        self.list_widget.addItems(list(order))
        if self.list_widget.count():
            self.list_widget.setCurrentRow(0)

    def _say(self, text: str, error: bool = False, warning: bool = False) -> None:
        self.message.setText(text)
        colour = "#b00020" if error else "#b26a00" if warning else "#2e7d32"
        self.message.setStyleSheet(f"color: {colour}")
        self.message.setVisible(bool(text))

    def _apply(self, make: Any, source: str) -> bool:
        try:
            order = make(self.order())
        except MicroguiError as exc:
            self._say(f"Not ordered from {source}: {exc}.", error=True)
            return False
        self.set_order(order)
        self._say(f"Ordered from {source}.")
        return True

    def order_from_hierarchy(self) -> bool:
        """Order as the attached hierarchy's leaves; False (and the reason shown) when refused."""
        hierarchy = self._hierarchy
        if hierarchy is None:
            self._say("No hierarchy is attached to this column.", error=True)
            return False
        if not self._apply(lambda c: order_from_hierarchy(c, hierarchy), "the hierarchy"):
            return False
        split = hierarchy_groups_split(self.order(), hierarchy)
        if split:
            # the file's row order is not a ranking (ARX's Adult education file; issue 30)
            shown = ", ".join(split[:3]) + (f" and {len(split) - 3} more" if len(split) > 3 else "")
            self._say(
                "Ordered as the hierarchy file lists its values, but that order splits its "
                f"groups {shown}: the file order is probably not a ranking. Check the order, "
                "move categories, or paste the order lowest first.",
                warning=True,
            )
        return True

    def order_from_codes(self) -> bool:
        """Order by the categories' leading numbers; False (and the reason shown) when refused."""
        return self._apply(order_from_codes, "the codes")

    def apply_text(self, text: str) -> bool:
        """Use a pasted order; False (unknown, repeated or missing categories named) when refused."""
        return self._apply(lambda c: parse_order_text(text, c), "the pasted text")

    def _show_paste(self, shown: bool) -> None:
        self.paste_edit.setVisible(shown)
        self.apply_paste_button.setVisible(shown)
        if shown:
            if not self.paste_edit.toPlainText().strip():
                self.paste_edit.setPlainText("\n".join(self.order()))
            self.paste_edit.setFocus()


def fit_widths(
    wants: Sequence[int], room: int, least: int, floors: Sequence[int] | None = None
) -> list[int]:
    """Widths for columns that want ``wants`` pixels in ``room``: all they want when it fits,
    else the widest cut to one common width (water-filling), none below ``least``. With
    ``floors`` (the headers' widths) that fit the room together, no column goes below its
    floor: what is left above the floors is water-filled."""
    wants = [max(int(w), least) for w in wants]
    if sum(wants) <= room:
        return wants
    if floors is not None:
        lows = [min(max(int(f), least), w) for f, w in zip(floors, wants, strict=True)]
        if sum(lows) <= room:
            extra = _water_fill([w - f for w, f in zip(wants, lows, strict=True)], room - sum(lows))
            return [f + e for f, e in zip(lows, extra, strict=True)]
    if room <= least * len(wants):
        return [least] * len(wants)
    return [max(w, least) for w in _water_fill(wants, room)]


def _water_fill(wants: Sequence[int], room: int) -> list[int]:
    """``wants`` when they fit ``room``, else each cut to one common cap that fills it."""
    if sum(wants) <= room:
        return list(wants)
    cap, left, rest = 0, room, sorted(wants)
    for i, want in enumerate(rest):
        share = left // (len(rest) - i)
        if want > share:
            cap = share
            break
        left -= want
    return [min(w, cap) for w in wants]


def roles_summary(roles: RoleMap) -> str:
    """One line: how many columns play each role."""
    qis = roles.quasi_identifiers
    kinds = [f"{len(roles.qi_of_kind(k))} {k.value}" for k in KIND_CHOICES if roles.qi_of_kind(k)]
    parts = [
        f"{len(qis)} quasi-identifier{'s' if len(qis) != 1 else ''}"
        + (f" ({', '.join(kinds)})" if kinds else "")
    ]
    if roles.identifiers:
        parts.append(f"{len(roles.identifiers)} identifier(s) removed")
    if roles.confidential:
        parts.append(f"{len(roles.confidential)} confidential")
    weights = roles.columns_with(AttributeRole.WEIGHT)
    if weights:
        parts.append(f"weight: {', '.join(weights)}")
    households = roles.columns_with(AttributeRole.HOUSEHOLD)
    if households:
        parts.append(f"household id: {', '.join(households)}")
    return " · ".join(parts)


class RolesPanel(QWidget):
    """Tag each column; ``error_occurred`` reports a refused edit."""

    error_occurred = Signal(str)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.model = RolesModel(controller, self)
        self.model.edit_failed.connect(self.error_occurred)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.CurrentChanged
            | QAbstractItemView.EditTrigger.SelectedClicked
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(24)
        self.view.setAlternatingRowColors(True)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # the columns fit the view's width (fit_last_columns): at 1366 × 768 a 160-pixel
        # Hierarchy column ran past the view, its header cut to "Hier" behind a scroll bar
        # (issue 30)
        header.setStretchLastSection(False)
        # a cut header ends in "…" (its tooltip says it whole), never clipped mid-word
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        # a scroll range that appears after the fit (a vertical scroll bar took its width)
        self.view.horizontalScrollBar().rangeChanged.connect(
            lambda _lo, hi: hi > 0 and QTimer.singleShot(0, self.fit_last_columns)
        )
        self._fitting_columns = False
        self.view.viewport().installEventFilter(self)
        self.role_delegate = EnumComboDelegate(
            ROLE_CHOICES, {r: role_label(r) for r in ROLE_CHOICES}, dict(ROLE_HELP), self
        )
        self.kind_delegate = EnumComboDelegate(
            KIND_CHOICES, {k: k.label for k in KIND_CHOICES}, dict(KIND_HELP), self
        )
        self.view.setItemDelegateForColumn(RolesColumn.ROLE, self.role_delegate)
        self.view.setItemDelegateForColumn(RolesColumn.KIND, self.kind_delegate)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._update_buttons())

        self.summary = QLabel("Open a table to tag its columns.")
        self.summary.setWordWrap(True)
        # Suggested roles are "not yet reviewed" until confirmed or run on (issue 13).
        self.review_note = QLabel("<b>Suggested roles: not yet reviewed</b>")
        self.review_note.setToolTip(
            "microgui suggested these roles from the column contents, conservatively. Hover a "
            "column for the reason of its role, change what is wrong, then press Confirm roles "
            "(a run confirms them too)."
        )
        self.review_note.setWordWrap(True)
        self.review_note.setStyleSheet(
            "QLabel { background: #fff4d6; border: 1px solid #d9a400; padding: 4px; }"
        )
        self.confirm_button = QPushButton("Confirm roles")
        self.confirm_button.setToolTip("Mark the roles as reviewed (a run does so too)")
        self.confirm_button.clicked.connect(controller.confirm_roles)
        self.missing_box = QCheckBox("Missing cells are a category")
        self.missing_box.setToolTip(
            "For the selected nominal or ordinal quasi-identifier: its missing cells form a "
            "category of their own (released as empty cells; last in an ordinal order) "
            "instead of refusing the run. Recorded in the report. Continuous columns must be "
            "filled instead."
        )
        self.missing_box.toggled.connect(self._on_missing_toggled)
        self.order_button = QPushButton("Edit order…")
        self.order_button.setToolTip("Order the categories of the selected ordinal column")
        self.order_button.clicked.connect(self.edit_order_of_current)
        self.reset_button = QPushButton("Suggest roles")
        self.reset_button.setToolTip(
            "Replace all tags by microgui's suggestion from the column contents"
        )
        self.reset_button.clicked.connect(self.reset_to_suggested)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        review = QHBoxLayout()
        review.addWidget(self.review_note, 1)
        review.addWidget(self.confirm_button)
        layout.addLayout(review)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.missing_box)
        buttons = QHBoxLayout()
        buttons.addWidget(self.order_button)
        # hierarchy files of quasi-identifiers (issue 13): button menu and context menu
        self.hierarchy = HierarchyControls(controller, self.view, self)
        self.hierarchy.error_occurred.connect(self.error_occurred)
        buttons.addWidget(self.hierarchy.button)
        buttons.addStretch(1)
        buttons.addWidget(self.reset_button)
        layout.addLayout(buttons)
        self.order_dialog: OrderDialog | None = None
        controller.roles_changed.connect(self._on_roles_changed)
        # new names, roles or files: the first columns' widths (measured when laid out) and
        # the file names' change; fitted once the view has measured them
        for signal in (self.model.modelReset, self.model.dataChanged, self.model.layoutChanged):
            signal.connect(lambda *_: QTimer.singleShot(0, self.fit_last_columns))
        controller.busy_changed.connect(lambda _b: self._update_buttons())
        controller.roles_review_changed.connect(self._on_review_changed)
        self._on_review_changed(controller.roles_reviewed)
        self._update_buttons()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_last_columns()
            # again once the scroll bars have settled (one appearing narrows the viewport)
            QTimer.singleShot(0, self.fit_last_columns)
        return super().eventFilter(watched, event)

    def fit_last_columns(self) -> None:
        """Fit the five columns to the view's width, so that no header runs past it (issue 30:
        "Hierarchy" was cut to "Hier" behind a scroll bar at 1366 × 768). Hierarchy shows only
        while a hierarchy is attached, Order only while a quasi-identifier is ordinal.

        Each column wants its header and its cells (file names up to :data:`HIERARCHY_PX`);
        Order takes what is left. With less room, Hierarchy and Order give way first, down to
        their headers, then below them in proportion (cut with "…": the header's and the
        cells' tooltips say them whole), so that Column, Role and Kind stay whole; only when
        those three do not fit are the widest columns cut to a common width. Only below
        :data:`MIN_SECTION_PX` a column does the table scroll."""
        if self._fitting_columns:
            return
        self._fitting_columns = True
        try:
            header = self.view.horizontalHeader()
            columns = list(RolesColumn)
            hier, order = RolesColumn.HIERARCHY, RolesColumn.ORDER
            # Hierarchy only while a hierarchy is attached, Order only while a quasi-identifier
            # is ordinal: empty, they took the room the other's header needs (at 1366 × 768
            # both read "Hier…", "O…" on UCI Adult). Attaching stays a right-click on any row
            # (or the Hierarchy button below the table).
            shown = {
                hier: self.model.has_hierarchy(),
                order: self.model.has_ordinal_quasi_identifier(),
            }
            for c, on in shown.items():
                if self.view.isColumnHidden(c) == on:
                    self.view.setColumnHidden(c, not on)
            last = [c for c in (hier, order) if shown[c]]
            heads = [header.sectionSizeHint(c) for c in columns]
            cells = [self.view.sizeHintForColumn(c) for c in columns]
            cells[hier] = min(cells[hier], HIERARCHY_PX)
            cells[order] = min(cells[order], HIERARCHY_PX)
            for c, on in shown.items():
                if not on:
                    heads[c] = cells[c] = 0
            wants = [max(h, c) for h, c in zip(heads, cells, strict=True)]
            room = self.view.viewport().width() - 1  # a pixel spare: no 1-pixel scroll range
            first = sum(wants[:hier])  # Column, Role, Kind: what a statistician reads first
            if sum(wants) <= room:
                widths = wants
            elif first + heads[hier] + heads[order] <= room:  # the headers whole
                widths = [*wants[:hier], heads[hier], heads[order]]
                widths[hier] += min(room - sum(widths), wants[hier] - heads[hier])
            elif last and room - first >= len(last) * MIN_SECTION_PX:  # cut, by their headers
                left = room - first
                widths = [*wants[:hier], 0, 0]
                if len(last) == 2:
                    share = heads[hier] / (heads[hier] + heads[order])
                    widths[hier] = max(MIN_SECTION_PX, round(left * share))
                    widths[order] = max(MIN_SECTION_PX, left - widths[hier])
                else:
                    widths[last[0]] = left
            else:  # even the first three do not fit: the widest cut to a common width
                widths = fit_widths(wants, room, MIN_SECTION_PX, heads)
            for c, on in shown.items():
                if not on:
                    widths[c] = 0
            # what is left to the last column shown
            widths[last[-1] if last else RolesColumn.KIND] += max(0, room - sum(widths))
            for c, width in zip(columns, widths, strict=True):
                if c in shown and not shown[c]:
                    continue
                if header.sectionSize(c) != width:
                    header.resizeSection(c, width)
        finally:
            self._fitting_columns = False

    def _on_review_changed(self, reviewed: bool) -> None:
        pending = not reviewed and self._controller.dataset is not None
        self.review_note.setVisible(pending)
        self.confirm_button.setVisible(pending)

    def _on_missing_toggled(self, checked: bool) -> None:
        row = self._current_row()
        if row < 0 or row >= self.model.rowCount():
            return
        if self.model.spec(row).missing_as_category == checked:
            return
        try:
            self._controller.set_missing_as_category(self.model.column_name(row), checked)
        except MicroguiError as exc:
            self.error_occurred.emit(str(exc))

    def _on_roles_changed(self, roles: object) -> None:
        assert isinstance(roles, RoleMap)
        self.summary.setText(roles_summary(roles))
        self._update_buttons()

    def _current_row(self) -> int:
        index = self.view.currentIndex()
        return index.row() if index.isValid() else -1

    def _update_buttons(self) -> None:
        row = self._current_row()
        ordinal = False
        if 0 <= row < self.model.rowCount():
            spec = self.model.spec(row)
            ordinal = (
                spec.role is AttributeRole.QUASI_IDENTIFIER and spec.kind is AttributeKind.ORDINAL
            )
        self.order_button.setEnabled(ordinal)
        categorical = False
        flag = False
        if 0 <= row < self.model.rowCount():
            spec = self.model.spec(row)
            categorical = (
                spec.role is AttributeRole.QUASI_IDENTIFIER
                and spec.kind is not AttributeKind.CONTINUOUS
            )
            flag = spec.missing_as_category and categorical
        self.missing_box.setEnabled(categorical)
        self.missing_box.blockSignals(True)
        self.missing_box.setChecked(flag)
        self.missing_box.blockSignals(False)
        self.reset_button.setEnabled(self._controller.dataset is not None)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.column() == RolesColumn.ORDER:
            self.edit_order(index.row())

    def edit_order_of_current(self) -> None:
        row = self._current_row()
        if row >= 0:
            self.edit_order(row)

    def edit_order(self, row: int) -> OrderDialog | None:
        """Open the order editor of the column in ``row`` (window-modal, not blocking)."""
        dataset = self._controller.dataset
        if dataset is None:
            return None
        name = self.model.column_name(row)
        spec = self.model.spec(row)
        if (
            spec.role is not AttributeRole.QUASI_IDENTIFIER
            or spec.kind is not AttributeKind.ORDINAL
        ):
            self.error_occurred.emit(
                f"{name!r} is not an ordinal quasi-identifier; set its kind to ordinal first"
            )
            return None
        present = category_values(dataset.frame[name])
        categories = list(spec.order) if spec.order else present
        categories += [c for c in present if c not in categories]
        if len(categories) > MAX_ORDER_CATEGORIES:
            self.error_occurred.emit(
                f"{name!r} has {len(categories)} distinct values, too many to order by hand; tag it continuous or nominal"
            )
            return None
        attached = self._controller.hierarchies.get(name)
        dialog = OrderDialog(
            name, categories, self, attached.hierarchy if attached is not None else None
        )
        dialog.accepted.connect(lambda: self._apply_order(name, dialog.order()))
        self.order_dialog = dialog
        dialog.open()
        return dialog

    def _apply_order(self, column: str, order: list[str]) -> None:
        try:
            self._controller.set_order(column, order)
        except MicroguiError as exc:
            self.error_occurred.emit(str(exc))

    def reset_to_suggested(self) -> None:
        if self._controller.dataset is None:
            return
        try:
            self._controller.suggest_roles()
        except MicroguiError as exc:
            self.error_occurred.emit(str(exc))
