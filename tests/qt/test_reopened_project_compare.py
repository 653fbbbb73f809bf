"""After reopening a project (issue 15): its comparison comes back by itself, the history's Compare
re-computes sweep points instead of refusing them (every run of a reopened project is one), and
the method panel holds a method that can run on the project's roles."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from microgui.core.runs import RunSpec, method_refusal
from microgui.core.runs.analysis import analyse_run
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000

ROLES = {
    "age": {"role": "quasi-identifier", "kind": "continuous"},
    "income": {"role": "quasi-identifier", "kind": "continuous"},
    # read alone, the table's integer codes are suggested as a continuous quasi-identifier
    # (so MDAV is proposed); the project says they are nominal: MDAV cannot run on them
    "code": {"role": "quasi-identifier", "kind": "nominal"},
}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.normal(30_000, 8_000, n).round(2),
            "code": rng.integers(100, 999, n),
        }
    )
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def _project(
    tmp_path: Path, table: Path, runs: list[dict[str, Any]], comparison: list[int]
) -> Path:
    data = {
        "schema_version": 1,
        "data": {"path": table.name, "columns": ["age", "income", "code"]},
        "roles": ROLES,
        "runs": runs,
        "comparison": comparison,
    }
    path = tmp_path / "work.microgui.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


RUNS = [
    {"method": "mdav-generic", "k": 3, "seed": 0},
    {"method": "mdav-generic", "k": 5, "seed": 0},
    {"method": "mdav-generic", "k": 8, "seed": 0},
]


def test_reopened_project_compares_again_and_compare_recomputes_points(
    window: MainWindow, qtbot: Any, tmp_path: Path, table: Path
) -> None:
    ctl = window.controller
    path = _project(tmp_path, table, RUNS, [0, 1])
    with qtbot.waitSignal(ctl.comparison_changed, timeout=TIMEOUT_MS) as compared:
        assert window.open_project(path)
    # the project's comparison: its runs re-computed (same seeds), compared, shown in its tab
    first, second, third = (e.run_id for e in ctl.history)
    assert tuple(compared.args[0]) == (first, second) == ctl.compared
    assert all(ctl.entry(i).has_table for i in ctl.compared)
    assert not ctl.entry(third).has_table  # not compared: still a sweep point
    assert window.tabs.currentWidget() is window.compare_panel
    assert [e.run_id for e in window.compare_panel.entries] == [first, second]
    assert "Comparing runs #1, #2" in window.statusBar().currentMessage()
    # the method shown is one that runs on the project's roles
    method = window.run_panel.method
    assert method is not None and method_refusal(method, ctl.roles) == ""

    # the user selects a sweep point without its table and a run with one, presses Compare:
    # the point is re-computed (same seed, same result), then both are compared
    notes: list[str] = []
    ctl.point_opening.connect(lambda _i, text: notes.append(text))
    errors: list[str] = []
    window.error_shown.connect(errors.append)
    point = ctl.entry(third)
    history = window.history_panel
    history.select_runs([first, third])
    assert history.compare_button.isEnabled()
    with qtbot.waitSignal(ctl.comparison_changed, timeout=TIMEOUT_MS) as compared:
        qtbot.mouseClick(history.compare_button, Qt.MouseButton.LeftButton)
    assert errors == []
    assert tuple(compared.args[0]) == (first, third) == ctl.compared
    assert any("To compare #1 and #3: re-computing the sweep point #3" in n for n in notes)
    opened = ctl.entry(third)
    assert opened.has_table and len(ctl.history) == 3  # completed in place
    for key in ("information_loss", "il", "record_linkage"):
        assert opened.measures[key] == pytest.approx(point.measures[key], rel=1e-12)
    again = analyse_run(opened.dataset, RunSpec.make("mdav-generic", 8, seed=0))
    np.testing.assert_array_equal(opened.result.labels, again.result.labels)
    assert window.tabs.currentWidget() is window.compare_panel
    assert [e.run_id for e in window.compare_panel.entries] == [first, third]


def test_compare_of_points_waits_for_the_run_in_progress(
    window: MainWindow, qtbot: Any, tmp_path: Path, table: Path
) -> None:
    ctl = window.controller
    path = _project(tmp_path, table, RUNS[:2], [])
    with qtbot.waitSignal(ctl.sweep_finished, timeout=TIMEOUT_MS):
        assert window.open_project(path)
    qtbot.waitUntil(lambda: not ctl.is_running, timeout=TIMEOUT_MS)
    ids = [e.run_id for e in ctl.history]
    assert not any(ctl.entry(i).has_table for i in ids)
    # a run holds the run thread: re-computing would supersede it, so Compare says to wait
    release = threading.Event()

    def job(progress: Any) -> Any:
        while not release.wait(0.01):
            progress(0.5, "waiting")
        raise AssertionError("released only by the end of the test")

    spec = RunSpec.make("mdav-generic", 3, seed=0)
    try:
        ctl.start_job(job, spec, ctl.dataset)
        errors: list[str] = []
        window.history_panel.error_occurred.connect(errors.append)
        window.history_panel.select_runs(ids)
        assert window.history_panel.compare_selected() == ""
        assert len(errors) == 1 and "wait for the run or sweep in progress" in errors[0]
        assert ctl.compared == () and ctl.is_running
    finally:
        ctl.cancel_run()
        release.set()


def test_reopened_project_without_runs_proposes_a_method_that_runs(
    window: MainWindow, qtbot: Any, tmp_path: Path, table: Path
) -> None:
    ctl = window.controller
    # read alone, the table is all continuous: MDAV is proposed
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(table)
    assert window.run_panel.method is not None and window.run_panel.method.name == "mdav"
    path = _project(tmp_path, table, [], [])
    with qtbot.waitSignal(ctl.roles_changed, timeout=TIMEOUT_MS):
        assert window.open_project(path)
    qtbot.waitUntil(lambda: ctl.roles is not None and ctl.roles["code"].kind.value == "nominal")
    method = window.run_panel.method
    assert method is not None and method.name == "mdav-generic"
    assert method_refusal(method, ctl.roles) == ""
    assert window.run_panel.run() is not None  # Run works at once
    qtbot.waitUntil(lambda: not ctl.is_running, timeout=TIMEOUT_MS)
    assert ctl.result is not None


def test_a_method_the_user_chose_stays_when_roles_change(demo_window: MainWindow) -> None:
    panel = demo_window.run_panel
    ctl = demo_window.controller
    position = panel.method_combo.findData("mdav")
    panel.method_combo.setCurrentIndex(position)
    panel.method_combo.activated.emit(position)  # what a choice in the list does
    roles = ctl.roles
    assert roles is not None
    ctl.set_roles(roles)  # the same roles again: a roles_changed
    assert panel.method is not None and panel.method.name == "mdav"


def test_removing_the_point_being_recomputed_for_a_comparison_cancels_it(
    window: MainWindow, qtbot: Any
) -> None:
    """Compare re-computes sweep points one by one; removing the one being re-computed cancels
    it and the comparison, and the removed run does not come back under a new id (adversarial
    review)."""
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
    from microgui.qt.project_restore import compare_runs

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    ctl = window.controller
    ctl.set_dataset(Dataset.from_frame(frame, RoleMap.from_dict({"a": qi, "b": qi})))
    with qtbot.waitSignal(ctl.sweep_finished, timeout=120_000):
        ctl.start_sweep([RunSpec.make("mdav", k, seed=1) for k in (3, 5)], workers=1)
    first, second = (e.run_id for e in ctl.history)
    compare_runs(ctl, [first, second])
    assert ctl.is_running  # re-computing the first point
    with qtbot.waitSignal(ctl.run_cancelled, timeout=10_000):
        ctl.remove_run(first)
    qtbot.waitUntil(lambda: ctl.live_runs == 0, timeout=60_000)
    qtbot.wait(100)
    assert [e.run_id for e in ctl.history] == [second]
    assert ctl.compared == ()
