"""Issue 30, item 5, in the app: an export to .sav of a column SPSS cannot name
(``marital-status``) opens :class:`RenameColumnsDialog` with core's proposals
(:func:`microgui.core.io.names.valid_names`), checks every edit, and writes under the accepted
names; the report lists the original names with the released ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
from PySide6.QtWidgets import QDialogButtonBox

from microgui.core.release.check import report_path_for
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 60_000


def test_export_to_sav_proposes_valid_names_and_writes_under_them(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    rng = np.random.default_rng(4)
    n = 90
    frame = pd.DataFrame(
        {
            "marital-status": rng.choice(["married", "single"], n),
            "age": rng.integers(18, 90, n).astype(float),
            "hours per week": rng.integers(10, 60, n).astype(float),
        }
    )
    source = tmp_path / "adult.csv"
    frame.to_csv(source, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    roles = roles_from_lists(
        list(frame.columns), qi=list(frame.columns), nominal=["marital-status"]
    )
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3))
    out = tmp_path / "adult_mdav-generic_k3.sav"
    assert not window.export_to(out)  # waits for the names
    dialog = window.rename_dialog
    assert dialog is not None and dialog.isVisible() and not out.exists()
    assert dialog.renames() == {
        "marital-status": "marital_status", "hours per week": "hours_per_week",
    }  # fmt: skip
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled()
    dialog.table.item(1, 1).setText("age")  # taken (SPSS ignores case)
    assert not ok.isEnabled() and "both" in dialog.problems.text()
    dialog.table.item(1, 1).setText("9hours")
    assert not ok.isEnabled()
    dialog.table.item(1, 1).setText("hours")
    assert ok.isEnabled() and dialog.problems.text() == ""
    dialog.accept()
    qtbot.waitUntil(out.exists, timeout=TIMEOUT_MS)
    released, _meta = pyreadstat.read_sav(out)
    assert list(released.columns) == ["marital_status", "age", "hours"]
    report = json.loads(report_path_for(out).read_text(encoding="utf-8"))
    assert report["renamed_columns"] == {
        "marital-status": "marital_status",
        "hours per week": "hours",
    }
    assert [v["name"] for v in report["variables"]] == list(frame.columns)


def test_cancelling_the_names_writes_nothing(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    frame = pd.DataFrame({"a-b": np.arange(30.0) % 5, "c": np.arange(30.0) % 3})
    source = tmp_path / "t.csv"
    frame.to_csv(source, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles_from_lists(list(frame.columns), qi=["a-b", "c"]))
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3))
    out = tmp_path / "t.dta"
    assert not window.export_to(out)
    window.rename_dialog.reject()
    assert not out.exists() and not report_path_for(out).exists()
