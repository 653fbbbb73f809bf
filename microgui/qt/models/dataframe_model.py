"""A lazy table model over a pandas DataFrame (STYLE.md §5).

``data()`` formats one cell on demand from a cached numpy array of its column; nothing is copied
into items, so a million rows scroll as smoothly as a hundred. Sorting reorders an index
permutation, never the frame. ← glue-qt ``DataTableModel``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QTableView

from microgui.core.table.roles import AttributeRole, RoleMap

__all__ = ["DataFrameModel", "format_cell", "fit_columns"]

_Index = QModelIndex | QPersistentModelIndex
#: rows per block of a text column converted for display (:meth:`DataFrameModel.cell`)
_BLOCK = 1024


def format_cell(value: Any) -> str:
    """The text of one cell: missing values empty, floats with up to 10 significant digits."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return ""
        return f"{float(value):.10g}"
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    return str(value)


class DataFrameModel(QAbstractTableModel):
    """Read-only view of a frame; header = column name and, below it, the column's role."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._frame: pd.DataFrame = pd.DataFrame()
        self._roles: RoleMap | None = None
        self._names: list[str] = []
        self._cache: dict[int, np.ndarray] = {}
        #: (column, block) -> the cells of rows block * _BLOCK … as objects, converted when shown
        self._blocks: dict[tuple[int, int], np.ndarray] = {}
        self._numeric: list[bool] = []
        self._direct: list[bool] = []  # numpy numbers: read without conversion
        self._order: np.ndarray | None = None  # row permutation when sorted

    # content ------------------------------------------------------------------------------
    def set_frame(self, frame: pd.DataFrame | None, roles: RoleMap | None = None) -> None:
        """Show another frame (the frame is not copied)."""
        self.beginResetModel()
        self._frame = frame if frame is not None else pd.DataFrame()
        self._roles = roles
        self._names = [str(c) for c in self._frame.columns]
        self._numeric = [
            pd.api.types.is_numeric_dtype(self._frame.iloc[:, j])
            and not pd.api.types.is_bool_dtype(self._frame.iloc[:, j])
            for j in range(len(self._names))
        ]
        self._direct = [
            numeric and self._frame.iloc[:, j].dtype.kind in "iuf"
            for j, numeric in enumerate(self._numeric)
        ]
        self._cache = {}
        self._blocks = {}
        self._order = None
        self.endResetModel()

    def set_roles(self, roles: RoleMap | None) -> None:
        """Update the role line of the headers."""
        self._roles = roles
        if self._names:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self._names) - 1)

    @property
    def frame(self) -> pd.DataFrame:
        return self._frame

    def column_array(self, column: int) -> np.ndarray:
        """The column as a numpy array, converted once and cached (a view for numeric dtypes)."""
        array = self._cache.get(column)
        if array is None:
            series = self._frame.iloc[:, column]
            if self._numeric[column] and series.dtype.kind in "iuf":
                array = series.to_numpy()
            else:
                array = series.to_numpy(dtype=object, na_value=None)
            self._cache[column] = array
        return array

    def cell(self, column: int, row: int) -> Any:
        """The value at frame row ``row``: a text column is converted in blocks of rows as they are
        shown (converting Adult's nine 30,162-record columns at the first paint held the GUI
        thread 35-100 ms, issue 29); a numeric or already converted column is read directly."""
        array = self._cache.get(column)
        if array is None and self._direct[column]:
            array = self.column_array(column)  # a view of the frame's numbers: no conversion
        if array is not None:
            return array[row]
        b = row // _BLOCK
        block = self._blocks.get((column, b))
        if block is None:
            series = self._frame.iloc[b * _BLOCK : (b + 1) * _BLOCK, column]
            block = series.to_numpy(dtype=object, na_value=None)
            self._blocks[(column, b)] = block
        return block[row - b * _BLOCK]

    def source_row(self, row: int) -> int:
        """The frame row shown at view row ``row``."""
        return int(self._order[row]) if self._order is not None else row

    # Qt model interface -------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._names)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return format_cell(self.cell(index.column(), self.source_row(index.row())))
        if role == Qt.ItemDataRole.ToolTipRole:
            # the value whole: a column at its default width cuts long categories
            # ("Married-civ-sp…" on Adult at 1366 × 768)
            return format_cell(self.cell(index.column(), self.source_row(index.row())))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if self._numeric[index.column()]:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Vertical:
            if role == Qt.ItemDataRole.DisplayRole:
                return str(self.source_row(section) + 1)
            return None
        if section >= len(self._names):
            return None
        name = self._names[section]
        spec = self._roles[name] if self._roles is not None and name in self._roles else None
        if role == Qt.ItemDataRole.DisplayRole:
            if spec is None:
                return name
            label = "QI" if spec.role is AttributeRole.QUASI_IDENTIFIER else spec.role.label
            if spec.role is AttributeRole.QUASI_IDENTIFIER:
                label += f" · {spec.kind.value}"
            return f"{name}\n{label}"
        if role == Qt.ItemDataRole.ToolTipRole:
            if spec is None:
                return name
            return f"{name}: {spec.role.value}, {spec.kind.value}"
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the view by a column (missing values last); the frame itself is untouched."""
        if not 0 <= column < len(self._names):
            return
        self.layoutAboutToBeChanged.emit()
        series = self._frame.iloc[:, column].reset_index(drop=True)
        ascending = order == Qt.SortOrder.AscendingOrder
        try:
            ordered = series.sort_values(kind="stable", ascending=ascending, na_position="last")
        except TypeError:  # mixed types in an object column: compare their text
            ordered = series.astype("string").sort_values(
                kind="stable", ascending=ascending, na_position="last"
            )
        self._order = ordered.index.to_numpy(dtype=np.int64)
        self.layoutChanged.emit()


