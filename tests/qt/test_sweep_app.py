"""Issue 5 (app): a sweep of methods × k × parameters from the sweep dialog, driven as a user would.

Every point reaches the run history and the risk–utility map as it arrives; failed runs are
listed with their reason; Cancel keeps the finished points; opening a point re-runs its spec with
the same seed. workers=1 keeps these tests light (the sweep then runs in the worker thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import Qt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.roles import AttributeKind
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.sweep_dialog import (
    SweepDialog,
    method_refusal,
    parse_k_list,
    parse_param_grid,
)

SWEEP_TIMEOUT_MS = 120_000

#: Released by the tests that need the blocking method to return (never, in the cancel test).
_RELEASE = threading.Event()


def _blocks(inp: MethodInput) -> MethodOutput:
    """Consecutive rows in groups of k; refuses k = 4 (as a method refusing the data does);
    from k = 7 on waits, reporting progress, until released or cancelled."""
    if inp.k == 4:
        raise InvalidParameter("test-sweep refuses k = 4 on this table")
    while inp.k >= 7 and not _RELEASE.wait(0.01):
        inp.progress(0.5, "waiting")  # raises RunCancelled once the user cancels
    return MethodOutput(labels=np.arange(inp.dataset.n_records, dtype=np.int64) // inp.k)


@pytest.fixture
def test_method(register_method: Callable[[Method], str]) -> Iterator[str]:
    """An instant fake method for this module, accepting every kind."""
    name = register_method(
        Method(
            name="test-sweep",
            title="Blocks (test)",
            summary="consecutive rows in groups of k",
            description="test only",
            citation="none",
            kinds=frozenset(AttributeKind),
            run=_blocks,
        )
    )
    _RELEASE.clear()
    yield name
    _RELEASE.set()


def _dialog(window: MainWindow, qtbot: Any) -> SweepDialog:
    """Open the sweep dialog from the Run menu, as a user would."""
    window.sweep_action.trigger()
    dialog = window.sweep_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.workers_spin.setValue(1)
    return dialog


def _fill(dialog: SweepDialog, qtbot: Any, methods: list[str], ks: str, params: str = "") -> None:
    dialog.check_methods([])
    for i in range(dialog.methods_list.count()):
        item = dialog.methods_list.item(i)
        if item.data(Qt.ItemDataRole.UserRole) in methods:
            item.setCheckState(Qt.CheckState.Checked)  # what a click on its box does
    dialog.k_edit.clear()
    qtbot.keyClicks(dialog.k_edit, ks)
    dialog.params_edit.clear()
    if params:
        qtbot.keyClicks(dialog.params_edit, params)


def test_parsers_and_method_refusal(demo_window: MainWindow) -> None:
    assert parse_k_list("3, 5,10 ,5") == [3, 5, 10]
    with pytest.raises(InvalidParameter, match="'x'"):
        parse_k_list("3, x")
    with pytest.raises(InvalidParameter):
        parse_k_list(" , ")
    assert parse_param_grid("") == {}
    assert parse_param_grid("gamma=0.1, 0.2; rescale_variance=true\nGamma=1") == {
        "gamma": ["0.1", "0.2"],
        "rescale_variance": ["true"],
        "Gamma": ["1"],
    }
    with pytest.raises(InvalidParameter, match="NAME=V1,V2"):
        parse_param_grid("gamma")
    roles = demo_window.controller.roles
    methods = {m.name: m for m in demo_window.controller.methods()}
    # the demo has ordinal and nominal quasi-identifiers: mdav refuses them, mdav-generic not
    assert "continuous quasi-identifiers only" in method_refusal(methods["mdav"], roles)
    assert method_refusal(methods["mdav-generic"], roles) == ""


def test_sweep_dialog_lists_only_methods_that_fit(demo_window: MainWindow, qtbot: Any) -> None:
    dialog = _dialog(demo_window, qtbot)
    available = dialog.available_methods()
    assert "mdav-generic" in available and "mdav" not in available
    # the run panel's method comes checked
    assert dialog.checked_methods() == [demo_window.run_panel.spec().method]
    dialog.k_edit.setText("3, 99999")
    assert not dialog.start_button.isEnabled()
    assert "larger than the number of records" in dialog.summary.text()
    dialog.k_edit.setText("3, 5")
    dialog.params_edit.setText("gamma=0.2")  # a vmdav parameter: mdav-generic has none
    assert not dialog.start_button.isEnabled() and "gamma" in dialog.summary.text()
    dialog.params_edit.setText("rescale_variance=false,true")
    assert dialog.start_button.isEnabled()
    assert dialog.summary.text().startswith("4 run(s)")


def test_sweep_points_reach_history_and_ru_chart_as_they_arrive(
    demo_window: MainWindow, test_method: str, qtbot: Any
) -> None:
    ctl = demo_window.controller
    dialog = _dialog(demo_window, qtbot)
    _fill(dialog, qtbot, ["mdav-generic", test_method], "3,4,5")
    assert dialog.summary.text().startswith("6 run(s)")
    events: list[tuple[str, Any]] = []
    on_chart: list[bool] = []

    def on_point(_sweep: int, point: Any, run_id: int) -> None:
        events.append(("point", point))
        # the history and the map already hold it when the signal arrives
        if run_id >= 0:
            on_chart.append(run_id in demo_window.ru_chart.drawn_ids)
            assert ctl.entry(run_id).point is point

    ctl.sweep_point_finished.connect(on_point)
    ctl.sweep_finished.connect(lambda _i, points: events.append(("finished", points)))
    with qtbot.waitSignal(ctl.sweep_finished, timeout=SWEEP_TIMEOUT_MS):
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert [e[0] for e in events] == ["point"] * 6 + ["finished"]
    assert on_chart == [True] * 5  # every successful point, as it arrived
    # the refused run is listed with its reason, not put in the history
    assert dialog.failed_texts() == ["test-sweep k=4: test-sweep refuses k = 4 on this table"]
    assert len(ctl.history) == 5
    assert all(e.from_sweep and not e.has_table for e in ctl.history)
    assert demo_window.tabs.currentWidget() is demo_window.ru_chart
    assert len(demo_window.ru_chart.drawn_ids) == 5
    assert "Done: 5 of 6 run(s)" in dialog.status_label.text()
    # the Method panel and the status bar count the same runs, and say one failed (issue 30:
    # the panel said "Sweep done: 6 run(s).")
    said = "Sweep done: 5 of 6 run(s) in the history and on the risk–utility map; 1 failed"
    assert demo_window.run_panel.status_label.text().startswith(said)
    assert "test-sweep k=4: test-sweep refuses k = 4" in demo_window.run_panel.status_label.text()
    assert demo_window.statusBar().currentMessage() == f"{said}."  # short: the reason is above
    assert not ctl.is_running and dialog.start_button.isEnabled()
    # the history says which rows are sweep points without a table
    model = demo_window.history_panel.model
    assert model.index(0, 0).data().endswith("sweep")
    assert model.index(0, 0).data(Qt.ItemDataRole.FontRole).italic()
    assert "same seed" in model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_opening_a_sweep_point_reruns_it_with_the_same_seed(
    demo_window: MainWindow, qtbot: Any
) -> None:
    ctl = demo_window.controller
    dialog = _dialog(demo_window, qtbot)
    _fill(dialog, qtbot, ["mdav-generic"], "3, 6")
    with qtbot.waitSignal(ctl.sweep_finished, timeout=SWEEP_TIMEOUT_MS):
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    point_entry = ctl.history[1]
    assert point_entry.spec.k == 6 and not point_entry.has_table
    # comparing needs the tables: refused with what to do
    with pytest.raises(InvalidParameter, match="select each one first"):
        ctl.set_comparison([e.run_id for e in ctl.history])

    notes: list[str] = []
    ctl.point_opening.connect(lambda _i, text: notes.append(text))
    with qtbot.waitSignal(ctl.run_shown, timeout=SWEEP_TIMEOUT_MS) as shown:
        demo_window.history_panel.select_runs([point_entry.run_id])
    assert shown.args == [point_entry.run_id]
    assert notes and "re-running it with seed 0" in notes[0]
    opened = ctl.entry(point_entry.run_id)
    assert opened.has_table and len(ctl.history) == 2  # completed in place, no new entry
    assert ctl.result is opened.result
    # reproducible: the same partition and measures as the sweep's run
    again = run_protection(opened.dataset, RunSpec.make("mdav-generic", 6, seed=0))
    np.testing.assert_array_equal(opened.result.labels, again.labels)
    for key in ("information_loss", "il", "record_linkage"):
        assert opened.measures[key] == pytest.approx(point_entry.measures[key], rel=1e-12)
    assert f"{len(again.labels):,} records" in demo_window.plot.title_text()


def test_cancel_mid_sweep_keeps_the_finished_points(
    demo_window: MainWindow, test_method: str, qtbot: Any
) -> None:
    ctl = demo_window.controller
    dialog = _dialog(demo_window, qtbot)
    _fill(dialog, qtbot, [test_method], "2, 3, 7, 8")
    order: list[str] = []
    ctl.sweep_point_finished.connect(lambda *_a: order.append("point"))
    ctl.sweep_cancelled.connect(lambda *_a: order.append("cancelled"))
    ctl.sweep_finished.connect(lambda *_a: order.append("finished"))
    # k = 7 waits until cancelled: cancel once the first two points are in
    with qtbot.waitSignal(ctl.sweep_started):
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.cancel_button.isEnabled() and ctl.is_sweeping
    qtbot.waitUntil(lambda: len(ctl.history) == 2, timeout=SWEEP_TIMEOUT_MS)
    with qtbot.waitSignal(ctl.sweep_cancelled, timeout=SWEEP_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert order == ["point", "point", "cancelled"]
    kept = blocker.args[1]
    assert [p.spec.k for p in kept] == [2, 3]
    assert [e.spec.k for e in ctl.history] == [2, 3]
    assert len(demo_window.ru_chart.drawn_ids) == 2
    assert "Cancelled after 2 of 4 run(s)" in dialog.status_label.text()
    assert not ctl.is_running and not dialog.cancel_button.isEnabled()
    assert demo_window.run_panel.run_button.isEnabled()


def test_a_point_opened_during_the_sweep_opens_when_it_ends(
    demo_window: MainWindow, test_method: str, qtbot: Any
) -> None:
    ctl = demo_window.controller
    dialog = _dialog(demo_window, qtbot)
    _fill(dialog, qtbot, [test_method], "2, 7")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(ctl.history) == 1, timeout=SWEEP_TIMEOUT_MS)
    first = ctl.history[0].run_id
    with qtbot.waitSignal(ctl.point_opening) as note:
        demo_window.ru_chart.run_clicked.emit(first)  # a click on its point
    assert "when the sweep ends" in note.args[1] and ctl.is_sweeping
    _RELEASE.set()  # let k = 7 finish
    with qtbot.waitSignal(ctl.run_shown, timeout=SWEEP_TIMEOUT_MS) as shown:
        pass
    assert shown.args == [first] and ctl.entry(first).has_table
    assert not ctl.is_running
