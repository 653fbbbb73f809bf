"""Issue 30: a whole session on a 1366 × 768 laptop. Every view reachable without scroll arrows,
panels hidden and shown from the View menu, View → Reset layout, a stored window that no longer
fits the screen discarded, five runs of history in sight (with the mstk classes beside it), and
the Method panel never changed by showing a run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeRole
from microgui.qt.main_window import MainWindow, fits_a_screen
from microgui.qt.panels.history_panel import MIN_ROWS
from microgui.qt.settings import UiSettings

TIMEOUT_MS = 120_000


@pytest.fixture
def window(qtbot, tmp_path) -> Iterator[MainWindow]:  # type: ignore[no-untyped-def]
    win = MainWindow(UiSettings(persist=False))
    qtbot.addWidget(win)
    win.controller.load_demo()
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.controller.shutdown()


def _run(window: MainWindow, qtbot, spec: RunSpec) -> int:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS):
        run_id = window.controller.start_run(spec)
    return run_id


def test_every_view_has_a_button_in_sight(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """At 1366 × 768 the tab bar hid Category changes and Correlations behind scroll arrows."""
    tabs, bar = window.tabs, window.view_bar
    assert not tabs.tabBar().isVisible()
    assert len(bar.buttons) == tabs.count() == 10
    area = bar.rect()
    for index, button in bar.buttons.items():
        assert button.isVisible(), tabs.tabText(index)
        assert area.contains(button.geometry()), f"{tabs.tabText(index)} is outside the bar"
        button.click()
        assert tabs.currentIndex() == index
        assert button.isChecked()
    tabs.setCurrentWidget(window.risk_panel)  # and the other way round
    assert bar.buttons[tabs.indexOf(window.risk_panel)].isChecked()


def test_the_window_and_its_history_fit_a_laptop(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    assert window.minimumSizeHint().height() <= 768 - 60  # a title bar and a task bar
    assert window.minimumSizeHint().width() <= 1366
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=1))
    view = window.history_panel.view
    assert window.history_dock.isVisible()
    assert view.viewport().height() >= MIN_ROWS * view.rowHeight(0)


def test_history_keeps_its_rows_beside_the_mstk_classes(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    _run(window, qtbot, RunSpec.make("mstk", 5, seed=1))
    assert window.classes_dock.toggleViewAction().isChecked()
    view = window.history_panel.view
    assert window.history_dock.isVisible()
    assert view.viewport().height() >= MIN_ROWS * view.rowHeight(0)


def test_panels_hide_show_and_reset(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Every dock entry of the View menu was disabled: panels could not be hidden."""
    docks = (window.run_dock, window.roles_dock, window.results_dock, window.history_dock)
    for dock in docks:
        action = dock.toggleViewAction()
        assert action.isEnabled(), dock.windowTitle()
        action.trigger()
        assert dock.isHidden(), dock.windowTitle()
    window.reset_layout_action.trigger()
    for dock in docks:
        assert dock.isVisible(), dock.windowTitle()
    assert window.classes_dock.isHidden()


