"""The plan editor (issue 31): the steps of a protection plan, added, reordered, removed and
undone (a ``QUndoStack``), run in the worker, each step's effect shown after the run (values
changed, cells suppressed, records still below k).

The panel holds the plan's JSON steps only; the core checks them
(:func:`~microgui.core.runs.plan.spec.step_from_words`, :func:`plan_from_json`). A plan run is a
run (issue 31): Run plan goes through the controller's run path
(:meth:`~microgui.qt.controller.AppController.start_plan`), so it gets a number in the run
history, is shown in the views, the R-U map and the comparison, and is saved in the project
with its plan and seed (``protect --project P --run N`` replays it). "Save plan…" writes the
plan file that ``microgui protect --plan`` reads; "Copy as command" gives that command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.release.report_steps import step_line
from microgui.core.runs.plan import PLAN_VERSION, Plan, PlanResult, load_plan, plan_from_json
from microgui.core.runs.plan.spec import (
    ALL_KEYS,
    CATEGORICAL_KEYS,
    CONTINUOUS_KEYS,
    STEP_KINDS,
    step_from_words,
)
from microgui.qt.controller import AppController
from microgui.qt.workers import TaskSlot

__all__ = ["PlanPanel", "step_text"]

_HEADERS = ("#", "Step", "Effect after the run", "Still < k")
#: what the "Still < k" column shows for a step before the first step that gives k (a recode or
#: a top-code alone does not aim at k: its count of records below k is in the tooltip)
_NO_K_YET = "–"
#: the "Still < k" of a step that gives k but is not the plan's last: the records the later
#: steps still take on (a microaggregation of the continuous keys leaves the categorical ones
#: to the suppression), in parentheses: an intermediate count, not the release's
_LATER = "({})"
_PLACEHOLDER = {
    "recode": "breaks 0, 25, 35, inf  |  bins 5  |  mapping FILE  |  level 2 FILE",
    "top_bottom": "top 60  |  top 60 = 60+  |  bottom 18",
    "microaggregate": "mdav-generic k 5",
    "suppress": "k 5",
}


def step_text(step: dict[str, Any]) -> str:
    """A step's JSON in a line: 'recode age: breaks 0, 25, inf'."""
    rest = {k: v for k, v in step.items() if k != "step"}
    column = rest.pop("column", None) or rest.pop("columns", None) or "all keys"
    if isinstance(column, list):
        column = ", ".join(column)
    words = ", ".join(f"{k} {v if not isinstance(v, list) else ' '.join(map(str, v))}"
                      for k, v in rest.items())  # fmt: skip
    return f"{step['step']} {column}: {words}"


class _SetSteps(QUndoCommand):
    """One edit of the plan (add, remove, move): the steps before and after it."""

    def __init__(self, panel: PlanPanel, after: list[dict[str, Any]], text: str) -> None:
        super().__init__(text)
        self.panel = panel
        self.before = [dict(s) for s in panel.steps]
        self.after = [dict(s) for s in after]

    def redo(self) -> None:
        self.panel._set_steps(self.after)

    def undo(self) -> None:
        self.panel._set_steps(self.before)


