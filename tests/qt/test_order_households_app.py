"""The app's side of issue 31 items 4-5: the household-id role in the roles list, File → Export
options… "Keep the input order of the records" (default off: a release is shuffled, households
kept together), what the report and the status line say, and the copied command's flags."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeRole, roles_from_lists
from microgui.qt.main_window import MainWindow
from microgui.qt.models.roles_model import ROLE_CHOICES, ROLE_HELP

TIMEOUT_MS = 60_000


def _session(window: MainWindow, qtbot, folder: Path) -> int:  # type: ignore[no-untyped-def]
    n = 36
    path = folder / "persons.csv"
    pd.DataFrame(
        {
            "hh": np.repeat([f"H{j:02d}" for j in range(12)], 3),
            "age": np.random.default_rng(2).integers(20, 70, n),
            "row": np.arange(n),
        }
    ).to_csv(path, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(path)
    columns = list(ctl.dataset.frame.columns)  # type: ignore[union-attr]
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles_from_lists(columns, qi="age", household="hh"))
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav", 3, {}, 1))
    return int(ctl.shown_run_id)  # type: ignore[arg-type]


def test_household_role_is_offered() -> None:
    assert (
        AttributeRole.HOUSEHOLD in ROLE_CHOICES
        and "household" in ROLE_HELP[AttributeRole.HOUSEHOLD].lower()
    )


def test_random_order_by_default_and_keep_order_option(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    run_id = _session(window, qtbot, tmp_path)
    ctl = window.controller
    assert not ctl.export_options.keep_order
    assert window.export_to(tmp_path / "shuffled.csv")
    released = pd.read_csv(tmp_path / "shuffled.csv")
    assert sorted(released["row"]) == list(range(36))
    assert (released["hh"] != released["hh"].shift()).sum() == 12  # households together
    report = json.loads((tmp_path / "shuffled.report.json").read_text())
    assert report["record_order"]["order"] == "random" and report["record_order"]["seed"] is None
    # the run shown keeps the input order
    assert ctl.entry(run_id).result.protected["row"].astype(int).tolist() == list(range(36))

    dialog = window.export_options_dialog()
    assert not dialog.keep_order.isChecked()
    dialog.keep_order.setChecked(True)
    dialog._accept()
    assert ctl.export_options.keep_order
    assert window.export_to(tmp_path / "kept.csv")
    assert pd.read_csv(tmp_path / "kept.csv")["row"].tolist() == list(range(36))
    kept = json.loads((tmp_path / "kept.report.json").read_text())
    assert kept["record_order"]["text"] == "input order kept"
    assert "input order kept" in window.statusBar().currentMessage()
    window.history_panel.select_runs([run_id])
    argv = shlex.split(window.history_panel.copy_command().splitlines()[0])
    assert "--keep-order" in argv and argv[argv.index("--household") + 1] == "hh"


def test_risk_panel_shows_household_risk_beside_individual_risk(
    window: MainWindow,
) -> None:
    from microgui.core.metrics.file_risk import assess_risk, format_expected

    frame = pd.DataFrame({"hh": [1, 1, 2, 2, 3, 3], "sex": ["m", "f", "m", "f", "m", "m"]})
    roles = roles_from_lists(list(frame.columns), qi="sex", nominal="sex", household="hh")
    risk = assess_risk(frame, roles, k=2, suda=False)
    panel = window.risk_panel
    panel.set_table_risk(risk)
    table = panel.k_table
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    hr = risk["household_risk"]
    assert rows["household risk: mean"] == f"{hr['mean']:.4g}"
    assert rows["expected re-identifications (households' risk)"] == format_expected(
        hr["expected_reidentifications"]
    )
