"""A saved session keeps its identity in the window (issue 30 items 2 and 5): reopening a
project shows the run shown when it was saved; the title names the project (with a "*" while
runs or exports are not saved); File → Recent lists projects beside tables and opens each as
what it is; the export dialog proposes the project's folder before the first export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow
from microgui.qt.menus import fill_recent_menu

TIMEOUT_MS = 120_000


def _table(path: Path, n: int = 60) -> Path:
    rng = np.random.default_rng(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {"age": rng.integers(18, 90, n), "income": np.round(rng.lognormal(8, 1, n), 2)}
    ).to_csv(path, index=False)
    return path


def _open_and_run(window: MainWindow, qtbot, path: Path, ks: tuple[int, ...]) -> list[int]:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(path)
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles_from_lists(["age", "income"], qi=["age", "income"]))
    ids = []
    for k in ks:
        with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
            ctl.start_run(RunSpec.make("mdav", k, seed=k))
        assert ctl.shown_run_id is not None
        ids.append(ctl.shown_run_id)
    return ids


def _reopen(window: MainWindow, qtbot, project: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.controller.history_changed, timeout=TIMEOUT_MS):
        assert other.open_project(project)
    return other


def test_reopening_a_project_shows_the_run_shown_when_it_was_saved(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    ids = _open_and_run(window, qtbot, _table(tmp_path / "survey.csv"), (3, 4, 5))
    ctl.show_run(ids[0])  # the first run is looked at, not the last
    project = tmp_path / "survey.microgui.json"
    assert window.save_project_to(project)
    other = _reopen(window, qtbot, project)
    qtbot.waitUntil(lambda: other.controller.shown_run_id is not None, timeout=TIMEOUT_MS)
    assert other.controller.shown_run_id == ids[0]
    # the project saved again with no run shown: the last, as before
    ctl.remove_run(ids[0])
    assert window.save_project_to(project)
    third = _reopen(window, qtbot, project)
    qtbot.waitUntil(lambda: third.controller.shown_run_id is not None, timeout=TIMEOUT_MS)
    assert third.controller.shown_run_id == ids[-1]


def test_the_title_names_the_project_and_marks_what_is_not_saved(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    _open_and_run(window, qtbot, _table(tmp_path / "survey.csv"), (3,))
    assert window.windowTitle() == "survey.csv[*] — microgui" and window.isWindowModified()
    project = tmp_path / "work.microgui.json"
    assert window.save_project_to(project)
    assert window.windowTitle() == "work[*] (survey.csv) — microgui"
    assert not window.isWindowModified()
    # an export: its record order's seed is kept for the project, not yet saved
    assert window.export_to(tmp_path / "out.csv")
    assert ctl.unsaved_exports == 1 and window.isWindowModified()
    assert window.save_project_to(project)
    assert not window.isWindowModified()
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav", 4, seed=1))
    assert window.isWindowModified()
    other = _reopen(window, qtbot, project)
    qtbot.waitUntil(lambda: "(survey.csv)" in other.windowTitle(), timeout=TIMEOUT_MS)
    assert other.windowTitle() == "work[*] (survey.csv) — microgui"
    assert not other.isWindowModified()


def test_recent_files_list_projects_and_open_each_as_what_it_is(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    table = _table(tmp_path / "survey.csv")
    _open_and_run(window, qtbot, table, (3,))
    project = tmp_path / "work.microgui.json"
    assert window.save_project_to(project)
    recent = window.settings.recent_files()
    assert recent[:2] == [str(project.resolve()), str(table.resolve())]
    fill_recent_menu(window)
    actions = {a.text(): a for a in window.recent_menu.actions() if a.text()}
    assert "work.microgui.json (project)" in actions and "survey.csv" in actions
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    fill_recent_menu(other)
    action = next(a for a in other.recent_menu.actions() if a.text().endswith("(project)"))
    with qtbot.waitSignal(other.controller.history_changed, timeout=TIMEOUT_MS):
        action.trigger()  # opened as a project: its runs come back
    assert other.controller.project_file == project
    assert [e.run_id for e in other.controller.history] == [1]


def test_the_export_proposes_the_project_folder_first_then_the_last_export_folder(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    table = _table(tmp_path / "data" / "survey.csv")
    window.settings.set_last_directory(tmp_path / "elsewhere")
    _open_and_run(window, qtbot, table, (3,))
    # no project, no export yet: beside the input, named after the input, method and k
    assert window.default_export_path() == table.parent / "survey_mdav_k3.csv"
    project = tmp_path / "projects" / "work.microgui.json"
    project.parent.mkdir()
    assert window.save_project_to(project)
    assert window.default_export_path() == project.parent.resolve() / "survey_mdav_k3.csv"
    out = tmp_path / "releases" / "first.csv"
    out.parent.mkdir()
    assert window.export_to(out)
    assert window.default_export_path() == out.parent.resolve() / "survey_mdav_k3.csv"
    # remembered in the settings (another window, as the next session)
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    assert other.settings.export_directory() == str(out.parent.resolve())


def test_opening_another_table_asks_before_dropping_an_unsaved_export_order(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The seed of an export's record order is kept by the project file only: an export made
    after the last save is asked about like an unsaved run."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(MainWindow, "confirm_dropping_runs", True)
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(
        QMessageBox, "question", lambda _p, _t, text, *_a: asked.append(text) or answer[0]
    )
    table = _table(tmp_path / "survey.csv")
    _open_and_run(window, qtbot, table, (3,))
    assert window.save_project_to(tmp_path / "work.microgui.json")
    assert window.export_to(tmp_path / "out.csv")
    assert window.open_file(table) == -1  # cancelled: the session stays
    assert len(asked) == 1 and "record order of 1 export(s)" in asked[0]
    answer[0] = QMessageBox.StandardButton.Discard
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=TIMEOUT_MS):
        assert window.open_file(table) >= 0
    assert window.controller.unsaved_exports == 0 and window.controller.run_exports == {}


def test_quitting_asks_before_dropping_unsaved_runs(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """File → Quit (like the close button) asks about runs in no project file, as opening
    another table does; Cancel keeps the window and its runs, Discard closes it. A close by the
    program (a screenshot, a probe) does not ask."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(MainWindow, "confirm_dropping_runs", True)
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(
        QMessageBox, "question", lambda _p, _t, text, *_a: asked.append(text) or answer[0]
    )
    window.show()
    _open_and_run(window, qtbot, _table(tmp_path / "survey.csv"), (3,))
    window.quit_action.trigger()
    assert len(asked) == 1 and "Closing microgui drops them" in asked[0]
    assert window.isVisible() and len(window.controller.history) == 1
    answer[0] = QMessageBox.StandardButton.Discard
    window.quit_action.trigger()
    assert len(asked) == 2 and not window.isVisible()
    window.show()
    assert window.close() and len(asked) == 2  # the program's own close: not asked
