"""Issue 5 (app): the run history, the comparison of runs, the risk–utility map and the HTML
report, driven as a statistician would on the demo table."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import measure_catalog
from microgui.core.table.roles import AttributeRole
from microgui.core.views.projection import JITTER, category_axis
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.compare_panel import VERDICT_ROW
from microgui.qt.plots.chart_export import export_png, export_svg
from microgui.qt.plots.cluster_scatter import PC1, PC2
from microgui.qt.plots.compare_scatter import CompareScatterPlot
from microgui.qt.plots.ru_chart import pareto_front

RUN_TIMEOUT_MS = 120_000


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        window.controller.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


@pytest.fixture
def two_runs(demo_window: MainWindow, qtbot: Any) -> MainWindow:
    _run(demo_window, qtbot, RunSpec.make("mdav-generic", 3, seed=0))
    _run(demo_window, qtbot, RunSpec.make("mdav-generic", 10, seed=0))
    return demo_window


def test_runs_are_kept_in_the_history_with_their_measures(two_runs: MainWindow) -> None:
    ctl = two_runs.controller
    assert [e.spec.k for e in ctl.history] == [3, 10]
    assert all(e.spec.method == "mdav-generic" for e in ctl.history)
    for entry in ctl.history:
        # computed in the worker, right after the run
        assert entry.measures["information_loss"] == entry.result.report["information_loss"]
        assert entry.measures["k_anonymity"] >= entry.spec.k
        assert entry.seed == 0
    model = two_runs.history_panel.model
    assert model.rowCount() == 2
    texts = [model.index(1, c).data() for c in range(model.columnCount())]
    assert texts[:3] == [f"#{ctl.history[1].run_id}", "mdav-generic", "10"]
    assert "information_loss" in model.measure_keys
    # the last run is the one shown, and selected in the history
    assert ctl.shown_run_id == ctl.history[1].run_id
    assert two_runs.history_panel.selected_ids() == [ctl.history[1].run_id]


def test_selecting_a_run_shows_it_and_rerun_reproduces_it(two_runs: MainWindow, qtbot: Any) -> None:
    ctl = two_runs.controller
    first = ctl.history[0]
    panel = two_runs.history_panel
    with qtbot.waitSignal(ctl.run_shown) as blocker:
        panel.select_runs([first.run_id])
    assert blocker.args == [first.run_id]
    assert ctl.result is first.result
    assert "k = 3" in two_runs.results_panel.value_labels["run"].text()

    assert panel.rerun_button.isEnabled()
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.rerun_button, Qt.MouseButton.LeftButton)
    again = ctl.history[-1]
    assert len(ctl.history) == 3 and blocker.args[1] is again.result
    assert again.spec == first.reproducible_spec
    assert again.measures["information_loss"] == pytest.approx(first.measures["information_loss"])
    assert np.array_equal(again.result.labels, first.result.labels)


def test_remove_a_run(two_runs: MainWindow, qtbot: Any) -> None:
    ctl = two_runs.controller
    gone = ctl.history[0].run_id
    two_runs.history_panel.select_runs([gone])
    with qtbot.waitSignal(ctl.history_changed):
        qtbot.mouseClick(two_runs.history_panel.remove_button, Qt.MouseButton.LeftButton)
    assert [e.run_id for e in ctl.history] == [ctl.history[0].run_id] and gone not in [
        e.run_id for e in ctl.history
    ]
    assert two_runs.history_panel.model.rowCount() == 1
    two_runs.tabs.setCurrentWidget(two_runs.ru_chart)  # a hidden map is drawn when shown
    assert len(two_runs.ru_chart.drawn_ids) == 1


def _drag(widget: Any, view: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A left-button drag from ``start`` to ``end`` (data coordinates of ``view``): press, moves
    with the button held (QTest's moves carry no button in Qt 6), release."""
    viewport = widget.viewport()

    def at(x: float, y: float) -> QPoint:
        return widget.mapFromScene(view.mapViewToScene(QPointF(x, y)))

    def send(kind: QEvent.Type, pos: QPoint, button: Qt.MouseButton, held: Qt.MouseButton) -> None:
        event = QMouseEvent(
            kind, QPointF(pos), QPointF(viewport.mapToGlobal(pos)), button, held,
            Qt.KeyboardModifier.NoModifier,
        )  # fmt: skip
        QApplication.sendEvent(viewport, event)

    a, b = at(*start), at(*end)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseButtonPress, a, left, left)
    for i in range(1, 6):
        step = QPoint(a.x() + (b.x() - a.x()) * i // 5, a.y() + (b.y() - a.y()) * i // 5)
        send(QEvent.Type.MouseMove, step, none, left)
    send(QEvent.Type.MouseButtonRelease, b, left, none)


def _compare_both(window: MainWindow, qtbot: Any) -> None:
    ctl = window.controller
    panel = window.history_panel
    panel.select_runs([e.run_id for e in ctl.history])
    assert panel.compare_button.isEnabled()
    with qtbot.waitSignal(ctl.comparison_changed):
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.compare_panel


def test_comparison_links_axes_and_selection(two_runs: MainWindow, qtbot: Any) -> None:
    window = two_runs
    ctl = window.controller
    _compare_both(window, qtbot)
    plot = window.compare_panel.plot
    # the record plots wait for their tab (issue 30: no 30,000-record scatter drawn unseen)
    assert window.compare_panel.records_stale
    window.compare_panel.views.setCurrentWidget(plot)
    assert not window.compare_panel.records_stale
    plot.set_axes(PC1, PC2)  # the brush below is in the principal components' units
    assert len(plot.plots) == 2
    first, second = plot.plot_items
    assert np.allclose(first.getViewBox().viewRange(), second.getViewBox().viewRange())
    first.getViewBox().setXRange(-1.0, 0.5, padding=0.0)
    assert second.getViewBox().viewRange()[0] == pytest.approx([-1.0, 0.5])
    first.getViewBox().setYRange(-0.5, 0.25, padding=0.0)
    assert second.getViewBox().viewRange()[1] == pytest.approx([-0.5, 0.25])

    # brush a rectangle of records in the second plot with the mouse
    view = plot.plots[1].view
    brushed: list[QRectF] = []
    view.brushed.connect(brushed.append)
    with qtbot.waitSignal(ctl.selection_changed) as blocker:
        _drag(plot, view, (-0.9, 0.2), (0.4, -0.4))
    assert first.getViewBox().viewRange()[0] == pytest.approx([-1.0, 0.5])  # brushed, not panned
    (rect,) = brushed
    assert rect.left() == pytest.approx(-0.9, abs=0.02) and rect.top() == pytest.approx(
        -0.4, abs=0.02
    )
    mask = blocker.args[0]
    x, y = plot.plots[1].x, plot.plots[1].y
    expected = (x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom())
    assert mask is not None and np.array_equal(mask, expected) and 0 < mask.sum() < len(mask)
    # the same records are highlighted in the other plot, at their places there
    for p in plot.plots:
        sx, sy = p.selected.getData()
        assert len(sx) == mask.sum()
        assert np.array_equal(sx, p.x[mask]) and np.array_equal(sy, p.y[mask])
        assert len(p.mates.getData()[0]) > 0  # the other members of their groups
    assert window.tabs.currentWidget() is window.compare_panel  # the user stays here
    with qtbot.waitSignal(ctl.selection_changed):
        qtbot.mouseClick(window.compare_panel.clear_button, Qt.MouseButton.LeftButton)
    assert all(len(p.selected.getData()[0]) == 0 for p in plot.plots)


def _records_tab(window: MainWindow, qtbot: Any) -> CompareScatterPlot:
    _compare_both(window, qtbot)
    panel = window.compare_panel
    panel.views.setCurrentWidget(panel.plot)
    qtbot.wait_until(lambda: not panel.plot.drawing)
    return panel.plot


def test_compared_records_open_on_the_datas_own_axes_on_mixed_data(
    two_runs: MainWindow, qtbot: Any
) -> None:
    """Issue 29: the compared runs' plots opened on PC1/PC2 of the mixed embedding (no
    variable); they open on the axes the groups plot opens on: a continuous quasi-identifier
    in its units across, a categorical one with its categories up."""
    window = two_runs
    plot = _records_tab(window, qtbot)
    groups = window.plot.options
    axes = (plot.options.x_axis, plot.options.y_axis)
    assert axes == (groups.x_axis, groups.y_axis) == ("age", "region")
    panel = window.compare_panel
    assert (panel.x_combo.currentData(), panel.y_combo.currentData()) == axes
    assert panel.y_combo.currentText() == "region (nominal)"
    ctl = window.controller
    assert ctl.dataset is not None
    region = category_axis(ctl.history[0].result.qi, "region")
    ages = ctl.dataset.frame["age"].to_numpy(dtype=float)
    for p in plot.plots:
        assert p.plot.getAxis("left").categories == region.labels
        assert p.plot.getAxis("bottom").categories is None
        # each record within the jitter band of its category's slot; age in years
        assert np.all(np.abs(p.y - region.original) <= JITTER + 1e-9)
        assert np.allclose(p.x, ages)
    assert "region (nominal" in plot.plots[0].plot.getAxis("left").toolTip()
    # the user can still choose the principal components, and they draw without categories
    panel.x_combo.setCurrentIndex(panel.x_combo.findData(PC1))
    panel.y_combo.setCurrentIndex(panel.y_combo.findData(PC2))
    assert (plot.options.x_axis, plot.options.y_axis) == (PC1, PC2)
    assert all(p.plot.getAxis("left").categories is None for p in plot.plots)
    projection = ctl.history[0].outcome.projection
    assert np.allclose(plot.plots[0].y, projection.original[:, 1])


def test_compared_and_groups_plots_place_records_with_one_function(
    two_runs: MainWindow, qtbot: Any
) -> None:
    """Issue 30: ``compare_scatter.axis_values`` duplicated ``ClusterScatterPlot._axis_data``;
    both plots now take a run's axis from one module-level function, so that a record sits at
    the same place in both (same jitter, same slots) and the axes read the same."""
    from microgui.qt.plots import cluster_scatter, compare_scatter

    assert compare_scatter.axis_values is cluster_scatter.axis_values
    window = two_runs
    plot = _records_tab(window, qtbot)
    entry = window.controller.history[0]
    seed = plot.options.sample_seed
    shared = cluster_scatter.axis_values(entry.result, entry.outcome.projection, "region", seed)
    assert np.array_equal(plot.plots[0].y, shared.original)
    window.plot.set_run(entry.result, entry.outcome.projection)
    groups = window.plot._axis_data("region")
    assert np.array_equal(groups.original, shared.original)
    assert np.array_equal(groups.protected, shared.protected)
    assert groups.title in plot.plots[0].plot.getAxis("left").toolTip()


def test_compared_records_of_a_continuous_table_show_its_values(
    demo_window: MainWindow, qtbot: Any
) -> None:
    window = demo_window
    ctl = window.controller
    assert ctl.dataset is not None
    for column in ctl.dataset.roles.quasi_identifiers:
        if column not in ("age", "income"):
            ctl.set_role(column, AttributeRole.NON_CONFIDENTIAL)
    _run(window, qtbot, RunSpec.make("mdav", 3, seed=0))
    _run(window, qtbot, RunSpec.make("mdav", 10, seed=0))
    plot = _records_tab(window, qtbot)
    assert (plot.options.x_axis, plot.options.y_axis) == ("age", "income")
    assert (window.plot.options.x_axis, window.plot.options.y_axis) == ("age", "income")
    frame = ctl.dataset.frame
    for p in plot.plots:
        assert p.plot.getAxis("left").categories is None
        assert np.allclose(p.x, frame["age"].to_numpy(dtype=float))
        assert np.allclose(p.y, frame["income"].to_numpy(dtype=float))


def test_measures_table_marks_the_best(two_runs: MainWindow, qtbot: Any) -> None:
    _compare_both(two_runs, qtbot)
    model = two_runs.compare_panel.model
    assert model.columnCount() == 4  # measure, direction, two runs
    best = model.best_cells()
    il_row = model.row_of("information_loss")
    k_row = model.row_of("k_anonymity")
    assert (il_row, 2) in best and (il_row, 3) not in best  # k = 3 loses less
    assert (k_row, 3) in best and (k_row, 2) not in best  # k = 10 is more anonymous
    index = model.index(il_row, 2)
    assert index.data(Qt.ItemDataRole.FontRole).bold()
    assert index.data(Qt.ItemDataRole.ForegroundRole).color().name() == "#1a7f37"
    assert model.index(il_row, 3).data(Qt.ItemDataRole.FontRole) is None
    catalog = measure_catalog()
    assert model.keys[0] == VERDICT_ROW  # the release's verdict first (issue 29), never "best"
    assert not any(row == 0 for row, _col in best)
    measures = set(catalog) | set(two_runs.controller.history[0].measures)
    assert set(model.keys[1:]) <= measures


def test_ru_chart_points_front_and_click(two_runs: MainWindow, qtbot: Any) -> None:
    window = two_runs
    ctl = window.controller
    chart = window.ru_chart
    window.tabs.setCurrentWidget(chart)
    assert sorted(chart.drawn_ids) == sorted(e.run_id for e in ctl.history)
    assert sum(len(item.data) for item in chart.method_items.values()) == 2
    assert list(chart.method_items) == ["mdav-generic"]
    assert sorted(label.textItem.toPlainText() for label in chart.labels) == ["k=10", "k=3"]
    assert chart.front_ids and set(chart.front_ids) <= set(chart.drawn_ids)
    assert len(chart.front_item.getData()[0]) >= 1
    assert chart.x_combo.count() >= 1 and chart.y_combo.count() >= 1

    # click the first run's point: it is shown and selected in the history
    first = ctl.history[0].run_id
    assert ctl.shown_run_id != first
    x, y = chart.point_position(first)
    view = chart.plot_item.getViewBox()
    scene_pos = view.mapViewToScene(QPointF(x, y))
    pos = chart.plot_widget.mapFromScene(scene_pos)
    with qtbot.waitSignal(chart.run_clicked) as blocker:
        qtbot.mouseClick(chart.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos))
    assert blocker.args == [first]
    assert ctl.shown_run_id == first
    assert window.history_panel.selected_ids() == [first]


