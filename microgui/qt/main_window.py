"""The main window: panels docked around the groups plot, menus, status bar, errors, export.

MainWindow owns the :class:`AppController` (which owns the run pool). User actions become
controller calls; :class:`MicroguiError` messages become a message box and a status line, never a
crash. Closing the window cancels the run and waits for the pool. The menus are built by
:mod:`microgui.qt.menus`, exports by :mod:`microgui.qt.export_dialogs`, reports by
:mod:`microgui.qt.report_saving`, both written by the window's :mod:`microgui.qt.file_tasks`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QTabWidget,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.metrics.disclosure import release_verdict
from microgui.core.runs import RunResult
from microgui.core.runs.analysis import measure_catalog
from microgui.core.runs.project_file import Project, clear_autosave, load_project
from microgui.core.views.ru_frame import cached_unprotected_reference
from microgui.qt import gui_gc
from microgui.qt.about import PAPERS, about_box
from microgui.qt.controller import AppController
from microgui.qt.export_dialogs import (
    EXPORT_FILTERS,
    AttributeDisclosureDialog,
    ExportOverrideDialog,
    default_export_path,
    export_dialog,
    export_options_dialog,
    export_to,
    with_export_suffix,
)
from microgui.qt.export_options import ExportOptionsDialog
from microgui.qt.file_tasks import FileTasks
from microgui.qt.kernel_prep import KernelPrep, KernelStatusLabel
from microgui.qt.menus import make_menus, update_actions
from microgui.qt.panels.association_panel import AssociationPanel
from microgui.qt.panels.classes_panel import ClassesPanel
from microgui.qt.panels.compare_panel import ComparePanel
from microgui.qt.panels.data_panel import DataPanel, view_rows
from microgui.qt.panels.dependency_tree_panel import DependencyTreePanel
from microgui.qt.panels.history_panel import HistoryPanel
from microgui.qt.panels.results_panel import ResultsPanel
from microgui.qt.panels.risk_panel import RiskPanel
from microgui.qt.panels.roles_panel import RolesPanel, roles_summary
from microgui.qt.panels.run_panel import RunPanel, sweep_done_text
from microgui.qt.panels.sweep_dialog import SweepDialog
from microgui.qt.panels.transition_panel import TransitionPanel
from microgui.qt.panels.utility_panel import UtilityPanel
from microgui.qt.plots.cluster_scatter import ClusterScatterPlot
from microgui.qt.plots.mst_partition import MstPartitionPlot
from microgui.qt.plots.ru_chart import RuChartPlot, RuPoint
from microgui.qt.report_saving import REPORT_FILTERS, report_dialog, save_report
from microgui.qt.settings import UiSettings
from microgui.qt.view_bar import views_with_bar

# EXPORT_FILTERS, ExportOverrideDialog, PAPERS, REPORT_FILTERS, view_rows, with_export_suffix:
# kept importable from here, where they were before their own modules (issue 28).
__all__ = [
    "MainWindow",
    "EXPORT_FILTERS",
    "ExportOverrideDialog",
    "PAPERS",
    "REPORT_FILTERS",
    "view_rows",
    "with_export_suffix",
    "project_name",
]

#: The autosave is written this long after the last change of roles or history.
AUTOSAVE_DELAY_MS = 3000
#: Opening a project with more runs than this asks before re-computing them (issue 12).
RUNS_WITHOUT_ASKING = 200
#: The height the roles dock keeps when the Method dock grows for its settings: its six rows
#: at 1366 x 768 (issue 30).
ROLES_DOCK_MIN_PX = 320
PROJECT_FILTER = "microgui projects (*.microgui.json *.json);;All files (*)"


def project_name(path: str | Path) -> str:
    """A project file's name as the title shows it: without ``.microgui.json`` (or ``.json``)."""
    name = Path(path).name
    for suffix in (".microgui.json", ".json"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


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
        gui_gc.hold()  # Python's collector runs in the GUI thread while this window lives
        self._gc_held = True
        from microgui.qt.stall_watch import watch_from_environment

        #: opt-in (MICROGUI_STALL_WATCH=1): logs the GUI thread's stack at each stall > 100 ms
        self.stall_watch = watch_from_environment()
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
        # issue 29: distributions, crosstabs, associations and a model, categorical data too
        self.utility_panel = UtilityPanel(self.controller)
        self.tabs.addTab(self.utility_panel, "Utility")
        # issue 29: the table's disclosure risk before any run, and before -> after of a run
        self.risk_panel = RiskPanel(self.controller)
        self.tabs.addTab(self.risk_panel, "Risk")
        self.tabs.setTabToolTip(
            self.tabs.indexOf(self.risk_panel),
            "The disclosure risk of the table on its categorical keys (k-anonymity, worst key "
            "combinations, individual risk, SUDA2, l-diversity), and before/after of the run shown",
        )
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
        # issue 30: every view in sight (a wrapping bar of buttons, grouped), no scroll arrows
        central, self.view_bar = views_with_bar(
            self.tabs,
            (
                ("Records", (self.plot, self.data_panel, self.mst_plot, self.tree_panel)),
                ("Runs", (self.compare_panel, self.ru_chart)),
                (
                    "Analyses",
                    (
                        self.utility_panel,
                        self.risk_panel,
                        self.association_panel,
                        self.transition_panel,
                    ),
                ),
            ),
        )
        self.setCentralWidget(central)

        self.run_panel = RunPanel(self.controller)
        self.roles_panel = RolesPanel(self.controller)
        self.results_panel = ResultsPanel(self.controller)
        # The method's settings scroll when the dock is shorter than they are (a 768 px screen
        # with the parameters open): their rows never overlap (the explanation was drawn over
        # the k row at 1366 x 768), and Run, Sweep, Cancel and the progress bar stay below the
        # scrolling part, always in sight (issue 30).
        self.run_scroll = self.run_panel.settings_area
        # ... the dock keeps room for the settings with the parameters folded and the note on
        # the run shown (nothing to scroll on a laptop: the note hid the Parameters header)
        note = self.run_panel.shown_box
        room = note.sizeHint().height() if note.isHidden() else 0
        # (its text takes two lines in the dock, and the longest headline, t-closeness's, all
        # four lines the method's description keeps: a 1366 x 768 review)
        room += self.run_panel.shown_note.fontMetrics().lineSpacing() if room else 0
        self.run_scroll.setMinimumHeight(self.run_panel.settings.minimumSizeHint().height() + room)
        # and its width (it does not scroll across): a dock squeezed by a resize cut Cancel and
        # the note's button at 1366 x 768 (issue 30)
        bar = self.run_scroll.verticalScrollBar().sizeHint().width()
        self.run_scroll.setMinimumWidth(self.run_panel.settings.minimumSizeHint().width() + bar)
        self.run_dock = self._dock(
            "Method", "run_dock", self.run_panel, Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.roles_dock = self._dock(
            "Columns and roles",
            "roles_dock",
            self.roles_panel,
            Qt.DockWidgetArea.LeftDockWidgetArea,
        )
        # issue 30: the figures scroll when the dock is shorter than they are (the verdict, the
        # IL-by-attribute table and wrapped values were cut at 1366 x 768)
        self.results_scroll = QScrollArea()
        self.results_scroll.setWidget(self.results_panel)
        self.results_scroll.setWidgetResizable(True)
        self.results_scroll.setFrameShape(QFrame.Shape.NoFrame)
        # across only when a run's figures ask for more than the dock has (after Adult and
        # Census runs they asked 233 px of a 226 px viewport at 1366 x 768, and were cut while
        # this was switched off); a wider minimum would push the window past a laptop's width
        self.results_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.results_scroll.setMinimumWidth(240)  # the figures' names and values side by side
        self.results_dock = self._dock(
            "Results", "results_dock", self.results_scroll, Qt.DockWidgetArea.RightDockWidgetArea
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
        # Shown when an mstk run has classes (or from the View menu), as a tab beside the run
        # history: side by side they left the history 0 rows at 1366 x 768 (issue 30).
        self.tabifyDockWidget(self.history_dock, self.classes_dock)
        self.classes_dock.hide()
        # issue 31: the protection plan's editor, a tab beside the run history
        from microgui.qt.panels.plan_panel import PlanPanel

        self.plan_panel = PlanPanel(self.controller)
        self.plan_dock = self._dock(
            "Protection plan", "plan_dock", self.plan_panel, Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self.tabifyDockWidget(self.history_dock, self.plan_dock)
        self.history_dock.raise_()
        self.resizeDocks([self.run_dock, self.results_dock], [410, 300], Qt.Orientation.Horizontal)
        self.resizeDocks([self.run_dock, self.roles_dock], [380, 470], Qt.Orientation.Vertical)
        self.resizeDocks([self.history_dock], [190], Qt.Orientation.Vertical)
        # the Method dock takes the height its settings ask for from the roles dock below it,
        # down to six roles rows (issue 30: at 1920 x 1080 the open parameters showed ~3 rows
        # and scrolled while the roles dock grew); again when the window's height, the method
        # or the parameters' fold change (deferred: after the layout has settled)
        # ... until the user moves the separator between the two docks by hand: their height
        # is then left as they set it (``method_dock_user_sized``; View -> Reset layout clears it)
        self.method_dock_user_sized = False
        self._separator_press: int | None = None
        self._fit_method_timer = QTimer(self)
        self._fit_method_timer.setSingleShot(True)
        self._fit_method_timer.setInterval(0)
        self._fit_method_timer.timeout.connect(self.fit_method_dock)
        self.run_panel.params_toggle.toggled.connect(lambda *_a: self._fit_method_timer.start())
        self.run_panel.about_toggled.connect(lambda *_a: self._fit_method_timer.start())
        self.run_panel.method_combo.currentIndexChanged.connect(
            lambda *_a: self._fit_method_timer.start()
        )

        self.dataset_label = QLabel("No table open")
        self.statusBar().addPermanentWidget(self.dataset_label)
        # The methods' kernels, prepared in the background once the window shows (issue 15;
        # ``prepare_kernels``: the app turns it on, tests that want it too).
        self.kernel_prep = KernelPrep(self)
        # exports and reports are written off the GUI thread, one at a time (file task)
        self.file_tasks = FileTasks(self, self.show_error, self.statusBar())
        self.file_tasks.written.connect(self.file_written)
        self.file_pool = self.file_tasks.pool
        self.kernel_status = KernelStatusLabel(self.kernel_prep)
        self.statusBar().insertPermanentWidget(0, self.kernel_status)
        if prepare_kernels and self.kernel_prep.child_command:
            # the child process at once (issue 30, session 45): a first run pressed at start
            # waits for its compiles, and this process compiles nothing meanwhile
            self.kernel_prep.start()
        elif prepare_kernels:  # in this process: once the window shows (compiles hold the GIL)
            QTimer.singleShot(0, self.kernel_prep, self.kernel_prep.start)
        # what the preparation and the first run leave (modules, kernels) lives as long as the
        # process: out of the collector's reach, so a full collection stays short (gui_gc)
        self.kernel_prep.finished.connect(lambda *_a: gui_gc.settle())
        self._settle_after_run = True
        self.controller.run_finished.connect(self._settle_after_first_run)
        self.error_box: QMessageBox | None = None
        self.override_dialog: ExportOverrideDialog | None = None
        self.rename_dialog: QDialog | None = None  # issue 30: names for SPSS/Stata
        self.disclosure_dialog: AttributeDisclosureDialog | None = None  # issue 29
        self.about_box: QMessageBox | None = None
        self.sweep_dialog: SweepDialog | None = None
        self.last_error = ""
        self._pending_open: Path | None = None
        self._mst_pending: tuple[Any, Any, Any] | None = None
        #: The history changed while the R-U map was hidden: it is drawn when shown.
        self._ru_pending = False
        self.tabs.currentChanged.connect(self._on_tab_changed)

        make_menus(self)
        ctl = self.controller
        ctl.dataset_loaded.connect(self._on_dataset_loaded)
        ctl.roles_changed.connect(self._on_roles_changed)
        ctl.load_failed.connect(self._on_load_failed)
        ctl.load_started.connect(self._on_load_started)
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
        ctl.history_changed.connect(self._on_history_changed)
        # the title names the project and shows "*" for runs or exports not saved (issue 30)
        ctl.history_changed.connect(self._update_title)
        ctl.project_changed.connect(self._update_title)
        ctl.analyses.reference_measured.connect(lambda *_a: self._update_ru_chart())
        ctl.run_shown.connect(self.ru_chart.set_current)
        ctl.comparison_changed.connect(self._on_comparison_changed)
        self.ru_chart.run_clicked.connect(ctl.show_run)
        self.run_panel.sweep_requested.connect(self.open_sweep_dialog)
        ctl.sweep_started.connect(self._on_sweep_started)
        ctl.sweep_finished.connect(
            lambda _i, points: self.statusBar().showMessage(
                sweep_done_text(points, reason=False), 15000
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
        self.history_panel.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.history_panel.load_settings_requested.connect(self.run_panel.load_run_settings)
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
        # View -> Reset layout goes back to this (issue 30)
        self.default_state = QByteArray(self.saveState())
        self.layout_note = ""
        self._restore_geometry()

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            # issue 30: every panel can be hidden and shown again from the View menu
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        return dock

    # menus (microgui.qt.menus) --------------------------------------------------------------
    def _update_actions(self) -> None:
        update_actions(self)

    def _update_title(self) -> None:
        """ "survey — microgui", or "survey.microgui.json (survey) — microgui" once the session
        was saved to or opened from a project file (issue 30), with a "*" while it holds runs
        or exports no project file keeps (:attr:`AppController.is_modified`)."""
        ctl = self.controller
        dataset = ctl.dataset
        name = dataset.name if dataset is not None else ""
        project = ctl.project_file
        if project is not None:
            title = (
                f"{project_name(project)}[*] ({name})" if name else f"{project_name(project)}[*]"
            )
        else:
            title = f"{name}[*]" if name else ""
        self.setWindowTitle(f"{title} — microgui" if title else "microgui")
        self.setWindowModified(bool(title) and ctl.is_modified)
        source = project if project is not None else (dataset.source if dataset else None)
        self.setWindowFilePath(str(source) if source else "")

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
        self.about_box = about_box(self)
        self.about_box.open()
        return self.about_box

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
        if not self.may_drop_runs(path.name):
            return -1
        self._pending_open = path
        self.statusBar().showMessage(f"Opening {path.name}…")
        return self.controller.open_file(path)

    def open_path(self, path: str | Path) -> bool:
        """Open what ``path`` holds: a project saved by the app (``.json``, which no table
        reader takes) or a table; False when a project is refused (the reason shown). Used by
        ``microgui gui FILE`` and by a dropped file, so that a project named there opens as one
        instead of being refused as a table of an unknown format."""
        if Path(path).suffix.lower() == ".json":
            return self.open_project(path)
        return self.open_file(path) >= 0

    def _on_load_started(self, path: Any) -> None:
        self._update_actions()
        if self.controller.dataset is None:  # the table's place says it is coming
            self.dataset_label.setText(f"Reading {Path(path).name}…")

    def _no_table_label(self) -> None:
        if self.controller.dataset is None:
            self.dataset_label.setText("No table open")

    def _on_load_failed(self, path: Any, message: str, details: str) -> None:
        self._no_table_label()
        self._pending_open = None
        self._update_actions()
        self.show_error(message, details, title=f"Cannot open {Path(path).name}")

    def _on_load_cancelled(self, path: Any) -> None:
        self._no_table_label()
        self._pending_open = None
        self._update_actions()
        self.statusBar().showMessage(f"Opening {Path(path).name} cancelled.", 10000)

    def open_demo(self, *, background: bool = False) -> bool:
        """Open the bundled demo table (about 4,000 synthetic persons): at once, or with
        ``background`` read by the table loader (``controller.dataset_loaded`` follows; the app
        at start-up, so that the window paints and answers while the table is read)."""
        if not self.may_drop_runs("the demo table"):
            return False
        if background:
            self._pending_open = None  # the demo never joins the recent files
            self.statusBar().showMessage("Reading the demo table…")
            self.controller.open_demo()
            return True
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
            QTimer.singleShot(0, lambda: self.open_path(path))

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
        elif self.controller.dataset is not None:
            # the opening's message counts the roles as they are now: it said "9
            # quasi-identifiers" beside a roles dock with 8 once one was tagged confidential
            opened = f"Opened {self.controller.dataset.name}. "
            if self.statusBar().currentMessage().startswith(opened):
                self.statusBar().showMessage(f"{opened}{roles_summary(roles)}.", 10000)

    def _on_run_finished(self, _run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        ctl = self.controller
        self.plot.set_run(result, ctl.projection)
        # A hidden view is drawn when its tab is shown: drawing every view at once held the
        # event loop for over 100 ms after a large run (issue 6).
        self._mst_pending = (result, ctl.projection, ctl.mst_layout)
        if self.tabs.currentWidget() is self.mst_plot:
            self._draw_pending_mst()
        if self.classes_panel.classes is not None and self.classes_dock.isHidden():
            self.classes_dock.show()
            self.history_dock.raise_()  # the history stays in sight; the classes are its tab
        self._update_actions()
        self.statusBar().showMessage(
            f"{result.spec.method}, k = {result.spec.k}: {result.n_groups:,} groups, "
            f"{result.information_loss_text}, {result.seconds:.2f} s; "
            f"{release_verdict(result.report).short}",  # issue 29: the one verdict's words
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
        elif self.tabs.currentWidget() is self.ru_chart:
            self.ensure_ru_chart()

    def _on_selection_changed(self, mask: Any) -> None:
        """Show the selected records: selected rows in the data table (scrolled to the first)
        and ringed in the MST view."""
        self.mst_plot.set_selection(mask)
        if not self.data_panel.select_records(mask):
            return
        selected = np.flatnonzero(mask)
        shown = ", ".join(f"{r + 1:,}" for r in selected[:8]) + (", …" if len(selected) > 8 else "")
        self.statusBar().showMessage(
            f"{len(selected):,} record(s) selected, highlighted in the data table (rows {shown}).",
            15000,
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
            screen = self.screen() or QGuiApplication.primaryScreen()
            if screen is not None:  # a laptop's 768 px: the buttons on the screen
                self.sweep_dialog.fit_to(screen.availableGeometry())
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
    def _on_history_changed(self) -> None:
        if self.controller.restoring_history:
            # a reopened project's runs: the history table now, the R-U map in the next turn
            # of the event loop (issue 30: both in one turn stalled the GUI thread)
            QTimer.singleShot(0, self, self._update_ru_chart)
            return
        self._update_ru_chart()

    def _update_ru_chart(self) -> None:
        """Give the R-U map the history's runs: now when its view is shown, else when it is
        (issue 30: the map, its labels and legend were rebuilt behind another view after
        every run; see :meth:`ensure_ru_chart`)."""
        if self.tabs.currentWidget() is self.ru_chart:
            self._draw_ru_chart()
        else:
            self._ru_pending = True
        self._update_actions()

    def ensure_ru_chart(self) -> None:
        """Bring the R-U map up to date with the history if it waits to be shown (before
        reading its measures or exporting it)."""
        if self._ru_pending:
            self._draw_ru_chart()

    def _draw_ru_chart(self) -> None:
        self._ru_pending = False
        ctl = self.controller
        points = [RuPoint(e.run_id, e.spec.method, e.spec.k, e.measures) for e in ctl.history]
        # the unprotected table's point (measured in a view task after the run is shown:
        # ViewAnalyses.unprotected_reference) and the measures recommended for its
        # quasi-identifiers (issue 29)
        reference = next(
            (
                ref
                for e in reversed(ctl.history)
                if (
                    ref := cached_unprotected_reference(e.dataset)
                    or (e.outcome.unprotected if e.outcome is not None else None)
                )
            ),
            None,
        )
        self.ru_chart.set_runs(
            points, measure_catalog(), reference=reference, recommended=ctl.recommended_measures()
        )
        self.ru_chart.set_current(ctl.shown_run_id)

    def _on_comparison_changed(self, run_ids: Any) -> None:
        if run_ids:
            self.tabs.setCurrentWidget(self.compare_panel)
            names = ", ".join(f"#{i}" for i in run_ids)
            self.statusBar().showMessage(f"Comparing runs {names} side by side.", 15000)

    def report_dialog(self) -> None:
        report_dialog(self)

    def save_report(
        self, path: str | Path, *, comparison: bool | None = None, background: bool = False
    ) -> bool:
        """Write the report of the run shown (or of the comparison when ``comparison``, or
        when None and its tab is open) to ``path``, HTML or PDF (:func:`save_report`)."""
        return save_report(self, path, comparison=comparison, background=background)

    # export -------------------------------------------------------------------------------
    def default_export_path(self) -> Path:
        return default_export_path(self)

    def export_dialog(self) -> None:
        export_dialog(self)

    def export_options_dialog(self) -> ExportOptionsDialog:
        """File → Export options…: opens the dialog (non-modal); its OK sets the options."""
        return export_options_dialog(self)

    def export_to(self, path: str | Path, *, background: bool = False) -> bool:
        """Export the current result to ``path`` and its report beside it (:func:`export_to`:
        the release check first; ``background``: written by the file task)."""
        return export_to(self, path, background=background)

    # geometry and closing -----------------------------------------------------------------
    def _restore_geometry(self) -> None:
        """The window's last size, place and dock arrangement, unless they no longer fit the
        screen (a laptop after a large monitor): then the default layout (issue 30)."""
        geometry = self.settings.geometry()
        if geometry is None:
            return
        made_for = self.settings.screen_size()
        screen = self.screen() or QGuiApplication.primaryScreen()
        free = screen.availableGeometry() if screen is not None else None
        larger = (
            made_for is not None
            and free is not None
            and (made_for[0] > free.width() or made_for[1] > free.height())
        )
        if not larger:
            self.restoreGeometry(geometry)
        if larger or not fits_a_screen(self.geometry()):
            self.layout_note = (
                "The window's stored size no longer fits this screen: the default layout is used."
            )
            self.statusBar().showMessage(self.layout_note, 15000)
            self.resize(*_initial_size(self))
            return
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)
            self.method_dock_user_sized = self.settings.method_dock_user_sized()
            if not self.tabifiedDockWidgets(self.plan_dock):  # a layout saved before issue 31
                self.tabifyDockWidget(self.history_dock, self.plan_dock)
                self.history_dock.raise_()

    def save_layout(self) -> None:
        """Keep the window's geometry and dock arrangement, and the free area of the screen
        they were made for (a layout made on a larger screen is not restored: issue 30)."""
        self.settings.set_geometry(QByteArray(self.saveGeometry()))
        self.settings.set_window_state(QByteArray(self.saveState()))
        self.settings.set_method_dock_user_sized(self.method_dock_user_sized)
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is not None:
            free = screen.availableGeometry()
            self.settings.set_screen_size(free.width(), free.height())

    def reset_layout(self) -> None:
        """View -> Reset layout: the panels where they were at the first start, all shown but
        the mstk classes (shown by an mstk run), and the window sized to the screen."""
        if self.isMaximized() or self.isFullScreen():
            self.showNormal()
        self.restoreState(self.default_state)
        self.method_dock_user_sized = False
        for dock in (self.run_dock, self.roles_dock, self.results_dock, self.history_dock):
            dock.show()
        self.history_dock.raise_()
        self.resize(*_initial_size(self))
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is not None:
            free = screen.availableGeometry()
            self.move(free.topLeft())
        self.statusBar().showMessage("Layout reset to the default.", 5000)

    def fit_method_dock(self) -> None:
        """Give the Method dock the height its settings ask for (their whole height, nothing
        to scroll), taken from the roles dock below it as long as that keeps
        :data:`ROLES_DOCK_MIN_PX`; never more than it asks. Nothing when either dock is hidden,
        floating or not in the left column with the other, nor once the user has moved the
        separator between them (:attr:`method_dock_user_sized`)."""
        run, roles = self.run_dock, self.roles_dock
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        if (
            self.method_dock_user_sized
            or not run.isVisible()
            or not roles.isVisible()
            or run.isFloating()
            or roles.isFloating()
            or self.dockWidgetArea(run) != left
            or self.dockWidgetArea(roles) != left
            or run in self.tabifiedDockWidgets(roles)
        ):
            return
        total = run.height() + roles.height()
        fixed = run.height() - self.run_scroll.viewport().height()  # buttons, status, title
        settings = self.run_panel.settings
        # the whole height: wrapped labels kept at their text's height can ask more as their
        # minimum than as their hint (the method's explanation unfolded)
        wanted = max(settings.sizeHint().height(), settings.minimumSizeHint().height()) + fixed
        height = max(min(wanted, total - ROLES_DOCK_MIN_PX), run.minimumSizeHint().height())
        if abs(height - run.height()) > 2:
            self.resizeDocks([run, roles], [height, total - height], Qt.Orientation.Vertical)
            self.layout().activate()  # now, not at a later turn: the next look sees it

    def event(self, event: QEvent) -> bool:
        """Notes a drag of a dock separator that changed the Method dock's height (QMainWindow
        moves its separators in its own mouse events): :meth:`fit_method_dock` then leaves it."""
        kind = event.type()
        if kind == QEvent.Type.DeferredDelete:
            self._drain_pools()
        if kind == QEvent.Type.MouseButtonPress:
            height = self.run_dock.height()
            handled = super().event(event)
            # accepted only when the press started a separator move (QWidget ignores the rest)
            self._separator_press = height if event.isAccepted() else None
            return handled
        handled = super().event(event)
        if kind == QEvent.Type.MouseButtonRelease and self._separator_press is not None:
            if self.run_dock.height() != self._separator_press:
                self.method_dock_user_sized = True
                self._fit_method_timer.stop()
            self._separator_press = None
        return handled

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().height() != event.oldSize().height():
            self._fit_method_timer.start()

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if not getattr(self, "_fitted", False):
            self._fitted = True
            # A window manager adds its frame (the title bar) only after the first show, and
            # Qt learns its size later still: at the first turn frameGeometry() is the bare
            # window, so a 1366 x 768 window on a 768 px screen kept its status bar 25 px below
            # the screen's edge under openbox. Fit again once the frame is known (fitting is
            # idempotent: a window inside the free area is left alone).
            for delay in FIT_DELAYS_MS:
                QTimer.singleShot(delay, self, self.fit_on_screen)

    def fit_on_screen(self) -> None:
        """Shrink and move the window so that its frame (title bar included) is inside the
        screen's free area: the first window was taller than a 768 px screen, its status bar
        off-screen (issue 30)."""
        if self.isMaximized() or self.isFullScreen():
            return
        screen = self.screen() or QGuiApplication.primaryScreen()
        # Qt's offscreen platform has no real screen (800 x 800): the tests size their windows
        if screen is None or QGuiApplication.platformName() == "offscreen":
            return
        free, frame = screen.availableGeometry(), self.frameGeometry()
        extra_w = frame.width() - self.width()
        extra_h = frame.height() - self.height()
        width = min(self.width(), free.width() - extra_w)
        height = min(self.height(), free.height() - extra_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(max(width, self.minimumWidth()), max(height, self.minimumHeight()))
            frame = self.frameGeometry()
        if not free.contains(frame):
            x = min(max(frame.x(), free.x()), free.right() + 1 - frame.width())
            y = min(max(frame.y(), free.y()), free.bottom() + 1 - frame.height())
            self.move(max(x, free.x()), max(y, free.y()))

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
        if not self.may_drop_runs(name):
            return False
        try:
            project = path if isinstance(path, Project) else load_project(path)
            folder = None if isinstance(path, Project) else Path(path).parent
            kept = len(project.run_reports) == len(project.runs) and all(project.run_reports)
            if (
                not kept  # runs without their reports are re-computed when the project opens
                and len(project.runs) > RUNS_WITHOUT_ASKING
                and not self._confirm_rerun(project)
            ):
                project = replace(project, runs=(), comparison=())
            source = None if isinstance(path, Project) else Path(path)
            self.controller.open_project(project, folder, source=source)
        except MicroguiError as exc:
            self.show_error(str(exc), title=f"Cannot open {name}")
            return False
        if source is not None:  # File → Recent lists projects too (issue 30)
            self.settings.add_recent_file(source)
            self.settings.set_last_directory(source.resolve().parent)
        self.statusBar().showMessage("Opening the project's table…")
        return True

    #: Ask before opening another table drops unsaved runs (issue 30); the tests of other
    #: things turn it off (tests/qt/conftest.py), those of the question turn it on.
    confirm_dropping_runs = True

    def may_drop_runs(self, opening: str | None) -> bool:
        """Whether opening ``opening`` (None: closing the window) may go on: no unsaved run, or
        the user saved them or chose to discard them (Save / Discard / Cancel)."""
        doing = f"Opening {opening}" if opening is not None else "Closing microgui"
        after = f"once {opening} is opened" if opening is not None else "after microgui closes"
        unsaved = self.controller.unsaved_runs
        exports = self.controller.unsaved_exports
        if not (unsaved or exports) or not self.confirm_dropping_runs:
            return True
        names = ", ".join(f"#{i}" for i in unsaved[:8]) + (" …" if len(unsaved) > 8 else "")
        # issue 30: an export's record order is kept by the project file only (the report never
        # holds its seed): unsaved, that file cannot be written again by protect --project
        order_note = (
            f" The record order of {exports} export(s) is in no project file either: "
            "protect --project could not write those files again."
            if exports
            else ""
        )
        text = (
            f"{len(unsaved)} run(s) of this table ({names}) are in no project file. {doing} "
            f"drops them from the history.{order_note} Save them in a project first?"
            if unsaved
            else f"The record order of {exports} export(s) is in no project file: "
            f"protect --project could not write those files again {after}. "
            "Save the project first?"
        )
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self,
            "Unsaved runs" if unsaved else "Unsaved exports",
            text,
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        if answer == buttons.Discard:
            what = f"{len(unsaved)} unsaved run(s)" if unsaved else f"{exports} export order(s)"
            self.statusBar().showMessage(f"{what} discarded.", 10000)
            return True
        if answer == buttons.Save:
            self.save_project_dialog()
            return not self.controller.is_modified  # a save cancelled keeps the table open
        return False

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
        self.settings.add_recent_file(path)  # File → Recent lists projects too (issue 30)
        return True

    def autosave(self) -> None:
        """Write the crash-recovery autosave (not for throw-away windows)."""
        if not self.settings.persist:
            return
        try:
            self.controller.autosave()
        except (MicroguiError, OSError) as exc:  # never let recovery get in the user's way
            self.statusBar().showMessage(f"Autosave failed: {exc}", 10000)

    def _settle_after_first_run(self, *_a: object) -> None:
        if self._settle_after_run:  # once the views have drawn it (their modules imported)
            self._settle_after_run = False
            QTimer.singleShot(2000, self, gui_gc.settle)

    def quit_asking(self) -> bool:
        """File → Quit: close the window as its close button does, asking first about runs
        and export orders that are in no project file (issue 30); False when the user cancels."""
        self._ask_on_close = True
        try:
            return self.close()
        finally:
            self._ask_on_close = False

    _ask_on_close = False

    def _drain_pools(self) -> None:
        """Before the window is deleted: cancel what its controller's pools still run and wait
        for it. A task started after the close (a signal queued before it: a run shown, its R-U
        reference measured) was left running, and deleting the window deleted its pools, whose
        destructor waited for it while this thread held the GIL it needed: a hang for good (CI,
        session 45). Every pool also waits for its tasks when its owner goes
        (:func:`~microgui.qt.workers.make_run_pool`); cancelling first makes that wait short."""
        self.controller.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask about unsaved runs when the user closes the window (its close button, File →
        Quit; a close by the program - a screenshot, a probe - does not ask), then cancel the
        run and wait for the pool before the widgets go away."""
        if (event.spontaneous() or self._ask_on_close) and not self.may_drop_runs(None):
            event.ignore()
            return
        self._autosave_timer.stop()
        # a file being written is finished, never cut (its rename makes it whole or absent)
        self.file_pool.waitForDone(120_000)
        self.controller.shutdown()
        self.kernel_prep.shutdown()
        if self.stall_watch is not None:
            self.stall_watch.stop()
        if self._gc_held:  # the workers are done: automatic collection may come back
            self._gc_held = False
            gui_gc.release()
        if self.settings.persist:
            clear_autosave()  # a clean exit: nothing to recover
        if self.settings.persist:
            self.save_layout()
            self.settings.sync()
        for box in (
            self.error_box,
            self.about_box,
            self.override_dialog,
            self.disclosure_dialog,
            self.sweep_dialog,
        ):
            if box is not None:
                box.close()
        super().closeEvent(event)


#: When the first window is fitted to the screen's free area (ms after it is shown): at once,
#: and again after the window manager has framed it.
FIT_DELAYS_MS = (0, 250, 1000)


def fits_a_screen(rect: Any, slack: int = 8) -> bool:
    """Whether ``rect`` (a window's geometry) lies within the free area of one of the screens,
    give or take ``slack`` pixels."""
    for screen in QGuiApplication.screens():
        free = screen.availableGeometry().adjusted(-slack, -slack, slack, slack)
        if free.contains(rect):
            return True
    return False


def _initial_size(window: QWidget) -> tuple[int, int]:
    """1400 × 900, or the screen's free area when it is smaller (a 1366 × 768 laptop): a window
    larger than its screen hides the Results panel (issue 15)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return 1400, 900
    free = screen.availableGeometry()
    return min(1400, free.width()), min(900, free.height())
