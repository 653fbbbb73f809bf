"""The columns an SPSS or Stata release cannot name, and the names to write them under (issue 30).

The proposals are core's (:func:`microgui.core.io.names.valid_names`), editable; every edit is
checked at once (:func:`~microgui.core.io.names.check_renames`) and OK stays disabled while a
name is invalid or taken. The writer checks them again
(:func:`microgui.core.release.check.export_run`, ``renames``) and the report lists the original
names with the released ones (``variables``, ``renamed_columns``).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from microgui.core.io.names import check_renames

__all__ = ["RenameColumnsDialog"]

_FORMAT_TEXT = {"spss": "SPSS", "stata": "Stata"}


class RenameColumnsDialog(QDialog):
    """Original name -> proposed name for each column ``fmt`` cannot hold (the second column
    is editable); :meth:`renames` gives ``{original: released}`` once accepted."""

    def __init__(
        self,
        columns: Sequence[str],
        proposals: dict[str, str],
        fmt: str,
        file_name: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._columns = [str(c) for c in columns]
        self._fmt = fmt
        label = _FORMAT_TEXT.get(fmt, fmt)
        self.setWindowTitle(f"Column names for {label}")
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"{label} cannot name {len(proposals)} column(s) of the table as they are. "
            f"{file_name} will hold them under the names below (edit any); the report beside it "
            "lists the original and the released names."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTableWidget(len(proposals), 2, self)
        self.table.setHorizontalHeaderLabels(["Column", f"Name in the {label} file"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for row, (old, new) in enumerate(proposals.items()):
            original = QTableWidgetItem(old)
            original.setFlags(original.flags() & ~original.flags().ItemIsEditable)
            self.table.setItem(row, 0, original)
            self.table.setItem(row, 1, QTableWidgetItem(new))
        layout.addWidget(self.table)
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #b00020;")
        layout.addWidget(self.problems)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export with these names")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.table.itemChanged.connect(lambda _item: self._validate())
        self.resize(560, min(160 + 30 * len(proposals), 520))
        self._validate()

    def renames(self) -> dict[str, str]:
        """``{original: released}`` as the table shows them now (stripped of outer spaces)."""
        out: dict[str, str] = {}
        for row in range(self.table.rowCount()):
            old_item, new_item = self.table.item(row, 0), self.table.item(row, 1)
            if old_item is None:
                continue
            new = new_item.text().strip() if new_item is not None else ""
            if new != old_item.text():
                out[old_item.text()] = new
        return out

    def problem_list(self) -> list[str]:
        """The problems of the names as edited (empty: the format holds them all)."""
        return check_renames(self._columns, self.renames(), self._fmt)

    def _validate(self) -> None:
        problems = self.problem_list()
        self.problems.setText("\n".join(problems[:6]) + ("\n..." if len(problems) > 6 else ""))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problems)
