"""Issue 6 (app): the run panel's strata chooser fills ``RunSpec.strata``; each stratum is then
microaggregated on its own (no group mixes two strata)."""

from __future__ import annotations

from typing import Any

import numpy as np

from microgui.core.runs import RunResult
from microgui.qt.main_window import MainWindow


def _action(window: MainWindow, column: str) -> Any:
    menu = window.run_panel.strata_menu
    return next(a for a in menu.actions() if a.data() == column)


def test_strata_chooser_fills_the_spec_and_the_run_respects_it(
    demo_window: MainWindow, qtbot: Any
) -> None:
    panel = demo_window.run_panel
    assert panel.spec().strata == ()
    assert panel.strata_button.text() == "none (whole table)"
    # identifiers are removed from the output: not offered as strata
    assert not _action(demo_window, "person_id").isEnabled()
    _action(demo_window, "region").trigger()  # what a click on the menu entry does
    assert panel.spec().strata == ("region",)
    assert panel.strata_button.text() == "region"
    _action(demo_window, "sex").trigger()
    _action(demo_window, "sex").trigger()  # unchecked again
    assert panel.spec().strata == ("region",)

    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000) as blocker:
        panel.run_button.click()
    result = blocker.args[1]
    assert isinstance(result, RunResult) and result.spec.strata == ("region",)
    regions = ctl.result_dataset.frame["region"].to_numpy()
    for label in np.unique(result.labels):
        members = result.labels == label
        assert len(set(regions[members])) == 1, "a group mixes two strata"
        assert members.sum() >= result.spec.k
    history = demo_window.history_panel.model
    assert "strata=region" in history.index(0, 3).data()
    # the choice survives a re-tagging and is cleared by a new table
    panel.set_spec(result.spec)
    assert panel.strata == ["region"]
    demo_window.open_demo()
    assert panel.spec().strata == ()


def test_strata_menu_counts_each_column_once_per_table(
    demo_window: MainWindow, monkeypatch: Any
) -> None:
    # the menu is filled again at every change of roles; the counts of values are the table's
    # and are not counted again (issue 30: every column counted in the GUI thread each time)
    import pandas as pd

    ctl = demo_window.controller
    menu = demo_window.run_panel.strata_menu
    texts = [a.text() for a in menu.actions()]
    counted: list[str] = []
    nunique = pd.Series.nunique

    def count(series: pd.Series, *args: Any, **kwargs: Any) -> int:
        counted.append(str(series.name))
        return int(nunique(series, *args, **kwargs))

    monkeypatch.setattr(pd.Series, "nunique", count)
    assert ctl.dataset is not None
    ctl.set_roles(ctl.dataset.roles)
    assert counted == [] and [a.text() for a in menu.actions()] == texts
    frame = ctl.dataset.frame.copy()
    ctl.set_dataset(type(ctl.dataset).from_frame(frame, ctl.dataset.roles))
    assert sorted(counted) == sorted(str(c) for c in frame.columns)  # a new table: counted
