"""The "Correlations & regression" tab (issue 5), driven as a statistician would: run a method,
open the tab, read the correlations, pick Y and the X, click Fit; the numbers must be numpy's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import CorrelationOutcome, RegressionOutcome
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.association_panel import (
    BAND_COLOURS,
    CORRELATION_BANDS,
    AssociationPanel,
    change_band,
)

TIMEOUT_MS = 60_000


def _table(n: int = 300, seed: int = 0) -> Dataset:
    """Three continuous QIs, a numeric confidential column explained by them, a nominal QI
    and an identifier; a few missing values."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n).round()
    hours = rng.normal(38, 8, n).round()
    income = 800 * age + 300 * hours + rng.normal(0, 5000, n)
    health = 90 - 0.3 * age + 0.0001 * income + rng.normal(0, 4, n)
    frame = pd.DataFrame(
        {
            "id": [f"P{i:04d}" for i in range(n)],
            "sex": rng.choice(["f", "m"], n),
            "age": age,
            "hours": hours,
            "income": income,
            "health": health,
        }
    )
    frame.loc[[3, 7], "health"] = np.nan
    roles = roles_from_lists(
        frame.columns,
        qi=["sex", "age", "hours", "income"],
        identifiers=["id"],
        confidential=["health"],
        nominal=["sex"],
    )
    return Dataset.from_frame(frame, roles)


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS) as blocker:
        window.controller.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def _open_tab(window: MainWindow, qtbot: Any) -> CorrelationOutcome:
    panel = window.association_panel
    with qtbot.waitSignal(panel.correlations_shown, timeout=TIMEOUT_MS) as blocker:
        window.tabs.setCurrentWidget(panel)
    outcome = blocker.args[0]
    assert isinstance(outcome, CorrelationOutcome)
    return outcome


def _pick(panel: AssociationPanel, y: str, xs: list[str]) -> None:
    """Choose Y in the combo and tick exactly the X, as clicks would."""
    panel.y_combo.setCurrentText(y)
    assert panel.y_combo.currentText() == y
    for row in range(panel.x_list.count()):
        item = panel.x_list.item(row)
        item.setCheckState(Qt.CheckState.Checked if item.text() in xs else Qt.CheckState.Unchecked)


