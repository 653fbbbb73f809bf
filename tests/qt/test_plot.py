"""The cluster scatter plot: layers, shared brushes, axis choices, sampling above the threshold."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
import pytest
from qt_helpers import large_continuous_dataset

from microgui.core.methods.base import Method, MethodInput, MethodOutput
from microgui.core.runs import RunResult, RunSpec
from microgui.core.table.roles import AttributeKind
from microgui.core.views.projection import pca_2d, qi_projection
from microgui.qt.main_window import MainWindow
from microgui.qt.plots.cluster_scatter import (
    PC1,
    PC2,
    ClusterScatterPlot,
    ScatterOptions,
    density_image,
    sample_indices,
)
from microgui.qt.plots.fast_scatter import FastScatterPlotItem
from microgui.qt.plots.palette import ClusterPalette

RUN_TIMEOUT_MS = 60_000


@pytest.fixture
def demo_result(demo_window: MainWindow, qtbot) -> RunResult:  # type: ignore[no-untyped-def]
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def test_the_empty_groups_plot_has_no_scale(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 (review): before any run the groups plot showed a 0-1 scale on both axes,
    numbers that measure nothing; the axes and grid come with a run, and go with it."""
    plot = demo_window.plot
    axes = [plot.plot_item.getAxis(name) for name in ("left", "bottom")]
    assert not any(axis.isVisible() for axis in axes)
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    assert all(axis.isVisible() for axis in axes)
    plot.clear()
    assert not any(axis.isVisible() for axis in axes)


def test_plot_shows_groups_with_shared_brushes(
    demo_window: MainWindow, demo_result: RunResult
) -> None:
    plot = demo_window.plot
    # every quasi-identifier, in the table's column order (issue 13: nominal ones too)
    assert plot.axis_choices() == [
        PC1,
        PC2,
        "sex",
        "age",
        "region",
        "education",
        "hours_per_week",
        "income",
        "wealth",
    ]
    # mixed quasi-identifiers: the data's own axes by default, not the PCA (issue 29); a
    # category axis over 1,000 records draws the originals as a density image
    # up: the categorical one with the most categories (region and education: 6, sex: 2;
    # the first in column order on a tie)
    assert (plot.options.x_axis, plot.options.y_axis) == ("age", "region")
    assert plot.density_shown
    plot.set_axes(PC1, PC2)
    brushes = plot.records_item.data["brush"]
    assert len(brushes) == 4000
    # 800 groups in view: colour = distance moved, a few shared QBrush objects, not one per
    # point (the symbol atlas keys on identity)
    assert not plot.colour_by_group and plot.groups_in_view > 12
    assert {id(b) for b in brushes} <= {id(b) for b in plot.move_brushes}
    assert len(plot.protected_item.data) == demo_result.n_groups
    assert "4,000 records in 800 groups" in plot.title_text()
    assert "colour = distance moved" in plot.title_text()
    assert "PC1" in plot.plot_item.getAxis("bottom").labelText
    assert "mixed-distance embedding" in plot.plot_item.getAxis("bottom").labelText
    assert plot.sampled is None
    # zoomed in on one group's records: colour = group, with the palette's shared brushes
    plot.set_axes("age", "income")
    x0, y0 = plot.records_item.data["x"][0], plot.records_item.data["y"][0]
    plot.plot_item.getViewBox().setRange(
        xRange=(x0 - 0.01, x0 + 0.01), yRange=(y0 - 1.0, y0 + 1.0), padding=0.0
    )
    plot._on_view_settled()  # what the debounce timer calls after a zoom
    assert plot.colour_by_group and plot.groups_in_view <= 12
    brushes = plot.records_item.data["brush"]
    assert {id(b) for b in brushes} <= {id(b) for b in plot.cluster_palette.brushes}


