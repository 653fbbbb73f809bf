"""The run history: every finished run with its spec, time and headline measures.

A lazy table model over ``controller.history`` (STYLE.md §5): it copies nothing. Selecting one
run shows it in the views; "Re-run" runs it again from its spec and seed; "Remove" drops it;
"Compare" puts 2–4 selected runs side by side (sweep points among them re-computed first).

Points of a sweep are listed like runs ("#7 sweep"), in italics while they hold only their report
and measures: selecting one re-runs its spec with the same seed in the worker, then shows it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.release.report_html import format_measure
from microgui.core.runs.analysis import measure_catalog
from microgui.qt.controller import AppController
from microgui.qt.history import MAX_COMPARED, HistoryEntry
from microgui.qt.project_restore import compare_runs

__all__ = ["HistoryPanel", "HistoryModel", "HEADLINE_MEASURES"]

#: Measures shown as history columns, when a run has them, with their short headers (the
#: full name is the header's tooltip).
HEADLINE_MEASURES: dict[str, str] = {
    # one name per number (issue 13): "IL" is the headline over every quasi-identifier
    "information_loss_all_qi": "IL %",
    "information_loss": "SSE/SST cont. %",
    "il_lower_bound_best": "Bound %",  # no k-partition of the data can lose less (issue 16)
    "il": "IL1-5",
    "pil": "PIL %",
    "record_linkage": "Linkage %",
    "reidentification_risk_max": "Re-id max %",
    "k_anonymity": "k-anon.",
    # records in groups with one confidential value (issue 29: the verdict's share)
    "homogeneous_percent": "Homog. %",
}

#: The rows of runs the table always has room for (issue 30: at least 5 at 1366 x 768).
MIN_ROWS = 5

_FIXED = ("Run", "Method", "k", "Parameters", "Seed", "Finished")
#: The roles :meth:`HistoryModel.data` answers. A view asks each cell for a dozen roles, several
#: times when its columns fit their contents: the others return at once (issue 30: a reopened
#: 14-run project made 5,000 calls in one turn of the GUI thread).
_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.ToolTipRole,
    }
)

_Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """Rows = the controller's history runs (oldest first); reads them on demand."""

    def __init__(self, controller: AppController) -> None:
        super().__init__()
        self._controller = controller
        self.measure_keys: list[str] = []
        self._catalog = measure_catalog()
        controller.history_changed.connect(self.refresh)

    def refresh(self) -> None:
        self.beginResetModel()
        self._catalog = measure_catalog()
        history = self._controller.history
        self.measure_keys = [
            k for k in HEADLINE_MEASURES if any(e.measures.get(k) is not None for e in history)
        ]
        self.endResetModel()

    def entry(self, row: int) -> HistoryEntry:
        return self._controller.history[row]

    def row_of(self, run_id: int) -> int:
        return next((i for i, e in enumerate(self._controller.history) if e.run_id == run_id), -1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._controller.history)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(_FIXED) + len(self.measure_keys)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        if section < len(_FIXED):
            return _FIXED[section] if role == Qt.ItemDataRole.DisplayRole else None
        key = self.measure_keys[section - len(_FIXED)]
        label, unit, direction, _group = (list(self._catalog.get(key, (key,))) + ["", "", ""])[:4]
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADLINE_MEASURES[key]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{label}" + (f" ({unit})" if unit else "") + f" · {direction} [{key}]"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES or not index.isValid():
            return None
        entry = self.entry(index.row())
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            spec = entry.spec
            if col == 0:
                return f"#{entry.run_id} sweep" if entry.from_sweep else f"#{entry.run_id}"
            if col == 1:
                return spec.method
            if col == 2:
                return str(spec.k)
            if col == 3:
                parts = [f"{k}={v}" for k, v in _non_default(spec.method, spec.params)]
                if spec.strata:
                    parts.append(f"strata={'+'.join(spec.strata)}")
                if spec.block_size is not None:
                    parts.append(f"blocks={spec.block_size}")
                return ", ".join(parts) or "defaults"
            if col == 4:
                return "—" if entry.seed is None else str(entry.seed)
            if col == 5:
                return entry.finished_at.strftime("%H:%M:%S")
            key = self.measure_keys[col - len(_FIXED)]
            return format_measure(entry.measures.get(key))
        if role == Qt.ItemDataRole.TextAlignmentRole and (col == 2 or col >= len(_FIXED)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        shown = entry.run_id == self._controller.shown_run_id
        if role == Qt.ItemDataRole.FontRole and (shown or not entry.has_table):
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(shown)
            # Italic: a sweep point without its table yet (opening it re-runs it).
            font.setItalic(not entry.has_table)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and not entry.has_table and not shown:
            from PySide6.QtGui import QBrush, QColor

            return QBrush(QColor("#555555"))
        if role == Qt.ItemDataRole.ToolTipRole:
            text = (
                f"{entry.name}, finished {entry.finished_at:%Y-%m-%d %H:%M:%S} in "
                f"{entry.seconds:.2f} s"
            )
            if entry.from_sweep and not entry.has_table:
                text += (
                    "\nSweep point: its report and measures only. Select it to re-run its spec "
                    "with the same seed (same result) and show it."
                )
            elif entry.from_sweep:
                text += "\nSweep point, re-computed from its spec and seed."
            elif not entry.has_table:  # a run of a reopened project, not opened yet (issue 30)
                text += (
                    "\nKept in the project: select it to rebuild it from its kept partition."
                    if entry.rebuildable
                    else "\nKept in the project without its partition: select it to re-run its "
                    "spec with the same seed (same result)."
                )
            note = entry.measures_note
            return text + (f"\n{note}" if note else "")
        return None


class HistoryPanel(QWidget):
    """The history table and its buttons. ``error_occurred(message)`` for the window."""

    error_occurred = Signal(str)
    #: a short confirmation for the window's status bar (Copy as command, issue 30)
    message = Signal(str)
    #: the user asked to load run N's settings into the Method panel (issue 30: never implicit)
    load_settings_requested = Signal(int)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._syncing = False
        self.model = HistoryModel(controller)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.view.setAlternatingRowColors(True)
        # One line per run: long parameter lists scroll sideways instead of squeezing the
        # measure columns into elided "11.…".
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.view.selectionModel().selectionChanged.connect(self._on_selection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)

        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run the selected run again from its spec and seed")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Drop the selected runs from the history")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip(
            f"Put 2 to {MAX_COMPARED} selected runs side by side (sweep points among them are "
            "re-computed first with their seeds: same seed, same result)"
        )
        self.command_button = QPushButton("Copy as command")
        self.command_button.setToolTip(
            "Copy the selected run as the microgui protect command line that makes it again "
            "(same roles, parameters and seed); a saved project replays with "
            "microgui protect --project FILE -o OUT"
        )
        self.rerun_button.clicked.connect(self.rerun_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.compare_button.clicked.connect(self.compare_selected)
        self.command_button.clicked.connect(self.copy_command)
        self.hint = QLabel(
            "Finished runs are kept here. Select one to show it; Ctrl+click 2–4 to compare. "
            "Sweep points (italic) keep only their measures: selecting one re-runs it with the "
            "same seed to show it."
        )
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #666;")

        # Issue 30: at 1366 x 768 the table showed 1-2 runs under its buttons and a 2-line
        # hint. The buttons stand beside it, the hint is shown while the history is empty (and
        # is the table's tool tip), and the table keeps room for MIN_ROWS runs.
        self.view.setToolTip(self.hint.text())
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for b in (self.rerun_button, self.remove_button, self.compare_button, self.command_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        table = QVBoxLayout()
        table.setContentsMargins(0, 0, 0, 0)
        table.addWidget(self.view, 1)
        table.addWidget(self.hint)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addLayout(table, 1)
        layout.addLayout(buttons)
        rows = self.view.verticalHeader().defaultSectionSize()
        header = self.view.horizontalHeader().sizeHint().height()
        scroll = self.view.horizontalScrollBar().sizeHint().height()
        self.view.setMinimumHeight(header + MIN_ROWS * rows + scroll + 2 * self.view.frameWidth())

        controller.history_changed.connect(self._after_history_changed)
        self._show_hint_when_empty()
        controller.run_shown.connect(self._on_run_shown)
        controller.busy_changed.connect(lambda _b: self._update_buttons())
        self._update_buttons()

    def _show_hint_when_empty(self) -> None:
        """The hint in place of an empty table; the table (room for MIN_ROWS runs) once a run
        is kept."""
        empty = not self._controller.history
        self.hint.setVisible(empty)
        self.view.setVisible(not empty)

    def selected_ids(self) -> list[int]:
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.model.entry(r).run_id for r in rows]

    def select_runs(self, run_ids: list[int]) -> None:
        """Select these runs in the table (as Ctrl+clicks would)."""
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        selection = QItemSelection()
        for run_id in run_ids:
            row = self.model.row_of(run_id)
            if row >= 0:
                selection.select(
                    self.model.index(row, 0), self.model.index(row, self.model.columnCount() - 1)
                )
        self.view.selectionModel().select(
            selection,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def _on_selection(self, *_args: object) -> None:
        self._update_buttons()
        if self._syncing:
            return
        ids = self.selected_ids()
        if len(ids) == 1 and ids[0] != self._controller.shown_run_id:
            self._controller.show_run(ids[0])

    def _on_run_shown(self, run_id: int) -> None:
        self._syncing = True
        try:
            if self.selected_ids() != [run_id]:
                self.select_runs([run_id])
            row = self.model.row_of(run_id)
            if row >= 0:
                self.view.scrollTo(self.model.index(row, 0))
        finally:
            self._syncing = False
        # The shown run is bold: tell the view its rows changed, so that the columns sized to
        # their contents grow to the bold text instead of cutting it.
        rows, cols = self.model.rowCount(), self.model.columnCount()
        if rows and cols:
            self.model.dataChanged.emit(
                self.model.index(0, 0), self.model.index(rows - 1, cols - 1)
            )

    def _after_history_changed(self) -> None:
        self._show_hint_when_empty()
        shown = self._controller.shown_run_id
        if shown is not None:
            self._on_run_shown(shown)
        self._update_buttons()

    def _update_buttons(self) -> None:
        ids = self.selected_ids()
        self.rerun_button.setEnabled(len(ids) == 1)
        self.remove_button.setEnabled(bool(ids))
        self.compare_button.setEnabled(2 <= len(ids) <= MAX_COMPARED)
        self.command_button.setEnabled(len(ids) == 1)

    def command_text(self, run_id: int) -> str:
        """The command line of run ``run_id`` (its roles, parameters and the seed it used), with
        a comment line for what the command line cannot say."""
        from microgui.core.release.replay import Command, command_for_run
        from microgui.qt.export_options import key_path_for

        entry = self._controller.entry(run_id)
        dataset = entry.dataset
        source = dataset.source if dataset.source is not None else Path("TABLE.csv")
        # The run's last export says its format and the columns it renamed (SPSS/Stata names,
        # issue 30): the command writes the same format with the same names.
        export = self._controller.export_report_of(entry.result) if entry.result else None
        suffix = ".csv"
        renames: dict[str, str] = {}
        if export and export.get("output_format") in ("spss", "stata"):
            suffix = Path(str(export.get("output", ""))).suffix or suffix
            renames = {str(k): str(v) for k, v in (export.get("renamed_columns") or {}).items()}
        # the output in the folder the command is run from (beside the input could be inside
        # the installed package, for the demo, or a folder the user may not write)
        output = Path(f"{source.stem}_protected_k{entry.spec.k}{suffix}")
        options = self._controller.export_options.for_identifiers(dataset.roles.identifiers)
        spec = entry.reproducible_spec
        if spec.plan is not None:  # a plan run (issue 31): its plan file, then --plan
            return self._plan_command(entry.run_id, source, spec, output, options, renames)
        command = command_for_run(
            source,
            dataset.roles,
            spec,
            output,
            csv_options=options.csv if suffix == ".csv" else None,
            pseudonymize=options.pseudonymize,
            key_path=key_path_for(output) if options.write_key else None,
            order=options.record_order,
        )
        # every renamed column named (the CLI splits COLUMN=NAME at the last "=")
        extra = [a for old, new in renames.items() for a in ("--rename", f"{old}={new}")]
        command = Command(command.args + tuple(extra), command.caveats)
        lines = [command.text, *(f"# note: {c}" for c in command.caveats)]
        return "\n".join(lines)

    def _plan_command(
        self,
        run_id: int,
        source: Path,
        spec: Any,
        output: Path,
        options: Any,
        renames: dict[str, str],
    ) -> str:
        """A plan run's command (issue 31): a shell here-document writing its plan file (the
        plan, its files absolute, and the seed the run used), then ``microgui protect DATA
        --plan FILE --seed N`` with the roles and export options: pasted into a shell, the same
        release (byte for byte with the input order kept or the same order seed)."""
        import json

        from microgui.core.release.replay import Command, command_for_plan
        from microgui.qt.export_options import key_path_for

        entry = self._controller.entry(run_id)
        plan_file = Path(f"{source.stem}_plan_{run_id}.json")
        plan = {**(spec.plan_json or {}), "seed": spec.seed}
        command = command_for_plan(
            source, entry.dataset.roles, plan_file, output, seed=spec.seed,
            csv_options=options.csv if output.suffix == ".csv" else None,
            pseudonymize=options.pseudonymize,
            key_path=key_path_for(output) if options.write_key else None,
            order=options.record_order,
        )  # fmt: skip
        extra = [a for old, new in renames.items() for a in ("--rename", f"{old}={new}")]
        command = Command(command.args + tuple(extra), command.caveats)
        text = json.dumps(plan, indent=1)
        lines = [f"cat > {shlex.quote(str(plan_file))} <<'MICROGUI_PLAN'", text, "MICROGUI_PLAN",
                 command.text, *(f"# note: {c}" for c in command.caveats)]  # fmt: skip
        return "\n".join(lines)

    def context_actions(self, run_id: int) -> list[tuple[str, Any]]:
        """The context menu of run ``run_id``'s row: (text, what it does)."""
        return [
            ("Load this run's settings", lambda: self.load_settings_requested.emit(run_id)),
            ("Re-run", lambda: self._controller.rerun(run_id)),
            ("Copy as command", self.copy_command),
        ]

    def _context_menu(self, pos: Any) -> None:
        from PySide6.QtWidgets import QMenu

        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        run_id = self.model.entry(index.row()).run_id
        if self.selected_ids() != [run_id]:
            self.select_runs([run_id])
        menu = QMenu(self.view)
        for text, slot in self.context_actions(run_id):
            menu.addAction(text).triggered.connect(lambda _c=False, f=slot: f())
        menu.exec(self.view.viewport().mapToGlobal(pos))

    def copy_command(self) -> str:
        """Put the selected run's command line on the clipboard and say so in the status bar
        (issue 30: it gave no feedback); returns it ("" when not one run is selected)."""
        ids = self.selected_ids()
        if len(ids) != 1:
            return ""
        text = self.command_text(ids[0])
        QGuiApplication.clipboard().setText(text)
        lines = text.splitlines()  # a plan run's: its plan file's here-document first
        first = next((line for line in lines if line.startswith("microgui ")), lines[0])
        shown = first if len(first) <= 90 else f"{first[:87]}…"
        self.message.emit(f"Copied the command of #{ids[0]} to the clipboard: {shown}")
        return text

    def rerun_selected(self) -> int | None:
        ids = self.selected_ids()
        if len(ids) != 1:
            return None
        return self._controller.rerun(ids[0])

    def remove_selected(self) -> None:
        for run_id in self.selected_ids():
            self._controller.remove_run(run_id)

    def compare_selected(self) -> str:
        """Compare the selected runs; sweep points without their table are re-computed first
        (same seed, same result; the status bar says so). Returns what is being done ("": compared
        at once, or refused with ``error_occurred``)."""
        try:
            return compare_runs(self._controller, self.selected_ids())
        except MicroguiError as exc:  # the wrong number of runs, or a run holds the thread
            self.error_occurred.emit(str(exc))
            return ""


def _non_default(method: str, params: tuple[tuple[str, object], ...]) -> list[tuple[str, object]]:
    """The parameters whose value is not the method's default (the history's Parameters column:
    'ordinal_average=median' beside plain MDAV said nothing; issue 15)."""
    from microgui.core.errors import MicroguiError
    from microgui.core.methods import get_method

    try:
        specs = {p.name: p for p in get_method(method).all_params}
    except (MicroguiError, KeyError):
        return list(params)
    out = []
    for name, value in params:
        spec = specs.get(name)
        try:
            if spec is not None and spec.parse(value) == spec.default:
                continue
        except MicroguiError:
            pass
        out.append((name, value))
    return out