def test_ru_map_is_drawn_when_shown_not_behind_another_view(
    demo_window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: every run rebuilt the R-U map (points, labels, legend) while another view was
    shown; it is drawn once, when its view is shown, with every run of the history, and a
    report reads its axes up to date."""
    window = demo_window
    chart = window.ru_chart
    draws: list[int] = []
    set_runs = chart.set_runs
    monkeypatch.setattr(
        chart,
        "set_runs",
        lambda points, *a, **k: draws.append(len(points)) or set_runs(points, *a, **k),
    )
    window.tabs.setCurrentWidget(window.plot)
    _run(window, qtbot, RunSpec.make("mdav-generic", 3, seed=0))
    _run(window, qtbot, RunSpec.make("mdav-generic", 10, seed=0))
    qtbot.wait(20)
    assert draws == []  # hidden: not drawn
    assert chart.drawn_ids == []
    window.tabs.setCurrentWidget(chart)
    assert draws == [2]
    assert sorted(chart.drawn_ids) == sorted(e.run_id for e in window.controller.history)
    window.tabs.setCurrentWidget(window.plot)
    window.tabs.setCurrentWidget(chart)
    assert draws == [2]  # shown again, nothing changed: not redrawn
    # a run while the map is shown draws it at once
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    assert draws[-1] == 3 and len(chart.drawn_ids) == 3


def test_restored_runs_fill_the_history_now_and_the_ru_map_in_the_next_turn(
    two_runs: MainWindow, qtbot: Any
) -> None:
    # a reopened project's runs: the table in this turn of the event loop, the map's labels and
    # legend in the next one (issue 30: both in one turn stalled the GUI thread)
    ctl = two_runs.controller
    chart = two_runs.ru_chart
    two_runs.tabs.setCurrentWidget(chart)  # a hidden map is drawn when shown
    before = sorted(chart.drawn_ids)
    restored = [replace(e, run_id=e.run_id + 100) for e in ctl.history]
    ctl.restore_history(restored)
    assert two_runs.history_panel.model.rowCount() == 4
    assert sorted(chart.drawn_ids) == before
    qtbot.waitUntil(lambda: sorted(chart.drawn_ids) == sorted(e.run_id for e in ctl.history))
    assert not ctl.restoring_history


def test_history_model_answers_other_roles_without_reading_a_run(
    two_runs: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a view asks every cell for a dozen roles; the ones the table does not show return at
    # once (issue 30: 5,000 calls in one turn for a reopened 14-run project)
    model = two_runs.history_panel.model
    read: list[int] = []
    entry = model.entry
    monkeypatch.setattr(model, "entry", lambda row: read.append(row) or entry(row))
    index = model.index(0, 0)
    for role in (Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.CheckStateRole,
                 Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.SizeHintRole):  # fmt: skip
        assert model.data(index, role) is None
    assert read == []
    assert (
        model.data(index, Qt.ItemDataRole.DisplayRole)
        == f"#{two_runs.controller.history[0].run_id}"
    )
    assert read == [0]


def test_pareto_front_by_direction() -> None:
    x = np.array([1.0, 2.0, 3.0, 2.5, 1.0])
    y = np.array([5.0, 3.0, 1.0, 4.0, 6.0])
    assert pareto_front(x, y).tolist() == [0, 1, 2]
    # higher x is better: only the points with the best x at each level of y remain
    assert pareto_front(x, y, "higher is better", "lower is better").tolist() == [2]


def test_charts_export_to_png_and_svg(two_runs: MainWindow, tmp_path: Path) -> None:
    chart = two_runs.ru_chart
    two_runs.tabs.setCurrentWidget(chart)  # its export button is on the map, shown
    png = export_png(chart.plot_item, tmp_path / "ru.png")
    svg = export_svg(chart.plot_item, tmp_path / "ru.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text and "k=10" in text
    assert two_runs.compare_panel.export.menu() is not None
    actions = [a.text() for a in chart.export.menu().actions()]
    assert actions == ["Save as PNG…", "Save as SVG…"]


def _without_images(text: str) -> str:
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)


def test_html_report_of_a_run_and_of_the_comparison(
    two_runs: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    window = two_runs
    ctl = window.controller
    assert window.report_action.isEnabled()
    run_path = tmp_path / "run.html"
    assert window.save_report(run_path, comparison=False)
    text = run_path.read_text(encoding="utf-8")
    shown = ctl.entry(ctl.shown_run_id)  # type: ignore[arg-type]
    assert "mdav-generic" in text and "<td>10</td>" in text and "<td>0</td>" in text  # k, seed
    assert f"{shown.measures['information_loss']:.4g}" in text
    assert "<svg" in text and "data:image" not in text  # charts of released values (issue 12)

    _compare_both(window, qtbot)
    cmp_path = tmp_path / "compare.html"
    assert window.save_report(cmp_path)  # the comparison tab is open
    compared = cmp_path.read_text(encoding="utf-8")
    assert "Comparison of 2" in compared and "class='num best'" in compared
    assert all(e.name in compared for e in ctl.history)

    frame = ctl.dataset.frame  # type: ignore[union-attr]
    for body in (_without_images(text), _without_images(compared)):
        for column in ("person_id", "region", "education"):
            for value in frame[column].astype(str).unique()[:200]:
                assert f"{value}" not in body, (column, value)
        for value in frame["income"].astype(str).head(200):
            if len(value) >= 5:
                assert value not in body


def test_measures_fall_back_to_the_report_without_evaluate(monkeypatch: Any) -> None:
    import sys

    from microgui.core.demo import load_demo
    from microgui.core.runs import run_protection
    from microgui.core.runs.analysis import REPORT_MEASURES as FALLBACK_MEASURES
    from microgui.core.runs.analysis import measure_run as measures_of

    dataset = load_demo()
    result = run_protection(dataset, RunSpec.make("mdav-generic", 5, seed=0))
    monkeypatch.setitem(sys.modules, "microgui.core.metrics.evaluate", None)  # import fails
    measures, note = measures_of(dataset, result)
    assert measures["information_loss"] == result.report["information_loss"]
    assert measures["k_anonymity"] == result.report["k_anonymity"]
    assert "not installed" in note
    assert measure_catalog() == FALLBACK_MEASURES
