"""Issue 13, item 2 (app): the headline information loss over every quasi-identifier, with one
name per number in the Results panel, the history and the R-U map (mstk placed too)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from microgui.core.metrics.measure_text import format_percent
from microgui.core.runs import RunResult, RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

RUN_TIMEOUT_MS = 120_000


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        window.controller.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def _mixed() -> Dataset:
    rng = np.random.default_rng(8)
    n = 200
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "edu": rng.choice(["basic", "middle", "higher"], n),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    roles = roles_from_lists(
        frame.columns,
        qi=list(frame.columns),
        ordinal={"edu": ["basic", "middle", "higher"]},
        nominal=["region", "sex"],
    )
    return Dataset.from_frame(frame, roles)


@pytest.fixture
def mixed_window(window: MainWindow) -> MainWindow:
    window.controller.set_dataset(_mixed())
    return window


def _label_of(panel: Any, key: str) -> str:
    """The form label beside a Results value."""
    value = panel.value_labels[key]
    form = value.parentWidget().layout().itemAt(0).layout()  # the panel's QFormLayout
    for row in range(form.rowCount()):
        field = form.itemAt(row, form.ItemRole.FieldRole)
        if field is not None and field.widget() is value:
            return str(form.itemAt(row, form.ItemRole.LabelRole).widget().text())
    raise AssertionError(key)


def test_results_panel_headline_is_the_loss_over_every_qi(
    mixed_window: MainWindow, qtbot: Any
) -> None:
    window = mixed_window
    result = _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=1))
    report = result.report
    headline, continuous = report["information_loss_all_qi"], report["information_loss"]
    assert headline > continuous > 0  # the categorical attributes lose too
    panel = window.results_panel
    assert _label_of(panel, "information_loss_all_qi") == "Information loss, all QIs (IL)"
    assert (
        panel.value_labels["information_loss_all_qi"].text() == f"<b>{percent_shown(headline)}</b>"
    )
    # the continuous-only SSE/SST, under its own name
    assert _label_of(panel, "information_loss") == "SSE/SST, continuous QIs"
    assert panel.value_labels["information_loss"].text() == percent_shown(continuous)
    tip = panel.value_labels["information_loss_all_qi"].toolTip()
    assert (
        "every quasi-identifier" in tip and "Domingo-Ferrer & Torra 2005" in tip
    )  # issue 15: authors, not "003"
    table = panel.value_labels["information_loss_by_attribute"].text()
    for col in ("age", "edu", "region", "sex"):
        assert f"<td>{col} <span" in table
    assert "changed" in table and "SSE/SST" in table
    assert "IL basis: every quasi-identifier" in panel.note.text()

    # the history names each number once: "IL %" is the headline
    model = window.history_panel.model
    headers = {
        model.measure_keys[i]: model.headerData(6 + i, Qt.Orientation.Horizontal)
        for i in range(len(model.measure_keys))
    }
    assert headers["information_loss_all_qi"] == "IL %"
    assert headers["information_loss"] == "SSE/SST cont. %"
    assert headers.get("il", "IL1-5") == "IL1-5"
    tooltip = model.headerData(
        6 + model.measure_keys.index("information_loss_all_qi"),
        Qt.Orientation.Horizontal,
        Qt.ItemDataRole.ToolTipRole,
    )
    assert "IL, all QIs" in tooltip


def test_ru_map_places_mstk_by_the_headline_loss(mixed_window: MainWindow, qtbot: Any) -> None:
    window = mixed_window
    micro = _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=1))
    gen = _run(window, qtbot, RunSpec.make("mstk", 5, seed=1))
    assert gen.report["information_loss"] is None  # no SSE/SST: continuous QIs generalized
    assert gen.report["information_loss_all_qi"] is not None
    chart = window.ru_chart
    window.tabs.setCurrentWidget(chart)
    assert chart.options.y_measure == "information_loss_all_qi"
    assert chart.y_combo.currentData() == "information_loss_all_qi"
    # both runs drawn: the risk axis defaults to a measure every run has
    ids = {e.run_id for e in window.controller.history}
    assert set(chart.drawn_ids) == ids
    assert set(chart.method_items) == {"mdav-generic", "mstk"}
    assert micro.report["information_loss_all_qi"] < gen.report["information_loss_all_qi"]
    # a choice of the user sticks when runs come in
    chart.set_measures("reidentification_risk_max", "pil")
    _run(window, qtbot, RunSpec.make("mdav-generic", 3, seed=1))
    assert (chart.options.x_measure, chart.options.y_measure) == (
        "reidentification_risk_max",
        "pil",
    )
    assert chart.y_combo.currentData() == "pil"


def percent_shown(value: float) -> str:
    """A percentage as the Results panel writes it (the unit kept on the number's line)."""
    return format_percent(value).replace(" %", "\u00a0%")