class PlanPanel(QWidget):
    """Edit and run a protection plan; ``plan_finished(PlanResult)`` after each run."""

    plan_finished = Signal(object)  # PlanResult
    plan_failed = Signal(str)
    plan_exported = Signal(object)  # the report written

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.steps: list[dict[str, Any]] = []
        self.folder: Path | None = None  # where the plan's files are (its file's folder)
        self.result: Any = None  # the RunResult of the plan's last run
        self.run_id: int | None = None  # its number in the run history
        self._running: tuple[int, Plan] | None = None  # the run started here, not ended yet
        self.seed: int | None = None  # the seed of the last run, kept with the plan
        self._exporting: Path | None = None
        self.undo_stack = QUndoStack(self)
        self._task = TaskSlot(controller.pool, self)
        controller.add_task_slot(self._task)  # cancelled and waited for when the window closes
        # the panel's own task: the export of the plan's release (the run is the controller's)
        self._task.finished.connect(self._on_exported)
        self._task.failed.connect(self._on_export_failed)
        controller.run_finished.connect(self._on_run_finished)
        controller.run_failed.connect(self._on_run_failed)
        controller.run_cancelled.connect(self._on_run_cancelled)
        controller.run_progress.connect(self._on_run_progress)

        self.kind = QComboBox()
        self.kind.addItems(list(STEP_KINDS))
        self.kind.setToolTip("the kind of step to add")
        self.column = QComboBox()
        self.column.setToolTip("the column the step works on (a microaggregation or a "
                               "suppression: several keys)")  # fmt: skip
        self.words = QLineEdit()
        self.words.setToolTip("the step's parameters, e.g. 'breaks 0, 25, 35, inf'")
        # a narrow dock squeezes the field first: keep room for a few words ("b…" otherwise)
        self.words.setMinimumWidth(12 * self.fontMetrics().averageCharWidth())
        self.add_button = QPushButton("Add step")
        self.add_button.clicked.connect(self.add_from_fields)
        self.words.returnPressed.connect(self.add_from_fields)
        self.kind.currentTextChanged.connect(self._on_kind)
        add_row = QHBoxLayout()
        for w in (self.kind, self.column):
            add_row.addWidget(w)
        add_row.addWidget(self.words, 1)
        add_row.addWidget(self.add_button)

        self.table = QTableWidget(0, len(_HEADERS))
        self.table.setHorizontalHeaderLabels(list(_HEADERS))
        self.table.horizontalHeaderItem(3).setToolTip(
            "records whose key combination fewer than k records share after the step (missing "
            "matches any value once a suppression has run); shown from the first step that "
            "gives k (a microaggregation or a suppression): a recode alone does not aim at k. "
            "In parentheses: a count the later steps still take on (e.g. a microaggregation of "
            "the continuous keys before the suppression of the categorical ones); the "
            "release's is the last step's"
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setMinimumHeight(3 * self.fontMetrics().height())  # the window's minimum
        # the steps keep the room of their number and the start of their text in a narrow dock
        self.table.setMinimumWidth(22 * self.fontMetrics().averageCharWidth())
        self.table.setWordWrap(False)  # one line a step: the dock is short at 1366 x 768
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setColumnWidth(1, 210)

        self.up_button = QPushButton("Up")
        self.down_button = QPushButton("Down")
        self.remove_button = QPushButton("Remove")
        self.undo_button = QPushButton("Undo")
        self.redo_button = QPushButton("Redo")
        # short labels: the dock sits between the side docks (about 720 px wide at 1366 x 768)
        # and the steps' table takes what the buttons leave; the tooltips say it whole
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("open a plan file (protect --plan reads the same file)")
        self.save_button = QPushButton("Save…")
        self.save_button.setToolTip("save the plan as a file for protect --plan")
        self.run_button = QPushButton("Run plan")
        self.run_button.setToolTip("run the plan: a run of the history, shown in the views")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip(
            "write the plan's release and its report (verified once by the release check)"
        )
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.remove_button.clicked.connect(self.remove_selected)
        self.undo_button.clicked.connect(self.undo_stack.undo)
        self.redo_button.clicked.connect(self.undo_stack.redo)
        self.undo_stack.canUndoChanged.connect(self.undo_button.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.redo_button.setEnabled)
        self.open_button.clicked.connect(self._open_dialog)
        self.save_button.clicked.connect(self._save_dialog)
        self.run_button.clicked.connect(self.run)
        self.export_button.clicked.connect(self._export_dialog)
        # the buttons in three columns beside the steps: the dock is short (a tab of the run
        # history, 190 px at 1366 x 768), so the table keeps the height for 4 steps
        buttons = QGridLayout()
        buttons.setSpacing(4)
        order = (self.up_button, self.down_button, self.remove_button,
                 self.undo_button, self.redo_button, self.open_button,
                 self.save_button, self.export_button, self.run_button)  # fmt: skip
        for i, b in enumerate(order):
            buttons.addWidget(b, i // 3, i % 3)
        self.run_button.setDefault(True)

        self.status = QLabel("Add steps, then Run plan: each step's effect shows here.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addLayout(add_row)
        middle = QHBoxLayout()
        middle.addWidget(self.table, 1)
        middle.addLayout(buttons)
        layout.addLayout(middle, 1)
        layout.addWidget(self.status)
        controller.plans_restored.connect(self._on_plans_restored)
        controller.dataset_loaded.connect(lambda _d: self._fill_columns())
        controller.roles_changed.connect(lambda _r: self._fill_columns())
        self._fill_columns()
        self._on_kind(self.kind.currentText())
        self._refresh()

    # ---- editing ----------------------------------------------------------------------------

    def _fill_columns(self) -> None:
        current = self.column.currentText()
        roles = self.controller.roles
        keys = list(roles.quasi_identifiers) if roles is not None else []
        self.column.clear()
        self.column.addItems([ALL_KEYS, CONTINUOUS_KEYS, CATEGORICAL_KEYS, *keys])
        if current:
            self.column.setCurrentText(current)

    def _on_kind(self, kind: str) -> None:
        self.words.setPlaceholderText(_PLACEHOLDER.get(kind, ""))
        if kind in ("recode", "top_bottom") and self.column.currentIndex() < 3:
            self.column.setCurrentIndex(min(3, self.column.count() - 1))
        elif kind in ("microaggregate", "suppress") and self.column.currentIndex() >= 3:
            self.column.setCurrentIndex(0)

    def add_from_fields(self) -> bool:
        """Add the step the three fields describe (refused in the status line when wrong)."""
        try:
            step = step_from_words(
                self.kind.currentText(), self.column.currentText(), self.words.text()
            )
        except MicroguiError as exc:
            self.status.setText(str(exc))
            return False
        self.add_step(step)
        self.words.clear()
        return True

    def add_step(self, step: dict[str, Any]) -> None:
        self.undo_stack.push(_SetSteps(self, [*self.steps, step], f"add {step['step']}"))

    def remove_selected(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.steps):
            after = self.steps[:row] + self.steps[row + 1 :]
            self.undo_stack.push(_SetSteps(self, after, "remove step"))

    def move_selected(self, delta: int) -> None:
        row = self.table.currentRow()
        to = row + delta
        if 0 <= row < len(self.steps) and 0 <= to < len(self.steps):
            after = list(self.steps)
            after[row], after[to] = after[to], after[row]
            self.undo_stack.push(_SetSteps(self, after, "move step"))
            self.table.selectRow(to)

    def _set_steps(self, steps: list[dict[str, Any]]) -> None:
        self.steps = [dict(s) for s in steps]
        self.result = None  # the figures were of another plan
        # the session's plan: saved in the project file (issue 31)
        self.controller.plans = (self.to_json(),) if self.steps else ()
        self._refresh()

    def _on_plans_restored(self, plans: tuple[dict[str, Any], ...]) -> None:
        """A project opened with a plan: its first plan in the editor (undoable)."""
        if plans:
            self.seed = plans[0].get("seed")
            steps = [dict(s) for s in plans[0].get("steps", [])]
            self.undo_stack.push(_SetSteps(self, steps, "open the project's plan"))

    def plan(self) -> Plan:
        """The plan as the core reads it (:class:`MicroguiError` when it is not one)."""
        return plan_from_json(self.to_json(), folder=self.folder)

    def to_json(self) -> dict[str, Any]:
        """The plan's JSON, with the seed of its last run (so that it replays to that run's
        release: ``protect --plan``, ``protect --project P --run plan``)."""
        out: dict[str, Any] = {"plan_version": PLAN_VERSION}
        if self.seed is not None:
            out["seed"] = self.seed
        out["steps"] = [dict(s) for s in self.steps]
        return out

    def _refresh(self) -> None:
        figures = list(self.result.report.get("steps") or []) if self.result is not None else []
        self.table.setRowCount(len(self.steps))
        k_from = next((i for i, s in enumerate(self.steps)
                       if s.get("step") in ("microaggregate", "suppress")), len(self.steps))  # fmt: skip
        for i, step in enumerate(self.steps):
            fig = figures[i] if i < len(figures) else None
            effect = step_line(fig).split(": ", 2)[-1].split("; ")[0] if fig else ""
            below = "" if fig is None else f"{int(fig.get('records_below_k_after') or 0):,}"
            tip = ""
            if fig is not None and i < k_from:
                tip = (f"{below} record(s) below k after this step; no step giving k has run "
                       "yet (a recode alone does not aim at k)")  # fmt: skip
                below = _NO_K_YET
            elif fig is not None and i < len(self.steps) - 1 and below != "0":
                tip = (f"{below} record(s) below k after this step, which the later steps take "
                       "on; the release's count is the last step's")  # fmt: skip
                below = _LATER.format(below)
            for j, text in enumerate((str(i + 1), step_text(step), effect, below)):
                item = QTableWidgetItem(text)
                item.setToolTip(
                    tip if j == 3 and tip else step_line(fig) if j >= 2 and fig else text
                )
                if j == 3:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(i, j, item)
        has = bool(self.steps)
        for b in (self.up_button, self.down_button, self.remove_button, self.save_button):
            b.setEnabled(has)
        self.run_button.setEnabled(has and self.controller.dataset is not None)
        self.export_button.setEnabled(self.result is not None)
        self.undo_button.setEnabled(self.undo_stack.canUndo())
        self.redo_button.setEnabled(self.undo_stack.canRedo())

    # ---- files ------------------------------------------------------------------------------

    def open_plan(self, path: str | Path) -> bool:
        try:
            plan = load_plan(path)
        except MicroguiError as exc:
            self.status.setText(str(exc))
            return False
        self.folder = Path(path).resolve().parent
        self.seed = plan.seed
        self.undo_stack.push(_SetSteps(self, plan.to_json()["steps"], "open plan"))
        self.status.setText(f"opened {Path(path).name}: {len(plan.steps)} step(s)")
        return True

    def save_plan(self, path: str | Path) -> bool:
        from microgui.core.io import write_text_atomic

        try:
            self.plan()
            write_text_atomic(json.dumps(self.to_json(), indent=2) + "\n", Path(path))
        except (MicroguiError, OSError) as exc:
            self.status.setText(str(exc))
            return False
        self.status.setText(f"saved {Path(path).name}: protect --plan {Path(path).name} reads it")
        return True

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open plan", "", "Plan (*.json)")
        if path:
            self.open_plan(path)

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", "plan.json", "Plan (*.json)")
        if path:
            self.save_plan(path)

    def copy_command(self, plan_path: str | Path, output: str = "protected.csv") -> str:
        """``microgui protect … --plan PLAN.json --seed N`` for the clipboard."""
        from microgui.core.release.replay import command_for_plan

        dataset = self.controller.dataset
        if dataset is None:
            return ""
        seed = self.result.report.get("seed") if self.result is not None else None
        command = command_for_plan(
            dataset.source or "TABLE", dataset.roles, plan_path, output, seed=seed,
            order=self.controller.export_options.record_order,
        )  # fmt: skip
        QGuiApplication.clipboard().setText(command.text)
        return command.text

    def export(self, path: str | Path) -> int | None:
        """Write the last run's release to ``path`` and its report beside it
        (:func:`~microgui.core.release.check.export_job`, in the worker: the release check and
        the writing are no GUI-thread work); ``plan_exported(report)`` follows, or the refusal
        in the status line. None when there is no run to export."""
        from microgui.core.release.check import check_export, export_job

        dataset = self.controller.dataset
        if self.result is None or dataset is None:
            self.status.setText("run the plan first")
            return None
        result = self.result
        # the record order of the app's export options (random unless "Keep the input order")
        order = self.controller.export_options.record_order
        job = export_job(dataset, result, path, check=check_export(result), order=order)
        self._exporting = Path(path)
        self.status.setText(f"writing {Path(path).name}…")
        return self._task.start(lambda _progress: job())

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the plan's release", "release.csv")
        if path:
            self.export(path)

    # ---- running ----------------------------------------------------------------------------

    def run(self) -> int | None:
        """Run the plan on the open table as a run of the history (the controller's run path,
        in the worker); None when it cannot start."""
        dataset = self.controller.dataset
        if dataset is None:
            self.status.setText("open a table first")
            return None
        try:
            plan = self.plan()
        except MicroguiError as exc:
            self.status.setText(str(exc))
            return None
        self.status.setText("running the plan…")
        self.run_button.setEnabled(False)
        run_id = self.controller.start_plan(plan)
        self._running = (run_id, plan)
        return run_id

    def cancel(self) -> None:
        if self._running is not None:
            self.controller.cancel_run()

    def _mine(self, run_id: int) -> Plan | None:
        if self._running is not None and self._running[0] == run_id:
            return self._running[1]
        return None

    def _on_run_progress(self, run_id: int, fraction: float, text: str) -> None:
        if self._mine(run_id) is not None:
            self.status.setText(f"running the plan: {fraction:.0%} {text}")

    def _on_run_finished(self, run_id: int, result: Any) -> None:
        plan = self._mine(run_id)
        if plan is None:
            return
        self._running = None
        self.result, self.run_id = result, run_id
        report = result.report
        self.seed = report.get("seed")
        self.controller.plans = (self.to_json(),)  # the project saves it with its seed
        steps = tuple(report.get("steps") or ())
        self.status.setText(
            f"#{run_id}: plan of {len(steps)} step(s): k-anonymity {report.get('k_anonymity')} "
            f"(k = {report.get('k')}), {report.get('seconds', 0):.2f} s; in the run history; "
            "the release check runs when you export"
        )
        self._refresh()
        self.plan_finished.emit(PlanResult(plan, result, steps))

    def _on_run_failed(self, run_id: int, message: str, _details: str) -> None:
        if self._mine(run_id) is None:
            return
        self._running = None
        self.status.setText(message)
        self._refresh()
        self.plan_failed.emit(message)

    def _on_run_cancelled(self, run_id: int) -> None:
        if self._mine(run_id) is None:
            return
        self._running = None
        self.status.setText("plan run cancelled")
        self._refresh()

    def _on_exported(self, _task_id: int, value: Any, _context: Any) -> None:
        name = self._exporting.name if self._exporting is not None else "the release"
        self.status.setText(
            f"exported {name}: k-anonymity {value.get('k_anonymity')}, "
            f"{len(value.get('steps') or [])} step(s) in its report"
        )
        self._exporting = None
        self._refresh()
        self.plan_exported.emit(value)

    def _on_export_failed(self, _task_id: int, message: str, _details: str, _c: Any) -> None:
        self._exporting = None
        self.status.setText(message)
        self._refresh()
        self.plan_failed.emit(message)
