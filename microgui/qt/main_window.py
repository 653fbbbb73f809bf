"""The main window: panels docked around the groups plot, menus, status bar, errors, export.

MainWindow owns the :class:`AppController` (which owns the run pool). User actions become
controller calls; :class:`MicroguiError` messages become a message box and a status line, never a
crash. Closing the window cancels the run and waits for the pool.
"""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QByteArray, QItemSelection, QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from microgui._version import __version__
from microgui.core.analysis import measure_catalog
from microgui.core.errors import ExportRefused, MicroguiError
from microgui.core.export import ExportCheck, report_path_for
from microgui.core.project_file import Project, clear_autosave, load_project
from microgui.core.runs import RunResult
from microgui.qt.controller import AppController
from microgui.qt.export_options import ExportOptionsDialog, options_text
from microgui.qt.kernel_prep import KernelPrep, KernelStatusLabel
from microgui.qt.models.dataframe_model import DataFrameModel
from microgui.qt.panels.association_panel import AssociationPanel
from microgui.qt.panels.classes_panel import ClassesPanel
from microgui.qt.panels.compare_panel import ComparePanel
from microgui.qt.panels.data_panel import DataPanel
from microgui.qt.panels.dependency_tree_panel import DependencyTreePanel
from microgui.qt.panels.history_panel import HistoryPanel
from microgui.qt.panels.results_panel import ResultsPanel
from microgui.qt.panels.roles_panel import RolesPanel, roles_summary
from microgui.qt.panels.run_panel import RunPanel
from microgui.qt.panels.sweep_dialog import SweepDialog
from microgui.qt.panels.transition_panel import TransitionPanel
from microgui.qt.plots.cluster_scatter import ClusterScatterPlot
from microgui.qt.plots.mst_partition import MstPartitionPlot
from microgui.qt.plots.ru_chart import RuChartPlot, RuPoint
from microgui.qt.settings import UiSettings
from microgui.qt.workers import TaskSlot, make_run_pool

__all__ = ["MainWindow", "ExportOverrideDialog", "PAPERS", "view_rows"]

#: The autosave is written this long after the last change of roles or history.
AUTOSAVE_DELAY_MS = 3000
#: Opening a project with more runs than this asks before re-computing them (issue 12).
RUNS_WITHOUT_ASKING = 200
PROJECT_FILTER = "microgui projects (*.microgui.json *.json);;All files (*)"

#: The papers microgui is built from (see the project's papers list).
PAPERS: tuple[tuple[str, str], ...] = (
    (
        "Sun, Wang, Li, Zhang (2012)",
        "An approximate microaggregation approach for microdata protection. Expert Systems with Applications 39(2)",
    ),
    ("Ramya, Selvaraj, Anandh", "Microaggregation for the protection of microdata"),
    (
        "Sulekha, Arumugam",
        "A survey on microaggregation based privacy preserving data mining techniques",
    ),
    (
        "Domingo-Ferrer, Torra (2005)",
        "Ordinal, continuous and heterogeneous k-anonymity through microaggregation. Data Mining and Knowledge Discovery 11(2)",
    ),
    (
        "Ramana, Valli Kumari",
        "Achieving k-anonymity using Minimum Spanning Tree based Partitioning",
    ),
)


