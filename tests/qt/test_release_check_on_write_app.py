"""No write without a check, in the app: the export goes through the one release writer, whose
report describes the file written (read back and measured), and an override typed in the
dialog answers the check the dialog showed, not the table of a run that finished meanwhile."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from microgui.core.methods import Method, MethodInput, MethodOutput
from microgui.core.metrics import k_anonymity_level
from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeKind
from microgui.qt.main_window import MainWindow

RUN_TIMEOUT_MS = 60_000


def _singletons(inp: MethodInput) -> MethodOutput:
    return MethodOutput(labels=np.arange(inp.dataset.n_records, dtype=np.int64))


@pytest.fixture
def unsafe_method(register_method: Callable[[Method], str]) -> str:
    """Every record alone (k-anonymity 1), registered for one test."""
    return register_method(
        Method(
            name="test-singletons-write",
            title="Singletons (test)",
            summary="puts every record in its own group",
            description="test only",
            citation="none",
            kinds=frozenset(AttributeKind),
            run=_singletons,
        )
    )


def test_app_export_report_describes_the_file_written(
    demo_window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 4, seed=1))
    out = tmp_path / "release.csv"
    assert demo_window.export_to(out), demo_window.last_error
    report = json.loads((tmp_path / "release.report.json").read_text(encoding="utf-8"))
    written = pd.read_csv(out, dtype=str, keep_default_na=False)  # the values as written
    roles = ctl.result.roles  # type: ignore[union-attr]
    assert report["k_anonymity"] == k_anonymity_level(written, roles.quasi_identifiers) >= 4
    assert report["identifiers_removed"] == [
        c for c in roles.identifiers if c not in written.columns
    ]


def test_override_typed_for_another_runs_check_is_refused(
    demo_window: MainWindow,
    unsafe_method: str,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make(unsafe_method, 5))
    out = tmp_path / "unsafe.csv"
    assert not demo_window.export_to(out)
    dialog = demo_window.override_dialog
    assert dialog is not None and dialog.isVisible()
    # a run finishes while the dialog is open: its table fails the check differently
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make(unsafe_method, 3))
    qtbot.keyClicks(dialog.reason_edit, "synthetic test data")
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    message = demo_window.last_error
    assert "not the one whose check was shown" in message and "k = 3" in message, message
    assert "Traceback" not in message
    assert list(tmp_path.iterdir()) == []
    demo_window.error_box.close()  # type: ignore[union-attr]
