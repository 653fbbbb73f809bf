"""The release's verdict in the app (issue 29): Results, status line, compare row, and the
confirmation Export asks when a group shares one confidential value."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from microgui.core.runs import RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.qt.export_dialogs import AttributeDisclosureDialog
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.compare_panel import VERDICT_ROW

RUN_TIMEOUT_MS = 60_000
LABELS = ["DIAG-A", "DIAG-B", "DIAG-C"]


def _disclosing() -> Dataset:
    """60 records; zone Z0 always has DIAG-A, so its groups disclose the diagnosis."""
    frame = pd.DataFrame(
        {
            "age": [20 + (i % 30) for i in range(60)],
            "zone": [f"Z{i % 3}" for i in range(60)],
            "diagnosis": [LABELS[0] if i % 3 == 0 else LABELS[1 + i % 2] for i in range(60)],
        }
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "zone": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "diagnosis": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL),
        }
    )
    return Dataset.from_frame(frame, roles=roles)


@pytest.fixture
def disclosing_window(window: MainWindow, qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    """The window after an mdav-generic run that leaves homogeneous groups."""
    ctl = window.controller
    ctl.set_dataset(_disclosing())
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3, seed=1))
    assert ctl.result is not None
    assert ctl.result.report["verdict"]["level"] == "attribute_disclosure"
    return window


def test_results_status_and_compare_name_the_disclosure(
    disclosing_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    win = disclosing_window
    panel = win.results_panel
    text = panel.verdict.text()
    assert "attribute disclosure: 30 % of records in groups with one diagnosis value" in text
    assert "#b35c00" in text and "✓" not in text
    k_row = panel.value_labels["k_anonymity"].text()
    assert "✓" not in k_row and "see the verdict" in k_row
    line = panel.value_labels["attribute_disclosure"].text()
    assert "diagnosis" in line and "l = 1" in line and "30 %" in line
    assert "attribute disclosure 30 % (diagnosis)" in win.statusBar().currentMessage()
    model = win.compare_panel.model
    model.set_entries(list(win.controller.history), {})
    row = model.row_of(VERDICT_ROW)
    assert row == 0
    cell = model.data(model.index(row, 2))
    assert cell.startswith("k-anonymity 3; attribute disclosure 30 %")
    for value in LABELS:  # counts and column names only
        assert value not in text + line + cell


def test_a_release_without_homogeneous_group_shows_the_plain_tick(
    disclosing_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    ctl = disclosing_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("p-sensitive", 3, seed=1))
    panel = disclosing_window.results_panel
    assert ctl.result is not None and ctl.result.report["verdict"]["level"] == "safe"
    assert panel.verdict.text().endswith("✓</span>") and "#1a7f37" in panel.verdict.text()
    assert "✓" in panel.value_labels["k_anonymity"].text()
    assert "no group with one value" in panel.value_labels["attribute_disclosure"].text()


def test_export_asks_and_cancelling_writes_nothing(
    disclosing_window: MainWindow, tmp_path: Path
) -> None:
    out = tmp_path / "released.csv"
    assert not disclosing_window.export_to(out)
    dialog = disclosing_window.disclosure_dialog
    assert isinstance(dialog, AttributeDisclosureDialog) and dialog.isVisible()
    assert "30 % of records in groups with one diagnosis value" in dialog.verdict_label.text()
    assert set(dialog.method_buttons) == {"p-sensitive", "t-closeness"}
    dialog.reject()
    assert list(tmp_path.iterdir()) == []


def test_export_anyway_records_the_release(
    disclosing_window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "released.csv"
    disclosing_window.export_to(out)
    dialog = disclosing_window.disclosure_dialog
    assert dialog is not None
    with qtbot.waitSignal(disclosing_window.exported):
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    report = json.loads((tmp_path / "released.report.json").read_text(encoding="utf-8"))
    assert report["released_with_attribute_disclosure"] is True
    assert report["verdict"]["level"] == "attribute_disclosure"
    assert report["attribute_disclosure"]["diagnosis"]["homogeneous_records"] == 18
    assert out.is_file()
    assert "released with attribute disclosure" in disclosing_window.statusBar().currentMessage()


def test_run_instead_selects_and_starts_the_protecting_method(
    disclosing_window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    win = disclosing_window
    win.export_to(tmp_path / "released.csv")
    dialog = win.disclosure_dialog
    assert dialog is not None
    with qtbot.waitSignal(win.controller.run_finished, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(dialog.method_buttons["t-closeness"], Qt.MouseButton.LeftButton)
    assert win.run_panel.method is not None and win.run_panel.method.name == "t-closeness"
    assert win.controller.result is not None
    assert win.controller.result.spec.method == "t-closeness"
    assert list(tmp_path.iterdir()) == []  # nothing exported