class ExportOverrideDialog(QDialog):
    """Shows why a protected table fails the release check; exporting anyway needs a typed reason."""

    def __init__(
        self, problems: tuple[str, ...], target: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export refused by the release check")
        layout = QVBoxLayout(self)
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        text = QLabel(
            f"<p>The protected table for <b>{html.escape(target.name)}</b> does not pass the release check:</p>"
            f"<ul>{items}</ul><p>Run again with a valid configuration, or export anyway and give the reason. "
            "The reason and the problems are recorded in the report.</p>"
        )
        text.setWordWrap(True)
        layout.addWidget(text)
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("Reason for releasing this table anyway (required)")
        layout.addWidget(self.reason_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton(
            "Export anyway", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.export_button.setEnabled(False)
        self.reason_edit.textChanged.connect(
            # a reason has words, as the core asks (issue 12: "  " or "..." is no reason)
            lambda t: self.export_button.setEnabled(any(ch.isalnum() for ch in t))
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(520, 260)

    def reason(self) -> str:
        return self.reason_edit.text().strip()


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


#: The export dialog's formats (issue 18): the file's extension chooses what is written
#: (:func:`microgui.core.release.release_format`).
#: The report's formats in the "Save report" dialog (issue 18: PDF printed through Qt).
REPORT_FILTERS: tuple[str, ...] = ("HTML (*.html)", "PDF (*.pdf)")
EXPORT_FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CSV (*.csv)", (".csv", ".tsv", ".txt")),
    ("Excel workbook (*.xlsx)", (".xlsx",)),
    ("Parquet (*.parquet)", (".parquet", ".pq")),
    ("SPSS, labels kept (*.sav *.zsav)", (".sav", ".zsav")),
    ("Stata, labels kept (*.dta)", (".dta",)),
)


def with_export_suffix(path: str, picked: str) -> str:
    """The name typed, with the chosen format's extension added when it has none of a known
    format (a name typed without one, under the "Excel workbook" choice, becomes .xlsx)."""
    suffix = Path(path).suffix.lower()
    if any(suffix in exts for _f, exts in EXPORT_FILTERS):
        return path
    for name, exts in EXPORT_FILTERS:
        if name == picked:
            return path + exts[0]
    return path


class MainWindow(QMainWindow):
    """The microgui window. ``exported`` carries the CSV path of a finished export."""

    exported = Signal(object)
    #: a file task ended: the value of its job (an export's report, a report's path)
    file_written = Signal(object)
    error_shown = Signal(str)

    def __init__(
        self, settings: UiSettings | None = None, *, prepare_kernels: bool = False
    ) -> None:
        super().__init__()
        self.settings = settings if settings is not None else UiSettings()
        self.controller = AppController(self)
        self.setAcceptDrops(True)
        self.resize(*_initial_size(self))

        self.plot = ClusterScatterPlot()
        self.tree_panel = DependencyTreePanel(self.controller)
        self.mst_plot = MstPartitionPlot()
        self.data_panel = DataPanel(self.controller)
        self.compare_panel = ComparePanel(self.controller)
        self.ru_chart = RuChartPlot()
        self.association_panel = AssociationPanel(self.controller)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.plot, "Groups plot")
        self.tabs.addTab(self.tree_panel, "Dependency tree")
        self.tabs.addTab(self.mst_plot, "MST partition")
        self.tabs.addTab(self.data_panel, "Data")
        self.tabs.addTab(self.compare_panel, "Compare runs")
        self.tabs.addTab(self.ru_chart, "Risk–utility map")
        # "&&": a single "&" would be taken as a mnemonic; "OLS" keeps the tabs within 1400 px.
        self.tabs.addTab(self.association_panel, "Correlations && OLS")
        self.transition_panel = TransitionPanel(self.controller)
        self.tabs.addTab(self.transition_panel, "Category changes")
        self.tabs.setTabToolTip(
            self.tabs.indexOf(self.transition_panel),
            "For each ordinal or nominal quasi-identifier: records by original and released "
            "category (a transition heatmap with counts)",
        )
        self.tabs.setTabToolTip(
            6,
            "Correlations and a linear regression (OLS) of your choice, original vs protected, "
            "for the run shown",
        )
        self.tabs.setTabToolTip(4, "2 to 4 runs from the history side by side, with their measures")
        self.tabs.setTabToolTip(
            5, "Every run of the history: disclosure risk against information loss"
        )
        self.tabs.setTabToolTip(
            1, "The best dependency tree of the quasi-identifiers and its key attributes (ama)"
        )
        self.tabs.setTabToolTip(
            2, "The minimum spanning tree of the records and the edges cut (mst, mstk)"
        )
        self.setCentralWidget(self.tabs)

        self.run_panel = RunPanel(self.controller)
        self.roles_panel = RolesPanel(self.controller)
        self.results_panel = ResultsPanel(self.controller)
        # The method panel scrolls when its dock is shorter than the panel (a 768 px screen
        # with the parameters open): its rows never overlap (the explanation was drawn over the
        # k row at 1366 x 768).
        self.run_scroll = QScrollArea()
        self.run_scroll.setWidget(self.run_panel)
        self.run_scroll.setWidgetResizable(True)
        self.run_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.run_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # ... but the dock keeps room for the whole panel with its parameters folded (Run and
        # the progress bar in sight without scrolling)
        status_lines = self.run_panel.status_label.fontMetrics().lineSpacing()  # a 2nd line
        self.run_scroll.setMinimumHeight(self.run_panel.minimumSizeHint().height() + status_lines)
        self.run_dock = self._dock(
            "Method", "run_dock", self.run_scroll, Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.roles_dock = self._dock(
            "Columns and roles",
            "roles_dock",
            self.roles_panel,
            Qt.DockWidgetArea.LeftDockWidgetArea,
        )
        self.results_dock = self._dock(
            "Results", "results_dock", self.results_panel, Qt.DockWidgetArea.RightDockWidgetArea
        )
        self.history_panel = HistoryPanel(self.controller)
        # Below the views, between the side docks: the history is a wide table.
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.history_dock = self._dock(
            "Run history",
            "history_dock",
            self.history_panel,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        self.classes_panel = ClassesPanel(self.controller)
        self.classes_dock = self._dock(
            "Generalization classes (mstk)",
            "classes_dock",
            self.classes_panel,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        # Shown when an mstk run has classes (or from the View menu).
        self.classes_dock.hide()
        self.resizeDocks([self.run_dock, self.results_dock], [410, 300], Qt.Orientation.Horizontal)
        self.resizeDocks([self.run_dock, self.roles_dock], [380, 470], Qt.Orientation.Vertical)
        self.resizeDocks([self.history_dock], [190], Qt.Orientation.Vertical)

        self.dataset_label = QLabel("No table open")
        self.statusBar().addPermanentWidget(self.dataset_label)
        # The methods' kernels, prepared in the background once the window shows (issue 15;
        # ``prepare_kernels``: the app turns it on, tests that want it too).
        self.kernel_prep = KernelPrep(self)
        # exports and reports are written off the GUI thread, one at a time (file task)
        self.file_pool = make_run_pool(self)
        self._file_tasks = TaskSlot(self.file_pool, self)
        self._file_tasks.finished.connect(self._file_task_finished)
        self._file_tasks.failed.connect(self._file_task_failed)
        self._file_task_name = ""
        self.kernel_status = KernelStatusLabel(self.kernel_prep)
        self.statusBar().insertPermanentWidget(0, self.kernel_status)
        if prepare_kernels:
            QTimer.singleShot(0, self.kernel_prep, self.kernel_prep.start)
        self.error_box: QMessageBox | None = None
        self.override_dialog: ExportOverrideDialog | None = None
        self.about_box: QMessageBox | None = None
        self.sweep_dialog: SweepDialog | None = None
        self.last_error = ""
        self._pending_open: Path | None = None
        self._mst_pending: tuple[Any, Any, Any] | None = None
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self._make_menus()
        ctl = self.controller
        ctl.dataset_loaded.connect(self._on_dataset_loaded)
        ctl.roles_changed.connect(self._on_roles_changed)
        ctl.load_failed.connect(self._on_load_failed)
        ctl.load_started.connect(lambda _p: self._update_actions())
        ctl.load_progress.connect(
            lambda path, fraction, status: self.statusBar().showMessage(
                f"Opening {Path(path).name}: {fraction:.0%} ({status})…"
            )
        )
        ctl.load_cancelled.connect(self._on_load_cancelled)
        ctl.run_started.connect(
            lambda _i, spec: self.statusBar().showMessage(f"Running {spec.method}, k = {spec.k}…")
        )
        ctl.run_finished.connect(self._on_run_finished)
        ctl.run_failed.connect(self._on_run_failed)
        ctl.run_cancelled.connect(lambda _i: self.statusBar().showMessage("Run cancelled.", 5000))
        ctl.busy_changed.connect(lambda _b: self._update_actions())
        ctl.selection_changed.connect(self._on_selection_changed)
        ctl.history_changed.connect(self._update_ru_chart)
        ctl.run_shown.connect(self.ru_chart.set_current)
        ctl.comparison_changed.connect(self._on_comparison_changed)
        self.ru_chart.run_clicked.connect(ctl.show_run)
        self.run_panel.sweep_requested.connect(self.open_sweep_dialog)
        ctl.sweep_started.connect(self._on_sweep_started)
        ctl.sweep_finished.connect(
            lambda _i, points: self.statusBar().showMessage(
                f"Sweep done: {sum(p.report is not None for p in points)} of {len(points)} "
                "run(s) in the history and on the risk–utility map.",
                15000,
            )
        )
        ctl.sweep_cancelled.connect(
            lambda _i, points: self.statusBar().showMessage(
                f"Sweep cancelled; {len(points)} finished run(s) kept in the history.", 15000
            )
        )
        ctl.sweep_failed.connect(
            lambda _i, message, details: self.show_error(message, details, "The sweep failed")
        )
        ctl.point_opening.connect(lambda _i, text: self.statusBar().showMessage(text, 15000))
        for panel in (self.roles_panel, self.run_panel, self.history_panel):
            panel.error_occurred.connect(lambda message: self.show_error(message))
        # Autosave for crash recovery: a minute after the last change at the latest, a few
        # seconds after roles or the history changed; removed on a clean exit (closeEvent).
        self._autosave_timer = QTimer(self)
        self._autosave_timer.setSingleShot(True)
        self._autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
        self._autosave_timer.timeout.connect(self.autosave)
        for signal in (
            ctl.roles_changed,
            ctl.history_changed,
            ctl.dataset_loaded,
            ctl.hierarchies.changed,  # attached hierarchy files are kept too (issue 13)
        ):
            signal.connect(lambda *_args: self._autosave_timer.start())
        self._update_title()
        self._update_actions()
        self._restore_geometry()

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    # menus --------------------------------------------------------------------------------
    def _make_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = QAction("&Open…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.triggered.connect(self.open_dialog)
        self.demo_action = QAction("Open &demo", self)
        self.demo_action.triggered.connect(self.open_demo)
        self.recent_menu = QMenu("&Recent files", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.export_action = QAction("&Export protected table…", self)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.triggered.connect(self.export_dialog)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        self.quit_action.triggered.connect(self.close)
        self.open_project_action = QAction("Open &project…", self)
        self.open_project_action.setToolTip(
            "A saved project: its table, roles and runs (the runs are re-computed, same seeds)"
        )
        self.open_project_action.triggered.connect(self.open_project_dialog)
        self.save_project_action = QAction("&Save project…", self)
        self.save_project_action.setShortcut(QKeySequence.StandardKey.Save)
        self.save_project_action.setToolTip(
            "Roles, kinds and run specifications as JSON (the data stay in their file)"
        )
        self.save_project_action.triggered.connect(self.save_project_dialog)
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.demo_action)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.open_project_action)
        file_menu.addAction(self.save_project_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_action)
        self.export_options_action = QAction("Export &options…", self)
        self.export_options_action.setToolTip(
            "CSV separator, decimal mark and encoding; identifier columns released as pseudonyms"
        )
        self.export_options_action.triggered.connect(self.export_options_dialog)
        file_menu.addAction(self.export_options_action)
        self.report_action = QAction("Save &report…", self)
        self.report_action.setToolTip(
            "The release report (HTML or PDF) of the run shown, or the comparison's when its "
            "tab is open"
        )
        self.report_action.triggered.connect(self.report_dialog)
        file_menu.addAction(self.report_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        self.run_action = QAction("&Run", self)
        self.run_action.setShortcut(QKeySequence("Ctrl+R"))
        self.run_action.triggered.connect(self.run_panel.run)
        self.sweep_action = QAction("&Sweep…", self)
        self.sweep_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.sweep_action.setToolTip("Run a grid of methods × k × parameters")
        self.sweep_action.triggered.connect(self.open_sweep_dialog)
        self.cancel_action = QAction("&Cancel", self)
        self.cancel_action.triggered.connect(self.controller.cancel_run)
        for action in (self.run_action, self.sweep_action, self.cancel_action):
            run_menu.addAction(action)
        view_menu = self.menuBar().addMenu("&View")
        for dock in (
            self.run_dock,
            self.roles_dock,
            self.results_dock,
            self.history_dock,
            self.classes_dock,
        ):
            view_menu.addAction(dock.toggleViewAction())
        help_menu = self.menuBar().addMenu("&Help")
        self.about_action = QAction("&About microgui", self)
        self.about_action.triggered.connect(self.show_about)
        help_menu.addAction(self.about_action)
        self._fill_recent_menu()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.settings.recent_files()
        for path in recent:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_file(p))
        if not recent:
            empty = self.recent_menu.addAction("(none)")
            empty.setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            clear = self.recent_menu.addAction("Clear list")
            clear.triggered.connect(self.settings.clear_recent_files)

    def _update_actions(self) -> None:
        self.export_action.setEnabled(
            self.controller.result is not None and not self.controller.is_running
        )
        self.report_action.setEnabled(bool(self.controller.history))
        has_data = self.controller.dataset is not None
        self.run_action.setEnabled(has_data and not self.controller.is_running)
        self.sweep_action.setEnabled(has_data)
        self.cancel_action.setEnabled(self.controller.is_running or self.controller.is_loading)

    def _update_title(self) -> None:
        dataset = self.controller.dataset
        name = dataset.name if dataset is not None else ""
        self.setWindowTitle(f"{name} — microgui" if name else "microgui")
        self.setWindowFilePath(
            str(dataset.source) if dataset is not None and dataset.source else ""
        )

    # messages -----------------------------------------------------------------------------
    def show_error(self, message: str, details: str = "", title: str = "microgui") -> QMessageBox:
        """Tell the user what went wrong (message box, not blocking, and the status line)."""
        self.last_error = message
        short = message if len(message) <= 120 else message[:119] + "…"
        self.statusBar().showMessage(short, 15000)
        if self.error_box is not None:
            self.error_box.close()
        # Core messages start in lower case (they also end up inside sentences on the CLI).
        text = message[:1].upper() + message[1:]
        box = QMessageBox(
            QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self
        )
        if details:
            box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.error_box = box
        box.open()
        self.error_shown.emit(message)
        return box

    def show_about(self) -> QMessageBox:
        papers = "".join(f"<li>{html.escape(a)}: <i>{html.escape(t)}</i></li>" for a, t in PAPERS)
        box = QMessageBox(self)
        box.setWindowTitle("About microgui")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            f"<h3>microgui {html.escape(__version__)}</h3>"
            "<p>Microaggregation for statistical disclosure control: protect microdata so that every "
            "released record is shared by at least k records on its quasi-identifiers.</p>"
            f"<p>Built from these papers:</p><ul>{papers}</ul>"
        )
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        self.about_box = box
        box.open()
        return box

    # opening ------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        from microgui.core.io import file_dialog_filter

        path, _filter = QFileDialog.getOpenFileName(
            self, "Open a table", self.settings.last_directory(), file_dialog_filter()
        )
        if path:
            self.open_file(path)

    def open_file(self, path: str | Path) -> int:
        """Start reading a table in the background; returns the load id.

        ``controller.dataset_loaded`` follows on success (the file joins the recent files);
        on failure the reason is shown and the current table stays.
        """
        path = Path(path)
        self._pending_open = path
        self.statusBar().showMessage(f"Opening {path.name}…")
        return self.controller.open_file(path)

    def _on_load_failed(self, path: Any, message: str, details: str) -> None:
        self._pending_open = None
        self._update_actions()
        self.show_error(message, details, title=f"Cannot open {Path(path).name}")

    def _on_load_cancelled(self, path: Any) -> None:
        self._pending_open = None
        self._update_actions()
        self.statusBar().showMessage(f"Opening {Path(path).name} cancelled.", 10000)

    def open_demo(self) -> bool:
        """Open the bundled demo table (about 4,000 synthetic persons)."""
        try:
            self.controller.load_demo()
        except MicroguiError as exc:
            self.show_error(str(exc), title="Cannot open the demo")
            return False
        return True

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()
            path = urls[0].toLocalFile()
            # Open after the drop returns, so that the drag source is not kept waiting.
            QTimer.singleShot(0, lambda: self.open_file(path))

    # controller signals -------------------------------------------------------------------
    def _on_dataset_loaded(self, dataset: Any) -> None:
        pending, self._pending_open = self._pending_open, None
        if (
            pending is not None
            and dataset.source is not None
            and pending.resolve() == Path(dataset.source).resolve()
        ):
            self.settings.add_recent_file(pending)
            self.settings.set_last_directory(pending.resolve().parent)
        self.plot.clear()
        self.mst_plot.clear()
        self._update_title()
        self._update_actions()
        frame = dataset.frame
        self.dataset_label.setText(
            f"{dataset.name}: {len(frame):,} records × {len(frame.columns)} columns"
        )
        self.statusBar().showMessage(
            f"Opened {dataset.name}. {roles_summary(dataset.roles)}.", 10000
        )

    def _on_roles_changed(self, roles: Any) -> None:
        if self.controller.result_is_stale:
            self.statusBar().showMessage(
                f"Roles changed ({roles_summary(roles)}); run again to apply them.", 10000
            )

    def _on_run_finished(self, _run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        ctl = self.controller
        self.plot.set_run(result, ctl.projection)
        # A hidden view is drawn when its tab is shown: drawing every view at once held the
        # event loop for over 100 ms after a large run (issue 6).
        self._mst_pending = (result, ctl.projection, ctl.mst_layout)
        if self.tabs.currentWidget() is self.mst_plot:
            self._draw_pending_mst()
        if self.classes_panel.classes is not None:
            self.classes_dock.show()
        self._update_actions()
        self.statusBar().showMessage(
            f"{result.spec.method}, k = {result.spec.k}: {result.n_groups:,} groups, "
            f"{result.information_loss_text}, {result.seconds:.2f} s",
            0,
        )

    def _draw_pending_mst(self) -> None:
        pending, self._mst_pending = self._mst_pending, None
        if pending is not None:
            self.mst_plot.set_run(*pending)
            self.mst_plot.set_selection(self.controller.selection)

    def _on_tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.mst_plot:
            self._draw_pending_mst()

    def _on_selection_changed(self, mask: Any) -> None:
        """Show the selected records: selected rows in the data table (scrolled to the first)
        and ringed in the MST view."""
        self.mst_plot.set_selection(mask)
        view = self.data_panel.view
        model = self.data_panel.model
        selection_model = view.selectionModel()
        if mask is None:
            selection_model.clearSelection()
            return
        if model.rowCount() != len(mask):
            return
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
        selected = np.flatnonzero(mask)
        shown = ", ".join(f"{r + 1:,}" for r in selected[:8]) + (", …" if len(selected) > 8 else "")
        self.statusBar().showMessage(
            f"{len(selected):,} record(s) selected, highlighted in the data table (rows {shown}).",
            15000,
        )
        if len(rows):
            view.scrollTo(model.index(int(rows[0]), 0), view.ScrollHint.PositionAtTop)
            selection_model.setCurrentIndex(
                model.index(int(rows[0]), 0), QItemSelectionModel.SelectionFlag.NoUpdate
            )
        if self.tabs.currentWidget() not in (self.data_panel, self.mst_plot, self.compare_panel):
            self.tabs.setCurrentWidget(self.data_panel)

    def _on_run_failed(self, _run_id: int, message: str, details: str) -> None:
        self._update_actions()
        self.show_error(message, details, title="The run failed")

    # sweeps -------------------------------------------------------------------------------
    def open_sweep_dialog(self) -> SweepDialog:
        """Show the sweep dialog (made once, kept: it shows the running sweep's progress)."""
        if self.sweep_dialog is None:
            self.sweep_dialog = SweepDialog(self.controller, self)
        dialog = self.sweep_dialog
        if not self.controller.is_sweeping:
            try:
                dialog.prefill(self.run_panel.spec())
            except MicroguiError:
                pass  # no method: nothing to prefill
        was_visible = dialog.isVisible()
        dialog.show()
        if was_visible:
            dialog.raise_()  # already open behind the window: bring it to the front
        return dialog

    def _on_sweep_started(self, _sweep_id: int, total: int) -> None:
        self.statusBar().showMessage(
            f"Sweep of {total} run(s): each appears on the risk–utility map as it finishes…"
        )
        self.tabs.setCurrentWidget(self.ru_chart)

    # history, comparison and reports -----------------------------------------------------
    def _update_ru_chart(self) -> None:
        ctl = self.controller
        points = [RuPoint(e.run_id, e.spec.method, e.spec.k, e.measures) for e in ctl.history]
        self.ru_chart.set_runs(points, measure_catalog())
        self.ru_chart.set_current(ctl.shown_run_id)
        self._update_actions()

    def _on_comparison_changed(self, run_ids: Any) -> None:
        if run_ids:
            self.tabs.setCurrentWidget(self.compare_panel)
            names = ", ".join(f"#{i}" for i in run_ids)
            self.statusBar().showMessage(f"Comparing runs {names} side by side.", 15000)

    def report_dialog(self) -> None:
        comparison = self._report_is_comparison()
        stem = "comparison" if comparison else "run"
        folder = self.settings.last_directory() or "."
        path, picked = QFileDialog.getSaveFileName(
            self,
            "Save the report",
            str(Path(folder) / f"{stem}_report.html"),
            ";;".join(REPORT_FILTERS),
        )
        if path:
            if Path(path).suffix.lower() not in (".html", ".htm", ".pdf"):
                path += ".pdf" if picked.startswith("PDF") else ".html"
            self.save_report(path, comparison=comparison, background=True)

    def _report_is_comparison(self) -> bool:
        return bool(self.controller.compared) and self.tabs.currentWidget() is self.compare_panel

    def save_report(
        self, path: str | Path, *, comparison: bool | None = None, background: bool = False
    ) -> bool:
        """Write the report of the run shown (or of the comparison) to ``path`` atomically, as
        PDF when its name ends in ``.pdf``, else HTML; True when it was written.
        ``comparison=None``: the comparison when its tab is open.

        A single run's report is its release report (issue 18: fingerprint, roles, promises
        verified on the protected table, overrides, references; the export's report when this
        run was exported, with the release file's SHA-256)."""
        from microgui.core.export import protected_table
        from microgui.core.io import FileWriter, write_files_atomic
        from microgui.core.release_report import ReleaseReport
        from microgui.core.report_html import build_report_html, report_run
        from microgui.qt.report_pdf import report_pdf

        ctl = self.controller
        if comparison is None:
            comparison = self._report_is_comparison()
        path = Path(path)
        if path.suffix == "":
            path = path.with_suffix(".html")
        as_pdf = path.suffix.lower() == ".pdf"
        if comparison:
            entries = [ctl.entry(i) for i in ctl.compared]
        elif ctl.shown_run_id is not None:
            entries = [ctl.entry(ctl.shown_run_id)]
        else:
            entries = []
        if not entries:
            self.show_error("Run a method (or choose runs to compare) before saving a report.")
            return False
        charts = self._report_charts(entries, comparison=comparison)
        runs = [report_run(e.name, e.result, e.measures, e.finished_at) for e in entries]
        # The correlations tab's table, when it shows this very run (computed in its worker).
        shown = self.association_panel.correlations
        correlations = (
            shown.table
            if not comparison and shown is not None and shown.run_id == entries[0].run_id
            else None
        )
        make_html: Any
        title = "microgui report"
        if comparison:

            def make_html(chart_html: Any = None) -> str:
                return build_report_html(
                    runs,
                    measure_catalog(),
                    charts=charts,
                    correlations=correlations,
                    chart_html=chart_html,
                )

        else:
            entry = entries[0]
            exported = ctl.export_report_of(entry.result)
            release = ReleaseReport(
                entry.dataset,
                entry.result,
                protected_table(entry.result),
                exported if exported is not None else entry.result.report,
                name=entry.name,
                measures=entry.measures,
                finished=entry.finished_at,
                charts=charts,
                correlations=correlations,
            )
            make_html, title = release.html, release.title
        # never a file the runs read: the data file, each run's hierarchy files (issue 12)
        read = [e.dataset.source for e in entries]
        read += [Path(p) for e in entries for _column, p in e.spec.hierarchies]
        read += self.controller.read_files()

        def job() -> Path:
            """The checks on the released table, the page and its PDF, and the write: off the
            GUI thread when ``background`` (QTextDocument and QImage work in any thread)."""
            writer: Any
            try:
                if as_pdf:
                    data = report_pdf(make_html, charts, title=title)
                    writer = FileWriter(lambda target: target.write_bytes(data), "a PDF report")
                else:
                    text = make_html()
                    writer = lambda handle: handle.write(text)  # noqa: E731
                write_files_atomic([(path, writer)], protect_from=read)
            except OSError as exc:
                raise ExportRefused(f"cannot write {path.name}: {exc.strerror or exc}") from exc
            return path

        def done(_written: Any) -> None:
            self.settings.set_last_directory(path.resolve().parent)
            self.statusBar().showMessage(f"Saved the report to {path.name}.", 10000)

        if background:
            return self._start_file_task(path.name, job, done, "Cannot save the report")
        try:
            job()
        except MicroguiError as exc:
            self.show_error(str(exc), title="Cannot save the report")
            return False
        done(path)
        return True

    def _report_charts(self, entries: list[Any], *, comparison: bool) -> list[Any]:
        """The report's charts, built in core from released or aggregated values only: each
        run's released group values (on the screen's axes when they are columns), the group
        sizes and the risk–utility map of the measures. Never a picture of the screen's plots,
        which draw the original records (issue 12)."""
        from microgui.core.report_charts import (
            group_sizes_chart,
            released_values_chart,
            ru_map_chart,
        )
        from microgui.qt.plots.ru_chart import axis_title

        options = self.compare_panel.plot.options if comparison else self.plot.options
        axes = (options.x_axis, options.y_axis)
        charts = [released_values_chart(e.result, e.name, axes=axes) for e in entries]
        charts.append(group_sizes_chart([(e.name, e.result) for e in entries]))
        drawn = set(self.ru_chart.drawn_ids)
        xk, yk = self.ru_chart.options.x_measure, self.ru_chart.options.y_measure
        if drawn and xk and yk:
            catalog = measure_catalog()
            charts.append(
                ru_map_chart(
                    [
                        (e.name, e.measures.get(xk), e.measures.get(yk))
                        for e in self.controller.history
                        if e.run_id in drawn
                    ],
                    axis_title(catalog.get(xk, ()), xk),
                    axis_title(catalog.get(yk, ()), yk),
                    x_direction=self.ru_chart.direction(xk),
                    y_direction=self.ru_chart.direction(yk),
                )
            )
        return [c for c in charts if c is not None]

    # export -------------------------------------------------------------------------------
    def default_export_path(self) -> Path:
        ctl = self.controller
        dataset = ctl.result_dataset or ctl.dataset
        stem = (
            dataset.source.stem if dataset is not None and dataset.source is not None else "table"
        )
        k = ctl.result.spec.k if ctl.result is not None else 0
        folder = self.settings.last_directory() or (
            str(dataset.source.parent) if dataset and dataset.source else "."
        )
        # A table read from SPSS or Stata goes back in its own format, labels kept (issue 18).
        ext = ".csv"
        if dataset is not None and dataset.source is not None:
            if dataset.source.suffix.lower() in (".sav", ".zsav", ".dta"):
                ext = dataset.source.suffix.lower()
        return Path(folder) / f"{stem}_protected_k{k}{ext}"

    def export_dialog(self) -> None:
        if self.controller.result is None:
            self.show_error("Run a method before exporting.")
            return
        default = self.default_export_path()
        chosen = next(
            (f for f, exts in EXPORT_FILTERS if default.suffix.lower() in exts),
            EXPORT_FILTERS[0][0],
        )
        path, picked = QFileDialog.getSaveFileName(
            self,
            "Export the protected table",
            str(default),
            ";;".join(f for f, _ in EXPORT_FILTERS),
            chosen,
        )
        if path:
            self.export_to(with_export_suffix(path, picked), background=True)

    def export_options_dialog(self) -> ExportOptionsDialog:
        """File → Export options…: opens the dialog (non-modal); its OK sets the options."""
        ctl = self.controller
        # the identifiers tagged now and those of the run an export would write (its roles may
        # be older than the current tagging)
        identifiers = list(ctl.roles.identifiers) if ctl.roles is not None else []
        if ctl.result is not None:
            identifiers += [c for c in ctl.result.roles.identifiers if c not in identifiers]
        dialog = ExportOptionsDialog(ctl.export_options, identifiers, self)

        def accepted() -> None:
            ctl.export_options = dialog.options()
            said = ctl.export_options.describe()
            self.statusBar().showMessage(
                f"Export options: {said}." if said else "Export options: the defaults.", 10000
            )

        dialog.accepted.connect(accepted)
        self.export_options_window = dialog
        dialog.open()
        return dialog

    def export_to(self, path: str | Path, *, background: bool = False) -> bool:
        """Export the current result to ``path`` (and its report beside it).

        When the release check fails, the problems are shown in :class:`ExportOverrideDialog`;
        the export then happens only if the user types a reason and confirms. Returns True when
        the files were written now. ``background`` (the dialog's way): the files are written by
        the file task, off the GUI thread (:attr:`file_written` when done); True when started.
        """
        path = Path(path)
        if path.suffix == "":
            path = path.with_suffix(".csv")
        ctl = self.controller
        try:
            check = ctl.check_current_export()
        except MicroguiError as exc:
            self.show_error(str(exc), title="Cannot export")
            return False
        if ctl.result_is_stale:
            self.statusBar().showMessage(
                "Exporting the last run (its roles differ from the current tagging).", 10000
            )
        if not check.ok:
            dialog = ExportOverrideDialog(check.problems, path, self)
            dialog.accepted.connect(  # the override answers this check: the writer compares
                lambda: self._write_export(
                    path, dialog.reason(), background=background, shown=check
                )
            )
            self.override_dialog = dialog
            dialog.open()
            return False
        return self._write_export(path, None, background=background)

    def _write_export(
        self,
        path: Path,
        override: str | None,
        *,
        background: bool = False,
        shown: ExportCheck | None = None,
    ) -> bool:
        try:
            result, job = self.controller.export_job(path, override=override, shown=shown)
        except MicroguiError as exc:
            self.show_error(str(exc), title="Export refused")
            return False

        def done(report: dict[str, Any]) -> None:
            self.controller.record_export(result, report)
            self._exported(path, override, report)

        if background:
            return self._start_file_task(path.name, job, done, "Export refused")
        try:
            report = job()
        except MicroguiError as exc:
            self.show_error(str(exc), title="Export refused")
            return False
        done(report)
        return True

    # files written off the GUI thread ------------------------------------------------------
    def _start_file_task(
        self, name: str, job: Any, done: Any, failure_title: str = "Cannot write"
    ) -> bool:
        """Write files in the file task's worker thread (an export, a report: seconds at a
        million records); ``done(value)`` runs in the GUI thread after. One at a time: a second
        one is refused while the first is written (it is never cancelled half-way)."""
        if self._file_tasks.busy:
            self.show_error(
                f"Still writing {self._file_task_name}; try again when it is done.",
                title="Busy writing",
            )
            return False
        self._file_task_name = name
        self.statusBar().showMessage(f"Writing {name}…")
        self._file_tasks.start(lambda _progress: job(), (done, failure_title))
        return True

    def _file_task_finished(self, _task_id: int, value: Any, context: Any) -> None:
        done, _title = context
        done(value)
        self.file_written.emit(value)

    def _file_task_failed(self, _task_id: int, message: str, details: str, context: Any) -> None:
        _done, title = context
        self.statusBar().clearMessage()
        self.show_error(message, details, title=title)

    def _exported(self, path: Path, override: str | None, report: dict[str, Any]) -> None:
        self.settings.set_last_directory(path.resolve().parent)
        note = " (override recorded)" if override else ""
        options = options_text(report)
        self.statusBar().showMessage(
            f"Exported {report.get('n_records', 0):,} records to {path.name} and the report to "
            f"{report_path_for(path).name}{note}" + (f" ({options})" if options else "") + ".",
            15000,
        )
        self.exported.emit(path)

    # geometry and closing -----------------------------------------------------------------
    def _restore_geometry(self) -> None:
        geometry = self.settings.geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)

    # projects --------------------------------------------------------------------------------
    def open_project_dialog(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Open a project", self.settings.last_directory(), PROJECT_FILTER
        )
        if path:
            self.open_project(path)

    def open_project(self, path: str | Path | Project) -> bool:
        """Open a project file (or an autosaved :class:`Project`); False, with the reason
        shown, when it cannot be read or its table is gone."""
        name = "the autosave" if isinstance(path, Project) else Path(path).name
        try:
            project = path if isinstance(path, Project) else load_project(path)
            folder = None if isinstance(path, Project) else Path(path).parent
            if len(project.runs) > RUNS_WITHOUT_ASKING and not self._confirm_rerun(project):
                project = replace(project, runs=(), comparison=())
            source = None if isinstance(path, Project) else Path(path)
            self.controller.open_project(project, folder, source=source)
        except MicroguiError as exc:
            self.show_error(str(exc), title=f"Cannot open {name}")
            return False
        self.statusBar().showMessage("Opening the project's table…")
        return True

    def _confirm_rerun(self, project: Project) -> bool:
        """Ask before re-computing a project's many runs (a file may hold thousands)."""
        answer = QMessageBox.question(
            self,
            "Re-compute the project's runs?",
            f"This project holds {len(project.runs):,} runs. Opening it re-computes each of them "
            "(same seeds, same results), which may take long. Re-compute them all now? "
            "(No: open the table with the project's roles only.)",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def save_project_dialog(self) -> None:
        if self.controller.dataset is None:
            self.show_error("Open a table first: a project holds a table's roles and runs.")
            return
        path, _filter = QFileDialog.getSaveFileName(
            self, "Save the project", self.settings.last_directory(), PROJECT_FILTER
        )
        if path:
            if not path.endswith(".json"):
                path += ".microgui.json"
            self.save_project_to(path)

    def save_project_to(self, path: str | Path) -> bool:
        try:
            self.controller.save_project(path)
        except MicroguiError as exc:
            self.show_error(str(exc), title="Cannot save the project")
            return False
        self.statusBar().showMessage(f"Project saved to {Path(path).name}.", 10000)
        return True

    def autosave(self) -> None:
        """Write the crash-recovery autosave (not for throw-away windows)."""
        if not self.settings.persist:
            return
        try:
            self.controller.autosave()
        except (MicroguiError, OSError) as exc:  # never let recovery get in the user's way
            self.statusBar().showMessage(f"Autosave failed: {exc}", 10000)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Cancel the run and wait for the pool before the widgets go away."""
        self._autosave_timer.stop()
        # a file being written is finished, never cut (its rename makes it whole or absent)
        self.file_pool.waitForDone(120_000)
        self.controller.shutdown()
        self.kernel_prep.shutdown()
        if self.settings.persist:
            clear_autosave()  # a clean exit: nothing to recover
        if self.settings.persist:
            self.settings.set_geometry(QByteArray(self.saveGeometry()))
            self.settings.set_window_state(QByteArray(self.saveState()))
            self.settings.sync()
        for box in (self.error_box, self.about_box, self.override_dialog, self.sweep_dialog):
            if box is not None:
                box.close()
        super().closeEvent(event)


def _initial_size(window: QWidget) -> tuple[int, int]:
    """1400 × 900, or the screen's free area when it is smaller (a 1366 × 768 laptop): a window
    larger than its screen hides the Results panel (issue 15)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return 1400, 900
    free = screen.availableGeometry()
    return min(1400, free.width()), min(900, free.height())