def test_a_stored_window_that_does_not_fit_is_discarded(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = UiSettings(persist=False)
    big = MainWindow(settings)
    qtbot.addWidget(big)
    free = QApplication.primaryScreen().availableGeometry()
    big.setGeometry(QRect(free.x(), free.y(), free.width() + 900, free.height() + 700))
    big.save_layout()
    # ... made on a screen larger than this one (a laptop after a 4K monitor)
    settings.set_screen_size(free.width() + 1200, free.height() + 900)
    big.controller.shutdown()
    again = MainWindow(settings)
    qtbot.addWidget(again)
    assert "no longer fits" in again.layout_note
    assert fits_a_screen(again.geometry())
    again.controller.shutdown()
    # a layout made for this screen is kept
    settings.set_screen_size(free.width(), free.height())
    again.setGeometry(QRect(free.x() + 10, free.y() + 10, free.width() - 60, free.height() - 90))
    again.save_layout()
    kept = MainWindow(settings)
    qtbot.addWidget(kept)
    assert kept.layout_note == "" and kept.size() == again.size()
    kept.controller.shutdown()


def test_showing_a_run_never_changes_the_method_panel(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Showing a run from the history (or the compare view, the R-U map) switched the Method
    panel to its method: the next Run ran what the user had not chosen. Now the panel says the
    run shown was made otherwise, and loads its settings only when asked."""
    ctl, panel = window.controller, window.run_panel
    first = _run(window, qtbot, RunSpec.make("mdav-generic", 4, {"round": "0"}, seed=3))
    panel.select_method("mdav-generic")
    panel.k_spin.setValue(6)
    panel.seed_spin.setValue(2)
    second = panel.run()
    assert second is not None
    qtbot.waitUntil(lambda: ctl.shown_run_id == second, timeout=TIMEOUT_MS)
    assert not panel.shown_box.isVisible()  # the panel describes the run shown
    for show in (
        lambda: ctl.show_run(first),
        lambda: window.history_panel.select_runs([first]),
        lambda: window.ru_chart.run_clicked.emit(first),
    ):
        ctl.show_run(second)
        show()
        assert ctl.shown_run_id == first
        assert panel.method is not None and panel.method.name == "mdav-generic"
        assert (panel.k_spin.value(), panel.seed_spin.value()) == (6, 2)
        assert panel.shown_box.isVisible()
        assert f"#{first} mdav-generic k=4" in panel.shown_note.text()
    # the explicit action, from the panel's button and from the history's context menu
    panel.load_shown_button.click()
    assert panel.k_spin.value() == 4 and panel.params_note.text() == "round = 0"
    assert panel.seed_spin.value() == 3 and not panel.shown_box.isVisible()
    ctl.show_run(second)
    actions = dict(window.history_panel.context_actions(second))
    actions["Load this run's settings"]()
    assert panel.k_spin.value() == 6 and panel.params_note.text() == "defaults"


def test_methods_that_cannot_run_are_greyed_with_the_reason(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    ctl, panel = window.controller, window.run_panel
    roles = ctl.roles
    assert roles is not None
    for column in roles.confidential:
        ctl.set_role(column, AttributeRole.NON_CONFIDENTIAL)
    refused = panel.method_refusals()
    assert "p-sensitive" in refused and "confidential" in refused["p-sensitive"]
    model = panel.method_combo.model()
    row = panel.method_combo.findData("p-sensitive")
    assert not model.item(row).isEnabled()
    assert "confidential" in panel.method_combo.itemData(row, 3)  # ToolTipRole
    assert model.item(panel.method_combo.findData("mdav-generic")).isEnabled()
    panel.select_method("p-sensitive")  # chosen before the roles changed, say
    assert not panel.run_button.isEnabled()
    assert "confidential" in panel.run_button.toolTip()


def test_copy_as_command_says_so(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    run_id = _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=1))
    window.history_panel.select_runs([run_id])
    with qtbot.waitSignal(window.history_panel.message) as blocker:
        text = window.history_panel.copy_command()
    assert text.startswith("microgui protect")
    assert f"#{run_id}" in blocker.args[0] and "clipboard" in blocker.args[0]
    assert "Copied" in window.statusBar().currentMessage()


def test_the_export_proposes_the_method_and_the_last_export_folder(
    window: MainWindow,
    qtbot,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    """It opened in the input's folder with a name that omitted the method."""
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=1))
    first = window.default_export_path()
    assert first.name == "demo_persons_mdav-generic_k5.csv"
    out = tmp_path / "releases" / "first.csv"
    out.parent.mkdir()
    assert window.export_to(out)
    _run(window, qtbot, RunSpec.make("mdav-generic", 4, seed=1))
    second = window.default_export_path()
    assert second == out.parent.resolve() / "demo_persons_mdav-generic_k4.csv"