def test_choosing_axes_shows_original_units(
    demo_window: MainWindow, demo_result: RunResult
) -> None:
    plot = demo_window.plot
    plot.x_combo.setCurrentIndex(plot.x_combo.findData("age"))
    plot.y_combo.setCurrentIndex(plot.y_combo.findData("income"))
    assert (plot.options.x_axis, plot.options.y_axis) == ("age", "income")
    assert plot.plot_item.getAxis("bottom").labelText == "age (original units)"
    assert plot.plot_item.getAxis("left").labelText == "income (original units)"
    frame = demo_window.controller.dataset.frame  # type: ignore[union-attr]
    np.testing.assert_allclose(plot.records_item.data["x"], frame["age"].to_numpy(dtype=float))
    # the protected layer is the group means (MDAV-generic: continuous QIs are averaged)
    xs = np.sort(plot.protected_item.data["x"])
    firsts = np.unique(demo_result.labels, return_index=True)[1]
    np.testing.assert_allclose(
        xs, np.sort(demo_result.protected["age"].to_numpy(dtype=float)[firsts])
    )
    plot.protected_check.setChecked(False)
    assert len(plot.protected_item.data) == 0


def test_above_the_threshold_a_seeded_sample_is_drawn(
    demo_window: MainWindow, demo_result: RunResult, qtbot
) -> None:
    plot = ClusterScatterPlot(options=ScatterOptions(max_points=1000, x_axis=PC1, y_axis=PC2))
    qtbot.addWidget(plot)
    plot.set_run(demo_result, demo_window.controller.projection)
    assert plot.sampled == 1000 and len(plot.records_item.data) == 1000
    assert "Random sample of 1,000 of 4,000 records (seed 0)" in plot.title_text()
    first = plot.records_item.data["x"].copy()
    plot.redraw()
    np.testing.assert_array_equal(plot.records_item.data["x"], first)  # same seed, same sample
    assert sample_indices(10, 100, 0) is None
    idx = sample_indices(1000, 10, 3)
    assert idx is not None and len(np.unique(idx)) == 10 and np.all(np.diff(idx) > 0)


def test_palette_maps_labels_to_the_same_objects() -> None:
    palette = ClusterPalette()
    brushes = palette.brushes_for(np.array([0, 1, len(palette), 1]))
    assert brushes[0] is brushes[2] and brushes[1] is brushes[3] and brushes[0] is not brushes[1]


def test_pca_2d_finds_the_main_direction() -> None:
    rng = np.random.default_rng(1)
    t = rng.normal(size=500)
    x = np.column_stack([t, 2 * t, rng.normal(scale=0.01, size=500)])
    pca = pca_2d(x)
    np.testing.assert_allclose(
        np.abs(pca.components[0]), np.array([1, 2, 0]) / np.sqrt(5), atol=1e-3
    )
    assert (
        pca.explained_ratio[0] > 0.999
        and pca.components[0][np.argmax(np.abs(pca.components[0]))] > 0
    )
    single = pca_2d(t[:, None])
    assert single.explained_ratio.tolist() == [1.0, 0.0]
    assert single.transform(t[:, None]).shape == (500, 2)
    with pytest.raises(ValueError):
        pca_2d(np.empty((3, 0)))


def test_qi_projection_places_protected_records_on_the_same_axes(demo_result: RunResult) -> None:
    proj = qi_projection(demo_result)
    assert proj is not None
    # the mixed-distance embedding of every quasi-identifier (issue 13)
    assert proj.columns == (
        "age",
        "hours_per_week",
        "income",
        "wealth",
        "education",
        "sex",
        "region",
    )
    assert proj.mixed
    assert proj.original.shape == proj.protected.shape == (4000, 2)
    assert np.isfinite(proj.protected).all()
    # members of a group share one protected position
    labels = demo_result.labels
    members = np.flatnonzero(labels == labels[0])
    assert np.ptp(proj.protected[members], axis=0).max() < 1e-9
    # the original scores are centred
    np.testing.assert_allclose(proj.original.mean(axis=0), 0.0, atol=1e-9)


