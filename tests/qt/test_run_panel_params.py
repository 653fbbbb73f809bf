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


def test_a_sweep_point_loaded_puts_its_own_parameters_in_the_panel(
    window: MainWindow, qtbot: Any
) -> None:
    """A sweep's spec keeps the grid's text ("false", "0.00001"): shown in the run panel it must
    read as the run had it, so that Run repeats it (adversarial review: the box showed
    rescale variance on, gamma 0.1235 and 0.0)."""
    import numpy as np
    import pandas as pd

    from microgui.core.runs import RunSpec
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    ctl = window.controller
    ctl.set_dataset(Dataset.from_frame(frame, RoleMap.from_dict({"a": qi, "b": qi})))
    specs = [
        RunSpec.make("vmdav", 3, {"rescale_variance": "false", "gamma": g}, seed=1)
        for g in ("0.123456", "0.00001")
    ]
    with qtbot.waitSignal(ctl.sweep_finished, timeout=120_000):
        ctl.start_sweep(specs, workers=1)
    panel = window.run_panel
    for entry, gamma in zip(list(ctl.history), (0.123456, 0.00001), strict=True):
        with qtbot.waitSignal(ctl.run_shown, timeout=120_000):
            ctl.show_run(entry.run_id)
        panel.load_shown_settings()  # issue 30: only when asked
        assert panel.param_widgets["rescale_variance"].isChecked() is False
        assert float(panel.param_widgets["gamma"].text()) == gamma  # a line edit: "auto" or γ
        params = dict(panel.spec().params)
        assert params["rescale_variance"] is False and float(params["gamma"]) == gamma
        assert "rescale variance" not in panel.params_note.text()


def test_before_any_table_the_panel_shows_the_proposed_run(window: MainWindow) -> None:
    """Before a table was opened the Method panel showed ama (the list's first) and k = 2: it
    shows what the app proposes (mdav-generic, k = 5, seed 0), which loading the demo keeps."""
    panel, ctl = window.run_panel, window.controller
    proposal = ctl.default_spec()
    assert panel.method is not None and panel.method.name == proposal.method == "mdav-generic"
    assert panel.k_spin.value() == proposal.k == 5
    assert panel.seed_spin.value() == 0
    assert not panel.run_button.isEnabled()  # nothing to run on yet
    assert window.open_demo(), window.last_error
    loaded = ctl.default_spec()
    assert panel.method is not None and panel.method.name == loaded.method
    assert panel.k_spin.value() == loaded.k


def test_open_parameters_take_the_method_docks_room_at_1920(
    demo_window: MainWindow, qtbot: Any
) -> None:
    """At 1920 × 1080 the open parameters showed ~3 rows and scrolled while the roles dock
    below grew: the Method dock takes the height they ask for from the roles dock, which keeps
    its six rows (and, at 1366 × 768, the height it had)."""
    window, panel = demo_window, demo_window.run_panel
    panel.select_method("mdav-generic")
    panel.params_toggle.setChecked(True)
    roles = window.roles_panel.view
    for size in ((1920, 1080), (1366, 768)):
        window.resize(*size)
        qtbot.waitExposed(window)
        qtbot.wait(100)
        rows = roles.viewport().height() // roles.rowHeight(0)
        assert rows >= 6, (size, rows)
        if size == (1920, 1080):
            shown = window.run_scroll.viewport().height()
            assert shown >= panel.settings.sizeHint().height(), (
                shown,
                window.height(),
                window.run_dock.height(),
                window.roles_dock.height(),
            )
            assert window.run_scroll.verticalScrollBar().maximum() == 0  # nothing to scroll
    # folded again, the roles dock has the room back
    window.resize(1920, 1080)
    qtbot.wait(100)
    tall = window.roles_dock.height()
    panel.params_toggle.setChecked(False)
    qtbot.wait(100)
    assert window.roles_dock.height() > tall
