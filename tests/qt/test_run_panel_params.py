"""Issue 15: on a 768 px laptop screen the method's parameters fold into one line that names
the ones changed from their defaults, so the roles table below keeps room for its rows."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox

from microgui.qt.main_window import MainWindow


def test_folded_parameters_say_which_differ_from_their_defaults(
    demo_window: MainWindow, qtbot: Any
) -> None:
    panel = demo_window.run_panel
    demo_window.show()
    assert panel.params_note.text() == "defaults"
    combo = panel.param_widgets["ordinal_average"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findText("convex-median"))
    assert panel.params_note.text() == "ordinal average = convex-median"
    panel.params_toggle.setChecked(False)
    assert not panel.params_body.isVisible() and panel.params_note.isVisible()
    panel.params_toggle.setChecked(True)
    assert panel.params_body.isVisible()
    # a run shown restores its parameters, and the note follows
    combo.setCurrentIndex(combo.findText("median"))
    assert panel.params_note.text() == "defaults"


def test_roles_table_shows_six_rows_at_1366_by_768(demo_window: MainWindow, qtbot: Any) -> None:
    demo_window.run_panel.params_toggle.setChecked(False)  # as on a 768 px screen
    demo_window.resize(1366, 768)
    demo_window.show()
    qtbot.wait(50)
    view = demo_window.roles_panel.view
    height = view.viewport().height()
    rows = sum(
        1
        for r in range(view.model().rowCount())
        if 0 <= view.rowViewportPosition(r)
        and view.rowViewportPosition(r) + view.rowHeight(r) <= height
    )
    assert rows >= 6, (rows, height)