#: Rows :func:`fit_columns` reads per column (as Qt's ``resizeContentsPrecision`` default).
FIT_ROWS = 1000
#: The longest texts (in characters) of a column measured in the view's font.
FIT_CANDIDATES = 5


def fit_columns(view: QTableView, model: DataFrameModel, rows: int = FIT_ROWS) -> list[int]:
    """Set each column of ``view`` (showing ``model``) as wide as its header and its widest text
    among the first ``rows`` rows shown; returns the widths.

    What ``QTableView.resizeColumnsToContents`` does, without asking the model for every cell:
    that asked ``data()`` eight times per cell of the first 1,000 rows, ~450 ms of the GUI thread
    for the 4,306 × 10 classes of an mstk run on UCI Adult (issue 30: no stall above 100 ms). Here
    each column's first rows are formatted in one pass and only its few longest texts are
    measured in the view's font (in a proportional font the longest text is nearly always among
    the longest in characters)."""
    frame = model.frame
    n = min(len(frame), max(0, rows))
    metrics = view.fontMetrics()
    header = view.horizontalHeader()
    # the item delegate's margins (QStyledItemDelegate: text + 2 × (focus frame margin + 1)) and
    # the grid line, with a little room so that no text is elided
    margin = 2 * (view.style().pixelMetric(view.style().PixelMetric.PM_FocusFrameHMargin) + 1) + 4
    widths: list[int] = []
    shown = [model.source_row(r) for r in range(n)]
    for column in range(model.columnCount()):
        if n:
            texts = [format_cell(model.cell(column, r)) for r in shown]
            lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
            top = np.argsort(-lengths, kind="stable")[:FIT_CANDIDATES]
            text_width = max(metrics.horizontalAdvance(texts[i]) for i in top) + margin
        else:
            text_width = 0
        width = max(text_width, header.sectionSizeFromContents(column).width())
        header.resizeSection(column, width)
        widths.append(width)
    return widths
