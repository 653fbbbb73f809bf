"""Issue 29 items 4-5 in the app: the compare view's small multiples (recommended measures
first, each attribute's change), its measures table with the first column frozen, and the R-U
map's unprotected reference point with the recommended measures as its default axes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from microgui.core.metrics.recommended import recommended_measures
from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import measure_catalog
from microgui.qt.main_window import MainWindow
from microgui.qt.plots.compare_bars import BarRun, CompareBarsPlot, attribute_changes
from microgui.qt.plots.ru_chart import RuChartPlot, RuPoint

RUN_TIMEOUT_MS = 120_000


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_shown, timeout=RUN_TIMEOUT_MS):
        window.controller.start_run(spec)
    assert window.controller.result is not None
    return window.controller.result


@pytest.fixture
def compared(demo_window: MainWindow, qtbot: Any) -> MainWindow:
    _run(demo_window, qtbot, RunSpec.make("mdav-generic", 3, seed=0))
    _run(demo_window, qtbot, RunSpec.make("mdav-generic", 10, seed=0))
    ctl = demo_window.controller
    ctl.set_comparison([e.run_id for e in ctl.history])
    return demo_window


def test_compare_shows_bars_of_recommended_measures_then_attributes(
    compared: MainWindow, qtbot: Any
) -> None:
    panel = compared.compare_panel
    ctl = compared.controller
    roles = ctl.dataset.roles  # type: ignore[union-attr]
    recommended = recommended_measures({c: roles[c].kind for c in roles.quasi_identifiers})
    assert ctl.recommended_measures() == recommended
    bars = panel.bars
    entries = panel.entries
    # the first charts are the recommended measures the runs have, in order
    shown = [k for k in recommended if any(e.measures.get(k) is not None for e in entries)]
    catalog = measure_catalog()
    assert len(shown) >= 3
    for title, key in zip(bars.chart_titles, shown, strict=False):
        assert title.startswith(f"★ {catalog[key][0]}")
    for values, key in zip(bars.chart_values, shown, strict=False):
        assert values == pytest.approx([e.measures.get(k) for e in entries for k in [key]])
    # then one chart per quasi-identifier: changed % (categorical) or SSE/SST % (continuous)
    by_attr = entries[0].report["information_loss_by_attribute"]
    tail = bars.chart_titles[len(shown) :]
    assert [t.split(":")[0] for t in tail] == list(by_attr)
    region = tail[[t.split(":")[0] for t in tail].index("region")]
    assert "changed %" in region
    values = bars.chart_values[len(shown) + list(by_attr).index("region")]
    assert values == pytest.approx(
        [e.report["information_loss_by_attribute"]["region"]["changed_percent"] for e in entries]
    )
    # a larger k changes more values
    assert values[1] >= values[0]
    # "Show all measures": every measure of the table
    n_recommended = bars.chart_count()
    panel.all_check.setChecked(True)
    assert bars.chart_count() > n_recommended
    # the table: recommended rows first, starred; the measure column frozen
    model = panel.model
    # (after the verdict row, which is no measure)
    measures = [k for k in model.keys if k != "verdict"]
    assert measures[: len(shown)] == shown
    row = model.keys.index(shown[0])
    assert str(model.index(row, 0).data()).startswith("★ ")
    table = panel.table
    table.resize(500, 200)
    table.horizontalScrollBar().setValue(table.horizontalScrollBar().maximum())
    assert table.frozen.isVisible() or not table.isVisible()
    assert table.frozen.model() is model
    assert all(table.frozen.isColumnHidden(c) for c in range(1, model.columnCount()))
    assert not table.frozen.isColumnHidden(0)
    assert table.frozen_width() == table.columnWidth(0)


def test_attribute_changes_reads_the_breakdown() -> None:
    out = attribute_changes(
        {
            "age": {"information_loss": 2.5},
            "sex": {"changed_percent": 10.0, "information_loss": 1.0},
        }
    )
    assert out == {"age": ("SSE/SST %", 2.5), "sex": ("changed %", 10.0)}


def test_bars_skip_measures_no_run_has(qtbot: Any) -> None:
    plot = CompareBarsPlot()
    qtbot.addWidget(plot)
    runs = [BarRun("#1", {"a": 1.0, "b": None}), BarRun("#2", {"a": 3.0, "b": None})]
    plot.set_runs(runs, ["a", "b", "hellinger_mean"], {"a": ("A", "%", "lower is better")})
    assert plot.chart_titles == ["A (%) ↓"] and plot.chart_values == [[1.0, 3.0]]


def test_a_run_without_the_measure_is_written_n_a_not_drawn(qtbot: Any) -> None:
    """Issue 30 (review): an mstk run compared with an MDAV-generic one has no SSE/SST; its
    place showed a "—" on the axis, which read as a bar just above zero."""
    import pyqtgraph as pg

    from microgui.qt.plots.compare_bars import NO_VALUE

    plot = CompareBarsPlot()
    qtbot.addWidget(plot)
    runs = [BarRun("#1", {"a": None, "b": 2.0}), BarRun("#2", {"a": 4.75, "b": 1.0})]
    plot.set_runs(runs, ["a", "b"], {"a": ("A", "%", "lower is better")})
    plot.finish()
    assert plot.chart_values[0] == [None, 4.75]
    chart = next(i for i in plot.ci.items if isinstance(i, pg.PlotItem))
    texts = [i.toPlainText() for i in chart.items if isinstance(i, pg.TextItem)]
    assert texts == [NO_VALUE, "4.75"]
    assert "—" not in texts


def test_bars_take_the_columns_that_fit_the_width(qtbot: Any) -> None:
    """At a laptop's compare view (~700 px) four charts a row were cut at the right edge: the
    grid takes the columns that fit and lays the charts out again when the view is resized."""
    plot = CompareBarsPlot()
    qtbot.addWidget(plot)
    runs = [BarRun("#1", {f"m{i}": float(i + 1) for i in range(7)}), BarRun("#2", {"m0": 2.0})]
    plot.resize(700, 400)
    plot.show()
    qtbot.waitExposed(plot)
    plot.set_runs(runs, [f"m{i}" for i in range(7)], {})
    assert plot.columns == 3 and plot.chart_count() == 7
    qtbot.wait(20)
    for item in plot.ci.items:
        assert item.sceneBoundingRect().right() <= plot.viewport().width() + 1
    plot.resize(1100, 400)
    qtbot.waitUntil(lambda: plot.columns == 4)
    assert plot.chart_count() == 7  # the same charts, laid out again
    plot.resize(300, 400)
    qtbot.waitUntil(lambda: plot.columns == 1)


def test_ru_map_draws_the_unprotected_table_and_offers_recommended_measures(qtbot: Any) -> None:
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    catalog = measure_catalog()
    points = [
        RuPoint(1, "mdav", 3, {"record_linkage": 20.0, "information_loss": 5.0, "il": 9.0}),
        RuPoint(2, "mdav", 5, {"record_linkage": 10.0, "information_loss": 8.0, "il": 12.0}),
    ]
    reference = {"record_linkage": 95.0, "information_loss": 0.0, "il": 0.0}
    chart.set_runs(
        points, catalog, reference=reference, recommended=["information_loss", "record_linkage"]
    )
    assert (chart.options.x_measure, chart.options.y_measure) == (
        "record_linkage",
        "information_loss",
    )
    # only the recommended measures until "All measures"
    assert [chart.y_combo.itemData(i) for i in range(chart.y_combo.count())] == ["information_loss"]
    assert chart.reference_position == (95.0, 0.0)
    assert chart.reference_label.isVisible()
    assert "unprotected table" in chart.title_text()
    (x0, x1), (y0, y1) = chart.plot_item.getViewBox().viewRange()
    assert x0 <= 95.0 <= x1 and y0 <= 0.0 <= y1
    chart.all_check.setChecked(True)
    keys = [chart.y_combo.itemData(i) for i in range(chart.y_combo.count())]
    assert keys[0] == "information_loss" and "il" in keys
    # a log loss axis has no place for a loss of 0: said, not drawn
    chart.set_y_scale("log")
    assert chart.reference_position is None and "not drawn" in chart.title_text()
    np.testing.assert_equal(len(chart.reference_item.data), 0)


def test_ru_map_set_again_with_the_same_runs_keeps_its_drawing(qtbot: Any) -> None:
    # a reopened run rebuilt, or the reference measured again, hands the map the same runs:
    # nothing is redrawn (issue 30: 25-40 ms of the GUI thread per redraw of 14 runs)
    chart = RuChartPlot()
    qtbot.addWidget(chart)
    catalog = measure_catalog()
    points = [
        RuPoint(1, "mdav", 3, {"record_linkage": 20.0, "information_loss": 5.0}),
        RuPoint(2, "ama", 5, {"record_linkage": 10.0, "information_loss": float("nan")}),
    ]
    reference = {"record_linkage": 95.0, "information_loss": 0.0}
    chart.set_runs(points, catalog, reference=reference)
    labels, items = list(chart.labels), dict(chart.method_items)
    chart.set_runs(
        [RuPoint(p.run_id, p.method, p.k, dict(p.measures)) for p in points],
        dict(catalog),
        reference=dict(reference),
    )
    assert chart.labels == labels and all(a is b for a, b in zip(chart.labels, labels, strict=True))
    assert all(chart.method_items[m] is item for m, item in items.items())
    # a change is drawn
    chart.set_runs(points[:1], catalog, reference=reference)
    assert chart.drawn_ids == [1] and chart.labels[0] is not labels[0]


def test_reference_point_is_measured_after_the_run_is_shown(
    demo_window: MainWindow, qtbot: Any
) -> None:
    """Issue 30: the unprotected table's point (a full ``evaluate`` of the raw table, ~10 s on
    Adult) is no part of the run: the run is shown first, its outcome carries no reference, and
    a view task measures it once per table, then the R-U map draws the star."""
    from microgui.core.views.ru_frame import cached_unprotected_reference

    ctl = demo_window.controller
    dataset = ctl.dataset
    assert dataset is not None and cached_unprotected_reference(dataset) is None
    demo_window.tabs.setCurrentWidget(demo_window.ru_chart)  # a hidden map is drawn when shown
    with qtbot.waitSignal(ctl.analyses.reference_measured, timeout=RUN_TIMEOUT_MS):
        _run(demo_window, qtbot, RunSpec.make("mdav-generic", 3, seed=0))
        assert not ctl.history[-1].outcome.unprotected  # not measured inside the run
    assert cached_unprotected_reference(dataset) is not None
    assert demo_window.ru_chart.reference_position is not None
    # a second run of the same table starts no new measurement
    _run(demo_window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    assert not ctl.analyses.references.busy
    assert demo_window.ru_chart.reference_position is not None


def test_bars_are_built_in_slices_of_the_event_loop(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: each PlotItem costs ~30 ms to build, so 20 charts held the GUI thread for
    over half a second; the charts are built one slice per turn of the event loop (here one
    chart a slice), the titles and values known at once."""
    import microgui.qt.plots.compare_bars as module

    monkeypatch.setattr(module, "SLICE_S", 0.0)
    plot = CompareBarsPlot()
    qtbot.addWidget(plot)
    runs = [BarRun("#1", {f"m{i}": float(i + 1) for i in range(7)}), BarRun("#2", {"m0": 2.0})]
    # hidden (another view in front): nothing built at once
    plot.set_runs(runs, [f"m{i}" for i in range(7)], {})
    assert plot.chart_count() == 7 and len(plot.ci.items) == 0 and plot.pending == 7
    plot.show()
    qtbot.waitExposed(plot)
    plot.set_runs(runs, [f"m{i}" for i in range(7)], {})
    assert plot.chart_count() == 7 and len(plot.ci.items) == 1 and plot.pending == 6
    qtbot.waitUntil(lambda: plot.pending == 0)
    assert len(plot.ci.items) == 7
    # a new comparison drops the slices of the old one
    plot.set_runs(runs, ["m0", "m1", "m2"], {})
    assert len(plot.ci.items) == 1 and plot.pending == 2
    plot.finish()
    assert len(plot.ci.items) == 3 and plot.pending == 0
    qtbot.wait(10)
    assert len(plot.ci.items) == 3
