"""What the groups plot draws after a large run stays what it was while it got cheaper (issue 6):
the fast density counts equal ``np.histogram2d``, the linear-time group firsts equal
``np.unique``, over a density image a seeded sample of the aggregates is drawn and said, and the
plot is laid out before its first paint. No timing here: the times are the benchmark's."""

from __future__ import annotations

import numpy as np
import pytest

from microgui.core.runs import RunResult, RunSpec
from microgui.core.views.projection import qi_projection
from microgui.qt.main_window import MainWindow
from microgui.qt.plots.cluster_scatter import (
    ClusterScatterPlot,
    ScatterOptions,
    density_image,
    first_of_groups,
)

RUN_TIMEOUT_MS = 60_000


@pytest.mark.parametrize("seed", range(6))
def test_density_image_counts_as_histogram2d(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000))
    x = rng.normal(size=n)
    y = rng.normal(size=n) * 3
    x[rng.random(n) < 0.05] = np.nan
    y[rng.random(n) < 0.02] = np.inf
    if seed % 2:  # values on the bin edges
        x, y = np.round(x, 1), np.round(y, 0)
    bins = int(rng.integers(1, 300))
    x_range, y_range = (-1.0, 1.0), (-2.0, 2.0)
    counts, outside = density_image(x, y, x_range, y_range, bins)
    finite = np.isfinite(x) & np.isfinite(y)
    expected, _xe, _ye = np.histogram2d(x[finite], y[finite], bins=bins, range=[x_range, y_range])
    np.testing.assert_array_equal(counts, expected)
    assert outside == int(finite.sum()) - int(expected.sum())


def test_first_of_groups_is_unique_return_index() -> None:
    rng = np.random.default_rng(3)
    for labels in (
        rng.integers(0, 50, size=400),
        rng.integers(5, 7, size=10),  # labels that do not start at 0
        np.array([-1, 2, -1, 0]),  # negative labels: the general path
        np.array(["b", "a", "b"]),
        np.zeros(0, dtype=np.int64),
    ):
        np.testing.assert_array_equal(
            first_of_groups(labels), np.unique(labels, return_index=True)[1]
        )


@pytest.fixture
def demo_run(demo_window: MainWindow, qtbot) -> RunResult:  # type: ignore[no-untyped-def]
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def test_over_a_density_image_a_seeded_sample_of_aggregates_is_drawn_and_said(
    demo_run: RunResult, qtbot
) -> None:
    options = ScatterOptions(display="density", max_density_aggregates=100)
    plot = ClusterScatterPlot(options=options)
    qtbot.addWidget(plot)
    projection = qi_projection(demo_run)
    plot.set_run(demo_run, projection)
    assert plot.density_shown
    assert len(plot.protected_item.data) == 100  # of 800 groups
    assert "a random sample of 100 of the 800 group aggregates (seed 0)" in plot.title_text()
    # the sample is of the aggregates the plot would draw without it: same seed, same sample
    drawn = np.sort(plot.protected_item.data["x"])
    plot.set_run(demo_run, projection)
    np.testing.assert_array_equal(np.sort(plot.protected_item.data["x"]), drawn)
    plot.options.max_density_aggregates = 10_000
    plot.redraw()
    assert len(plot.protected_item.data) == 800
    assert "group aggregates (seed" not in plot.title_text()
    # in points mode every aggregate is drawn, whatever the cap
    plot.options.max_density_aggregates = 10
    plot.set_display("points")
    assert len(plot.protected_item.data) == 800


def test_the_plot_is_laid_out_before_its_first_paint(demo_run: RunResult, qtbot) -> None:
    plot = ClusterScatterPlot(options=ScatterOptions(display="density"))
    qtbot.addWidget(plot)
    plot.resize(900, 650)
    plot.show()
    plot.grab()  # laid out empty
    plot.set_run(demo_run, qi_projection(demo_run))
    item = plot.plot_item
    left, bottom = item.getAxis("left"), item.getAxis("bottom")
    bar_axis = plot.color_bar.axis
    before = (left.width(), bottom.height(), bar_axis.width(), item.getViewBox().width())
    assert bar_axis.width() > 0 and bottom.height() > 20  # labels and colour bar in place
    plot.grab()  # the first paint: it must not change the layout (no second paint needed)
    after = (left.width(), bottom.height(), bar_axis.width(), item.getViewBox().width())
    assert after == before


def test_a_finished_run_is_drawn_in_two_turns_to_the_same_state(
    demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30: the history's row (and the risk-utility map) in the turn the run ends, the
    views of the run (``run_finished``) in a later one, so that the event loop runs between
    them; the run counts as running until it is shown, and the window ends as one synchronous
    drawing of the run leaves it."""
    from PySide6.QtCore import QTimer

    ctl = demo_window.controller
    order: list[str] = []
    busy: list[bool] = []
    ctl.busy_changed.connect(busy.append)

    def history_changed() -> None:
        order.append("history")
        # still running (not shown yet) while the history has the run
        order.append(f"running={ctl.is_running}")
        QTimer.singleShot(0, lambda: order.append("a turn between"))

    ctl.history_changed.connect(history_changed)
    ctl.run_finished.connect(lambda *_a: order.append("run_finished"))
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        run_id = ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    assert order == ["history", "running=True", "a turn between", "run_finished"]
    assert busy == [True, False] and not ctl.is_running
    assert ctl.shown_run_id == run_id and ctl.result is blocker.args[1]
    assert ctl.history[-1].run_id == run_id
    drawn = (
        demo_window.plot.title_text(),
        demo_window.plot.legend.texts,
        demo_window.results_panel.value_labels["run"].text(),
        demo_window.history_panel.selected_ids(),
    )
    ctl._show(run_id)  # the same run drawn again, in one turn
    assert (
        demo_window.plot.title_text(),
        demo_window.plot.legend.texts,
        demo_window.results_panel.value_labels["run"].text(),
        demo_window.history_panel.selected_ids(),
    ) == drawn


def test_a_new_table_drops_the_finished_run_not_yet_shown(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A table opened between the run's two turns: the run is not shown over it."""
    ctl = demo_window.controller
    shown: list[int] = []
    ctl.run_finished.connect(lambda run_id, _r: shown.append(run_id))
    swapped: list[bool] = []

    def history_changed() -> None:
        if not swapped:
            swapped.append(True)
            ctl.set_dataset(ctl.dataset)

    ctl.history_changed.connect(history_changed)
    with qtbot.waitSignal(ctl.history_changed, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    qtbot.wait(100)
    assert shown == [] and ctl.result is None and not ctl.is_running


def test_no_reference_measuring_starts_after_the_window_is_shut_down(
    demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The unprotected reference is measured a moment after a run is shown (issue 30); a window
    shut down meanwhile starts none (it ran on, unwaited, in a stopped pool)."""
    from microgui.qt import controller as controller_module

    ctl = demo_window.controller
    started: list[object] = []
    ctl.analyses.unprotected_reference = lambda dataset: started.append(dataset)  # type: ignore[method-assign]
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    assert ctl.shutdown()
    qtbot.wait(controller_module.REFERENCE_DELAY_MS + 300)
    assert started == []
