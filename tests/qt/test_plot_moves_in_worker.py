"""What the groups plot and the compared runs' plots read when they show a run (the records'
distance moved on the axes they open on, its classes, each group's class, the initial view's
quantiles, each group's first record) comes with the run from its worker: showing a run in the GUI thread only draws
(issue 30). Every path that shows a run is taken: a run finishing, a run clicked in the history,
two runs compared, a reopened project's runs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import microgui.core.views.moves as moves_module
import microgui.qt.plots.cluster_scatter as cluster_module
import microgui.qt.plots.compare_scatter as compare_module
from microgui.core.runs import RunSpec
from microgui.core.views.moves import distance_moved, move_classes
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000

#: The computations the plots read, wherever a module looks them up.
SPIED = {
    moves_module: (
        "axis_moves",
        "distance_moved",
        "move_classes",
        "tail_quantiles",
        "first_of_groups",
    ),
    cluster_module: (
        "axis_moves",
        "distance_moved",
        "move_classes",
        "group_means",
        "tail_quantiles",
        "first_of_groups",
    ),
    compare_module: ("distance_moved", "move_classes", "group_means", "first_of_groups"),
}


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(name, whether in the GUI thread) of every call of the spied computations from now on."""
    calls: list[tuple[str, bool]] = []
    for module, names in SPIED.items():
        for name in names:
            real = getattr(module, name, None)
            if real is None:
                continue

            def spy(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                calls.append((_name, threading.current_thread() is threading.main_thread()))
                return _real(*args, **kwargs)

            monkeypatch.setattr(module, name, spy)
    return calls


def _in_gui_thread(calls: list[tuple[str, bool]]) -> list[str]:
    return [name for name, gui in calls if gui]


def test_the_plots_moves_and_spans_are_computed_in_the_runs_worker(
    demo_window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = demo_window
    ctl = window.controller
    calls = _spy(monkeypatch)
    for k in (3, 5):  # finished runs, shown
        with qtbot.waitSignal(ctl.run_shown, timeout=TIMEOUT_MS):
            ctl.start_run(RunSpec.make("mdav-generic", k, seed=k))
    plot = window.plot
    assert not plot.colour_by_group and plot.density_shown  # coloured by distance moved
    assert calls and not _in_gui_thread(calls)  # computed, in the worker only
    first, second = (e.run_id for e in ctl.history)
    with qtbot.waitSignal(ctl.run_shown, timeout=TIMEOUT_MS):  # a history click
        ctl.show_run(first)
    assert not _in_gui_thread(calls)
    # the moves drawn are those of the plot's axes
    result, projection = ctl.result, ctl.projection
    assert projection is not None and projection.moved is not None
    assert projection.moved.axes == (plot.options.x_axis, plot.options.y_axis)
    x = cluster_module.axis_values(result, projection, plot.options.x_axis)
    y = cluster_module.axis_values(result, projection, plot.options.y_axis)
    assert x.moves is not None and y.moves is not None
    np.testing.assert_array_equal(plot.moved, distance_moved(x.moves, y.moves))
    np.testing.assert_array_equal(projection.moved.classes, move_classes(plot.moved))
    calls.clear()  # (the lines above computed them here)
    # compared: both plots coloured by distance moved, nothing computed for them here
    panel = window.compare_panel
    window.tabs.setCurrentWidget(panel)
    ctl.set_comparison([first, second])
    panel.views.setCurrentWidget(panel.plot)  # the linked record plots
    qtbot.waitUntil(
        lambda: len(panel.plot.plots) == 2 and not panel.plot.drawing, timeout=TIMEOUT_MS
    )
    assert panel.plot.by_group == [False, False]
    assert not _in_gui_thread(calls)
    # a reopened project: each run rebuilt from its partition in a worker, then shown
    project = tmp_path / "demo.microgui.json"
    assert window.save_project_to(project)
    calls.clear()
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.controller.run_shown, timeout=TIMEOUT_MS):
        assert other.open_project(project)
    with qtbot.waitSignal(other.controller.run_shown, timeout=TIMEOUT_MS):
        other.controller.show_run(first)
    assert other.controller.projection is not None
    assert other.controller.projection.moved is not None
    assert calls and not _in_gui_thread(calls)
    other.controller.shutdown()
