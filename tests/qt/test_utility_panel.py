"""The "Utility" tab (issue 29), driven as a statistician would on a small mixed table: run a
method, open the tab, read the distributions, pick a cross-tabulation, write a model; every
figure is computed in the analysis pool and equals the core functions' on the same tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from microgui.core.metrics.categorical_utility import UtilitySummary, crosstab, utility_summary
from microgui.core.metrics.models import ModelComparison, fit_model
from microgui.core.runs import RunResult, RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 60_000


def _table(n: int = 240, seed: int = 2) -> Dataset:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n).astype(float)
    edu = rng.choice(["low", "mid", "high"], n)
    sex = rng.choice(["f", "m"], n)
    score = -2.5 + 0.05 * age + (edu == "high") * 1.2 + rng.normal(0, 1, n)
    frame = pd.DataFrame(
        {"sex": sex, "age": age, "edu": edu, "pay": np.where(score > 0, "hi", "lo")}
    )
    roles = roles_from_lists(
        frame.columns, qi=["sex", "age", "edu"], confidential=["pay"], nominal=["sex", "edu"]
    )
    return Dataset.from_frame(frame, roles)


def _run(window: MainWindow, qtbot: Any) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS) as blocker:
        window.controller.start_run(RunSpec.make("mdav-generic", 4, seed=0))
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def test_utility_tab_shows_core_figures_and_fits_a_model(window: MainWindow, qtbot: Any) -> None:
    ctl = window.controller
    dataset = ctl.set_dataset(_table())
    result = _run(window, qtbot)
    panel = window.utility_panel
    assert panel.summary is None  # nothing computed while the tab is hidden
    with qtbot.waitSignal(panel.summary_shown, timeout=TIMEOUT_MS) as blocker:
        window.tabs.setCurrentWidget(panel)
    shown = blocker.args[0]
    assert isinstance(shown, UtilitySummary)
    expected = utility_summary(dataset.frame, result.protected, dataset.roles)
    for column, d in expected.distributions.items():
        assert shown.distributions[column].hellinger == pytest.approx(d.hellinger)
    assert shown.associations is not None and expected.associations is not None
    np.testing.assert_allclose(shown.associations.difference, expected.associations.difference)
    # the table lists every attribute, the largest Hellinger first, and draws it
    table = panel.distribution_table
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert sorted(names) == sorted(expected.distributions)
    first = shown.distributions[names[0]]
    assert first.hellinger == max(d.hellinger for d in shown.distributions.values())
    assert names[0] in panel._dist_plot.titleLabel.text
    assert "Hellinger" in panel._dist_plot.titleLabel.text

    # a cross-tabulation picked in the combos
    with qtbot.waitSignal(panel.crosstab_shown, timeout=TIMEOUT_MS) as blocker:
        panel.a_combo.setCurrentText("edu")
        panel.b_combo.setCurrentText("pay")
    x = blocker.args[0]
    want = crosstab(dataset.frame, result.protected, dataset.roles, "edu", "pay")
    assert (x.a, x.b) == ("edu", "pay")
    assert x.cramers_v_released == pytest.approx(want.cramers_v_released)
    assert panel.crosstab_table.rowCount() == len(want.row_labels)
    assert "Cramér's V" in panel.crosstab_note.text()

    # a model written and fitted
    panel.formula_edit.setText("pay ~ age + edu")
    with qtbot.waitSignal(panel.model_shown, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    m = blocker.args[0]
    assert isinstance(m, ModelComparison)
    core = fit_model(dataset.frame, result.protected, dataset.roles, "pay ~ age + edu")
    np.testing.assert_allclose(m.released, core.released)
    assert panel.coefficient_table.rowCount() == len(core.terms)
    assert "logistic regression" in panel.model_note.text()
    assert panel._coef_plot.getAxis("bottom").autoSIPrefix is False  # 0.84 reads 0.84


def test_utility_tab_refuses_a_bad_model_in_one_line(window: MainWindow, qtbot: Any) -> None:
    window.controller.set_dataset(_table())
    _run(window, qtbot)
    panel = window.utility_panel
    with qtbot.waitSignal(panel.summary_shown, timeout=TIMEOUT_MS):
        window.tabs.setCurrentWidget(panel)
    panel.formula_edit.setText("edu ~ age")  # three categories: no logit
    with qtbot.waitSignal(panel.model_refused, timeout=TIMEOUT_MS) as blocker:
        panel.fit()
    assert "3 categories" in blocker.args[0]
    assert "\n" not in blocker.args[0]
    panel.formula_edit.setText("")
    with qtbot.waitSignal(panel.model_refused, timeout=TIMEOUT_MS):
        panel.fit()


def _countries(n: int = 41) -> Any:
    """A nominal column like Adult's native-country: one huge category, 40 small ones; one
    small category emptied by the protection and one filled."""
    from microgui.core.metrics.categorical_utility import Distribution

    labels = tuple(f"country-{i:02d}" for i in range(n - 1)) + ("a-very-long-country-name-indeed",)
    original = np.r_[27_000.0, np.linspace(600.0, 10.0, n - 1)]
    released = original.copy()
    released[35] = 0.0  # a small category emptied
    released[0] += original[35]
    return Distribution("native-country", False, labels, original, released, 0.077, 0.031)


def test_many_categories_draw_the_rows_that_fit_and_sum_the_others(
    window: MainWindow, qtbot: Any
) -> None:
    """Issue 30: Adult's 41 countries drew 30 overlapping axis labels at 1366 × 768; the plot
    draws as many categories as its height has rows for (the most changed and the largest),
    the others summed in one "other" row listed in the axis's tooltip, more when taller."""
    from microgui.qt.panels.utility_panel import ROW_PX, categories_shown

    panel = window.utility_panel
    window.resize(1366, 768)
    window.tabs.setCurrentWidget(panel)
    qtbot.wait(50)
    d = _countries()
    panel.draw_distribution(d)
    plot = panel._dist_plot
    view = plot.getViewBox()

    def ticks() -> list[tuple[float, str]]:
        return list(plot.getAxis("left")._tickLevels[0])

    def spacing() -> float:
        ys = [view.mapViewToScene(pg.Point(0.0, v)).y() for v, _ in ticks()]
        return min(abs(b - a) for a, b in zip(ys, ys[1:], strict=False))

    shown = ticks()
    assert len(shown) < 30 and spacing() >= ROW_PX - 1  # the labels do not overlap
    texts = [t for _, t in shown]
    hidden = len(d.labels) - (len(texts) - 1)
    assert texts[-1] == f"other ({hidden})"
    assert "country-35" in texts  # the emptied category is drawn: it changed
    assert "country-00" in texts
    tip = plot.getAxis("left").toolTip()
    assert tip.count("\n") >= hidden and "→" in tip
    assert f"{len(texts) - 1} of 41 categories drawn" in panel.distribution_caption.text()
    # a taller plot: more rows, never overlapping
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: len(ticks()) > len(shown), timeout=3000)
    assert spacing() >= ROW_PX - 1
    # the choice: the changed categories first, then the largest; the categories' own order
    order, rest = categories_shown(d.original, d.released, 8)
    assert list(order) == sorted(order) and len(order) == 7 and 35 in order and 0 in order
    assert sorted([*order, *rest]) == list(range(41))
    assert list(categories_shown(d.original[:5], d.released[:5], 8)[0]) == [0, 1, 2, 3, 4]
