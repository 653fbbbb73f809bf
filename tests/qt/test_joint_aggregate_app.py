"""Issue 13, item 3 in the app: the run panel offers categorical_aggregate as a choice, and the
Results panel shows how many groups released a combination none of their records has."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from microgui.qt.main_window import MainWindow

RUN_TIMEOUT_MS = 60_000


def _run(window: MainWindow, qtbot) -> object:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.run_panel.run_button, Qt.MouseButton.LeftButton)
    return blocker.args[1]


def test_results_panel_counts_invented_combinations(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = demo_window.run_panel
    panel.select_method("mdav-generic")
    panel.k_spin.setValue(5)
    combo = panel.param_widgets["categorical_aggregate"]
    assert isinstance(combo, QComboBox) and combo.currentText() == "joint"
    label = demo_window.results_panel.value_labels["invented_combinations"]

    combo.setCurrentText("independent")
    result = _run(demo_window, qtbot)
    assert result.report["invented_combinations"] == 9  # type: ignore[attr-defined]
    assert "9 of 800 groups (independent)" in label.text()

    combo.setCurrentText("joint")
    result = _run(demo_window, qtbot)
    assert result.report["invented_combinations"] == 0  # type: ignore[attr-defined]
    assert label.text() == "0 of 800 groups (joint)"