def _blocks_of_k(inp: MethodInput) -> MethodOutput:
    return MethodOutput(labels=np.arange(inp.dataset.n_records, dtype=np.int64) // inp.k)


@pytest.fixture
def block_method(register_method: Callable[[Method], str]) -> str:
    """A fake, instant method for this module only: consecutive rows in groups of k."""
    return register_method(
        Method(
            name="test-blocks",
            title="Blocks (test)",
            summary="consecutive rows in groups of k",
            description="test only",
            citation="none",
            kinds=frozenset(AttributeKind),
            run=_blocks_of_k,
        )
    )


def test_200k_records_switch_to_a_density_image_within_budget(
    window: MainWindow, block_method: str, qtbot
) -> None:
    ctl = window.controller
    ctl.set_dataset(large_continuous_dataset(n=200_000, d=4))
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make(block_method, 5))
    plot = window.plot
    assert plot.density_shown and plot.sampled is None
    assert len(plot.records_item.data) == 0  # no point of the records is drawn
    title = plot.title_text()
    assert "Density of 200,000 records (above the 5,000-record threshold" in title
    assert "records per bin on a log scale" in title
    assert plot.color_bar.isVisible() and plot.density_item.isVisible()
    image = plot.density_item.image
    bins = plot.options.density_bins
    assert image.shape == (bins, bins)
    # the image holds log10(1 + count): its counts and the records outside the view add up
    counts = np.rint(10**image - 1).sum()
    assert counts + plot.outside_view == 200_000
    started = time.perf_counter()
    plot.set_axes("x0", "x1")
    window.grab()  # lay out and paint everything once
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0, f"redrawing the density of 200k records took {elapsed:.2f} s"
    # forced back to points: a seeded sample of max_points, the colour bar gone
    plot.set_display("points")
    assert not plot.density_shown and not plot.color_bar.isVisible()
    assert plot.sampled == 100_000 and len(plot.records_item.data) == 100_000
    assert "Random sample of 100,000 of 200,000 records" in plot.title_text()


def test_density_threshold_is_an_option(
    demo_window: MainWindow, demo_result: RunResult, qtbot
) -> None:
    plot = ClusterScatterPlot(
        options=ScatterOptions(density_threshold=1000, density_bins=64, x_axis=PC1, y_axis=PC2)
    )
    qtbot.addWidget(plot)
    plot.set_run(demo_result, demo_window.controller.projection)
    assert plot.density_shown
    assert "above the 1,000-record threshold" in plot.title_text()
    assert plot.density_item.image.shape == (64, 64)
    plot.set_display("auto")
    plot.options.density_threshold = 10_000
    plot.redraw()
    assert not plot.density_shown and len(plot.records_item.data) == 4000
    with pytest.raises(ValueError, match="display"):
        plot.set_display("heatmap")


def test_density_image_counts() -> None:
    x = np.array([0.1, 0.2, 0.9, 5.0, np.nan])
    y = np.array([0.1, 0.1, 0.9, 0.5, 0.5])
    counts, outside = density_image(x, y, (0.0, 1.0), (0.0, 1.0), 2)
    assert counts.tolist() == [[2.0, 0.0], [0.0, 1.0]] and outside == 1


def test_fast_scatter_draws_what_pyqtgraph_draws(qtbot) -> None:
    palette = ClusterPalette()
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=3000), rng.normal(size=3000)
    brushes = palette.brushes_for(rng.integers(0, 500, size=3000))
    images = []
    for cls in (pg.ScatterPlotItem, FastScatterPlotItem):
        widget = pg.PlotWidget()
        qtbot.addWidget(widget)
        widget.resize(400, 300)
        item = cls(pxMode=True, useCache=True, hoverable=False, pen=None, symbol="o", size=5)
        widget.addItem(item)
        item.setData(x=x, y=y, brush=brushes)
        widget.setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)
        images.append(widget.grab().toImage())
        if cls is FastScatterPlotItem:
            assert all(item.data["brush"][i] is brushes[i] for i in range(0, 3000, 101))
            # moving the points in place draws what a fresh setData draws
            item.set_points(y, x)
            moved = widget.grab().toImage()
            item.setData(x=y, y=x, brush=brushes)
            assert moved == widget.grab().toImage()
    assert images[0] == images[1]