def _fit(panel: AssociationPanel, qtbot: Any) -> RegressionOutcome:
    with qtbot.waitSignal(panel.regression_shown, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    outcome = blocker.args[0]
    assert isinstance(outcome, RegressionOutcome)
    return outcome


def _lstsq(frame: pd.DataFrame, y: str, xs: list[str]) -> tuple[np.ndarray, float]:
    design = np.column_stack([np.ones(len(frame)), frame[xs].to_numpy(dtype=float)])
    target = frame[y].to_numpy(dtype=float)
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    residual = target - design @ coef
    r2 = 1 - residual @ residual / np.sum((target - target.mean()) ** 2)
    return coef, float(r2)


def _cells(panel: AssociationPanel, model_name: str) -> list[list[str]]:
    model = getattr(panel, model_name)
    return [
        [model.index(r, c).data() for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]


def test_correlations_and_regression_equal_numpy(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(_table())
    result = _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    panel = window.association_panel
    outcome = _open_tab(window, qtbot)

    # continuous QIs, then the numeric confidential column; the nominal QI and the id are not
    assert outcome.columns == ("age", "hours", "income", "health")
    original = ctl.result_dataset.frame
    protected = result.protected
    complete = original["health"].notna().to_numpy()
    assert outcome.dropped_rows == 2 and outcome.n_records == 298
    cols = list(outcome.columns)
    ro = np.corrcoef(original.loc[complete, cols].to_numpy(float), rowvar=False)
    rp = np.corrcoef(protected.loc[complete, cols].to_numpy(float), rowvar=False)
    np.testing.assert_allclose(outcome.original, ro, atol=1e-12)
    np.testing.assert_allclose(outcome.protected, rp, atol=1e-12)
    # the table shows every pair, as the user reads it
    rows = _cells(panel, "correlation_model")
    assert len(rows) == 6
    assert rows[0][0] == "age ~ hours"
    assert rows[0][1] == f"{ro[0, 1]:.3f}" and rows[0][2] == f"{rp[0, 1]:.3f}"
    assert rows[0][3] == f"{rp[0, 1] - ro[0, 1]:+.3f}"
    # the heatmaps show the same matrices on one colour scale
    for image, matrix in zip(panel.heatmaps.images, (ro, rp), strict=True):
        np.testing.assert_allclose(image.image, matrix, atol=1e-12)
        assert tuple(image.levels) == (-1.0, 1.0)
    assert "2 record(s) with a missing value" in panel.correlation_note.text()

    # sorting by the difference (a header click) puts the largest change first
    panel.correlation_view.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    model = panel.correlation_model
    sizes = [abs(model.row_values(r)["difference"]) for r in range(model.rowCount())]
    assert sizes == sorted(sizes, reverse=True)
    # and its colour is its band's
    brush = model.index(0, 3).data(Qt.ItemDataRole.BackgroundRole)
    band = change_band(model.row_values(0)["difference"], CORRELATION_BANDS)
    assert (brush is None) == (BAND_COLOURS[band] is None)
    if brush is not None:
        assert brush.color().name() == BAND_COLOURS[band]

    # the statistician's model: health ~ age + income
    _pick(panel, "health", ["age", "income"])
    fit = _fit(panel, qtbot)
    assert fit.y == "health" and fit.xs == ("age", "income")
    co, r2o = _lstsq(original.loc[complete], "health", ["age", "income"])
    cp, r2p = _lstsq(protected.loc[complete], "health", ["age", "income"])
    table = fit.table
    assert list(table.index) == ["(intercept)", "age", "income"]
    np.testing.assert_allclose(table["original"], co, rtol=1e-9)
    np.testing.assert_allclose(table["protected"], cp, rtol=1e-9)
    np.testing.assert_allclose(table["relative_difference"], (cp - co) / np.abs(co), rtol=1e-9)
    assert fit.r_squared == pytest.approx((r2o, r2p), rel=1e-9)
    assert fit.n_records == 298 and fit.dropped_rows == 2
    rows = _cells(panel, "coefficient_model")
    assert [r[0] for r in rows] == ["(intercept)", "age", "income"]
    assert rows[1][1] == f"{co[1]:.6g}" and rows[1][2] == f"{cp[1]:.6g}"
    assert rows[1][4] == f"{100 * (cp[1] - co[1]) / abs(co[1]):+.2f} %"
    assert f"{r2o:.3f}" in panel.r_squared_label.text()
    assert f"{r2p:.3f}" in panel.r_squared_label.text()
    assert "2 record(s) with a missing value" in panel.regression_note.text()
    # Y is not offered as an explanatory variable of itself
    health = panel.x_list.findItems("health", Qt.MatchFlag.MatchExactly)[0]
    assert health.isHidden()


def test_a_new_run_shown_updates_correlations_and_refits(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(_table())
    _run(window, qtbot, RunSpec.make("mdav-generic", 3, seed=0))
    panel = window.association_panel
    first = _open_tab(window, qtbot)
    _pick(panel, "income", ["age", "hours"])
    fit3 = _fit(panel, qtbot)

    # a run at k = 20 while the tab is open: correlations recomputed, the same model refitted
    with (
        qtbot.waitSignal(panel.correlations_shown, timeout=TIMEOUT_MS) as corr,
        qtbot.waitSignal(panel.regression_shown, timeout=TIMEOUT_MS) as reg,
    ):
        result = _run(window, qtbot, RunSpec.make("mdav-generic", 20, seed=0))
    second, fit20 = corr.args[0], reg.args[0]
    assert second.run_id == ctl.shown_run_id != first.run_id
    assert fit20.run_id == ctl.shown_run_id and (fit20.y, fit20.xs) == ("income", ("age", "hours"))
    co, _ = _lstsq(ctl.result_dataset.frame, "income", ["age", "hours"])
    cp, _ = _lstsq(result.protected, "income", ["age", "hours"])
    np.testing.assert_allclose(fit20.table["protected"], cp, rtol=1e-9)
    np.testing.assert_allclose(fit20.table["original"], co, rtol=1e-9)
    # coarser groups move the protected coefficients away from the original ones
    assert not np.allclose(fit20.table["protected"], fit3.table["protected"])
    assert panel.coefficient_model.rowCount() == 3

    # showing the first run again (history) brings its numbers back
    with qtbot.waitSignal(panel.regression_shown, timeout=TIMEOUT_MS) as again:
        ctl.show_run(first.run_id)
    np.testing.assert_allclose(again.args[0].table["protected"], fit3.table["protected"])


def test_hidden_tab_computes_only_when_shown(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(_table())
    panel = window.association_panel
    assert not panel.isVisible()
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    assert not panel.is_computing and panel.correlations is None
    assert "when this tab is shown" in panel.correlation_note.text()
    _open_tab(window, qtbot)
    assert panel.correlation_model.rowCount() == 6


def test_generalized_release_says_why_no_regression(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    frame = pd.DataFrame(
        {
            "age": [21, 23, 25, 44, 46, 48, 60, 62, 65, 70],
            "sex": list("fmfmfmfmfm"),
            "income": [10.0, 12, 11, 30, 31, 29, 50, 52, 51, 40],
        }
    )
    roles = roles_from_lists(frame.columns, qi=["age", "sex"], nominal=["sex"])
    ctl.set_dataset(Dataset.from_frame(frame, roles))
    result = _run(window, qtbot, RunSpec.make("mstk", 2, seed=1))
    assert not pd.api.types.is_numeric_dtype(result.protected["age"])  # released as ranges
    panel = window.association_panel
    outcome = _open_tab(window, qtbot)
    assert outcome.columns == ()
    note = panel.correlation_note.text()
    assert "No correlations to compare" in note and "age" in note and "generalized" in note
    assert panel.correlation_model.rowCount() == 0
    # the generalized column is still offered, and fitting on it says why it cannot be done
    _pick(panel, "income", ["age"])
    with qtbot.waitSignal(panel.regression_refused, timeout=TIMEOUT_MS) as refused:
        qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    message = refused.args[0]
    assert "cannot be fitted" in message and "'age'" in message and "generalized" in message
    assert "cannot be fitted" in panel.regression_note.text()
    assert panel.coefficient_model.rowCount() == 0 and panel.regression is None


def test_no_continuous_column_says_why_empty(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    frame = pd.DataFrame({"sex": list("fmfmfmfm"), "region": list("aabbaabb")})
    roles = roles_from_lists(frame.columns, qi=["sex", "region"], nominal=["sex", "region"])
    ctl.set_dataset(Dataset.from_frame(frame, roles))
    _run(window, qtbot, RunSpec.make("mdav-generic", 2, seed=0))
    panel = window.association_panel
    outcome = _open_tab(window, qtbot)
    assert outcome.columns == () and outcome.numeric_columns == ()
    assert "No correlations to compare" in panel.correlation_note.text()
    assert "needs numbers" in panel.regression_note.text()
    assert not panel.fit_button.isEnabled()


def test_model_mistakes_are_refused_with_a_reason(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    data = _table(n=60)
    frame = data.frame.assign(age_months=data.frame["age"] * 12)  # exactly collinear with age
    roles = roles_from_lists(
        frame.columns,
        qi=["sex", "age", "hours", "income"],
        identifiers=["id"],
        confidential=["health"],
        nominal=["sex"],
    )  # age_months: named nowhere, so non-confidential
    ctl.set_dataset(Dataset.from_frame(frame, roles))
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    panel = window.association_panel
    outcome = _open_tab(window, qtbot)
    # a non-confidential numeric column is a regression candidate, not a correlation column
    assert "age_months" in outcome.numeric_columns and "age_months" not in outcome.columns
    _pick(panel, "health", [])
    with qtbot.waitSignal(panel.regression_refused, timeout=TIMEOUT_MS) as refused:
        qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    assert "explanatory" in refused.args[0]
    _pick(panel, "health", ["age", "age_months"])
    with qtbot.waitSignal(panel.regression_refused, timeout=TIMEOUT_MS) as refused:
        qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    assert "collinear" in refused.args[0] and "original table" in refused.args[0]
    assert panel.coefficient_model.rowCount() == 0


def test_a_new_table_clears_the_panel(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(_table(n=60))
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    panel = window.association_panel
    _open_tab(window, qtbot)
    _pick(panel, "health", ["age"])
    _fit(panel, qtbot)
    ctl.set_dataset(_table(n=50, seed=1))
    assert panel.correlation_model.rowCount() == 0 and panel.coefficient_model.rowCount() == 0
    assert panel.y_combo.count() == 0 and "Run a method" in panel.correlation_note.text()


def test_the_html_report_carries_the_correlations_shown(
    window: MainWindow, qtbot, tmp_path
) -> None:
    ctl = window.controller
    ctl.set_dataset(_table(n=60))
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    outcome = _open_tab(window, qtbot)
    path = tmp_path / "run.html"
    assert window.save_report(path, comparison=False), window.last_error
    text = path.read_text(encoding="utf-8")
    assert "Correlations, original vs protected" in text
    first = outcome.table.iloc[0]
    assert f"<td>{first.column_a} ~ {first.column_b}</td>" in text
    assert f"{first.difference:+.3f}" in text
