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
    assert x0 == 0.0 and y0 == 0.0  # rates and losses start at 0
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
