"""The role table: one row per column of the dataset, with its role, kind and ordinal order.

Edits (from the combo-box delegates) go through ``setData`` to the controller, which validates,
updates the immutable :class:`RoleMap` and emits ``roles_changed``; the model then repaints. The
model holds no copy of the roles.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from microgui.core.errors import MicroguiError
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.qt.controller import AppController

__all__ = ["RolesModel", "RolesColumn", "ROLE_CHOICES", "KIND_CHOICES", "ROLE_HELP", "KIND_HELP"]

_Index = QModelIndex | QPersistentModelIndex


class RolesColumn(IntEnum):
    NAME = 0
    ROLE = 1
    KIND = 2
    HIERARCHY = 3
    ORDER = 4


HEADERS = {
    RolesColumn.NAME: "Column",
    RolesColumn.ROLE: "Role",
    RolesColumn.KIND: "Kind",
    RolesColumn.ORDER: "Order",
    RolesColumn.HIERARCHY: "Hierarchy",
}

HEADER_TIPS = {
    RolesColumn.NAME: "Column of the table",
    RolesColumn.ROLE: "What the column is for disclosure control (click to change)",
    RolesColumn.KIND: "How a quasi-identifier is compared and averaged (click to change)",
    RolesColumn.ORDER: "Categories of an ordinal column, lowest first (double-click to edit)",
    RolesColumn.HIERARCHY: "Generalization hierarchy file attached to a quasi-identifier, used "
    "by mstk (right-click a column to attach one; double-click to see its levels)",
}

ROLE_CHOICES: tuple[AttributeRole, ...] = (
    AttributeRole.QUASI_IDENTIFIER,
    AttributeRole.IDENTIFIER,
    AttributeRole.CONFIDENTIAL,
    AttributeRole.NON_CONFIDENTIAL,
    AttributeRole.WEIGHT,
    AttributeRole.HOUSEHOLD,
)
KIND_CHOICES: tuple[AttributeKind, ...] = (
    AttributeKind.CONTINUOUS,
    AttributeKind.ORDINAL,
    AttributeKind.NOMINAL,
)

ROLE_HELP = {
    AttributeRole.IDENTIFIER: "Identifies a person directly: removed from the released table.",
    AttributeRole.QUASI_IDENTIFIER: "Could identify a person when combined: microaggregated.",
    AttributeRole.CONFIDENTIAL: "Sensitive values: released unchanged.",
    AttributeRole.NON_CONFIDENTIAL: "Neither: released unchanged.",
    AttributeRole.WEIGHT: "Survey weight (one column): released unchanged; estimates population "
    "frequencies for the risk measures, and weighted group means if asked.",
    AttributeRole.HOUSEHOLD: "Household id (one column): released unchanged; its households' "
    "risk is measured, and the random record order keeps each household together.",
}
KIND_HELP = {
    AttributeKind.CONTINUOUS: "Numbers: distance on z-scores, group mean.",
    AttributeKind.ORDINAL: "Ordered categories: rank distance, group median.",
    AttributeKind.NOMINAL: "Unordered categories: equality distance, group mode.",
}

_ROLE_COLORS = {
    AttributeRole.QUASI_IDENTIFIER: "#1f5fa8",
    AttributeRole.IDENTIFIER: "#b03030",
    AttributeRole.CONFIDENTIAL: "#8a5a00",
    AttributeRole.NON_CONFIDENTIAL: "#555555",
    AttributeRole.WEIGHT: "#2e7d5b",
    AttributeRole.HOUSEHOLD: "#6a3d9a",
}


def role_label(role: AttributeRole) -> str:
    return "Quasi-identifier" if role is AttributeRole.QUASI_IDENTIFIER else role.label


class RolesModel(QAbstractTableModel):
    """Column / role / kind / order of the controller's dataset; role and kind are editable.

    ``edit_failed`` carries the message of an edit the controller refused.
    """

    edit_failed = Signal(str)

    def __init__(self, controller: AppController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._names: list[str] = []
        self._roles = RoleMap()
        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.roles_changed.connect(self._on_roles_changed)
        controller.hierarchies.changed.connect(self._on_hierarchies_changed)
        if controller.dataset is not None:
            self._on_dataset_loaded(controller.dataset)

    @property
    def roles(self) -> RoleMap:
        """The roles shown (the controller's latest; immutable, so holding it copies nothing)."""
        return self._roles

    def column_name(self, row: int) -> str:
        return self._names[row]

    def spec(self, row: int) -> ColumnSpec:
        return self._roles[self._names[row]]

    def _reset(self, roles: RoleMap) -> None:
        self.beginResetModel()
        self._roles = roles
        self._names = list(roles)
        self.endResetModel()

    def _on_dataset_loaded(self, dataset: object) -> None:
        roles = getattr(dataset, "roles", None)
        self._reset(roles if isinstance(roles, RoleMap) else RoleMap())

    def _on_hierarchies_changed(self) -> None:
        if self._names:
            col = RolesColumn.HIERARCHY
            self.dataChanged.emit(self.index(0, col), self.index(len(self._names) - 1, col))

    def _on_roles_changed(self, roles: object) -> None:
        if not isinstance(roles, RoleMap):
            return
        if list(roles) != self._names:  # another table: rebuild the rows
            self._reset(roles)
            return
        self._roles = roles
        if self._names:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._names) - 1, len(RolesColumn) - 1)
            )

    # Qt model interface -------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(RolesColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[RolesColumn(section)]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[RolesColumn(section)]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        column = RolesColumn(index.column())
        if column is RolesColumn.ROLE:
            flags |= Qt.ItemFlag.ItemIsEditable
        elif (
            column is RolesColumn.KIND
            and self.spec(index.row()).role is AttributeRole.QUASI_IDENTIFIER
        ):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._names):
            return None
        spec = self.spec(index.row())
        column = RolesColumn(index.column())
        is_qi = spec.role is AttributeRole.QUASI_IDENTIFIER
        if role == Qt.ItemDataRole.DisplayRole:
            if column is RolesColumn.NAME:
                return self._names[index.row()]
            if column is RolesColumn.ROLE:
                return role_label(spec.role)
            if column is RolesColumn.KIND:
                if is_qi and spec.missing_is_category:
                    return f"{spec.kind.label}, missing = category"
                return spec.kind.label if is_qi else "—"
            if column is RolesColumn.HIERARCHY:
                return self._hierarchy_text(index.row())
            if spec.kind is AttributeKind.ORDINAL and is_qi:
                return " < ".join(spec.order) if spec.order else "(sorted values)"
            return ""
        if role == Qt.ItemDataRole.EditRole:
            if column is RolesColumn.ROLE:
                return spec.role
            if column is RolesColumn.KIND:
                return spec.kind
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            reason = self._controller.role_reasons.get(self._names[index.row()])
            why = f"Suggested because: {reason}" if reason else ""
            if column is RolesColumn.NAME:  # the name whole: a narrow column cuts it
                return "\n".join(t for t in (self._names[index.row()], why) if t)
            if column is RolesColumn.ROLE:
                return "\n".join(t for t in (ROLE_HELP[spec.role], why) if t)
            if column is RolesColumn.KIND:
                return KIND_HELP[spec.kind] if is_qi else "Only quasi-identifiers have a kind."
            if column is RolesColumn.ORDER and spec.kind is AttributeKind.ORDINAL and is_qi:
                order = " < ".join(spec.order) if spec.order else "the sorted values"
                return f"{order}\n(double-click to edit the order)"
            if column is RolesColumn.HIERARCHY:
                return self._hierarchy_tip(index.row(), is_qi)
            return None
        if role == Qt.ItemDataRole.ForegroundRole and column is RolesColumn.HIERARCHY:
            attached = self._controller.hierarchies.get(self._names[index.row()])
            if attached is not None and is_qi and not attached.complete:
                return QBrush(QColor("#b00020"))  # values missing: a run refuses them
        if role == Qt.ItemDataRole.ForegroundRole and column is RolesColumn.ROLE:
            return QBrush(QColor(_ROLE_COLORS[spec.role]))
        if role == Qt.ItemDataRole.ForegroundRole and column is not RolesColumn.NAME and not is_qi:
            return QBrush(QColor("#888888"))
        return None

    def has_hierarchy(self) -> bool:
        """Whether a hierarchy is attached to a column of the table (the Hierarchy column has
        something to show)."""
        return any(self._controller.hierarchies.get(name) is not None for name in self._names)

    def has_ordinal_quasi_identifier(self) -> bool:
        """Whether any quasi-identifier is ordinal (the Order column has something to show)."""
        return any(
            self.spec(row).role is AttributeRole.QUASI_IDENTIFIER
            and self.spec(row).kind is AttributeKind.ORDINAL
            for row in range(self.rowCount())
        )

    def _hierarchy_text(self, row: int) -> str:
        attached = self._controller.hierarchies.get(self._names[row])
        if attached is None:
            return ""
        # the file's name is in the tooltip: "✓ adult_hierarchy_marital-status.csv" was cut
        # to "✓ adult_h…" at 1366 × 768, where the column has ~75 pixels
        if self.spec(row).role is not AttributeRole.QUASI_IDENTIFIER:
            return "not used"
        if not attached.complete:
            return attached.short_text()  # "⚠ 3 values missing"
        levels = attached.hierarchy.height
        return f"✓ {levels} level{'s' if levels != 1 else ''}"

    def _hierarchy_tip(self, row: int, is_qi: bool) -> str | None:
        attached = self._controller.hierarchies.get(self._names[row])
        if attached is None:
            return (
                "No hierarchy file: mstk builds an automatic one (right-click → Attach hierarchy…)"
                if is_qi
                else None
            )
        used = (
            "Used by mstk runs (double-click to see its levels)."
            if is_qi
            else "Not used: the column is not a quasi-identifier."
        )
        return f"{attached.path}\n{attached.coverage.summary()}.\n{used}"

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """A user edit: the role or kind goes to the controller (refusals emit ``edit_failed``)."""
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        name = self._names[index.row()]
        column = RolesColumn(index.column())
        try:
            if column is RolesColumn.ROLE:
                new_role = _as_enum(AttributeRole, value)
                if new_role is self.spec(index.row()).role:
                    return True
                self._controller.set_role(name, new_role)
            elif column is RolesColumn.KIND:
                self._controller.set_kind(name, _as_enum(AttributeKind, value))
            else:
                return False
        except (MicroguiError, ValueError) as exc:
            self.edit_failed.emit(str(exc))
            return False
        return True


def _as_enum(enum: Any, value: Any) -> Any:
    """An enum member from itself, its value ('quasi-identifier') or its label ('Quasi-identifier')."""
    if isinstance(value, enum):
        return value
    text = str(value).strip().lower()
    for member in enum:
        if text in (member.value, member.label.lower(), member.name.lower()):
            return member
    if enum is AttributeRole and text in ("qi", "quasi identifier"):
        return AttributeRole.QUASI_IDENTIFIER
    raise ValueError(f"{value!r} is not a {enum.__name__}")
