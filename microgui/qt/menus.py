"""The main window's menu bar: File, Run, View and Help (Documentation, F1; About), their
actions, the recent files and which actions are enabled.

As Qt Designer's ``setupUi``, :func:`make_menus` sets the actions on the window
(``open_action``, ``export_action``, ``run_action``, ``recent_menu``…), where the window, its
tests and its users find them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

#: The :class:`~microgui.qt.main_window.MainWindow` (not imported: it imports this module, and
#: the package has no import cycle, type-only ones included).
MainWindow = Any

__all__ = ["fill_recent_menu", "make_menus", "update_actions"]


def make_menus(window: MainWindow) -> None:
    """Build the menu bar of ``window`` and set its actions as the window's attributes."""
    file_menu = window.menuBar().addMenu("&File")
    window.open_action = QAction("&Open…", window)
    window.open_action.setShortcut(QKeySequence.StandardKey.Open)
    window.open_action.triggered.connect(window.open_dialog)
    window.demo_action = QAction("Open &demo", window)
    # read by the table loader, as any table the user opens (issue 30: the GUI thread is free)
    window.demo_action.triggered.connect(lambda: window.open_demo(background=True))
    window.recent_menu = QMenu("&Recent files", window)
    window.recent_menu.aboutToShow.connect(lambda: fill_recent_menu(window))
    window.export_action = QAction("&Export protected table…", window)
    window.export_action.setShortcut(QKeySequence("Ctrl+E"))
    window.export_action.triggered.connect(window.export_dialog)
    window.quit_action = QAction("&Quit", window)
    window.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    window.quit_action.triggered.connect(window.quit_asking)
    window.open_project_action = QAction("Open &project…", window)
    window.open_project_action.setToolTip(
        "A saved project: its table, roles and runs (the runs are re-computed, same seeds)"
    )
    window.open_project_action.triggered.connect(window.open_project_dialog)
    window.save_project_action = QAction("&Save project…", window)
    window.save_project_action.setShortcut(QKeySequence.StandardKey.Save)
    window.save_project_action.setToolTip(
        "Roles, kinds and run specifications as JSON (the data stay in their file)"
    )
    window.save_project_action.triggered.connect(window.save_project_dialog)
    file_menu.addAction(window.open_action)
    file_menu.addAction(window.demo_action)
    file_menu.addMenu(window.recent_menu)
    file_menu.addSeparator()
    file_menu.addAction(window.open_project_action)
    file_menu.addAction(window.save_project_action)
    file_menu.addSeparator()
    file_menu.addAction(window.export_action)
    window.export_options_action = QAction("Export &options…", window)
    window.export_options_action.setToolTip(
        "CSV separator, decimal mark and encoding; identifier columns released as pseudonyms"
    )
    window.export_options_action.triggered.connect(window.export_options_dialog)
    file_menu.addAction(window.export_options_action)
    window.report_action = QAction("Save &report…", window)
    window.report_action.setToolTip(
        "The release report (HTML or PDF) of the run shown, or the comparison's when its "
        "tab is open"
    )
    window.report_action.triggered.connect(window.report_dialog)
    file_menu.addAction(window.report_action)
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)
    run_menu = window.menuBar().addMenu("&Run")
    window.run_action = QAction("&Run", window)
    window.run_action.setShortcut(QKeySequence("Ctrl+R"))
    window.run_action.triggered.connect(window.run_panel.run)
    window.sweep_action = QAction("&Sweep…", window)
    window.sweep_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
    window.sweep_action.setToolTip("Run a grid of methods × k × parameters")
    window.sweep_action.triggered.connect(window.open_sweep_dialog)
    window.cancel_action = QAction("&Cancel", window)
    window.cancel_action.triggered.connect(window.controller.cancel_run)
    for action in (window.run_action, window.sweep_action, window.cancel_action):
        run_menu.addAction(action)
    view_menu = window.menuBar().addMenu("&View")
    for dock in (
        window.run_dock,
        window.roles_dock,
        window.results_dock,
        window.history_dock,
        window.classes_dock,
    ):
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    window.reset_layout_action = QAction("&Reset layout", window)
    window.reset_layout_action.setToolTip(
        "Put every panel back where it was at the first start, and fit the window to the screen"
    )
    window.reset_layout_action.triggered.connect(window.reset_layout)
    view_menu.addAction(window.reset_layout_action)
    help_menu = window.menuBar().addMenu("&Help")
    # the documentation, offline (qt/help.py); F1 opens the page of what is under the mouse: a
    # measure's glossary entry, a view's page, else the contents
    window.help_action = QAction("&Documentation", window)
    window.help_action.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
    window.help_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    window.help_action.setToolTip(
        "The documentation, offline; F1 over a measure opens its entry in the glossary"
    )
    window.help_action.triggered.connect(lambda: _help(window))
    help_menu.addAction(window.help_action)
    window.about_action = QAction("&About microgui", window)
    window.about_action.triggered.connect(window.show_about)
    help_menu.addAction(window.about_action)
    fill_recent_menu(window)


def _help(window: MainWindow) -> None:
    from microgui.qt.help import help_under_mouse

    help_under_mouse(window)


def fill_recent_menu(window: MainWindow) -> None:
    """The recent tables and projects (opened again on a click, each as what it is: issue
    30), or "(none)"; and "Clear list"."""
    menu = window.recent_menu
    menu.clear()
    recent = window.settings.recent_files()
    for path in recent:
        project = Path(path).suffix.lower() == ".json"
        action = menu.addAction(f"{Path(path).name} (project)" if project else Path(path).name)
        action.setToolTip(path)
        action.setStatusTip(path)
        action.triggered.connect(lambda _checked=False, p=path: window.open_path(p))
    if not recent:
        empty = menu.addAction("(none)")
        empty.setEnabled(False)
    else:
        menu.addSeparator()
        clear = menu.addAction("Clear list")
        clear.triggered.connect(window.settings.clear_recent_files)


def update_actions(window: MainWindow) -> None:
    """Enable what can be done now: export a result, save a report, run, sweep, cancel."""
    ctl = window.controller
    window.export_action.setEnabled(ctl.result is not None and not ctl.is_running)
    window.report_action.setEnabled(bool(ctl.history))
    has_data = ctl.dataset is not None
    window.run_action.setEnabled(has_data and not ctl.is_running)
    window.sweep_action.setEnabled(has_data)
    window.cancel_action.setEnabled(ctl.is_running or ctl.is_loading)
