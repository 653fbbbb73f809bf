"""Issue 29, no GUI-thread hold above 100 ms when a run is drawn: the risk–utility map behind
another tab of a shown window keeps the runs it is given and draws them when it is shown (or
when a caller reads what it drew), not in the turn of the event loop that shows the run."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QTabWidget

from microgui.core.runs.analysis import measure_catalog
from microgui.qt.plots.ru_chart import RuChartPlot, RuPoint

RL, IL = "record_linkage", "information_loss_all_qi"
POINTS = [RuPoint(i, "mdav", k, {RL: 30.0 / k, IL: 2.0 * k}) for i, k in enumerate((3, 5, 10), 1)]


def _tabs(qtbot: Any) -> tuple[QTabWidget, RuChartPlot]:
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("in front"), "front")
    chart = RuChartPlot()
    tabs.addTab(chart, "map")
    tabs.resize(900, 600)
    tabs.show()
    qtbot.waitExposed(tabs)
    return tabs, chart


def test_map_behind_a_tab_draws_when_shown(qtbot: Any) -> None:
    tabs, chart = _tabs(qtbot)
    chart.set_runs(POINTS, measure_catalog())
    chart.set_current(2)
    # nothing drawn yet: the runs wait for the tab (private state: reading drawn_ids would draw)
    assert chart._stale and chart._drawn_ids == [] and not chart._method_items
    tabs.setCurrentWidget(chart)
    assert not chart._stale
    assert chart._drawn_ids == [1, 2, 3] and list(chart._method_items) == ["mdav"]
    assert chart.current_item.data.size == 1  # the ring of the run shown, drawn with the rest


def test_reading_the_map_behind_a_tab_draws_it_first(qtbot: Any) -> None:
    _tabs_widget, chart = _tabs(qtbot)
    chart.set_runs(POINTS, measure_catalog())
    assert chart._stale
    assert chart.drawn_ids == [1, 2, 3]  # the public reads see the runs given
    assert not chart._stale


def test_map_in_front_draws_at_once(qtbot: Any) -> None:
    tabs, chart = _tabs(qtbot)
    tabs.setCurrentWidget(chart)
    chart.set_runs(POINTS, measure_catalog())
    assert not chart._stale and chart._drawn_ids == [1, 2, 3]