@pytest.mark.parametrize(
    "style",
    [
        {"symbol": "x", "size": 6, "pen": None, "brush": "#d62728"},  # compare's aggregates
        {"symbol": "o", "size": 7, "brush": None, "pen": ("#ff8c00", 1.5)},  # group mates
    ],
)
def test_fast_scatter_draws_one_style_layers_as_pyqtgraph_does(qtbot, style) -> None:  # type: ignore[no-untyped-def]
    """The compare view's one-style layers (aggregates, selection, mates) are
    FastScatterPlotItems too: without per-point brushes it still draws pyqtgraph's pixels."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=2000), rng.normal(size=2000)
    pen = style["pen"]
    kwargs = {
        "symbol": style["symbol"],
        "size": style["size"],
        "brush": None if style["brush"] is None else pg.mkBrush(style["brush"]),
        "pen": None if pen is None else pg.mkPen(pen[0], width=pen[1]),
    }
    images = []
    for cls in (pg.ScatterPlotItem, FastScatterPlotItem):
        widget = pg.PlotWidget()
        qtbot.addWidget(widget)
        widget.resize(300, 200)
        item = cls(pxMode=True, useCache=True, hoverable=False, **kwargs)
        widget.addItem(item)
        item.setData(x=x, y=y)
        widget.setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)
        images.append(widget.grab().toImage())
    assert images[0] == images[1]


def test_axis_ticks_stay_bounded_for_any_length_or_range(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A test run hung for minutes in pyqtgraph's ``generateDrawSpecs`` of the groups plot:
    pyqtgraph asks for a minor tick every two pixels of the axis's device length and compares
    each level's ticks with the others' as an n × m matrix, so a degenerate length (here 10¹²
    pixels: pyqtgraph's own axis asks for a 1.5 TiB matrix) or a non-finite bound never ends.
    The groups plot's axes measure at most MAX_AXIS_PX pixels and no tick without a range."""
    from microgui.qt.plots.cluster_scatter import MAX_AXIS_PX, CategoryAxisItem

    axis = CategoryAxisItem("bottom")
    ticks = axis.tickValues(0.0, 1.0, 1e12)
    assert ticks == axis.tickValues(0.0, 1.0, MAX_AXIS_PX)
    assert 0 < sum(len(values) for _spacing, values in ticks) <= MAX_AXIS_PX
    for lo, hi, size in [
        (float("nan"), 1.0, 500.0),
        (0.0, float("inf"), 500.0),
        (0.0, 1.0, float("nan")),
        (2.0, 2.0, 500.0),
        (0.0, 1.0, 0.0),
    ]:
        assert axis.tickSpacing(lo, hi, size) == []
        assert sum(len(v) for _s, v in axis.tickValues(lo, hi, size)) <= 2
    axis.set_categories(tuple(f"c{i}" for i in range(5)))
    assert axis.tickValues(float("nan"), 4.0, 500.0) == []
    assert [v for _s, v in axis.tickValues(-0.6, 4.6, 1e12)] == [[0.0, 1.0, 2.0, 3.0, 4.0]]


def _groups_plot_at_laptop_size(window: MainWindow, qtbot):  # type: ignore[no-untyped-def]
    """The groups plot shown as points in a 1366 x 768 window."""
    plot = window.plot
    window.resize(1366, 768)
    window.tabs.setCurrentWidget(plot)
    plot.set_display("points")
    qtbot.wait(50)
    return plot


