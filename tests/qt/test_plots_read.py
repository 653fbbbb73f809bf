"""Issue 15, plots that read: the R-U map frames the Pareto front and marks off-scale runs with
arrows and their values, with plain tick labels and rates from 0; legends cover no data."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QPointF

from microgui.core.runs import RunSpec
from microgui.core.runs.analysis import measure_catalog
from microgui.qt.main_window import MainWindow
from microgui.qt.plots.ru_chart import ARROWS, PlainAxisItem, RuChartPlot, RuPoint

RL, IL = "record_linkage", "information_loss_all_qi"


def _sweep() -> tuple[list[RuPoint], set[int]]:
    """Seven methods at k = 3, 5, 10 and six differential-privacy runs at a loss of 10⁴–10⁵."""
    rng = np.random.default_rng(3)
    points, dp = [], set()
    run_id = 0
    methods = {"mdav": (6, 30), "mst": (8, 28), "md": (7, 33), "cbfs": (9, 27), "vmdav": (6.5, 31),
               "tfrp": (12, 25), "ama": (10, 35)}  # fmt: skip
    for method, (il0, rl0) in methods.items():
        for k in (3, 5, 10):
            run_id += 1
            measures = {RL: rl0 * 3 / k + rng.normal(0, 1), IL: il0 * k / 3 + rng.normal(0, 0.5)}
            points.append(RuPoint(run_id, method, k, measures))
    for method in ("dp-individual-ranking", "dp-microaggregation"):
        for k in (3, 5, 10):
            run_id += 1
            measures = {RL: rng.uniform(0, 1), IL: 10 ** rng.uniform(4, 5)}
            points.append(RuPoint(run_id, method, k, measures))
            dp.add(run_id)
    return points, dp


def test_ru_map_frames_the_front_and_marks_dp_runs_off_scale(qtbot: Any) -> None:
    points, dp = _sweep()
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    chart.resize(1000, 640)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_runs(points, measure_catalog())
    chart.set_measures(RL, IL)
    assert set(chart.drawn_ids) == {p.run_id for p in points}
    assert set(chart.off_scale_ids) == dp
    assert not chart.log_y  # the framed losses span one decade
    (x0, x1), (y0, y1) = chart.plot_item.getViewBox().viewRange()
    framed = [p for p in points if p.run_id not in dp]
    # rates and losses start at 0, or a mark's width below it when a run sits at 0 (issue 30:
    # a mark on the axis was half clipped)
    assert -0.05 * (x1 - x0) < x0 <= 0.0 and -0.05 * (y1 - y0) < y0 <= 0.0
    assert max(p.measures[IL] for p in framed) < y1 < 100  # type: ignore[operator]
    assert max(p.measures[RL] for p in framed) < x1  # type: ignore[operator]
    # every run is in view: the dp runs as arrows at the top edge, with their loss in the tooltip
    for p in points:
        x, y = chart.point_position(p.run_id)
        assert x0 <= x <= x1 and y0 <= y <= y1
    for item in chart.method_items.values():
        for spot in item.points():
            is_dp = int(spot.data()) in dp
            assert (spot.symbol() is ARROWS["up"]) == is_dp
    assert "6 run(s) far off this scale drawn as arrows" in chart.title_text()
    texts = [label.textItem.toPlainText() for label in chart.labels]
    dp_points = [p for p in points if p.run_id in dp]
    for p in dp_points:
        assert f"k={p.k} · {p.measures[IL]:,.0f}" in texts
    assert set(chart.front_ids) <= set(chart.drawn_ids) and set(chart.front_ids) - dp
    # "log" shows every run at its place
    chart.set_y_scale("log")
    assert chart.log_y and chart.off_scale_ids == []
    top = chart.plot_item.getViewBox().viewRange()[1][1]
    assert top > np.log10(max(p.measures[IL] for p in dp_points))  # type: ignore[type-var]


def test_tick_labels_are_plain_numbers(qtbot: Any) -> None:
    axis = PlainAxisItem("left")
    assert axis.tickStrings([0.0, 0.002, 0.004], 1.0, 0.002) == ["0", "0.002", "0.004"]
    assert axis.tickStrings([0.0, 50_000.0, 100_000.0], 1.0, 50_000.0) == ["0", "50,000", "100,000"]
    axis.setLogMode(False, True)
    assert axis.tickStrings([0.0, 1.0, np.log10(50.0), 4.0], 1.0, 1.0) == [
        "1",
        "10",
        "50",
        "10,000",
    ]


def test_ru_legend_is_outside_the_plot_area(qtbot: Any) -> None:
    points, _dp = _sweep()
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    chart.resize(1000, 640)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_runs(points, measure_catalog())
    view = chart.plot_item.getViewBox().sceneBoundingRect()
    assert chart.legend.isVisible()
    assert not chart.legend.sceneBoundingRect().intersects(view)


def test_scatter_legend_covers_no_record(demo_window: MainWindow, qtbot: Any) -> None:
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    demo_window.resize(1366, 768)
    plot = demo_window.plot
    demo_window.tabs.setCurrentWidget(plot)
    plot.set_display("points")  # default axes age × sex: "auto" would draw a density image
    qtbot.wait(50)
    assert plot.legend.isVisible()
    box = plot.legend.sceneBoundingRect()
    view = plot.plot_item.getViewBox()
    data = plot.records_item.data
    assert len(data) == 4000
    covered = np.array(
        [
            box.contains(view.mapViewToScene(QPointF(float(x), float(y))))
            for x, y in zip(data["x"], data["y"], strict=True)
        ]
    )
    # the legend sits in room kept above the view's data span (the records' 0.5-99.5 %
    # quantiles): at most the outlying records above that span can be under it
    y_top = np.quantile(data["y"], 1 - plot.options.view_quantile)
    assert not np.any(covered & (data["y"] <= y_top)), int(covered.sum())
    assert covered.sum() <= 0.005 * len(data)


def test_density_view_fits_a_laptop_window_with_its_colour_scale(
    window: MainWindow, qtbot: Any
) -> None:
    """At 1366×768 the density view's title, legend and colour bar are all inside the plot's
    widget (a long title line widened the plot past it and cut them off)."""
    from qt_helpers import large_continuous_dataset

    ctl = window.controller
    window.resize(1366, 768)
    ctl.set_dataset(large_continuous_dataset(n=150_000, d=4))
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        ctl.start_run(RunSpec.make("individual-ranking", 5))
    plot = window.plot
    window.tabs.setCurrentWidget(plot)
    qtbot.wait(50)
    assert plot.density_shown and plot.color_bar.isVisible()
    assert plot.color_bar.getAxis("left").labelText == "records per bin (log scale)"
    shown = plot.plot_widget.viewport().rect()
    for item in (plot.plot_item, plot.color_bar, plot.legend, plot.plot_item.titleLabel):
        rect = item.sceneBoundingRect()
        assert rect.right() <= shown.right() + 1 and rect.left() >= -1, type(item).__name__
    assert "Density of 150,000 records" in plot.title_text()


def test_ru_map_marks_at_the_axes_corner_are_whole_and_labelled(qtbot: Any) -> None:
    """Issue 30: a t-closeness run at a risk of 0 (and a loss at the top of the frame) sat on
    the axis, its mark half clipped and its k label hidden: the view holds every mark whole,
    the shown run's ring and each run's label."""
    points = [
        RuPoint(1, "mdav", 3, {RL: 12.0, IL: 8.0}),
        RuPoint(2, "mdav", 5, {RL: 7.5, IL: 12.0}),
        RuPoint(3, "mdav", 10, {RL: 4.0, IL: 19.0}),
        RuPoint(4, "tcloseness", 5, {RL: 0.0, IL: 41.0}),
        RuPoint(5, "ama", 5, {RL: 9.0, IL: 14.0}),
    ]
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    chart.resize(700, 420)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_runs(points, measure_catalog())
    chart.set_current(4)
    qtbot.wait(20)
    view = chart.plot_item.getViewBox()
    bounds = view.sceneBoundingRect()
    for run_id in range(1, 6):
        x, y = chart.point_position(run_id)
        centre = view.mapViewToScene(QPointF(x, y))
        item = next(it for it in chart.method_items.values() if run_id in list(it.data["data"]))
        half = float(item.data["size"][list(item.data["data"]).index(run_id)]) / 2
        assert bounds.adjusted(half, half, -half, -half).contains(centre), run_id
    x, y = chart.point_position(4)  # the ring of the run shown (22 px across)
    centre = view.mapViewToScene(QPointF(x, y))
    assert bounds.adjusted(11, 11, -11, -11).contains(centre)
    # every run is labelled (no two labels overlap here), the t-closeness run too
    assert sorted(chart.visible_labels()) == sorted(["k=3", "k=5", "k=10", "k=5", "k=5"])
    tcloseness = chart.labels[chart.drawn_ids.index(4)]
    assert tcloseness.isVisible()
    assert bounds.contains(tcloseness.mapRectToScene(tcloseness.boundingRect()))


def test_ru_map_says_when_its_risk_axis_switches_by_itself(qtbot: Any) -> None:
    """Issue 30: the risk axis follows the measure most runs have (issue 13: generalization
    runs have no record linkage), which moved the map without a word when a sweep's runs
    arrived; the map's title and the axis chooser now say it, and an axis the user chose is
    never switched (nor noted)."""
    risk = "reidentification_risk_max"
    catalog = measure_catalog()
    first = [RuPoint(1, "mdav", 3, {RL: 10.0, risk: 5.0, IL: 8.0})]
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    chart.show()
    chart.set_runs(first, catalog)
    assert chart.options.x_measure == RL
    assert "switched" not in chart.title_text() and "switched" not in chart.x_combo.toolTip()
    sweep = first + [RuPoint(i, "mstk", 3 + i, {risk: 2.0 + i, IL: 20.0 + i}) for i in (2, 3, 4)]
    chart.set_runs(sweep, catalog)
    assert chart.options.x_measure == risk  # by design: every run placed
    assert set(chart.drawn_ids) == {1, 2, 3, 4}
    note = f"risk axis switched to {catalog[risk][0]}: 4 of 4 runs have it"
    assert "risk axis switched by itself: 4 of 4 runs have it" in chart.title_text()
    assert note in chart.x_combo.toolTip() and f"{catalog[RL][0]}: 1" in chart.x_combo.toolTip()
    assert "loss axis switched" not in chart.title_text()
    # more runs arrive: the note counts them (it said "2 of 2" over a map of 4 runs)
    sweep = sweep + [RuPoint(6, "mstk", 20, {risk: 1.5, IL: 40.0})]
    chart.set_runs(sweep, catalog)
    assert "risk axis switched by itself: 5 of 5 runs have it" in chart.title_text()
    assert "5 of 5 runs have it" in chart.x_combo.toolTip()
    # the user's choice: kept, and nothing to note
    chart.x_combo.setCurrentIndex(chart.x_combo.findData(RL))
    assert chart.options.x_measure == RL
    assert "switched" not in chart.title_text() and "switched" not in chart.x_combo.toolTip()
    more = sweep + [RuPoint(5, "mstk", 9, {risk: 1.0, IL: 30.0})]
    chart.set_runs(more, catalog)
    assert chart.options.x_measure == RL and "switched" not in chart.title_text()
