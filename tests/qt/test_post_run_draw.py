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