def test_the_groups_legend_is_one_item_in_the_columns_that_fit(
    demo_window: MainWindow, demo_result: RunResult, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The legend under the groups plot is drawn by one item, not a LabelItem and a sample per
    entry (issue 29: building them for 3, 2 and 1 columns held the GUI thread ~35 ms per run);
    its entries are side by side when the view is wide and under each other when it is not."""
    from microgui.qt.plots.legend_strip import LegendStrip

    plot = _groups_plot_at_laptop_size(demo_window, qtbot)
    legend = plot.legend
    assert isinstance(legend, LegendStrip) and legend.isVisible()
    assert not [c for c in legend.childItems() if isinstance(c, pg.LabelItem)]
    assert len(legend.texts) >= 2 and any("released value" in t for t in legend.texts)
    room = plot.plot_item.getViewBox().width()
    assert legend.boundingRect().width() <= room
    assert legend.column_count > 1  # two entries fit side by side in a 1366-pixel window
    assert plot.legend_holder.height() >= legend.boundingRect().height()
    # a narrow room: one column, taller
    wide = legend.boundingRect()
    legend.set_entries(legend.entries, 50.0)
    assert legend.column_count == 1 and legend.boundingRect().height() > wide.height()


def test_the_groups_legend_is_refitted_when_the_view_is_resized(
    demo_window: MainWindow, demo_result: RunResult, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30: ``_on_view_resized`` was defined twice, the legend's refit being the dead
    first one; a narrower view kept a legend laid out for the wider one until the next redraw.
    One handler refits the legend (and the category axes' notes) on every resize."""
    plot = _groups_plot_at_laptop_size(demo_window, qtbot)
    legend = plot.legend
    assert legend.isVisible() and legend.column_count > 1
    wide_room = plot.plot_item.getViewBox().width()
    redraws: list[object] = []
    plot.redraw = lambda *a, **k: redraws.append(a)  # type: ignore[method-assign]
    plot.plot_widget.setFixedWidth(260)
    qtbot.waitUntil(lambda: plot.plot_item.getViewBox().width() < wide_room / 2, timeout=5000)
    qtbot.wait(20)
    room = plot.plot_item.getViewBox().width()
    assert not redraws  # the refit came from the resize, not from a redraw
    assert legend.boundingRect().width() <= room
    assert legend.column_count == 1
    assert plot.legend_holder.height() >= legend.boundingRect().height()


def test_a_draw_lays_the_axes_out_once(
    demo_window: MainWindow, demo_result: RunResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the groups plot measured its axes twice per draw (before the legend and after
    it; 23-33 ms of a 350,000-record run's drawing turn): once, the legend refitted to the view
    the pass leaves."""
    plot = demo_window.plot
    demo_window.resize(1366, 768)
    demo_window.tabs.setCurrentWidget(plot)
    passes: list[int] = []
    layout_axes = plot._layout_axes
    monkeypatch.setattr(plot, "_layout_axes", lambda: passes.append(1) or layout_axes())
    for display in ("points", "density", "points"):
        passes.clear()
        plot.set_display(display)
        assert len(passes) == 1, display
        room = plot.plot_item.getViewBox().width()
        assert plot.legend.boundingRect().width() <= room
        assert plot.legend_holder.height() >= plot.legend.boundingRect().height()


def test_tail_quantiles_are_numpys_quantiles_exactly() -> None:
    """Issue 30: the view's quantile span of a large run is found in the tails only (a
    partition of every record took 15-38 ms of the drawing turn); the same numbers as
    ``np.quantile``, ties, sorted data and heavy tails included."""
    from microgui.qt.plots.cluster_scatter import SPAN_SAMPLE, tail_quantiles

    rng = np.random.default_rng(0)
    n = 5 * SPAN_SAMPLE + 7
    cases = [
        rng.lognormal(size=n),
        np.sort(rng.normal(size=n)),
        np.sort(rng.normal(size=n))[::-1].copy(),
        rng.integers(0, 4, size=n).astype(float),  # ties everywhere
        np.r_[np.zeros(n - 50), rng.normal(size=50) * 1e6],
        rng.standard_cauchy(size=n),
    ]
    for values in cases:
        for q in (0.005, 0.001, 0.05, 0.2):
            expected = np.quantile(values, [q, 1.0 - q])
            assert tail_quantiles(values, q) == (float(expected[0]), float(expected[1]))
